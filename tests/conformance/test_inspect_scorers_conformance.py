"""Inspect AI's string scorers against evalframe's metrics, row by row.

The reference is inspect_ai 0.3.285 itself: its scorers (``match``, ``includes``,
``pattern``, ``answer``) are called on a ``TaskState`` whose output is the completion
(``ModelOutput.from_content``) with a ``Target`` of the row's golds, and their ``Score``
is mapped by ``value_to_float``; the extractors are compared with ``Score.answer``.
"""

from __future__ import annotations

import asyncio
import re
import sys

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

inspect_scorer = pytest.importorskip("inspect_ai.scorer")

from inspect_ai._util.pattern import (  # noqa: E402
    ANSWER_PATTERN_LETTER,
    ANSWER_PATTERN_LINE,
    ANSWER_PATTERN_WORD,
)
from inspect_ai._util.text import strip_numeric_punctuation  # noqa: E402
from inspect_ai.model import ModelOutput  # noqa: E402
from inspect_ai.scorer import _common as inspect_common  # noqa: E402
from inspect_ai.solver import TaskState  # noqa: E402

from evalframe import metrics as M  # noqa: E402
from evalframe.extract import (  # noqa: E402
    EXTRACTORS,
    inspect_pattern_extractor,
)
from evalframe.metrics import inspect_scorers  # noqa: E402
from evalframe.metrics._inspect_numbers import normalize_number, parse_number  # noqa: E402

TO_FLOAT = inspect_scorer.value_to_float()


def _state(index: int, completion: str) -> TaskState:
    return TaskState(
        model="none/none", sample_id=index, epoch=0, input="", messages=[],
        output=ModelOutput.from_content("none/none", completion),
    )


def reference_scores(scorer, completions: list[str], targets: list[list[str]]):
    """``value_to_float(score.value)`` and ``score.answer`` of each row, one event loop."""

    async def run():
        scores = []
        for index, (completion, target) in enumerate(zip(completions, targets, strict=True)):
            scores.append(await scorer(_state(index, completion), inspect_scorer.Target(target)))
        return scores

    scores = asyncio.run(run())
    return [TO_FLOAT(score.value) for score in scores], [score.answer for score in scores]


def ours(expr: pl.Expr, completions: list[str], targets: list[list[str]]) -> list[float]:
    frame = pl.DataFrame(
        {"completion": completions, "target": targets},
        schema={"completion": pl.String, "target": pl.List(pl.String)},
    )
    return frame.select(expr.alias("score"))["score"].to_list()


COMPLETIONS = [
    "", " ", "\n", "42", "42.", "The answer is 42.", "The answer is 42!", "42 apples", "(42)",
    "forty-two", "$1,000", "\\$1,000.00", "1,000,000", "1.000,5", "1 000", "1'000", "£3", "€4,5",
    "60%", "60", "-3.5", "−3.5", "－3.5", "- 3.5", "+7", "+-7", "3.50", "3.", ".5", "0.5",
    "1e3", "1E3", "2e", "1_000", "inf", "nan", "1e999", "½", "2½", "3²", "-2²", "2⁻¹", "Ⅻ",
    "٣", "١٢٫٥", "２０", "十二", "三点五", "二〇二五", "一万二千", "负五", "两百", "点",
    "12.", "5...", "x.5", "5.x", "a.b", "**42**", "_42_", "42*", "answer: 42\nbut 43",
    "first 1 then 2", "1 2 3", "no number", "Paris", "paris.", "  PARIS  ", "It is Paris!",
    "Paris, France", "STRASSE", "straße", "İstanbul", "istanbul", "ΣΊΣΥΦΟΣ", "σίσυφος",
    "ﬁle", "file", "café", "cafe\u0301", "\x1cPARIS\x1c", "Paris\x1f", "\u3000Paris\u3000",
    "ANSWER: A", "ANSWER: a", "answer: (B)", "ANSWER:C.", "ANSWER: D\n", "ANSWER: BC",
    "Answer: yes", "Answer: Yes.", "ANSWER: no\n\n", "ANSWER: maybe not", "ANSWER: A ANSWER: B",
    "ANSWER: ANSWER: C", "ANSWER:xANSWER:y", "ANSWER: ı", "ANSWER: İ", "ANSWER: ſ", "ANSWER: K",
    "ANSWER : E", "ANSWER\n:\nF", "ANSWER: G\x1c", "ANSWER: H\u0301", "ANSWER: line of text  ",
    "ANSWER: one\nANSWER: two", "ANSWER: done.\nthen more", "ANSWER: é.", "ANSWER: 42,",
    "multi\nline\nANSWER: Z", "\r\nANSWER: Y\r\n", "A", "a", "B.", ".",
]
TARGETS = [
    ["42"], ["42", "43"], ["1000"], ["1,000"], ["$1,000"], ["60"], ["60%"], ["-3.5"], ["3.5"],
    ["0.5"], ["1000000"], ["12"], ["3.5", "12"], ["9"], ["Paris"], ["paris", "lyon"], ["PARIS"],
    ["straße"], ["STRASSE"], ["istanbul"], ["σίσυφος"], ["file"], ["café"], ["A"], ["a"],
    ["b", "B"], ["C"], ["yes"], ["no"], ["line of text"], ["x"], [""], ["."], [" "], ["ANSWER"],
    ["xANSWER:y"], ["e5"], ["2025"], ["十二"], ["½"], ["1e3"], [],
]

MATCH_OPTIONS = [
    {"location": location, "ignore_case": ignore_case, "numeric": numeric}
    for location in ("begin", "end", "any", "exact")
    for ignore_case in (True, False)
    for numeric in (False, True)
]
PATTERNS = [
    (r"(\d+)", True, False), (r"answer is (\w+)", True, False), (r"(a)|(b)", True, False),
    (r"(a)|(b)", False, True), (r"([a-z]*)(\d*)", True, True), (r"([a-z]*)(\d*)", True, False),
    (r"paris", True, False), (r"(x)?y?", True, True), (r"(?m)^(\w)$", False, False),
    (r"(.*)", True, False), (r"(\s*)", True, False),
]


def _grid():
    completions = [c for c in COMPLETIONS for _ in TARGETS]
    targets = [t for _ in COMPLETIONS for t in TARGETS]
    return completions, targets


def _assert_same(expected: list[float], got: list[float], completions, targets):
    mismatches = [
        (completion, target, mine, theirs)
        for completion, target, mine, theirs in zip(
            completions, targets, got, expected, strict=True
        )
        if mine != theirs
    ]
    assert mismatches[:5] == [], f"{len(mismatches)} rows differ"


@pytest.mark.parametrize(
    "options", MATCH_OPTIONS, ids=lambda o: "-".join(f"{k}={v}" for k, v in o.items())
)
def test_match_on_every_completion_target_pair(options):
    completions, targets = _grid()
    expected, _ = reference_scores(inspect_scorer.match(**options), completions, targets)
    got = ours(M.inspect_match("completion", "target", **options), completions, targets)
    _assert_same(expected, got, completions, targets)


@pytest.mark.parametrize("ignore_case", [True, False])
def test_includes_on_every_completion_target_pair(ignore_case):
    completions, targets = _grid()
    expected, _ = reference_scores(
        inspect_scorer.includes(ignore_case=ignore_case), completions, targets
    )
    got = ours(M.inspect_includes("completion", "target", ignore_case=ignore_case),
               completions, targets)
    _assert_same(expected, got, completions, targets)


@pytest.mark.parametrize("kind", ["letter", "word", "line"])
def test_answer_scores_and_answers(kind):
    completions, targets = _grid()
    expected, answers = reference_scores(inspect_scorer.answer(kind), completions, targets)
    got = ours(M.inspect_answer("completion", "target", pattern=kind), completions, targets)
    _assert_same(expected, got, completions, targets)
    # Score.answer: the extracted answer (the group, matched or not), None without a match
    frame = pl.DataFrame({"completion": completions})
    extracted = frame.select(
        EXTRACTORS[f"inspect_answer_{kind}"]("completion").struct.field("extracted")
    ).to_series().to_list()
    assert extracted == answers


@pytest.mark.parametrize(("pattern", "ignore_case", "match_all"), PATTERNS)
def test_pattern_scores(pattern, ignore_case, match_all):
    completions, targets = _grid()
    scorer = inspect_scorer.pattern(pattern, ignore_case=ignore_case, match_all=match_all)
    expected, answers = reference_scores(scorer, completions, targets)
    expr = M.inspect_pattern(
        "completion", "target", pattern=pattern, ignore_case=ignore_case, match_all=match_all
    )
    _assert_same(expected, ours(expr, completions, targets), completions, targets)
    if re.compile(pattern).groups <= 1 and not match_all:
        extractor = inspect_pattern_extractor(pattern, ignore_case=ignore_case)
        frame = pl.DataFrame({"completion": completions})
        extracted = frame.select(extractor("completion").struct.field("extracted"))
        assert extracted.to_series().to_list() == answers


_WORDS = [
    "42", "-3.5", "1,000", "$", "€", "%", ".", ",", " ", "\n", "\t", "\x1c", "\u00a0", "ANSWER:",
    "answer : ", "A", "b", "ı", "İ", "Paris", "paris", "ß", "SS", "ﬁ", "(", ")", "!", "?", "*",
    "_", "\\", "½", "²", "٣", "十", "二", "点", "e", "1e3", "−", "yes", "..", "5.", "\u0301",
]


@given(
    st.lists(
        st.tuples(
            st.lists(st.sampled_from(_WORDS), max_size=8).map("".join),
            st.lists(st.lists(st.sampled_from(_WORDS), max_size=3).map("".join), max_size=3),
        ),
        min_size=1,
        max_size=25,
    )
)
@settings(max_examples=40)
def test_random_rows_every_scorer(rows):
    completions = [completion for completion, _ in rows]
    targets = [target for _, target in rows]
    for options in MATCH_OPTIONS:
        expected, _ = reference_scores(inspect_scorer.match(**options), completions, targets)
        got = ours(M.inspect_match("completion", "target", **options), completions, targets)
        _assert_same(expected, got, completions, targets)
    for kind in ("letter", "word", "line"):
        expected, _ = reference_scores(inspect_scorer.answer(kind), completions, targets)
        got = ours(M.inspect_answer("completion", "target", pattern=kind), completions, targets)
        _assert_same(expected, got, completions, targets)
    expected, _ = reference_scores(inspect_scorer.includes(), completions, targets)
    _assert_same(expected, ours(M.inspect_includes("completion", "target"), completions, targets),
                 completions, targets)


def test_a_string_gold_is_a_one_string_target():
    completions = ["It is 42.", "It is 41.", "ANSWER: C"]
    golds = ["42", "42", "c"]
    expected, _ = reference_scores(inspect_scorer.match(numeric=True), completions,
                                   [[gold] for gold in golds])
    frame = pl.DataFrame({"completion": completions, "target": golds})
    got = frame.select(M.inspect_match("completion", "target", numeric=True))
    assert got.to_series().to_list() == expected == [1.0, 0.0, 1.0]  # 'c' ends 'answer: c'


_NUMBER_PIECES = list(
    "0123456789.,eE+-−－ ½⅓²³⁻⁺٣١٫．'’、，十二三百千万亿点點零〇负正两廿()!?:$_*ⅫⅩ①x"
)


@given(st.lists(st.sampled_from(_NUMBER_PIECES), max_size=8).map("".join))
def test_number_reading_equals_inspects(text):
    for trim in (True, False):
        theirs = inspect_common._parse_number(text, trim_punctuation=trim)
        assert parse_number(text, trim_punctuation=trim) == theirs
        assert normalize_number(text, trim_punctuation=trim) == inspect_common.normalize_number(
            text, trim_punctuation=trim
        )


@given(st.lists(st.sampled_from(["\\", "$", ",", "£", "€", "*", "_", ".", "..", "5", "٣", "a",
                                 " ", "\n", "x"]), max_size=10).map("".join))
def test_strip_numeric_punctuation_equals_inspects(text):
    got = pl.select(inspect_scorers._strip_numeric_punctuation(pl.lit(text))).item()
    assert got == strip_numeric_punctuation(text)


def test_dot_before_every_digit_of_python():
    """Python's ``\\d`` (every Unicode decimal digit) keeps a ``.`` before it; nothing else."""
    characters = [chr(c) for c in range(sys.maxunicode + 1) if not 0xD800 <= c <= 0xDFFF]
    texts = [f"1.{ch}" for ch in characters]
    frame = pl.DataFrame({"text": texts})
    got = frame.select(inspect_scorers._strip_numeric_punctuation(pl.col("text"))).to_series()
    expected = [strip_numeric_punctuation(text) for text in texts]
    assert got.to_list() == expected


@pytest.mark.parametrize(
    ("kind", "pattern"),
    [("letter", ANSWER_PATTERN_LETTER), ("word", ANSWER_PATTERN_WORD),
     ("line", ANSWER_PATTERN_LINE)],
    ids=["letter", "word", "line"],
)
@pytest.mark.parametrize(
    "template", ["ANSWER: {}", "ANSWER:{}x", "ANSWER: x{}", "{}NSWER: x", "ANSWER: x{}\n"]
)
def test_answer_extraction_with_every_code_point(kind, pattern, template):
    """Each code point where a class of the patterns reads it (``\\s``, ``\\w``, the letter
    and the case-insensitive ``ANSWER``), against Python's ``re`` with Inspect's flags."""
    characters = [chr(c) for c in range(sys.maxunicode + 1) if not 0xD800 <= c <= 0xDFFF]
    texts = [template.format(ch) for ch in characters]
    compiled = re.compile(pattern, re.IGNORECASE)
    expected = [(match.group(1) if (match := compiled.search(text)) else None) for text in texts]
    frame = pl.DataFrame({"completion": texts})
    got = frame.select(
        EXTRACTORS[f"inspect_answer_{kind}"]("completion").struct.field("extracted")
    ).to_series().to_list()
    mismatches = [(t, g, e) for t, g, e in zip(texts, got, expected, strict=True) if g != e]
    assert mismatches[:5] == []


_ANSWER_PIECES = [
    "ANSWER", "answer", "Answer", "ANSWER:", "ANSWER :", ":", " ", "  ", "\n", "\r\n", "\t",
    "\x1c", "\u3000", "A", "b", "Z", "ı", "İ", "ſ", "K", "x", "yes", "no", ".", ",", "!", "?",
    ";", ")", "(", "_", "1", "²", "\u0301", "é", "**", "-",
]


@given(st.lists(st.lists(st.sampled_from(_ANSWER_PIECES), max_size=12).map("".join),
                min_size=1, max_size=40))
def test_answer_extraction_on_random_texts(texts):
    frame = pl.DataFrame({"completion": texts})
    for kind, pattern in [("letter", ANSWER_PATTERN_LETTER), ("word", ANSWER_PATTERN_WORD),
                          ("line", ANSWER_PATTERN_LINE)]:
        compiled = re.compile(pattern, re.IGNORECASE)
        expected = [(m.group(1) if (m := compiled.search(text)) else None) for text in texts]
        got = frame.select(
            EXTRACTORS[f"inspect_answer_{kind}"]("completion").struct.field("extracted")
        ).to_series().to_list()
        assert got == expected, kind
