"""What the text metrics share about their inputs: accepted dtypes, gold alternatives.

>>> import polars as pl
>>> pl.select(as_alternatives(pl.lit("a"))).item().to_list()
['a']
"""

from __future__ import annotations

import polars as pl

from evalframe._expr import IntoExpr, RowCheck, describe, parse_into_expr
from evalframe.schema import LIST_STR, STR

__all__ = ["DTYPES", "TEXT_DTYPES", "as_alternatives", "empty_gold_check"]

#: A prediction that is one string; a gold that is one string or a list of alternatives.
DTYPES = {"prediction": (STR,), "gold": (STR, LIST_STR)}
#: Both prediction (one or several samples) and gold (one or several alternatives).
TEXT_DTYPES = {"prediction": (STR, LIST_STR), "gold": (STR, LIST_STR)}


def as_alternatives(gold: IntoExpr) -> pl.Expr:
    """Gold as ``List(String)``, whether the column is one string or a list of them."""
    return pl.concat_list([parse_into_expr(gold)]).cast(pl.List(pl.String))


def empty_gold_check(gold: IntoExpr) -> RowCheck:
    golds = pl.concat_list([parse_into_expr(gold)])
    return RowCheck(
        invalid=golds.list.len() == 0,
        what=f"an empty gold list in column {describe(gold)}",
        expected="at least one gold alternative",
    )
