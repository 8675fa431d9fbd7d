r"""Inspect AI's answer extraction: ``answer("letter" | "word" | "line")`` and ``pattern``.

Inspect (``inspect_ai`` 0.3.285) extracts the answer of a completion that ends with
``ANSWER: ...`` with one of three patterns (``inspect_ai/_util/pattern.py``, used by
``scorer/_answer.py`` through ``scorer/_pattern.py``'s ``re.search(pattern, completion,
re.IGNORECASE)``; the answer is the first group):

- ``letter``: ``(?is)ANSWER\s*:\s*([A-Za-z])(?:[^\w]|\n|$)(?!.*ANSWER\s*:)``;
- ``word``: ``(?is)ANSWER\s*:\s*(\S+?)(?=[.,;:!?]?\s*(?:\n|$))(?!.*ANSWER\s*:)``;
- ``line``: ``(?i)ANSWER\s*:\s*([^\n]+)\s*\Z``.

Registered extractors: ``inspect_answer_letter``, ``inspect_answer_word``,
``inspect_answer_line`` (rule ``"answer"``, or ``"none"``: no match, the answer is null);
:func:`inspect_pattern_extractor` builds one for any pattern (rule ``"pattern"``).

The lookaheads have no Rust ``regex`` form; what they select can be said without them,
and the three run as Polars expressions (:func:`inspect_pattern_extractor`, for an
arbitrary Python pattern, runs Python ``re`` once per distinct completion):

- ``letter``: "no ``ANSWER:`` after the match" leaves only the *last* ``ANSWER\s*:`` of the
  text (an earlier one's match ends before the next begins: the letter is followed by a
  non-word character, which cannot start ``ANSWER``), so the answer is the letter after
  the last ``ANSWER:``, when that one is followed by a letter and a non-word character or
  the end; else there is none;
- ``word``: the lazy group stops at the end of the run of non-space characters after the
  colon, less one final ``.,;:!?`` (when the run is longer than one), provided the
  whitespace after the run holds a newline or reaches the end. The second lookahead starts
  at the group's end, so an earlier ``ANSWER:`` is chosen when the last one begins *inside*
  its group (``ANSWER: xANSWER:y`` gives ``xANSWER:y``); otherwise the last one is;
- ``line``: no lookaround (``\Z`` is Rust's ``\z``), kept as it is.

Every class (``\s``, ``\S``, ``\w``, ``[A-Za-z]`` and the letters of ``ANSWER`` under
``re.IGNORECASE``) is spelt out as the characters the running Python's ``re`` matches:
Python's ``(?i)[A-Za-z]`` holds ``ı`` and ``İ`` (Rust's does not), its ``\s`` holds
``\x1c``-``\x1f``, its ``\w`` no combining marks.

>>> import polars as pl
>>> from evalframe.extract.inspect_answer import inspect_answer_letter, inspect_answer_word
>>> df = pl.DataFrame({"completion": [
...     "ANSWER: B", "answer: c) or ANSWER: D.", "ANSWER: BC", "Answer: yes.\n", None,
... ]})
>>> df.with_columns(
...     letter=inspect_answer_letter("completion").struct.field("extracted"),
...     word=inspect_answer_word("completion").struct.field("extracted"),
... )
shape: (5, 3)
┌──────────────────────────┬────────┬──────┐
│ completion               ┆ letter ┆ word │
│ ---                      ┆ ---    ┆ ---  │
│ str                      ┆ str    ┆ str  │
╞══════════════════════════╪════════╪══════╡
│ ANSWER: B                ┆ B      ┆ B    │
│ answer: c) or ANSWER: D. ┆ D      ┆ D    │
│ ANSWER: BC               ┆ null   ┆ BC   │
│ Answer: yes.             ┆ null   ┆ yes  │
│                          ┆        ┆      │
│ null                     ┆ null   ┆ null │
└──────────────────────────┴────────┴──────┘
"""

from __future__ import annotations

import re
from functools import cache
from typing import Literal

import polars as pl

from evalframe.errors import EvalframeError
from evalframe.extract.table import Extractor, extraction, register_extractor
from evalframe.normalize._python_text import all_characters, as_class

__all__ = [
    "inspect_answer_letter",
    "inspect_answer_line",
    "inspect_answer_word",
    "inspect_pattern_extractor",
]

INSPECT_VERSION = "0.3.285"
AnswerType = Literal["letter", "word", "line"]

#: Inspect's patterns (``inspect_ai/_util/pattern.py``), run with ``re.IGNORECASE``.
ANSWER_PATTERNS: dict[str, str] = {
    "letter": r"(?is)ANSWER\s*:\s*([A-Za-z])(?:[^\w]|\n|$)(?!.*ANSWER\s*:)",
    "word": r"(?is)ANSWER\s*:\s*(\S+?)(?=[.,;:!?]?\s*(?:\n|$))(?!.*ANSWER\s*:)",
    "line": r"(?i)ANSWER\s*:\s*([^\n]+)\s*\Z",
}


@cache
def _python_class(pattern: str, flags: int, negate: bool = False) -> str:
    """The characters Python's ``re`` matches with the one-character ``pattern``."""
    return as_class(re.findall(pattern, all_characters(), flags), negate=negate)


@cache
def _pieces(flags: int) -> dict[str, str]:
    r"""Rust ``regex`` pieces with Python's meaning under ``flags``.

    ``S`` is ``\s``, ``NS`` ``\S`` (its complement), ``NW`` ``[^\w]`` (the complement of
    ``\w``), ``L`` ``[A-Za-z]``, ``OCC`` ``ANSWER\s*:``.
    """
    space = _python_class(r"\s", flags)
    word = "".join(_python_class(letter, flags) for letter in "ANSWER")
    return {
        "S": space,
        "NS": _python_class(r"\s", flags, negate=True),
        "NW": _python_class(r"\w", flags, negate=True),
        "L": _python_class(r"[A-Za-z]", flags),
        "OCC": f"{word}{space}*:",
    }


def _dotall() -> dict[str, str]:
    return _pieces(re.IGNORECASE | re.DOTALL)


def _from_last(text: pl.Expr) -> pl.Expr:
    """The text from the last ``ANSWER\\s*:`` on (null where there is none)."""
    return text.str.extract(rf"(?s)\A.*({_dotall()['OCC']}.*)", 1)


def _letter(text: pl.Expr) -> pl.Expr:
    p = _dotall()
    return _from_last(text).str.extract(rf"\A{p['OCC']}{p['S']}*({p['L']})(?:{p['NW']}|\z)", 1)


def _without_final_mark(word: pl.Expr) -> pl.Expr:
    """A word less one final ``.,;:!?`` when it is longer than one character."""
    return word.str.replace(r"(?s)\A(.+)[.,;:!?]\z", "$1")


def _word(text: pl.Expr) -> pl.Expr:
    p = _dotall()
    space, non_space, occurrence = p["S"], p["NS"], p["OCC"]
    tail = _from_last(text)
    # the whitespace after the run holds a newline or reaches the end
    ends_line = f"(?:{space}*\\z|{space}*\\n)"
    before = text.str.slice(0, text.str.len_chars() - tail.str.len_chars())
    # an earlier ANSWER: whose group runs, with no space, into the last one
    nested = before.str.extract(f"{occurrence}{space}*({non_space}*)\\z", 1)
    run = tail.str.extract(f"\\A({non_space}*)", 1)
    nested_ok = nested.is_not_null() & tail.str.contains(f"\\A{non_space}*{ends_line}")
    last = tail.str.extract(f"\\A{occurrence}{space}*({non_space}+)", 1)
    last_ok = tail.str.contains(f"\\A{occurrence}{space}*{non_space}+{ends_line}")
    return (
        pl.when(nested_ok).then(_without_final_mark(nested + run))
        .when(last_ok).then(_without_final_mark(last))
        .otherwise(pl.lit(None, dtype=pl.String))
    )


def _line(text: pl.Expr) -> pl.Expr:
    p = _pieces(re.IGNORECASE)
    return text.str.extract(f"{p['OCC']}{p['S']}*([^\\n]+){p['S']}*\\z", 1)


_ANSWERS = {"letter": _letter, "word": _word, "line": _line}


def answer_text(text: pl.Expr, kind: AnswerType) -> pl.Expr:
    """The answer Inspect's ``answer(kind)`` extracts (``String``, null: no match)."""
    if kind not in _ANSWERS:
        raise EvalframeError(
            f"Inspect's answer pattern {kind!r} is unknown; expected 'letter', 'word' or 'line'"
        )
    return _ANSWERS[kind](text)


def _rule(text: pl.Expr, answer: pl.Expr, name: str) -> pl.Expr:
    return (
        pl.when(text.is_null()).then(pl.lit(None, dtype=pl.String))
        .when(answer.is_null()).then(pl.lit("none"))
        .otherwise(pl.lit(name))
    )


def _answer_extractor(kind: AnswerType):
    def extract(text: pl.Expr | str) -> pl.Expr:
        expr = pl.col(text) if isinstance(text, str) else text
        answer = answer_text(expr, kind)
        return extraction(answer, _rule(expr, answer, "answer"))

    extract.__name__ = f"inspect_answer_{kind}"
    extract.__doc__ = (
        f"Inspect's ``answer({kind!r})`` extraction: group 1 of ``{ANSWER_PATTERNS[kind]}`` "
        "(``re.IGNORECASE``), null where it does not match (rule ``\"none\"``)."
    )
    return extract


inspect_answer_letter = _answer_extractor("letter")
inspect_answer_word = _answer_extractor("word")
inspect_answer_line = _answer_extractor("line")

for _kind, _function in (
    ("letter", inspect_answer_letter),
    ("word", inspect_answer_word),
    ("line", inspect_answer_line),
):
    register_extractor(Extractor(
        name=f"inspect_answer_{_kind}",
        function=_function,
        reference=f"inspect_ai {INSPECT_VERSION}: scorer.answer({_kind!r}) (Score.answer)",
        meaning={
            "letter": "the letter after the last 'ANSWER:'",
            "word": "the word after the last 'ANSWER:' ending its line",
            "line": "what follows 'ANSWER:' when it is the text's last line",
        }[_kind],
    ))


def _compile(pattern: str, ignore_case: bool) -> re.Pattern[str]:
    try:
        return re.compile(pattern, re.IGNORECASE if ignore_case else 0)
    except re.error as error:
        raise EvalframeError(
            f"Inspect pattern {pattern!r} is not a valid Python regular expression: {error}"
        ) from None


def pattern_groups(text: pl.Expr, pattern: str, *, ignore_case: bool = True) -> pl.Expr:
    """``re.search(pattern, text).groups() or (group(0),)`` as ``List(String)``.

    Null where the text is null or the pattern does not match; a group that did not take
    part in the match is a null element. Python ``re`` runs once per distinct text.
    """
    compiled = _compile(pattern, ignore_case)

    def kernel(series: pl.Series) -> pl.Series:
        distinct = series.drop_nulls().unique()
        found = []
        for value in distinct.to_list():
            match = compiled.search(value)
            found.append(None if match is None else list(match.groups() or (match.group(0),)))
        table = pl.DataFrame(
            {"value": distinct, "groups": pl.Series(found, dtype=pl.List(pl.String))}
        )
        joined = pl.DataFrame({"value": series}).join(
            table, on="value", how="left", maintain_order="left"
        )
        return joined["groups"].alias(series.name)

    return text.map_batches(kernel, return_dtype=pl.List(pl.String), is_elementwise=True)


def inspect_pattern_extractor(pattern: str, *, ignore_case: bool = True) -> Extractor:
    r"""An extractor for Inspect's ``pattern(pattern, ignore_case)``: the answer it scores.

    The first group of the match (the whole match when the pattern has no group), as
    Inspect's ``Score.answer`` for a pattern of at most one group; null where the pattern
    does not match (rule ``"none"``) or the group did not take part. Python ``re``.

    >>> import polars as pl
    >>> extractor = inspect_pattern_extractor(r"final: (\d+)")
    >>> print(extractor.name)
    inspect_pattern(pattern='final: (\\d+)',ignore_case=True)
    >>> pl.select(extractor(pl.lit("Final: 42")).struct.field("extracted")).item()
    '42'
    """
    compiled = _compile(pattern, ignore_case)
    if compiled.groups > 1:
        raise EvalframeError(
            f"inspect_pattern_extractor: pattern {pattern!r} has {compiled.groups} groups; "
            "Inspect's answer for several groups depends on the targets (score it with "
            "the inspect_pattern metric)"
        )

    def extract(text: pl.Expr) -> pl.Expr:
        groups = pattern_groups(text, pattern, ignore_case=ignore_case)
        answer = groups.list.first()
        rule = (
            pl.when(text.is_null()).then(pl.lit(None, dtype=pl.String))
            .when(groups.is_not_null()).then(pl.lit("pattern"))
            .otherwise(pl.lit("none"))
        )
        return extraction(answer, rule)

    return Extractor(
        name=f"inspect_pattern(pattern={pattern!r},ignore_case={ignore_case})",
        function=extract,
        reference=f"inspect_ai {INSPECT_VERSION}: scorer.pattern (Score.answer)",
        meaning="the first group of a Python regex match (the whole match without groups)",
    )
