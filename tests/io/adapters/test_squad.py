"""SQuAD's official formats, and the leaderboard predictions scored against the dev answers.

The expected numbers come from the SQuAD 2.0 official functions as ``transformers`` ships them
(``compute_exact``, ``compute_f1``, ``normalize_answer``), applied per question in the test,
with each official script's rule for a question without a prediction: v1.1 scores it 0 and
divides by every dataset question; v2.0 skips it (every v2.0 file here answers them all).
"""

from __future__ import annotations

import json
import subprocess
import sys
import warnings

import polars as pl
import pytest

import evalframe as ef
from evalframe import EvalframeError

squad_metrics = pytest.importorskip(
    "transformers.data.metrics.squad_metrics", reason="transformers is not installed"
)


def official_scores(answers: list[str], prediction: str) -> tuple[int, float]:
    golds = [answer for answer in answers if squad_metrics.normalize_answer(answer)] or [""]
    exact = max(squad_metrics.compute_exact(gold, prediction) for gold in golds)
    f1 = max(squad_metrics.compute_f1(gold, prediction) for gold in golds)
    return exact, f1


def official_v1(dev: list[dict], predictions: dict[str, str]) -> tuple[float, float, list]:
    rows, exact_sum, f1_sum = [], 0.0, 0.0
    for question in dev:
        if question["id"] not in predictions:  # "Unanswered question will receive score 0."
            continue
        exact, f1 = official_scores(question["answers"], predictions[question["id"]])
        rows.append((question["id"], float(exact), f1))
        exact_sum += exact
        f1_sum += f1
    return exact_sum / len(dev), f1_sum / len(dev), rows


def read_dev(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def quiet_score(*args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ef.score(*args, **kwargs)


@pytest.mark.slow
@pytest.mark.parametrize("version", ["v1.1", "v2.0"])
def test_leaderboard_predictions_match_the_official_functions(shared_data, version):
    folder = shared_data / "squad-explorer"
    dev_path = folder / f"dev-{version}-answers.jsonl"
    dev = read_dev(dev_path)
    files = sorted((folder / f"predictions-{version}").glob("*.json"))
    if version == "v1.1":
        # The v1.1 script keeps every gold, v2.0's drops those normalising to "": three v1.1
        # questions hold the gold ".". The two rules differ only for a prediction that
        # normalises to "" there (v1.1: EM 1, F1 0), which no leaderboard file makes.
        normalize = squad_metrics.normalize_answer
        empty_gold = {q["id"] for q in dev if not all(map(normalize, q["answers"]))}
        assert len(empty_gold) == 3
        for path in files:
            predictions = json.loads(path.read_text(encoding="utf-8"))
            assert all(normalize(predictions.get(i, "x")) for i in empty_gold)
    scored = quiet_score(
        [str(path) for path in files], ["squad_em", "squad_f1"], gold=dev_path, on="id"
    )
    table = ef.aggregate(scored, by=["model"]).sort("model", "metric")
    for path in files:
        predictions = json.loads(path.read_text(encoding="utf-8"))
        exact, f1, rows = official_v1(dev, predictions)
        mine = scored.filter(pl.col("model") == path.stem, pl.col("gold").is_not_null())
        expected = pl.DataFrame(rows, schema=["id", "em", "f1"], orient="row")
        joined = expected.join(mine, on="id", how="left")
        assert joined["squad_em"].to_list() == joined["em"].to_list()
        assert joined["squad_f1"].to_list() == joined["f1"].to_list()
        got = table.filter(pl.col("model") == path.stem)
        em_row = got.filter(pl.col("metric") == "squad_em").row(0, named=True)
        f1_row = got.filter(pl.col("metric") == "squad_f1").row(0, named=True)
        assert em_row["value"] == pytest.approx(exact, rel=1e-12)
        assert f1_row["value"] == pytest.approx(f1, rel=1e-12)
        assert em_row["n"] == len(dev)
        assert em_row["n_missing"] == sum(1 for q in dev if q["id"] not in predictions)
        ids = {q["id"] for q in dev}
        assert em_row["n_null"] == sum(1 for key in predictions if key not in ids)


def test_the_baseline_file_reports_its_missing_and_unknown_ids(shared_data):
    folder = shared_data / "squad-explorer"
    path = folder / "predictions-v1.1" / "Logistic_Regression_Baseline_Stanford_University.json"
    with pytest.warns(UserWarning) as caught:
        scored = ef.score(path, ["squad_em"], gold=folder / "dev-v1.1-answers.jsonl", on="id")
    message = str(caught[0].message)
    assert message.startswith("13 of 10570 gold key(s) have no prediction")
    assert "28 prediction(s) have a key the golds do not hold" in message
    assert scored.height == 10570 + 28
    assert scored["prediction"].null_count() == 13
    assert scored["gold"].null_count() == 28
    # missing="exclude" scores only the answered questions (SQuAD v2.0's script's rule)
    excluded = ef.aggregate(scored, missing="exclude").row(0, named=True)
    answered = scored.filter(pl.col("prediction").is_not_null(), pl.col("gold").is_not_null())
    assert excluded["n"] == answered.height == 10570 - 13
    assert excluded["value"] == pytest.approx(answered["squad_em"].mean(), rel=1e-12)


@pytest.mark.subprocess
def test_the_command_line_scores_predictions_against_the_dev_answers(shared_data, tmp_path):
    folder = shared_data / "squad-explorer"
    prediction = folder / "predictions-v2.0" / "BERT_single_model_Google_AI_Language.json"
    out = tmp_path / "scored.parquet"
    command = [sys.executable, "-m", "evalframe", "score", str(prediction), "-m", "squad_f1",
               "--gold", str(folder / "dev-v2.0-answers.jsonl"), "--on", "id", "-o", str(out)]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert "warning" not in done.stderr  # every question answered, no unknown id
    dev = read_dev(folder / "dev-v2.0-answers.jsonl")
    predictions = json.loads(prediction.read_text(encoding="utf-8"))
    _, f1, _ = official_v1(dev, predictions)
    assert pl.read_parquet(out)["squad_f1"].mean() == pytest.approx(f1, rel=1e-12)


def test_official_nested_dataset_file(tmp_path):
    article = {
        "title": "Ünïcode",
        "paragraphs": [
            {
                "context": "Paris — the capital.",
                "qas": [
                    {"id": "q1", "question": "Which city?",
                     "answers": [{"text": "Paris", "answer_start": 0},
                                 {"text": "Paris", "answer_start": 0}]},
                    {"id": "q2", "question": "Why?", "answers": [], "is_impossible": True,
                     "plausible_answers": [{"text": "capital", "answer_start": 12}]},
                ],
            }
        ],
    }
    dataset = tmp_path / "dev-v2.0.json"
    dataset.write_text(json.dumps({"version": "v2.0", "data": [article]}), encoding="utf-8")
    predictions = tmp_path / "preds.json"
    predictions.write_text(json.dumps({"q1": "paris", "q2": ""}), encoding="utf-8")
    loaded = ef.load(dataset)
    assert loaded.select("id", "title", "gold", "is_impossible").rows() == [
        ("q1", "Ünïcode", ["Paris", "Paris"], False),
        ("q2", "Ünïcode", [], True),
    ]
    assert loaded["plausible_answers"].to_list() == [[], ["capital"]]
    scored = ef.score(predictions, ["squad_em"], gold=dataset, on="id")
    # q1: "paris" normalises to the gold; q2: "" against no answer is the v2.0 match
    assert scored["squad_em"].to_list() == [1.0, 1.0]


def test_predictions_mapping_values_must_be_strings(tmp_path):
    path = tmp_path / "preds.json"
    path.write_text(json.dumps({"q1": "a", "q2": 3}), encoding="utf-8")
    with pytest.raises(EvalframeError, match="fits no harness layout"):
        ef.load(path)
    with pytest.raises(EvalframeError, match=r"1 id\(s\) map to a value that is not a string"):
        ef.load(path, format="squad_predictions")


def test_a_mapping_that_is_not_a_known_layout_is_never_one_wide_row(tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"lr": 0.1, "layers": [1, 2]}), encoding="utf-8")
    expected = r"config\.json': one JSON object \(keys 'lr', 'layers'\) that fits no harness layout"
    with pytest.raises(EvalframeError, match=expected):
        ef.load(path)


def test_a_plain_table_with_an_id_is_not_a_squad_layout(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text('{"id": "a", "answers": "x"}\n', encoding="utf-8")
    assert ef.load(path).columns == ["id", "answers"]
    forced = tmp_path / "f.jsonl"
    forced.write_text('{"id": "a", "question": "q", "answers": 3}\n', encoding="utf-8")
    assert ef.load(forced).columns == ["id", "question", "answers"]
    with pytest.raises(EvalframeError, match="column 'answers' is Int64; expected a list"):
        ef.load(forced, format="squad_answers")


def test_dataset_errors_name_the_question(tmp_path):
    path = tmp_path / "bad.json"
    article = {"title": "T", "paragraphs": [{"context": "c", "qas": [{"question": "q"}]}]}
    path.write_text(json.dumps({"data": [article]}), encoding="utf-8")
    with pytest.raises(EvalframeError, match=r"data\[0\]\.paragraphs\[0\]\.qas\[0\] has no 'id'"):
        ef.load(path)
