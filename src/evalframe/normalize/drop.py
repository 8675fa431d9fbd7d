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
from functools import cache

import numpy as np
import polars as pl

from evalframe._expr import IntoExpr, parse_into_expr
from evalframe.normalize._python_float import accepted_by_float, float_text
from evalframe.normalize._python_text import (
    lower,
    replace_words,
    split_join,
)
from evalframe.normalize.table import NORMALIZERS

__all__ = ["drop_fix_number", "drop_is_number", "drop_normalize", "drop_tokens"]

#: The words ``_remove_articles`` replaces (``\b(a|an|the)\b``).
ARTICLES = ("a", "an", "the")


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
    return accepted_by_float(parse_into_expr(text))


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
    return float_text(parse_into_expr(text))


@cache
def _punctuation_class() -> str:
    return "[" + "".join(re.escape(ch) for ch in string.punctuation) + "]"


def _fix_token(token: pl.Expr) -> pl.Expr:
    """``_fix_number(_remove_punc(token))`` for one lower-cased token."""
    kept = pl.when(accepted_by_float(token)).then(token).otherwise(
        token.str.replace_all(_punctuation_class(), "")
    )
    return float_text(kept)


@NORMALIZERS.decorator(
    name="drop",
    reference="lm-evaluation-harness drop/utils.py: _normalize_answer",
    meaning="DROP's answer normalisation: lower case, punctuation and articles removed, "
    "numbers normalised",
)
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


def normalize_spans(texts: pl.Series) -> pl.Series:
    """:func:`drop_normalize` of a Series of spans, normalising each distinct token once.

    The harness normalises token by token (``re.split(" |-", span)``, then lower,
    punctuation, number, articles and whitespace per token, dropping blank
    results), so a span's normalised text is its normalised tokens joined by
    spaces. Answers share few distinct tokens, so this does far less work than
    normalising every span whole. A null span stays null.
    """
    import pyarrow as pa  # on first use

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
