"""One row per sample from one row per run."""

from __future__ import annotations

import polars as pl
import pytest

import evalframe as ef
from evalframe import EvalframeError
from evalframe.io.reshape import one_row_per_sample


def test_varying_columns_become_lists_and_constant_ones_stay():
    runs = pl.LazyFrame(
        {
            "model": ["m", "m", "m", "n"],
            "task_id": ["t0", "t1", "t0", "t0"],
            "run": [1, 1, 2, 1],
            "passed": [True, True, False, True],
            "temperature": [0.2, 0.2, 0.2, 0.2],
            "tokens": [None, 3, 5, None],
        }
    )
    out = one_row_per_sample(runs, ["model", "task_id"], lists=["passed"]).collect()
    assert out.schema["temperature"] == pl.Float64
    assert out.rows() == [
        ("m", "t0", [1, 2], [True, False], 0.2, [None, 5]),
        ("m", "t1", [1], [True], 0.2, [3]),
        ("n", "t0", [1], [True], 0.2, [None]),
    ]


def test_one_row_per_run_scores_with_pass_at_k():
    runs = pl.DataFrame(
        {"task_id": ["a"] * 3 + ["b"] * 3, "passed": [True, False, False, True, True, True]}
    )
    scored = ef.score(runs, ["pass@1", "pass@2"], group_by="task_id")
    # hand computation: pass@1 = c/n; pass@2 = 1 - C(n-c, 2)/C(n, 2)
    assert scored["pass@1"].to_list() == [pytest.approx(1 / 3), 1.0]
    assert scored["pass@2"].to_list() == [pytest.approx(1 - 1 / 3), 1.0]


def test_predictions_become_samples_for_majority_voting():
    rows = pl.DataFrame(
        {"id": [1, 1, 1, 2], "prediction": ["4", "5", "4", "7"], "gold": ["4", "4", "4", "8"]}
    )
    scored = ef.score(rows, ["maj@1"], group_by="id")
    assert scored.schema["gold"] == pl.String  # constant within each group
    assert scored["prediction"].to_list() == [["4", "5", "4"], ["7"]]


def test_group_by_names_a_missing_column():
    with pytest.raises(EvalframeError, match=r"group_by=\['nope'\]: the input has no column"):
        one_row_per_sample(pl.LazyFrame({"a": [1]}), "nope")
