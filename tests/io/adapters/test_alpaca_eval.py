"""The ``alpaca_eval`` and ``alpaca_eval_outputs`` layouts, on AlpacaEval's own result files.

Row counts come from ``shared/data/SOURCES.md`` (section 1). Win rates are computed in the test
with numpy from the raw preferences, with AlpacaEval's formula: ``metrics/winrate.py``
``get_winrate`` reports ``AbsoluteScoringRule().describe_head2head(preferences)`` and, as
``discrete_win_rate``, ``ZeroOneScoringRule().describe_head2head(preferences)["win_rate"]``
(``metrics/helpers.py``): preferences with 0 replaced by 1.5 (the zero-one rule first replaces
1.5 by 0 and rounds), kept where ``1 <= p <= 2``, minus 1; ``win_rate`` is their mean x 100,
``n_wins`` counts ``p - 1 > 0.5``, ``n_wins_base`` counts ``p - 1 < 0.5``, ``n_draws`` counts
``p == 1.5``.
"""

from __future__ import annotations

import gzip
import json
import warnings

import numpy as np
import polars as pl
import pytest

import evalframe as ef
from evalframe import EvalframeError

#: SOURCES.md section 1: annotator -> model directory -> rows.
COUNTS = {
    "weighted_alpaca_eval_gpt4_turbo": {
        "alpaca-7b": 805,
        "text_davinci_001": 803,
        "gpt-3.5-turbo-1106": 805,
        "claude-2.1": 805,
        "FuseChat-Llama-3.2-1B-Instruct": 805,
        "FuseChat-Gemma-2-9B-Instruct": 805,
        "NullModel": 805,
        "gpt4_1106_preview": 805,
    },
    "alpaca_eval_gpt4": {"alpaca-7b": 805, "gpt4": 805, "llama-2-7b-chat-hf": 805},
}
FILES = [(annotator, model) for annotator, models in COUNTS.items() for model in models]

RECORD = {
    "instruction": "Name a colour.",
    "output_1": "Red.",
    "generator_1": "baseline-model",
    "output_2": "Blue.",
    "generator_2": "my-model",
    "annotator": "some_annotator",
    "preference": 2.0,
}


def annotation_path(shared_data, annotator, model):
    return shared_data / "alpaca_eval" / model / annotator / "annotations.json.gz"


def raw_records(path) -> list[dict]:
    return json.loads(gzip.decompress(path.read_bytes()))


def alpaca_eval_rates(preferences: list[float | None]) -> dict[str, float]:
    """``get_winrate``'s numbers, with numpy, following ``describe_head2head`` line by line."""
    p = np.array([np.nan if value is None else value for value in preferences], dtype=float)
    absolute = np.where(p == 0, 1.5, p)  # preprocess_predictions: replace({0: 1.5})
    kept = absolute[(absolute >= 1) & (absolute <= 2)] - 1  # validate_alpacaeval_preference
    zero_one = np.round(np.where(p == 1.5, 0, p))  # replace({1.5: 0}).round(): half to even
    zero_one = np.where(zero_one == 0, 1.5, zero_one)  # then replace({0.0: 1.5})
    discrete = zero_one[(zero_one >= 1) & (zero_one <= 2)] - 1
    return {
        "win_rate": kept.mean() * 100,
        "discrete_win_rate": discrete.mean() * 100,
        "n_wins": int((kept > 0.5).sum()),
        "n_wins_base": int((kept < 0.5).sum()),
        "n_draws": int((absolute == 1.5).sum()),
        "n_total": len(kept),
    }


def write(tmp_path, records, name="annotations.json"):
    path = tmp_path / name
    path.write_text(json.dumps(records, ensure_ascii=False), encoding="utf-8")
    return path


# ---------------------------------------------------------------- real files


@pytest.mark.parametrize(("annotator", "model"), FILES)
def test_each_annotation_file_matches_the_sources_and_alpaca_evals_win_rate(
    shared_data, annotator, model
):
    path = annotation_path(shared_data, annotator, model)
    frame = ef.load(path)
    raw = raw_records(path)
    assert frame.height == len(raw) == COUNTS[annotator][model]
    assert frame.schema["preference"] == pl.Float64
    # Every value as the file holds it, in the file's order.
    assert frame["preference"].to_list() == [float(r["preference"]) for r in raw]
    assert frame["sample_id"].to_list() == [r["instruction"] for r in raw]
    assert frame["question"].to_list() == [r["instruction"] for r in raw]
    assert frame["answer_a"].to_list() == [r["output_1"] for r in raw]
    assert frame["answer_b"].to_list() == [r["output_2"] for r in raw]
    # The leaderboard's name: the results folder (NullModel's generator_2 is "example").
    assert set(frame["model"]) == set(frame["model_b"]) == {model}
    assert frame["generator_2"].to_list() == [r["generator_2"] for r in raw]
    assert set(frame["baseline"]) == set(frame["model_a"]) == {r["generator_1"] for r in raw}
    assert set(frame["judge"]) == {annotator}
    assert set(frame["task"]) == {"alpaca_eval"}
    assert frame["verdict_ba"].null_count() == frame.height

    expected = alpaca_eval_rates([r["preference"] for r in raw])
    verdicts = frame["verdict_ab"]
    assert frame["harness.win_rate"].mean() * 100 == pytest.approx(expected["win_rate"], rel=1e-12)
    assert frame["harness.discrete_win_rate"].mean() * 100 == pytest.approx(
        expected["discrete_win_rate"], rel=1e-12
    )
    assert (verdicts == "B").sum() == expected["n_wins"]
    assert (verdicts == "A").sum() == expected["n_wins_base"]
    assert (verdicts == "tie").sum() == expected["n_draws"]
    assert (verdicts != "error").sum() == expected["n_total"]
    # The discrete win rate from the verdicts alone (a draw is half a win).
    judged = frame.filter(pl.col("verdict_ab") != "error")
    from_verdicts = (judged["verdict_ab"] == "B").mean() + 0.5 * (
        judged["verdict_ab"] == "tie"
    ).mean()
    assert from_verdicts * 100 == pytest.approx(expected["discrete_win_rate"], rel=1e-12)


@pytest.mark.slow
def test_every_annotation_file_stacks_in_one_load(shared_data):
    paths = [annotation_path(shared_data, annotator, model) for annotator, model in FILES]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no column left out, no dtype widened
        frame = ef.load(paths)
    assert frame.height == 10 * 805 + 803
    assert frame.schema["preference"] == pl.Float64
    assert frame.schema["raw_completion"] == pl.String
    assert frame.schema["datasplit"] == pl.String  # NullModel's extra column, null elsewhere
    assert frame.group_by("model", "judge").len().height == len(FILES)
    # raw_completion is the judge's raw answer as JSON text: json.loads gives the object back.
    raw = raw_records(paths[0])  # alpaca-7b, weighted annotator
    texts = frame.filter(
        (pl.col("model") == "alpaca-7b") & (pl.col("judge") == "weighted_alpaca_eval_gpt4_turbo")
    )["raw_completion"].to_list()
    assert [None if t is None else json.loads(t) for t in texts] == [
        r.get("raw_completion") for r in raw
    ]
    assert sum(t is None for t in texts) == 3  # the 3 draws have no completion
    # Files without the key (FuseChat, AlpacaEval 1) have null there.
    fuse = frame.filter(pl.col("model") == "FuseChat-Gemma-2-9B-Instruct")
    assert fuse["raw_completion"].null_count() == 805


def test_baseline_against_itself_is_all_draws(shared_data):
    frame = ef.load(
        annotation_path(shared_data, "weighted_alpaca_eval_gpt4_turbo", "gpt4_1106_preview")
    )
    assert frame["preference"].unique().to_list() == [1.5]
    assert frame["verdict_ab"].unique().to_list() == ["tie"]
    assert frame["harness.win_rate"].mean() == 0.5
    assert frame["harness.discrete_win_rate"].mean() == 0.5
    assert (frame["model"] == frame["baseline"]).all()


def test_draws_of_both_encodings(shared_data):
    # SOURCES.md: alpaca-7b (AlpacaEval 2) has 3 draws, FuseChat-Gemma-2-9B 5 draws (1.5).
    for model, draws in [("alpaca-7b", 3), ("FuseChat-Gemma-2-9B-Instruct", 5)]:
        path = annotation_path(shared_data, "weighted_alpaca_eval_gpt4_turbo", model)
        assert (ef.load(path)["verdict_ab"] == "tie").sum() == draws
    # AlpacaEval 1 writes 0 for a draw: each 0 of the raw file is a tie worth half a win.
    path = annotation_path(shared_data, "alpaca_eval_gpt4", "alpaca-7b")
    zeros = sum(r["preference"] == 0 for r in raw_records(path))
    frame = ef.load(path)
    draws = frame.filter(pl.col("preference") == 0)
    assert zeros == 16 and draws.height == zeros
    assert draws["verdict_ab"].unique().to_list() == ["tie"]
    assert draws["harness.win_rate"].unique().to_list() == [0.5]


def test_model_outputs_are_reference_rows(shared_data):
    folder = shared_data / "alpaca_eval"
    for path, count, model in [
        (folder / "alpaca-7b" / "model_outputs.json.gz", 805, "alpaca-7b"),
        (folder / "text_davinci_001" / "model_outputs.json.gz", 803, "text_davinci_001"),
        (folder / "NullModel" / "model_outputs.json.gz", 805, "NullModel"),
        # not in a results folder: the generator names the model
        (folder / "text_davinci_003_model_outputs.json.gz", 805, "text_davinci_003"),
    ]:
        raw = raw_records(path)
        frame = ef.load(path)
        assert frame.height == len(raw) == count
        assert frame["prediction"].to_list() == [r["output"] for r in raw]
        assert frame["model"].to_list() == [model] * count
        assert frame["generator"].to_list() == [r["generator"] for r in raw]
        assert frame["sample_id"].to_list() == [r["instruction"] for r in raw]
        assert frame["dataset"].to_list() == [r["dataset"] for r in raw]
    assert ef.load(folder / "NullModel" / "model_outputs.json.gz")["datasplit"].null_count() == 0
    levels = dict(ef.list_formats().select("format", "level").iter_rows())
    assert levels["alpaca_eval_outputs"] == "reference"
    assert levels["alpaca_eval"] == "samples"


@pytest.mark.slow
def test_a_results_folder_reads_the_annotations(shared_data):
    with pytest.warns(UserWarning, match="left out 11 file"):  # 10 model folders + text_davinci_003
        frame = ef.load(shared_data / "alpaca_eval")
    assert frame.height == 10 * 805 + 803
    assert "verdict_ab" in frame.columns


def test_outputs_pair_with_annotations_on_sample_id(shared_data):
    folder = shared_data / "alpaca_eval" / "text_davinci_001"
    outputs = ef.load(folder / "model_outputs.json.gz")
    judged = ef.load(folder / "weighted_alpaca_eval_gpt4_turbo" / "annotations.json.gz")
    joined = judged.join(outputs.select("sample_id", "prediction"), on="sample_id", how="left")
    assert joined.height == 803
    assert (joined["prediction"] == joined["answer_b"]).all()


# ---------------------------------------------------------------- preference encodings


def test_each_preference_value_counts_as_alpaca_eval_counts_it(tmp_path):
    values = [0, 1, 1.5, 2, None, 1.2, 1.8, 2.5, 0.6]
    records = [
        {**RECORD, "instruction": f"Question {i}?", "preference": value}
        for i, value in enumerate(values)
    ]
    frame = ef.load(write(tmp_path, records))
    # Derived from describe_head2head by hand: 0 -> 1.5 (draw); 2.5 and 0.6 fall outside
    # [1, 2] for the absolute rule; the zero-one rule rounds first (half to even), so 2.5 -> 2
    # (a win) and 0.6 -> 1 (a loss) still count there.
    assert frame["verdict_ab"].to_list() == [
        "tie",
        "A",
        "tie",
        "B",
        "error",
        "A",
        "B",
        "error",
        "error",
    ]
    wins = frame["harness.win_rate"].to_list()
    assert wins[4] is None and wins[7] is None and wins[8] is None
    assert [wins[i] for i in (0, 1, 2, 3)] == [0.5, 0.0, 0.5, 1.0]
    assert wins[5] == pytest.approx(0.2) and wins[6] == pytest.approx(0.8)
    assert frame["harness.discrete_win_rate"].to_list() == [
        0.5,
        0.0,
        0.5,
        1.0,
        None,
        0.0,
        1.0,
        1.0,
        0.0,
    ]
    expected = alpaca_eval_rates(values)
    assert frame["harness.win_rate"].mean() * 100 == pytest.approx(expected["win_rate"])
    assert frame["harness.discrete_win_rate"].mean() * 100 == pytest.approx(
        expected["discrete_win_rate"]
    )
    assert frame["preference"].to_list() == [0.0, 1.0, 1.5, 2.0, None, 1.2, 1.8, 2.5, 0.6]


def test_integer_and_float_files_stack_as_float(tmp_path):
    first = write(
        tmp_path,
        [{**RECORD, "preference": 2}, {**RECORD, "instruction": "Other?", "preference": 0}],
        "a.json",
    )
    second = write(tmp_path, [{**RECORD, "preference": 1.75}], "b.json")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        frame = ef.load([first, second])
    assert frame.schema["preference"] == pl.Float64
    assert frame["verdict_ab"].to_list() == ["B", "tie", "B"]


def test_raw_completions_of_any_shape_stack_as_json_text(tmp_path):
    paths = [
        write(
            tmp_path, [{**RECORD, "raw_completion": {"text": "m", "logprobs": [-0.1]}}], "a.json"
        ),
        write(tmp_path, [{**RECORD, "raw_completion": "Output (b)"}], "b.json"),
        write(tmp_path, [{**RECORD, "raw_completion": None}], "c.json"),
        write(tmp_path, [RECORD], "d.json"),
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        frame = ef.load(paths)
    assert frame["raw_completion"].to_list() == [
        '{"text": "m", "logprobs": [-0.1]}',
        '"Output (b)"',
        None,
        None,
    ]


def test_json_lines_and_plain_json(tmp_path):
    lines = tmp_path / "annotations.jsonl"
    lines.write_text(
        "\n".join(json.dumps({**RECORD, "instruction": f"Q{p}?", "preference": p}) for p in (1, 2))
        + "\n\n"
    )
    frame = ef.load(lines)
    assert frame["verdict_ab"].to_list() == ["A", "B"]
    assert frame["model"].to_list() == ["my-model", "my-model"]


# ---------------------------------------------------------------- nasty cases


def test_zero_records(tmp_path):
    path = write(tmp_path, [])
    frame = ef.load(path, format="alpaca_eval")
    assert frame.height == 0
    assert frame.schema["preference"] == pl.Float64
    assert frame.columns[:4] == ["sample_id", "question", "model", "baseline"]
    outputs = ef.load(write(tmp_path, [], "model_outputs.json"), format="alpaca_eval_outputs")
    assert outputs.height == 0 and "prediction" in outputs.columns
    # Detection needs a record to look at: an empty list is no layout.
    with pytest.raises(EvalframeError, match="no JSON records"):
        ef.load(path)


def test_unicode_survives(tmp_path):
    text = "¿Qué es 東京? — naïve 🗼\u200b"
    record = {**RECORD, "instruction": text, "output_2": "東京は日本の首都です 🎌"}
    record["raw_completion"] = {"text": "ß∑", "note": "Ω"}
    frame = ef.load(write(tmp_path, [record]))
    assert frame["sample_id"].to_list() == [text]
    assert frame["answer_b"].to_list() == ["東京は日本の首都です 🎌"]
    assert frame["raw_completion"].to_list() == ['{"text": "ß∑", "note": "Ω"}']


def test_missing_key_under_a_forced_format_names_file_key_and_expected(tmp_path):
    broken = {key: value for key, value in RECORD.items() if key != "preference"}
    path = write(tmp_path, [RECORD, broken, broken])
    with pytest.raises(EvalframeError) as error:
        ef.load(path, format="alpaca_eval")
    message = str(error.value)
    assert str(path) in message
    assert "record 2 (and 1 more) has no key 'preference'" in message
    assert "instruction, output_1, generator_1, output_2, generator_2, annotator, preference" in (
        message
    )
    outputs = write(tmp_path, [{"instruction": "x", "output": "y"}], "model_outputs.json")
    with pytest.raises(EvalframeError, match="record 1 has no key 'generator'"):
        ef.load(outputs, format="alpaca_eval_outputs")


def test_wrong_values_are_named(tmp_path):
    path = write(tmp_path, [RECORD, {**RECORD, "preference": "2"}])
    with pytest.raises(EvalframeError, match=r"record 2 has 'preference' = '2'; expected a number"):
        ef.load(path, format="alpaca_eval")
    path = write(tmp_path, [{**RECORD, "generator_2": None}])
    with pytest.raises(EvalframeError, match=r"record 1 has 'generator_2' = None; expected text$"):
        ef.load(path, format="alpaca_eval")
    path = write(tmp_path, [{**RECORD, "model": "clash"}])
    with pytest.raises(EvalframeError, match=r"already has column\(s\) \['model'\]"):
        ef.load(path)
    csv = tmp_path / "annotations.csv"
    pl.DataFrame([RECORD]).write_csv(csv)
    with pytest.raises(EvalframeError, match="it is a csv file"):
        ef.load(csv, format="alpaca_eval")


def test_plain_tables_with_some_of_these_names_are_not_detected(tmp_path):
    # No generators, no annotator: a user's own preference table.
    partial = [{"instruction": "a", "output_1": "b", "output_2": "c", "preference": 1}]
    assert ef.load(write(tmp_path, partial, "mine.json")).columns == list(partial[0])
    # Alpaca training data (instruction, input, output) and outputs with other fields.
    alpaca = [{"instruction": "a", "input": "", "output": "b"}]
    assert ef.load(write(tmp_path, alpaca, "alpaca.json")).columns == list(alpaca[0])
    scored = [{"instruction": "a", "output": "b", "generator": "g", "score": 3}]
    assert ef.load(write(tmp_path, scored, "scored.json")).columns == list(scored[0])
    # A CSV with every annotation column is a table: AlpacaEval writes JSON.
    csv = tmp_path / "annotations.csv"
    pl.DataFrame([RECORD]).write_csv(csv)
    assert ef.load(csv).columns == list(RECORD)
    # A preference that is text is not AlpacaEval's.
    texty = [{**RECORD, "preference": "model_2"}]
    assert ef.load(write(tmp_path, texty, "texty.json")).columns == list(RECORD)
