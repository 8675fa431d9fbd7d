"""Classification metrics: hand-computed scores, nulls, errors, options and exact merging.

Expected values are computed by hand in the comments (tp = true positives, "pred" = how
often a label is predicted, "gold" = how often it is the gold), never by evalframe or
scikit-learn; ``tests/conformance/test_classification_conformance.py`` compares with
scikit-learn itself.
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest

import evalframe as ef
from evalframe import EvalframeError
from evalframe import metrics as M
from evalframe.metrics.classification import (
    STATISTICS,
    f1_table,
    label_counts,
    mcc_table,
    precision_table,
    recall_table,
)
from evalframe.metrics.reduce import MEAN, Table
from evalframe.metrics.registry import resolve
from evalframe.metrics.request import parse_request

TABLES = {"f1": f1_table, "precision": precision_table, "recall": recall_table}
NAN = float("nan")


def score(metric: str, pred, gold, **options) -> float:
    """The metric over one table: statistics expression -> cell counts -> formula."""
    frame = pl.DataFrame({"p": pred, "g": gold}, strict=False)
    statistics = frame.select(getattr(M, metric)("p", "g", **options).alias("s"))["s"]
    table = mcc_table() if metric == "mcc" else TABLES[metric](**options)
    (value,) = table.formula(*label_counts(statistics))
    return float(value)


def same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == b


# scikit-learn's documentation example: 3 labels, 2 golds each.
ANIMALS_GOLD = ["cat", "dog", "pig", "cat", "dog", "pig"]
ANIMALS_PRED = ["cat", "pig", "dog", "cat", "cat", "dog"]
# cat: tp 2, pred 3, gold 2 -> P 2/3, R 1, F 2*2/(2+3) = 0.8
# dog: tp 0, pred 2, gold 2 -> P 0,   R 0, F 0
# pig: tp 0, pred 1, gold 2 -> P 0,   R 0, F 0


@pytest.mark.parametrize(
    ("metric", "average", "expected"),
    [
        ("precision", "macro", (2 / 3) / 3),
        ("recall", "macro", 1 / 3),
        ("f1", "macro", 0.8 / 3),
        ("precision", "weighted", (2 * (2 / 3)) / 6),  # supports 2, 2, 2: as macro
        ("f1", "weighted", (2 * 0.8) / 6),
        ("precision", "micro", 2 / 6),  # tp 2 of 6 predictions
        ("recall", "micro", 2 / 6),
        ("f1", "micro", 2 * 2 / (6 + 6)),
    ],
)
def test_three_labels_by_hand(metric, average, expected):
    value = score(metric, ANIMALS_PRED, ANIMALS_GOLD, average=average)
    assert value == pytest.approx(expected, rel=1e-15)


def test_binary_by_hand():
    gold = [1, 1, 1, 0, 0, 1]
    pred = [1, 0, 1, 1, 0, 1]
    # label 1: tp 3, pred 4, gold 4 -> P 3/4, R 3/4, F 6/8
    assert score("precision", pred, gold) == 0.75
    assert score("recall", pred, gold) == 0.75
    assert score("f1", pred, gold) == 0.75
    # label 0: tp 1, pred 2, gold 2 -> 1/2
    assert score("f1", pred, gold, pos_label=0) == 0.5
    # weighted F1: (4 * 0.75 + 2 * 0.5) / 6 = 4/6
    assert score("f1", pred, gold, average="weighted") == pytest.approx(4 / 6, rel=1e-15)


def test_string_pos_label():
    gold = ["spam", "ham", "spam", "ham"]
    pred = ["spam", "spam", "ham", "ham"]
    # spam: tp 1, pred 2, gold 2 -> F 2/4
    assert score("f1", pred, gold, pos_label="spam") == 0.5


def test_mcc_by_hand():
    # scikit-learn's example: gold (1, 1, 1, -1), pred (1, -1, 1, 1)
    # correct c = 2, s = 4, t = (1, 3), p = (1, 3): (2*4 - 10) / sqrt((16-10)(16-10)) = -1/3
    assert score("mcc", [1, -1, 1, 1], [1, 1, 1, -1]) == pytest.approx(-1 / 3, rel=1e-15)
    assert score("mcc", ["a", "b", "c"], ["a", "b", "c"]) == 1.0
    assert score("mcc", ["a", "b"], ["b", "a"]) == -1.0
    # one label only: s^2 - p.p = 0, undefined -> 0.0
    assert score("mcc", ["a", "a"], ["a", "a"]) == 0.0
    assert score("mcc", ["a", "a"], ["a", "b"]) == 0.0


def test_one_class_only():
    for average in ("micro", "macro", "weighted"):
        assert score("f1", ["x"] * 3, ["x"] * 3, average=average) == 1.0
    # binary: the single label 'x' is not pos_label=1: tp = pred = gold = 0 -> zero_division
    assert score("f1", ["x"] * 3, ["x"] * 3) == 0.0
    assert score("f1", ["x"] * 3, ["x"] * 3, zero_division=1.0) == 1.0
    assert math.isnan(score("f1", ["x"] * 3, ["x"] * 3, zero_division=NAN))
    # scikit-learn compares pos_label with a single label as text: 1 finds "1"
    assert score("f1", ["1", "1"], ["1", "1"]) == 1.0
    assert score("recall", [7, 7], [7, 7], pos_label="7") == 1.0


def test_zero_division_values():
    # gold a, b, c; always predicted b: precision a = 0/0, b = 1/3, c = 0/0
    pred, gold = ["b", "b", "b"], ["a", "b", "c"]
    assert score("precision", pred, gold, average="macro") == pytest.approx(1 / 9, rel=1e-15)
    assert score("precision", pred, gold, average="macro", zero_division=1.0) == pytest.approx(
        (1 + 1 / 3 + 1) / 3, rel=1e-15
    )
    # nan: a and c left out of the average -> 1/3
    assert score("precision", pred, gold, average="macro", zero_division=NAN) == pytest.approx(
        1 / 3, rel=1e-15
    )
    # gold always a, predictions b, c: recall of b and c are 0/0; weighted by golds (0 for
    # b and c) -> only a counts, recall 0
    assert score("recall", ["b", "c", "c"], ["a", "a", "a"], average="weighted") == 0.0
    # nan precision: a left out (never predicted); b, c have weight 0 -> unweighted mean 0
    value = score("precision", ["b", "c", "c"], ["a", "a", "a"], average="weighted",
                  zero_division=NAN)
    assert value == 0.0


def test_labels_only_on_one_side():
    # gold only 'a', predictions only 'b': every F1 0, precision of 'a' 0/0
    assert score("f1", ["b", "b"], ["a", "a"], average="macro") == 0.0
    assert score("precision", ["b", "b"], ["a", "a"], pos_label="a") == 0.0
    assert score("precision", ["b", "b"], ["a", "a"], pos_label="a", zero_division=1.0) == 1.0
    assert score("recall", ["b", "b"], ["a", "a"], pos_label="b", zero_division=1.0) == 1.0


def test_accuracy_rows_and_mean():
    frame = pl.DataFrame({"p": ["a", "b", None, "c"], "g": ["a", "a", "b", None]})
    assert frame.select(M.accuracy("p", "g"))["p"].to_list() == [1.0, 0.0, None, None]
    spec, _ = resolve("accuracy")
    assert spec.level == "sample" and spec.reduce is MEAN


def test_nulls_give_null_statistics_not_counted():
    frame = pl.DataFrame({"p": ["a", None, "b", "a"], "g": ["a", "b", None, "b"]})
    statistics = frame.select(M.f1("p", "g", average="macro").alias("s"))["s"]
    assert statistics.to_list() == [
        {"prediction": "a", "gold": "a"}, None, None, {"prediction": "a", "gold": "b"}
    ]
    # only (a, a), (a, b) count: a: tp 1, pred 2, gold 1 -> 2/3; b: 0 -> macro 1/3
    assert score("f1", ["a", None, "b", "a"], ["a", "b", None, "b"], average="macro") == (
        pytest.approx(1 / 3, rel=1e-15)
    )


def test_all_null_table_is_nan():
    cells = {"prediction": np.array([], dtype=object), "gold": np.array([], dtype=object)}
    for table in (f1_table(average="macro"), mcc_table(), precision_table()):
        assert np.isnan(table.formula(cells, np.zeros((2, 0)))).all()
    # a cell counted 0 times in every table: empty too
    cells = {"prediction": np.array(["a"], dtype=object), "gold": np.array(["a"], dtype=object)}
    assert np.isnan(f1_table(average="micro").formula(cells, np.zeros((1, 1)))).all()


def test_all_null_column():
    frame = pl.DataFrame({"p": [None, None], "g": ["a", "b"]})
    assert frame.select(M.mcc("p", "g"))["p"].null_count() == 2
    assert frame.select(M.accuracy("p", "g"))["p"].null_count() == 2


def test_statistics_dtypes():
    strings = pl.DataFrame({"p": ["a"], "g": ["b"]}).select(M.f1("p", "g").alias("s"))
    assert strings.schema["s"] == STATISTICS
    ints = pl.DataFrame(
        {"p": pl.Series([1], dtype=pl.Int8), "g": pl.Series([2], dtype=pl.UInt16)}
    ).select(M.mcc("p", "g").alias("s"))
    assert ints.schema["s"] == pl.Struct({"prediction": pl.Int64, "gold": pl.Int64})
    categorical = pl.DataFrame({"p": ["a"], "g": ["a"]}, schema={"p": pl.Categorical,
                                                                 "g": pl.String})
    assert categorical.select(M.f1("p", "g").alias("s")).schema["s"] == STATISTICS


@pytest.mark.parametrize("metric", ["f1", "precision", "recall", "mcc", "accuracy"])
def test_mixed_label_types_raise(metric):
    frame = pl.DataFrame({"p": ["1", "0"], "g": [1, 0]})
    with pytest.raises(EvalframeError, match=f"metric '{metric}'.*String.*Int64.*both str or"):
        frame.select(getattr(M, metric)("p", "g"))
    with pytest.raises(EvalframeError, match="both str or both int"):
        ef.score(frame, [metric], columns={"prediction": "p", "gold": "g"})


def test_other_dtypes_raise():
    frame = pl.DataFrame({"p": [1.0], "g": [1.0]})
    with pytest.raises(EvalframeError, match="'f1': the prediction input has dtype Float64"):
        frame.select(M.f1("p", "g"))
    with pytest.raises(EvalframeError, match="role 'prediction'.*expected str or int"):
        ef.score(frame.rename({"p": "prediction", "g": "gold"}), ["accuracy"])


def test_binary_errors():
    # three labels: scikit-learn "Target is multiclass but average='binary'"
    with pytest.raises(EvalframeError, match=r"needs at most two labels.*3: \['a', 'b', 'c'\]"):
        score("f1", ["a", "b", "c"], ["a", "b", "b"])
    # two labels, neither is pos_label=1
    with pytest.raises(EvalframeError, match=r"pos_label=1 is not one of the labels \['a', 'b'\]"):
        score("precision", ["a", "b"], ["a", "a"])
    # int pos_label is not the string "1" when there are two labels
    with pytest.raises(EvalframeError, match="pos_label=1 is not one"):
        score("recall", ["0", "1"], ["1", "1"])
    # other averages ignore pos_label
    assert score("f1", ["a", "b"], ["a", "b"], average="macro", pos_label="zz") == 1.0


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"average": "samples"}, "average='samples' is invalid; expected one of 'binary'"),
        ({"average": None}, "average=None is invalid"),
        ({"pos_label": 1.5}, "pos_label=1.5 is invalid; expected a label, a str or an int"),
        ({"pos_label": True}, "pos_label=True is invalid"),
        ({"zero_division": 0.5}, "zero_division=0.5 is invalid; expected one of 'warn', 0.0"),
        ({"zero_division": "ignore"}, "zero_division='ignore' is invalid"),
    ],
)
@pytest.mark.parametrize("metric", ["f1", "precision", "recall"])
def test_option_validation(metric, options, message):
    with pytest.raises(EvalframeError, match=f"metric '{metric}': {message}"):
        getattr(M, metric)("p", "g", **options)
    with pytest.raises(EvalframeError, match=message):
        TABLES[metric](**options)


def test_options_through_requests():
    request = parse_request("f1(average=macro, zero_division=nan)")
    assert request.options["average"] == "macro" and math.isnan(request.options["zero_division"])
    options = request.keyword_options()
    assert options["pos_label"] == 1
    reduction = request.reduction()
    assert isinstance(reduction, Table) and "average='macro'" in reduction.name
    assert parse_request("f1(pos_label=spam)").options == {"pos_label": "spam"}
    assert parse_request("recall(pos_label=1, zero_division=1)").options == {
        "pos_label": 1, "zero_division": 1.0
    }
    with pytest.raises(EvalframeError, match="'binary' \\| 'micro' \\| 'macro' \\| 'weighted'"):
        parse_request("precision(average=samples)")
    with pytest.raises(EvalframeError, match="no option 'labels'"):
        parse_request("f1(labels=[1, 2])")


def test_registry_specs():
    for name, function in [("f1", "f1_score"), ("precision", "precision_score"),
                           ("recall", "recall_score"), ("mcc", "matthews_corrcoef"),
                           ("accuracy", "accuracy_score")]:
        spec, _ = resolve(name)
        assert spec.reference.package == "scikit-learn" and spec.reference.version == "1.9.1"
        assert spec.reference.function == f"sklearn.metrics.{function}"
        assert spec.role_sets == (("prediction", "gold"),)
        assert spec.dtypes == {"prediction": ("str", "int"), "gold": ("str", "int")}
        assert spec.higher_is_better
        if name != "accuracy":
            assert spec.level == "corpus" and spec.statistics == STATISTICS
    spec, _ = resolve("f1")
    table = spec.reduction({"average": "weighted", "pos_label": 1, "zero_division": "warn"})
    assert isinstance(table, Table)
    assert isinstance(resolve("mcc")[0].reduction({}), Table)


def test_score_and_aggregate():
    frame = pl.DataFrame({"prediction": [*ANIMALS_PRED, None], "gold": [*ANIMALS_GOLD, "cat"]})
    scored = ef.score(frame, ["f1(average=macro)", "mcc", "accuracy"])
    assert scored.schema["mcc"] == STATISTICS and scored.schema["accuracy"] == pl.Float64
    table = ef.aggregate(scored, bootstrap=50)
    values = dict(zip(table["metric"], table["value"], strict=True))
    assert values["f1(average=macro)"] == pytest.approx(0.8 / 3, rel=1e-15)
    # the null prediction is a missing answer: counted wrong by the sample metric (2 of 7),
    # left out of the corpus ones (and counted in n_missing)
    assert values["accuracy"] == pytest.approx(2 / 7, rel=1e-15)
    # MCC: c = 2, s = 6, t = (2, 2, 2), p = (3, 2, 1) (cat, dog, pig):
    # (12 - 12) / ... = 0
    assert values["mcc"] == 0.0
    mcc = table.filter(pl.col("metric") == "mcc")
    assert (mcc["n_missing"].item(), mcc["n_null"].item()) == (1, 0)


def test_lazy_and_streaming_statistics_equal_eager():
    frame = pl.DataFrame({"p": ANIMALS_PRED * 50, "g": ANIMALS_GOLD * 50})
    expr = M.f1("p", "g", average="macro").alias("s")
    eager = frame.select(expr)
    assert frame.lazy().select(expr).collect(engine="streaming").equals(eager)


# --- exact merging --------------------------------------------------------------------------

PAIRS = [("a", "a"), ("a", "b"), ("b", "b"), ("c", "a"), ("b", "c"), ("a", "a"), ("c", "c"),
         ("b", "a"), ("a", "c"), ("c", "c"), ("b", "b"), ("a", "b")]

ALL_TABLES = [
    *(table(average=average, zero_division=zero)
      for table in (f1_table, precision_table, recall_table)
      for average in ("micro", "macro", "weighted")
      for zero in ("warn", 1.0, NAN)),
    mcc_table(),
]


def _cells(pairs):
    frame = pl.DataFrame({"p": [p for p, _ in pairs], "g": [g for _, g in pairs]})
    return label_counts(frame.select(M.mcc("p", "g").alias("s"))["s"])


@pytest.mark.parametrize("table", ALL_TABLES, ids=lambda table: table.name)
def test_concatenated_cells_of_two_halves_equal_the_whole(table):
    whole = table.formula(*_cells(PAIRS))
    (first, first_counts), (second, second_counts) = _cells(PAIRS[:5]), _cells(PAIRS[5:])
    cells = {field: np.concatenate([first[field], second[field]]) for field in first}
    counts = np.concatenate([first_counts, second_counts], axis=1)  # duplicate cells allowed
    merged = table.formula(cells, counts)
    assert merged.shape == (1,) and same(float(merged[0]), float(whole[0]))


@pytest.mark.parametrize("table", ALL_TABLES, ids=lambda table: table.name)
def test_a_cell_counted_zero_times_is_absent(table):
    cells, counts = _cells(PAIRS[:4])  # labels a, b, c
    extra = {
        "prediction": np.append(cells["prediction"], "zzz"),
        "gold": np.append(cells["gold"], "yyy"),
    }
    padded = np.append(counts, [[0]], axis=1)
    assert same(float(table.formula(extra, padded)[0]), float(table.formula(cells, counts)[0]))
    # a whole label absent from one table of several
    rows = np.vstack([counts, np.where(cells["gold"] == "c", 0, counts)])
    both = table.formula(cells, rows)
    kept = cells["gold"] != "c"
    alone = table.formula({k: v[kept] for k, v in cells.items()}, counts[:, kept])
    assert same(float(both[1]), float(alone[0]))
    assert same(float(both[0]), float(table.formula(cells, counts)[0]))


def test_formula_is_vectorised_over_tables():
    cells, counts = _cells(PAIRS)
    rng = np.random.default_rng(0)
    many = rng.integers(0, 5, (300, counts.shape[1]))
    for table in ALL_TABLES:
        values = table.formula(cells, many)
        assert values.shape == (300,) and values.dtype == np.float64
        one_by_one = [table.formula(cells, many[i : i + 1])[0] for i in range(0, 300, 37)]
        assert all(same(a, b) for a, b in zip(values[::37], one_by_one, strict=True))


def test_binary_errors_are_raised_for_any_table():
    cells = {"prediction": np.array([0, 1, 2]), "gold": np.array([0, 1, 2])}
    counts = np.array([[1, 1, 0], [1, 1, 1]])  # the second table has three labels
    with pytest.raises(EvalframeError, match="at most two labels"):
        f1_table().formula(cells, counts)
    assert f1_table().formula(cells, counts[:1])[0] == 1.0


def test_null_cells_are_not_counted():
    # cells read from a statistics column that kept its null rows: a null pair counts nothing
    objects = {"prediction": np.array(["a", None, "b"], dtype=object),
               "gold": np.array(["a", "a", None], dtype=object)}
    floats = {"prediction": np.array([1.0, np.nan, 0.0]), "gold": np.array([1.0, 1.0, np.nan])}
    counts = np.array([[3, 5, 7]])
    assert f1_table(average="macro").formula(objects, counts)[0] == 1.0
    assert f1_table().formula(floats, counts)[0] == 1.0  # int labels: 1 is pos_label
