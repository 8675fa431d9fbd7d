"""Rank intervals: by hand, on the tables of aggregate / compare / judge.report, errors, and
their coverage by simulation."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

import evalframe as ef
from evalframe import EvalframeError
from evalframe.stats.ranks import RANK_COLUMNS, point_ranks, rank_intervals, ranks


def test_point_ranks_give_ties_the_smallest_rank_both_ways():
    values = np.array([0.3, 0.9, 0.3, 0.1])
    assert point_ranks(values).tolist() == [2, 1, 2, 4]
    assert point_ranks(values, higher_is_better=False).tolist() == [2, 4, 2, 1]
    assert point_ranks(np.array([[1.0, 2.0], [2.0, 2.0]])).tolist() == [[2, 1], [1, 1]]


def test_rank_intervals_by_hand():
    # 20 replicates of three models; with ci=0.8 the 2 best and 2 worst replicate ranks of
    # each model are set aside (floor(20 * 0.2 / 2) = 2)
    point = np.array([3.0, 2.0, 1.0])
    replicates = np.array(
        [[3.0, 2.0, 1.0]] * 14  # ranks 1, 2, 3
        + [[2.0, 3.0, 1.0]] * 3  # ranks 2, 1, 3
        + [[1.0, 2.0, 3.0]] * 2  # ranks 3, 2, 1
        + [[3.0, 1.0, 2.0]]  # ranks 1, 3, 2
    )
    found = rank_intervals(point, replicates, ci=0.8)
    assert found.rank.tolist() == [1, 2, 3]
    # model 0's replicate ranks sorted: 1 x 15, 2 x 3, 3 x 2; without 2 at each end: 1..2
    # model 1's: 1 x 3, 2 x 16, 3; without [1, 1] and [2, 3]: 1..2
    # model 2's: 1 x 2, 2, 3 x 17; without [1, 1] and [3, 3]: 2..3
    assert found.low.tolist() == [1, 1, 2]
    assert found.high.tolist() == [2, 2, 3]
    # differences' 80% intervals (linear quantiles at 0.1 and 0.9, positions 1.9 and 17.1
    # of the 20 sorted): model 0 - model 1 sorted is -1 x 5, 1 x 14, 2: [-1, 1], tied;
    # model 1 - model 2 is -1 x 3, 1 x 14, 2 x 3: [-1, 2], tied; model 0 - model 2 is
    # -2 x 2, 1 x 4, 2 x 14: the 10% quantile -2 + 0.9 * 3 = 0.7 > 0, not tied
    assert found.tied.tolist() == [
        [False, True, False], [True, False, True], [False, True, False]
    ]
    strict = rank_intervals(point, replicates[:14], ci=0.8)  # every replicate agrees
    assert strict.low.tolist() == strict.high.tolist() == [1, 2, 3]
    assert not strict.tied.any()


def test_the_interval_is_widened_to_hold_the_point_rank():
    # the point says model 0 is first, every replicate says second
    found = rank_intervals(np.array([2.0, 1.0]), np.array([[1.0, 2.0]] * 10))
    assert found.rank.tolist() == [1, 2]
    assert found.low.tolist() == [1, 1] and found.high.tolist() == [2, 2]


def test_tied_with_by_hand_from_standard_errors():
    # independent normal draws: a difference of two values with stderr 0.01 has sd
    # 0.01 * sqrt(2) = 0.01414; 0.02 apart is z = 1.41 (tied), 0.035 apart z = 2.47 (not)
    table = pl.DataFrame({
        "model": ["a", "b", "c"], "metric": ["acc"] * 3,
        "value": [0.50, 0.52, 0.555], "stderr": [0.01] * 3,
    })
    got = ranks(table, draws=20_000)
    assert got["tied_with"].to_list() == [["b"], ["a"], []]
    assert got["rank"].to_list() == [3, 2, 1]
    assert got.columns == [*table.columns, *RANK_COLUMNS]


def test_ranks_of_an_aggregate_table_within_task_and_metric():
    rng = np.random.default_rng(0)
    rows = []
    for task, accuracy in (("easy", [0.9, 0.6, 0.3]), ("hard", [0.2, 0.5, 0.8])):
        for model, p in zip(("x", "y", "z"), accuracy, strict=True):
            for i in range(300):
                rows.append({"model": model, "task": task, "sample_id": f"{task}{i}",
                             "prediction": "a" if rng.random() < p else "b", "gold": "a"})
    scored = ef.score(pl.DataFrame(rows), ["exact_match"])
    table = ef.aggregate(scored, by=["model", "task"])
    got = ef.ranks(table).sort("task", "model")
    assert got.height == 6 and got.columns == [*table.columns, *RANK_COLUMNS]
    # ranked within each task: x y z on easy, z y x on hard, 30 points apart = many stderrs
    assert got["rank"].to_list() == [1, 2, 3, 3, 2, 1]
    assert got["rank_low"].to_list() == got["rank"].to_list()
    assert got["rank_high"].to_list() == got["rank"].to_list()
    assert all(tied == [] for tied in got["tied_with"].to_list())
    # one group over both tasks (within=[]) is refused: a model is there twice
    with pytest.raises(EvalframeError, match="has 2 rows in one group"):
        ef.ranks(table, within=[])
    # the input's rows keep their order; ranking again replaces the columns
    again = ef.ranks(ef.ranks(table))
    assert again.drop(RANK_COLUMNS).equals(table)
    assert again.select(RANK_COLUMNS).equals(ef.ranks(table).select(RANK_COLUMNS))


def test_direction_from_the_metric_or_the_option():
    table = pl.DataFrame({
        "model": ["a", "b"], "metric": ["ter", "ter"], "value": [0.2, 0.6],
        "stderr": [0.01, 0.01],
        "signature": ["metric:ter|opts:-|version:x"] * 2,  # TER: lower is better
    })
    assert ranks(table)["rank"].to_list() == [1, 2]
    assert ranks(table.drop("signature"))["rank"].to_list() == [2, 1]  # higher by default
    assert ranks(table, higher_is_better=True)["rank"].to_list() == [2, 1]
    assert ranks(table.drop("signature"), higher_is_better=False)["rank"].to_list() == [1, 2]
    mixed = table.with_columns(pl.Series("signature", ["metric:ter|x", "metric:bleu|x"]))
    with pytest.raises(EvalframeError, match="mixes metrics where higher is better"):
        ranks(mixed, within=[])


def test_compare_and_report_tables():
    rng = np.random.default_rng(1)
    rows = [
        {"model": model, "sample_id": f"q{i}", "gold": "a",
         "prediction": "a" if rng.random() < p else "b"}
        for model, p in (("base", 0.5), ("m1", 0.7), ("m2", 0.4)) for i in range(400)
    ]
    scored = ef.score(pl.DataFrame(rows), ["exact_match"])
    comparison = ef.compare(scored, model="model", baseline="base")
    got = ef.ranks(comparison).sort("model")
    assert got["rank"].to_list() == [1, 2]  # by diff: m1 above m2, within baseline, metric
    battles = pl.DataFrame({
        "model_a": ["x"] * 40 + ["y"] * 40, "model_b": ["base"] * 80,
        "outcome": ["A"] * 30 + ["B"] * 10 + ["A"] * 12 + ["B"] * 28,
    })
    report = ef.judge.report(battles, by="model_a")
    assert ef.ranks(report, by="model_a")["rank"].to_list() == [1, 2]
    # win_rate_a is side A's: ranked by side B, the lower the better
    flipped = battles.rename({"model_a": "model_b", "model_b": "model_a"}).with_columns(
        pl.col("outcome").replace({"A": "B", "B": "A"})
    )
    report = ef.judge.report(flipped, by="model_b")
    assert ef.ranks(report, by="model_b")["rank"].to_list() == [1, 2]
    with pytest.raises(EvalframeError, match="say whether 'side'"):
        ef.ranks(report.rename({"model_b": "side"}), by="side")


def test_mistakes_are_errors_naming_the_row():
    table = pl.DataFrame({"model": ["a", "b", "c"], "metric": ["acc"] * 3,
                          "value": [0.1, 0.2, 0.3], "stderr": [0.01, None, 0.02]})
    with pytest.raises(EvalframeError, match=r"no finite standard error in 'stderr'; first: "
                       r"row 1 \(model='b'"):
        ranks(table)
    with pytest.raises(EvalframeError, match="negative standard error"):
        ranks(table.with_columns(pl.col("stderr").fill_null(-0.1)))
    with pytest.raises(EvalframeError, match="no finite value in 'value'; first: row 2"):
        ranks(table.with_columns(pl.Series("value", [0.1, 0.2, float("nan")]),
                                 pl.col("stderr").fill_null(0.1)))
    with pytest.raises(EvalframeError, match=r"no column\(s\) \['stderr'\]"):
        ranks(table.drop("stderr"))
    with pytest.raises(EvalframeError, match="name its value column"):
        ranks(table.rename({"value": "score", "metric": "m"}))
    with pytest.raises(EvalframeError, match="name the columns whose groups"):
        ranks(table.rename({"metric": "m"}).with_columns(pl.col("stderr").fill_null(0.1)))
    with pytest.raises(EvalframeError, match="draws=10"):
        ranks(table, draws=10)
    with pytest.raises(EvalframeError, match="within=.* names the ranked column"):
        ranks(table, within=["model"])


def test_draws_are_seeded():
    table = pl.DataFrame({"model": list("abcdef"), "value": np.linspace(0, 0.05, 6),
                          "stderr": [0.02] * 6})
    first = ranks(table, within=[], seed=3)
    assert first.equals(ranks(table, within=[], seed=3))
    assert not first.equals(ranks(table, within=[], seed=4, draws=100))


@pytest.mark.slow
def test_coverage_of_rank_intervals_from_standard_errors_by_simulation():
    # six models answering 400 questions each (independent, as the draws assume), true
    # accuracies 0.5 + gap * k. Observed share of (simulation, model) pairs whose true rank
    # is inside [rank_low, rank_high], 300 simulations (1,800 intervals), draws=2000:
    # gap 0.01 (0.4 stderr): 0.964; gap 0.02: 0.988; gap 0.05: 0.999. Near-ties undercover:
    # gap 0.002 (0.08 stderr): 0.918. Tolerance: at least 0.94 for the gap of 0.01 (the
    # binomial sd of a 0.95 share of 1,800 is 0.005), at least 0.97 for 0.02
    rng = np.random.default_rng(1)
    truth = np.arange(6, 0, -1)
    for gap, floor in ((0.01, 0.94), (0.02, 0.97)):
        accuracy = 0.5 + gap * np.arange(6)
        inside = 0
        for simulation in range(300):
            correct = (rng.random((6, 400)) < accuracy[:, None]).astype(float)
            table = pl.DataFrame({
                "model": [f"m{k}" for k in range(6)], "value": correct.mean(axis=1),
                "stderr": correct.std(axis=1, ddof=1) / np.sqrt(400),
            })
            got = ranks(table, within=[], draws=2000, seed=simulation)
            inside += int(((got["rank_low"].to_numpy() <= truth)
                           & (truth <= got["rank_high"].to_numpy())).sum())
        assert inside / 1800 >= floor, (gap, inside / 1800)


@pytest.mark.slow
def test_coverage_of_rating_rank_intervals_by_simulation():
    # five models with Bradley-Terry strengths 0, 0.15, 0.3, 0.5, 0.8 (natural units), 1,500
    # battles per simulation, 100 bootstrap replicates by battle, 60 simulations: every one
    # of the 300 intervals held its true rank (observed 1.000); tolerance: at least 0.95
    rng = np.random.default_rng(1)
    strength = np.array([0.0, 0.15, 0.3, 0.5, 0.8])
    truth = np.array([5, 4, 3, 2, 1])
    inside = 0
    for simulation in range(60):
        a = rng.integers(0, 5, 1500)
        b = (a + rng.integers(1, 5, 1500)) % 5
        p = 1 / (1 + np.exp(-(strength[a] - strength[b])))
        battles = pl.DataFrame({
            "model_a": [f"m{k}" for k in a], "model_b": [f"m{k}" for k in b],
            "outcome": np.where(rng.random(1500) < p, "A", "B"),
        })
        got = ef.judge.ratings(battles, bootstrap=100, seed=simulation).sort("model")
        inside += int(((got["rank_low"].to_numpy() <= truth)
                       & (truth <= got["rank_high"].to_numpy())).sum())
    assert inside / 300 >= 0.95
