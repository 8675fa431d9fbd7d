"""lighteval details parquet files and results JSON, read and scored against lighteval's numbers.

``tests/fixtures/harness/lighteval/output`` was written by lighteval 0.13.0 itself
(``generate.py`` there: a fixed-answer custom model and lighteval's ``DummyModel`` on local
data): every expected per-sample value is the harness's own ``metric`` column and every
expected aggregate its ``results_*.json``. ``flat/`` holds hand-made files in the older flat
layout (``flat_fixtures.py``, values worked out in its comments).
"""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path

import polars as pl
import pytest

import evalframe as ef
from evalframe import EvalframeError
from evalframe.io.adapters import list_formats

FIXTURES = Path(__file__).parents[2] / "fixtures" / "harness" / "lighteval"
OUTPUT = FIXTURES / "output"
FLAT = FIXTURES / "flat"
ECHO, DUMMY = "evalframe/echo-model", "dummy"
RUNS = {ECHO: ["ef_mc", "ef_gen", "ef_sampled"], DUMMY: ["ef_mc_raw", "ef_gen"]}
STRIP = '(normalizer="strip")'

#: task -> (evalframe request, lighteval's metric key): options as in custom_tasks.py.
PLANS = {
    "ef_mc": [
        ("acc", "acc"),
        ("acc_norm", "acc_norm"),
        ("acc_token", "acc_norm_token"),
        ("mrr", "mrr"),
        ("prob_norm", "normalized_mc_prob"),
    ],
    "ef_mc_raw": [("acc", "acc"), ("acc_norm", "acc_norm"), ("mrr", "mrr")],
    "ef_gen": [
        ("exact_match(strip=true)", "em"),
        ("quasi_exact_match", "qem"),
        ("prefix_exact_match", "pem"),
        ("word_set_f1", "f1"),
    ],
    # lighteval's ExactMatches takes the best of every sample: any of the 3 right = pass@3.
    "ef_sampled": [
        (f"pass@3{STRIP}", "em"),
        (f"maj@3{STRIP}", "maj@n:n=3"),
        (f"pass@1{STRIP}", "pass@k:k=1&n=3"),
        (f"avg@3{STRIP}", "avg@n:n=3"),
    ],
}
#: lighteval 0.13.0 per-sample values that are wrong (tests below; docs/harnesses/lighteval.md).
BUGGY = {"ef_mc": ["recall:k=2", "prob"]}

CASES = [(model, task) for model, tasks in RUNS.items() for task in tasks]


def details(model: str, task: str) -> Path:
    (path,) = (OUTPUT / "details" / model).glob(f"*/details_{task}|0_*.parquet")
    return path


def results_file(model: str) -> Path:
    (path,) = (OUTPUT / "results" / model).glob("results_*.json")
    return path


def results(model: str) -> dict:
    return json.loads(results_file(model).read_text(encoding="utf-8"))["results"]


def close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-15)


def assert_same(values: pl.Series, expected: pl.Series) -> None:
    assert values.null_count() == 0 and expected.null_count() == 0
    pairs = list(zip(values.to_list(), expected.to_list(), strict=True))
    assert all(close(a, b) for a, b in pairs), pairs


def scored(model: str, task: str, requests: list[str]) -> pl.DataFrame:
    return ef.score(ef.load(details(model, task)), metrics=requests)


# ---------------------------------------------------------------- detection and mapping


def test_formats_are_listed():
    formats = list_formats().filter(pl.col("format").str.starts_with("lighteval"))
    assert dict(formats.select("format", "level").iter_rows()) == {
        "lighteval": "samples",
        "lighteval_results": "results",
    }


@pytest.mark.parametrize(("model", "task"), CASES)
def test_details_are_detected_and_keyed(model, task):
    path = details(model, task)
    raw = pl.read_parquet(path)
    frame = ef.load(path)
    assert frame.height == raw.height > 0
    assert frame["task"].unique().to_list() == [f"{task}|0"]
    assert frame["model"].unique().to_list() == [model]
    assert frame["sample_id"].to_list() == [doc["id"] for doc in raw["doc"]]
    assert frame["timestamp"].unique().to_list() == [path.parent.name]
    assert frame["choices"].to_list() == [doc["choices"] for doc in raw["doc"]]
    assert frame["doc.query"].to_list() == [doc["query"] for doc in raw["doc"]]
    # Doc.get_golds(): the choices at as_list(gold_index).
    for row, doc in zip(frame.iter_rows(named=True), raw["doc"], strict=True):
        indices = doc["gold_index"] if isinstance(doc["gold_index"], list) else [doc["gold_index"]]
        assert row["gold_index"] == indices
        assert row["gold"] == [doc["choices"][i] for i in indices]
    assert {name for name in frame.columns if name.startswith("harness.")} == {
        f"harness.{name}" for name in raw["metric"].struct.fields
    }


def test_loglikelihood_columns():
    raw = pl.read_parquet(details(ECHO, "ef_mc"))
    frame = ef.load(details(ECHO, "ef_mc"))
    responses = raw["model_response"].to_list()
    assert frame["choice_logprobs"].to_list() == [r["logprobs"] for r in responses]
    assert frame["choice_token_counts"].to_list() == [
        [len(tokens) for tokens in r["output_tokens"]] for r in responses
    ]
    assert "prediction" not in frame.columns and "unconditioned_logprobs" not in frame.columns
    # The stock DummyModel returns no tokens: no token counts.
    assert "choice_token_counts" not in ef.load(details(DUMMY, "ef_mc_raw")).columns


def test_prediction_is_the_text_lighteval_scores():
    frame = ef.load(details(ECHO, "ef_gen"))
    row = frame.filter(pl.col("doc.query").str.contains("Largest planet")).row(0, named=True)
    assert row["model_response.text"] == ["<think>the biggest one</think>Jupiter"]
    assert row["prediction"] == row["model_response.text_post_processed"][0] == "Jupiter"
    assert frame.schema["prediction"] == pl.String
    unicode = frame.filter(pl.col("doc.query").str.contains("Ὅμηρος")).row(0, named=True)
    assert (unicode["prediction"], unicode["gold"]) == ("Ἰλιάς", ["Odyssey", "The Odyssey"])


def test_several_samples_per_document():
    raw = pl.read_parquet(details(ECHO, "ef_sampled"))
    frame = ef.load(details(ECHO, "ef_sampled"))
    assert frame.schema["prediction"] == pl.List(pl.String)
    assert frame["prediction"].to_list() == [r["text"] for r in raw["model_response"]]
    assert frame["prediction"].list.len().unique().to_list() == [3]


def test_a_run_folder_stacks():
    run = details(ECHO, "ef_mc").parent
    with pytest.warns(UserWarning, match="'prediction'"):
        frame = ef.load(run)
    assert frame.height == 8 + 8 + 6
    assert sorted(frame["task"].unique()) == ["ef_gen|0", "ef_mc|0", "ef_sampled|0"]
    assert frame.schema["gold_index"] == pl.List(pl.Int64)
    assert frame["doc.query"].null_count() == 0
    assert frame["model_response.text"].null_count() == 0


def test_the_output_folder_gives_the_samples():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        frame = ef.load(OUTPUT)
    assert frame.height == 22 + 16
    assert sorted(frame["model"].unique()) == [DUMMY, ECHO]


# ---------------------------------------------------------------- lighteval's own numbers


@pytest.mark.parametrize(("model", "task"), CASES)
def test_per_sample_values_are_reproduced(model, task):
    plan = PLANS[task]
    frame = scored(model, task, [request for request, _ in plan])
    for request, key in plan:
        assert_same(frame[request], frame[f"harness.{key}"].cast(pl.Float64))
    covered = {key for _, key in plan} | set(BUGGY.get(task, []))
    assert covered == {
        name.removeprefix("harness.") for name in frame.columns if "harness." in name
    }


@pytest.mark.parametrize(("model", "task"), CASES)
def test_aggregates_and_stderr_are_reproduced(model, task):
    plan = PLANS[task]
    frame = scored(model, task, [request for request, _ in plan])
    table = ef.aggregate(frame, by=["task"])
    expected = results(model)[f"{task}|0"]
    for request, key in plan:
        row = table.filter(pl.col("metric") == request).row(0, named=True)
        assert row["n"] == frame.height
        assert close(row["value"], expected[key]), (request, row["value"], expected[key])
        # lighteval's mean_stderr: sample standard deviation (n - 1) / sqrt(n).
        assert close(row["stderr"], expected[f"{key}_stderr"]), (request, row["stderr"])


def test_recall_at_2_is_lightevals_recall_at_1():
    """lighteval 0.13.0 parametrises ``recall`` by setting ``k`` on ``Recall``, which reads
    ``recall_depth`` (set to 1 by ``Metrics.recall_at_k``): ``recall:k=2`` is recall@1."""
    frame = scored(ECHO, "ef_mc", ["recall@1", "recall@2"])
    assert_same(frame["recall@1"], frame["harness.recall:k=2"].cast(pl.Float64))
    # recall@2 by hand: is a gold among the two highest log-probabilities?
    by_hand = [
        float(any(i in golds for i in sorted(range(len(lps)), key=lambda i: -lps[i])[:2]))
        for lps, golds in zip(frame["choice_logprobs"], frame["gold_index"], strict=True)
    ]
    assert frame["recall@2"].to_list() == by_hand
    assert by_hand != frame["harness.recall:k=2"].cast(pl.Float64).to_list()
    table = ef.aggregate(frame, by=["task"], metrics=["recall@1"])
    assert close(table["value"][0], results(ECHO)["ef_mc|0"]["recall:k=2"])
    assert close(table["stderr"][0], results(ECHO)["ef_mc|0"]["recall:k=2_stderr"])


def test_prob_is_the_gold_probability():
    """lighteval 0.13.0 ``Probability`` returns ``max(exp(logprobs))`` over every choice,
    never looking at the gold; evalframe's ``prob`` is the gold's probability."""
    frame = scored(ECHO, "ef_mc", ["prob"])
    lps, golds = frame["choice_logprobs"].to_list(), frame["gold_index"].to_list()
    lighteval = [max(math.exp(lp) for lp in row) for row in lps]
    assert_same(frame["harness.prob"], pl.Series(lighteval))
    gold = [max(math.exp(row[i]) for i in index) for row, index in zip(lps, golds, strict=True)]
    assert_same(frame["prob"], pl.Series(gold))
    assert sum(not close(a, b) for a, b in zip(gold, lighteval, strict=True)) >= 6
    table = ef.aggregate(frame, by=["task"], metrics=["harness.prob"])
    assert close(table["value"][0], results(ECHO)["ef_mc|0"]["prob"])
    assert close(table["stderr"][0], results(ECHO)["ef_mc|0"]["prob_stderr"])


# ---------------------------------------------------------------- results json


def test_results_rows():
    table = ef.load(results_file(ECHO), format="lighteval_results")
    expected = results(ECHO)
    keys = [(t, m) for t, metrics in expected.items() for m in metrics if not m.endswith("_stderr")]
    assert list(zip(table["task"], table["metric"], strict=True)) == keys
    for row in table.iter_rows(named=True):
        assert row["value"] == expected[row["task"]][row["metric"]]
        assert row["stderr"] == expected[row["task"]][f"{row['metric']}_stderr"]
        assert row["is_group"] == (row["task"] == "all")
    assert table["model"].unique().to_list() == [ECHO]
    first = table.row(0, named=True)
    assert (first["num_fewshots"], first["version"], first["hf_subset"]) == (0, "0", "gen")
    assert first["timestamp"] == results_file(ECHO).stem.removeprefix("results_")


def test_the_all_row_averages_values_and_stderrs():
    table = ef.load(results_file(ECHO), format="lighteval_results")
    tasks = (
        table.filter(~pl.col("is_group")).group_by("metric").agg(pl.col("value", "stderr").mean())
    )
    summary = table.filter(pl.col("task") == "all").join(tasks, on="metric", suffix="_mean")
    # 4 ef_gen + 4 ef_sampled + 7 ef_mc metric names, "em" in two tasks: 14, "em" averaged.
    assert summary.height == tasks.height == 14
    for row in summary.iter_rows(named=True):
        assert close(row["value"], row["value_mean"]) and close(row["stderr"], row["stderr_mean"])


def test_results_are_detected():
    table = ef.load(results_file(ECHO))
    assert "is_group" in table.columns and "filter" not in table.columns
    assert table.height == len(ef.load(results_file(ECHO), format="lighteval_results"))


# ---------------------------------------------------------------- the flat layout


def test_flat_text_layout():
    (path,) = (FLAT / "hub").glob("*/details_*.parquet")
    raw = pl.read_parquet(path)
    assert all(dtype == pl.String for dtype in raw.schema.values())
    frame = ef.score(ef.load(path), metrics=["acc", "acc_norm"])
    assert frame["task"].unique().to_list() == ["harness|arc:challenge|25"]
    assert frame["model"].unique().to_list() == ["open-llm-demo/demo-7b"]  # results json
    assert frame["sample_id"].to_list() == ["0", "1", "2", "3"]
    assert frame["choice_logprobs"].to_list() == [
        [-1.5, -4.25, -3.0], [-2.0, -2.4, -1.9], [-0.5, -0.75], [-3.0, -1.0, -2.0],
    ]  # fmt: skip
    assert frame["gold"].to_list() == [[" Paris"], [" Bern"], [" 🙂"], [" two"]]
    assert frame["predictions"].to_list() == raw["predictions"].to_list()  # kept as written
    assert_same(frame["acc"], frame["harness.acc"].cast(pl.Float64))
    assert_same(frame["acc_norm"], frame["harness.acc_norm"].cast(pl.Float64))
    table = ef.aggregate(frame, by=["task"])
    expected = json.loads(next((FLAT / "hub").glob("results_*.json")).read_text())["results"]
    for row in table.iter_rows(named=True):
        assert close(row["value"], expected["harness|arc:challenge|25"][row["metric"]])
        assert close(row["stderr"], expected["harness|arc:challenge|25"][f"{row['metric']}_stderr"])


def test_flat_typed_layout():
    folder = FLAT / "details" / "demo-org" / "demo-1b"
    (gsm8k,) = folder.glob("*/details_lighteval|gsm8k|0_*.parquet")
    frame = ef.score(ef.load(gsm8k), metrics=["quasi_exact_match_gsm8k"])
    assert frame["model"].unique().to_list() == ["demo-org/demo-1b"]
    assert frame.schema["prediction"] == pl.String
    assert frame["gold"].to_list() == [["#### 72"], ["#### 1,000"], ["#### 5"]]
    assert_same(frame["quasi_exact_match_gsm8k"], frame["harness.qem"])
    (maj,) = folder.glob("*/details_lighteval|gsm8k_maj|0_*.parquet")
    frame = ef.score(ef.load(maj), metrics=['maj@3(normalizer="gsm8k")'])
    assert frame.schema["prediction"] == pl.List(pl.String)
    assert_same(frame['maj@3(normalizer="gsm8k")'], frame["harness.maj@3"])


def test_flat_text_that_is_not_a_literal(tmp_path):
    (path,) = (FLAT / "hub").glob("*/details_*.parquet")
    broken = pl.read_parquet(path).with_columns(
        pl.when(pl.int_range(pl.len()) == 2)
        .then(pl.lit("[(-1.0, oops)]"))
        .otherwise(pl.col("predictions"))
        .alias("predictions")
    )
    target = tmp_path / path.name
    broken.write_parquet(target)
    with pytest.raises(EvalframeError, match=r"column 'predictions' row 2 .*oops"):
        ef.load(target)


# ---------------------------------------------------------------- edges and errors


def test_zero_rows(tmp_path):
    path = details(ECHO, "ef_mc")
    folder = tmp_path / "details" / "org" / "empty" / path.parent.name
    folder.mkdir(parents=True)
    pl.read_parquet(path).head(0).write_parquet(folder / path.name)
    frame = ef.load(folder / path.name)
    assert frame.height == 0
    assert {"task", "model", "sample_id", "gold", "gold_index", "harness.acc"} <= set(frame.columns)
    assert frame.schema["gold"] == pl.List(pl.String)
    assert ef.score(frame, metrics=["acc_norm"]).height == 0


def test_zero_rows_flat(tmp_path):
    (path,) = (FLAT / "hub").glob("*/details_*.parquet")
    pl.read_parquet(path).head(0).write_parquet(tmp_path / path.name)
    frame = ef.load(tmp_path / path.name)
    assert frame.height == 0
    assert frame.schema["gold_index"] == pl.List(pl.Int64)
    assert {"task", "sample_id", "gold", "choices", "example"} <= set(frame.columns)


def test_mixed_flat_types_are_refused(tmp_path):
    (path,) = (FLAT / "details" / "demo-org").glob("*/*/details_lighteval|gsm8k|0_*.parquet")
    mixed = pl.read_parquet(path).with_columns(pl.col("gold").list.first())
    mixed.write_parquet(tmp_path / path.name)
    with pytest.raises(EvalframeError, match=r"columns \{'gold': String\} are not lists"):
        ef.load(tmp_path / path.name)


def test_missing_columns_under_the_format(tmp_path):
    path = tmp_path / "details_x|0_2025-01-02T10-20-30.parquet"
    pl.DataFrame({"doc": ["q"], "answer": ["a"]}).write_parquet(path)
    with pytest.raises(EvalframeError, match=r"details_x\|0.*'model_response', 'metric'"):
        ef.load(path, format="lighteval")
    doc = {"query": "q", "choices": ["a"], "id": "0"}  # no gold_index
    pl.DataFrame(
        {
            "doc": [doc],
            "model_response": [{"text": ["a"], "logprobs": [-1.0]}],
            "metric": [{"em": 1}],
        }
    ).write_parquet(path)
    with pytest.raises(EvalframeError, match=r"column 'doc' has no field\(s\) \['gold_index'\]"):
        ef.load(path, format="lighteval")
    results = tmp_path / "results_2025-01-02T10-20-30.json"
    results.write_text(json.dumps({"config_general": {"model_name": "m"}}))
    with pytest.raises(EvalframeError, match=r"results_2025.*key 'results' is missing"):
        ef.load(results, format="lighteval_results")


def test_plain_tables_are_not_lighteval(tmp_path):
    path = tmp_path / "details_mine_2025-01-02T10-20-30.parquet"
    pl.DataFrame(
        {
            "prediction": ["a"],
            "choices": [["a", "b"]],
            "gold_index": [0],
            "gold": [["a"]],
            "metrics": [{"acc": 1}],
            "doc": ["not a struct"],
        }
    ).write_parquet(path)
    assert ef.load(path).columns == [
        "prediction",
        "choices",
        "gold_index",
        "gold",
        "metrics",
        "doc",
    ]


def test_a_file_saved_by_evalframe_is_read_back_as_it_is(tmp_path):
    raw = pl.read_parquet(details(ECHO, "ef_mc"))
    assert "doc" in raw.columns and "doc" not in ef.load(details(ECHO, "ef_mc")).columns
    out = tmp_path / "copy.parquet"
    ef.save(raw, out)  # records evalframe's version: never taken for a harness layout again
    assert ef.load(out).equals(raw)
    raw.write_parquet(tmp_path / "plain.parquet")
    assert "doc" not in ef.load(tmp_path / "plain.parquet").columns
