"""lighteval's extractive match for choice indices: the answer letter (or number) of a response.

Reproduces lighteval 0.13.0's ``IndicesExtractionConfig`` extraction
(``lighteval.metrics.utils.extractive_match_utils``: ``lazy_indices_regex`` builds the
patterns, ``extract_target_from_pred`` runs them, ``extract_indices`` normalises the
match). For a configuration — the index labels (``prefix_for_extraction``: ``"Letters"``
A-Z, ``"NativeLetters"`` the language's own letters, ``"Numbers"`` 1-26, cut to the
number of choices), the language's words and punctuation, and
``try_extract_without_anchor`` — the patterns and their priorities are:

======== ======================== ================================================
priority ``rule``                  pattern (``I``: a label, or a label in parentheses)
======== ======================== ================================================
0        ``final_answer_i_hope``  ``(?i:final answer is):?\\s*I\\.?\\s?I hope`` (English)
50       ``final_answer_is``      ``(?i:final answer.{0,100}?)\\s+is:?\\s*I`` (English)
100      ``answer_colon``         answer word, ``\\s?:``, up to 50 characters, delimited ``I``
150      ``answer``               answer word, up to 50 characters, delimited ``I``
200      ``text_start``           ``I`` at the start of the text (optionally in ``**``)
210      ``line_start``           ``I`` right after a newline
250      ``delimited``            ``I`` after a space or the start, before ``.``, ``,``,
                                   ``:``, a space or the end (without an anchor only)
300      ``bare``                 ``I`` anywhere, even inside a word (without an anchor only)
======== ======================== ================================================

A *delimited* ``I`` is ``(^| )(**)?I(**)?`` followed by a full stop, a comma, an
optional whitespace and a colon, a space, or the end of the text. The lowest priority
with a match wins; within it, the match that ends last (``extract_target_from_pred``
sorts the matches by end position, rightmost first: for one pattern, the last of its
non-overlapping matches). ``extracted`` is the label without parentheses (``"(B)"`` gives
``"B"``); null when no pattern matches (lighteval extracts nothing), with ``rule``
``"none"``.

Everything runs as Polars regex over the whole column: each Python pattern is
translated to the Rust engine with Python's own semantics — its ``\\s`` (``str.isspace``,
which has ``\\x1c``-``\\x1f`` that Rust's lacks), its case-insensitive letters (``(?i:i)``
also matches ``İ`` and ``ı`` in Python, not in Rust) and its ``$`` (also before a final
newline) — and the last match of a pattern is found by ``str.extract_all``, its label
read again from that match.

Registered extractors:

- ``lighteval_letters``: gpqa_instruct's configuration (``gpqa_instruct_metric``,
  ``gpqa_instruct_pass_at_k``): English, ``NativeLetters`` (A-Z in English), four choices
  (A-D), ``try_extract_without_anchor=True``;
- ``lighteval_letters_anchored``: the same with lighteval's default
  ``try_extract_without_anchor=False`` (``pass_at_k_letters``): only the anchored
  patterns (priorities 0 to 210).

:func:`indices_extraction` builds any other configuration (prefix, number of choices,
anchoring, language words).

>>> import polars as pl
>>> from evalframe.extract.lighteval_indices import indices_extraction
>>> df = pl.DataFrame({"text": ["Let me think.\\nAnswer: B", "It is (C).", "**D**", "none", None]})
>>> df.select(indices_extraction(n_choices=4, try_extract_without_anchor=True)("text")
...           .struct.unnest()).rows()
[('B', 'answer_colon'), ('C', 'delimited'), ('D', 'text_start'), (None, 'none'), (None, None)]
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from string import ascii_uppercase
from typing import Literal

import polars as pl

from evalframe.errors import EvalframeError
from evalframe.extract.table import Extractor, extraction, register_extractor
from evalframe.normalize._python_text import all_characters, as_class, whitespace_characters

__all__ = ["IndexLiterals", "indices_extraction"]

ChoicePrefix = Literal["NativeLetters", "Letters", "Numbers"]

#: The reference this module reproduces.
REFERENCE = (
    "lighteval 0.13.0: lighteval.metrics.utils.extractive_match_utils.extract_target_from_pred "
    "with lazy_indices_regex(IndicesExtractionConfig(...), len_choices, language)"
)


@dataclass(frozen=True)
class IndexLiterals:
    """The words and punctuation of a language that lighteval's index patterns use.

    The fields of lighteval's ``TranslationLiterals`` (``lighteval.tasks.templates.utils.
    translation_literals.TRANSLATION_LITERALS[language]``) that ``lazy_indices_regex``
    reads: ``answer`` (matched case-insensitively), ``full_stop``, ``comma``, ``colon``,
    ``sentence_space`` and ``indices`` (the ``NativeLetters``). The two "final answer"
    patterns exist in English only (``final_answer=True``).
    """

    language: str = "en"
    answer: str = "answer"
    full_stop: str = "."
    comma: str = ","
    colon: str = ":"
    sentence_space: str = " "
    indices: tuple[str, ...] = tuple(ascii_uppercase)
    final_answer: bool = True


#: lighteval's English literals (``Language.ENGLISH``).
ENGLISH = IndexLiterals()


def index_labels(
    prefix: ChoicePrefix = "NativeLetters", n_choices: int = 4, literals: IndexLiterals = ENGLISH
) -> tuple[str, ...]:
    """The labels lighteval extracts for ``n_choices`` choices (``get_prefix(...)[:n]``).

    >>> index_labels("Letters", 3), index_labels("Numbers", 2)
    (('A', 'B', 'C'), ('1', '2'))
    """
    if prefix == "Letters":
        labels: tuple[str, ...] = tuple(ascii_uppercase)
    elif prefix == "NativeLetters":
        labels = tuple(literals.indices)
    elif prefix == "Numbers":
        labels = tuple(str(number) for number in range(1, 27))
    else:
        raise EvalframeError(
            f"prefix={prefix!r} is invalid; expected 'NativeLetters', 'Letters' or 'Numbers'"
        )
    return labels[:n_choices]


# --------------------------------------------------------------------------------------
# Python regex -> Rust regex, with Python's semantics
# --------------------------------------------------------------------------------------


def _char(character: str) -> str:
    """One character as a Rust-regex literal (ASCII letters and digits as they are)."""
    if character.isascii() and character.isalnum():
        return character
    return f"\\x{{{ord(character):X}}}"


def _literal(text: str) -> str:
    return "".join(_char(character) for character in text)


def _class(characters: str) -> str:
    """Python's ``[...]`` of these characters (each taken literally)."""
    return "[" + "".join(_char(character) for character in dict.fromkeys(characters)) + "]"


@cache
def _folded(character: str) -> str:
    """What Python's ``(?i:c)`` matches, as a Rust pattern (``i`` also matches ``İ``, ``ı``)."""
    matches = re.findall(f"(?i:{re.escape(character)})", all_characters())
    if len(matches) <= 1:
        return _char(character)
    return as_class(matches)


def _case_insensitive(text: str) -> str:
    """``(?i:text)`` of Python's ``re`` (a literal text), character by character."""
    return "".join(_folded(character) for character in text)


@cache
def _whitespace() -> str:
    """Python's ``\\s`` (``str.isspace``) as a Rust class."""
    return as_class(whitespace_characters())


#: Python's ``$`` without MULTILINE: the end, or just before a final newline (consumed
#: here: the match then ends one character later, which changes neither the label nor
#: which match is last).
_END = r"(?:\n?\z)"


@dataclass(frozen=True)
class IndexPattern:
    """One pattern of the cascade: its priority, ``rule`` name and Rust regex (group 1: label)."""

    priority: int
    rule: str
    regex: str


#: (priority, rule) of every pattern, in order: English only, anchored, unanchored.
_FINAL_ANSWER_RULES = ((0, "final_answer_i_hope"), (50, "final_answer_is"))
_ANCHORED_RULES = ((100, "answer_colon"), (150, "answer"), (200, "text_start"),
                   (210, "line_start"))
_UNANCHORED_RULES = ((250, "delimited"), (300, "bare"))


def _rules(final_answer: bool, try_extract_without_anchor: bool) -> tuple[tuple[int, str], ...]:
    return (
        (_FINAL_ANSWER_RULES if final_answer else ())
        + _ANCHORED_RULES
        + (_UNANCHORED_RULES if try_extract_without_anchor else ())
    )


@cache
def index_patterns(
    prefix: ChoicePrefix = "NativeLetters",
    n_choices: int = 4,
    try_extract_without_anchor: bool = False,
    literals: IndexLiterals = ENGLISH,
) -> tuple[IndexPattern, ...]:
    """The patterns of ``lazy_indices_regex`` for a configuration, by priority, in Rust regex.

    >>> [pattern.rule for pattern in index_patterns()]
    ['final_answer_i_hope', 'final_answer_is', 'answer_colon', 'answer', 'text_start', 'line_start']
    """
    labels = index_labels(prefix, n_choices, literals)
    if not labels:
        raise EvalframeError(f"n_choices={n_choices!r} is invalid; expected an integer >= 1")
    space = _whitespace()
    label = "(" + "|".join(f"(?:{_literal(x)}|\\({_literal(x)}\\))" for x in labels) + ")"
    full_stop = _class(literals.full_stop + ".")
    comma = _class(literals.comma + ",")
    colon = _class(literals.colon + ":")
    sentence_space = _literal(literals.sentence_space)
    suffix = f"(?:\\*\\*)?(?:{full_stop}|{comma}|{space}?{colon}|{sentence_space}|{_END})"
    delimited = f"(?:^|{sentence_space})(?:\\*\\*)?{label}{suffix}"
    answer = f"(?:{_case_insensitive(literals.answer)})"
    regexes = {
        "final_answer_i_hope":
            f"{_case_insensitive('final answer is')}:?{space}*{label}\\.?{space}?I hope",
        "final_answer_is":
            f"{_case_insensitive('final answer')}.{{0,100}}?{space}+is:?{space}*{label}",
        "answer_colon": f"{answer}{space}?{colon}.{{0,50}}?{delimited}",
        "answer": f"{answer}.{{0,50}}?{delimited}",
        "text_start": f"^(?:\\*\\*)?{label}{suffix}",
        "line_start": f"\\n(?:\\*\\*)?{label}{suffix}",
        "delimited": delimited,
        "bare": label,
    }
    return tuple(
        IndexPattern(priority, rule, regexes[rule])
        for priority, rule in _rules(literals.final_answer, try_extract_without_anchor)
    )


# --------------------------------------------------------------------------------------
# The extraction expression
# --------------------------------------------------------------------------------------


def extract_index(text: pl.Expr, patterns: tuple[IndexPattern, ...]) -> pl.Expr:
    """The :data:`~evalframe.extract.table.EXTRACTION` struct of the cascade ``patterns``.

    Per pattern: the last non-overlapping match (``str.extract_all(...).list.last()``,
    as ``re.finditer`` finds them), then its label (group 1) read from that match. The
    first pattern (lowest priority) with a match gives ``extracted`` and ``rule``.
    """
    found = [
        text.str.extract_all(pattern.regex).list.last().str.extract(pattern.regex, 1)
        for pattern in patterns
    ]
    label = pl.coalesce(found)
    # lighteval's extract_indices: index.replace("(", "").replace(")", "").strip()
    label = (
        label.str.replace_all("(", "", literal=True)
        .str.replace_all(")", "", literal=True)
        .str.strip_chars(whitespace_characters())
    )
    rule = pl.when(text.is_null()).then(pl.lit(None, dtype=pl.String))
    for pattern, value in zip(patterns, found, strict=True):
        rule = rule.when(value.is_not_null()).then(pl.lit(pattern.rule))
    return extraction(label, rule.otherwise(pl.lit("none")))


def _name(
    prefix: str, n_choices: int, try_extract_without_anchor: bool, literals: IndexLiterals
) -> str:
    parts = [
        f"prefix={prefix!r}",
        f"n_choices={n_choices}",
        f"try_extract_without_anchor={try_extract_without_anchor}",
    ]
    if literals != ENGLISH:
        parts.append(f"language={literals.language!r}")
    return f"indices_extraction({','.join(parts)})"


@cache
def indices_extraction(
    prefix: ChoicePrefix = "NativeLetters",
    n_choices: int = 4,
    try_extract_without_anchor: bool = False,
    literals: IndexLiterals = ENGLISH,
) -> Extractor:
    """lighteval's index extraction for one configuration, as an :class:`Extractor`.

    Parameters
    ----------
    prefix
        lighteval's ``prefix_for_extraction``: ``"NativeLetters"`` (the language's letters;
        A-Z in English), ``"Letters"`` (A-Z) or ``"Numbers"`` (1-26).
    n_choices
        The number of choices (lighteval's ``len(doc.choices)``): only the first
        ``n_choices`` labels are extracted (``"E"`` is not an answer to four choices).
    try_extract_without_anchor
        Also the unanchored patterns (a delimited label anywhere, then a bare label);
        lighteval's default is False, gpqa_instruct uses True.
    literals
        The language's words (default English). For another language pass its
        ``IndexLiterals`` with the fields of lighteval's ``TRANSLATION_LITERALS``.

    Returns
    -------
    Extractor
        Named ``indices_extraction(prefix=...,n_choices=...,try_extract_without_anchor=...)``.

    Examples
    --------
    >>> import polars as pl
    >>> numbers = indices_extraction("Numbers", n_choices=10)
    >>> df = pl.DataFrame({"text": ["Answer: (10)", "Answer: 11", "Answer: 1."]})
    >>> df.select(numbers("text").struct.field("extracted"))["extracted"].to_list()
    ['10', None, '1']
    """
    if not index_labels(prefix, n_choices, literals):
        raise EvalframeError(f"n_choices={n_choices!r} is invalid; expected an integer >= 1")
    config = (prefix, n_choices, try_extract_without_anchor, literals)
    return _extractor(_name(*config), config)


def _extractor(name: str, config: tuple) -> Extractor:
    """The extractor of one configuration; its regexes are built when it is first used."""

    def function(text: pl.Expr) -> pl.Expr:
        return extract_index(text, index_patterns(*config))

    function.__name__ = name
    literals = config[3]
    rules = ", ".join(
        f"{priority} {rule}" for priority, rule in _rules(literals.final_answer, config[2])
    )
    return Extractor(
        name=name,
        function=function,
        reference=REFERENCE,
        meaning=f"the answer index of lighteval's extractive match; rules by priority: {rules}",
    )


@cache
def _registered(try_extract_without_anchor: bool) -> Extractor:
    name = "lighteval_letters" if try_extract_without_anchor else "lighteval_letters_anchored"
    entry = _extractor(name, ("NativeLetters", 4, try_extract_without_anchor, ENGLISH))
    config = f"try_extract_without_anchor={try_extract_without_anchor}"
    return Extractor(
        name=entry.name,
        function=entry.function,
        reference=(
            "lighteval 0.13.0: extract_target_from_pred with IndicesExtractionConfig("
            f"prefix_for_extraction='NativeLetters', {config}), 4 choices, English"
            + (" (gpqa_instruct_metric)" if try_extract_without_anchor else
               " (pass_at_k_letters)")
        ),
        meaning=(
            "the answer letter A-D as lighteval extracts it"
            + ("" if try_extract_without_anchor else " (anchored patterns only)")
            + "; null when none is found"
        ),
    )


register_extractor(_registered(True))
register_extractor(_registered(False))
