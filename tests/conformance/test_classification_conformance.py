"""Classification metrics against scikit-learn 1.9.1 itself, and lighteval's fixtures.

Every score is computed the way evalframe computes it: the statistics expression over a
polars frame, the distinct label pairs counted with ``group_by(...).len()``, then the
reduction's formula. scikit-learn gets the same rows as numpy arrays (nulls dropped). The
two must agree bit for bit (``==``; NaN with NaN), and raise together: scikit-learn's
``ValueError`` where evalframe raises :class:`EvalframeError`.
"""

from __future__ import annotations

import math
import random
import warnings
from collections.abc import Callable

import numpy as np
import polars as pl
import pytest
import sklearn
from sklearn import metrics as skm

import evalframe as ef
from evalframe import EvalframeError
from evalframe import metrics as M
from evalframe.metrics.classification import (
    f1_table,
    label_counts,
    mcc_table,
    precision_table,
    recall_table,
)
from evalframe.metrics.registry import resolve
from evalframe.metrics.request import parse_request

# lighteval_cases first: importing it merges the family tables, this module's included
from tests.conformance import lighteval_cases
from tests.conformance import lighteval_cases_classification as mapping

NAN = float("nan")
AVERAGES = ("binary", "micro", "macro", "weighted")
ZERO_DIVISIONS = ("warn", 0.0, 1.0, NAN)

OURS: dict[str, Callable[..., object]] = {
    "f1": f1_table,
    "precision": precision_table,
    "recall": recall_table,
}
THEIRS: dict[str, Callable[..., float]] = {
    "f1": skm.f1_score,
    "precision": skm.precision_score,
    "recall": skm.recall_score,
}


def test_the_reference_version():
    assert sklearn.__version__ == "1.9.1"


def statistics(pred: list, gold: list, dtype: pl.DataType | None = None) -> pl.Series:
    frame = pl.DataFrame(
        {"p": pred, "g": gold}, schema={"p": dtype, "g": dtype} if dtype else None, strict=False
    )
    return frame.select(M.f1("p", "g").alias("s"))["s"]


def cells_of(pred: list, gold: list, dtype=None):
    return label_counts(statistics(pred, gold, dtype))


def known(pred: list, gold: list) -> tuple[np.ndarray, np.ndarray]:
    """scikit-learn's input: the rows where both labels are known."""
    rows = [(p, g) for p, g in zip(pred, gold, strict=True) if p is not None and g is not None]
    return np.array([g for _, g in rows]), np.array([p for p, _ in rows])


def sklearn_score(which: str, gold, pred, **options) -> float | str:
    """scikit-learn's score, or ``"raises"``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # UndefinedMetricWarning, pos_label ignored
        try:
            if which == "mcc":
                return float(skm.matthews_corrcoef(gold, pred))
            return float(THEIRS[which](gold, pred, **options))
        except ValueError:
            return "raises"


def our_score(which: str, cells, counts, **options) -> np.ndarray | str:
    table = mcc_table() if which == "mcc" else OURS[which](**options)
    try:
        return table.formula(cells, counts)
    except EvalframeError:
        return "raises"


def agree(expected: float | str, got: float | str) -> bool:
    if isinstance(expected, str) or isinstance(got, str):
        return expected == got
    return (math.isnan(expected) and math.isnan(got)) or expected == got


def compare(pred: list, gold: list, which: str, dtype=None, **options) -> None:
    cells, counts = cells_of(pred, gold, dtype)
    expected = sklearn_score(which, *known(pred, gold), **options)
    got = our_score(which, cells, counts, **options)
    got = got if isinstance(got, str) else float(got[0])
    assert agree(expected, got), (which, options, pred, gold, expected, got)


# --- adversarial inputs --------------------------------------------------------------------

ADVERSARIAL: dict[str, tuple[list, list]] = {
    "one class, all right": (["x"] * 5, ["x"] * 5),
    "one int class": ([3, 3, 3], [3, 3, 3]),
    "one class pos_label=1": ([1, 1], [1, 1]),
    "one class '1' (text)": (["1", "1", "1"], ["1", "1", "1"]),
    "one class 0": ([0, 0, 0, 0], [0, 0, 0, 0]),
    "labels only on one side": (["b", "b", "b"], ["a", "a", "a"]),
    "prediction only one label": (["a"] * 4, ["a", "b", "c", "a"]),
    "gold only one label": (["a", "b", "c", "a"], ["a"] * 4),
    "binary 0/1": ([1, 0, 1, 1, 0, 0, 1], [1, 1, 1, 0, 0, 1, 0]),
    "binary -1/1": ([1, -1, 1, 1], [1, 1, 1, -1]),
    "binary without 1": ([2, 3, 3, 2], [3, 3, 2, 2]),
    "binary strings": (["pos", "neg", "pos", "pos"], ["pos", "pos", "neg", "pos"]),
    "binary '0'/'1'": (["0", "1", "1"], ["1", "1", "0"]),
    "three classes": (["cat", "pig", "dog", "cat", "cat", "dog"],
                      ["cat", "dog", "pig", "cat", "dog", "pig"]),
    "all wrong": (["a", "b", "c"], ["b", "c", "a"]),
    "with nulls": (["a", None, "b", "a", "c"], ["a", "b", None, "b", "c"]),
    "unicode": (["été", "É", "naïve café", "日本語", "😀", "été", ""],
                ["été", "e", "naïve café", "日本", "😀", "É", ""]),
    "empty string label": (["", "", "x"], ["", "x", "x"]),
    "negative ints": ([-5, -1, -5, 100], [-5, -5, -1, 100]),
    "many labels": ([f"l{i % 13}" for i in range(40)], [f"l{(i * 7) % 11}" for i in range(40)]),
    "big ints": ([2**62, 1, 2**62], [2**62, 2**62, 1]),
}

POS_LABELS = (1, 0, "1", "pos", "x", "a", "zz", -1, 3, "été", 2**62)


@pytest.mark.parametrize("case", list(ADVERSARIAL), ids=list(ADVERSARIAL))
def test_adversarial_inputs_every_option(case):
    pred, gold = ADVERSARIAL[case]
    for which in OURS:
        for average in AVERAGES:
            for zero in ZERO_DIVISIONS:
                for pos_label in POS_LABELS if average == "binary" else (1,):
                    compare(pred, gold, which, average=average, pos_label=pos_label,
                            zero_division=zero)
    compare(pred, gold, "mcc")


def test_adversarial_inputs_raise_where_sklearn_raises():
    # sanity: the binary errors are actually exercised above
    assert sklearn_score("f1", *known(*ADVERSARIAL["three classes"])) == "raises"
    assert sklearn_score("f1", *known(*ADVERSARIAL["binary strings"])) == "raises"
    cells, counts = cells_of(*ADVERSARIAL["binary strings"])
    assert our_score("f1", cells, counts) == "raises"


@pytest.mark.parametrize("dtype", [pl.Int8, pl.Int32, pl.UInt16, pl.Int64])
def test_integer_widths(dtype):
    pred, gold = [1, 0, 1, 1, 2, 0], [1, 1, 0, 1, 2, 2]
    for which in OURS:
        for average in ("micro", "macro", "weighted"):
            compare(pred, gold, which, dtype=dtype, average=average)
    compare(pred, gold, "mcc", dtype=dtype)


def test_huge_counts_against_sample_weights():
    # A table whose counts reach 1e12 per cell (n near 5e12, n^2 > 2**53): scikit-learn
    # scores the distinct pairs weighted by their counts, the same sums.
    rng = np.random.default_rng(7)
    labels = np.array(["a", "b", "c", "d", "e"], dtype=object)
    pred, gold = np.meshgrid(labels, labels)
    pred, gold = pred.ravel(), gold.ravel()
    for scale in (10**6, 10**9, 10**12):
        counts = rng.integers(1, scale, pred.shape[0])
        counts[rng.random(pred.shape[0]) < 0.2] = 0  # some pairs absent
        cells = {"prediction": pred, "gold": gold}
        used = counts > 0
        weights = counts[used]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for which in OURS:
                for average in ("micro", "macro", "weighted"):
                    for zero in ZERO_DIVISIONS:
                        expected = THEIRS[which](gold[used], pred[used], average=average,
                                                 zero_division=zero, sample_weight=weights)
                        got = OURS[which](average=average, zero_division=zero).formula(
                            cells, counts[np.newaxis, :])
                        assert agree(float(expected), float(got[0])), (which, average, scale)
            expected = skm.matthews_corrcoef(gold[used], pred[used], sample_weight=weights)
            got = mcc_table().formula(cells, counts[np.newaxis, :])
            assert agree(float(expected), float(got[0])), scale


def test_a_million_rows():
    rng = np.random.default_rng(11)
    labels = np.array(["neg", "pos", "neutral", "other"])
    gold = labels[rng.integers(0, 4, 1_000_000)]
    pred = np.where(rng.random(gold.shape[0]) < 0.6, gold, labels[rng.integers(0, 4, 1_000_000)])
    frame = pl.DataFrame({"p": pred, "g": gold})
    cells, counts = label_counts(frame.select(M.mcc("p", "g"))["p"])
    assert float(mcc_table().formula(cells, counts)[0]) == skm.matthews_corrcoef(gold, pred)
    for average in ("macro", "weighted", "micro"):
        got = float(f1_table(average=average).formula(cells, counts)[0])
        assert got == skm.f1_score(gold, pred, average=average)


# --- random frames -------------------------------------------------------------------------


def random_frame(rng: random.Random) -> tuple[list, list]:
    kind = rng.choice(["str", "int", "unicode"])
    size = rng.randint(1, 12)
    if kind == "int":
        pool = rng.sample(range(-3, 40), size)
    elif kind == "str":
        pool = [f"c{i}" for i in rng.sample(range(100), size)]
    else:
        pool = rng.sample(["α", "β", "été", "É", "日本", "😀", "", " ", "a", "A", "ß", "ss"],
                          min(size, 12))
    rows = rng.randint(1, 60)
    skew = rng.random()
    gold = [rng.choice(pool) for _ in range(rows)]
    pred = [g if rng.random() < skew else rng.choice(pool) for g in gold]
    for column in (pred, gold):
        for _ in range(rng.randint(0, 2)):
            column[rng.randrange(rows)] = None
    return pred, gold


def test_thousands_of_random_frames():
    rng = random.Random(20260601)
    compared = raised = 0
    for _ in range(2000):
        pred, gold = random_frame(rng)
        if not known(pred, gold)[0].shape[0]:
            continue  # every row null: scikit-learn has no input (evalframe: NaN)
        cells, counts = cells_of(pred, gold)
        pool = [x for x in set(pred) | set(gold) if x is not None]
        for _ in range(4):
            which = rng.choice(list(OURS))
            average = rng.choice(AVERAGES)
            zero = rng.choice(ZERO_DIVISIONS)
            pos_label = rng.choice([*pool, 1, "1", "zz"]) if rng.random() < 0.8 else 1
            options = {"average": average, "pos_label": pos_label, "zero_division": zero}
            expected = sklearn_score(which, *known(pred, gold), **options)
            got = our_score(which, cells, counts, **options)
            got = got if isinstance(got, str) else float(got[0])
            assert agree(expected, got), (which, options, pred, gold, expected, got)
            compared += 1
            raised += expected == "raises"
        expected = sklearn_score("mcc", *known(pred, gold))
        assert agree(expected, float(mcc_table().formula(cells, counts)[0])), (pred, gold)
    assert compared > 7000 and raised > 400


# --- bootstrap-style tables ----------------------------------------------------------------


@pytest.mark.parametrize("seed", range(6))
def test_several_tables_at_once_equal_sklearn_on_the_expanded_rows(seed):
    rng = np.random.default_rng(seed)
    n_labels = [2, 3, 5, 9, 14, 25][seed]  # more than 7: sums packed per number of labels
    labels = np.array([f"é{i}" for i in range(n_labels)], dtype=object)
    n_cells = int(rng.integers(n_labels, 3 * n_labels + 1))
    cells = {
        "prediction": labels[rng.integers(0, n_labels, n_cells)],
        "gold": labels[rng.integers(0, n_labels, n_cells)],
    }
    base = rng.integers(1, 6, n_cells)
    draws = rng.multinomial(int(base.sum()), base / base.sum(), size=40)  # a bootstrap
    draws[:5] = rng.integers(0, 3, (5, n_cells)) * (rng.random((5, n_cells)) < 0.5)
    tables = [(which, options) for which in OURS for options in (
        {"average": "micro"}, {"average": "macro"}, {"average": "weighted"},
        {"average": "macro", "zero_division": NAN}, {"average": "weighted", "zero_division": NAN},
        {"average": "macro", "zero_division": 1.0},
    )]
    for which, options in [*tables, ("mcc", {})]:
        got = our_score(which, cells, draws, **options)
        assert not isinstance(got, str) and got.shape == (draws.shape[0],)
        for i in range(draws.shape[0]):
            gold = np.repeat(cells["gold"], draws[i])
            pred = np.repeat(cells["prediction"], draws[i])
            expected = sklearn_score(which, gold, pred, **options) if gold.shape[0] else NAN
            assert agree(expected, float(got[i])), (which, options, i)


def test_binary_tables_at_once():
    rng = np.random.default_rng(3)
    cells = {"prediction": np.array([0, 1, 0, 1]), "gold": np.array([0, 0, 1, 1])}
    draws = rng.multinomial(6, [0.4, 0.1, 0.1, 0.4], size=200)  # some lack a label
    for which in OURS:
        for zero in ZERO_DIVISIONS:
            got = OURS[which](zero_division=zero).formula(cells, draws)
            for i in range(draws.shape[0]):
                gold = np.repeat(cells["gold"], draws[i])
                pred = np.repeat(cells["prediction"], draws[i])
                assert agree(sklearn_score(which, gold, pred, zero_division=zero), float(got[i]))


# --- lighteval fixtures --------------------------------------------------------------------

CASES = (
    [case for case in lighteval_cases.all_cases() if case.file in mapping.MAPPED]
    if lighteval_cases.FIXTURE_DIR.is_dir()
    else []
)


def lighteval_reference(case, frame: pl.DataFrame, check) -> float:
    """What lighteval's corpus function computes, with scikit-learn, on the same pairs."""
    golds, preds = frame["gold"].to_list(), frame["prediction"].to_list()
    if check.metric == "mcc":  # MatthewsCorrCoef: golds are lists of one gold index
        return float(skm.matthews_corrcoef([[g] for g in golds], preds))
    average = {"f1_score_macro.json": "macro", "f1_score_micro.json": "micro",
               "loglikelihood_f1.json": None}[case.file]
    if case.file == "loglikelihood_f1.json":
        golds = [[g] for g in golds]
    else:  # GenerativePreparator: lists of one gold text and one model text
        golds, preds = [[g] for g in golds], [[p] for p in preds]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(np.max(skm.f1_score(golds, preds, average=average)))


@pytest.mark.skipif(not CASES, reason="../shared/data/lighteval-test-cases is absent")
@pytest.mark.parametrize("case", CASES, ids=lambda case: case.id)
def test_lighteval_case(case):
    reason = mapping.SKIPPED_CASES.get((case.file, case.name))
    if reason is not None:
        pytest.skip(reason)
    frame, checks = mapping.MAPPED[case.file](case)
    expected_output = case.data["expected_output"]
    tolerance = case.data.get("tolerance", 1e-2)
    for check in checks:
        expected = (
            expected_output[check.key] if isinstance(expected_output, dict) else expected_output
        )
        # the reduce directly: statistics -> cells and counts -> formula
        request = parse_request(check.request())
        spec, _ = resolve(check.metric)
        stats = frame.select(request.build({"prediction": "prediction", "gold": "gold"}))
        value = float(request.reduction().formula(*label_counts(stats.to_series()))[0])
        assert value == pytest.approx(expected, abs=tolerance), (case.id, check, value)
        assert value == lighteval_reference(case, frame, check), case.id
        assert spec.level == "corpus"
        # and the whole pipeline
        scored = ef.score(frame, {"v": check.request()})
        assert ef.aggregate(scored, metrics={"v": check.request()}, bootstrap=2)["value"].item() \
            == value


@pytest.mark.skipif(not CASES, reason="../shared/data/lighteval-test-cases is absent")
def test_lighteval_mapping_is_complete():
    files = {case.file for case in CASES}
    assert files == set(mapping.MAPPED)
    for file, name in mapping.SKIPPED_CASES:
        assert any(case.file == file and case.name == name for case in CASES), (file, name)
    assert "multi_f1_numeric.json" in lighteval_cases.SKIPPED_FILES
    assert set(mapping.MAPPED) <= set(lighteval_cases.MAPPED)  # merged by the lead's loader
