"""aggregate(): means, standard errors, intervals, nulls, groups."""

from __future__ import annotations

import math

import polars as pl
import pytest

from evalframe import EvalframeError, aggregate

SCORED = pl.DataFrame(
    {
        "model": ["a", "a", "a", "a", "b", "b"],
        "task": ["t", "t", "t", "u", "t", "t"],
        "squad_em": [1.0, 0.0, None, 1.0, 0.0, 0.0],
        "squad_f1": [1.0, 0.5, 0.25, None, None, None],
    }
)


def test_by_groups_hand_computed():
    table = aggregate(SCORED, by=["model", "task"])
    assert table.columns == [
        "model", "task", "metric", "n", "n_null", "value", "stderr", "ci_low", "ci_high",
        "signature",
    ]
    rows = {(r["model"], r["task"], r["metric"]): r for r in table.iter_rows(named=True)}
    # (a, t, squad_em): scores 1, 0 (one null) -> mean 0.5; sample sd = sqrt(0.5); se = sd/sqrt(2)
    em = rows[("a", "t", "squad_em")]
    assert (em["n"], em["n_null"]) == (2, 1)
    assert em["value"] == 0.5
    assert em["stderr"] == pytest.approx(math.sqrt(0.5) / math.sqrt(2), rel=1e-15)
    z = 1.959963984540054  # scipy.stats.norm.ppf(0.975)
    assert em["ci_low"] == pytest.approx(0.5 - z * 0.5, rel=1e-12)
    assert em["ci_high"] == pytest.approx(0.5 + z * 0.5, rel=1e-12)
    # (a, t, squad_f1): 1, .5, .25 -> mean 7/12; deviations 5/12, -1/12, -4/12;
    # sum of squares 42/144 -> var 21/144 -> se = sqrt(21/144/3)
    f1 = rows[("a", "t", "squad_f1")]
    assert f1["value"] == pytest.approx(7 / 12, rel=1e-15)
    assert f1["stderr"] == pytest.approx(math.sqrt(21 / 144 / 3), rel=1e-14)
    # one score: no spread to estimate
    single = rows[("a", "u", "squad_em")]
    assert single["n"] == 1 and single["stderr"] is None and single["ci_low"] is None
    # groups with no scores at all are left out by default
    assert ("b", "t", "squad_f1") not in rows and ("a", "u", "squad_f1") not in rows


def test_keep_empty_keeps_all_null_groups():
    table = aggregate(SCORED, by=["model", "task"], keep_empty=True)
    row = table.filter((pl.col("model") == "b") & (pl.col("metric") == "squad_f1")).row(
        0, named=True
    )
    assert (row["n"], row["n_null"], row["value"]) == (0, 2, None)


def test_no_grouping_and_metric_selection():
    table = aggregate(SCORED, metrics=["squad_em"])
    assert table.columns[0] == "metric"
    assert table["n"].to_list() == [5] and table["value"].to_list() == [2 / 5]


def test_ci_level_changes_interval():
    wide = aggregate(SCORED, metrics=["squad_em"], ci=0.99).row(0, named=True)
    narrow = aggregate(SCORED, metrics=["squad_em"], ci=0.5).row(0, named=True)
    assert wide["ci_high"] - wide["ci_low"] > narrow["ci_high"] - narrow["ci_low"]
    assert "ci:normal-0.99" in wide["signature"]


def test_lazy_input_and_metric_detection_by_name():
    frame = SCORED.with_columns(pl.lit(3.0).alias("not_a_metric"))
    table = aggregate(frame.lazy(), by="model")
    assert set(table["metric"]) == {"squad_em", "squad_f1"}


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"by": ["nope"]}, "cannot group by"),
        ({"metrics": ["nope"]}, "not found"),
        ({"metrics": ["model"]}, "expected numeric"),
        ({"ci": 1.0}, "strictly between"),
    ],
)
def test_errors(kwargs, message):
    with pytest.raises(EvalframeError, match=message):
        aggregate(SCORED, **kwargs)


def test_nothing_to_aggregate():
    with pytest.raises(EvalframeError, match="no metric columns"):
        aggregate(SCORED.select("model"))
