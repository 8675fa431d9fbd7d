"""Verdict and grade parsers against the rules of their reference implementations.

Each reference rule is written out here in plain Python from the source it names (FastChat
``common.py``, Arena-Hard-Auto ``gen_judgment.py`` / ``show_result.py``, Inspect's
``_model.py`` with its own regex constants) and compared with the Polars expressions, on the
named edge cases and on generated replies.
"""

from __future__ import annotations

import ast
import re

import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

from evalframe import EvalframeError
from evalframe.judge import parse as P


def _run(expr_of, replies: list[str | None]) -> list:
    frame = pl.DataFrame({"r": replies}, schema={"r": pl.String})
    return frame.select(expr_of("r")).to_series().to_list()


# ---------------------------------------------------------------- default parser


def _default_reference(reply: str | None) -> str:
    """The issue's rule: the first word, case-insensitive, whitespace and .,! trimmed."""
    if reply is None:
        return "error"
    words = reply.split()
    if not words:
        return "error"
    word = words[0].strip(".,!").upper()
    return {"FIRST": "first", "SECOND": "second", "TIE": "tie"}.get(word, "error")


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("second.", "second"),
        (" Tie! ", "tie"),
        ("**first**", "error"),
        ("", "error"),
        ("   \n\t ", "error"),
        (None, "error"),
        ("FIRST", "first"),
        ("first, because it is right", "first"),
        ("Second!!\nThe second answer...", "second"),
        ("...tie...", "tie"),
        ("\u00a0first\u00a0", "first"),  # no-break spaces are whitespace
        ("firsts", "error"),
        ("first-ish", "error"),
        ("The first answer", "error"),
        ("«first»", "error"),
        ("tie:", "error"),
    ],
)
def test_default_parser_edge_cases(reply, expected):
    assert _run(P.parse_default, [reply]) == [expected]
    assert _default_reference(reply) == expected


@given(st.lists(st.one_of(st.none(), st.text(alphabet="firstFIRSTsecondTIEtie.,!* \n\t\u00a0é"))))
def test_default_parser_matches_the_rule(replies):
    assert _run(P.parse_default, replies) == [_default_reference(r) for r in replies]


def test_to_ab_maps_the_swapped_call_back():
    slots = ["first", "second", "tie", "error", None]
    frame = pl.DataFrame({"s": slots})
    ab = frame.select(P.to_ab("s", swapped=False)).to_series().to_list()
    ba = frame.select(P.to_ab("s", swapped=True)).to_series().to_list()
    assert ab == ["A", "B", "tie", "error", "error"]
    assert ba == ["B", "A", "tie", "error", "error"]


# ---------------------------------------------------------------- FastChat MT-bench


def _fastchat_pair(judgment: str | None) -> str:
    """``run_judge_pair`` for ``output_format == "[[A]]"``, in slot terms."""
    if judgment is None:
        return "error"
    if "[[A]]" in judgment:
        return "first"
    elif "[[B]]" in judgment:
        return "second"
    elif "[[C]]" in judgment:
        return "tie"
    return "error"


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("Final verdict: [[A]]", "first"),
        ("[[B]]", "second"),
        ("[[C]]", "tie"),
        # Two tags: FastChat tests "[[A]]" in judgment first, whatever the order in the text.
        ("At first I thought [[B]], but on reflection [[A]]", "first"),
        ("[[A]] was wrong; final: [[B]]", "first"),
        ("[[C]] or maybe [[B]]", "second"),
        # Unicode around the tag is fine: containment, not word boundaries.
        ("最终裁决：[[B]]。", "second"),
        ("«[[A]]»", "first"),
        ("verdict:\u200b[[C]]\u200b", "tie"),
        # Not tags.
        ("[[a]]", "error"),
        ("[[ A ]]", "error"),
        ("[A]", "error"),
        ("$ERROR$", "error"),
        ("", "error"),
        (None, "error"),
    ],
)
def test_mtbench_parser_edge_cases(reply, expected):
    assert _run(P.parse_mtbench, [reply]) == [expected]
    assert _fastchat_pair(reply) == expected


@given(st.lists(st.text(alphabet="[]ABCa x")))
def test_mtbench_parser_matches_fastchat(replies):
    assert _run(P.parse_mtbench, replies) == [_fastchat_pair(r) for r in replies]


# ---------------------------------------------------------------- Arena-Hard-Auto


def _arena_get_score(judgment: str) -> str | None:
    """Arena-Hard-Auto ``gen_judgment.get_score`` with its two ``regex_patterns``."""
    for pattern in (r"\[\[([AB<>=]+)\]\]", r"\[([AB<>=]+)\]"):
        matches = re.compile(pattern).findall(judgment.upper())
        matches = [m for m in matches if m != ""]
        if len(set(matches)) > 0:
            return matches[-1].strip("\n")
    return None


#: ``show_result.load_judgments``'s ``label_to_score`` with weight=3, read as slot + weight.
_LABEL_TO_SCORE = {
    "A>B": [1],
    "A>>B": [1] * 3,
    "A=B": [0.5],
    "A<<B": [0] * 3,
    "A<B": [0],
    "B>A": [0],
    "B>>A": [0] * 3,
    "B=A": [0.5],
    "B<<A": [1] * 3,
    "B<A": [1],
}


def _arena_reference(judgment: str | None) -> tuple[str, int | None]:
    label = None if judgment is None else _arena_get_score(judgment)
    if label not in _LABEL_TO_SCORE:
        return "error", None
    scores = _LABEL_TO_SCORE[label]
    slot = {1: "first", 0: "second", 0.5: "tie"}[scores[0]]
    return slot, len(scores)


@pytest.mark.parametrize(
    ("reply", "slot", "strength"),
    [
        ("My final verdict is: [[A>>B]]", "first", 3),
        ("[[A>B]]", "first", 1),
        ("My final verdict is tie: [[A=B]]", "tie", 1),
        ("[[B>A]]", "second", 1),
        ("[[B>>A]]", "second", 3),
        ("[[b>>a]]", "second", 3),  # the judgment is upper-cased first
        ("first [[A>B]] then, finally, [[B>A]]", "second", 1),  # the last label counts
        ("[[A>B]] and [B>>A]", "first", 1),  # the double-bracket pattern is tried first
        ("no double brackets, just [B>>A]", "second", 3),
        ("[[AB]]", "error", None),
        ("[[A>B>A]]", "error", None),
        ("A>>B", "error", None),
        ("", "error", None),
        (None, "error", None),
    ],
)
def test_arena_hard_parser_edge_cases(reply, slot, strength):
    assert _run(P.parse_arena_hard, [reply]) == [slot]
    assert _run(P.arena_hard_strength, [reply]) == [strength]
    assert _arena_reference(reply) == (slot, strength)


@given(st.lists(st.text(alphabet="[]AB<>=ab x\n")))
def test_arena_hard_parser_matches_arena_hard_auto(replies):
    expected = [_arena_reference(r) for r in replies]
    assert _run(P.parse_arena_hard, replies) == [slot for slot, _ in expected]
    assert _run(P.arena_hard_strength, replies) == [weight for _, weight in expected]


# ---------------------------------------------------------------- custom patterns


def test_regex_parser_with_a_mapping_and_with_named_groups():
    mapping = {"1": "first", "2": "second", "0": "tie"}
    replies = ["Winner: 1", "winner: 2", "Winner: 0", "Winner: 3", None]
    got = _run(lambda r: P.parse_regex(r, r"(?i)winner:\s*(\d)", mapping), replies)
    assert got == ["first", "second", "tie", "error", "error"]
    named = r"(?P<tie>both)|(?P<first>left)|(?P<second>right)"
    got = _run(lambda r: P.parse_regex(r, named), ["the left one", "right, then left", "both", "?"])
    assert got == ["first", "second", "tie", "error"]


@pytest.mark.parametrize(
    ("pattern", "verdicts", "message"),
    [
        (r"(a", {"a": "first"}, "not a valid regex"),
        (r"(a)(b)", {"a": "first"}, "2 capture group"),
        (r"(a)", None, "no verdicts= mapping"),
        (r"(a)", {"a": "A"}, "'first', 'second' or 'tie'"),
        (r"(?P<first>a)", None, "needs the groups 'first' and 'second'"),
        (r"(?P<first>a)|(?P<second>b)", {"a": "first"}, "give no verdicts="),
        (r"(?<=x)(a)", {"a": "first"}, "not a valid regex"),  # look-behind: not Rust regex
    ],
)
def test_regex_parser_rejects_bad_patterns(pattern, verdicts, message):
    with pytest.raises(EvalframeError, match=re.escape(message)):
        P.parse_regex("r", pattern, verdicts)


# ---------------------------------------------------------------- grades


def _fastchat_rating(judgment: str) -> float | None:
    """``run_judge_single``: ``one_score_pattern``, else the backup; -1 (here None) on none."""
    match = re.search(r"\[\[(\d+\.?\d*)\]\]", judgment)
    if not match:
        match = re.search(r"\[(\d+\.?\d*)\]", judgment)
    return float(ast.literal_eval(match.groups()[0])) if match else None


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("Rating: [[7]]", 7.0),
        ("Rating: [[8.5]]", 8.5),
        ("[[10]] ... later [[3]]", 10.0),  # re.search: the first match
        ("Rating: [9]", 9.0),  # the backup pattern
        ("[5] but then [[6]]", 6.0),  # the double brackets are looked for first
        ("Rating: [[7.]]", 7.0),
        ("Rating: 7", None),
        ("[[seven]]", None),
        ("", None),
    ],
)
def test_mtbench_rating_edge_cases(reply, expected):
    assert _run(P.parse_mtbench_rating, [reply]) == [expected]
    assert _fastchat_rating(reply) == expected


_RAISES = object()


@given(st.lists(st.text(alphabet="[]0123456789. Rating:x")))
def test_mtbench_rating_matches_fastchat(replies):
    def reference(reply: str) -> object:
        try:
            return _fastchat_rating(reply)
        except (SyntaxError, ValueError):  # literal_eval of "07": FastChat itself raises
            return _RAISES

    got = _run(P.parse_mtbench_rating, replies)
    for reply, value in zip(replies, got, strict=True):
        want = reference(reply)
        if want is not _RAISES:
            assert value == want, reply


def _inspect_reference(reply: str | None, grades: tuple[str, ...]) -> str | None:
    """Inspect's default-instructions path, with Inspect's own pattern and word table."""
    model = pytest.importorskip("inspect_ai.scorer._model")
    if reply is None:
        return None
    match = re.search(model._PERMISSIVE_GRADE_PATTERN, reply)
    value = match.group(1) if match else None
    if value is not None:
        normalized = value.strip().lower()
        if normalized in model._GRADE_WORD_VALUES:
            value = model._GRADE_WORD_VALUES[normalized]
        elif len(value.strip()) == 1:
            value = value.strip().upper()
        else:
            value = None
        if value not in grades:
            value = None
    return value


@pytest.mark.parametrize(
    ("reply", "partial", "expected"),
    [
        ("GRADE: C", False, "C"),
        ("Reasoning ... GRADE: I", False, "I"),
        ("GRADE: C\n... on reflection GRADE: I", False, "I"),  # the last one counts
        ("grade : correct", False, "C"),
        ("GRADE:\u200bP", True, "P"),
        ("GRADE: P", False, None),  # P is not offered without partial credit
        ("GRADE: partial", True, "P"),
        ("GRADE: CI", False, None),
        ("GRADE: c", False, "C"),
        ("downgrade: C", False, None),
        ("GRADE: I then GRADE: x", False, None),  # the last verdict is unusable: no grade
        ("no grade", False, None),
        (None, False, None),
    ],
)
def test_inspect_grade_edge_cases(reply, partial, expected):
    grades = ("C", "P", "I") if partial else ("C", "I")
    assert _run(lambda r: P.parse_inspect_grade(r, grades), [reply]) == [expected]
    assert _inspect_reference(reply, grades) == expected


@given(
    st.lists(st.text(alphabet="GRADEgrade: CPIcpixo\n\u200b")),
    st.booleans(),
)
def test_inspect_grade_matches_inspect(replies, partial):
    grades = ("C", "P", "I") if partial else ("C", "I")
    got = _run(lambda r: P.parse_inspect_grade(r, grades), replies)
    assert got == [_inspect_reference(r, grades) for r in replies]


def test_inspect_values_are_value_to_float():
    scorer = pytest.importorskip("inspect_ai.scorer")
    to_float = scorer.value_to_float()
    assert {k: to_float(k) for k in "CPI"} == P.INSPECT_GRADE_VALUES


def test_number_parser_bounds():
    replies = ["7", "Score: 4.5 / 10", "10", "1", "0.5", "11", "-3", "none", None]
    got = _run(lambda r: P.parse_number(r, 1, 10), replies)
    assert got == [7.0, 4.5, 10.0, 1.0, None, None, None, None, None]
    assert _run(P.parse_number, ["-3", ".5"]) == [-3.0, 0.5]
