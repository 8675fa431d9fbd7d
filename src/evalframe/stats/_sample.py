"""The aggregate of sample metrics: the mean, its standard error and a bounded interval.

One group-by pass computes every metric's counts, mean and standard deviation; a second,
per clustered metric, the cluster-robust standard error. Intervals follow the scores:
Wilson for 0/1 scores (on the effective sample size when clustered), Student-t clipped
to the metric's bounds otherwise (see :mod:`evalframe.stats.intervals`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl

from evalframe.errors import EvalframeError
from evalframe.stats import intervals
from evalframe.stats.columns import MetricColumn, check_unknown_missing
from evalframe.stats.methods import INTERVAL_METHODS, STDERR_METHODS
from evalframe.stats.signature import signature
from evalframe.stats.stderr import clustered_from_sums

_ALL = "__evalframe_all__"
#: The cluster id column of the per-(group, cluster) statistics.
CLUSTER = "__evalframe_cluster__"


@dataclass(frozen=True)
class Settings:
    """The choices that determine an aggregate's numbers (all in the signature)."""

    ci: float
    interval: str
    missing: str
    stderr: str
    cluster: str | None
    bootstrap: int
    seed: int


def sample_table(
    frame: pl.LazyFrame, keys: list[str], columns: Sequence[MetricColumn], settings: Settings
) -> pl.DataFrame:
    """One row per group x column: counts, value, stderr, interval, signature."""
    summary, per_cluster = sample_statistics(frame, keys, columns, settings)
    return finish_samples(
        merge_samples([summary], keys, len(columns)),
        [per_cluster] if per_cluster is not None else None,
        keys, columns, settings,
    )


def sample_statistics(
    frame: pl.LazyFrame, keys: list[str], columns: Sequence[MetricColumn], settings: Settings
) -> tuple[pl.DataFrame, pl.DataFrame | None]:
    """(per group, per (group, cluster)): the sufficient statistics of every column.

    Per group (``keys``, or one group ``__evalframe_all__``) and column ``i``: ``n{i}``
    (rows that count), ``mean{i}``, ``std{i}`` (``ddof=1``), ``binary{i}`` (every score 0
    or 1), ``missing{i}`` (missing answers; absent where unknown) and ``null{i}`` (rows
    that cannot be scored), from one group-by (with ``missing="error"``, the first missing
    row too, raised after it). With ``settings.cluster``, per (group, cluster id in
    ``__cluster``): ``rows``, and each column's ``sum{i}`` and ``count{i}``.
    """
    derived_columns = []
    known = []
    for i, column in enumerate(columns):
        derived_columns.append(column.counted(settings.missing).alias(f"__v{i}"))
        scored = column.scored if column.scored is not None else pl.lit(True)
        derived_columns.append(scored.alias(f"__s{i}"))
        if column.missing is not None:
            derived_columns.append((column.missing & scored).alias(f"__m{i}"))
            known.append(i)
    derived = frame.with_columns(derived_columns)
    raising = settings.missing == "error" and bool(known)
    grouped = derived.with_row_index("__row") if raising else derived
    group = keys or [pl.lit(0).alias(_ALL)]
    aggregations = []
    for i, column in enumerate(columns):
        value, scored = pl.col(f"__v{i}"), pl.col(f"__s{i}")
        aggregations += [
            value.count().alias(f"n{i}"),
            value.mean().alias(f"mean{i}"),
            value.std(ddof=1).alias(f"std{i}"),
            value.is_in([0.0, 1.0]).all().alias(f"binary{i}"),
            # rows another scoring wrote that hold a value all the same: unexplained
            (~scored & pl.col(column.column).is_not_null()).sum().alias(f"stray{i}"),
        ]
        if i in known:
            missing = pl.col(f"__m{i}")
            aggregations += [
                missing.sum().cast(pl.UInt32).alias(f"missing{i}"),
                (value.is_null() & ~missing & scored).sum().cast(pl.UInt32).alias(f"null{i}"),
            ]
            if raising:
                aggregations.append(pl.col("__row").filter(missing).min().alias(f"first{i}"))
        else:
            aggregations.append(
                (value.is_null() & scored).sum().cast(pl.UInt32).alias(f"null{i}")
            )
    table = grouped.group_by(group, maintain_order=True).agg(aggregations).collect()
    for i, column in enumerate(columns):
        check_stray(column, int(table[f"stray{i}"].sum() or 0))
        check_unknown_missing(column, int(table[f"null{i}"].sum() or 0), settings.missing)
    if raising:
        _raise_on_missing(table, columns, known)
    table = table.drop(
        [name for name in table.columns if name.startswith(("stray", "first"))]
    )
    per_cluster = None
    if settings.cluster is not None:
        per_cluster = (
            derived.group_by([*group, pl.col(settings.cluster).alias(CLUSTER)])
            .agg(
                pl.len().alias("rows"),
                *[pl.col(f"__v{i}").sum().alias(f"sum{i}") for i in range(len(columns))],
                *[pl.col(f"__v{i}").count().alias(f"count{i}") for i in range(len(columns))],
            )
            .collect()
        )
    return table, per_cluster


def merge_samples(tables: Sequence[pl.DataFrame], keys: list[str], count: int) -> pl.DataFrame:
    """The per-group statistics of :func:`sample_statistics` over several batches, merged.

    Counts add; means and standard deviations merge by Chan, Golub and LeVeque's pairwise
    formula (the sum of squared deviations of the whole is each part's plus ``n_i (mean_i -
    mean)**2``). One table is returned as it is.
    """
    if len(tables) == 1:
        return tables[0]
    on = keys or [_ALL]
    stacked = pl.concat(tables, how="vertical_relaxed")
    aggregations = []
    for i in range(count):
        n = pl.col(f"n{i}").cast(pl.Float64)
        mean_i = pl.col(f"mean{i}").fill_null(0.0)
        total = n.sum()
        mean = (n * mean_i).sum() / total
        squares = (
            (pl.col(f"std{i}").fill_null(0.0) ** 2 * (n - 1).clip(lower_bound=0)).sum()
            + (n * (mean_i - mean) ** 2).sum()
        )
        aggregations += [
            pl.col(f"n{i}").sum().alias(f"n{i}"),
            pl.when(total > 0).then(mean).alias(f"mean{i}"),
            pl.when(total > 1).then((squares / (total - 1)).sqrt()).alias(f"std{i}"),
            pl.col(f"binary{i}").all().alias(f"binary{i}"),
            pl.col(f"null{i}").sum().cast(pl.UInt32).alias(f"null{i}"),
        ]
        if f"missing{i}" in stacked.columns:
            aggregations.append(pl.col(f"missing{i}").sum().cast(pl.UInt32).alias(f"missing{i}"))
    return stacked.group_by(on, maintain_order=True).agg(aggregations)


def merge_clusters(tables: Sequence[pl.DataFrame], keys: list[str]) -> pl.DataFrame:
    """The per-(group, cluster) statistics of several batches, added up."""
    if len(tables) == 1:
        return tables[0]
    on = [*(keys or [_ALL]), CLUSTER]
    stacked = pl.concat(tables, how="vertical_relaxed")
    return stacked.group_by(on, maintain_order=True).agg(
        pl.exclude(on).sum()
    )


def finish_samples(
    table: pl.DataFrame,
    per_cluster: Sequence[pl.DataFrame] | None,
    keys: list[str],
    columns: Sequence[MetricColumn],
    settings: Settings,
) -> pl.DataFrame:
    """Aggregate rows from merged statistics: value, stderr, interval, signature."""
    if settings.cluster is not None:
        if per_cluster is None:  # pragma: no cover - the caller passes them when clustering
            raise EvalframeError("clustered standard errors need the per-cluster statistics")
        merged = merge_clusters(per_cluster, keys)
        table = _with_clusters(table.lazy(), merged.lazy(), keys, columns).collect()
    known = [f"missing{i}" in table.columns for i in range(len(columns))]
    parts = [
        _finish(table, keys, i, column, settings, known=known[i])
        for i, column in enumerate(columns)
    ]
    return pl.concat(parts, how="vertical_relaxed")


def _with_clusters(
    summary: pl.LazyFrame,
    per_cluster: pl.LazyFrame,
    keys: list[str],
    columns: Sequence[MetricColumn],
) -> pl.LazyFrame:
    """Join each column's clustered (and question-mean) standard error and cluster count."""
    join_on = keys or [_ALL]
    for i, _ in enumerate(columns):
        robust = clustered_from_sums(
            per_cluster.filter(pl.col(f"count{i}") > 0), join_on, f"sum{i}", f"count{i}"
        ).select(
            *join_on,
            pl.col("n_clusters").alias(f"clusters{i}"),
            pl.col("stderr").alias(f"clustered{i}"),
            pl.col("question_stderr").alias(f"question{i}"),
            pl.col("question_mean").alias(f"qmean{i}"),
        )
        summary = summary.join(robust, on=join_on, how="left", nulls_equal=True)
    return summary


def _finish(
    table: pl.DataFrame,
    keys: list[str],
    i: int,
    column: MetricColumn,
    settings: Settings,
    *,
    known: bool,
) -> pl.DataFrame:
    n = table[f"n{i}"].to_numpy().astype(np.float64)
    mean = table[f"mean{i}"].to_numpy().astype(np.float64)
    std = table[f"std{i}"].to_numpy().astype(np.float64)
    iid = np.where(n > 1, std / np.sqrt(np.maximum(n, 1)), np.nan)
    clustered = settings.cluster is not None
    per_question = STDERR_METHODS[settings.stderr].per_question
    if clustered:
        clusters = table[f"clusters{i}"].fill_null(0).to_numpy().astype(np.float64)
        chosen = table[f"question{i}" if per_question else f"clustered{i}"]
        stderr = chosen.to_numpy().astype(np.float64)
        df = clusters - 1
        # rows that never repeat a cluster are independent: the clustered formula then
        # equals the iid one, and the signature says which applied
        repeated = clusters < n
    else:
        clusters = n
        stderr, df, repeated = iid, n - 1, np.zeros(len(n), dtype=bool)
    binary = table[f"binary{i}"].fill_null(False).to_numpy()
    # where the effective sample size is undefined (every score 0 or 1), Wilson counts the
    # independent units: the questions when rows are clustered
    units = clusters if clustered else n
    if clustered and per_question:
        # the mean of the questions' mean scores, the estimator this standard error is of
        # (the row mean too when every question has as many samples); for 0/1 rows it is
        # a proportion, and its Wilson interval is on the questions' effective number
        mean = table[f"qmean{i}"].to_numpy().astype(np.float64)
        repeated = np.ones(len(mean), dtype=bool)
    estimate = intervals.Estimate(
        value=mean, stderr=stderr, n=n, units=units, df=df, binary=binary, repeated=repeated,
        bounds=_bounds(column, binary),
    )
    low, high = INTERVAL_METHODS[settings.interval].function(estimate, settings.ci)
    # without the metric's answer columns, missing answers cannot be told apart
    unknown = np.full(table.height, not known)
    missing_counts = (
        table[f"missing{i}"].to_numpy().astype(np.float64)
        if known
        else np.full(table.height, np.nan)
    )
    methods = _interval_names(binary, settings)
    # a handful of distinct signatures per column: each is built once
    built: dict[tuple[bool, str, bool], str] = {}
    signatures = []
    for row in range(table.height):
        choice = (bool(repeated[row]), methods[row], bool(unknown[row]))
        text = built.get(choice)
        if text is None:
            text = built[choice] = signature(
                column.request,
                column=column.column,
                stderr=_stderr_name(settings, choice[0]),
                ci=settings.ci,
                interval=choice[1],
                missing="unknown" if choice[2] else settings.missing,
            )
        signatures.append(text)
    empty = n == 0
    mean = np.where(empty, np.nan, mean)
    result = pl.DataFrame(
        {
            "metric": pl.Series([column.column] * table.height, dtype=pl.String),
            "n": table[f"n{i}"].cast(pl.UInt32),
            "n_missing": pl.Series(missing_counts).cast(pl.UInt32, strict=False),
            "n_null": table[f"null{i}"],
            "value": pl.Series(mean, dtype=pl.Float64),
            "stderr": pl.Series(stderr, dtype=pl.Float64),
            "ci_low": pl.Series(low, dtype=pl.Float64),
            "ci_high": pl.Series(high, dtype=pl.Float64),
            "n_clusters": pl.Series(clusters, dtype=pl.Float64).cast(pl.UInt32, strict=False),
            "signature": pl.Series(signatures, dtype=pl.String),
        }
    )
    # No rows: no value. (NaN scores never get here: aggregate refuses them first.)
    result = result.with_columns(
        pl.when(pl.col("n") > 0).then(pl.col("value")).otherwise(None).alias("value"),
        pl.col("stderr").fill_nan(None),
        pl.col("ci_low").fill_nan(None),
        pl.col("ci_high").fill_nan(None),
    )
    return pl.concat([table.select(keys), result], how="horizontal") if keys else result


def _bounds(column: MetricColumn, binary: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per group, the bounds the interval stays in: the metric's, or [0, 1] for 0/1 scores.

    A column that is not a metric's (a harness's own ``acc``) has no known bounds, but the
    mean of 0/1 scores cannot leave [0, 1].
    """
    lower, upper = column.bounds
    low = np.where(binary, np.maximum(lower, 0.0), lower)
    high = np.where(binary, np.minimum(upper, 1.0), upper)
    return low, high


def _interval_names(binary: np.ndarray, settings: Settings) -> list[str]:
    """The interval each group got, as the signature names it (``auto`` resolved)."""
    method = INTERVAL_METHODS[settings.interval]
    if method.applied is not None:
        return method.applied(binary)
    return [method.name] * len(binary)


def _stderr_name(settings: Settings, repeated: bool) -> str:
    """The standard error a group got, as the signature names it."""
    if settings.cluster is None or not repeated:
        return "sem"
    if STDERR_METHODS[settings.stderr].per_question:
        return f"{settings.stderr}({settings.cluster})"
    return f"clustered({settings.cluster})"


def check_stray(column: MetricColumn, count: int) -> None:
    """Refuse rows that hold a metric's value although no scoring of that metric wrote them."""
    if count:
        raise EvalframeError(
            f"metric column {column.column!r}: {count} row(s) hold a value, but the scoring "
            "that wrote them did not compute this metric (rows stacked from another frame): "
            "nothing says what those values are; score them with evalframe.score, or drop them"
        )


def _raise_on_missing(
    summary: pl.DataFrame, columns: Sequence[MetricColumn], known: Sequence[int]
) -> None:
    """Raise for the first column with missing answers (``missing="error"``)."""
    for i in known:
        count = int(summary[f"missing{i}"].sum() or 0)
        if count:
            column = columns[i]
            answers = ", ".join(repr(name) for name in column.answers) or "answer"
            raise EvalframeError(
                f"metric {column.column!r}: {count} row(s) have no answer (null "
                f"{answers}) with missing='error'; first: row {summary[f'first{i}'].min()}. "
                "Use missing='wrong' to count them as wrong or 'exclude' to leave them out"
            )
