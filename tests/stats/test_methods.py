"""The statistics method tables, both ways: every registered method is accepted by the
function that takes it and gives finite numbers, and every value those functions (and the
command line) accept is registered; near misses get a suggestion, other names are refused.
"""

from __future__ import annotations

import math
import re

import numpy as np
import polars as pl
import pytest

import evalframe as ef
from evalframe import EvalframeError
from evalframe._registry import TABLES
from evalframe.cli import build_parser
from evalframe.errors import OptionError
from evalframe.stats import (
    COMPARISON_TESTS,
    CORRECTION_METHODS,
    INTERVAL_METHODS,
    STDERR_METHODS,
    intervals,
)
from evalframe.stats.compare import CORRECTIONS
from evalframe.stats.compare import METHODS as TESTS
from evalframe.stats.methods import CorrectionMethod

#: 0/1 scores of three questions, repeated unevenly: q1 three times, q2 once, q3 twice.
CLUSTERED = pl.DataFrame({
    "sample_id": [1, 1, 1, 2, 3, 3],
    "correct": [1.0, 1.0, 0.0, 1.0, 0.0, 0.0],
})


def _pairs(tasks: tuple[str, ...] = ("x",)) -> pl.DataFrame:
    """Two models on six items per task, 0/1 scores; ``new`` is right where ``base`` is
    wrong on items 1, 2 and 5 (three discordant pairs ``b``), never the reverse (``c = 0``)."""
    base = [1.0, 0.0, 0.0, 1.0, 0.0, 0.0]
    new = [1.0, 1.0, 1.0, 1.0, 0.0, 1.0]
    rows = [
        {"task": task, "model": model, "sample_id": item, "correct": score}
        for task in tasks
        for model, scores in (("base", base), ("new", new))
        for item, score in enumerate(scores)
    ]
    return pl.DataFrame(rows)


def _aggregate_row(**options) -> dict:
    return ef.aggregate(CLUSTERED, metrics=["correct"], cluster="sample_id", **options).row(
        0, named=True
    )


# --- every registered method is accepted and gives finite numbers ------------------------


def test_the_tables_are_registries_of_their_kind():
    for kind, table in (("stderr", STDERR_METHODS), ("interval", INTERVAL_METHODS),
                        ("comparison test", COMPARISON_TESTS),
                        ("correction", CORRECTION_METHODS)):
        assert TABLES[kind] is table
        assert len(table) >= 2
        for entry in table.entries():
            assert callable(entry.function) and entry.description, entry.name
        assert table.frame().columns == ["name", "description", "binary", "reference"]
        assert table.frame()["name"].to_list() == table.names()


@pytest.mark.parametrize("stderr", STDERR_METHODS.names())
def test_every_stderr_method_is_accepted_by_aggregate(stderr):
    row = _aggregate_row(stderr=stderr)
    for name in ("value", "stderr", "ci_low", "ci_high"):
        assert math.isfinite(row[name]), (stderr, name)
    assert row["n_clusters"] == 3


def test_the_stderr_methods_give_the_hand_computed_numbers():
    # mean 3/6 = 0.5; each question's residual sum: q1 0.5 + 0.5 - 0.5 = 0.5, q2 0.5,
    # q3 -0.5 - 0.5 = -1; clustered SE = sqrt(3/2 * (0.25 + 0.25 + 1)) / 6 = 1.5 / 6 = 0.25
    auto = _aggregate_row(stderr="auto")
    assert auto["value"] == pytest.approx(0.5, abs=1e-12)
    assert auto["stderr"] == pytest.approx(0.25, abs=1e-12)
    # question means 2/3, 1, 0: their mean 5/9, deviations 1/9, 4/9, -5/9; variance
    # (1 + 16 + 25) / 81 / 2 = 21/81, SE = sqrt(21/81 / 3) = sqrt(7) / 9
    question = _aggregate_row(stderr="question_mean")
    assert question["value"] == pytest.approx(5 / 9, abs=1e-12)
    assert question["stderr"] == pytest.approx(math.sqrt(7) / 9, abs=1e-12)
    assert "stderr:question_mean(sample_id)" in question["signature"]


@pytest.mark.parametrize("interval", INTERVAL_METHODS.names())
def test_every_interval_method_is_accepted_by_aggregate(interval):
    row = _aggregate_row(interval=interval)
    assert math.isfinite(row["ci_low"]) and math.isfinite(row["ci_high"])
    assert 0.0 <= row["ci_low"] <= row["value"] <= row["ci_high"] <= 1.0


def test_the_interval_methods_give_the_hand_computed_numbers():
    z = 1.959963984540054  # the 97.5% normal quantile
    # normal: 0.5 -/+ z * 0.25
    normal = _aggregate_row(interval="normal")
    assert (normal["ci_low"], normal["ci_high"]) == pytest.approx(
        (0.5 - z * 0.25, 0.5 + z * 0.25), abs=1e-12
    )
    # t on 3 - 1 = 2 degrees of freedom: 0.5 -/+ 4.302653 * 0.25 = [-0.58, 1.58], clipped
    t = _aggregate_row(interval="t")
    assert (t["ci_low"], t["ci_high"]) == (0.0, 1.0)
    # Wilson on the effective sample size p (1 - p) / SE^2 = 0.25 / 0.0625 = 4, p = 1/2:
    # centre 1/2, half-width z / (1 + z^2/4) * sqrt(1/16 + z^2/64) = 0.349961
    half = z / (1 + z * z / 4) * math.sqrt(1 / 16 + z * z / 64)
    for name in ("wilson", "auto"):  # auto: Wilson, as the scores are 0 or 1
        row = _aggregate_row(interval=name)
        assert (row["ci_low"], row["ci_high"]) == pytest.approx((0.5 - half, 0.5 + half),
                                                                abs=1e-12)
        assert "ci:wilson-0.95" in row["signature"]
    assert half == pytest.approx(0.349961, abs=1e-6)


@pytest.mark.parametrize("method", COMPARISON_TESTS.names())
def test_every_comparison_test_is_accepted_by_compare(method):
    row = ef.compare(_pairs(), baseline="base", metrics=["correct"], method=method,
                     bootstrap=200).row(0, named=True)
    assert row["diff"] == pytest.approx(0.5, abs=1e-12)  # (0 + 1 + 1 + 0 + 0 + 1) / 6
    for name in ("stderr", "ci_low", "ci_high", "p_value"):
        assert math.isfinite(row[name]), (method, name)
    assert 0.0 < row["p_value"] <= 1.0
    assert row["method"] in COMPARISON_TESTS


@pytest.mark.parametrize(
    "method", [test.name for test in COMPARISON_TESTS.entries() if "corpus" in test.levels]
)
def test_every_comparison_test_for_corpus_metrics_takes_a_corpus_metric(method):
    rows = pl.DataFrame({
        "model": ["base"] * 6 + ["new"] * 6,
        "sample_id": list(range(6)) * 2,
        "prediction": ["a", "b", "b", "a", "b", "b", "a", "a", "b", "a", "b", "b"],
        "gold": ["a", "a", "b", "a", "b", "b"] * 2,
    })
    scored = ef.score(rows, ["f1(average=macro)"])
    row = ef.compare(scored, baseline="base", method=method, bootstrap=200).row(0, named=True)
    assert math.isfinite(row["diff"]) and 0.0 < row["p_value"] <= 1.0


def test_the_closed_form_tests_give_the_hand_computed_p_values():
    frame = _pairs()
    # McNemar: b = 3, c = 0: 2 * P(Binom(3, 1/2) <= 0) = 2 / 8
    mcnemar = ef.compare(frame, baseline="base", metrics=["correct"], method="mcnemar").row(
        0, named=True
    )
    assert mcnemar["p_value"] == pytest.approx(0.25, abs=1e-12)
    # paired t: d = (0, 1, 1, 0, 0, 1), mean 1/2, sd sqrt(6/4 / 5) = sqrt(0.3), SE
    # sqrt(0.3 / 6) = sqrt(0.05), t = 0.5 / sqrt(0.05) = sqrt(5) = 2.2361 on 5 degrees of
    # freedom: two-sided p = 0.0756 (a t table)
    paired = ef.compare(frame, baseline="base", metrics=["correct"], method="paired").row(
        0, named=True
    )
    assert paired["stderr"] == pytest.approx(math.sqrt(0.05), abs=1e-12)
    assert paired["p_value"] == pytest.approx(0.0756, abs=5e-5)


@pytest.mark.parametrize("correction", CORRECTION_METHODS.names())
def test_every_correction_is_accepted_by_compare(correction):
    table = ef.compare(_pairs(("x", "y")), baseline="base", by="task", metrics=["correct"],
                       method="mcnemar", correction=correction)
    assert table["p_adjusted"].is_finite().all() and table.height == 2


def test_the_corrections_give_the_hand_computed_p_values():
    frame = _pairs(("x", "y"))  # two tasks, each McNemar p = 0.25 (above): a family of 2
    # Holm: sorted (0.25, 0.25) times (2, 1) = (0.5, 0.25), running maximum (0.5, 0.5)
    holm = ef.compare(frame, baseline="base", by="task", metrics=["correct"],
                       method="mcnemar", correction="holm")
    assert holm["p_adjusted"].to_list() == pytest.approx([0.5, 0.5], abs=1e-12)
    # BH: p * m / rank = (0.5, 0.25), running minimum from the top (0.25, 0.25)
    bh = ef.compare(frame, baseline="base", by="task", metrics=["correct"],
                       method="mcnemar", correction="bh")
    assert bh["p_adjusted"].to_list() == pytest.approx([0.25, 0.25], abs=1e-12)


# --- every value the functions accept is registered --------------------------------------


def _documented(doc: str, parameter: str) -> set[str]:
    """The quoted names in a numpydoc parameter's description."""
    match = re.search(rf"\n    {parameter}\n((?:        .*\n)+)", doc)
    assert match, parameter
    return set(re.findall(r'``"([^"]+)"``', match.group(1)))


@pytest.mark.parametrize(
    ("function", "parameter", "table"),
    [
        (ef.aggregate, "interval", INTERVAL_METHODS),
        (ef.aggregate, "stderr", STDERR_METHODS),
        (ef.compare, "method", COMPARISON_TESTS),
        (ef.compare, "correction", CORRECTION_METHODS),
    ],
)
def test_the_documented_values_are_the_registered_ones(function, parameter, table):
    assert _documented(function.__doc__, parameter) == set(table.names())


def _choices(command: str, option: str) -> list[str]:
    parser = build_parser()
    commands = next(a for a in parser._actions if a.dest == "command")
    action = next(a for a in commands.choices[command]._actions if option in a.option_strings)
    return list(action.choices)


@pytest.mark.parametrize(
    ("command", "option", "table"),
    [
        ("aggregate", "--interval", INTERVAL_METHODS),
        ("aggregate", "--stderr", STDERR_METHODS),
        ("compare", "--method", COMPARISON_TESTS),
        ("compare", "--correction", CORRECTION_METHODS),
    ],
)
def test_the_command_line_choices_are_the_registered_ones(command, option, table):
    assert _choices(command, option) == table.names()


def test_the_method_constants_are_the_registered_names():
    assert tuple(INTERVAL_METHODS.names()) == intervals.METHODS
    assert tuple(COMPARISON_TESTS.names()) == TESTS
    assert tuple(CORRECTION_METHODS.names()) == CORRECTIONS


# --- near misses and unregistered names ---------------------------------------------------


@pytest.mark.parametrize(
    ("call", "suggestion"),
    [
        (lambda: _aggregate_row(interval="Wilson"), "did you mean 'wilson'?"),
        (lambda: _aggregate_row(interval="wilsn"), "did you mean 'wilson'?"),
        (lambda: _aggregate_row(stderr="question-mean"), "did you mean 'question_mean'?"),
        (lambda: ef.compare(_pairs(), baseline="base", method="mcnemr"),
         "did you mean 'mcnemar'?"),
        (lambda: ef.compare(_pairs(), baseline="base", method="randomisation"),
         "did you mean 'randomization'?"),
        (lambda: ef.compare(_pairs(), baseline="base", correction="Holm"),
         "did you mean 'holm'?"),
    ],
)
def test_a_near_miss_suggests_the_registered_name(call, suggestion):
    with pytest.raises(OptionError, match=re.escape(suggestion)):
        call()


@pytest.mark.parametrize(
    ("call", "option", "table"),
    [
        (lambda: _aggregate_row(interval="bca"), "interval", INTERVAL_METHODS),
        (lambda: _aggregate_row(interval="bootstrap"), "interval", INTERVAL_METHODS),
        (lambda: _aggregate_row(stderr="sem"), "stderr", STDERR_METHODS),
        (lambda: ef.compare(_pairs(), baseline="base", method="permutation"), "method",
         COMPARISON_TESTS),
        (lambda: ef.compare(_pairs(), baseline="base", correction="bonferroni"),
         "correction", CORRECTION_METHODS),
    ],
)
def test_an_unregistered_method_is_refused_with_the_registered_ones(call, option, table):
    with pytest.raises(OptionError) as raised:
        call()
    assert raised.value.option == option
    for name in table.names():  # the message lists every registered method
        assert repr(name) in str(raised.value)


def test_a_method_is_accepted_once_registered_and_refused_before(monkeypatch):
    frame = _pairs(("x", "y"))
    with pytest.raises(EvalframeError, match="correction='bonferroni' is unknown"):
        ef.compare(frame, baseline="base", by="task", metrics=["correct"],
                   correction="bonferroni")
    monkeypatch.setattr(CORRECTION_METHODS, "_entries", dict(CORRECTION_METHODS._entries))
    CORRECTION_METHODS.add(CorrectionMethod(
        name="bonferroni", function=lambda ranked: ranked * ranked.size,
        description="Bonferroni: every p-value times the family's size",
    ))
    # each task's McNemar p = 0.25 (above), times m = 2
    table = ef.compare(frame, baseline="base", by="task", metrics=["correct"],
                       method="mcnemar",
                       correction="bonferroni")
    assert table["p_adjusted"].to_list() == pytest.approx([0.5, 0.5], abs=1e-12)
    assert "correction:bonferroni" in table["signature"][0]


def test_a_registered_test_keeps_its_conditions():
    # mcnemar is registered as needing 0/1 scores and independent pairs
    assert COMPARISON_TESTS["mcnemar"].binary and COMPARISON_TESTS["mcnemar"].independent
    halves = _pairs().with_columns(pl.col("correct") / 2)
    with pytest.raises(EvalframeError, match="needs 0/1 scores; .* use 'paired', 'bootstrap' "
                       "or 'randomization'"):
        ef.compare(halves, baseline="base", metrics=["correct"], method="mcnemar")
    # wilson is registered as for 0/1 scores
    assert INTERVAL_METHODS["wilson"].binary
    with pytest.raises(EvalframeError, match=r"use 'auto', 't' or 'normal'"):
        ef.aggregate(CLUSTERED.with_columns(pl.col("correct") / 2), metrics=["correct"],
                     interval="wilson")
    # question_mean is registered as needing clusters
    assert STDERR_METHODS["question_mean"].needs_clusters
    with pytest.raises(EvalframeError, match="stderr='question_mean' needs clusters"):
        ef.aggregate(CLUSTERED, metrics=["correct"], stderr="question_mean", cluster=False)


def test_the_stderr_functions_are_the_registered_ones():
    values = CLUSTERED["correct"].to_numpy()
    clusters = CLUSTERED["sample_id"].to_numpy()
    # the same hand computation as above: 0.25 clustered, sqrt(7) / 9 over question means
    assert STDERR_METHODS["auto"].function(values, clusters) == pytest.approx(0.25)
    assert STDERR_METHODS["question_mean"].function(values, clusters) == pytest.approx(
        math.sqrt(7) / 9
    )
    # independent rows: the sample standard deviation over sqrt(n), sqrt(0.3) / sqrt(6)
    assert STDERR_METHODS["auto"].function(np.array([0.0, 1, 1, 0, 0, 1])) == pytest.approx(
        math.sqrt(0.05)
    )


@pytest.mark.parametrize(("method", "reference"), [("clopper_pearson", "beta"),
                                                   ("jeffreys", "jeffreys")])
def test_beta_intervals_equal_statsmodels(method, reference):
    proportion = pytest.importorskip("statsmodels.stats.proportion")
    # 3 of 10, 7 of 7 and 0 of 5 right
    frame = pl.DataFrame({"model": ["a"] * 10 + ["b"] * 7 + ["c"] * 5,
                          "prediction": ["x"] * 3 + ["y"] * 7 + ["x"] * 7 + ["y"] * 5,
                          "gold": ["x"] * 22})
    table = ef.aggregate(ef.score(frame, ["exact_match"]), by="model", interval=method)
    got = {row["model"]: (row["ci_low"], row["ci_high"]) for row in table.iter_rows(named=True)}
    for model, (count, n) in {"a": (3, 10), "b": (7, 7), "c": (0, 5)}.items():
        low, high = proportion.proportion_confint(count, n, alpha=0.05, method=reference)
        if method == "jeffreys":  # ends as Brown, Cai and DasGupta: 0 at 0, 1 at n
            low, high = (0.0 if count == 0 else low), (1.0 if count == n else high)
        assert got[model] == pytest.approx((low, high), rel=1e-12, abs=1e-15)
    assert "|ci:" + method + "-0.95|" in table["signature"][0]


def test_clopper_pearson_covers_at_least_its_level_at_small_n():
    # exact binomial coverage of the 95% interval for n = 20 at p = 0.05, 0.5, 0.9,
    # summed over every count k with its binomial probability: never below 0.95
    from scipy.stats import binom

    from evalframe.stats.intervals import Estimate, _clopper_pearson

    n = 20
    counts = np.arange(n + 1)
    estimate = Estimate(value=counts / n, stderr=np.zeros(n + 1), n=np.full(n + 1, n),
                        units=np.full(n + 1, n), df=np.full(n + 1, n - 1),
                        binary=np.ones(n + 1, dtype=bool),
                        repeated=np.zeros(n + 1, dtype=bool), bounds=(0.0, 1.0))
    low, high = _clopper_pearson(estimate, 0.95)
    for p in (0.05, 0.5, 0.9):
        covered = (low <= p) & (p <= high)
        assert binom.pmf(counts, n, p)[covered].sum() >= 0.95
