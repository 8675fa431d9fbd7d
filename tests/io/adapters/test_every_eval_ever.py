"""Every Eval Ever: reading instance-level and aggregate records, writing them with ef.save.

The proof that written records are Every Eval Ever records is the ``every-eval-ever`` package
itself: its pydantic validator (``validate_instance_file``, ``validate_aggregate``, with the
datastore's semantic checks of a linked pair) and its bundled JSON schemas (``jsonschema``).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import polars as pl
import pytest

import evalframe as ef
from evalframe import EvalframeError
from evalframe.io.adapters._probe import Probe
from evalframe.io.adapters.table import detect

UUID = "1b4e28ba-2fa1-4d3b-a3f5-ef19b5a7633b"
STAMP = "1700000000"
SOURCE = {
    "source_metadata.source_organization_name": "Lab ünï",
    "source_metadata.evaluator_relationship": "third_party",
}


def _validator():
    return pytest.importorskip("every_eval_ever.validator.validation_core")


def _check_instances(path: Path) -> None:
    """Every line valid for the package's pydantic model and its JSON schema."""
    jsonschema = pytest.importorskip("jsonschema")
    from every_eval_ever.schema import schema_json

    report = _validator().validate_instance_file(path)
    assert report.valid, report.errors
    schema = schema_json("instance_level_eval.schema.json")
    for line in path.read_text(encoding="utf-8").splitlines():
        jsonschema.validate(json.loads(line), schema)


def _check_aggregate(path: Path) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    from every_eval_ever.schema import schema_json

    validation = _validator()
    report = validation.validate_aggregate(path)
    assert report.valid, report.errors
    record = json.loads(path.read_text(encoding="utf-8"))
    jsonschema.validate(record, schema_json("eval.schema.json"))
    assert validation.check_score_metadata(record) == []
    assert validation.check_model_deployment(record) == []


def _nasty() -> pl.DataFrame:
    """Unicode (accents, CJK, emoji, right-to-left, combining marks, a line break), a missing
    answer, an empty answer, a null gold, alternatives of a gold, null extra values."""
    return pl.DataFrame(
        {
            "model": ["org/模型-7b"] * 5,
            "task": ["qa ü"] * 5,
            "sample_id": ["q1", "q2", "q3", "q4", "q5"],
            "prediction": ["Zürich", None, "東京 🗼", "", "שלום\nе́"],
            "gold": [["Zürich", "Zurich"], ["Paris"], ["東京"], None, ["שלום\nе́"]],
            "subject": ["geo", "geo", None, "misc", "ling"],
            "difficulty": [1, 2, None, 3, 4],
        }
    )


def _scored(frame: pl.DataFrame) -> pl.DataFrame:
    scored = ef.score(frame, metrics=["exact_match"])
    # a missing answer or a null gold has no score: the writer needs one (0.0, as aggregate's
    # default missing="wrong" counts it)
    return scored.with_columns(pl.col("exact_match").fill_null(0.0))


# ---------------------------------------------------------------- writing instance records


def test_instance_records_validate_and_read_back(tmp_path):
    scored = _scored(_nasty())
    # exact match by hand: q1 "Zürich" in its golds -> 1; q2 missing -> 0 (filled);
    # q3 "東京 🗼" != "東京" -> 0; q4 null gold -> 0 (filled); q5 identical -> 1
    assert scored["exact_match"].to_list() == [1.0, 0.0, 0.0, 0.0, 1.0]
    path = tmp_path / f"{UUID}_samples.jsonl"
    ef.save(scored, path, format="every_eval_ever", metadata={"retrieved_timestamp": STAMP})
    _check_instances(path)
    assert len(path.read_text(encoding="utf-8").splitlines()) == 5  # 5 rows x 1 score

    back = ef.load(path)
    assert back["sample_id"].to_list() == ["q1", "q2", "q3", "q4", "q5"]
    assert back["model"].to_list() == ["org/模型-7b"] * 5
    assert back["task"].to_list() == ["qa ü"] * 5
    assert back["prediction"].to_list() == ["Zürich", None, "東京 🗼", "", "שלום\nе́"]
    assert back["gold"].to_list() == [["Zürich", "Zurich"], ["Paris"], ["東京"], None, ["שלום\nе́"]]
    assert back["harness.exact_match"].to_list() == [1.0, 0.0, 0.0, 0.0, 1.0]
    assert back["harness.exact_match.is_correct"].to_list() == [True, False, False, False, True]
    assert back["evaluation_id"].unique().to_list() == [f"qa ü/org/模型-7b/{STAMP}"]
    # other columns are kept as the record's metadata, as text; nulls left out
    assert back["metadata"].struct.field("subject").to_list() == [
        "geo",
        "geo",
        None,
        "misc",
        "ling",
    ]
    assert back["metadata"].struct.field("difficulty").to_list() == ["1", "2", None, "3", "4"]


def test_rescoring_what_was_read_gives_the_written_scores(tmp_path):
    scored = _scored(_nasty())
    path = tmp_path / f"{UUID}_samples.jsonl"
    ef.save(scored, path, format="every_eval_ever", metadata={"retrieved_timestamp": STAMP})
    again = _scored(ef.load(path).select("sample_id", "prediction", "gold"))
    assert again["exact_match"].to_list() == scored["exact_match"].to_list()


def test_two_scores_are_two_records_of_one_row(tmp_path):
    frame = pl.DataFrame(
        {
            "model": ["m", "m"],
            "task": ["t", "t"],
            "sample_id": [0, 1],
            "prediction": ["the cat", "a dog"],
            "gold": ["cat", "a dog"],
        }
    )
    scored = ef.score(frame, metrics=["exact_match", "squad_f1"])
    path = tmp_path / f"{UUID}_samples.jsonl"
    ef.save(scored, path, format="every_eval_ever", metadata={"evaluation_id": "run-1"})
    _check_instances(path)
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert [(line["sample_id"], line["evaluation_result_id"]) for line in lines] == [
        ("0", "exact_match"),
        ("0", "squad_f1"),
        ("1", "exact_match"),
        ("1", "squad_f1"),
    ]
    back = ef.load(path)
    assert back.height == 2
    # squad_f1 by hand: "the cat" vs "cat" normalise to "cat" and "cat" (articles dropped) -> 1.0;
    # exact match of the raw strings: "the cat" != "cat" -> 0.0; "a dog" == "a dog" -> 1.0
    assert back["harness.exact_match"].to_list() == [0.0, 1.0]
    assert back["harness.squad_f1"].to_list() == [1.0, 1.0]
    assert back["sample_id"].to_list() == ["0", "1"]


def test_several_responses_and_choices_read_back(tmp_path):
    frame = pl.DataFrame(
        {
            "model": ["m", "m"],
            "task": ["mc", "mc"],
            "sample_id": ["a", "b"],
            "prediction": [["B", "B", "C"], ["A"]],
            "choices": [["1", "2", "3"], ["x", "y"]],
            "gold_index": [1, 0],
            "maj": [1.0, 0.5],
        }
    )
    path = tmp_path / f"{UUID}_samples.jsonl"
    ef.save(frame, path, format="every_eval_ever", metadata={"evaluation_id": "e"})
    _check_instances(path)
    first = json.loads(path.read_text().splitlines()[0])
    assert [item["source"] for item in first["answer_attribution"]] == [
        "output.raw[0]",
        "output.raw[1]",
        "output.raw[2]",
    ]
    back = ef.load(path)
    assert back["prediction"].to_list() == [["B", "B", "C"], ["A"]]
    assert back["choices"].to_list() == [["1", "2", "3"], ["x", "y"]]
    assert back["gold"].to_list() == ["2", "x"]  # the choice at gold_index
    assert back["harness.maj"].to_list() == [1.0, 0.5]


def test_a_null_score_is_an_error_naming_the_column_and_row(tmp_path):
    scored = ef.score(_nasty(), metrics=["exact_match"])
    path = tmp_path / f"{UUID}_samples.jsonl"
    with pytest.raises(EvalframeError, match=r"'exact_match' has no finite score in 1 row\(s\)"):
        ef.save(scored, path, format="every_eval_ever")
    assert not path.exists()
    assert os.listdir(tmp_path) == []


def test_instance_rows_need_a_jsonl_file_and_a_sample_id(tmp_path):
    scored = _scored(_nasty())
    with pytest.raises(EvalframeError, match="'.jsonl' file"):
        ef.save(scored, tmp_path / "x.json", format="every_eval_ever")
    with pytest.raises(EvalframeError, match="'sample_id' is required"):
        ef.save(scored.drop("sample_id"), tmp_path / "x.jsonl", format="every_eval_ever")
    with pytest.raises(EvalframeError, match="unknown metadata key"):
        ef.save(scored, tmp_path / "x.jsonl", format="every_eval_ever", metadata={"modle": "m"})
    with pytest.raises(EvalframeError, match="unknown save format 'eee'"):
        ef.save(scored, tmp_path / "x.jsonl", format="eee")


def test_a_failed_save_leaves_the_old_file(tmp_path):
    path = tmp_path / f"{UUID}_samples.jsonl"
    path.write_text("old\n")
    with pytest.raises(EvalframeError):
        ef.save(ef.score(_nasty(), metrics=["exact_match"]), path, format="every_eval_ever")
    assert path.read_text() == "old\n"
    assert os.listdir(tmp_path) == [path.name]


# ---------------------------------------------------------------- writing aggregate records


def _aggregate() -> pl.DataFrame:
    frame = pl.DataFrame(
        {
            "model": ["org/m"] * 4,
            "task": ["gsm8k"] * 4,
            "sample_id": ["1", "2", "3", "4"],
            "prediction": ["4", "5", "6", "8"],
            "gold": ["4", "5", "7", "8"],
        }
    )
    return ef.aggregate(ef.score(frame, metrics=["exact_match", "squad_f1"]), by=["model", "task"])


def _directions() -> dict[str, object]:
    return {"lower_is_better": {"exact_match": False, "squad_f1": False}}


def test_aggregate_record_validates_and_reads_back(tmp_path):
    table = _aggregate()
    path = tmp_path / f"{UUID}.json"
    metadata = {**SOURCE, **_directions(), "retrieved_timestamp": STAMP}
    ef.save(table, path, format="every_eval_ever", metadata=metadata)
    _check_aggregate(path)
    record = json.loads(path.read_text(encoding="utf-8"))
    assert record["source_metadata"]["source_organization_name"] == "Lab ünï"
    assert record["evaluation_id"] == f"gsm8k/org/m/{STAMP}"

    back = ef.load(path)
    columns = ["model", "task", "metric", "n", "value", "stderr", "ci_low", "ci_high", "signature"]
    expected = table.select(columns).with_columns(pl.col("n").cast(pl.Int64))
    assert back.select(columns).to_dicts() == expected.to_dicts()
    # 3 of 4 right by hand: value 0.75, and the aggregate's default interval is at 95%
    assert back["value"].to_list() == [0.75, 0.75]
    assert back["ci_level"].to_list() == [0.95, 0.95]
    details = back["score_details"].struct.field("details")
    assert details.struct.field("n_missing").to_list() == ["0", "0"]


def test_instance_and_aggregate_files_link_as_the_datastore_checks(tmp_path):
    validation = _validator()
    folder = tmp_path / "data" / "gsm8k" / "org" / "m"
    folder.mkdir(parents=True)
    frame = pl.DataFrame(
        {
            "model": ["org/m"] * 3,
            "task": ["gsm8k"] * 3,
            "sample_id": ["1", "2", "3"],
            "prediction": ["4", "5", "7"],
            "gold": ["4", "6", "7"],
        }
    )
    scored = ef.score(frame, metrics=["exact_match"])
    ef.save(
        scored,
        folder / f"{UUID}_samples.jsonl",
        format="every_eval_ever",
        metadata={"retrieved_timestamp": STAMP},
    )
    repo_samples = f"data/gsm8k/org/m/{UUID}_samples.jsonl"
    repo_aggregate = f"data/gsm8k/org/m/{UUID}.json"
    ef.save(
        ef.aggregate(scored, by=["model", "task"]),
        folder / f"{UUID}.json",
        format="every_eval_ever",
        metadata={
            **SOURCE,
            "lower_is_better": {"exact_match": False},
            "retrieved_timestamp": STAMP,
            "detailed_evaluation_results": {
                "format": "jsonl",
                "file_path": repo_samples,
                "total_rows": 3,
            },
        },
    )
    files = {repo_samples, repo_aggregate}

    def read(repo_path: str) -> str:
        return (tmp_path / repo_path).read_text(encoding="utf-8")

    for report in (
        validation.validate_aggregate(
            folder / f"{UUID}.json",
            repo_path=repo_aggregate,
            available_files=files,
            read_repo_file=read,
            run_semantic_checks=True,
        ),
        validation.validate_instance_file(
            folder / f"{UUID}_samples.jsonl",
            repo_path=repo_samples,
            available_files=files,
            read_repo_file=read,
            run_semantic_checks=True,
        ),
    ):
        assert report.valid, report.errors


def test_aggregate_fields_evalframe_cannot_know_are_asked_for(tmp_path):
    path = tmp_path / f"{UUID}.json"
    with pytest.raises(EvalframeError) as caught:
        ef.save(_aggregate(), path, format="every_eval_ever", metadata=_directions())
    assert "'source_metadata.source_organization_name' is missing" in str(caught.value)
    assert "'source_metadata.evaluator_relationship' is missing" in str(caught.value)
    with pytest.raises(
        EvalframeError, match=r"direction .* unknown for \['exact_match', 'squad_f1'\]"
    ):
        ef.save(_aggregate(), path, format="every_eval_ever", metadata=SOURCE)
    wrong = {**SOURCE, **_directions(), "source_metadata.evaluator_relationship": "friend"}
    with pytest.raises(EvalframeError, match="must be one of"):
        ef.save(_aggregate(), path, format="every_eval_ever", metadata=wrong)
    assert not path.exists()


def test_a_higher_is_better_column_gives_the_direction(tmp_path):
    table = _aggregate().with_columns(higher_is_better=pl.lit(True))
    path = tmp_path / f"{UUID}.json"
    ef.save(table, path, format="every_eval_ever", metadata=SOURCE)
    _check_aggregate(path)
    results = json.loads(path.read_text())["evaluation_results"]
    assert [result["metric_config"]["lower_is_better"] for result in results] == [False, False]


def test_one_model_and_one_task_per_aggregate_file(tmp_path):
    table = pl.concat([_aggregate(), _aggregate().with_columns(model=pl.lit("org/other"))])
    with pytest.raises(EvalframeError, match="one file per model and task"):
        ef.save(
            table,
            tmp_path / "x.json",
            format="every_eval_ever",
            metadata={**SOURCE, **_directions()},
        )


# ---------------------------------------------------------------- reading others' records


#: Per-sample metrics of the records below, as lm-eval's samples file gives them.
SAMPLE_METRICS = {"0": {"acc": 1.0, "acc_norm": 0.0}, "1": {"acc": 0.0, "acc_norm": 1.0}, "7": {}}


def _record(sample: str, result: str, score: float, **changes: object) -> dict[str, object]:
    """A record as the package's lm-eval converter writes one (instance_level_adapter.py)."""
    record: dict[str, object] = {
        "schema_version": "0.3.0",
        "evaluation_id": "hellaswag/EleutherAI/pythia-160m/1712345678.9",
        "model_id": "EleutherAI/pythia-160m",
        "evaluation_name": "hellaswag",
        "evaluation_result_id": result,
        "sample_id": sample,
        "sample_hash": "ab" * 32,
        "interaction_type": "single_turn",
        "input": {"raw": "Ein Mann…", "reference": ["läuft"], "choices": ["läuft", "fährt"]},
        "output": {"raw": ["läuft"]},
        "answer_attribution": [
            {
                "turn_idx": 0,
                "source": "output.raw",
                "extracted_value": "läuft",
                "extraction_method": "none",
                "is_terminal": True,
            }
        ],
        "evaluation": {"score": score, "is_correct": score == 1.0},
        # the converter stores every metric of the sample in each of its records
        "metadata": {"filter": "none", "lm_eval_metrics": json.dumps(SAMPLE_METRICS[sample])},
    }
    record.update(changes)
    return record


def _write_lines(path: Path, records: list[dict[str, object]]) -> Path:
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in records) + "\n", "utf-8")
    return path


def test_records_of_one_sample_are_one_row(tmp_path):
    path = _write_lines(
        tmp_path / f"{UUID}_samples.jsonl",
        [
            _record("0", "acc", 1.0),
            _record("0", "acc_norm", 0.0),
            _record("1", "acc", 0.0, output={"raw": ["fährt"]}),
            _record("1", "acc_norm", 1.0, output={"raw": ["fährt"]}),
        ],
    )
    _check_instances(path)
    back = ef.load(path)
    assert back["sample_id"].to_list() == ["0", "1"]
    assert back["prediction"].to_list() == ["läuft", "fährt"]
    assert back["gold"].to_list() == ["läuft", "läuft"]
    assert back["choices"].to_list() == [["läuft", "fährt"], ["läuft", "fährt"]]
    assert back["harness.acc"].to_list() == [1.0, 0.0]
    assert back["harness.acc_norm"].to_list() == [0.0, 1.0]
    assert back["sample_hash"].to_list() == ["ab" * 32] * 2


def test_records_of_one_sample_that_differ_stay_two_rows(tmp_path):
    path = _write_lines(
        tmp_path / f"{UUID}_samples.jsonl",
        [_record("0", "acc", 1.0), _record("0", "acc_norm", 0.0, output={"raw": ["fährt"]})],
    )
    back = ef.load(path)
    assert back["prediction"].to_list() == ["läuft", "fährt"]
    assert back["harness.acc"].to_list() == [1.0, None]
    assert back["harness.acc_norm"].to_list() == [None, 0.0]


def test_an_agentic_answer_is_its_terminal_attribution(tmp_path):
    agentic = _record(
        "7",
        "accuracy",
        1.0,
        interaction_type="agentic",
        output=None,
        messages=[
            {"turn_idx": 0, "role": "user", "content": "Löse es"},
            {"turn_idx": 1, "role": "assistant", "content": "42", "tool_calls": None},
        ],
        answer_attribution=[
            {
                "turn_idx": 1,
                "source": "messages[1].content",
                "extracted_value": "41",
                "extraction_method": "regex",
                "is_terminal": False,
            },
            {
                "turn_idx": 1,
                "source": "messages[1].content",
                "extracted_value": "42",
                "extraction_method": "regex",
                "is_terminal": True,
            },
        ],
        evaluation={"score": 1.0, "is_correct": True, "num_turns": 2, "tool_calls_count": 0},
    )
    path = _write_lines(tmp_path / f"{UUID}_samples.jsonl", [agentic])
    _check_instances(path)
    back = ef.load(path)
    assert back["prediction"].to_list() == ["42"]
    assert back["evaluation"].to_list() == [{"num_turns": 2, "tool_calls_count": 0}]
    assert back["messages"].list.len().to_list() == [2]


def test_records_without_a_result_id_are_harness_score(tmp_path):
    record = _record("0", "x", 0.25)
    del record["evaluation_result_id"]
    back = ef.load(_write_lines(tmp_path / "a_samples.jsonl", [record]))
    assert back["harness.score"].to_list() == [0.25]


def test_a_missing_required_field_is_named_with_its_line(tmp_path):
    broken = _record("1", "acc", 1.0, input={"raw": "q"})
    path = _write_lines(tmp_path / "b_samples.jsonl", [_record("0", "acc", 1.0), broken])
    with pytest.raises(EvalframeError) as caught:
        ef.load(path, format="every_eval_ever")
    message = str(caught.value)
    assert "'input.reference'" in message
    assert "1 record(s)" in message
    assert "line 2" in message


def test_a_mistyped_item_field_is_named(tmp_path):
    attribution = [
        {
            "turn_idx": 0,
            "source": "output.raw",
            "extracted_value": "läuft",
            "extraction_method": "none",
            "is_terminal": "yes",
        }
    ]
    path = _write_lines(
        tmp_path / "c_samples.jsonl", [_record("0", "acc", 1.0, answer_attribution=attribution)]
    )
    with pytest.raises(EvalframeError, match=r"'answer_attribution\[\]\.is_terminal' must be"):
        ef.load(path, format="every_eval_ever")


def test_two_records_for_one_result_of_a_sample_are_an_error(tmp_path):
    path = _write_lines(
        tmp_path / "d_samples.jsonl", [_record("0", "acc", 1.0), _record("0", "acc", 0.0)]
    )
    expected = r"sample_id='0', evaluation_result_id='acc' is on line 1 and again on line 2"
    with pytest.raises(EvalframeError, match=expected):
        ef.load(path)


def test_an_aggregate_record_missing_a_score_is_named(tmp_path):
    table = _aggregate()
    path = tmp_path / f"{UUID}.json"
    ef.save(table, path, format="every_eval_ever", metadata={**SOURCE, **_directions()})
    record = json.loads(path.read_text())
    del record["evaluation_results"][1]["score_details"]["score"]
    path.write_text(json.dumps(record))
    with pytest.raises(EvalframeError, match=r"'evaluation_results\[1\]\.score_details\.score'"):
        ef.load(path, format="every_eval_ever_results")


# ---------------------------------------------------------------- detection


def _probe(path: Path) -> Probe:
    return Probe(path, "ndjson" if path.suffix == ".jsonl" else "json")


def test_detection_finds_both_file_types(tmp_path):
    samples = _write_lines(tmp_path / "s_samples.jsonl", [_record("0", "acc", 1.0)])
    table = tmp_path / f"{UUID}.json"
    ef.save(_aggregate(), table, format="every_eval_ever", metadata={**SOURCE, **_directions()})
    assert detect(_probe(samples)).name == "every_eval_ever"
    assert detect(_probe(table)).name == "every_eval_ever_results"


def test_a_plain_table_with_similar_columns_is_not_detected(tmp_path):
    record = _record("0", "acc", 1.0)
    del record["answer_attribution"]  # everything else the schema requires is there
    plain = _write_lines(tmp_path / "plain.jsonl", [record])
    assert detect(_probe(plain)) is None
    frame = ef.load(plain)
    assert "harness.acc" not in frame.columns
    assert "model_id" in frame.columns

    flat = tmp_path / "flat.jsonl"
    flat.write_text(
        json.dumps(
            {
                "schema_version": "1",
                "evaluation_id": "e",
                "model_id": "m",
                "evaluation_name": "t",
                "sample_id": "0",
                "interaction_type": "single_turn",
                "input": "question",
                "answer_attribution": [],
                "evaluation": 1.0,
            }
        )
        + "\n"
    )
    assert detect(_probe(flat)) is None

    summary = tmp_path / "summary.json"
    summary.write_text(
        json.dumps({"schema_version": "1", "evaluation_id": "e", "evaluation_results": []})
    )
    assert detect(_probe(summary)) is None
