"""The ``arena_hard`` layout on hand-written Arena-Hard-Auto judgment files.

The fixtures under ``tests/fixtures/harness/arena_hard/model_judgment/<judge>/<model>.jsonl``
follow Arena-Hard-Auto v0.1's ``gen_judgment.py`` line for line: ``question_id, model, judge,
games``; ``games[0]`` shows the baseline's answer (``gpt-4-0314``, v0.1's baseline, not written
in the file) as Assistant A, ``games[1]`` the model's; each game is ``{user_prompt, judgment,
score}`` and ``score`` is the judgment's last label, null where ``get_score`` found none (here:
the judge wrote two different labels). ``tests/fixtures/harness/arena_hard_v2/`` holds one v2
file (``uid, category, judge, model, baseline``; games ``{score, judgment: {answer, ...},
prompt}``, one game null: the judge's API call failed).

Expected scores are worked out by hand below from Arena-Hard-Auto's ``show_result.py``:

- v2 ``load_judgments`` drops a line whose game is null or has a null score, maps each label to
  battles ``A>B: [1], A>>B: [1, 1, 1], A=B: [0.5], B>A: [0], B>>A: [0, 0, 0]`` (mirror
  spellings alike, ``weight`` 3) and gives the model ``label_to_score[games[1]] + [1 - s for s
  in label_to_score[games[0]]]``; the model's score is the mean of its battles.
- v0.1 ``get_battles_from_row`` keeps the other game of a line with an unparsed one.
"""

from __future__ import annotations

import gzip
import json
import math
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import polars as pl
import pytest

import evalframe as ef
from evalframe import EvalframeError
from evalframe.io.adapters.arena_hard import read_judgments
from evalframe.judge.policies import ArenaHard

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "harness"
TREE = FIXTURES / "arena_hard" / "model_judgment"
GPT4 = TREE / "gpt-4-1106-preview"
OPUS = TREE / "claude-3-opus-20240229"
V2 = FIXTURES / "arena_hard_v2" / "model_judgment" / "gpt-4.1" / "qwq-32b.jsonl"
Q1, Q2, Q3 = (
    "0122ab60646b4961bc39e9c03bdf6bcc",
    "3f85bf93f18343dbb17e228a214a3800",
    "5c5cb72f4d7b43caa476359c57e898de",
)

# The labels of the fixtures, (games[0], games[1]) per line:
#   gpt-4-1106-preview / gpt-3.5-turbo-0125:   Q1 A>>B, B>>A   Q2 A>B, A=B     Q3 A=B, A=B
#   gpt-4-1106-preview / llama-3-70b-instruct: Q1 A=B, A>B     Q2 B>A, null    Q3 A>>B, B>>A
#   gpt-4-1106-preview / gpt-4-0314:           Q1 A=B, A=B     Q2 A>B, A>B     (itself)
#   claude-3-opus-20240229 / gpt-3.5-turbo-0125: Q1 A>>B, B>A  Q2 A=B, A>B
#
# The model's battles (v2 rule: games[1] as written, games[0] as 1 - score):
#   gpt-3.5 (gpt-4 judge): Q1 [0,0,0] + [0,0,0]; Q2 [0.5] + [0]; Q3 [0.5] + [0.5]
#       -> 10 battles, sum 1.5, score 0.15
#   llama: Q1 [1] + [0.5]; Q2 dropped (null score); Q3 [0,0,0] + [0,0,0]
#       -> 8 battles, sum 1.5, score 0.1875
#       v0.1 keeps Q2's first game: B>A is a battle won by the model -> 9 battles, 2.5 / 9
#   gpt-4-0314 against itself: Q1 [0.5] + [0.5]; Q2 [1] + [0] -> 4 battles, 0.5
#   gpt-3.5 (opus judge): Q1 [0] + [0,0,0]; Q2 [1] + [0.5] -> 6 battles, sum 1.5, score 0.25
ARENA = {
    ("gpt-4-1106-preview", "gpt-3.5-turbo-0125"): (0.15, 10),
    ("gpt-4-1106-preview", "llama-3-70b-instruct"): (0.1875, 8),
    ("gpt-4-1106-preview", "gpt-4-0314"): (0.5, 4),
    ("claude-3-opus-20240229", "gpt-3.5-turbo-0125"): (0.25, 6),
}
# Verdicts in evalframe's terms (A = the model, B = the baseline): verdict_ab is games[1] as
# written (the model is Assistant A there), verdict_ba is games[0] swapped back.
#   gpt-3.5 (gpt-4 judge): Q1 B/B -> B; Q2 tie/B -> inconsistent; Q3 tie/tie -> tie
#   llama: Q1 A/tie -> inconsistent; Q2 error/A -> error; Q3 B/B -> B
#   gpt-4-0314: Q1 tie/tie -> tie; Q2 A/B -> inconsistent (the judge picked slot A twice)
#   gpt-3.5 (opus judge): Q1 B/B -> B; Q2 A/tie -> inconsistent
# Counts (wins_a, wins_b, ties, inconsistent, errors); the default policy's win_rate_a =
# (wins_a + (ties + inconsistent) / 2) / n_valid; position bias = decisive single verdicts
# that chose the first slot ("A" in verdict_ab, "B" in verdict_ba) / all decisive ones.
#   gpt-3.5 (gpt-4): (0, 1, 1, 1, 0), (0 + 1) / 3 = 1/3; decisive Q1 ab "B" (second),
#       Q1 ba "B" (first), Q2 ba "B" (first) -> 2 / 3
#   llama: (0, 1, 0, 1, 1), 0.5 / 2 = 0.25; decisive Q1 ab (first), Q2 ba "A" (second),
#       Q3 ab "B" (second), Q3 ba "B" (first) -> 2 / 4
#   gpt-4-0314: (0, 0, 1, 1, 0), 1 / 2 = 0.5; Q2 ab "A", ba "B": both first -> 1.0
#   gpt-3.5 (opus): (0, 1, 0, 1, 0), 0.5 / 2 = 0.25; Q1 ab "B" (second), ba "B" (first),
#       Q2 ab "A" (first) -> 2 / 3
DEFAULT = {
    ("gpt-4-1106-preview", "gpt-3.5-turbo-0125"): ((0, 1, 1, 1, 0), 1 / 3, 2 / 3),
    ("gpt-4-1106-preview", "llama-3-70b-instruct"): ((0, 1, 0, 1, 1), 0.25, 0.5),
    ("gpt-4-1106-preview", "gpt-4-0314"): ((0, 0, 1, 1, 0), 0.5, 1.0),
    ("claude-3-opus-20240229", "gpt-3.5-turbo-0125"): ((0, 1, 0, 1, 0), 0.25, 2 / 3),
}
COUNTS = ("wins_a", "wins_b", "ties", "inconsistent", "errors")

GAME = {"user_prompt": "<|User Prompt|>\n…", "judgment": "\nFine. [[A=B]]", "score": "A=B"}
LINE = {"question_id": "q1", "model": "m", "judge": "j", "games": [GAME, GAME]}
V2_GAME = {
    "score": "A>B",
    "judgment": {"answer": "… [[A>B]]"},
    "prompt": [{"role": "system", "content": "Please act as…"}, {"role": "user", "content": "…"}],
}


def raw_lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def write_lines(path: Path, records: list[object]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), "utf-8")
    return path


def by_group(table: pl.DataFrame) -> dict[tuple[str, str], dict]:
    return {(row["judge"], row["model"]): row for row in table.iter_rows(named=True)}


# ---------------------------------------------------------------- one file


def test_one_file_keeps_both_games_as_written():
    path = GPT4 / "gpt-3.5-turbo-0125.jsonl"
    raw = raw_lines(path)
    frame = ef.load(path)
    assert frame.height == len(raw) == 3
    assert frame["sample_id"].to_list() == [Q1, Q2, Q3] == [r["question_id"] for r in raw]
    # the _ab game is games[1] (the model shown first), the _ba game games[0]
    assert frame["judgment_ab"].to_list() == [r["games"][1]["judgment"] for r in raw]
    assert frame["judgment_ba"].to_list() == [r["games"][0]["judgment"] for r in raw]
    assert frame["user_prompt_ab"].to_list() == [r["games"][1]["user_prompt"] for r in raw]
    assert frame["user_prompt_ba"].to_list() == [r["games"][0]["user_prompt"] for r in raw]
    assert frame["label_ab"].to_list() == ["B>>A", "A=B", "A=B"]
    assert frame["label_ba"].to_list() == ["A>>B", "A>B", "A=B"]
    assert frame["verdict_ab"].to_list() == ["B", "tie", "tie"]
    assert frame["verdict_ba"].to_list() == ["B", "B", "tie"]
    assert frame["strength_ab"].to_list() == [3, 1, 1]
    assert frame["strength_ba"].to_list() == [3, 1, 1]
    assert frame["outcome"].to_list() == ["B", "inconsistent", "tie"]
    assert set(frame["model"]) == set(frame["model_a"]) == {"gpt-3.5-turbo-0125"}
    assert set(frame["baseline"]) == set(frame["model_b"]) == {"gpt-4-0314"}
    assert set(frame["judge"]) == {"gpt-4-1106-preview"}
    assert set(frame["task"]) == {"arena_hard"}
    assert frame.schema["strength_ab"] == pl.Int64
    assert "games" not in frame.columns


def test_the_model_is_assistant_a_of_the_ab_game():
    frame = ef.load(GPT4 / "llama-3-70b-instruct.jsonl")
    # Q3: llama's answer drops the conditioning on y; the model-first prompt shows it as A
    first = frame.filter(pl.col("sample_id") == Q3).row(0, named=True)
    shown_a = first["user_prompt_ab"].split("<|The Start of Assistant A's Answer|>\n")[1]
    assert shown_a.startswith("It assumes the features are mutually independent.")
    shown_a = first["user_prompt_ba"].split("<|The Start of Assistant A's Answer|>\n")[1]
    assert shown_a.startswith("Naïve Bayes assumes every feature is independent")
    # the judge preferred the baseline in both games: B>>A with the model first, A>>B after
    assert (first["label_ab"], first["label_ba"]) == ("B>>A", "A>>B")
    assert (first["verdict_ab"], first["verdict_ba"], first["outcome"]) == ("B", "B", "B")


def test_an_unparsed_verdict_is_kept_as_an_error():
    frame = ef.load(GPT4 / "llama-3-70b-instruct.jsonl")
    row = frame.filter(pl.col("sample_id") == Q2).row(0, named=True)
    assert row["label_ab"] is None and row["verdict_ab"] == "error"
    assert row["strength_ab"] is None
    assert "[[A>B]] for helpfulness" in row["judgment_ab"]  # the text is kept
    assert (row["label_ba"], row["verdict_ba"], row["outcome"]) == ("B>A", "A", "error")
    assert frame.height == 3


def test_unicode_survives():
    frame = ef.load(GPT4 / "gpt-3.5-turbo-0125.jsonl")
    row = frame.filter(pl.col("sample_id") == Q2).row(0, named=True)
    assert "„Der frühe Vogel fängt den Wurm.“" in row["user_prompt_ab"]
    assert "早起的鸟儿有虫吃" in row["judgment_ba"]
    llama = ef.load(GPT4 / "llama-3-70b-instruct.jsonl")
    assert "🚀" in llama["user_prompt_ab"][0]


# ---------------------------------------------------------------- scores


def test_arena_hard_scores_by_hand_on_the_tree():
    table = ef.judge.report(TREE, by=["judge", "model"], policy="arena_hard")
    got = by_group(table)
    assert set(got) == set(ARENA)
    for key, (score, battles) in ARENA.items():
        assert got[key]["win_rate_a"] == pytest.approx(score, abs=1e-15), key
        assert got[key]["n_battles"] == battles, key
    assert got[("gpt-4-1106-preview", "llama-3-70b-instruct")]["errors"] == 1


def test_the_v01_rule_keeps_the_parsed_game():
    table = ef.judge.report(GPT4, by="model", policy=ArenaHard(unparsed="game"))
    row = table.filter(pl.col("model") == "llama-3-70b-instruct").row(0, named=True)
    assert row["win_rate_a"] == pytest.approx(2.5 / 9, abs=1e-15)
    assert row["n_battles"] == 9


def test_counts_default_win_rate_and_position_bias_by_hand():
    got = by_group(ef.judge.report(TREE, by=["judge", "model"]))
    for key, (counts, win_rate, bias) in DEFAULT.items():
        row = got[key]
        assert tuple(row[name] for name in COUNTS) == counts, key
        assert row["n_valid"] == sum(counts) - counts[-1]
        assert row["win_rate_a"] == pytest.approx(win_rate, abs=1e-15), key
        assert row["position_bias"] == pytest.approx(bias, abs=1e-15), key


def test_ratings_read_the_outcomes_directly():
    table = ef.judge.ratings(GPT4, anchor="gpt-4-0314", bootstrap=0)
    rows = {row["model"]: row for row in table.iter_rows(named=True)}
    assert rows["gpt-4-0314"]["rating"] == 1000
    # against the baseline: gpt-3.5 1 loss 2 ties (score 1/3), llama 1 loss 1 tie (0.25);
    # the baseline's games against itself are left out. Bradley-Terry with one opponent
    # fits the observed share: rating = 1000 + 400 log10(s / (1 - s))
    for model, share in (("gpt-3.5-turbo-0125", 1 / 3), ("llama-3-70b-instruct", 0.25)):
        expected = 1000 + 400 * math.log10(share / (1 - share))
        assert rows[model]["rating"] == pytest.approx(expected, abs=1e-3), model
    assert rows["gpt-4-0314"]["n_battles"] == 5


# ---------------------------------------------------------------- files and folders


def test_a_judge_folder_a_tree_and_a_glob():
    folder = ef.load(GPT4)
    assert folder.height == 3 + 3 + 2
    assert set(folder["judge"]) == {"gpt-4-1106-preview"}
    tree = ef.load(TREE)
    assert tree.height == 10
    assert sorted(set(tree["model"])) == [
        "gpt-3.5-turbo-0125", "gpt-4-0314", "llama-3-70b-instruct"
    ]
    globbed = ef.load(str(TREE / "*" / "gpt-3.5-turbo-0125.jsonl"))
    assert globbed.height == 5
    lazy = ef.scan(TREE)
    assert isinstance(lazy, pl.LazyFrame)
    assert lazy.collect().equals(tree)


def test_detection_and_the_format_table():
    row = ef.list_formats().filter(pl.col("format") == "arena_hard").row(0, named=True)
    assert row["harness"] == "Arena-Hard-Auto"
    assert row["level"] == "samples"
    assert row["doc"] == "docs/harnesses/arena-hard.md"
    forced = ef.load(GPT4 / "gpt-4-0314.jsonl", format="arena_hard")
    assert forced.equals(ef.load(GPT4 / "gpt-4-0314.jsonl"))


def test_plain_tables_with_some_of_these_keys_are_not_detected(tmp_path):
    cases = {
        "one_game.jsonl": {**LINE, "games": [GAME]},
        "judge_pair.jsonl": {**LINE, "judge": ["gpt-4", "pair-v2"]},
        "no_games.jsonl": {key: v for key, v in LINE.items() if key != "games"},
        "games_text.jsonl": {**LINE, "games": ["A>B", "B>A"]},
        "both_ids.jsonl": {**LINE, "uid": "u1"},
        "no_score.jsonl": {**LINE, "games": [{"judgment": "x"}, GAME]},
    }
    for name, record in cases.items():
        frame = ef.load(write_lines(tmp_path / name, [record]))
        assert "verdict_ab" not in frame.columns, name
        assert "games" in frame.columns or "judge" in frame.columns, name


def test_the_v2_layout():
    raw = raw_lines(V2)
    frame = ef.load(V2)
    assert frame.height == 3
    assert frame["sample_id"].to_list() == [r["uid"] for r in raw]
    assert frame["category"].to_list() == ["hard_prompt", "creative_writing", "hard_prompt"]
    assert frame["baseline"].to_list() == [r["baseline"] for r in raw]
    assert frame["model_b"].to_list() == frame["baseline"].to_list()
    assert frame["label_ab"].to_list() == ["A<B", "A>B", "A>B"]
    assert frame["label_ba"].to_list() == ["B<<A", None, "B>A"]
    # mirror spellings: A<B with the model first is a baseline win; B<<A with the baseline
    # first is a strong baseline win
    assert frame["verdict_ab"].to_list() == ["B", "A", "A"]
    assert frame["verdict_ba"].to_list() == ["B", "error", "A"]
    assert frame["strength_ba"].to_list() == [3, None, 1]
    assert frame["judgment_ab"].to_list() == [r["games"][1]["judgment"]["answer"] for r in raw]
    assert frame["judgment_ba"][1] is None  # the game is null: the judge's call failed
    assert frame["user_prompt_ab"].to_list() == [
        r["games"][1]["prompt"][1]["content"] for r in raw
    ]
    assert frame["system_prompt_ba"].to_list() == [
        r["games"][0]["prompt"][0]["content"] if r["games"][0] else None for r in raw
    ]
    thought = raw[1]["games"][1]["judgment"]["thought"]
    assert frame["judgment_thought_ab"].to_list() == [None, thought, None]
    # v2 show_result, hard_prompt: line 1 [0] + [1 - 1] * 3, line 3 [1] + [1 - 0]
    # -> 6 battles, sum 2, score 1/3; creative_writing: its one line has a null game: dropped
    table = ef.judge.report(V2, by="category", policy="arena_hard")
    got = {row["category"]: row for row in table.iter_rows(named=True)}
    assert got["hard_prompt"]["win_rate_a"] == pytest.approx(1 / 3, abs=1e-15)
    assert got["hard_prompt"]["n_battles"] == 6
    assert got["creative_writing"]["win_rate_a"] is None
    assert (got["creative_writing"]["errors"], got["creative_writing"]["n_battles"]) == (1, 0)


def test_a_v2_tree_and_a_v01_tree_stack():
    frame = ef.load([V2, GPT4])
    assert frame.height == 3 + 8
    assert frame.filter(pl.col("judge") == "gpt-4.1")["category"].null_count() == 0
    assert frame.filter(pl.col("judge") != "gpt-4.1")["category"].null_count() == 8


def test_the_baseline_of_a_v01_file_can_be_named():
    path = GPT4 / "gpt-3.5-turbo-0125.jsonl"
    frame = read_judgments(path, baseline="claude-3-haiku").collect()
    assert set(frame["baseline"]) == set(frame["model_b"]) == {"claude-3-haiku"}
    v2 = read_judgments(V2, baseline="ignored").collect()  # the lines name their own
    assert "ignored" not in set(v2["baseline"])


def test_gzip_and_empty_files(tmp_path):
    source = GPT4 / "gpt-4-0314.jsonl"
    packed = tmp_path / "gpt-4-0314.jsonl.gz"
    packed.write_bytes(gzip.compress(source.read_bytes()))
    assert ef.load(packed).equals(ef.load(source))
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n\n")
    frame = ef.load(empty, format="arena_hard")
    assert frame.height == 0 and "verdict_ab" in frame.columns
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        stacked = ef.load([empty, source], format="arena_hard")
    assert stacked.height == 2
    table = tmp_path / "x.csv"
    table.write_text("a\n1\n")
    with pytest.raises(EvalframeError, match="Arena-Hard-Auto writes JSON lines"):
        ef.load(table, format="arena_hard")


def test_an_unknown_label_is_an_error_kept_as_written(tmp_path):
    odd = {**GAME, "score": "A>>>B"}
    frame = ef.load(write_lines(tmp_path / "m.jsonl", [{**LINE, "games": [GAME, odd]}]))
    row = frame.row(0, named=True)
    assert (row["label_ab"], row["verdict_ab"], row["outcome"]) == ("A>>>B", "error", "error")


# ---------------------------------------------------------------- refused


def test_a_judgment_twice_in_a_file_names_the_file_the_key_and_both_lines(tmp_path):
    other = {**LINE, "question_id": "q2"}
    path = write_lines(tmp_path / "m.jsonl", [LINE, other, LINE])
    with pytest.raises(EvalframeError) as error:
        ef.load(path)
    message = str(error.value)
    assert str(path) in message
    assert "line 3 judges again what line 1 judged" in message
    assert "question 'q1', model 'm', judge 'j'" in message


def test_a_judgment_in_two_files_names_both_files_and_lines(tmp_path):
    folder = tmp_path / "model_judgment" / "gpt-4-1106-preview"
    folder.mkdir(parents=True)
    original = folder / "gpt-3.5-turbo-0125.jsonl"
    shutil.copy(GPT4 / "gpt-3.5-turbo-0125.jsonl", original)
    copy = folder / "gpt-3.5-turbo-0125 (copy).jsonl"
    first, second, _ = raw_lines(original)
    write_lines(copy, [{**first, "question_id": "another question"}, second])  # Q2 on line 2
    for source in (tmp_path / "model_judgment", [original, copy]):
        with pytest.raises(EvalframeError) as error:
            ef.load(source)
        message = str(error.value)
        assert f"question {Q2!r}, model 'gpt-3.5-turbo-0125', judge 'gpt-4-1106-preview'" in message
        assert f"{str(original)!r} line 2" in message
        assert f"{str(copy)!r} line 2" in message
    with pytest.raises(EvalframeError, match="judged in"):
        ef.judge.report(folder, policy="arena_hard")


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("null", "line 2 holds null"),
        ("{}", "line 2 holds an empty object"),
        ("[1, 2]", "line 2 holds a list"),
        ('"A>B"', "line 2 holds a string"),
        ("{oops", "line 2 is not valid JSON"),
    ],
)
def test_a_line_that_is_not_a_judgment_object_is_named(tmp_path, line, expected):
    path = tmp_path / "m.jsonl"
    path.write_text(json.dumps(LINE) + "\n" + line + "\n", encoding="utf-8")
    with pytest.raises(EvalframeError, match=expected) as error:
        ef.load(path)
    assert str(path) in str(error.value)


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"games": [GAME]}, r"line 2 has 'games' = .*expected a list of two games"),
        ({"games": [GAME, "A>B"]}, "line 2 game 2 is a string"),
        ({"games": [GAME, {"judgment": "x"}]}, "line 2 game 2 has no key 'score'"),
        ({"games": [{**GAME, "score": 3}, GAME]}, "line 2 game 1 has 'score' = 3"),
        ({"games": [{**GAME, "judgment": 7}, GAME]}, "line 2 game 1 has 'judgment' = 7"),
        ({"games": [{**GAME, "label": "x"}, GAME]}, "line 2 game 1 has a key 'label'"),
        (
            {"games": [GAME, {**V2_GAME, "system_prompt": "s"}]},
            "line 2 game 2 gives 'system_prompt' twice",
        ),
        ({"model": None}, "line 2 has 'model' = None; expected text"),
        ({"question_id": None}, "line 2 has 'question_id' = None"),
        ({"uid": "u"}, "line 2 has both 'question_id' and 'uid'"),
        ({"baseline": 1}, "line 2 has 'baseline' = 1"),
        ({"question_id": 7}, "text on line 1 but an integer on line 2"),
    ],
)
def test_a_line_without_the_layout_is_named_under_the_forced_format(tmp_path, change, expected):
    path = write_lines(tmp_path / "m.jsonl", [LINE, {**LINE, "question_id": "q2", **change}])
    with pytest.raises(EvalframeError, match=expected) as error:
        ef.load(path, format="arena_hard")
    assert str(path) in str(error.value)


def test_a_key_missing_and_a_column_taken(tmp_path):
    lacking = {key: value for key, value in LINE.items() if key != "judge"}
    path = write_lines(tmp_path / "m.jsonl", [lacking])
    with pytest.raises(EvalframeError, match="line 1 has no key 'judge'"):
        ef.load(path, format="arena_hard")
    path = write_lines(tmp_path / "t.jsonl", [{**LINE, "outcome": "A"}])
    with pytest.raises(EvalframeError, match=r"already has column\(s\) \['outcome'\]"):
        ef.load(path)


# ---------------------------------------------------------------- the command line


@pytest.mark.subprocess
def test_the_command_line_report_gives_the_same_numbers(tmp_path):
    out = tmp_path / "report.json"
    command = [sys.executable, "-m", "evalframe", "judge", "report", str(TREE), "--by",
               "judge,model", "--policy", "arena_hard", "-o", str(out)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    assert "warning" not in done.stderr.lower()
    got = {(row["judge"], row["model"]): row for row in json.loads(out.read_text())}
    assert set(got) == set(ARENA)
    for key, (score, battles) in ARENA.items():
        assert got[key]["win_rate_a"] == pytest.approx(score, abs=1e-15), key
        assert got[key]["n_battles"] == battles, key
    command = [sys.executable, "-m", "evalframe", "judge", "report", str(GPT4), "--by", "model"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    assert "llama-3-70b-instruct" in done.stdout
