"""Python's ``float()`` and ``repr(float)`` on text, as polars expressions.

Reference implementations that canonicalise numbers write ``str(float(token))``
when ``float()`` accepts the token (lm-evaluation-harness's DROP ``_fix_number``,
lighteval's ``homogeneize_numbers``). These expressions give the same text for
every input, with no Python called per row: which strings ``float()`` accepts is a
regular language (built from the running Python's Unicode tables), the parse
maps the digits of every script to ASCII, and the print fixes the few places
where polars' shortest round-trip formatting differs from Python's.

>>> import polars as pl
>>> pl.select(float_text(pl.lit(pl.Series(["1_000", "ten"])))).to_series().to_list()
['1000.0', 'ten']
"""

from __future__ import annotations

import unicodedata
from functools import cache

import polars as pl

from evalframe._expr import let
from evalframe.normalize._python_text import as_class, decimal_characters, whitespace_characters

__all__ = ["accepted_by_float", "float_text"]


@cache
def _decimal_digits() -> dict[str, str]:
    """Every character ``float()`` reads as a decimal digit, mapped to its ASCII digit.

    CPython converts a non-ASCII character to a digit when it has a Unicode decimal
    value (``Py_UNICODE_TODECIMAL``); those are exactly the characters ``re``'s
    ``\\d`` matches in a str pattern (``Py_UNICODE_ISDECIMAL``, the same table).
    """
    return {ch: str(unicodedata.decimal(ch)) for ch in decimal_characters()}


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
    digit = as_class(_decimal_digits())
    space = as_class(_float_strip_characters())
    digits = f"{digit}(?:_?{digit})*"  # PEP 515: one underscore, only between digits
    decimal = f"(?:{digits}(?:\\.(?:{digits})?)?|\\.{digits})"
    exponent = f"(?:[eE][+-]?{digits})?"
    special = "[iI][nN][fF](?:[iI][nN][iI][tT][yY])?|[nN][aA][nN]"
    return f"^{space}*[+-]?(?:{decimal}{exponent}|{special}){space}*$"


def accepted_by_float(text: pl.Expr) -> pl.Expr:
    """Whether Python's ``float(text)`` succeeds (null for null).

    >>> import polars as pl
    >>> values = pl.Series(["1_000", "1__0", " ١٢ "])
    >>> pl.select(accepted_by_float(pl.lit(values))).to_series().to_list()
    [True, False, True]
    """
    return text.str.contains(_number_pattern())


def float_text(text: pl.Expr) -> pl.Expr:
    """``str(float(text))`` where ``float()`` accepts the text, else the text unchanged.

    >>> import polars as pl
    >>> values = pl.Series(["007", "1e16", "0.00001", "-Infinity", "NaN", "x"])
    >>> pl.select(float_text(pl.lit(values))).to_series().to_list()
    ['7.0', '1e+16', '1e-05', '-inf', 'nan', 'x']
    """
    return let({"text": text}, _fix_number_of)


def _python_float(text: pl.Expr) -> pl.Expr:
    """``float(text)`` for a text :func:`accepted_by_float` accepts (unspecified otherwise)."""
    return (
        text.str.strip_chars(_float_strip_characters())
        .str.replace_all("_", "", literal=True)
        .str.replace_many(_non_ascii_digits())
        .cast(pl.Float64, strict=False)
    )


@cache
def _non_ascii_digits() -> dict[str, str]:
    return {ch: value for ch, value in _decimal_digits().items() if ord(ch) >= 128}


def _python_repr(number: pl.Expr) -> pl.Expr:
    """``repr(float)`` of a Float64 expression, as Python prints it.

    Polars prints the same shortest round-trip digits as Python; it differs only
    in ``NaN`` (Python ``nan``), one-digit exponents (``1e-7``; Python ``1e-07``)
    and in writing ``1e-5 <= |x| < 1e-4`` without an exponent (Python ``1e-05``).
    """
    return let({"text": number.cast(pl.String)}, _python_repr_of)


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


def _fix_number_of(text: pl.Expr) -> pl.Expr:
    # Non-numbers become null before the (costlier) parse and print, which then skip them.
    number = pl.when(accepted_by_float(text)).then(text)
    return pl.coalesce(_python_repr(_python_float(number)), text)


