"""The DROP answer normaliser of lm-evaluation-harness, as polars expressions.

Reproduces ``_normalize`` of ``lm_eval/tasks/drop/utils.py`` (lm-eval 0.4.13)
exactly, character for character:

1. lower-case the span with Python's ``str.lower``;
2. cut it into tokens on every space ``" "`` and hyphen-minus ``"-"``
   (``re.split(" |-", text)``; no other character separates tokens here);
3. in each token: remove ASCII punctuation (``string.punctuation``) unless the
   token is a number; then, if what is left is a number, replace it by
   ``str(float(token))`` (so ``"1,000"``, ``"1000"``, ``"1_000"``, ``"1e3"``
   and ``"١٠٠٠"`` all become ``"1000.0"``); then replace the words
   ``a``/``an``/``the`` by a space and collapse whitespace;
4. drop the tokens left empty and join the rest with single spaces.

"Is a number" means exactly "Python's ``float()`` accepts it" (see
:func:`drop_is_number`), and the number is printed exactly as Python's
``repr(float)`` prints it (see :func:`drop_fix_number`): ``"inf"``, ``"nan"``,
``"1e+16"``, ``"1e-05"``.

>>> import polars as pl
>>> df = pl.DataFrame({"span": ["The 1,000-yard   run!", "twenty-one", None]})
>>> df.with_columns(drop_normalize("span").alias("normalized"))
shape: (3, 2)
┌───────────────────────┬─────────────────┐
│ span                  ┆ normalized      │
│ ---                   ┆ ---             │
│ str                   ┆ str             │
╞═══════════════════════╪═════════════════╡
│ The 1,000-yard   run! ┆ 1000.0 yard run │
│ twenty-one            ┆ twenty one      │
│ null                  ┆ null            │
└───────────────────────┴─────────────────┘
"""

from __future__ import annotations

import re
import string
import unicodedata
from collections.abc import Callable
from functools import cache

import numpy as np
import polars as pl
import pyarrow as pa

from evalframe._expr import IntoExpr, parse_into_expr
from evalframe.normalize._python_text import (
    _all_characters,
    _as_class,
    lower,
    replace_words,
    split_join,
    whitespace_characters,
)

__all__ = ["drop_fix_number", "drop_is_number", "drop_normalize", "drop_tokens"]

#: The words ``_remove_articles`` replaces (``\b(a|an|the)\b``).
ARTICLES = ("a", "an", "the")


@cache
def _decimal_digits() -> dict[str, str]:
    """Every character ``float()`` reads as a decimal digit, mapped to its ASCII digit.

    CPython converts a non-ASCII character to a digit when it has a Unicode decimal
    value (``Py_UNICODE_TODECIMAL``); those are exactly the characters ``re``'s
    ``\\d`` matches in a str pattern (``Py_UNICODE_ISDECIMAL``, the same table).
    """
    return {ch: str(unicodedata.decimal(ch)) for ch in re.findall(r"\d", _all_characters())}


@cache
def _float_strip_characters() -> str:
    """Characters ``float()`` strips from both ends of its argument.

    The ASCII whitespace ``" \\t\\n\\v\\f\\r"`` and every non-ASCII character for which
    ``str.isspace()`` holds; *not* the ASCII separators ``\\x1c``-``\\x1f``, which
    ``str.isspace()`` accepts but ``float()`` rejects.
    """
    return " \t\n\v\f\r" + "".join(ch for ch in whitespace_characters() if ord(ch) >= 128)


@cache
def _number_pattern() -> str:
    """A regex matching exactly the strings Python's ``float()`` accepts."""
    digit = _as_class(_decimal_digits())
    space = _as_class(_float_strip_characters())
    digits = f"{digit}(?:_?{digit})*"  # PEP 515: one underscore, only between digits
    decimal = f"(?:{digits}(?:\\.(?:{digits})?)?|\\.{digits})"
    exponent = f"(?:[eE][+-]?{digits})?"
    special = "[iI][nN][fF](?:[iI][nN][iI][tT][yY])?|[nN][aA][nN]"
    return f"^{space}*[+-]?(?:{decimal}{exponent}|{special}){space}*$"


def drop_is_number(text: IntoExpr) -> pl.Expr:
    """Whether Python's ``float(text)`` succeeds (the harness's ``_is_number``).

    Accepts what ``float()`` accepts and nothing else: surrounding whitespace
    (``" 12 "``, ``"\\u300012"``), underscores between digits (``"1_000"``), any
    Unicode decimal digits (``"١٢"``), exponents (``"1e3"``), ``"inf"``,
    ``"infinity"`` and ``"nan"`` in any case, with an optional sign. A null is null.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"t": ["1_000", "١٢", " 12 ", "1e3", "NaN", "1__0", "12a", None]})
    >>> df.with_columns(drop_is_number("t").alias("number")).transpose(include_header=True)
    shape: (2, 9)
    ┌────────┬──────────┬──────────┬──────────┬───┬──────────┬──────────┬──────────┬──────────┐
    │ column ┆ column_0 ┆ column_1 ┆ column_2 ┆ … ┆ column_4 ┆ column_5 ┆ column_6 ┆ column_7 │
    │ ---    ┆ ---      ┆ ---      ┆ ---      ┆   ┆ ---      ┆ ---      ┆ ---      ┆ ---      │
    │ str    ┆ str      ┆ str      ┆ str      ┆   ┆ str      ┆ str      ┆ str      ┆ str      │
    ╞════════╪══════════╪══════════╪══════════╪═══╪══════════╪══════════╪══════════╪══════════╡
    │ t      ┆ 1_000    ┆ ١٢       ┆  12      ┆ … ┆ NaN      ┆ 1__0     ┆ 12a      ┆ null     │
    │ number ┆ true     ┆ true     ┆ true     ┆ … ┆ true     ┆ false    ┆ false    ┆ null     │
    └────────┴──────────┴──────────┴──────────┴───┴──────────┴──────────┴──────────┴──────────┘
    """
    return parse_into_expr(text).str.contains(_number_pattern())


def _python_float(text: pl.Expr) -> pl.Expr:
    """``float(text)`` for a text :func:`drop_is_number` accepts (unspecified otherwise)."""
    return (
        text.str.strip_chars(_float_strip_characters())
        .str.replace_all("_", "", literal=True)
        .str.replace_many(_non_ascii_digits())
        .cast(pl.Float64, strict=False)
    )


def _let(bindings: dict[str, pl.Expr], body: Callable[..., pl.Expr]) -> pl.Expr:
    """Evaluate ``body`` with each binding computed once, however often it is used.

    A polars expression tree repeats a sub-expression at every use; packing the
    values into a one-element list of structs and evaluating ``body`` inside
    ``list.eval`` refers to them by field instead. ``body`` must be row-wise.
    """
    fields = {name: pl.element().struct.field(name) for name in bindings}
    return pl.concat_list([pl.struct(**bindings)]).list.eval(body(**fields)).list.first()


@cache
def _non_ascii_digits() -> dict[str, str]:
    return {ch: value for ch, value in _decimal_digits().items() if ord(ch) >= 128}


def _python_repr(number: pl.Expr) -> pl.Expr:
    """``repr(float)`` of a Float64 expression, as Python prints it.

    Polars prints the same shortest round-trip digits as Python; it differs only
    in ``NaN`` (Python ``nan``), one-digit exponents (``1e-7``; Python ``1e-07``)
    and in writing ``1e-5 <= |x| < 1e-4`` without an exponent (Python ``1e-05``).
    """
    return _let({"text": number.cast(pl.String)}, _python_repr_of)


def _python_repr_of(text: pl.Expr) -> pl.Expr:
    # Each fix runs only where it can apply (elsewhere its input is null, which is cheap).
    small = pl.when(text.str.starts_with("0.0000") | text.str.starts_with("-0.0000")).then(
        text.str.replace(r"^(-?)0\.0000([0-9])([0-9]*)$", "${1}${2}.${3}e-05").str.replace(
            ".e", "e", literal=True
        )
    )
    text = pl.coalesce(small, text)
    exponent = pl.when(text.str.contains("e", literal=True)).then(
        text.str.replace(r"e([+-])([0-9])$", "e${1}0${2}")
    )
    return pl.coalesce(exponent, text).str.replace("NaN", "nan", literal=True)


def drop_fix_number(text: IntoExpr) -> pl.Expr:
    """``str(float(text))`` where ``float()`` accepts the text, else the text (``_fix_number``).

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"t": ["1_000", "١٢", "1e16", "0.00001", "Infinity", "ten", None]})
    >>> df.with_columns(drop_fix_number("t").alias("fixed"))
    shape: (7, 2)
    ┌──────────┬────────┐
    │ t        ┆ fixed  │
    │ ---      ┆ ---    │
    │ str      ┆ str    │
    ╞══════════╪════════╡
    │ 1_000    ┆ 1000.0 │
    │ ١٢       ┆ 12.0   │
    │ 1e16     ┆ 1e+16  │
    │ 0.00001  ┆ 1e-05  │
    │ Infinity ┆ inf    │
    │ ten      ┆ ten    │
    │ null     ┆ null   │
    └──────────┴────────┘
    """
    return _let({"text": parse_into_expr(text)}, _fix_number_of)


def _fix_number_of(text: pl.Expr) -> pl.Expr:
    # Non-numbers become null before the (costlier) parse and print, which then skip them.
    number = pl.when(drop_is_number(text)).then(text)
    return pl.coalesce(_python_repr(_python_float(number)), text)


@cache
def _punctuation_class() -> str:
    return "[" + "".join(re.escape(ch) for ch in string.punctuation) + "]"


def _fix_token(token: pl.Expr) -> pl.Expr:
    """``_fix_number(_remove_punc(token))`` for one lower-cased token."""
    kept = pl.when(drop_is_number(token)).then(token).otherwise(
        token.str.replace_all(_punctuation_class(), "")
    )
    return _let({"text": kept}, _fix_number_of)


def drop_normalize(text: IntoExpr) -> pl.Expr:
    """The harness's DROP ``_normalize`` of one answer span.

    Lower-case, split into tokens on spaces and hyphens, strip punctuation from
    non-numbers, canonicalise numbers as ``str(float(token))``, replace the
    articles a/an/the by spaces, collapse whitespace, drop empty tokens and join
    with single spaces. Every step follows Python exactly (``str.lower``,
    ``float()``, ``re``'s ``\\b``, ``str.split``). A null span stays null.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"span": ["An 1_000 $", "the-end", "1.5%", "  ", None]})
    >>> df.with_columns(drop_normalize("span").alias("normalized"))
    shape: (5, 2)
    ┌────────────┬────────────┐
    │ span       ┆ normalized │
    │ ---        ┆ ---        │
    │ str        ┆ str        │
    ╞════════════╪════════════╡
    │ An 1_000 $ ┆ 1000.0     │
    │ the-end    ┆ end        │
    │ 1.5%       ┆ 15.0       │
    │            ┆            │
    │ null       ┆ null       │
    └────────────┴────────────┘
    """
    lowered = lower(parse_into_expr(text))
    tokens = lowered.str.replace_all("-", " ", literal=True).str.split(" ")
    joined = tokens.list.eval(_fix_token(pl.element())).list.join(" ")
    # Articles and whitespace are handled per token in the harness; on the joined
    # text the result is the same, since tokens are separated by a non-word space.
    return split_join(replace_words(joined, ARTICLES))


def _normalize_spans(texts: pl.Series) -> pl.Series:
    """:func:`drop_normalize` of a Series of spans, normalising each distinct token once.

    The harness normalises token by token (``re.split(" |-", span)``, then lower,
    punctuation, number, articles and whitespace per token, dropping blank
    results), so a span's normalised text is its normalised tokens joined by
    spaces. Answers share few distinct tokens, so this does far less work than
    normalising every span whole. A null span stays null.
    """
    tokens = texts.cast(pl.String).str.replace_all("-", " ", literal=True).str.split(" ")
    flat = tokens.explode(empty_as_null=False, keep_nulls=False)
    distinct = flat.unique()
    normalized = distinct.to_frame("token").select(drop_normalize("token")).to_series()
    lengths = tokens.list.len().fill_null(0).to_numpy()
    offsets = np.concatenate([[0], np.cumsum(lengths, dtype=np.int64)])
    mapped = flat.replace_strict(distinct, normalized).to_arrow()
    rebuilt = pa.LargeListArray.from_arrays(
        pa.array(offsets), mapped, mask=tokens.is_null().to_arrow()
    )
    return (
        pl.Series(texts.name, rebuilt, dtype=pl.List(pl.String))
        .list.filter(pl.element() != "")
        .list.join(" ")
    )


def drop_tokens(normalized: IntoExpr) -> pl.Expr:
    """The bag of words of a normalised span: ``set(normalized.split())`` as a list.

    The order of the words is unspecified; an empty span gives an empty list.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"n": ["b a b", "", None]})
    >>> df.with_columns(drop_tokens("n").list.sort().alias("bag"))
    shape: (3, 2)
    ┌───────┬────────────┐
    │ n     ┆ bag        │
    │ ---   ┆ ---        │
    │ str   ┆ list[str]  │
    ╞═══════╪════════════╡
    │ b a b ┆ ["a", "b"] │
    │       ┆ []         │
    │ null  ┆ null       │
    └───────┴────────────┘
    """
    normalized = split_join(parse_into_expr(normalized))
    return (
        pl.when(normalized == "")
        .then(pl.lit([], dtype=pl.List(pl.String)))
        .otherwise(normalized.str.split(" "))
        .list.unique()
    )
