"""group_tasks(): means of subtasks with their standard errors; lm-eval's pooled form."""

from __future__ import annotations

import math
import re

import numpy as np
import polars as pl
import pytest

import evalframe as ef
from evalframe import EvalframeError, group_tasks

TABLE = pl.DataFrame(
    {
        "model": ["m"] * 3 + ["k"] * 3,
        "task": ["x", "y", "z"] * 2,
        "metric": ["acc"] * 6,
        "n": [10, 30, 5, 10, 30, 5],
        "value": [0.4, 0.8, 0.6, 0.5, 0.5, 0.5],
        "stderr": [0.16, 0.07, 0.24, 0.1, 0.2, 0.3],
    }
)
GROUPS = {"xyz": ["x", "y", "z"]}


def rows(table: pl.DataFrame) -> dict:
    return {(r["model"], r["method"]): r for r in table.iter_rows(named=True)}


def test_hand_computed_three_methods():
    out = group_tasks(TABLE, GROUPS, by="model", method=["mean", "weighted", "pooled"])
    assert out.height == 6
    got = rows(out)
    mean, weighted, pooled = got[("m", "mean")], got[("m", "weighted")], got[("m", "pooled")]
    assert mean["value"] == pytest.approx((0.4 + 0.8 + 0.6) / 3, rel=1e-15)
    assert mean["stderr"] == pytest.approx(math.sqrt(0.16**2 + 0.07**2 + 0.24**2) / 3, rel=1e-14)
    assert weighted["value"] == pytest.approx((4 + 24 + 3) / 45, rel=1e-15)
    assert weighted["stderr"] == pytest.approx(
        math.sqrt((10 / 45) ** 2 * 0.16**2 + (30 / 45) ** 2 * 0.07**2 + (5 / 45) ** 2 * 0.24**2),
        rel=1e-14,
    )
    assert pooled["value"] == weighted["value"]
    pooled_var = (9 * 0.16**2 * 10 + 29 * 0.07**2 * 30 + 4 * 0.24**2 * 5) / (45 - 3)
    assert pooled["stderr"] == pytest.approx(math.sqrt(pooled_var / 45), rel=1e-14)
    for row in (mean, weighted, pooled):
        assert (row["task"], row["metric"], row["n"], row["n_tasks"]) == ("xyz", "acc", 45, 3)
        z = 1.959963984540054
        assert row["ci_low"] == pytest.approx(row["value"] - z * row["stderr"], rel=1e-12)
        assert row["ci_high"] == pytest.approx(row["value"] + z * row["stderr"], rel=1e-12)
    # rows follow the table's order of keys, methods in the order asked
    assert out.select("model", "method").rows() == [
        ("m", "mean"), ("m", "weighted"), ("m", "pooled"),
        ("k", "mean"), ("k", "weighted"), ("k", "pooled"),
    ]


def test_never_the_average_of_the_standard_errors():
    # 57 subtasks of 100 questions at 70%: the SE of the macro mean is the SD of it over
    # repeated evaluations, and that is sqrt(sum se_i**2) / K, not mean(se_i)
    rng = np.random.default_rng(0)
    k, n, replicates = 57, 100, 2000
    correct = rng.random((replicates, k, n)) < 0.7
    means = correct.mean(axis=2)
    macro_sd = float(means.mean(axis=1).std())
    se = np.sqrt(0.7 * 0.3 / n)
    table = pl.DataFrame(
        {"task": [f"t{i}" for i in range(k)], "metric": "acc", "n": n, "value": 0.7, "stderr": se}
    )
    out = group_tasks(table, {"g": [f"t{i}" for i in range(k)]}, method="mean")
    assert out["stderr"][0] == pytest.approx(macro_sd, rel=0.05)
    assert se / macro_sd > 7  # the average of the SEs: 7.5 times too wide


def test_matches_lm_eval_group_aggregation():
    metrics = pytest.importorskip("lm_eval.api.metrics")
    rng = np.random.default_rng(57)
    k = 57
    sizes = rng.integers(100, 1600, (2, 2, k))
    values = rng.uniform(0.2, 0.9, (2, 2, k))
    stderrs = np.sqrt(values * (1 - values) / (sizes - 1))
    table = pl.DataFrame(
        {
            "model": np.repeat(["a", "b"], 2 * k),
            "metric": np.tile(np.repeat(["acc", "acc_norm"], k), 2),
            "task": np.tile([f"mmlu_{i}" for i in range(k)], 4),
            "n": sizes.ravel(),
            "value": values.ravel(),
            "stderr": stderrs.ravel(),
        }
    )
    subtasks = [f"mmlu_{i}" for i in range(k)]
    out = group_tasks(table, {"mmlu": subtasks}, by="model", method=["mean", "pooled"])
    for i, model in enumerate(["a", "b"]):
        for j, metric in enumerate(["acc", "acc_norm"]):
            v = values[i, j].tolist()
            s = stderrs[i, j].tolist()
            n = sizes[i, j].tolist()
            picked = out.filter((pl.col("model") == model) & (pl.col("metric") == metric))
            got = dict(zip(picked["method"], picked.iter_rows(named=True), strict=True))
            # weight_by_size: true (lm-eval's default for MMLU)
            assert got["pooled"]["value"] == pytest.approx(
                metrics.aggregate_subtask_metrics(v, n, weight_by_size=True), rel=1e-12
            )
            assert got["pooled"]["stderr"] == pytest.approx(
                float(metrics.pooled_sample_stderr(s, n)), rel=1e-12
            )
            # weight_by_size: false
            assert got["mean"]["value"] == pytest.approx(
                metrics.aggregate_subtask_metrics(v, n, weight_by_size=False), rel=1e-12
            )
            assert got["mean"]["stderr"] == pytest.approx(
                float(metrics.unweighted_mean_stderr(s)), rel=1e-12
            )


def scored_frame() -> pl.DataFrame:
    rng = np.random.default_rng(5)
    sizes = {"mmlu_a": 40, "mmlu_b": 90, "mmlu_c": 15, "gsm8k": 30}
    parts = [
        pl.DataFrame(
            {
                "model": np.repeat(["m1", "m2"], size),
                "task": task,
                "acc": (rng.random(2 * size) < 0.6).astype(np.float64),
            }
        )
        for task, size in sizes.items()
    ]
    return pl.concat(parts)


def test_from_aggregate_concatenates_and_signs():
    scored = scored_frame()
    table = ef.aggregate(scored, by=["model", "task"], metrics=["acc"])
    groups = {"mmlu": ["mmlu_a", "mmlu_b", "mmlu_c"]}
    out = group_tasks(table, groups, by=["model"], method=["mean", "weighted"])
    assert out.columns == [*table.columns, "n_tasks", "method"]
    assert out.schema["n"] == table.schema["n"] and out.schema["n_null"] == table.schema["n_null"]
    both = pl.concat([table, out], how="diagonal_relaxed")
    assert both.height == table.height + 4
    row = out.filter((pl.col("model") == "m1") & (pl.col("method") == "weighted")).row(
        0, named=True
    )
    # the subtasks' signature, its interval pair naming the group's (normal) interval
    subtask_signature = re.sub(r"\|ci:[^|]*", "|ci:normal-0.95", table["signature"][0])
    assert row["signature"] == f"group:mmlu|method:weighted|{subtask_signature}"
    assert row["signature"].split("|")[-1].startswith("version:")
    # for a mean metric the size-weighted mean is the mean over all the group's samples
    members = scored.filter(pl.col("task").is_in(groups["mmlu"]) & (pl.col("model") == "m1"))
    assert row["value"] == pytest.approx(members["acc"].mean(), rel=1e-12)
    assert row["n"] == members.height == 145 and row["n_tasks"] == 3


def test_interval_level_follows_the_subtasks():
    table = ef.aggregate(scored_frame(), by=["model", "task"], metrics=["acc"], ci=0.9)
    out = group_tasks(table, {"mmlu": ["mmlu_a", "mmlu_b"]}, by="model", method="mean")
    row = out.row(0, named=True)
    z90 = 1.6448536269514722
    assert row["ci_high"] == pytest.approx(row["value"] + z90 * row["stderr"], rel=1e-12)
    assert "|ci:normal-0.9|" in row["signature"]
    again = group_tasks(table, {"mmlu": ["mmlu_a", "mmlu_b"]}, by="model", method="mean", ci=0.95)
    assert "|ci:normal-0.95|" in again["signature"][0]


def test_missing_subtasks_error_or_skip():
    partial = TABLE.filter(~((pl.col("model") == "k") & (pl.col("task") == "z")))
    groups = {"xyzw": ["x", "y", "z", "w"]}
    with pytest.raises(EvalframeError, match=r"group 'xyzw' misses 3 subtask row\(s\)") as info:
        group_tasks(partial, groups, by="model")
    assert "['w', 'z']" in str(info.value) and "missing='skip'" in str(info.value)
    out = group_tasks(partial, groups, by="model", missing="skip", method="mean")
    assert dict(zip(out["model"], out["n_tasks"], strict=True)) == {"m": 3, "k": 2}
    # a null value (a subtask with no scores, keep_empty=True) is a missing subtask
    nulled = TABLE.with_columns(
        value=pl.when(pl.col("task") == "y").then(None).otherwise(pl.col("value"))
    )
    with pytest.raises(EvalframeError, match="misses 2"):
        group_tasks(nulled, GROUPS, by="model")


def test_null_stderr_propagates_and_groups_are_independent():
    table = TABLE.with_columns(
        stderr=pl.when((pl.col("model") == "k") & (pl.col("task") == "x"))
        .then(None)
        .otherwise(pl.col("stderr"))
    )
    groups = {"xy": ["x", "y"], "yz": ["y", "z"]}
    out = group_tasks(table, groups, by="model", method="mean")
    assert out.select("task", "model").rows() == [
        ("xy", "m"), ("xy", "k"), ("yz", "m"), ("yz", "k"),
    ]
    stderr = dict(zip(zip(out["task"], out["model"], strict=True), out["stderr"], strict=True))
    assert stderr[("xy", "k")] is None
    assert stderr[("yz", "k")] == pytest.approx(math.sqrt(0.2**2 + 0.3**2) / 2, rel=1e-14)
    # pooled needs N > K
    ones = pl.DataFrame({"task": ["a", "b"], "metric": "acc", "n": [1, 1], "value": [1.0, 0.0],
                         "stderr": [0.0, 0.0]})
    assert group_tasks(ones, {"g": ["a", "b"]}, method="pooled")["stderr"][0] is None


def test_nested_groups():
    first = group_tasks(TABLE, {"xy": ["x", "y"]}, by="model", method="mean")
    both = pl.concat([TABLE, first.drop("n_tasks", "method")], how="diagonal_relaxed")
    nested = group_tasks(both, {"all": ["xy", "z"]}, by="model", method="mean")
    m = nested.filter(pl.col("model") == "m").row(0, named=True)
    assert m["value"] == pytest.approx(((0.4 + 0.8) / 2 + 0.6) / 2, rel=1e-15)
    assert m["signature"] == f"group:all|method:mean|group:xy|method:mean|version:{ef.__version__}"
    # a table that already holds group rows (n_tasks, method) is accepted as well
    again = group_tasks(pl.concat([TABLE, first], how="diagonal_relaxed"), {"all": ["xy", "z"]},
                        by="model", method="mean")
    assert again.columns == nested.columns
    assert again["value"].to_list() == nested["value"].to_list()


def test_other_columns_are_summed_or_kept_where_the_subtasks_agree():
    table = TABLE.with_columns(
        n_missing=pl.lit(1, pl.UInt32), n_clusters=pl.col("n").cast(pl.UInt32), k=pl.lit(10),
        note=pl.col("task"),
    )
    out = group_tasks(table, GROUPS, by="model", method="mean")
    row = out.row(0, named=True)
    assert (row["n_missing"], row["n_clusters"], row["k"], row["note"]) == (3, 45, 10, None)
    assert out.schema["n_missing"] == pl.UInt32 and out.columns[: table.width] == table.columns


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"groups": {}}, "expected a mapping"),
        ({"groups": {"g": []}}, "non-empty list"),
        ({"groups": {"g": "x"}}, "non-empty list"),
        ({"groups": {"g": ["x", "x"]}}, "more than once"),
        ({"method": "median"}, "method="),
        ({"missing": "ignore"}, "missing="),
        ({"by": "task"}, "includes the task column"),
        ({"by": None}, "share their"),
        ({"by": "model", "task": "subtask"}, r"no column\(s\) \['subtask'\]"),
        ({"ci": 1.5}, "ci="),
    ],
)
def test_errors(kwargs, message):
    arguments = {"groups": GROUPS, "by": "model", **kwargs}
    with pytest.raises(EvalframeError, match=message):
        group_tasks(TABLE, **arguments)


def test_differing_subtask_signatures_are_an_error():
    table = TABLE.with_columns(
        signature=pl.when(pl.col("task") == "x")
        .then(pl.lit("metric:acc|stderr:sem|version:1"))
        .otherwise(pl.lit("metric:acc|stderr:bootstrap|version:1"))
    )
    with pytest.raises(EvalframeError, match="aggregated differently"):
        group_tasks(table, GROUPS, by="model")


def test_group_intervals_stay_inside_the_metrics_bounds_and_names_are_distinct():
    import evalframe as ef

    # 1 right of 40: value 0.025, SE ~0.025: the normal interval would start below 0
    runs = pl.DataFrame({"task": ["a"] * 20 + ["b"] * 20, "exact_match": [1.0] + [0.0] * 39})
    table = ef.aggregate(runs, by="task", metrics=["exact_match"])
    row = ef.group_tasks(table, {"g": ["a", "b"]}).row(0, named=True)
    assert row["ci_low"] == 0.0 and row["ci_high"] <= 1.0
    with pytest.raises(EvalframeError, match=r"group name\(s\) \['a'\] are also tasks"):
        ef.group_tasks(table, {"a": ["a", "b"]})
