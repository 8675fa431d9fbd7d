"""lm-evaluation-harness's ``exact_match`` text options and lighteval's ``strip``.

lm-eval-harness scores ``exact_match`` with ``exact_match_hf_evaluate``
(``lm_eval/api/metrics.py``), which, on predictions and references alike and in
this order: deletes every match of each of ``regexes_to_ignore`` (``re.sub(s, "",
x)``, one pattern after the other); lower-cases (``np.char.lower``); deletes ASCII
``string.punctuation`` (``str.translate``); deletes ASCII ``string.digits``; and
compares the numpy string arrays. :func:`harness_normalize` is that
transformation, so ``harness_normalize(pred, ...) == harness_normalize(gold, ...)``
is the harness's per-sample score.

>>> import polars as pl
>>> df = pl.DataFrame({"text": ["The Answer: 42.", " x ", None]})
>>> df.with_columns(
...     harness_normalize("text", ignore_case=True, ignore_punctuation=True).alias("harness"),
...     strip("text").alias("stripped"),
... )
shape: (3, 3)
┌─────────────────┬───────────────┬─────────────────┐
│ text            ┆ harness       ┆ stripped        │
│ ---             ┆ ---           ┆ ---             │
│ str             ┆ str           ┆ str             │
╞═════════════════╪═══════════════╪═════════════════╡
│ The Answer: 42. ┆ the answer 42 ┆ The Answer: 42. │
│  x              ┆  x            ┆ x               │
│ null            ┆ null          ┆ null            │
└─────────────────┴───────────────┴─────────────────┘
"""

from __future__ import annotations

import re
import string
from collections.abc import Sequence

import polars as pl

from evalframe._expr import IntoExpr, parse_into_expr
from evalframe.errors import EvalframeError, without_plan
from evalframe.normalize._python_text import (
    lower,
    whitespace_characters,
    whitespace_class,
    word_class,
)
from evalframe.normalize.table import NORMALIZERS

__all__ = ["harness_normalize", "strip"]

_PUNCTUATION_CLASS = "[" + "".join(re.escape(ch) for ch in string.punctuation) + "]"
_DIGITS_CLASS = "[0-9]"


def python_regex(pattern: str) -> str:
    """Rewrite ``\\s``, ``\\S``, ``\\w``, ``\\W`` as the classes Python's ``re`` means by them.

    Rust's regex crate and Python's ``re`` disagree on which characters these match
    (``\\x1c``-``\\x1f`` are ``\\s`` only in Python; combining marks are ``\\w`` only in
    Rust). Nested classes are valid inside brackets too (``[\\s,]``).

    >>> python_regex(r"a\\s+") == "a" + whitespace_class() + "+"
    True
    """
    replacements = {
        "s": whitespace_class(),
        "S": "[^" + whitespace_class()[1:],
        "w": word_class(),
        "W": word_class(negate=True),
    }
    out = []
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\" and i + 1 < len(pattern):
            follower = pattern[i + 1]
            out.append(replacements.get(follower, ch + follower))
            i += 2
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def _check_regex(pattern: str, translated: str) -> None:
    """A pattern the regex engine refuses is an error now, naming it (not when rows run)."""
    try:
        pl.select(pl.lit("").str.replace_all(translated, ""))
    except pl.exceptions.PolarsError as error:
        detail = " ".join(without_plan(error).split())
        raise EvalframeError(
            f"regexes_to_ignore: {pattern!r} is not a valid regular expression ({detail})"
        ) from None


def harness_normalize(
    expr: IntoExpr,
    *,
    ignore_case: bool = False,
    ignore_punctuation: bool = False,
    ignore_numbers: bool = False,
    regexes_to_ignore: Sequence[str] = (),
) -> pl.Expr:
    """The text lm-eval-harness's ``exact_match`` compares, with the same options.

    Parameters
    ----------
    expr
        A string column name or expression.
    ignore_case
        Lower-case as Python's ``str.lower`` does (``np.char.lower`` calls it).
    ignore_punctuation
        Delete the 32 ASCII characters of ``string.punctuation`` (only those:
        ``“``, ``–`` or ``¿`` stay).
    ignore_numbers
        Delete the ASCII digits ``0``-``9`` (only those: ``²`` or ``٣`` stay).
    regexes_to_ignore
        Patterns whose every match is deleted, applied one after the other before
        anything else. They run on polars' (Rust) regex engine, see Notes.

    Returns
    -------
    pl.Expr
        ``String``, null where the input is null.

    Notes
    -----
    Reference: ``lm_eval.api.metrics.exact_match_hf_evaluate`` (lm-eval 0.4.13),
    whose steps run in the order regexes, case, punctuation, digits. Edge rules:

    - Trailing NUL characters (``"\\x00"``) are dropped, always: the harness holds
      the strings in numpy fixed-width arrays, which cannot keep them, so
      ``"a\\x00"`` and ``"a"`` compare equal there.
    - Divergence: ``np.char.lower`` writes into an array as wide as its widest
      input, so a character that lower-cases to two (``"İ"`` -> ``"i̇"``) can cut
      the end off the widest string of the batch (``"İX"`` becomes ``"i̇"``),
      depending on the other rows. Here nothing is ever cut off.
    - ``regexes_to_ignore`` run on Rust's ``regex`` crate, with ``\\s``, ``\\S``, ``\\w``
      and ``\\W`` rewritten as the character classes Python's ``re`` means by them
      (:func:`python_regex`). Divergence: look-around and back-references are
      refused by polars with an error, and ``\\b`` keeps Rust's Unicode word
      definition (combining marks are word characters there, not in Python).

    Examples
    --------
    >>> import polars as pl
    >>> pl.select(
    ...     harness_normalize(pl.lit("Answer: 1,234 USD"), regexes_to_ignore=[",", "USD"],
    ...                       ignore_case=True, ignore_numbers=True)
    ... ).item()
    'answer:  '
    """
    text = parse_into_expr(expr)
    if isinstance(regexes_to_ignore, str):
        regexes_to_ignore = (regexes_to_ignore,)
    for pattern in regexes_to_ignore:
        translated = python_regex(pattern)
        _check_regex(pattern, translated)
        text = text.str.replace_all(translated, "").str.strip_chars_end("\x00")
    if ignore_case:
        text = lower(text)
    if ignore_punctuation:
        text = text.str.replace_all(_PUNCTUATION_CLASS, "")
    if ignore_numbers:
        text = text.str.replace_all(_DIGITS_CLASS, "")
    return text.str.strip_chars_end("\x00")


@NORMALIZERS.decorator(
    name="strip",
    reference="Python str.strip() (lighteval strip_strings)",
    meaning="leading and trailing whitespace removed, as Python's str.strip()",
)
def strip(expr: IntoExpr) -> pl.Expr:
    """Python's ``str.strip()``: remove leading and trailing Python whitespace.

    lighteval's ``strip_strings`` option calls it. The whitespace is what
    ``str.isspace()`` accepts, which includes ``\\x1c``-``\\x1f``, ``\\x85`` and
    ``\\u3000`` but not ``\\u200b`` (zero width space) or ``\\ufeff``.

    Parameters
    ----------
    expr
        A string column name or expression.

    Returns
    -------
    pl.Expr
        ``String``, null where the input is null.

    Examples
    --------
    >>> import polars as pl
    >>> pl.select(strip(pl.lit("\\u3000 answer\\x1f\\n"))).item()
    'answer'
    """
    return parse_into_expr(expr).str.strip_chars(whitespace_characters())
