"""Hostile files in each harness's layout: repeated samples, lines that are no record, a gzip
bomb, JSON nested 100,000 deep, forced layouts that do not fit, an unrelated JSON object.

Every expected number is counted by hand in the comments, never taken from evalframe.
"""

from __future__ import annotations

import gzip
import json
import time
import warnings
import zlib
from pathlib import Path

import polars as pl
import pytest

import evalframe as ef
from evalframe import EvalframeError
from evalframe.io.adapters import adapters

OLOT = "lm-eval-olot-fixture/samples_gsm8k_2025-04-30T18-24-41.082644.jsonl"


def lm_eval_line(doc_id: int, right: bool) -> dict:
    """One lm-eval 0.4 ``generate_until`` line with the strict-match filter."""
    answer = "4" if right else "5"
    return {
        "doc_id": doc_id, "doc": {"question": f"q{doc_id}", "answer": "4"}, "target": "4",
        "arguments": {"gen_args_0": {"arg_0": f"q{doc_id}", "arg_1": {"until": ["\n"]}}},
        "resps": [[answer]], "filtered_resps": [answer], "filter": "strict-match",
        "metrics": ["exact_match"], "doc_hash": "h", "prompt_hash": "p", "target_hash": "t",
        "exact_match": 1.0 if right else 0.0,
    }  # fmt: skip


def write_lines(path: Path, records: list) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    return path


def lm_eval_run(tmp_path: Path, appended: int = 0) -> Path:
    """30 documents, 3 right (doc_id 0, 1, 2), then the first ``appended`` lines written again."""
    lines = [lm_eval_line(i, i < 3) for i in range(30)]
    name = "out/org__model/samples_gsm8k_2025-04-30T18-24-41.082644.jsonl"
    return write_lines(tmp_path / name, lines + lines[:appended])


# ---------------------------------------------------------------- duplicates


def test_a_resumed_lm_eval_run_is_refused_by_default(tmp_path):
    path = lm_eval_run(tmp_path, appended=3)
    # the key of line 31 (doc_id 0, strict-match) was first written on line 1
    expected = (
        r"the sample task='gsm8k', model='org__model', sample_id=0, filter='strict-match' is on "
        r"line 1 and again on line 31 \(3 repeated records in all\)"
    )
    with pytest.raises(EvalframeError, match=expected) as caught:
        ef.load(path)
    assert str(path) in str(caught.value)


def test_first_or_last_keeps_one_record_and_warns(tmp_path):
    path = lm_eval_run(tmp_path, appended=3)
    clean = lm_eval_run(tmp_path / "clean")
    for policy in ("first", "last"):
        with pytest.warns(UserWarning, match=rf"dropped 3 repeated record\(s\).*'{policy}'"):
            frame = ef.load(path, duplicates=policy)
        assert frame.height == 30
        # 3 right answers out of 30 documents: 0.10, as the clean run
        assert frame["harness.exact_match"].mean() == pytest.approx(3 / 30)
        scored = ef.score(frame, ["exact_match"])
        assert scored["exact_match"].mean() == pytest.approx(3 / 30)
    assert ef.load(clean)["sample_id"].to_list() == list(range(30))
    kept = ef.load(path, duplicates="last")["sample_id"].to_list()
    assert kept == [*range(3, 30), 0, 1, 2]  # the last copies are lines 31-33


def test_an_unknown_policy_is_refused(tmp_path):
    with pytest.raises(EvalframeError, match="duplicates='keep' is not one of"):
        ef.load(lm_eval_run(tmp_path), duplicates="keep")


def test_the_real_lm_eval_file_appended_to_itself(shared_data, tmp_path):
    original = (shared_data / OLOT).read_bytes()
    path = tmp_path / "run" / Path(OLOT).name
    path.parent.mkdir()
    path.write_bytes(original + original)  # 3 lines, then the same 3 again
    with pytest.raises(EvalframeError, match=r"line 1 and again on line 4 \(3 repeated"):
        ef.load(path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert ef.load(path, duplicates="first").height == 3


def squad_prediction_text() -> str:
    # the id 'a1' twice: JSON keeps the last value silently
    return '{\n  "a1": "Paris",\n  "b2": "Rome",\n  "a1": "Lyon"\n}\n'


def test_a_repeated_squad_prediction_id_names_both_lines(tmp_path):
    path = tmp_path / "model.json"
    path.write_text(squad_prediction_text(), encoding="utf-8")
    with pytest.raises(EvalframeError, match="id='a1' is on line 2 and again on line 4"):
        ef.load(path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        first = ef.load(path, duplicates="first")
        last = ef.load(path, duplicates="last")
    assert first.select("id", "prediction").rows() == [("a1", "Paris"), ("b2", "Rome")]
    assert last.select("id", "prediction").rows() == [("b2", "Rome"), ("a1", "Lyon")]


ANNOTATION = {
    "instruction": "Name a colour.", "output_1": "Red.", "generator_1": "base",
    "dataset": "helpful_base", "output_2": "Blue.", "generator_2": "mine",
    "annotator": "judge_cfg", "preference": 2.0,
}  # fmt: skip
PAIR = {
    "question_id": 81, "model_1": "m1", "model_2": "m2", "g1_winner": "model_1",
    "g2_winner": "tie", "judge": ["gpt-4", "pair-v2"], "g1_user_prompt": "...",
    "g1_judgment": "[[A]]", "g2_user_prompt": "...", "g2_judgment": "[[C]]", "turn": 1,
    "tstamp": 1.0,
}  # fmt: skip
SINGLE = {
    "question_id": 81, "model": "m", "judge": ["gpt-4", "single-v1"], "user_prompt": "...",
    "judgment": "Rating: [[8]]", "score": 8, "turn": 1, "tstamp": 1.0,
}  # fmt: skip
QUESTION = {"question_id": 81, "category": "writing", "turns": ["Write.", "Shorter."]}
ANSWERS = {"id": "56be4db0acb8001400a502ec", "title": "T", "question": "Q?", "answers": ["x"]}


def layouts(tmp_path: Path) -> list[tuple[str, Path, str]]:
    """A file of each JSON layout in its harness's place, its second record repeating the
    first; and the line (or record) of the repeat."""
    other = {**ANNOTATION, "instruction": "Name a fruit."}
    annotations = tmp_path / "results" / "mine" / "judge_cfg" / "annotations.json"
    annotations.parent.mkdir(parents=True)
    annotations.write_text(json.dumps([ANNOTATION, other, ANNOTATION]), encoding="utf-8")
    outputs = tmp_path / "results" / "mine" / "model_outputs.json"
    answer = {"instruction": "Name a colour.", "output": "Blue.", "generator": "mine"}
    outputs.write_text(json.dumps([answer, answer]), encoding="utf-8")
    judgment = tmp_path / "data" / "mt_bench" / "model_judgment"
    return [
        ("alpaca_eval", annotations, "record 1 and again on record 3"),
        ("alpaca_eval_outputs", outputs, "record 1 and again on record 2"),
        ("mtbench_pair", write_lines(judgment / "gpt-4_pair.jsonl", [PAIR, PAIR]),
         "line 1 and again on line 2"),
        ("mtbench_single", write_lines(judgment / "gpt-4_single.jsonl", [SINGLE, SINGLE]),
         "line 1 and again on line 2"),
        ("mtbench_questions", write_lines(tmp_path / "question.jsonl", [QUESTION, QUESTION]),
         "line 1 and again on line 2"),
        ("squad_answers", write_lines(tmp_path / "dev.jsonl", [ANSWERS, ANSWERS]),
         "line 1 and again on line 2"),
    ]  # fmt: skip


def test_every_json_layout_refuses_a_repeated_sample(tmp_path):
    for name, path, where in layouts(tmp_path):
        with pytest.raises(EvalframeError, match=rf"{path.name}' as .*{where}") as caught:
            ef.load(path)
        assert "duplicates='first' or 'last'" in str(caught.value), name
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            kept = ef.load(path, duplicates="first")
        # annotations: 3 records, 1 repeat -> 2 rows; the others: 2 records -> 1 row
        assert kept.height == (2 if name == "alpaca_eval" else 1), name


def test_lighteval_details_with_every_row_twice(tmp_path):
    folder = tmp_path / "details" / "org" / "m" / "2025-01-02T10-20-30"
    folder.mkdir(parents=True)
    path = folder / "details_ef_mc|0_2025-01-02T10-20-30.parquet"
    docs = [
        {"query": f"{i}+{i}?", "choices": [" 1", " 2"], "gold_index": 1, "id": str(i),
         "task_name": "ef_mc|0", "sampling_methods": ["LOGPROBS"]}
        for i in range(2)
    ]  # fmt: skip
    once = {
        "doc": docs,
        "model_response": [{"text": [], "logprobs": [-2.0, -0.5]}] * 2,
        "metric": [{"acc": 1}, {"acc": 0}],
    }
    twice = {key: values + values for key, values in once.items()}
    pl.DataFrame(twice).write_parquet(path)
    with pytest.raises(EvalframeError, match=r"sample_id='0'.* is on row 0 and again on row 2"):
        ef.load(path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert ef.load(path, duplicates="first")["harness.acc"].to_list() == [1, 0]
    # lighteval numbers documents per split: one id with two queries is two documents
    other = {**docs[0], "query": "another split's question"}
    pl.DataFrame({**once, "doc": [docs[0], other]}).write_parquet(path)
    assert ef.load(path).height == 2


def test_every_sample_layout_declares_its_key():
    for adapter in adapters():
        if adapter.level in ("samples", "reference"):
            assert adapter.keys, adapter.name
            # a predictions mapping's keys are question ids, not fields
            assert adapter.fields or adapter.name == "squad_predictions", adapter.name


# ---------------------------------------------------------------- lines that are no record


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("null", "line 31 holds null"),
        ("{}", "line 31 holds an empty object"),
        ("[]", "line 31 holds a list"),
        ("7", "line 31 holds a number"),
        ('{"x": NaN}', "line 31 has no 'doc_id'"),
    ],
)
def test_a_line_that_is_no_record_is_refused(tmp_path, line, message):
    path = lm_eval_run(tmp_path)
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(line + "\n")
    with pytest.raises(EvalframeError, match=message):
        ef.load(path)


@pytest.mark.parametrize("line", ["null", "{}", '{"x": NaN}'])
def test_squad_answers_refuse_a_line_that_is_no_record(tmp_path, line):
    path = tmp_path / "dev.jsonl"
    path.write_text(json.dumps(ANSWERS) + "\n" + line + "\n", encoding="utf-8")
    with pytest.raises(EvalframeError, match="line 2"):
        ef.load(path)


# ---------------------------------------------------------------- gzip


def test_every_results_layout_reads_gzip(tmp_path):
    results = {
        "results": {"arc": {"alias": "arc", "acc,none": 0.5, "acc_stderr,none": 0.1}},
        "versions": {"arc": 1.0}, "n-shot": {"arc": 0}, "model_name": "m",
    }  # fmt: skip
    path = tmp_path / "results_2024-01-01T00-00-00.json.gz"
    path.write_bytes(gzip.compress(json.dumps(results).encode()))
    assert ef.load(path).select("task", "metric", "value").rows() == [("arc", "acc", 0.5)]
    lighteval = {"config_general": {"model_name": "org/m"}, "results": {"t|0": {"acc": 0.25}}}
    other = tmp_path / "results_2025-01-02T10-20-30.json.gz"
    other.write_bytes(gzip.compress(json.dumps(lighteval).encode()))
    assert ef.load(other).select("task", "value").rows() == [("t|0", 0.25)]


def gzip_bomb(path: Path, head: bytes, fill: bytes, tail: bytes) -> Path:
    """1 GiB of ``fill`` between ``head`` and ``tail``, about 1 MB once compressed."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)
    chunk = fill * (1 << 20)
    parts = [compressor.compress(head)]
    parts += [compressor.compress(chunk) for _ in range(1024)]
    parts += [compressor.compress(tail), compressor.flush()]
    path.write_bytes(b"".join(parts))
    return path


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "head", "fill", "tail"),
    [
        ("bomb.jsonl.gz", b'{"a": "', b"x", b'"}\n'),
        ("results_2024-01-01T00-00-00.json.gz", b'{"results": {}, "pad": "', b" ", b'"}'),
    ],
)
def test_a_gzip_bomb_is_refused_early(tmp_path, name, head, fill, tail):
    path = gzip_bomb(tmp_path / name, head, fill, tail)
    assert path.stat().st_size < 2 << 20
    start = time.perf_counter()
    with pytest.raises(EvalframeError, match="decompresses to more than .* gzip bomb"):
        ef.load(path)
    # refused after at most 200 x 1 MB decompressed, not the whole GiB
    assert time.perf_counter() - start < 15


# ---------------------------------------------------------------- nesting


DEEP = "[" * 100_000 + "]" * 100_000


@pytest.mark.parametrize(
    ("name", "text", "format"),
    [
        ("deep.json", DEEP, None),
        ("results_2024-01-01T00-00-00.json", '{"results": ' + DEEP + "}", None),
        ("deep.json", DEEP, "lm_eval_results"),
        ("deep.json", DEEP, "lighteval_results"),
        ("deep.json", DEEP, "squad"),
        ("deep.json", DEEP, "squad_predictions"),
        ("deep.json", DEEP, "every_eval_ever_results"),
        ("deep.json", DEEP, "alpaca_eval"),
        ("deep.json", DEEP, "mtbench_pair"),
        ("deep.jsonl", '{"a": ' + DEEP + "}\n", None),
        ("deep.jsonl", '{"a": ' + DEEP + "}\n", "lm_eval"),
    ],
    ids=lambda value: value[:12] if isinstance(value, str) else str(value),
)
def test_json_nested_100000_deep_is_an_error_naming_the_file(tmp_path, name, text, format):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(EvalframeError, match=rf"{name}'.*nest"):
        ef.load(path, format=format)


@pytest.mark.parametrize(
    "format",
    ["lm_eval_results", "lighteval_results", "squad", "squad_predictions",
     "every_eval_ever_results"],
)  # fmt: skip
def test_json_lines_forced_into_an_object_layout(tmp_path, format):
    path = write_lines(tmp_path / "x.jsonl", [{"a": 1}, {"a": 2}])
    with pytest.raises(EvalframeError, match=r"x\.jsonl'.*(JSON lines|several JSON values)"):
        ef.load(path, format=format)


# ---------------------------------------------------------------- detection and forcing


def test_a_one_record_model_outputs_object_is_not_squad_predictions(tmp_path):
    path = tmp_path / "model_outputs.json"
    record = {"instruction": "Hi?", "output": "Hey!", "generator": "mine"}
    path.write_text(json.dumps(record), encoding="utf-8")
    with pytest.raises(EvalframeError, match="one record of alpaca_eval_outputs") as caught:
        ef.load(path)
    assert len(str(caught.value)) < 400


def test_a_forced_layout_that_another_layout_claims_is_refused(tmp_path):
    path = tmp_path / "results_2025-01-02T10-20-30.json"
    lighteval = {"config_general": {"model_name": "org/m"}, "results": {"t|0": {"acc": 0.25}}}
    path.write_text(json.dumps(lighteval), encoding="utf-8")
    expected = "as format 'lm_eval_results': it is lighteval_results"
    with pytest.raises(EvalframeError, match=expected):
        ef.load(path, format="lm_eval_results")


def test_lm_eval_results_without_metric_keys_is_not_zero_rows(tmp_path):
    path = tmp_path / "r.json"
    path.write_text(json.dumps({"results": {"t": {"acc": 0.5}}, "versions": {}}), "utf-8")
    with pytest.raises(EvalframeError, match=r"none of the form '<metric>,<filter>'"):
        ef.load(path, format="lm_eval_results")


def test_an_unrelated_json_object_gives_a_short_message(tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"lr": 0.1, "layers": [1, 2], "results": 3}), encoding="utf-8")
    with pytest.raises(EvalframeError) as caught:
        ef.load(str(tmp_path / "*.json"))
    message = str(caught.value)
    assert message.startswith(f"cannot read {str(path)!r}: one JSON object")
    # 'results' is 1 of the 2 fields of lighteval_results, 1 of the 4 of lm_eval_results
    assert "closest: lighteval_results" in message and "needs 'config_general'" in message
    assert len(message) < 400  # not the list of every layout


# ---------------------------------------------------------------- AlpacaEval model names


def test_nullmodel_is_named_by_its_results_folder(shared_data):
    folder = shared_data / "alpaca_eval" / "NullModel"
    judged = ef.load(folder / "weighted_alpaca_eval_gpt4_turbo" / "annotations.json.gz")
    outputs = ef.load(folder / "model_outputs.json.gz")
    raw = json.loads(gzip.decompress(
        (folder / "weighted_alpaca_eval_gpt4_turbo" / "annotations.json.gz").read_bytes()))
    assert {record["generator_2"] for record in raw} == {"example"}
    assert set(judged["model"]) == set(outputs["model"]) == {"NullModel"}
    # every one of the 805 judgments pairs with its answer on (model, sample_id)
    joined = judged.join(outputs, on=["model", "sample_id"], how="inner")
    assert joined.height == 805
