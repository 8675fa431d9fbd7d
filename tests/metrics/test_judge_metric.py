"""The win_rate metric: A's share of a pairwise judgment, from its outcome."""

from __future__ import annotations

import math

import polars as pl
import pytest

import evalframe as ef
from evalframe import EvalframeError
from evalframe import metrics as M
from evalframe.metrics.registry import resolve
from evalframe.schema import ROLES


def scores(outcomes: list[str | None]) -> list[float | None]:
    frame = pl.DataFrame({"outcome": outcomes}, schema={"outcome": pl.String})
    return ef.score(frame, ["win_rate"])["win_rate"].to_list()


def test_each_outcome_is_worth_its_share_to_a():
    assert scores(["A", "B", "tie", "inconsistent", "error", None]) == [
        1.0, 0.0, 0.5, 0.5, None, None,
    ]


def test_the_spec():
    spec, _ = resolve("win_rate")
    assert spec.role_sets == (("outcome",),)
    assert spec.bounds == (0.0, 1.0)
    assert spec.higher_is_better
    assert spec.level == "sample"
    assert "outcome" in ROLES and ROLES["outcome"].kinds == ("str",)
    assert "win_rate" in ef.list_metrics()["name"].to_list()


def test_seed_three_examples_give_one_half():
    # a judge preferring whichever answer contains "42": A wins, B wins, a tie
    scored = ef.score(pl.DataFrame({"outcome": ["A", "B", "tie"]}), ["win_rate"])
    assert ef.aggregate(scored)["value"].item() == 0.5


def test_always_first_judge_gives_exactly_one_half():
    # answering FIRST in both orders is A then B: every pair is inconsistent
    scored = ef.score(pl.DataFrame({"outcome": ["inconsistent"] * 7}), ["win_rate"])
    assert ef.aggregate(scored)["value"].item() == 0.5


def test_aggregate_leaves_errors_out_and_counts_them():
    outcomes = ["A", "A", "B", "tie", "inconsistent", "error", "error", None]
    scored = ef.score(pl.DataFrame({"outcome": outcomes}), ["win_rate"])
    table = ef.aggregate(scored)
    # (wins_a + 0.5 (ties + inconsistent)) / n_valid = (2 + 0.5 * 2) / 5
    assert table["value"].item() == pytest.approx(3 / 5, abs=1e-15)
    assert table["n"].item() == 5
    assert table["n_null"].item() == 3
    assert 0.0 <= table["ci_low"].item() <= table["ci_high"].item() <= 1.0


def test_stderr_is_the_sem_of_the_row_scores():
    outcomes = ["A", "B", "B", "tie"]
    scored = ef.score(pl.DataFrame({"outcome": outcomes}), ["win_rate"])
    values = [1.0, 0.0, 0.0, 0.5]
    mean = sum(values) / 4
    sem = math.sqrt(sum((v - mean) ** 2 for v in values) / 3) / 2
    assert ef.aggregate(scored)["stderr"].item() == pytest.approx(sem, rel=1e-12)


def test_unknown_outcome_raises_naming_the_row():
    with pytest.raises(EvalframeError, match=r"win_rate.*First offending row: 1 \(outcome='Tie'\)"):
        scores(["A", "Tie"])


def test_expression_level_and_lazy():
    frame = pl.DataFrame({"o": ["B", "tie"]})
    assert frame.select(M.win_rate("o")).to_series().to_list() == [0.0, 0.5]
    lazy = ef.score(frame.lazy(), ["win_rate"], columns={"outcome": "o"}).collect()
    assert lazy["win_rate"].to_list() == [0.0, 0.5]


def test_wrong_dtype_names_the_role():
    with pytest.raises(EvalframeError, match="role 'outcome'"):
        ef.score(pl.DataFrame({"outcome": [1, 0]}), ["win_rate"])
