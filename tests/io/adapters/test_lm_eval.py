"""lm-evaluation-harness samples and results files, read and scored against the harness's numbers.

The fixtures under ``tests/fixtures/harness/lm_eval/output`` were written by lm-eval 0.4.13
itself (``generate.py`` there): every expected number below is read from those files (the
harness's per-sample metric keys and its ``results_*.json``), never computed by evalframe.
"""

from __future__ import annotations

import gzip
import json
import shutil
import warnings
from pathlib import Path

import polars as pl
import pytest

import evalframe as ef
from evalframe import EvalframeError
from evalframe.io.adapters import list_formats

OUTPUT = Path(__file__).parents[2] / "fixtures" / "harness" / "lm_eval" / "output"
MODELS = ["lm-eval-dummy", "ef-fixture-lm"]
EXACT_MATCH = (
    'exact_match(ignore_case=true, ignore_punctuation=true, regexes_to_ignore=[",", "\\\\$"])'
)

#: task -> (evalframe request, the harness's metric key) pairs; options as in tasks/*.yaml.
PLANS = {
    "ef_mc": [("acc", "acc"), ("acc_norm", "acc_norm"), ("acc_bytes", "acc_bytes")],
    "ef_mc_text": [("acc", "acc"), ("acc_norm", "acc_norm"), ("acc_pmi", "acc_mutual_info")],
    "ef_mc_multi": [("acc", "acc"), ("acc_norm", "acc_norm")],
    "ef_gen": [(EXACT_MATCH, "exact_match")],
}


def samples(model: str, task: str) -> Path:
    (path,) = (OUTPUT / model).glob(f"samples_{task}_2*.jsonl")
    return path


def results(model: str) -> dict:
    (path,) = (OUTPUT / model).glob("results_*.json")
    return json.loads(path.read_text(encoding="utf-8"))


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def quiet_load(source, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ef.load(source, **kwargs)


# ---------------------------------------------------------------- detection and mapping


def test_formats_are_listed():
    formats = list_formats().filter(pl.col("format").str.starts_with("lm_eval"))
    assert formats.select("format", "level").rows() == [
        ("lm_eval", "samples"),
        ("lm_eval_results", "results"),
    ]


@pytest.mark.parametrize("model", MODELS)
def test_multiple_choice_mapping(model):
    path = samples(model, "ef_mc")
    frame = ef.load(path)
    written = lines(path)
    assert frame.height == len(written) == 12
    assert frame.get_column("task").unique().to_list() == ["ef_mc"]
    assert frame.get_column("model").unique().to_list() == [model]
    assert frame.get_column("sample_id").to_list() == [line["doc_id"] for line in written]
    assert frame.get_column("filter").unique().to_list() == ["none"]
    # choices are doc_to_choice(doc): the dataset's own choices (Unicode kept exactly)
    assert frame.get_column("choices").to_list() == [line["doc"]["choices"] for line in written]
    assert frame.get_column("choice_logprobs").to_list() == [
        [float(pair[0]) for pair in line["filtered_resps"]] for line in written
    ]
    assert frame.get_column("is_greedy").to_list() == [
        [pair[1] == "True" for pair in line["filtered_resps"]] for line in written
    ]
    assert frame.get_column("gold_index").to_list() == [line["doc"]["label"] for line in written]
    assert frame.get_column("harness.acc").to_list() == [line["acc"] for line in written]
    # everything else is kept under its own name
    assert frame.get_column("doc").struct.field("question").to_list() == [
        line["doc"]["question"] for line in written
    ]
    for key in ("target", "doc_hash", "prompt_hash", "target_hash", "metrics"):
        assert frame.get_column(key).to_list() == [line[key] for line in written]
    assert "doc_id" not in frame.columns and "acc" not in frame.columns


def test_text_targets_and_mutual_information():
    path = samples("ef-fixture-lm", "ef_mc_text")
    frame = ef.load(path)
    written = lines(path)
    # target_delimiter "" (from the run's results file): continuations are the choices
    assert frame.get_column("choices").to_list() == [line["doc"]["choices"] for line in written]
    # the second half of the requests has an empty context: the unconditioned log-probabilities
    for row, line in zip(frame.iter_rows(named=True), written, strict=True):
        half = len(line["filtered_resps"]) // 2
        assert [args["arg_0"] for args in line["arguments"].values()][half:] == [""] * half
        assert row["unconditioned_logprobs"] == [float(p[0]) for p in line["filtered_resps"]][half:]
    # gold from the text of a choice; "4" and "7" are choice texts out of range as indices
    # (doc 3: choices ["3", "4", "5"], label 1; doc 9: ["9", "15", "21", "7"], label 3)
    assert frame.get_column("gold_index").to_list() == [line["doc"]["label"] for line in written]
    assert [written[3]["target"], written[9]["target"]] == ["4", "7"]


def test_several_golds():
    path = samples("lm-eval-dummy", "ef_mc_multi")
    frame = ef.load(path)
    assert frame.schema["gold_index"] == pl.List(pl.Int64)
    assert frame.get_column("gold_index").to_list() == [
        line["doc"]["golds"] for line in lines(path)
    ]


def test_single_continuation_and_rolling():
    path = samples("ef-fixture-lm", "ef_ll")
    frame = ef.load(path)
    written = lines(path)
    assert frame.get_column("loglikelihood").to_list() == [line["perplexity"] for line in written]
    # lm-eval's acc of a loglikelihood task is the greedy flag
    assert frame.get_column("is_greedy").list.first().cast(pl.Int64).to_list() == [
        line["acc"] for line in written
    ]
    assert frame.get_column("gold_index").to_list() == [0] * len(written)
    path = samples("ef-fixture-lm", "ef_ppl")
    frame = ef.load(path)
    written = lines(path)
    assert frame.get_column("loglikelihood").to_list() == [
        line["word_perplexity"][0] for line in written
    ]
    assert frame.get_column("text").to_list() == [line["doc"]["text"] for line in written]


def test_generation_mapping():
    path = samples("ef-fixture-lm", "ef_gen")
    frame = ef.load(path)
    written = lines(path)
    assert frame.get_column("filter").unique(maintain_order=True).to_list() == [
        "raw", "strict-match", "flexible-extract",
    ]  # fmt: skip
    assert frame.get_column("prediction").to_list() == [
        line["filtered_resps"][0] for line in written
    ]
    assert frame.get_column("gold").to_list() == [line["doc"]["answer"] for line in written]
    assert "🤷" in "".join(frame.get_column("prediction").to_list())


def test_repeats_without_take_first_give_lists():
    path = samples("ef-fixture-lm", "ef_gen_repeats")
    with pytest.warns(UserWarning, match="single answers on some lines \\(filter 'maj@3'\\)"):
        frame = ef.load(path)
    written = lines(path)
    assert frame.schema["prediction"] == pl.List(pl.String)
    expected = [
        line["filtered_resps"][0] if line["filter"] == "all" else line["filtered_resps"]
        for line in written
    ]
    assert frame.get_column("prediction").to_list() == expected


# ---------------------------------------------------------------- the harness's numbers


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("task", sorted(PLANS))
def test_per_sample_metrics_reproduce(model, task):
    frame = ef.load(samples(model, task))
    requests = [request for request, _ in PLANS[task]]
    scored = ef.score(frame, requests)
    for request, key in PLANS[task]:
        assert scored.get_column(request).to_list() == scored.get_column(f"harness.{key}").to_list()


@pytest.mark.parametrize("model", MODELS)
def test_repeats_reproduce(model):
    frame = quiet_load(samples(model, "ef_gen_repeats"))
    every = ef.score(frame.filter(pl.col("filter") == "all"), ["avg@3"])
    # lm-eval's exact_match of a list of answers is their mean (numpy broadcasting)
    assert every.get_column("avg@3").to_list() == every.get_column("harness.exact_match").to_list()
    vote = frame.filter(pl.col("filter") == "maj@3").with_columns(pl.col("prediction").list.first())
    vote = ef.score(vote, ["exact_match"])
    assert (
        vote.get_column("exact_match").to_list() == vote.get_column("harness.exact_match").to_list()
    )


def _close(a: float, b: float) -> bool:
    return a == pytest.approx(b, rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("model", MODELS)
def test_aggregates_and_stderr_reproduce(model):
    written = results(model)["results"]
    plans = {
        **PLANS,
        "ef_ppl": [(m, m) for m in ("word_perplexity", "byte_perplexity", "bits_per_byte")],
        "ef_ll": [("perplexity", "perplexity")],
    }
    checked = 0
    for task, plan in plans.items():
        scored = ef.score(ef.load(samples(model, task)), [request for request, _ in plan])
        table = ef.aggregate(scored, by=["model", "task", "filter"])
        for row in table.iter_rows(named=True):
            key = dict(plan)[row["metric"]]
            assert row["n"] == written[task]["sample_len"]
            assert _close(row["value"], written[task][f"{key},{row['filter']}"])
            stderr = written[task][f"{key}_stderr,{row['filter']}"]
            if key in ("word_perplexity", "byte_perplexity", "bits_per_byte"):
                assert stderr == "N/A"
            elif key != "perplexity":  # lm-eval bootstraps perplexity's stderr (100,000 draws)
                assert _close(row["stderr"], stderr)
            checked += 1
    assert checked == 3 + 3 + 2 + 3 + 3 + 1  # metrics per task, ef_gen's three filters


@pytest.mark.parametrize("model", MODELS)
def test_results_file(model):
    (path,) = (OUTPUT / model).glob("results_*.json")
    table = ef.load(path)
    written = json.loads(path.read_text(encoding="utf-8"))
    expected = sorted(
        (task, *key.split(",", 1), value)
        for task, entry in written["results"].items()
        for key, value in entry.items()
        if "," in key and "_stderr," not in key
    )
    assert sorted(table.select("task", "metric", "filter", "value").rows()) == expected
    assert table.get_column("model").unique().to_list() == [model]
    row = table.filter(task="ef_ppl", metric="word_perplexity").row(0, named=True)
    assert row["stderr"] is None and row["higher_is_better"] is False
    row = table.filter(task="ef_mc", metric="acc").row(0, named=True)
    assert row["stderr"] == written["results"]["ef_mc"]["acc_stderr,none"]
    assert (row["n_samples"], row["num_fewshot"], row["version"]) == (12, 1, "1.0")


@pytest.mark.filterwarnings("ignore:column")
def test_folder_of_models_and_tasks():
    with pytest.warns(UserWarning, match="left out 2 file"):
        frame = ef.load(OUTPUT)
    counts = frame.group_by("model", "task").len()
    expected = {
        (model, path.name.split("_2")[0].removeprefix("samples_")): len(lines(path))
        for model in MODELS
        for path in (OUTPUT / model).glob("samples_*.jsonl")
    }
    assert dict(((m, t), n) for m, t, n in counts.rows()) == expected
    assert "metric" not in frame.columns


# ---------------------------------------------------------------- other files


def test_model_from_the_folder_without_results(tmp_path):
    folder = tmp_path / "org__my-model"
    folder.mkdir()
    shutil.copy(
        samples("lm-eval-dummy", "ef_mc"), folder / "samples_ef_mc_2024-01-01T00-00-00.1.jsonl"
    )
    frame = ef.load(folder)
    assert frame.get_column("model").unique().to_list() == ["org__my-model"]


def test_real_gsm8k_file(shared_data):
    (path,) = (shared_data / "lm-eval-olot-fixture").glob("samples_gsm8k_*.jsonl")
    frame = ef.load(path)
    written = lines(path)
    assert frame.get_column("task").unique().to_list() == ["gsm8k"]
    assert frame.get_column("model").unique().to_list() == ["lm-eval-olot-fixture"]
    assert frame.get_column("sample_id").to_list() == [0, 1, 2]
    assert frame.get_column("filter").unique().to_list() == ["strict-match"]
    assert frame.get_column("prediction").to_list() == ["[invalid]"] * 3
    assert frame.get_column("gold").to_list() == [line["doc"]["answer"] for line in written]
    scored = ef.score(frame, ["exact_match"])
    assert scored.get_column("exact_match").to_list() == [line["exact_match"] for line in written]


def _older(line: dict) -> dict:
    """A line as lm-eval wrote it before 0.4.3: list-form arguments, unsanitised responses."""
    old = dict(line)
    old["arguments"] = [list(args.values()) for args in line["arguments"].values()]
    if isinstance(line["filtered_resps"][0], list):
        old["filtered_resps"] = [[float(ll), flag == "True"] for ll, flag in line["filtered_resps"]]
        old["resps"] = [[[float(ll), flag == "True"]] for [[ll, flag]] in line["resps"]]
        old["target"] = int(line["target"])
    return old


def test_older_list_form(tmp_path):
    modern = samples("ef-fixture-lm", "ef_mc")
    path = tmp_path / modern.name
    path.write_text("".join(json.dumps(_older(line)) + "\n" for line in lines(modern)))
    old, new = ef.load(path), ef.load(modern)
    for column in ("choices", "choice_logprobs", "is_greedy", "gold_index", "harness.acc"):
        assert old.get_column(column).to_list() == new.get_column(column).to_list()
    assert old.get_column("arguments").to_list()[0] == [
        list(args.values()) for args in lines(modern)[0]["arguments"].values()
    ]
    generated = samples("ef-fixture-lm", "ef_gen")
    path = tmp_path / generated.name
    path.write_text("".join(json.dumps(_older(line)) + "\n" for line in lines(generated)))
    assert ef.load(path).get_column("prediction").to_list() == (
        ef.load(generated).get_column("prediction").to_list()
    )


def test_gzip(tmp_path):
    source = samples("lm-eval-dummy", "ef_gen")
    path = tmp_path / (source.name + ".gz")
    path.write_bytes(gzip.compress(source.read_bytes()))
    frame = ef.load(path)
    assert frame.get_column("task").unique().to_list() == ["ef_gen"]
    assert frame.height == 30


def test_empty_files(tmp_path):
    path = tmp_path / "samples_ef_mc_2024-01-01T00-00-00.1.jsonl"
    path.write_text("")
    with pytest.raises(EvalframeError, match="samples_ef_mc.*empty"):
        ef.load(path)
    path.write_text("\n\n")
    frame = ef.load(path, format="lm_eval")
    assert frame.height == 0
    assert frame.schema["task"] == pl.String and "model" in frame.columns


def test_missing_key_is_named(tmp_path):
    path = tmp_path / "samples_ef_mc_2024-01-01T00-00-00.1.jsonl"
    rows = lines(samples("lm-eval-dummy", "ef_mc"))
    path.write_text("".join(json.dumps({k: v for k, v in r.items() if k != "filtered_resps"}) + "\n"
                            for r in rows))  # fmt: skip
    with pytest.raises(EvalframeError, match="samples_ef_mc.*'filtered_resps'.*12 line"):
        ef.load(path, format="lm_eval")
    # not recognised on its own: read as a plain table
    assert "filtered_resps" not in ef.load(path).columns
    assert "choices" not in ef.load(path).columns


def test_bad_log_likelihood_is_named(tmp_path):
    path = tmp_path / "samples_ef_mc_2024-01-01T00-00-00.1.jsonl"
    rows = lines(samples("lm-eval-dummy", "ef_mc"))
    rows[4]["filtered_resps"][1][0] = "oops"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    with pytest.raises(EvalframeError, match="not a number on 1 row\\(s\\), first row 4"):
        ef.load(path)


def test_plain_table_is_not_a_samples_file(tmp_path):
    path = tmp_path / "samples_mine_2024-01-01T00-00-00.1.jsonl"
    path.write_text('{"doc_id": 0, "target": "a", "prediction": "a"}\n')
    assert ef.load(path).columns == ["doc_id", "target", "prediction"]
