"""Choice metrics against lm-evaluation-harness and lighteval themselves, row by row.

References, called on every row:

- lm-eval 0.4.13: ``ConfigurableTask.process_results`` (the ``multiple_choice`` branch)
  called unbound on a minimal stand-in task (the attributes that branch reads), then
  ``lm_eval.api.metrics.brier_score`` on the row's ``(gold, softmax)`` item; TruthfulQA
  MC2's ``process_results_mc2`` from ``lm_eval/tasks/truthfulqa/utils.py``.
- lighteval 0.13.0: ``LoglikelihoodAcc``, ``NormalizedMultiChoiceProbability``,
  ``Probability``, ``Recall``, ``MRR`` (``metrics_sample.py``), ``normalize_log_probs``
  and the ``LogProb*Norm`` classes (``normalizations.py``) and ``TruthfulqaMCMetrics``
  (``harness_compatibility/truthful_qa.py``). Its modules import torch, transformers and
  nltk at the top, which the test environment does not have (``pip install
  lighteval==0.13.0 --no-deps``), so the definitions of those classes are executed from
  the installed source files with numpy and ``lighteval.utils.utils`` only.

Exact equality for accuracies, 1e-12 relative for floats (NaN equal to NaN). Rows where a
reference raises, or where evalframe deliberately differs (see the metrics' divergences),
are checked to be exactly the documented ones. Rows holding values no probability has (a
NaN, ``+inf`` or positive log-probability, a non-finite unconditioned one, a token count
below 1), which both references score, are refused by evalframe: they are left out of
the comparisons and checked to raise (:func:`test_impossible_values_are_refused`).
"""

from __future__ import annotations

import ast
import decimal
import importlib.util
import logging
import math
import random
import types
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Union

import numpy as np
import polars as pl
import pytest

import evalframe as ef
from tests.conformance import lighteval_cases
from tests.conformance.lighteval_cases_choice import MAPPED, SKIPPED_CASES

NAN, INF = math.nan, math.inf

# --- the references ----------------------------------------------------------------------


def _definitions(path: Path, names: Sequence[str], namespace: dict[str, Any]) -> dict[str, Any]:
    """Execute the top-level definitions ``names`` of a source file in ``namespace``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    body = [
        node for node in tree.body
        if (isinstance(node, ast.ClassDef | ast.FunctionDef) and node.name in names)
        or (isinstance(node, ast.Assign) and any(
            isinstance(target, ast.Name) and target.id in names for target in node.targets))
    ]
    found = {getattr(node, "name", None) or node.targets[0].id for node in body}
    assert found == set(names), f"{path}: definitions {set(names) - found} not found"
    exec(compile(ast.Module(body=body, type_ignores=[]), str(path), "exec"), namespace)
    return namespace


def _package_dir(name: str) -> Path | None:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


@dataclass
class Doc:
    """The fields of lighteval's ``Doc`` its choice metrics read."""

    choices: list[str]
    gold_index: int | list[int]
    specific: dict[str, Any] | None = None
    query: str = ""


@dataclass
class ModelResponse:
    """The fields of lighteval's ``ModelResponse`` its choice metrics read."""

    logprobs: list[float]
    output_tokens: list[list[int]] = field(default_factory=list)


def _load_lighteval() -> types.SimpleNamespace | None:
    root = _package_dir("lighteval")
    if root is None:
        return None
    from lighteval.utils.utils import as_list, safe_divide

    namespace: dict[str, Any] = {
        "np": np, "ABC": ABC, "abstractmethod": abstractmethod, "Callable": Callable,
        "Union": Union, "Literal": Literal, "dataclass": dataclass, "as_list": as_list,
        "safe_divide": safe_divide, "Doc": Doc, "ModelResponse": ModelResponse,
        "logger": logging.getLogger("lighteval"),
    }
    _definitions(root / "metrics" / "normalizations.py",
                 ["LogProbPMINorm", "LogProbTokenNorm", "LogProbCharNorm",
                  "LogProbNormalization", "normalize_log_probs"], namespace)
    _definitions(root / "metrics" / "metrics_sample.py",
                 ["SampleLevelComputation", "LoglikelihoodAcc",
                  "NormalizedMultiChoiceProbability", "Probability", "Recall", "MRR"],
                 namespace)
    _definitions(root / "metrics" / "harness_compatibility" / "truthful_qa.py",
                 ["TruthfulqaMCMetrics"], namespace)
    return types.SimpleNamespace(**namespace)


def _load_lm_eval() -> types.SimpleNamespace | None:
    root = _package_dir("lm_eval")
    if root is None:
        return None
    from lm_eval.api.metrics import brier_score
    from lm_eval.api.task import ConfigurableTask

    mc2 = _definitions(root / "tasks" / "truthfulqa" / "utils.py", ["process_results_mc2"],
                       {"np": np})["process_results_mc2"]
    return types.SimpleNamespace(task=ConfigurableTask, brier_score=brier_score, mc2=mc2)


LIGHTEVAL = _load_lighteval()
LM_EVAL = _load_lm_eval()
needs_lighteval = pytest.mark.skipif(LIGHTEVAL is None, reason="lighteval is not installed")
needs_lm_eval = pytest.mark.skipif(LM_EVAL is None, reason="lm-eval is not installed")


def lm_eval_scores(row: Row, metrics: Sequence[str]) -> dict[str, Any]:
    """``process_results`` of a multiple-choice task for one doc, as the harness calls it."""
    task = types.SimpleNamespace(
        config=types.SimpleNamespace(process_results=None),
        _metric_fn_list=dict.fromkeys(metrics),
        OUTPUT_TYPE="multiple_choice",
        doc_to_choice=lambda doc: doc["choices"],
        doc_to_target=lambda doc: doc["gold"],
        multiple_input=False,
        multiple_target=isinstance(row.gold, list),
    )
    lls = list(row.lp) + (list(row.uncond) if "acc_mutual_info" in metrics else [])
    results = [(ll, False) for ll in lls]
    with np.errstate(all="ignore"):
        return LM_EVAL.task.process_results(task, {"choices": row.choices, "gold": row.gold},
                                            results)


def reference_call(function: Callable[[], Any]) -> Any:
    """The reference's value, or the exception it raised."""
    try:
        with np.errstate(all="ignore"):
            value = function()
    except Exception as error:  # the reference crashing is a result to check
        return error
    return float(value)


# --- rows --------------------------------------------------------------------------------


@dataclass
class Row:
    lp: list[float]
    gold: int | list[int]
    choices: list[str]
    tokens: list[int]
    uncond: list[float]

    @property
    def golds(self) -> list[int]:
        return self.gold if isinstance(self.gold, list) else [self.gold]


TEXTS = ["Paris", " Paris", "Londön", "東京", "e\u0301te\u0301", "été", "naïve café", "😀 ok",
         "x", "Ω≈ç√", "a" * 37, "\u0301", "Z\u0351\u0352\u0353", "  two", "ß", "İ"]
SPECIAL = [NAN, INF, -INF, 0.0, -0.0, -1e-300, -5e-324, -1000.0, -750.0, 710.0, 800.0,
           -1e308, 1e-310, -745.2]


def _value(rng: random.Random, earlier: list[float]) -> float:
    draw = rng.random()
    if draw < 0.12 and earlier:
        return rng.choice(earlier)  # an exact tie
    if draw < 0.2:
        return rng.choice(SPECIAL)
    return round(rng.gauss(-12.0, 8.0), rng.choice([0, 1, 2, 17]))


def random_rows(seed: int, count: int, *, list_gold: bool) -> list[Row]:
    rng = random.Random(seed)
    rows = []
    for _ in range(count):
        n = rng.randint(1, 8)
        lp: list[float] = []
        for _ in range(n):
            lp.append(_value(rng, lp))
        uncond = [_value(rng, []) if rng.random() < 0.1 else round(rng.gauss(-8, 4), 3)
                  for _ in range(n)]
        choices = ["" if rng.random() < 0.02 else rng.choice(TEXTS) for _ in range(n)]
        tokens = [0 if rng.random() < 0.02 else rng.randint(1, 12) for _ in range(n)]
        if list_gold:
            gold: int | list[int] = sorted(rng.sample(range(n), rng.randint(1, min(3, n))))
        else:
            gold = rng.randrange(n)
        rows.append(Row(lp, gold, choices, tokens, uncond))
    return rows


def adversarial_rows(*, list_gold: bool) -> list[Row]:
    """Ties, NaN, ±inf, one choice, several golds, empty and combining-mark choices, and
    log-probabilities at the ends of float64."""
    cases: list[tuple[list[float], list[int], list[str]]] = [
        ([-1.0, -1.0, -1.0], [2], ["a", "b", "c"]),  # a tie: the first index wins
        ([-1.0, NAN, -0.5, NAN], [1], ["a", "b", "c", "d"]),  # the first NaN wins
        ([-1.0, NAN, -0.5, NAN], [3], ["a", "b", "c", "d"]),
        ([-INF, -INF], [1], ["a", "b"]),
        ([-INF, -5.0], [1], ["a", "b"]),
        ([-1.0, INF, INF], [2], ["a", "b", "c"]),
        ([INF, -1.0], [1], ["a", "b"]),
        ([NAN, INF, -INF], [1], ["a", "b", "c"]),
        ([-3.0], [0], ["only"]),
        ([-2.0, -1.0, -3.0], [0, 1], ["a", "b", "c"]),
        ([-2.0, -1.0, -3.0], [0, 2], ["a", "b", "c"]),
        ([0.0, -1.0], [0], ["", "b"]),  # 0 / 0: NaN wins acc_norm
        ([-1.0, -1.0], [1], ["", "b"]),  # -1 / 0 = -inf
        ([-2.0, -1.0], [0], ["e\u0301", "é"]),  # 2 code points / 3 bytes vs 1 / 2
        ([-4.0, -2.0], [0], ["ab", "a"]),  # exact tie -2 == -2
        ([-1.0, -0.3333333333333333], [1], ["abc", "x"]),  # -1/3 rounds to the same float
        ([-1e308, -1e-320], [0], ["a", "b"]),
        ([-1000.0, -1001.0], [0], ["a", "b"]),
        ([-1000.0, -1001.0, -1000.0], [2], ["a", "b", "c"]),
        ([700.0, 710.0], [1], ["a", "b"]),
        ([5e-324, 0.0], [1], ["a", "b"]),
        ([-0.0, 0.0], [1], ["a", "b"]),
        ([-1e-300, -2e-300, -1e-300], [2], ["a", "b", "c"]),
        ([-745.0, -746.0, -740.0], [0], ["a", "b", "c"]),
        ([-7.0, -3.0, -5.0, -3.0, -1.0, -9.0, -3.0, -2.0, -4.0], [3, 6], list("abcdefghi")),
    ]
    rows = []
    for lp, golds, choices in cases:
        gold: int | list[int] = golds if list_gold else golds[0]
        rows.append(Row(lp, gold, choices, [max(1, len(c)) for c in choices],
                        [-1.0 - i for i in range(len(lp))]))
    return rows


def frame(rows: Sequence[Row]) -> pl.DataFrame:
    list_gold = isinstance(rows[0].gold, list)
    return pl.DataFrame(
        {
            "choice_logprobs": [row.lp for row in rows],
            "gold_index": [row.gold for row in rows],
            "choices": [row.choices for row in rows],
            "choice_token_counts": [row.tokens for row in rows],
            "unconditioned_logprobs": [row.uncond for row in rows],
        },
        schema={
            "choice_logprobs": pl.List(pl.Float64),
            "gold_index": pl.List(pl.Int64) if list_gold else pl.Int64,
            "choices": pl.List(pl.String),
            "choice_token_counts": pl.List(pl.Int64),
            "unconditioned_logprobs": pl.List(pl.Float64),
        },
    )


#: Log-probabilities up to this much above 0 are rounding (evalframe.metrics._logprob).
TOLERANCE = 1e-6


class _Refused:
    """Stands for the score of a row evalframe refuses (its values are no probabilities)."""

    def __repr__(self) -> str:
        return "REFUSED"


REFUSED = _Refused()


def _no_log_probability(value: float, *, minus_inf: bool = True) -> bool:
    return math.isnan(value) or value > TOLERANCE or (not minus_inf and value == -INF)


def admissible(row: Row, metric: str) -> bool:
    """Whether evalframe scores ``row`` for ``metric`` (written out from the rules, not
    asked of evalframe): log-probabilities <= 0 (+ rounding) and not NaN; for token
    normalisations counts >= 1; for PMI finite unconditioned log-probabilities."""
    if any(_no_log_probability(value) for value in row.lp):
        return False
    if "token" in metric and any(count < 1 for count in row.tokens):
        return False
    pmi = "pmi" in metric
    return not (pmi and any(_no_log_probability(v, minus_inf=False) for v in row.uncond))


def ours(rows: Sequence[Row], metrics: Sequence[str]) -> dict[str, list[Any]]:
    """evalframe's scores of the rows it accepts for each metric, REFUSED for the others."""
    out = {}
    for metric in metrics:
        kept = [i for i, row in enumerate(rows) if admissible(row, metric)]
        values: list[Any] = [REFUSED] * len(rows)
        if kept:
            scored = ef.score(frame([rows[i] for i in kept]), [metric])[metric].to_list()
            for i, value in zip(kept, scored, strict=True):
                values[i] = value
        out[metric] = values
    return out


def same(got: float, want: float, rel: float = 0.0) -> bool:
    if math.isnan(got) or math.isnan(want):
        return math.isnan(got) and math.isnan(want)
    if rel == 0.0:
        return got == want
    # Results below 1e-300 are subnormal-range numbers, where float64 itself has no 1e-12
    # relative precision (either side's last operations round there).
    return math.isclose(got, want, rel_tol=rel, abs_tol=1e-300)


def compare(rows, got, want, *, rel=0.0, skip=lambda row: False, what=""):
    """Every row agrees, except rows ``skip`` selects; returns the rows compared."""
    compared = 0
    for index, (row, value, expected) in enumerate(zip(rows, got, want, strict=True)):
        if skip(row) or value is REFUSED:
            continue
        assert not isinstance(expected, Exception), (what, index, row, expected)
        assert same(value, expected, rel), f"{what} row {index} {row}: {value} != {expected}"
        compared += 1
    return compared


ROW_SETS = {
    "adversarial-int": lambda: adversarial_rows(list_gold=False),
    "adversarial-list": lambda: adversarial_rows(list_gold=True),
    "random-int": lambda: random_rows(11, 2500, list_gold=False),
    "random-list": lambda: random_rows(12, 2500, list_gold=True),
}


@pytest.fixture(params=sorted(ROW_SETS), scope="module")
def rows(request) -> list[Row]:
    return ROW_SETS[request.param]()


# --- lm-eval -----------------------------------------------------------------------------


@needs_lm_eval
def test_accuracies_equal_lm_eval(rows):
    got = ours(rows, ["acc", "acc_norm", "acc_bytes"])
    references = [lm_eval_scores(row, ["acc", "acc_norm", "acc_bytes"]) for row in rows]
    for metric in ("acc", "acc_norm", "acc_bytes"):
        compare(rows, got[metric], [ref[metric] for ref in references], what=metric)


@needs_lm_eval
def test_acc_pmi_equals_lm_eval_acc_mutual_info(rows):
    got = ours(rows, ["acc_pmi"])["acc_pmi"]
    want = [reference_call(lambda row=row: lm_eval_scores(row, ["acc_mutual_info"])
                           ["acc_mutual_info"]) for row in rows]
    several = lambda row: len(row.golds) > 1 and isinstance(row.gold, list)  # noqa: E731
    compare(rows, got, want, skip=several, what="acc_pmi")
    # The divergence: lm-eval's `np.argmax(...) == gold` with two or more golds raises.
    for row, value in zip(rows, want, strict=True):
        if several(row):
            assert isinstance(value, ValueError) and "ambiguous" in str(value)


@needs_lm_eval
def test_brier_score_equals_lm_eval(rows):
    if isinstance(rows[0].gold, list):  # lm-eval's one-hot takes a single gold index
        rows = [Row(row.lp, row.golds[0], row.choices, row.tokens, row.uncond) for row in rows]
    got = ours(rows, ["brier_score"])["brier_score"]
    want = [LM_EVAL.brier_score([lm_eval_scores(row, ["brier_score"])["brier_score"]])
            for row in rows]
    compare(rows, got, [float(value) for value in want], rel=1e-12, what="brier_score")


@needs_lm_eval
def test_brier_score_mean_equals_lm_eval_aggregation():
    rows = [row for row in random_rows(13, 3000, list_gold=False) if len(row.lp) == 4
            and all(math.isfinite(value) and abs(value) < 700 for value in row.lp)
            and admissible(row, "brier_score")]
    items = [lm_eval_scores(row, ["brier_score"])["brier_score"] for row in rows]
    table = ef.aggregate(ef.score(frame(rows), ["brier_score"]))
    assert table["value"].item() == pytest.approx(LM_EVAL.brier_score(items), rel=1e-12)


# --- lighteval ---------------------------------------------------------------------------


def lighteval_compute(metric: Any, row: Row, *, choices: list[str] | None = None,
                      logprobs: list[float] | None = None, specific=None) -> Any:
    doc = Doc(choices if choices is not None else row.choices, row.gold, specific)
    response = ModelResponse(logprobs if logprobs is not None else row.lp,
                             [[0] * count for count in row.tokens])
    return reference_call(lambda: metric.compute(doc=doc, model_response=response))


def _has_empty(row: Row) -> bool:
    return "" in row.choices


@needs_lighteval
def test_acc_family_equals_lighteval_loglikelihood_acc(rows):
    L = LIGHTEVAL
    metrics = ["acc", "acc_norm", "acc_norm(ignore_first_space=true)",
               "acc_norm(count_delimiter=true)", "acc_token", "acc_pmi"]
    got = ours(rows, metrics)
    cases = {
        "acc": (L.LoglikelihoodAcc(None), {}, lambda row: False),
        "acc_norm": (L.LoglikelihoodAcc(L.LogProbCharNorm()), {}, _has_empty),
        "acc_norm(ignore_first_space=true)": (
            L.LoglikelihoodAcc(L.LogProbCharNorm(ignore_first_space=True)), {},
            lambda row: _has_empty(row) or " " in row.choices),
        "acc_norm(count_delimiter=true)": (
            L.LoglikelihoodAcc(L.LogProbCharNorm()), {"spaced": True}, lambda row: False),
        "acc_token": (L.LoglikelihoodAcc(L.LogProbTokenNorm()), {}, lambda row: 0 in row.tokens),
        "acc_pmi": (L.LoglikelihoodAcc(L.LogProbPMINorm()), {"pmi": True}, lambda row: False),
    }
    for name, (metric, how, crashes) in cases.items():
        want = [
            lighteval_compute(
                metric, row,
                choices=[" " + c for c in row.choices] if how.get("spaced") else None,
                logprobs=row.lp + row.uncond if how.get("pmi") else None)
            for row in rows
        ]
        compare(rows, got[name], want, skip=crashes, what=name)
        for row, value in zip(rows, want, strict=True):  # lighteval divides Python floats
            if crashes(row):
                assert isinstance(value, ZeroDivisionError | IndexError), (name, row, value)


@needs_lighteval
@pytest.mark.parametrize("normalization", ["none", "token"])  # none: the bare word None
def test_prob_equals_lighteval_probability(rows, normalization):
    L = LIGHTEVAL
    name = f"prob(normalization={normalization})"
    got = ours(rows, [name])[name]
    metric = L.Probability(L.LogProbTokenNorm() if normalization == "token" else None)
    want = []
    for row in rows:
        # lighteval's Probability reads the gold continuations' log-probabilities only.
        gold_row = Row([row.lp[g] for g in row.golds], row.gold,
                       [row.choices[g] for g in row.golds], [row.tokens[g] for g in row.golds],
                       [])
        want.append(lighteval_compute(metric, gold_row))
    zero_tokens = (lambda row: any(row.tokens[g] == 0 for g in row.golds)) \
        if normalization == "token" else (lambda row: False)
    assert compare(rows, got, want, rel=1e-12, skip=zero_tokens, what=name)


def _scores(row: Row, normalization: str) -> list[float] | None:
    """The normalised scores, as floats (None where lighteval divides by zero)."""
    with np.errstate(all="ignore"):
        lp = np.array(row.lp)
        if normalization == "char":
            return None if _has_empty(row) else list(lp / [len(c) for c in row.choices])
        if normalization == "token":
            return None if 0 in row.tokens else list(lp / np.array(row.tokens, float))
        if normalization == "pmi":
            return list(lp - np.array(row.uncond))
    return list(lp)


def _in_exp_range(scores: list[float]) -> bool:
    """Whether lighteval's and lm-eval's unshifted exp(s) is exact enough for 1e-12."""
    top = max(scores, key=lambda s: (not math.isnan(s), s)) if scores else 0.0
    if any(math.isnan(s) for s in scores) or math.isinf(top):
        return True  # evalframe then uses the references' unshifted arithmetic
    return all(-700.0 <= s <= 700.0 for s in scores if math.isfinite(s))


EXACT = decimal.Context(prec=60)


def exact_exps(scores: Sequence[float]) -> list[decimal.Decimal]:
    """exp(s - max(s)) of floats, to 60 significant digits (finite scores)."""
    top = decimal.Decimal(max(scores))
    return [EXACT.exp(EXACT.subtract(decimal.Decimal(s), top)) for s in scores]


def exact_softmax_mass(scores: list[float], golds: list[int]) -> float:
    """max over golds of exp(s_g) / sum exp(s), with 60 significant digits."""
    exps = exact_exps(scores)
    total = sum(exps, decimal.Decimal(0))
    return float(EXACT.divide(max(exps[g] for g in golds), total))


@needs_lighteval
@pytest.mark.parametrize("normalization", ["none", "char", "token", "pmi"])
def test_prob_norm_equals_lighteval_normalized_multichoice_probability(rows, normalization):
    L = LIGHTEVAL
    name = f"prob_norm(normalization={normalization})"
    got = ours(rows, [name])[name]
    metric = L.NormalizedMultiChoiceProbability({
        "none": None, "char": L.LogProbCharNorm(), "token": L.LogProbTokenNorm(),
        "pmi": L.LogProbPMINorm()}[normalization])
    want = [lighteval_compute(metric, row, logprobs=row.lp + row.uncond
                              if normalization == "pmi" else None) for row in rows]

    def outside(row: Row) -> bool:
        scores = _scores(row, normalization)
        return scores is None or not _in_exp_range(scores)

    compared = compare(rows, got, want, rel=1e-12, skip=outside, what=name)
    assert compared > 0
    # Where lighteval's exp(s) under- or overflows, evalframe is the exact value.
    for row, value in zip(rows, got, strict=True):
        scores = _scores(row, normalization)
        if value is not REFUSED and scores is not None and not _in_exp_range(scores):
            assert same(value, exact_softmax_mass(scores, row.golds), 1e-12), (row, value)


@needs_lighteval
@pytest.mark.parametrize("length_normalization", [False, True])
def test_mrr_equals_lighteval(rows, length_normalization):
    L = LIGHTEVAL
    name = f"mrr(length_normalization={str(length_normalization).lower()})"
    got = ours(rows, [name])[name]
    want = [lighteval_compute(L.MRR(length_normalization), row) for row in rows]

    def undefined(row: Row) -> bool:  # Python's sorted is no order with NaN; 1 / len("")
        scores = _scores(row, "char" if length_normalization else "none")
        return scores is None or any(math.isnan(s) for s in scores)

    assert compare(rows, got, want, skip=undefined, what=name)


@needs_lighteval
@pytest.mark.parametrize("k", [1, 2, 3, 5])
def test_recall_at_k_equals_lighteval(rows, k):
    got = ours(rows, [f"recall@{k}"])[f"recall@{k}"]
    want = [lighteval_compute(LIGHTEVAL.Recall(k), row) for row in rows]

    def tied(row: Row) -> bool:  # the documented divergence: ties for k > 1
        keys = ["nan" if math.isnan(v) else v for v in row.lp]
        return k > 1 and len(set(keys)) < len(keys)

    assert compare(rows, got, want, skip=tied, what=f"recall@{k}")
    assert got == ours(rows, ["acc"])["acc"] if k == 1 else True


@needs_lighteval
def test_recall_tie_divergence_is_the_documented_one():
    row = Row([0.0, 0.0, 0.0], 0, ["a", "b", "c"], [1, 1, 1], [0.0, 0.0, 0.0])
    assert lighteval_compute(LIGHTEVAL.Recall(1), row) == 1.0
    assert lighteval_compute(LIGHTEVAL.Recall(2), row) == 0.0  # argsort()[::-1][:2] = [2, 1]
    assert ours([row], ["recall@1", "recall@2"]) == {"recall@1": [1.0], "recall@2": [1.0]}


# --- TruthfulQA --------------------------------------------------------------------------


def truthfulqa_rows(seed: int, count: int, *, gaps: bool) -> list[tuple[Row, int]]:
    """(row, len_mc1) in lighteval's layout: gold 0, then the true MC2 answers.

    Only rows evalframe accepts (see :func:`admissible`; the others raise, which
    :func:`test_impossible_values_are_refused` checks).
    """
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        mc1 = rng.randint(1, 6)
        n2 = rng.randint(1, 8)
        lp = []
        for _ in range(mc1 + n2):
            lp.append(_value(rng, lp))
        if gaps:
            true = sorted(rng.sample(range(n2), rng.randint(1, n2)))
        else:  # lighteval's layout: the true MC2 answers come first
            true = list(range(rng.randint(1, n2)))
        golds = [0] + [mc1 + t for t in true]
        row = Row(lp, golds, ["x"] * len(lp), [1] * len(lp), [0.0] * len(lp))
        if admissible(row, "mc2"):
            out.append((row, mc1))
    return out


def truthfulqa_scores(cases: Sequence[tuple[Row, int]]) -> dict[str, list[float]]:
    data = frame([row for row, _ in cases]).with_columns(
        len_mc1=pl.Series([split for _, split in cases], dtype=pl.Int64))
    scored = ef.score(data, ["mc1", "mc2"])
    return {"mc1": scored["mc1"].to_list(), "mc2": scored["mc2"].to_list()}


def _mc2_in_range(row: Row, split: int) -> bool:
    return _in_exp_range(row.lp[split:])


@needs_lm_eval
@pytest.mark.parametrize("gaps", [False, True])
def test_mc1_mc2_equal_lm_eval(gaps):
    cases = truthfulqa_rows(21 + gaps, 2000, gaps=gaps)
    got = truthfulqa_scores(cases)
    # lm-eval's own layout, one task per block: no len_mc1, the MC1 targets alone
    alone = ef.score(frame([Row(row.lp[:split], 0, [], [], []) for row, split in cases])
                     .select("choice_logprobs"), ["mc1"])["mc1"].to_list()
    assert alone == got["mc1"]
    for index, (row, split) in enumerate(cases):
        # lm-eval's truthfulqa_mc1 is acc over the MC1 targets with gold 0
        mc1_row = Row(row.lp[:split], 0, row.choices[:split], row.tokens[:split], [])
        assert got["mc1"][index] == lm_eval_scores(mc1_row, ["acc"])["acc"], (index, row)
        labels = [int(split + i in row.golds) for i in range(len(row.lp) - split)]
        with np.errstate(all="ignore"):
            want = float(LM_EVAL.mc2({"mc2_targets": {"labels": labels}},
                                     [(ll, False) for ll in row.lp[split:]])["acc"])
        if _mc2_in_range(row, split):
            assert same(got["mc2"][index], want, 1e-12), (index, row, split)
        else:
            block = exact_exps(row.lp[split:])
            true = sum((b for b, t in zip(block, labels, strict=True) if t), decimal.Decimal(0))
            exact = float(EXACT.divide(true, sum(block, decimal.Decimal(0))))
            assert same(got["mc2"][index], exact, 1e-12), (index, row, split)


@needs_lighteval
@pytest.mark.parametrize("gaps", [False, True])
def test_mc1_mc2_equal_lighteval_truthfulqa_mc_metrics(gaps):
    cases = truthfulqa_rows(31 + gaps, 2000, gaps=gaps)
    got = truthfulqa_scores(cases)
    metric = LIGHTEVAL.TruthfulqaMCMetrics()
    diverged = 0
    for index, (row, split) in enumerate(cases):
        doc = Doc(row.choices, row.golds, {"len_mc1": split})
        with np.errstate(all="ignore"):
            want = metric.compute(doc, ModelResponse(row.lp))
        assert got["mc1"][index] == float(want["truthfulqa_mc1"]), (index, row, split)
        golds = row.golds[1:]
        contiguous = golds == list(range(split, split + len(golds)))
        if contiguous and _mc2_in_range(row, split):
            assert same(got["mc2"][index], float(want["truthfulqa_mc2"]), 1e-12), (index, row)
        elif not contiguous:
            # The documented divergence: lighteval counts as true every MC2 choice up to the
            # end of the first run of consecutive golds (not the golds themselves).
            run = 1
            while run < len(golds) and golds[run] == golds[0] + run:
                run += 1
            block = np.array(row.lp[split:])
            if _mc2_in_range(row, split) and not np.isnan(block).any():
                with np.errstate(all="ignore"):
                    p = np.exp(block) / np.exp(block).sum()
                taken = float(p[: golds[0] + run - split].sum())
                assert same(float(want["truthfulqa_mc2"]), taken, 1e-12), (index, row)
                diverged += got["mc2"][index] != float(want["truthfulqa_mc2"])
    assert gaps == (diverged > 0)


# --- values no probability has -----------------------------------------------------------


@pytest.mark.parametrize("metric", ["acc", "acc_token", "acc_pmi", "prob_norm", "mc1"])
def test_impossible_values_are_refused(metric):
    """Rows the references score although their values are no probabilities raise here."""
    rows = adversarial_rows(list_gold=False) + random_rows(14, 400, list_gold=False)
    refused = [row for row in rows if not admissible(row, metric)]
    kept = [row for row in rows if admissible(row, metric)]
    assert len(refused) > 20 and len(kept) > 200
    if metric in ("acc", "acc_pmi") and LM_EVAL is not None:
        # lm-eval gives them a score (NaN and +inf win numpy.argmax)
        name = "acc_mutual_info" if metric == "acc_pmi" else "acc"
        assert all(isinstance(lm_eval_scores(row, [name])[name], float)
                   for row in refused if len(row.golds) == 1)
    assert len(ef.score(frame(kept), [metric])) == len(kept)
    for row in refused[:40]:
        with pytest.raises(ef.EvalframeError, match="have (a log-probability|a token count)"):
            ef.score(frame([kept[0], row, kept[1]]), [metric])


# --- lighteval's own fixture cases -------------------------------------------------------


FIXTURES = lighteval_cases.FIXTURE_DIR
FIXTURE_CASES = [
    case for path in lighteval_cases.fixture_files(FIXTURES) if path.name in MAPPED
    for case in lighteval_cases.load_cases(path)
] if FIXTURES.is_dir() else []


@pytest.mark.skipif(not FIXTURES.is_dir(), reason=f"{FIXTURES} is absent (a fresh clone)")
def test_every_mapped_fixture_file_is_present():
    assert {path.name for path in lighteval_cases.fixture_files(FIXTURES)} >= set(MAPPED)
    names = {(case.file, case.name) for case in FIXTURE_CASES}
    assert set(SKIPPED_CASES) <= names


@pytest.mark.skipif(not FIXTURES.is_dir(), reason=f"{FIXTURES} is absent (a fresh clone)")
@pytest.mark.parametrize("case", FIXTURE_CASES, ids=lambda case: case.id)
def test_lighteval_fixture_case(case):
    """As ``test_lighteval_suite`` will score the case: ``ef.score`` then ``ef.aggregate``."""
    data, checks = MAPPED[case.file](case)
    expected = case.data["expected_output"]
    assert {check.key for check in checks} == set(expected)
    tolerance = case.data.get("tolerance", 1e-2)
    requests = {check.key: check.metric for check in checks}
    scored = ef.score(data, requests)
    if (case.file, case.name) in SKIPPED_CASES and not case.name.endswith("Gold Indices"):
        # probabilities given as log-probabilities: the MC2 targets' logarithms are -inf,
        # no probability mass, mc2 NaN (which aggregate refuses); mc1 agrees
        assert scored["truthfulqa_mc1"].item() == float(expected["truthfulqa_mc1"])
        assert math.isnan(scored["truthfulqa_mc2"].item())
        with pytest.raises(ef.EvalframeError, match="'truthfulqa_mc2': 1 row.* NaN score"):
            ef.aggregate(scored, metrics=requests)
        return
    table = ef.aggregate(scored, metrics=requests).rows_by_key("metric", named=True, unique=True)
    results = {check.key: table[check.key]["value"] for check in checks}
    if (case.file, case.name) in SKIPPED_CASES:
        # the documented divergence: lighteval's MC2 split gives 0.0, evalframe 1.0
        assert results == {"truthfulqa_mc1": 0.0, "truthfulqa_mc2": 1.0}
        return
    for check in checks:
        # a bool expectation (truthfulqa_mc1: false) is a number to pytest.approx
        want = float(expected[check.key])
        assert results[check.key] == pytest.approx(want, abs=tolerance), (case.id, check)
