"""Test helpers for reading scored frames."""

from __future__ import annotations

import polars as pl

from evalframe.scored import CONTRACT_COLUMN, missing_column


def unscored(scored: pl.DataFrame, metric: str) -> pl.Series:
    """``metric``'s column as the metric computed it: null where the answer was missing.

    ``evalframe.score`` scores a missing answer as wrong in the column and flags it in
    ``<metric>:missing``; metric tests check the metric's own null rule.
    """
    flag = missing_column(metric)
    if flag not in scored.columns:
        return scored[metric]
    return scored.select(
        pl.when(pl.col(flag)).then(None).otherwise(pl.col(metric)).alias(metric)
    ).to_series()


def inputs_and_scores(scored: pl.DataFrame, metrics: list[str]) -> pl.DataFrame:
    """``scored`` without the contract's bookkeeping columns (the flags and the record)."""
    extra = [missing_column(metric) for metric in metrics] + [CONTRACT_COLUMN]
    return scored.drop([name for name in extra if name in scored.columns])
