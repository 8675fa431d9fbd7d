"""The regression gate: its decision, its errors, and its error rates by simulation.

Expected values are computed by hand (McNemar's one-sided p-value is a binomial tail) or
by independent code in the test (the exact power of McNemar's test by enumerating every
outcome with ``scipy.stats.binomtest``).
"""

from __future__ import annotations

import json
import math

import numpy as np
import polars as pl
import pytest
from scipy.stats import binom, binomtest

import evalframe as ef
from evalframe import EvalframeError
from evalframe.errors import OptionError


def _dump(correct, *, tasks=None, ids=None, column="correct") -> pl.DataFrame:
    correct = np.asarray(correct, dtype=float)
    frame = pl.DataFrame({
        "sample_id": np.arange(len(correct)) if ids is None else ids,
        column: correct,
    })
    if tasks is not None:
        frame = frame.with_columns(task=pl.Series(tasks))
    return frame


def _scored(right: int, total: int, *, model: str | None = None) -> pl.DataFrame:
    """``total`` items, the first ``right`` answered right, scored with exact_match."""
    frame = pl.DataFrame({
        "sample_id": range(total),
        "prediction": ["a"] * right + ["b"] * (total - right),
        "gold": ["a"] * total,
    })
    if model is not None:
        frame = frame.with_columns(model=pl.lit(model))
    return ef.score(frame, ["exact_match"])


PLAIN = {"higher_is_better": {"correct": True}, "metrics": ["correct"]}


def test_a_regression_is_caught_with_mcnemars_one_sided_p_value():
    # baseline right on items 0-299, candidate on 0-249: b = 0 pairs where only the
    # candidate is right, c = 50 where only the baseline is. One-sided exact McNemar:
    # P(Binom(50, 1/2) <= 0) = 2**-50.
    result = ef.gate(_scored(250, 400), _scored(300, 400), mde=0.05)
    row = result.table.row(0, named=True)
    assert (result.status, result.exit_code) == ("regressed", 1)
    assert row["diff"] == -0.125
    assert row["p_value"] == pytest.approx(2.0**-50, rel=1e-12)
    assert row["method"] == "mcnemar"
    assert row["status"] == "regressed"
    assert result.regressions.height == 1


def test_an_improvement_is_not_a_regression():
    result = ef.gate(_scored(300, 400), _scored(250, 400), mde=0.05)
    row = result.table.row(0, named=True)
    assert row["diff"] == 0.125
    # the one-sided p-value of a regression: 1 - P(Binom(50, 1/2) <= 0)
    assert row["p_value"] == pytest.approx(1 - 2.0**-50)
    assert result.status != "regressed"


def test_holm_runs_over_every_group_and_metric_of_the_gate():
    # task a: b = 2, c = 10 (P(Binom(12, 1/2) <= 2) = 79/4096); task b: b = 0, c = 6
    # (1/64). Holm over the two: sorted 1/64 -> 2/64, 79/4096 -> max(79/4096, 2/64).
    base_a = [1] * 10 + [0] * 2 + [1] * 88
    cand_a = [0] * 10 + [1] * 2 + [1] * 88
    base_b = [1] * 6 + [1] * 94
    cand_b = [0] * 6 + [1] * 94
    tasks = ["a"] * 100 + ["b"] * 100
    result = ef.gate(_dump(cand_a + cand_b, tasks=tasks), _dump(base_a + base_b, tasks=tasks),
                     mde=0.05, by="task", **PLAIN)
    table = result.table.sort("task")
    assert table["p_value"].to_list() == pytest.approx([79 / 4096, 1 / 64], rel=1e-12)
    assert table["p_adjusted"].to_list() == pytest.approx([2 / 64, 2 / 64], rel=1e-12)
    assert table["status"].to_list() == ["regressed", "regressed"]
    without = ef.gate(_dump(cand_a + cand_b, tasks=tasks), _dump(base_a + base_b, tasks=tasks),
                      mde=0.05, by="task", correction=None, **PLAIN)
    assert without.table.sort("task")["p_adjusted"].to_list() == pytest.approx(
        [79 / 4096, 1 / 64], rel=1e-12)


def _exact_mcnemar_power(n: int, p10: float, p01: float, level: float) -> float:
    """Power of the one-sided exact McNemar test of "fewer wins than losses", by
    enumerating every (b, c) outcome: independent of the code under test."""
    total = 0.0
    from scipy.stats import multinomial

    for b in range(n + 1):
        for c in range(n + 1 - b):
            if b + c == 0:
                continue
            if binomtest(b, b + c, 0.5, alternative="less").pvalue < level:
                total += multinomial.pmf([b, c, n - b - c], n, [p10, p01, 1 - p10 - p01])
    return total


def test_the_power_column_is_the_exact_mcnemar_power_of_the_test_run():
    # 40 pairs, 8 discordant (4 each way): the planning rate of discordant pairs is 0.2;
    # a regression of mde = 0.1 is p01 - p10 = 0.1 with p01 + p10 = 0.2.
    base = [1] * 4 + [0] * 4 + [1] * 20 + [0] * 12
    cand = [0] * 4 + [1] * 4 + [1] * 20 + [0] * 12
    result = ef.gate(_dump(cand), _dump(base), mde=0.1, **PLAIN)
    row = result.table.row(0, named=True)
    expected = _exact_mcnemar_power(40, 0.05, 0.15, 0.05)
    assert row["power"] == pytest.approx(expected, abs=1e-9)
    assert row["status"] == "underpowered"  # about 0.4, far below 0.8
    assert result.exit_code == 3
    assert row["detectable"] > 0.1


def test_a_group_with_too_few_pairs_cannot_pass():
    result = ef.gate(_dump([1.0]), _dump([1.0]), mde=0.1, **PLAIN)
    row = result.table.row(0, named=True)
    assert row["status"] == "underpowered"
    assert "too few pairs" in row["reason"]
    assert result.exit_code == 3


def test_a_lower_is_better_metric_regresses_upwards():
    # char_edit_distance: lower is better; the candidate's answers are further off
    golds = ["abcdef"] * 60
    base = pl.DataFrame({"sample_id": range(60), "prediction": golds, "gold": golds})
    cand = base.with_columns(prediction=pl.Series(["abcxyz"] * 30 + golds[30:]))
    result = ef.gate(ef.score(cand, ["char_edit_distance"]),
                     ef.score(base, ["char_edit_distance"]), mde=0.5)
    row = result.table.row(0, named=True)
    assert row["diff"] == 1.5  # 30 items 3 edits further, over 60
    assert row["status"] == "regressed"


def test_missing_answers_count_as_wrong_not_dropped():
    # the candidate gives no answer to 40 of the items the baseline got right
    base = pl.DataFrame({"sample_id": range(200), "prediction": ["a"] * 200,
                         "gold": ["a"] * 200})
    cand = base.with_columns(prediction=pl.Series([None] * 40 + ["a"] * 160, dtype=pl.String))
    result = ef.gate(ef.score(cand, ["exact_match"]), ef.score(base, ["exact_match"]),
                     mde=0.05)
    row = result.table.row(0, named=True)
    assert (row["n_pairs"], row["status"]) == (200, "regressed")
    assert row["diff"] == pytest.approx(-0.2)


def test_items_one_dump_lacks_are_refused_unless_allowed():
    with pytest.raises(EvalframeError, match="candidate's dump lacks 10 item"):
        ef.gate(_dump([1] * 90), _dump([1] * 100), mde=0.1, **PLAIN)
    result = ef.gate(_dump([1] * 90), _dump([1] * 100), mde=0.1, unmatched="ignore", **PLAIN)
    row = result.table.row(0, named=True)
    assert (row["n_pairs"], row["n_unmatched_baseline"]) == (90, 10)


def test_a_metric_in_one_dump_only_is_refused_not_left_out():
    cand = _scored(10, 20)
    base = ef.score(pl.DataFrame({"sample_id": range(20), "prediction": ["a"] * 20,
                                  "gold": ["a"] * 20}), ["exact_match", "f1"])
    with pytest.raises(EvalframeError, match=r"\['f1'\] are in the baseline's dump only"):
        ef.gate(cand, base, mde=0.1)


def test_a_plain_score_column_needs_its_direction():
    with pytest.raises(EvalframeError, match="cannot know whether higher is better"):
        ef.gate(_dump([1, 0]), _dump([1, 1]), mde=0.1, metrics=["correct"])


def test_the_same_column_scored_differently_is_refused():
    frame = pl.DataFrame({"sample_id": range(4), "prediction": ["A", "a", "b", "c"],
                          "gold": ["a"] * 4})
    cand = ef.score(frame, ["exact_match=exact_match(ignore_case=true)"])
    base = ef.score(frame, ["exact_match"])
    with pytest.raises(EvalframeError, match="exact_match"):
        ef.gate(cand, base, mde=0.1)


def test_a_dump_of_several_models_needs_the_model_chosen():
    both = pl.concat([_scored(250, 400, model="new"), _scored(300, 400, model="old")])
    with pytest.raises(EvalframeError, match="holds 2 models"):
        ef.gate(both, both, mde=0.05)
    result = ef.gate(both, both, mde=0.05, candidate_model="new", baseline_model="old")
    assert result.table["diff"].to_list() == [-0.125]


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"mde": 0}, "mde=0"),
        ({"mde": float("nan")}, "mde=nan"),
        ({"mde": 0.1, "alpha": 1.5}, "alpha=1.5"),
        ({"mde": 0.1, "power": 0.01, "alpha": 0.05}, "must exceed alpha"),
        ({"mde": 0.1, "unmatched": "drop"}, "unmatched='drop'"),
        ({"mde": 0.1, "by": "tsk"}, "candidate's dump has no column 'tsk'"),
    ],
)
def test_bad_options_are_refused_before_any_work(options, match):
    with pytest.raises(OptionError, match=match):
        ef.gate(_dump([1, 0]), _dump([1, 1]), **PLAIN, **options)


def test_the_outputs_for_ci_systems():
    result = ef.gate(_scored(250, 400), _scored(300, 400), mde=0.05)
    document = json.loads(result.to_json())
    assert (document["status"], document["exit_code"], document["regressed"]) == (
        "regressed", 1, 1)
    assert document["rows"][0]["diff"] == -0.125
    text = str(result)
    assert text.startswith("evalframe gate: REGRESSED (exit 1)")
    assert "[-0.1" in text
    markdown = result.to_markdown()
    assert markdown.startswith("**evalframe gate: REGRESSED")
    assert "| exact_match | 400 |" in markdown


# --- error rates by simulation ------------------------------------------------------------


def _null_pair(rng, n: int, tasks: int, accuracy: float, agreement: float):
    """Two equally good models: the candidate copies the baseline's outcome with
    probability ``agreement``, else draws afresh."""
    base = rng.random(n * tasks) < accuracy
    fresh = rng.random(n * tasks) < accuracy
    cand = np.where(rng.random(n * tasks) < agreement, base, fresh)
    return cand, base


@pytest.mark.slow
def test_the_false_alarm_rate_is_at_most_alpha():
    # 1,000 gates of two equally good models on 5 tasks of 200 items (seed 11): the gate
    # says "regressed" in at most alpha + 3 Monte-Carlo standard errors of the runs.
    rng = np.random.default_rng(11)
    tasks = np.repeat(np.arange(5), 200)
    runs, alarms = 1000, 0
    for _ in range(runs):
        cand, base = _null_pair(rng, 200, 5, 0.7, 0.6)
        result = ef.gate(_dump(cand, tasks=tasks), _dump(base, tasks=tasks), mde=0.05,
                         by="task", **PLAIN)
        alarms += result.status == "regressed"
    rate = alarms / runs
    assert rate <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / runs)


@pytest.mark.slow
def test_the_power_is_as_planned():
    # One task of n items; the candidate loses mde = 0.05 through discordant pairs
    # p10 = 0.1, p01 = 0.15. n is the smallest number of items at which the exact one-
    # sided McNemar test at alpha = 0.05 reaches power 0.8, computed here by summing the
    # binomial over the discordant count (independent of the code under test).
    p10, p01, alpha = 0.10, 0.15, 0.05

    def planned(n: int) -> float:
        d = np.arange(n + 1)
        # reject when P(Binom(d, 1/2) <= b) < alpha: b <= the largest such b
        b = np.arange(n + 1)
        power = 0.0
        weights = binom.pmf(d, n, p10 + p01)
        for count, weight in zip(d, weights, strict=True):
            if weight < 1e-14 or count == 0:
                continue
            tail = binom.cdf(b[: count + 1], count, 0.5)
            reject = b[: count + 1][tail < alpha]
            if reject.size:
                power += weight * binom.cdf(reject.max(), count, p10 / (p10 + p01))
        return power

    n = 500
    while planned(n) < 0.8:
        n += 5
    target = planned(n)
    assert 0.8 <= target < 0.83
    rng = np.random.default_rng(5)
    runs, caught = 1500, 0
    probabilities = [p10, p01, 1 - p10 - p01]
    for _ in range(runs):
        kind = rng.choice(3, size=n, p=probabilities)
        base = rng.random(n) < 0.6
        cand = np.where(kind == 0, True, np.where(kind == 1, False, base))
        base = np.where(kind == 0, False, np.where(kind == 1, True, base))
        result = ef.gate(_dump(cand), _dump(base), mde=0.05, **PLAIN)
        caught += result.status == "regressed"
    assert abs(caught / runs - target) < 0.03
