"""The ``mtbench_pair``, ``mtbench_single`` and ``mtbench_questions`` layouts on FastChat's files.

Expected values come from the raw files parsed with ``json`` here and from FastChat's own rules
(``fastchat/llm_judge``): ``common.run_judge_pair`` reads a judgment whose output format is
``[[A]]`` (``pair-v2``, ``pair-math-v1``) as ``"A"`` if ``[[A]]`` is in the text, else ``"B"``
for ``[[B]]``, ``"tie"`` for ``[[C]]``, else ``"error"``; ``play_a_match_pair`` maps game 1's
A/B to ``model_1``/``model_2`` and game 2's (answers swapped) to ``model_2``/``model_1``;
``show_result.display_result_pairwise`` drops a row where either game is ``"error"``, counts a
tie or two games that disagree as a tie for both models, and reports ``win_rate`` = wins / all
and ``win_rate_adjusted`` = (wins + ties / 2) / all; ``display_result_single`` drops
``score == -1`` and averages per model and turn. Row counts are from ``SOURCES.md`` section 7.
"""

from __future__ import annotations

import gzip
import json
import warnings
from collections import Counter

import polars as pl
import pytest

import evalframe as ef
from evalframe import EvalframeError

PAIR = {
    "question_id": 81,
    "model_1": "model-x",
    "model_2": "model-y",
    "g1_winner": "model_1",
    "g2_winner": "model_1",
    "judge": ["gpt-4", "pair-v2"],
    "g1_user_prompt": "[User Question]\n...",
    "g1_judgment": "Final verdict: [[A]]",
    "g2_user_prompt": "[User Question]\n...",
    "g2_judgment": "Final verdict: [[B]]",
    "turn": 1,
    "tstamp": 1717231244.69,
}
SINGLE = {
    "question_id": 81,
    "model": "model-x",
    "judge": ["gpt-4", "single-v1"],
    "user_prompt": "[Instruction]\n...",
    "judgment": "Rating: [[9]]",
    "score": 9,
    "turn": 1,
    "tstamp": 1717245894.03,
}
QUESTION = {"question_id": 81, "category": "writing", "turns": ["Write a post.", "Shorter."]}


def folder(shared_data):
    return shared_data / "mtbench-fastchat-fork"


def raw_lines(path) -> list[dict]:
    return [json.loads(line) for line in gzip.decompress(path.read_bytes()).splitlines() if line]


def fastchat_winner(judgment: str) -> str:
    """``run_judge_pair`` for the ``[[A]]`` output format."""
    if "[[A]]" in judgment:
        return "A"
    if "[[B]]" in judgment:
        return "B"
    if "[[C]]" in judgment:
        return "tie"
    return "error"


def write_lines(tmp_path, records, name) -> object:
    path = tmp_path / name
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in records) + "\n")
    return path


# ---------------------------------------------------------------- pairwise judgments


def test_pair_verdicts_follow_the_judges_text(shared_data):
    path = folder(shared_data) / "gpt-4_pair.jsonl.gz"
    raw = raw_lines(path)
    frame = ef.load(path)
    assert frame.height == len(raw) == 75
    assert frame["sample_id"].to_list() == [r["question_id"] for r in raw]
    assert frame["judgment_ab"].to_list() == [r["g1_judgment"] for r in raw]
    assert frame["judgment_ba"].to_list() == [r["g2_judgment"] for r in raw]
    # Game 1 shows model_1 as A: its verdict is already in A/B terms. Game 2 shows model_2 as
    # A, so its "A" is a win of model_b ("B") and its "B" a win of model_a ("A").
    swap = {"A": "B", "B": "A", "tie": "tie", "error": "error"}
    assert frame["verdict_ab"].to_list() == [fastchat_winner(r["g1_judgment"]) for r in raw]
    assert frame["verdict_ba"].to_list() == [swap[fastchat_winner(r["g2_judgment"])] for r in raw]
    assert set(frame["model"]) == set(frame["model_a"]) == {"phi-3"}
    assert set(frame["model_b"]) == {"phi-3-dpo"}
    assert Counter(frame["judge_prompt"]) == {"pair-v2": 50, "pair-math-v1": 25}
    assert set(frame["judge"]) == {"gpt-4"}
    assert set(frame["turn"]) == {1}
    assert set(frame["task"]) == {"mt_bench"}


def test_pair_counts_against_the_raw_file(shared_data):
    raw = raw_lines(folder(shared_data) / "gpt-4_pair.jsonl.gz")
    frame = ef.load(folder(shared_data) / "gpt-4_pair.jsonl.gz")
    errors = sum("error" in (r["g1_winner"], r["g2_winner"]) for r in raw)
    ties = sum(r["g1_winner"] == r["g2_winner"] == "tie" for r in raw)
    inconsistent = sum(
        r["g1_winner"] != r["g2_winner"] and "error" not in (r["g1_winner"], r["g2_winner"])
        for r in raw
    )
    assert (errors, ties, inconsistent) == (2, 8, 27)
    verdicts = frame.select("verdict_ab", "verdict_ba")
    has_error = (pl.col("verdict_ab") == "error") | (pl.col("verdict_ba") == "error")
    assert verdicts.filter(has_error).height == errors
    assert (
        verdicts.filter((pl.col("verdict_ab") == "tie") & (pl.col("verdict_ba") == "tie")).height
        == ties
    )
    assert (
        verdicts.filter(~has_error & (pl.col("verdict_ab") != pl.col("verdict_ba"))).height
        == inconsistent
    )


def test_pair_rows_checked_by_hand(shared_data):
    frame = ef.load(folder(shared_data) / "gpt-4_pair.jsonl.gz")
    rows = {
        (row["sample_id"], row["judge_prompt"]): (row["verdict_ab"], row["verdict_ba"])
        for row in frame.iter_rows(named=True)
    }
    # 87: game 1 ends "Final Verdict: [[A]]" (phi-3 better), game 2 "it's a tie ... [[C]]".
    assert rows[87, "pair-v2"] == ("A", "tie")
    # 139: both games end "[[B]]": game 1's B is phi-3-dpo, game 2's B is phi-3 (swapped).
    assert rows[139, "pair-v2"] == ("B", "A")
    # 81: both games end "[[A]]": each game prefers whichever answer it showed first.
    assert rows[81, "pair-v2"] == ("A", "B")
    # 124: game 1 "[[A]]", game 2 "$ERROR$" (the API call failed); 125: both "$ERROR$".
    assert rows[124, "pair-math-v1"] == ("A", "error")
    assert rows[125, "pair-math-v1"] == ("error", "error")


def show_result_pairwise(raw: list[dict]) -> dict[str, dict[str, float]]:
    """``display_result_pairwise`` in plain Python (pairwise-all, no model list)."""
    counts: dict[str, Counter] = {}
    for r in raw:
        if r["g1_winner"] == "error" or r["g2_winner"] == "error":
            continue
        if r["g1_winner"] == "tie" or r["g1_winner"] != r["g2_winner"]:
            outcome = {r["model_1"]: "tie", r["model_2"]: "tie"}
        elif r["g1_winner"] == "model_1":
            outcome = {r["model_1"]: "win", r["model_2"]: "loss"}
        else:
            outcome = {r["model_2"]: "win", r["model_1"]: "loss"}
        for model, result in outcome.items():
            counts.setdefault(model, Counter())[result] += 1
    table = {}
    for model, c in counts.items():
        total = c["win"] + c["loss"] + c["tie"]
        table[model] = {
            "win_rate": c["win"] / total,
            "win_rate_adjusted": (c["win"] + 0.5 * c["tie"]) / total,
        }
    return table


def test_show_result_win_rates_from_the_verdict_columns(shared_data):
    path = folder(shared_data) / "gpt-4_pair.jsonl.gz"
    expected = show_result_pairwise(raw_lines(path))
    # The same rule on evalframe's columns: two agreeing verdicts decide, anything else
    # (a tie, or games that disagree) is a tie; a row with an error is left out.
    frame = ef.load(path).filter(
        (pl.col("verdict_ab") != "error") & (pl.col("verdict_ba") != "error")
    )
    agreed = pl.when(pl.col("verdict_ab") == pl.col("verdict_ba")).then(pl.col("verdict_ab"))
    outcome = agreed.fill_null("tie")
    for side, model in [("A", "phi-3"), ("B", "phi-3-dpo")]:
        row = frame.select(
            (outcome == side).mean().alias("win_rate"),
            ((outcome == side).cast(pl.Float64) + 0.5 * (outcome == "tie"))
            .mean()
            .alias("adjusted"),
        ).row(0)
        assert row[0] == pytest.approx(expected[model]["win_rate"], rel=1e-12)
        assert row[1] == pytest.approx(expected[model]["win_rate_adjusted"], rel=1e-12)


# ---------------------------------------------------------------- single grades


def test_single_mean_score_per_turn_as_show_result(shared_data):
    path = folder(shared_data) / "gpt-4_single.jsonl.gz"
    raw = raw_lines(path)
    frame = ef.load(path)
    assert frame.height == len(raw) == 160
    assert frame["score_raw"].to_list() == [float(r["score"]) for r in raw]
    failures = sum(r["score"] == -1 for r in raw)
    assert failures == 0 == frame["score"].null_count()
    graded = [r for r in raw if r["score"] != -1]  # display_result_single's filter
    for turn in (1, 2):
        scores = [r["score"] for r in graded if r["turn"] == turn]
        assert len(scores) == 80
        mean = frame.filter(pl.col("turn") == turn)["score"].mean()
        assert mean == pytest.approx(sum(scores) / len(scores), rel=1e-12)
    assert frame["score"].mean() == pytest.approx(sum(r["score"] for r in graded) / len(graded))
    assert set(frame["model"]) == {"phi-3-dpo"}
    assert Counter(frame["judge_prompt"]) == {
        "single-v1": 50,
        "single-v1-multi-turn": 50,
        "single-math-v1": 30,
        "single-math-v1-multi-turn": 30,
    }


def test_a_parse_failure_is_a_null_score_and_kept_raw(tmp_path):
    scores = [9, -1, 7.5, 3, -1]
    lines = [{**SINGLE, "question_id": 81 + i, "score": s} for i, s in enumerate(scores)]
    path = write_lines(tmp_path, lines, "gpt-4_single.jsonl")
    frame = ef.load(path)
    assert frame["score_raw"].to_list() == [9.0, -1.0, 7.5, 3.0, -1.0]
    assert frame["score"].to_list() == [9.0, None, 7.5, 3.0, None]
    assert (frame["score_raw"] == -1).sum() == frame["score"].null_count() == 2
    assert frame["score"].mean() == pytest.approx((9 + 7.5 + 3) / 3)  # -1 left out


# ---------------------------------------------------------------- questions


def test_questions_are_reference_rows_that_join_on_sample_id(shared_data):
    path = folder(shared_data) / "question.jsonl.gz"
    raw = raw_lines(path)
    questions = ef.load(path)
    assert questions.height == len(raw) == 80
    assert questions["question"].to_list() == [r["turns"][0] for r in raw]
    assert questions["turns"].to_list() == [r["turns"] for r in raw]
    assert questions["reference"].null_count() == sum("reference" not in r for r in raw) == 41
    assert questions["category"].to_list() == [r["category"] for r in raw]
    levels = dict(ef.list_formats().select("format", "level").iter_rows())
    assert levels["mtbench_questions"] == "reference"
    pairs = ef.load(folder(shared_data) / "gpt-4_pair.jsonl.gz")
    joined = pairs.join(questions.select("sample_id", "question"), on="sample_id", how="left")
    assert joined["question"].null_count() == 0
    first = joined.filter(pl.col("sample_id") == 81)["question"][0]
    assert first.startswith("Compose an engaging travel blog post about a recent trip to Hawaii")


def test_the_folder_leaves_out_the_questions_but_never_mixes_two_kinds_of_judgment(shared_data):
    # pairwise verdicts and single grades are different things: not stacked as one table
    mixed = r"graded answers: .*pairwise judgments: "
    left_out = pytest.warns(UserWarning, match="left out 1 file")
    with left_out, pytest.raises(EvalframeError, match=mixed):
        ef.load(folder(shared_data))
    pairs = ef.load(str(folder(shared_data) / "*_pair.jsonl.gz"))
    assert pairs.height == 75
    assert pairs.filter(pl.col("verdict_ab").is_not_null()).height == 75


# ---------------------------------------------------------------- nasty cases


@pytest.mark.parametrize(
    ("name", "layout", "column"),
    [
        ("p.jsonl", "mtbench_pair", "verdict_ab"),
        ("s.jsonl", "mtbench_single", "score"),
        ("q.jsonl", "mtbench_questions", "question"),
        ("p.json", "mtbench_pair", "verdict_ab"),
    ],
)
def test_zero_records(tmp_path, name, layout, column):
    path = tmp_path / name
    path.write_text("\n\n" if name.endswith("jsonl") else "[ ]")
    frame = ef.load(path, format=layout)
    assert frame.height == 0 and column in frame.columns
    with pytest.raises(EvalframeError, match="no JSON records"):
        ef.load(path)


def test_zero_record_files_stack_with_real_ones(tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    full = write_lines(tmp_path, [{**PAIR, "question_id": "arena-1"}], "full.jsonl")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        frame = ef.load([empty, full], format="mtbench_pair")
    assert frame["sample_id"].to_list() == ["arena-1"]


def test_unicode_survives(tmp_path):
    text = "判断: 回答Aの方が良い 🎯 — [[A]]"
    path = write_lines(tmp_path, [{**PAIR, "g1_judgment": text, "model_2": "modèle-ü"}], "p.jsonl")
    frame = ef.load(path)
    assert frame["judgment_ab"].to_list() == [text]
    assert frame["model_b"].to_list() == ["modèle-ü"]
    question = {**QUESTION, "turns": ["衣带渐宽终不悔", "Ich verstehe nur Bahnhof"]}
    questions = ef.load(write_lines(tmp_path, [question], "q.jsonl"))
    assert questions["question"].to_list() == ["衣带渐宽终不悔"]


def test_missing_key_under_a_forced_format_names_file_key_and_expected(tmp_path):
    lacking = {key: value for key, value in PAIR.items() if key != "g2_winner"}
    path = write_lines(tmp_path, [lacking], "p.jsonl")
    with pytest.raises(EvalframeError) as error:
        ef.load(path, format="mtbench_pair")
    message = str(error.value)
    assert str(path) in message
    assert "no line has key 'g2_winner'" in message
    assert "question_id, model_1, model_2, g1_winner, g2_winner, judge" in message
    path = write_lines(tmp_path, [SINGLE, {**SINGLE, "model": None}], "s.jsonl")
    with pytest.raises(
        EvalframeError, match=r"1 line\(s\) have no 'model' \(or null\), first line 2"
    ):
        ef.load(path, format="mtbench_single")
    path = write_lines(tmp_path, [{"question_id": 1, "category": "x"}], "q.jsonl")
    with pytest.raises(EvalframeError, match="no line has key 'turns'"):
        ef.load(path, format="mtbench_questions")


def test_wrong_values_are_named(tmp_path):
    path = write_lines(tmp_path, [PAIR, {**PAIR, "g2_winner": "inconsistent"}], "p.jsonl")
    with pytest.raises(EvalframeError, match="1 row.* 'g2_winner' .* first row 1: 'inconsistent'"):
        ef.load(path, format="mtbench_pair")
    path = write_lines(tmp_path, [{**PAIR, "judge": ["gpt-4"]}], "p.jsonl")
    with pytest.raises(EvalframeError, match=r"not a \[model, prompt\] pair, first row 0"):
        ef.load(path, format="mtbench_pair")
    path = write_lines(tmp_path, [{**SINGLE, "score": "9"}], "s.jsonl")
    with pytest.raises(EvalframeError, match="'score' is String; expected numbers"):
        ef.load(path, format="mtbench_single")
    path = write_lines(tmp_path, [{**SINGLE, "judge_prompt": "x"}], "s.jsonl")
    with pytest.raises(EvalframeError, match=r"already has column\(s\) \['judge_prompt'\]"):
        ef.load(path)


def test_plain_tables_with_some_of_these_names_are_not_detected(tmp_path):
    cases = {
        # a user's own grades: judge is a name, not FastChat's [model, prompt] pair
        "grades.jsonl": {
            "question_id": 1,
            "model": "m",
            "judge": "gpt-4",
            "score": 9,
            "judgment": "ok",
            "turn": 1,
        },
        # a pairwise table without the two games
        "duel.jsonl": {
            "question_id": 1,
            "model_1": "a",
            "model_2": "b",
            "winner": "model_1",
            "judge": ["gpt-4", "pair-v2"],
        },
        # a question file of another layout (extra keys)
        "arena.jsonl": {"question_id": "x", "category": "c", "turns": ["q"], "cluster": 3},
        # winners that FastChat does not write
        "votes.jsonl": {**PAIR, "g1_winner": "A", "g2_winner": "B"},
    }
    for name, record in cases.items():
        frame = ef.load(write_lines(tmp_path, [record], name))
        assert frame.columns == list(record), name
    csv = tmp_path / "pair.csv"
    pl.DataFrame([{k: v for k, v in PAIR.items() if k != "judge"}]).write_csv(csv)
    assert "verdict_ab" not in ef.load(csv).columns
