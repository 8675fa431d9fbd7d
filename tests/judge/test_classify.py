"""Outcome classification: the rule's table, and re-scoring published judgment dumps."""

from __future__ import annotations

import gzip
import itertools
import json
from collections import Counter

import polars as pl
import pytest

import evalframe as ef
from evalframe import EvalframeError
from evalframe.judge.classify import classify, outcome

VERDICTS = ["A", "B", "tie", "error", None]


def _expected(ab: str | None, ba: str | None) -> str:
    """The issue's rule, by hand: same winner -> it; both tie -> tie; error -> error;
    opposite winners or a winner and a tie -> inconsistent; a call not made (null) leaves the
    other; neither made -> error."""
    table = {
        ("A", "A"): "A",
        ("B", "B"): "B",
        ("tie", "tie"): "tie",
        ("A", "B"): "inconsistent",
        ("B", "A"): "inconsistent",
        ("A", "tie"): "inconsistent",
        ("tie", "A"): "inconsistent",
        ("B", "tie"): "inconsistent",
        ("tie", "B"): "inconsistent",
    }
    if ab is None and ba is None:
        return "error"
    if ab is None or ba is None:
        return ab if ba is None else ba
    if "error" in (ab, ba):
        return "error"
    return table[(ab, ba)]


def test_every_pair_of_verdicts():
    pairs = list(itertools.product(VERDICTS, VERDICTS))
    frame = pl.DataFrame(
        {"verdict_ab": [a for a, _ in pairs], "verdict_ba": [b for _, b in pairs]},
        schema={"verdict_ab": pl.String, "verdict_ba": pl.String},
    )
    got = classify(frame)
    assert got.columns == ["verdict_ab", "verdict_ba", "outcome"]
    assert got["outcome"].to_list() == [_expected(a, b) for a, b in pairs]


def test_lazy_stays_lazy_and_columns_can_be_named():
    lazy = pl.LazyFrame({"x": ["A", "B"], "y": ["A", "A"], "keep": [1, 2]})
    got = classify(lazy, verdict_ab="x", verdict_ba="y")
    assert isinstance(got, pl.LazyFrame)
    assert got.collect().rows() == [("A", "A", 1, "A"), ("B", "A", 2, "inconsistent")]
    assert pl.select(outcome(pl.lit("B"), pl.lit("B"))).item() == "B"


def test_unknown_labels_and_missing_columns_are_errors():
    frame = pl.DataFrame({"verdict_ab": ["A", "model_1", "x"], "verdict_ba": ["A", "A", "A"]})
    with pytest.raises(EvalframeError, match=r"2 row\(s\) of 'verdict_ab'.*first row 1: 'model_1'"):
        classify(frame)
    with pytest.raises(EvalframeError, match=r"no column 'nope'.*\['verdict_ab', 'verdict_ba'\]"):
        classify(frame, verdict_ba="nope")
    with pytest.raises(EvalframeError, match="is Int64"):
        classify(pl.DataFrame({"verdict_ab": [1], "verdict_ba": [1]}))
    with pytest.raises(EvalframeError, match="unknown pairwise judge format"):
        classify(frame, format="fastchat")


def test_raw_replies_parsed_with_a_format_keep_the_raw_text():
    raw = pl.DataFrame({"verdict_ab": ["[[A>>B]]", "[[A=B]]", "?"],
                        "verdict_ba": ["[[B>A]]", "[[A=B]]", "[[B>>A]]"]})
    got = classify(raw, format="arena_hard")
    assert got.columns == ["judgment_ab", "judgment_ba", "verdict_ab", "verdict_ba",
                           "strength_ab", "strength_ba", "outcome"]
    # Game 2 showed B first (as "Assistant A"): its "B>A" says the answer shown second won,
    # which is answer A.
    parsed = got.select("verdict_ab", "verdict_ba", "strength_ab", "strength_ba", "outcome")
    assert parsed.rows() == [
        ("A", "A", 3, 1, "A"),
        ("tie", "tie", 1, 1, "tie"),
        ("error", "A", None, 3, "error"),
    ]
    assert got["judgment_ab"].to_list() == raw["verdict_ab"].to_list()
    both = raw.with_columns(judgment_ab=pl.lit("x"))
    with pytest.raises(EvalframeError, match="already exists"):
        classify(both, format="arena_hard")


def test_default_format_swapped_call_maps_back():
    raw = pl.DataFrame({"ab": ["FIRST", "second.", "Tie!", "**first**", None],
                        "ba": ["second", "SECOND", "tie", "first", "first"]})
    got = classify(raw, verdict_ab="ab", verdict_ba="ba", format="default")
    assert got.select("verdict_ab", "verdict_ba", "outcome").rows() == [
        ("A", "A", "A"),
        ("B", "A", "inconsistent"),
        ("tie", "tie", "tie"),
        ("error", "B", "error"),
        ("error", "B", "error"),
    ]


# ---------------------------------------------------------------- FastChat MT-bench


def _jsonl(path):
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


def _fastchat_outcome(g1: str, g2: str) -> str:
    """From FastChat's winners (already model names; g2's swap undone by FastChat)."""
    if "error" in (g1, g2):
        return "error"
    if g1 == g2:
        return {"model_1": "A", "model_2": "B", "tie": "tie"}[g1]
    return "inconsistent"


def test_mtbench_pair_file_counts(shared_data):
    path = shared_data / "mtbench-fastchat-fork" / "gpt-4_pair.jsonl.gz"
    records = _jsonl(path)
    expected = Counter(_fastchat_outcome(r["g1_winner"], r["g2_winner"]) for r in records)
    assert sum(expected.values()) == 75
    pairs = ef.load(path)
    got = classify(pairs)
    assert got.height == 75
    counts = dict(got["outcome"].value_counts().iter_rows())
    assert counts == dict(expected)
    # The published numbers (SOURCES.md): ties, position-inconsistent verdicts, 2 errors.
    assert counts == {"A": 18, "B": 20, "tie": 8, "inconsistent": 27, "error": 2}
    by_row = [_fastchat_outcome(r["g1_winner"], r["g2_winner"]) for r in records]
    assert got["outcome"].to_list() == by_row


def test_mtbench_raw_judgments_reparse_to_fastchat_winners(shared_data):
    path = shared_data / "mtbench-fastchat-fork" / "gpt-4_pair.jsonl.gz"
    records = _jsonl(path)
    pairs = ef.load(path)
    got = classify(pairs, verdict_ab="judgment_ab", verdict_ba="judgment_ba", format="mtbench")
    to_ab = {"model_1": "A", "model_2": "B", "tie": "tie", "error": "error"}
    assert got["verdict_ab"].to_list() == [to_ab[r["g1_winner"]] for r in records]
    assert got["verdict_ba"].to_list() == [to_ab[r["g2_winner"]] for r in records]
    assert got["outcome"].to_list() == classify(pairs)["outcome"].to_list()


# ---------------------------------------------------------------- AlpacaEval


def test_alpaca_eval_single_judgments(shared_data):
    """One judgment per instruction (``verdict_ba`` null): the outcome is that judgment."""
    path = shared_data / "alpaca_eval" / "alpaca-7b" / "alpaca_eval_gpt4" / "annotations.json.gz"
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        records = json.load(handle)

    def discrete(preference):
        # AlpacaEval: 0 is a draw (read 1.5); preference - 1 is the model's (output_2) share.
        if preference is None or preference != preference:
            return "error"
        if preference == 0:
            preference = 1.5
        if not 1 <= preference <= 2:
            return "error"
        share = preference - 1
        return "B" if share > 0.5 else "A" if share < 0.5 else "tie"

    expected = Counter(discrete(r["preference"]) for r in records)
    got = classify(ef.load(path))
    assert got["verdict_ba"].null_count() == got.height
    assert dict(got["outcome"].value_counts().iter_rows()) == dict(expected)


@pytest.mark.parametrize("fmt", ["mtbench", "default", "arena_hard"])
def test_replies_parsed_once_each_equal_each_row_parsed_alone(fmt):
    replies = ["[[A]]", "[[B]]", "[[C]]", "[[A>>B]]", "[[B>A]]", "[[A=B]]", "no verdict",
               None, "", "[[A]] or [[B]]"]
    pairs = [(a, b) for a in replies for b in replies] * 3  # each distinct reply repeated
    frame = pl.DataFrame({"g1": [a for a, _ in pairs], "g2": [b for _, b in pairs]},
                         schema={"g1": pl.String, "g2": pl.String})
    together = classify(frame, verdict_ab="g1", verdict_ba="g2", format=fmt)
    alone = pl.concat([classify(frame.slice(i, 1), verdict_ab="g1", verdict_ba="g2",
                                format=fmt) for i in range(frame.height)])
    assert together.equals(alone)
