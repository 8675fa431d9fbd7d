"""Real data: GPT-4o on MMLU-Pro (../shared/data/mmlu-pro, SOURCES.md section 6).

12,032 questions in 14 subjects; ``pred`` is the letter the authors' script extracted
from the response, null where extraction failed (571 rows). Scored with
``exact_match(pred, answer)`` and aggregated per ``category``, the three ways to count
a failed extraction give three accuracies:

- ``missing="wrong"`` (the default): correct / all rows;
- ``missing="exclude"``: correct / answered rows;
- the MMLU-Pro authors' rule: a failed extraction is replaced by a "random" guess.

The authors' rule, from TIGER-AI-Lab/MMLU-Pro. ``run_gpt4o.py`` (the script that wrote
these files, commit ff991b5, whose ``eval_results/gpt4o/<subject>_summary.json`` hold its
per-subject counts): when ``pred`` is empty, Python's ``random`` module is re-seeded with
12345 and ``random.randint(0, len(options) - 1)`` is the guessed option index, right if
it equals ``answer_index``. Because the generator is re-seeded before every draw, the
guess is the same for every question with the same number of options: it is not random
across questions at all. The later ``compute_accuracy.py`` re-seeds the same way and then
draws ``random.choice`` over the ten letters A-J whatever the number of options, so its
guess is always the same letter (G). Both rules are implemented here from that
description (not copied), vectorised as a lookup from the option count to the letter.
"""

from __future__ import annotations

import gzip
import json
import math
import random
from pathlib import Path

import polars as pl
import pytest

import evalframe as ef

LETTERS = "ABCDEFGHIJ"
COLUMNS = {"prediction": "pred", "gold": "answer"}

#: Correct answers per subject under the authors' rule, as their summaries record them
#: (``eval_results/gpt4o/<subject>_summary.json``, "corr", at commit ff991b5).
PUBLISHED_CORRECT = {
    "biology": 622, "business": 620, "chemistry": 837, "computer science": 321,
    "economics": 682, "engineering": 533, "health": 590, "history": 267, "law": 562,
    "math": 1028, "other": 716, "philosophy": 350, "physics": 970, "psychology": 632,
}


def run_gpt4o_guess(n_options: int) -> str:
    """run_gpt4o.py's guess: re-seed 12345, ``randint(0, n_options - 1)``, as a letter."""
    return LETTERS[random.Random(12345).randint(0, n_options - 1)]


def compute_accuracy_guess() -> str:
    """compute_accuracy.py's guess: re-seed 12345, ``choice`` over the ten letters."""
    return random.Random(12345).choice(list(LETTERS))


@pytest.fixture(scope="module")
def paths(shared_data: Path) -> list[Path]:
    found = sorted((shared_data / "mmlu-pro" / "gpt4o").glob("*_result.json.gz"))
    if len(found) != 14:
        pytest.skip("../shared/data/mmlu-pro/gpt4o is absent or incomplete")
    return found


@pytest.fixture(scope="module")
def records(paths: list[Path]) -> list[dict]:
    """The raw rows, read with the standard library (for the hand computations)."""
    rows: list[dict] = []
    for path in paths:
        with gzip.open(path, "rt", encoding="utf-8") as handle:
            rows.extend(json.load(handle))
    return rows


@pytest.fixture(scope="module")
def scored(paths: list[Path]) -> pl.DataFrame:
    return ef.score([str(path) for path in paths], ["exact_match"], columns=COLUMNS)


def _by_subject(records: list[dict], predict) -> dict[str, tuple[int, int, int]]:
    """subject -> (correct, answered, total) with ``predict(row)`` as the answer."""
    counts: dict[str, list[int]] = {}
    for row in records:
        entry = counts.setdefault(row["category"], [0, 0, 0])
        pred = predict(row)
        entry[0] += pred is not None and pred == row["answer"]
        entry[1] += pred is not None
        entry[2] += 1
    return {subject: tuple(entry) for subject, entry in counts.items()}


def _table(scored: pl.DataFrame, **kwargs) -> dict[str, dict]:
    table = ef.aggregate(scored, by="category", columns=COLUMNS, **kwargs)
    return {row["category"]: row for row in table.iter_rows(named=True)}


def test_the_data_is_what_sources_md_says(records):
    assert len(records) == 12_032
    assert sum(row["pred"] is None for row in records) == 571
    assert {row["category"] for row in records} == set(PUBLISHED_CORRECT)
    assert all(LETTERS[row["answer_index"]] == row["answer"] for row in records)


@pytest.mark.slow
def test_missing_wrong_is_correct_over_all_rows(records, scored):
    hand = _by_subject(records, lambda row: row["pred"])
    table = _table(scored)  # missing="wrong" by default
    assert set(table) == set(hand)
    for subject, (correct, answered, total) in hand.items():
        row = table[subject]
        assert (row["n"], row["n_missing"], row["n_null"]) == (total, total - answered, 0)
        assert row["value"] == pytest.approx(correct / total, rel=1e-12), subject
        # 0/1 scores: std(ddof=1) / sqrt(n) = sqrt(p (1 - p) / (n - 1))
        p = correct / total
        assert row["stderr"] == pytest.approx(math.sqrt(p * (1 - p) / (total - 1)), rel=1e-12)
        assert row["ci_low"] < row["value"] < row["ci_high"]
        assert "|missing:wrong|stderr:sem|ci:wilson-0.95|" in row["signature"]
    # biology, by hand: 621 right of 717 rows, 17 failed extractions
    assert hand["biology"] == (621, 700, 717)
    assert table["biology"]["value"] == pytest.approx(621 / 717, rel=1e-12)


def test_missing_exclude_is_correct_over_answered_rows(records, scored):
    hand = _by_subject(records, lambda row: row["pred"])
    table = _table(scored, missing="exclude")
    for subject, (correct, answered, total) in hand.items():
        row = table[subject]
        assert (row["n"], row["n_missing"]) == (answered, total - answered)
        assert row["value"] == pytest.approx(correct / answered, rel=1e-12), subject
        assert "|missing:exclude|" in row["signature"]
    assert table["biology"]["value"] == pytest.approx(621 / 700, rel=1e-12)
    # leaving the failures out flatters every subject here (GPT-4o rarely guesses right)
    wrong = _table(scored)
    assert all(table[s]["value"] > wrong[s]["value"] for s in hand)


def test_missing_error_refuses_the_failed_extractions(scored):
    with pytest.raises(ef.EvalframeError, match=r"571 row\(s\) have no answer"):
        ef.aggregate(scored, by="category", columns=COLUMNS, missing="error")


def _fill(scored: pl.DataFrame, guesses: dict[int, str] | str) -> pl.DataFrame:
    """``pred`` with every failed extraction replaced by the guess for its option count."""
    if isinstance(guesses, str):
        guess = pl.lit(guesses)
    else:
        guess = pl.col("options").list.len().replace_strict(guesses, return_dtype=pl.String)
    filled = scored.drop("exact_match").with_columns(pl.col("pred").fill_null(guess))
    return ef.score(filled, ["exact_match"], columns=COLUMNS)


def test_the_authors_rule_reproduces_their_published_counts(records, scored):
    guesses = {k: run_gpt4o_guess(k) for k in range(1, 11)}
    assert run_gpt4o_guess(10) == LETTERS[random.Random(12345).randint(0, 9)]
    filled = _fill(scored, guesses)
    assert filled["pred"].null_count() == 0
    table = _table(filled)
    # by hand, from the raw rows: the guessed index compared with answer_index
    def hand_predict(row):
        if row["pred"] is not None:
            return row["pred"]
        return run_gpt4o_guess(len(row["options"]))

    hand = _by_subject(records, hand_predict)
    lucky = 0
    for subject, (correct, _, total) in hand.items():
        row = table[subject]
        assert correct == PUBLISHED_CORRECT[subject], subject  # the authors' own numbers
        assert (row["n"], row["n_missing"]) == (total, 0)
        assert row["value"] == pytest.approx(correct / total, rel=1e-12), subject
        lucky += correct - _by_subject(records, lambda r: r["pred"])[subject][0]
    # 59 of the 571 failed extractions were "guessed" right (10.3%, about 1 in 10 options)
    assert lucky == 59
    overall = ef.aggregate(filled, columns=COLUMNS).row(0, named=True)
    assert overall["value"] == pytest.approx(sum(PUBLISHED_CORRECT.values()) / 12_032, rel=1e-12)
    assert overall["value"] == pytest.approx(8730 / 12_032, rel=1e-12)


def test_compute_accuracy_guess_is_one_fixed_letter(records, scored):
    letter = compute_accuracy_guess()
    assert letter == "G"  # the same for every failed extraction: the generator is re-seeded
    table = _table(_fill(scored, letter))
    hand = _by_subject(records, lambda row: row["pred"] if row["pred"] is not None else letter)
    for subject, (correct, _, total) in hand.items():
        assert table[subject]["value"] == pytest.approx(correct / total, rel=1e-12), subject
    # it is not the rule behind the published counts: 48 lucky guesses instead of 59, and
    # other counts in 7 subjects (run_gpt4o.py's guess depends on the option count)
    assert sum(correct for correct, _, _ in hand.values()) == 8730 - 59 + 48
    differs = [s for s, (correct, _, _) in hand.items() if correct != PUBLISHED_CORRECT[s]]
    assert differs == ["economics", "health", "history", "law", "other", "philosophy",
                       "physics"], differs
