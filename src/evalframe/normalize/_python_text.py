"""Python's own text semantics as polars expressions.

Reference implementations normalise text with Python: ``str.lower``,
``str.split()``, and ``re`` patterns such as ``\\b(a|an|the)\\b``. Polars runs
Rust, whose Unicode tables and ``\\b``/``\\s`` definitions differ from the running
Python's in places (combining marks, ``²``, the ASCII separators ``\\x1c``-``\\x1f``,
letters newer than Python's Unicode version). The character classes here are
built from the running Python itself, so the expressions agree with it exactly; they
are kept on disk between processes, keyed by the Python, Unicode and polars versions
(:mod:`evalframe._disk_cache`).

>>> import polars as pl
>>> s = pl.Series(["The\\x1ccat", " a  b "])
>>> pl.select(split_join(pl.lit(s))).to_series().to_list()
['The cat', 'a b']
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
import unicodedata
from collections.abc import Iterable, Sequence
from functools import cache
from pathlib import Path

import numpy as np
import polars as pl

from evalframe._disk_cache import load_or_build
from evalframe._expr import shared_kernel


@cache
def all_characters() -> str:
    """Every Unicode scalar value (surrogates excluded), in order."""
    points = np.concatenate([np.arange(0xD800), np.arange(0xE000, sys.maxunicode + 1)])
    return points.astype("<u4").tobytes().decode("utf-32-le")


def code_point_runs(points: Iterable[int]) -> list[tuple[int, int]]:
    """Sorted, merged ``(first, last)`` runs of the distinct code points ``points``.

    >>> code_point_runs([99, 97, 98, 98, 120])
    [(97, 99), (120, 120)]
    """
    ranges: list[tuple[int, int]] = []
    for point in sorted(set(points)):
        if ranges and ranges[-1][1] == point - 1:
            ranges[-1] = (ranges[-1][0], point)
        else:
            ranges.append((point, point))
    return ranges


def _class_of_runs(ranges: Iterable[Sequence[int]], negate: bool = False) -> str:
    """A Rust-regex character class matching exactly the code point runs ``ranges``."""
    body = "".join(
        f"\\x{{{lo:X}}}" if lo == hi else f"\\x{{{lo:X}}}-\\x{{{hi:X}}}" for lo, hi in ranges
    )
    return f"[{'^' if negate else ''}{body}]"


def as_class(characters: Iterable[str], negate: bool = False) -> str:
    """A Rust-regex character class matching exactly ``characters``."""
    return _class_of_runs(code_point_runs(ord(ch) for ch in characters), negate=negate)


def _characters(ranges: Iterable[Sequence[int]]) -> str:
    """The characters of the code point runs ``ranges``, in order."""
    return "".join(chr(point) for lo, hi in ranges for point in range(lo, hi + 1))


def _tables_key() -> str:
    """Everything the tables depend on: Python, its Unicode data, polars, this module's code."""
    return json.dumps(
        {
            "python": sys.version,
            "implementation": sys.implementation.cache_tag,
            "maxunicode": sys.maxunicode,
            "unicode": unicodedata.unidata_version,
            "polars": pl.__version__,
            "source": hashlib.sha256(Path(__file__).read_bytes()).hexdigest(),
        },
        sort_keys=True,
    )


def _build_tables() -> dict[str, list[tuple[int, int]]]:
    """The tables, as code point runs, computed from the running Python and polars."""
    everything = all_characters()
    return {
        "word": code_point_runs(map(ord, re.findall(r"\w", everything))),
        "whitespace": code_point_runs(map(ord, re.findall(r"\s", everything))),
        "decimal": code_point_runs(map(ord, re.findall(r"\d", everything))),
        "lower": code_point_runs(map(ord, _computed_case_disagreements(upper=False))),
        "upper": code_point_runs(map(ord, _computed_case_disagreements(upper=True))),
    }


@cache
def _tables() -> dict[str, list[list[int]]]:
    """The character tables, read from the disk cache or built (:mod:`evalframe._disk_cache`).

    Building them takes a pass over every code point (about 0.2 s and 50 MB at peak);
    reading them takes a millisecond.
    """
    return load_or_build("python-text-tables", _tables_key(), _build_tables)


def category_runs(escape: str) -> list[list[int]]:
    """The code point runs of Python's Unicode ``\\d``, ``\\s`` or ``\\w`` (from the tables)."""
    return _tables()[{"\\d": "decimal", "\\s": "whitespace", "\\w": "word"}[escape]]


@cache
def word_characters() -> str:
    """Every character Python's ``re`` counts as ``\\w`` in a str pattern."""
    return _characters(_tables()["word"])


@cache
def whitespace_characters() -> str:
    """Every character for which ``str.isspace()`` is true (what ``str.split()`` splits on).

    Python's ``re`` defines ``\\s`` in str patterns by the same predicate.
    """
    return _characters(_tables()["whitespace"])


@cache
def decimal_characters() -> str:
    """Every character Python's ``re`` counts as ``\\d`` in a str pattern (``str.isdecimal``)."""
    return _characters(_tables()["decimal"])


@cache
def word_class(negate: bool = False) -> str:
    """Regex class of Python word characters (or, negated, of non-word characters)."""
    return _class_of_runs(_tables()["word"], negate=negate)


@cache
def whitespace_class() -> str:
    """Regex class of Python whitespace characters."""
    return _class_of_runs(_tables()["whitespace"])


@cache
def _case_disagreements(upper: bool = False) -> str:
    """Characters whose polars lower (or upper) case differs from the running Python's."""
    return _characters(_tables()["upper" if upper else "lower"])


def _computed_case_disagreements(upper: bool = False) -> str:
    """:func:`_case_disagreements` computed afresh.

    Each character is case-mapped on its own line, so no context (final sigma)
    applies; the lines are compared as UTF-32 code point arrays, block by block of
    code points, so the whole table costs a few vectorised passes and little memory.
    """
    points = np.frombuffer(all_characters().encode("utf-32-le"), dtype="<u4")
    points = points[points != 0x0A]
    found: list[str] = []
    for start in range(0, points.size, _TABLE_BLOCK):
        block = points[start : start + _TABLE_BLOCK]
        lines = np.empty(block.size * 2, dtype="<u4")
        lines[0::2] = block
        lines[1::2] = 0x0A
        joined = lines.tobytes().decode("utf-32-le")
        text = pl.lit(joined)
        ours = pl.select(text.str.to_uppercase() if upper else text.str.to_lowercase()).item()
        theirs = joined.upper() if upper else joined.lower()
        if ours != theirs:
            differing = block[_differing_lines(ours, theirs, block.size)]
            found.extend(chr(point) for point in differing.tolist())
    return "".join(found)


def _lowercase_disagreements() -> str:
    """Characters whose polars lower case differs from the running Python's ``str.lower``."""
    return _case_disagreements(upper=False)


#: Code points case-mapped per pass when a disagreement table is built.
_TABLE_BLOCK = 1 << 16


def _differing_lines(first: str, second: str, count: int) -> np.ndarray:
    """Indices of the ``count`` newline-terminated lines that differ between two texts."""

    def line_bounds(text: str) -> tuple[np.ndarray, np.ndarray]:
        codes = np.frombuffer(text.encode("utf-32-le"), dtype="<u4")
        ends = np.flatnonzero(codes == 0x0A)
        assert ends.size == count
        return codes, ends

    a, a_ends = line_bounds(first)
    b, b_ends = line_bounds(second)
    a_starts = np.concatenate([[0], a_ends[:-1] + 1])
    b_starts = np.concatenate([[0], b_ends[:-1] + 1])
    differ = (a_ends - a_starts) != (b_ends - b_starts)
    single = ~differ & (a_ends - a_starts == 1)
    differ[single] = a[a_starts[single]] != b[b_starts[single]]
    for line in np.flatnonzero(~differ & ~single).tolist():
        differ[line] = not np.array_equal(
            a[a_starts[line] : a_ends[line]], b[b_starts[line] : b_ends[line]]
        )
    return np.flatnonzero(differ)


@cache
def _case_disagreement_class(upper: bool = False) -> str:
    return as_class(_case_disagreements(upper))


def has_multibyte(text: pl.Expr | pl.Series) -> pl.Expr | pl.Series:
    """Whether each text has a character outside ASCII (False for null), cheaply.

    >>> has_multibyte(pl.Series(["abc", "é", None])).to_list()
    [False, True, False]
    """
    return (text.str.len_bytes() != text.str.len_chars()).fill_null(False)


def _python_case_rows(series: pl.Series, upper: bool = False) -> pl.Series:
    """Case-map with Python only the rows polars would map differently."""
    # Every disagreeing character is outside ASCII: look for them only in the rows
    # that have a multi-byte character (a cheap length comparison finds those).
    # One polars call for both (each call has a fixed cost, holding the GIL).
    text = pl.col("text")
    both = series.to_frame("text").select(
        mapped=text.str.to_uppercase() if upper else text.str.to_lowercase(),
        multibyte=has_multibyte(text),
    )
    mapped = both["mapped"].alias(series.name)
    non_ascii = np.flatnonzero(both["multibyte"].to_numpy())
    if non_ascii.size == 0:
        return mapped
    needs_python = series.gather(non_ascii).str.contains(_case_disagreement_class(upper))
    rows = non_ascii[needs_python.to_numpy()]
    if rows.size == 0:
        return mapped
    values = series.gather(rows).to_list()
    fixed = pl.Series([v.upper() if upper else v.lower() for v in values], dtype=pl.String)
    return mapped.scatter(rows, fixed)


def _python_lower_rows(series: pl.Series) -> pl.Series:
    return _python_case_rows(series, upper=False)


def _python_upper_rows(series: pl.Series) -> pl.Series:
    return _python_case_rows(series, upper=True)


def upper(expr: pl.Expr) -> pl.Expr:
    """``str.upper()`` exactly as the running Python does it.

    >>> pl.select(upper(pl.lit("straße ﬁ"))).item() == "straße ﬁ".upper()
    True
    """
    if not _case_disagreements(upper=True):
        return expr.str.to_uppercase()
    return shared_kernel(expr, _python_upper_rows, pl.String)


def lower(expr: pl.Expr) -> pl.Expr:
    """``str.lower()`` exactly as the running Python does it (final sigma included).

    >>> pl.select(lower(pl.lit("ΑΣ İ"))).item() == "ΑΣ İ".lower()
    True
    """
    if not _lowercase_disagreements():
        return expr.str.to_lowercase()
    return shared_kernel(expr, _python_lower_rows, pl.String)


def split_join(expr: pl.Expr) -> pl.Expr:
    """``" ".join(text.split())``: runs of Python whitespace become one space, ends trimmed."""
    return expr.str.replace_all(whitespace_class() + "+", " ").str.strip_chars(" ")


def split(expr: pl.Expr) -> pl.Expr:
    """``text.split()`` as a ``list[str]`` expression (an empty list for blank text).

    >>> pl.select(split(pl.lit("  a\\u3000b  "))).item().to_list()
    ['a', 'b']
    """
    joined = split_join(expr)
    return pl.when(joined == "").then(pl.lit([], dtype=pl.List(pl.String))).otherwise(
        joined.str.split(" ")
    )


def replace_words(expr: pl.Expr, words: Sequence[str], replacement: str = " ") -> pl.Expr:
    """``re.sub(r"\\b(w1|w2|...)\\b", replacement, text)`` with Python's ``\\b``.

    The Rust regex engine has no look-around, so the word boundaries are matched
    as characters (or the text's ends) and put back. Two articles sharing one
    boundary character ("a a") need a second pass, after which none can remain.
    """
    if not words:
        return expr
    alternatives = "|".join(re.escape(word) for word in words)
    non_word = word_class(negate=True)
    pattern = f"(^|{non_word})(?:{alternatives})({non_word}|$)"
    substitute = "${1}" + replacement.replace("$", "$$") + "${2}"
    once = expr.str.replace_all(pattern, substitute)
    return once.str.replace_all(pattern, substitute)
