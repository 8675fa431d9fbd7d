"""MMLU-Pro's extraction cascade: hand-worked cases, rules, nulls and the table entries."""

from __future__ import annotations

import polars as pl
import pytest

from evalframe.extract import EXTRACTION, EXTRACTORS
from evalframe.extract.mmlu_pro import (
    mmlu_pro_answer_is,
    mmlu_pro_extract,
    mmlu_pro_last_capital,
)

# (response, mmlu_pro, mmlu_pro_answer_is, mmlu_pro_last_capital), each (extracted, rule),
# worked out by hand from the three regexes of MMLU-Pro's scripts.
CASES = [
    # step 1 matches "answer is " then an optional "(" and a capital A-J; the first one wins
    ("The answer is (B).", ("B", "answer_is"), ("B", "answer_is"), ("B", "answer_is")),
    ("the answer is C, no, the answer is D", ("C", "answer_is"), ("C", "answer_is"),
     ("C", "answer_is")),
    # "answer is: B": the colon breaks step 1; step 2 wants "answer:" -> step 3, last standalone
    ("answer is: B", ("B", "last_letter"), (None, "none"), ("B", "last_capital")),
    # lower-case letters are never letters for MMLU-Pro
    ("the answer is b", (None, "none"), (None, "none"), (None, "none")),
    # step 2: the first line with "answer:", its last occurrence, \s* crossing a newline
    ("Answer: A and Answer: C\nAnswer: E", ("C", "answer_colon"), (None, "none"),
     ("C", "answer_colon")),
    ("answer:\n\n  G", ("G", "answer_colon"), (None, "none"), ("G", "answer_colon")),
    # step 3: "I" and "D" are standalone, "J" in "Just" is not; last standalone = D
    ("I pick D. Just", ("D", "last_letter"), (None, "none"), ("J", "last_capital")),
    # bold markers are not word characters: "**A**" holds a standalone A
    ("The answer is **A**.", ("A", "last_letter"), (None, "none"), ("A", "last_capital")),
    # a combining accent is not a word character for Python's \b: "A\u0301" is standalone
    ("A\u0301 xyz", ("A", "last_letter"), (None, "none"), ("A", "last_capital")),
    # "²" is a word character for Python: "B²" is not standalone; the only capital is B
    ("B² xyz", (None, "none"), (None, "none"), ("B", "last_capital")),
    # full-width and Greek capitals are not A-J
    ("\uff21 \u0391", (None, "none"), (None, "none"), (None, "none")),
    # K is outside A-J; a capital inside a word counts only for the 05c6997b cascade
    ("K Zebra Hat", (None, "none"), (None, "none"), ("H", "last_capital")),
    ("", (None, "none"), (None, "none"), (None, "none")),
    (None, (None, None), (None, None), (None, None)),
]

FUNCTIONS = [mmlu_pro_extract, mmlu_pro_answer_is, mmlu_pro_last_capital]


@pytest.mark.parametrize("position", range(3), ids=["mmlu_pro", "answer_is", "last_capital"])
def test_hand_worked_cases(position):
    frame = pl.DataFrame({"response": [case[0] for case in CASES]}, schema={"response": pl.String})
    out = frame.select(FUNCTIONS[position]("response").alias("x")).unnest("x")
    expected = [case[1 + position] for case in CASES]
    assert list(zip(out["extracted"], out["rule"], strict=True)) == expected


def test_struct_dtype_and_lazy_equals_eager():
    frame = pl.DataFrame({"response": [case[0] for case in CASES]}, schema={"response": pl.String})
    for function in FUNCTIONS:
        eager = frame.select(function("response").alias("x"))
        assert eager.schema["x"] == EXTRACTION
        assert frame.lazy().select(function(pl.col("response")).alias("x")).collect().equals(eager)


def test_rows_keep_order_in_batches():
    responses = [case[0] for case in CASES] * 50
    frame = pl.DataFrame({"response": responses}, schema={"response": pl.String})
    whole = frame.select(mmlu_pro_extract("response").alias("x"))
    pieces = pl.concat([frame[i : i + 7].select(mmlu_pro_extract("response").alias("x"))
                        for i in range(0, frame.height, 7)])
    assert whole.equals(pieces)


def test_table_entries():
    assert EXTRACTORS["mmlu_pro"].function is mmlu_pro_extract
    assert EXTRACTORS["mmlu_pro_answer_is"].function is mmlu_pro_answer_is
    assert EXTRACTORS["mmlu_pro_last_capital"].function is mmlu_pro_last_capital
    for name in ("mmlu_pro", "mmlu_pro_answer_is", "mmlu_pro_last_capital"):
        assert "TIGER-AI-Lab/MMLU-Pro" in EXTRACTORS[name].reference
