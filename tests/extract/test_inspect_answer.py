"""Inspect's ANSWER: extraction: hand-worked cases, rules and the table entries."""

from __future__ import annotations

import polars as pl
import pytest

from evalframe import EvalframeError
from evalframe.extract import EXTRACTION, EXTRACTORS, inspect_pattern_extractor

# (completion, letter, word, line), worked out from Inspect's three patterns
CASES = [
    ("ANSWER: B", "B", "B", "B"),
    ("answer : c", "c", "c", "c"),
    # the last ANSWER: decides for letter and word; line takes the first whose rest is the
    # last line
    ("ANSWER: A\nANSWER: B", "B", "B", "B"),
    ("ANSWER: A then ANSWER: B", "B", "B", "A then ANSWER: B"),
    # a letter must be followed by a non-word character; a word must end its line
    ("ANSWER: BC", None, "BC", "BC"),
    ("ANSWER: yes. More text", None, None, "yes. More text"),
    ("ANSWER: yes.\nMore text", None, "yes", None),
    # one final mark is not part of the word, unless the word is only that mark
    ("ANSWER: maybe?", None, "maybe", "maybe?"),
    ("ANSWER: ?", None, "?", "?"),
    # an earlier ANSWER: whose word runs into the last one wins for word (letter: the last)
    ("ANSWER:xANSWER:y", "y", "xANSWER:y", "xANSWER:y"),
    # Python's (?i)[A-Za-z] holds the dotless i
    ("ANSWER: ı", "ı", "ı", "ı"),
    ("no answer here", None, None, None),
    ("", None, None, None),
    (None, None, None, None),
]


@pytest.mark.parametrize("position", [1, 2, 3], ids=["letter", "word", "line"])
def test_hand_worked(position):
    kind = ["letter", "word", "line"][position - 1]
    frame = pl.DataFrame({"completion": [case[0] for case in CASES]},
                         schema={"completion": pl.String})
    out = frame.select(EXTRACTORS[f"inspect_answer_{kind}"]("completion").alias("x")).unnest("x")
    assert out["extracted"].to_list() == [case[position] for case in CASES]
    rules = [None if case[0] is None else ("none" if case[position] is None else "answer")
             for case in CASES]
    assert out["rule"].to_list() == rules


def test_struct_and_lazy():
    frame = pl.DataFrame({"completion": [case[0] for case in CASES]},
                         schema={"completion": pl.String})
    for kind in ("letter", "word", "line"):
        function = EXTRACTORS[f"inspect_answer_{kind}"]
        eager = frame.select(function("completion").alias("x"))
        assert eager.schema["x"] == EXTRACTION
        assert frame.lazy().select(function(pl.col("completion")).alias("x")).collect().equals(
            eager
        )


def test_pattern_extractor():
    extractor = inspect_pattern_extractor(r"final: (\d+)?x")
    frame = pl.DataFrame({"completion": ["Final: 12x", "final: x", "nothing", None]})
    out = frame.select(extractor("completion").alias("x")).unnest("x")
    assert out["extracted"].to_list() == ["12", None, None, None]
    assert out["rule"].to_list() == ["pattern", "pattern", "none", None]
    whole = inspect_pattern_extractor("paris", ignore_case=False)
    assert pl.select(whole(pl.lit("in paris")).struct.field("extracted")).item() == "paris"
    with pytest.raises(EvalframeError, match="has 2 groups"):
        inspect_pattern_extractor("(a)(b)")
