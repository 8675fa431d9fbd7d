"""The ``inspect`` layout: Inspect AI logs written by Inspect itself, checked against its reader.

The logs in ``tests/fixtures/harness/inspect`` were written by inspect_ai (``generate.py``
there, with the mock model): every expected value below comes from
``inspect_ai.log.read_eval_log`` of the same file, from Inspect's own ``value_to_float``,
from the ``results`` Inspect wrote into the log, or from the datasets the tasks read.
"""

from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path

import polars as pl
import pytest

import evalframe as ef
from evalframe import EvalframeError
from evalframe.io.adapters import Probe
from evalframe.io.adapters import table as adapter_table
from evalframe.io.adapters.inspect import score_to_float, target_indexes

LOGS = Path(__file__).resolve().parents[2] / "fixtures" / "harness" / "inspect"
ALL = [f"{name}.{ext}" for name in ("mc", "gen", "errors", "empty") for ext in ("eval", "json")]
SCORED = [name for name in ALL if not name.startswith("empty")]


@pytest.fixture(scope="module")
def inspect_log():
    """Inspect's log module (the reference reader)."""
    return pytest.importorskip("inspect_ai.log")


def reference(inspect_log, name: str):
    return inspect_log.read_eval_log(str(LOGS / name), resolve_attachments=True)


def dataset(name: str) -> dict[object, dict]:
    lines = (LOGS / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()
    return {record["id"]: record for record in map(json.loads, lines)}


# -- detection ----------------------------------------------------------------------------


@pytest.mark.parametrize("name", ALL)
def test_each_log_is_recognised(inspect_log, name):
    if name.endswith(".eval"):
        assert adapter_table.by_extension(LOGS / name).name == "inspect"
    else:
        found = adapter_table.detect(Probe(LOGS / name, "json"))
        assert found is not None and found.name == "inspect"
    frame = ef.load(LOGS / name)
    assert {"task", "model", "sample_id", "epoch", "gold", "prediction"} <= set(frame.columns)


def test_listed_as_a_format():
    row = ef.list_formats().filter(pl.col("format") == "inspect")
    assert row.height == 1 and row["level"].item() == "samples"


def test_json_object_with_some_inspect_keys_is_not_a_log(tmp_path):
    # "eval" is not an eval spec: no layout fits, so loading names the file and what it holds
    path = tmp_path / "almost.json"
    path.write_text(json.dumps({"version": 2, "status": "success", "eval": {"task": "t"}}))
    assert adapter_table.detect(Probe(path, "json")) is None
    with pytest.raises(EvalframeError, match="fits no harness layout"):
        ef.load(path)


def test_unknown_status_is_not_a_log(tmp_path):
    log = json.loads((LOGS / "empty.json").read_text(encoding="utf-8"))
    log["status"] = "finished"
    path = tmp_path / "status.json"
    path.write_text(json.dumps(log))
    assert adapter_table.detect(Probe(path, "json")) is None


def test_list_of_records_with_inspect_keys_is_a_plain_table(tmp_path):
    path = tmp_path / "records.json"
    records = [{"version": 2, "status": "success", "eval": {"task": "t", "model": "m"}}]
    path.write_text(json.dumps(records))
    frame = ef.load(path)
    assert frame.columns == ["version", "status", "eval"] and frame.height == 1


def test_forced_format_on_a_plain_table_names_the_file(inspect_log, tmp_path):
    path = tmp_path / "plain.json"
    path.write_text(json.dumps([{"prediction": "a", "gold": "a"}]))
    with pytest.raises(EvalframeError, match=r"plain\.json.*Inspect AI json log"):
        ef.load(path, format="inspect")


def test_broken_eval_archive_names_the_file(inspect_log, tmp_path):
    path = tmp_path / "broken.eval"
    path.write_bytes(b"not a zip archive")
    with pytest.raises(EvalframeError, match=r"broken\.eval.*Inspect AI eval log"):
        ef.load(path)


def test_without_inspect_ai_the_error_says_what_to_install(monkeypatch):
    # a None entry in sys.modules makes the import fail as if the package were absent
    monkeypatch.setitem(sys.modules, "inspect_ai", None)
    monkeypatch.setitem(sys.modules, "inspect_ai.log", None)
    with pytest.raises(EvalframeError, match=r'mc\.eval.*pip install "evalframe\[inspect\]"'):
        ef.load(LOGS / "mc.eval")


@pytest.mark.subprocess
def test_import_evalframe_does_not_import_inspect_ai():
    import subprocess

    # the adapter table imports every adapter module; reading a log imports inspect_ai
    code = (
        "import sys, evalframe; from evalframe.io.adapters import table; table.adapters(); "
        "print('inspect_ai' in sys.modules)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.stdout.strip() == "False", result.stderr


# -- row for row against Inspect's reader ------------------------------------------------------


def _input_text(value) -> str:
    """The input as text: a chat input's last user message (all inputs here are text)."""
    if isinstance(value, str):
        return value
    return next(message for message in reversed(value) if message.role == "user").text


@pytest.mark.parametrize("name", ALL)
def test_rows_match_read_eval_log(inspect_log, name):
    from inspect_ai.scorer import value_to_float

    log = reference(inspect_log, name)
    samples = log.samples or []
    frame = ef.load(LOGS / name)
    assert frame.height == len(samples)
    to_float = value_to_float()
    scorers = [scorer.name for scorer in log.eval.scorers]
    for row, sample in zip(frame.iter_rows(named=True), samples, strict=True):
        assert row["task"] == log.eval.task and row["model"] == log.eval.model
        assert row["log_status"] == log.status == "success"
        assert row["sample_id"] == str(sample.id) and row["epoch"] == sample.epoch
        assert row["input"] == _input_text(sample.input)
        targets = sample.target if isinstance(sample.target, list) else [sample.target]
        assert row["gold"] in (sample.target, targets)
        completion = sample.output.completion if sample.output.choices else None
        assert row["prediction"] == completion
        assert row["choices"] == sample.choices
        assert row["error"] == (sample.error.message if sample.error else None)
        usage = sample.model_usage.get("mockllm/model")
        assert row["usage.input_tokens"] == (usage.input_tokens if usage else None)
        assert row["usage.output_tokens"] == (usage.output_tokens if usage else None)
        assert row["usage.total_tokens"] == (usage.total_tokens if usage else None)
        for key, value in sample.metadata.items():
            got = row[f"metadata.{key}"]
            assert (json.loads(got) if isinstance(value, list) else got) == value
        for scorer in scorers:
            score = (sample.scores or {}).get(scorer)
            if score is None:
                assert row[f"harness.{scorer}"] is None and sample.error is not None
                continue
            assert row[f"harness.{scorer}"] == to_float(score.value)
            raw = score.value if isinstance(score.value, str) else json.dumps(score.value)
            assert row[f"scores.{scorer}.value"] == raw
            assert row[f"scores.{scorer}.answer"] == score.answer
            assert row[f"scores.{scorer}.explanation"] == score.explanation


@pytest.mark.parametrize("ext", ["eval", "json"])
def test_multiple_choice_gold_index_from_the_dataset(inspect_log, ext):
    frame = ef.load(LOGS / f"mc.{ext}")
    records = dataset("mc")
    # q5's target is a list of two letters, so every row holds a list of indexes
    assert frame.schema["gold_index"] == pl.List(pl.Int64)
    for row in frame.iter_rows(named=True):
        target = records[row["sample_id"]]["target"]
        letters = target if isinstance(target, list) else [target]
        assert row["gold_index"] == [ord(letter) - ord("A") for letter in letters]
        assert row["choices"] == records[row["sample_id"]]["choices"]


@pytest.mark.parametrize("ext", ["eval", "json"])
def test_generative_log_columns(inspect_log, ext):
    frame = ef.load(LOGS / f"gen.{ext}")
    assert frame.schema["sample_id"] == pl.String  # integer ids, as text
    assert sorted(set(frame["sample_id"])) == ["1", "2", "3", "4"]
    assert frame.schema["gold"] == pl.List(pl.String)  # sample 2's target is a list
    assert frame.schema["gold_index"] == pl.Null  # no choices
    assert frame.schema["metadata.topic"] == pl.String
    assert frame.schema["metadata.tags"] == pl.String  # lists (and a null): JSON text
    assert sorted(frame["epoch"].unique().to_list()) == [1, 2]


def test_unicode_and_chat_input(inspect_log):
    frame = ef.load(LOGS / "gen.json").filter(pl.col("sample_id") == "3")
    record = dataset("gen")[3]
    assert frame["input"].to_list() == [record["input"][1]["content"]] * 2
    assert frame["gold"].to_list() == [[record["target"]]] * 2
    messages = [json.loads(text) for text in frame["input_messages"]]
    for sent in messages:
        assert [(m["role"], m["content"]) for m in sent] == [
            (m["role"], m["content"]) for m in record["input"]
        ]
    assert json.loads(frame["metadata.tags"][0]) == ["日本語", "capitals"]
    # the mock model's answers (generate.py) are kept exactly
    assert sorted(frame["prediction"].to_list()) == ["日本", "日本です"]
    french = ef.load(LOGS / "mc.eval").filter(pl.col("sample_id") == "q4")
    assert french["input"].to_list() == [dataset("mc")["q4"]["input"]] * 2
    assert french["metadata.subject"].to_list() == ["français"] * 2


# -- errors and empty logs -----------------------------------------------------------------------


@pytest.mark.parametrize("ext", ["eval", "json"])
def test_sample_with_an_error_is_kept_and_flagged(inspect_log, ext):
    log = reference(inspect_log, f"errors.{ext}")
    failed = [sample for sample in log.samples if sample.error is not None]
    assert len(failed) == 1  # generate.py fails the first call for one prompt
    frame = ef.load(LOGS / f"errors.{ext}")
    assert frame.height == len(log.samples) == 8
    flagged = frame.filter(pl.col("error").is_not_null())
    assert flagged.select("sample_id", "epoch").rows() == [(str(failed[0].id), failed[0].epoch)]
    assert flagged["error"].item() == failed[0].error.message
    assert flagged["error_traceback"].item() == failed[0].error.traceback
    assert flagged["prediction"].item() is None
    harness = [
        column for column in frame.columns
        if column.startswith("harness.") and not column.endswith(":missing")
    ]
    assert len(harness) == 4
    assert all(flagged[column].item() is None for column in harness)


@pytest.mark.parametrize("ext", ["eval", "json"])
def test_log_with_no_samples(inspect_log, ext):
    log = reference(inspect_log, f"empty.{ext}")
    assert not log.samples and log.status == "success"  # the .json log has no "samples" key
    frame = ef.load(LOGS / f"empty.{ext}")
    assert frame.height == 0
    for scorer in log.eval.scorers:
        assert frame.schema[f"harness.{scorer.name}"] == pl.Float64


@pytest.mark.parametrize("ext", ["eval", "json"])
def test_log_without_its_samples_is_an_error(inspect_log, ext):
    log = reference(inspect_log, f"unlogged.{ext}")
    assert not log.samples and log.results.completed_samples == 10
    with pytest.raises(EvalframeError, match=r"unlogged\.\w+.*10 completed sample.*no samples"):
        ef.load(LOGS / f"unlogged.{ext}")


def test_logs_of_different_tasks_stack(inspect_log):
    # text and integer ids, list golds and a log without rows, choices and none: one frame
    names = ["mc.eval", "gen.json", "errors.eval", "empty.eval"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        frame = ef.load([LOGS / name for name in names])
    assert frame.group_by("task").len().sort("task").rows() == [("gen", 16), ("mc", 10)]
    assert frame.schema["gold_index"] == pl.List(pl.Int64)
    assert frame.filter(pl.col("task") == "gen")["gold_index"].null_count() == 16


def test_text_gold_beside_list_gold(inspect_log, tmp_path):
    # mc.json with q5's target made one letter: every target is text, so gold is String,
    # and gold_index Int64; stacked with list golds, load leaves them out with a warning
    log = json.loads((LOGS / "mc.json").read_text(encoding="utf-8"))
    for sample in log["samples"]:
        if isinstance(sample["target"], list):
            sample["target"] = sample["target"][0]
    path = tmp_path / "single.json"
    path.write_text(json.dumps(log), encoding="utf-8")
    single = ef.load(path)
    assert single.schema["gold"] == pl.String and single.schema["gold_index"] == pl.Int64
    assert single.filter(pl.col("sample_id") == "q5")["gold_index"].to_list() == [2, 2]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        stacked = ef.load([path, LOGS / "mc.json"])
    assert "gold" not in stacked.columns and "gold_index" not in stacked.columns
    told = " ".join(str(warning.message) for warning in caught)
    assert "column 'gold' is String" in told and "column 'gold_index' is Int64" in told

    # the remedy docs/harnesses/inspect.md gives: one list dtype before stacking
    def as_lists(frame: pl.DataFrame) -> pl.DataFrame:
        scalar = [c for c in ("gold", "gold_index") if frame.schema[c] in (pl.String, pl.Int64)]
        return frame.with_columns(
            pl.when(pl.col(c).is_not_null()).then(pl.concat_list(c)).alias(c) for c in scalar
        )

    paths = [path, LOGS / "mc.json", LOGS / "gen.json"]
    stacked = pl.concat([as_lists(ef.load(p)) for p in paths], how="diagonal")
    assert stacked.filter(pl.col("sample_id") == "q1")["gold"].to_list() == [["A"]] * 4
    assert (
        stacked.filter(pl.col("sample_id") == "q5")["gold_index"].to_list()
        == [[2]] * 2 + [[2, 3]] * 2
    )
    assert stacked.filter(pl.col("task") == "gen")["gold_index"].null_count() == 8


# -- Inspect's metrics from the harness columns ----------------------------------------------


@pytest.mark.parametrize("name", SCORED)
def test_aggregate_reproduces_inspect_results(inspect_log, name):
    """Inspect reduces each sample's epochs to their mean, then takes the mean and the CLT
    standard error over samples: ``stderr="question_mean"`` clustered on ``sample_id``."""
    log = reference(inspect_log, name)
    frame = ef.load(LOGS / name)
    for score in log.results.scores:
        metric = "accuracy" if "accuracy" in score.metrics else "mean"
        table = ef.aggregate(
            frame,
            by="task",
            metrics=[f"harness.{score.name}"],
            stderr="question_mean",
            cluster="sample_id",
        )
        assert table["n_clusters"].item() == score.scored_samples
        assert table["value"].item() == pytest.approx(score.metrics[metric].value, rel=1e-12)
        assert table["stderr"].item() == pytest.approx(score.metrics["stderr"].value, rel=1e-12)


@pytest.mark.parametrize("name", SCORED)
def test_epoch_means_are_inspect_reductions(inspect_log, name):
    log = reference(inspect_log, name)
    frame = ef.load(LOGS / name)
    for reduction in log.reductions:
        column = f"harness.{reduction.scorer}"
        means = dict(frame.group_by("sample_id").agg(pl.col(column).mean()).rows())
        for reduced in reduction.samples:
            assert means[str(reduced.sample_id)] == pytest.approx(float(reduced.value), rel=1e-12)


def test_row_level_stderr_differs_when_epochs_are_unbalanced(inspect_log):
    # In errors.*, sample 4 has one scored epoch, the others two: the mean over rows
    # (5/7 for match) is not Inspect's mean of sample means (0.75), and the clustered
    # standard error of the row mean is not Inspect's standard error.
    log = reference(inspect_log, "errors.eval")
    inspect_match = next(score for score in log.results.scores if score.name == "match")
    table = ef.aggregate(ef.load(LOGS / "errors.eval"), metrics=["harness.match"])
    assert table["value"].item() == pytest.approx(5 / 7, rel=1e-12)
    assert inspect_match.metrics["accuracy"].value == pytest.approx(0.75, rel=1e-12)
    assert table["stderr"].item() != pytest.approx(inspect_match.metrics["stderr"].value)


# -- the score value conversion ---------------------------------------------------------------


CONVERTIBLE = [
    "C",
    "P",
    "I",
    "N",
    True,
    False,
    0,
    3,
    -2.5,
    "yes",
    "No",
    "TRUE",
    "false",
    "1e3",
    "-5",
    " 7 ",
    "0.25",
]


@pytest.mark.parametrize("value", CONVERTIBLE)
def test_score_to_float_is_value_to_float(value):
    inspect_scorer = pytest.importorskip("inspect_ai.scorer")
    assert score_to_float(value) == inspect_scorer.value_to_float()(value)


@pytest.mark.parametrize("value", [float("nan"), "nan", "inf", "c", "maybe", [1.0], {"a": 1}])
def test_score_to_float_is_null_where_inspect_cannot_convert(value):
    # Inspect: NaN stays NaN (its unscored sentinel, left out of metrics); the rest are
    # 0.0 with a logged warning. Here both are null.
    assert score_to_float(value) is None


def test_metadata_kinds():
    from evalframe.io.adapters.inspect import metadata_columns

    frame = pl.DataFrame(
        metadata_columns(
            [
                {"n": 1, "x": 0.5, "ok": True, "mixed": 1, "deep": {"a": [1]}, "big": 2**60},
                {"n": 2, "x": 2, "ok": None, "mixed": "1", "big": 1.5},
                {},
            ]
        )
    )
    assert dict(frame.schema) == {
        "metadata.n": pl.Int64,
        "metadata.x": pl.Float64,
        "metadata.ok": pl.Boolean,
        "metadata.mixed": pl.String,
        "metadata.deep": pl.String,
        "metadata.big": pl.String,
    }
    assert frame.rows() == [
        (1, 0.5, True, "1", '{"a": [1]}', str(2**60)),
        (2, 2.0, None, '"1"', None, "1.5"),
        (None, None, None, None, None, None),
    ]


def test_target_indexes_read_as_the_choice_scorer_reads_them():
    # Inspect's choice() splits each target at commas and spaces, letters one by one,
    # numbers whole ("1" is position 26, after "Z")
    assert target_indexes("AC", 4) == [0, 2]
    assert target_indexes(["B", "D"], 4) == [1, 3]
    assert target_indexes("1", 30) == [26]
    assert target_indexes("E", 4) is None
    assert target_indexes("", 4) is None
