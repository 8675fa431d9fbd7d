"""Scoring every (prediction, gold) pair of a row and keeping the best, as lighteval does.

lighteval's sample metrics take a list of predictions (samples) and a list of golds
(alternatives), score every pair and keep the maximum (``aggregation_function=max``).
:func:`max_over_pairs` does that as one batched kernel over whole columns: lists are
exploded, each side is prepared once per element with expressions, the pairs of a row
are formed by a join on the row number and the per-row maximum by a group-by.

>>> import polars as pl
>>> df = pl.DataFrame({"p": [["a", "b"], ["c"]], "g": ["b", "x"]})
>>> expr = max_over_pairs(
...     "demo", "p", "g", lambda v: [v.alias("pred")], lambda v: [v.alias("gold")],
...     (pl.col("pred") == pl.col("gold")).cast(pl.Float64),
... )
>>> df.select(expr.alias("best"))["best"].to_list()
[1.0, 0.0]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import polars as pl

from evalframe._expr import IntoExpr, RowCheck, describe, elementwise, guard, parse_into_expr
from evalframe.errors import EvalframeError

__all__ = ["max_over_pairs"]

#: Kernel results marking a row whose prediction (or gold) is an empty list.
_EMPTY_PREDICTION, _EMPTY_GOLD = -1.0, -2.0


def _as_rows(metric: str, role: str, source: IntoExpr, series: pl.Series) -> pl.DataFrame:
    """One row per (input row, element): a string stays one element, a list is exploded.

    An empty list contributes no element (the caller marks its row).
    """
    frame = pl.DataFrame({"value": series}).with_row_index("row")
    dtype = series.dtype
    if isinstance(dtype, pl.List) and dtype.inner in (pl.String, pl.Null):
        return frame.explode("value", empty_as_null=False)
    if dtype in (pl.String, pl.Null):
        return frame.with_columns(pl.col("value").cast(pl.String))
    raise EvalframeError(
        f"metric {metric!r}: {role} column {describe(source)} has dtype {dtype}; "
        "expected str or list[str]"
    )


def _empty_list(series: pl.Series) -> pl.Series:
    if isinstance(series.dtype, pl.List):
        return (series.list.len() == 0).fill_null(False)
    return pl.repeat(False, len(series), eager=True)


def max_over_pairs(
    metric: str,
    prediction: IntoExpr,
    gold: IntoExpr,
    prepare_prediction: Callable[[pl.Expr], Sequence[pl.Expr]],
    prepare_gold: Callable[[pl.Expr], Sequence[pl.Expr]],
    pair_score: pl.Expr | Callable[[pl.DataFrame], pl.Series],
) -> pl.Expr:
    """Score every (prediction, gold) pair of a row and keep the maximum.

    A batched kernel over whole columns: lists are exploded, each side is prepared
    (normalised, tokenised) once per element with expressions, the pairs of a row are
    formed by a join on the row number, and the per-row maximum is taken by a group-by.
    ``prepare_*`` map the element column ``value`` to named columns ``pair_score`` reads;
    ``pair_score`` is an expression over them, or a function of the whole frame of pairs
    (``row`` and the prepared columns) returning one score per pair, called once per batch
    (a parser judging the batch's distinct pairs together).
    A row with an empty list on either side is an error (lighteval's ``max()`` of no
    pairs fails), reported by a guard with the row's number in the input.
    """

    def kernel(series: Sequence[pl.Series]) -> pl.Series:
        predictions = _as_rows(metric, "prediction", prediction, series[0])
        golds = _as_rows(metric, "gold", gold, series[1])
        predictions = predictions.select("row", *prepare_prediction(pl.col("value")))
        golds = golds.select("row", *prepare_gold(pl.col("value")))
        pairs = predictions.join(golds, on="row", how="inner")
        if callable(pair_score):
            pairs = pairs.with_columns(pair_score(pairs).cast(pl.Float64).alias("__score"))
            score = pl.col("__score")
        else:
            score = pair_score.cast(pl.Float64)
        per_row = pairs.group_by("row").agg(
            pl.when(score.is_null().any()).then(None).otherwise(score.max()).alias("score")
        )
        rows = pl.DataFrame({"row": pl.int_range(len(series[0]), eager=True, dtype=pl.UInt32)})
        joined = rows.join(per_row, on="row", how="left").sort("row")
        return (
            joined["score"]
            .cast(pl.Float64)
            .set(_empty_list(series[1]), _EMPTY_GOLD)
            .set(_empty_list(series[0]), _EMPTY_PREDICTION)
        )

    inputs = [parse_into_expr(prediction), parse_into_expr(gold)]
    checks = [
        RowCheck(
            invalid=lambda values, marker=marker: values == marker,
            what=f"an empty {role} list",
            expected=f"at least one string in {role} column {describe(source)}",
            show=((role, parse_into_expr(source)),),
        )
        for role, source, marker in (
            ("prediction", prediction, _EMPTY_PREDICTION),
            ("gold", gold, _EMPTY_GOLD),
        )
    ]
    return guard(metric, elementwise(inputs, kernel, pl.Float64), checks)
