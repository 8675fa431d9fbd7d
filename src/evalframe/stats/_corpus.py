"""The aggregate of corpus metrics: the reduce of each group's statistics, bootstrapped.

The value is the metric's formula over the group's statistics; the standard error is
the standard deviation of seeded bootstrap replicates (rows resampled, or whole
clusters when the rows repeat a question), and the interval is the bootstrap
percentile interval, which stays inside the metric's bounds.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from evalframe.errors import EvalframeError
from evalframe.metrics.reduce import Sums, Table
from evalframe.stats import intervals
from evalframe.stats._sample import Settings, check_stray
from evalframe.stats.bootstrap import (
    bootstrap_clusters,
    bootstrap_sums,
    bootstrap_table,
    replicate_stderr,
)
from evalframe.stats.columns import MetricColumn, check_unknown_missing
from evalframe.stats.methods import INTERVAL_METHODS
from evalframe.stats.signature import signature

_ALL = "__evalframe_all__"


def corpus_table(
    frame: pl.LazyFrame, keys: list[str], metric: MetricColumn, settings: Settings
) -> pl.DataFrame:
    """One row per group: counts, value, bootstrap stderr, percentile interval, signature.

    Missing answers are left out of the statistics and counted in ``n_missing``.
    """
    column, request, reduction = metric.column, metric.request, metric.reduction
    scored = metric.scored if metric.scored is not None else pl.lit(True)
    stats = pl.when(scored).then(pl.col(column))
    group_keys = keys or [_ALL]
    group = keys or [pl.lit(0).alias(_ALL)]
    missing = (metric.missing if metric.missing is not None else pl.lit(False)) & scored
    counts = (
        frame.group_by(group, maintain_order=True)
        .agg(
            n=stats.count(),
            n_missing=missing.sum().cast(pl.UInt32),
            n_null=(stats.is_null() & ~missing & scored).sum().cast(pl.UInt32),
            stray=(~scored & pl.col(column).is_not_null()).sum(),
        )
        .collect()
    )
    check_stray(metric, int(counts["stray"].sum() or 0))
    counts = counts.drop("stray")
    check_unknown_missing(metric, int(counts["n_null"].sum() or 0), settings.missing)
    if metric.missing is None:
        counts = counts.with_columns(n_missing=pl.lit(None, dtype=pl.UInt32))
    if settings.missing == "error" and counts["n_missing"].sum():
        raise EvalframeError(
            f"metric {column!r}: {counts['n_missing'].sum()} row(s) have no answer with "
            "missing='error'; use missing='exclude' (corpus metrics leave missing answers "
            "out and count them in n_missing)"
        )
    dtype = frame.collect_schema()[column]
    fields = [f.name for f in dtype.fields] if isinstance(dtype, pl.Struct) else []
    cluster = [pl.col(settings.cluster)] if settings.cluster is not None else []
    present = frame.filter(stats.is_not_null()).select(
        *group, *cluster, pl.col(column).struct.unnest() if fields else pl.col(column)
    )
    if isinstance(reduction, Table):
        scores = _table_scores(present, group_keys, fields, reduction, settings)
    elif isinstance(reduction, Sums):
        scores = _sums_scores(present, group_keys, fields, reduction, settings)
    else:  # pragma: no cover - a corpus metric always names Sums or Table
        raise EvalframeError(f"metric column {column!r}: corpus reduction {reduction!r} unknown")
    rows = [scores.get(tuple(row), (None, None, (None, None), None))
            for row in counts.select(group_keys).rows()]
    clustered = settings.cluster is not None
    # the bootstrap percentile interval, unless the method applies to corpus metrics too
    method = INTERVAL_METHODS[settings.interval]
    text = signature(
        request, stderr=f"bootstrap({settings.cluster})" if clustered else "bootstrap",
        ci=settings.ci, column=column, reduction=reduction, bootstrap=settings.bootstrap,
        seed=settings.seed, interval=method.name if method.on_corpus else "percentile",
        missing=("exclude" if metric.missing is not None else "unknown"),
    )
    values = np.array([r[0] if r[0] is not None else np.nan for r in rows], dtype=np.float64)
    errors = np.array([r[1] if r[1] is not None else np.nan for r in rows], dtype=np.float64)
    if method.on_corpus:
        n = counts["n"].to_numpy().astype(np.float64)
        units = np.array([r[3] if r[3] is not None else np.nan for r in rows], dtype=np.float64)
        estimate = intervals.Estimate(
            value=values, stderr=errors, n=n, units=units if clustered else n,
            df=(units if clustered else n) - 1, binary=np.zeros(len(rows), dtype=bool),
            repeated=np.zeros(len(rows), dtype=bool), bounds=metric.bounds,
        )
        low, high = method.function(estimate, settings.ci)
    else:
        low = np.array([r[2][0] if r[2][0] is not None else np.nan for r in rows])
        high = np.array([r[2][1] if r[2][1] is not None else np.nan for r in rows])
    table = counts.with_columns(
        reference_signature=_reference_signatures(
            frame, group, group_keys, request, metric.references
        ),
        metric=pl.lit(column),
        value=pl.Series(values, dtype=pl.Float64),
        stderr=pl.Series(errors, dtype=pl.Float64).fill_nan(None),
        ci_low=pl.Series(low, dtype=pl.Float64).fill_nan(None),
        ci_high=pl.Series(high, dtype=pl.Float64).fill_nan(None),
        n_clusters=pl.Series([r[3] for r in rows], dtype=pl.UInt32),
        signature=pl.lit(text),
    )
    # a NaN value is a real outcome of the formula (no bytes at all): kept as NaN
    return table.with_columns(
        value=pl.when(pl.col("n") > 0).then(pl.col("value")).otherwise(None)
    )


def _reference_signatures(
    frame: pl.LazyFrame, group: list, group_keys: list[str], request, references: tuple[str, ...]
) -> pl.Series:
    """Per group, the reference implementation's signature (``nrefs`` from the golds)."""
    make = request.spec.reference_signature if request is not None else None
    if make is None:
        return pl.lit(None, dtype=pl.String)
    options = request.keyword_options()
    schema = frame.collect_schema()
    gold = next((name for name in references if name in schema), None)
    if gold is None or not isinstance(schema[gold], pl.List):
        return pl.lit(make(nrefs=1, **options), dtype=pl.String)
    sizes = (
        frame.filter(pl.col(gold).is_not_null())
        .group_by(group, maintain_order=True)
        .agg(low=pl.col(gold).list.len().min(), high=pl.col(gold).list.len().max())
        .collect()
    )
    found = {
        tuple(row[:-2]): (row[-2] if row[-2] == row[-1] else "var") for row in sizes.rows()
    }
    keys = frame.group_by(group, maintain_order=True).agg().collect().rows()
    return pl.Series(
        [make(nrefs=found.get(tuple(key), 1), **options) for key in keys], dtype=pl.String
    )


def _summary(replicates: np.ndarray, level: float) -> tuple[float, tuple[float, float]]:
    return replicate_stderr(replicates), intervals.percentile_interval(replicates, level)


def _table_scores(present, group_keys, fields, reduction: Table, settings: Settings) -> dict:
    level_keys = [*group_keys, *([settings.cluster] if settings.cluster else [])]
    cells = present.group_by([*level_keys, *fields], maintain_order=True).len().collect()
    results = {}
    for key, part in cells.partition_by(group_keys, as_dict=True, maintain_order=True).items():
        distinct = part.select(fields).unique(maintain_order=True).with_row_index("__cell")
        part = part.join(distinct, on=fields, how="left", nulls_equal=True)
        cell_values = {field: distinct[field].to_numpy() for field in fields}
        counts = np.bincount(
            part["__cell"].to_numpy(), weights=part["len"].to_numpy(), minlength=distinct.height
        ).astype(np.int64)
        value = float(reduction.formula(cell_values, counts[None, :])[0])
        n = int(counts.sum())
        if settings.cluster is None:
            n_clusters = None
            if n < 2:
                results[key] = (value, None, (None, None), None)
                continue
            replicates = bootstrap_table(
                reduction, cell_values, counts, replicates=settings.bootstrap, seed=settings.seed
            )
        else:
            ids = part.select(settings.cluster).unique(maintain_order=True).with_row_index("__c")
            part = part.join(ids, on=settings.cluster, how="left", nulls_equal=True)
            n_clusters = ids.height
            matrix = np.zeros((n_clusters, distinct.height), dtype=np.float64)
            np.add.at(matrix, (part["__c"].to_numpy(), part["__cell"].to_numpy()),
                      part["len"].to_numpy())
            if n_clusters < 2:
                results[key] = (value, None, (None, None), n_clusters)
                continue
            weights = bootstrap_clusters(n_clusters, settings.bootstrap, settings.seed)
            replicates = np.asarray(
                reduction.formula(cell_values, np.rint(weights @ matrix).astype(np.int64)),
                dtype=np.float64,
            )
        stderr, interval = _summary(replicates, settings.ci)
        results[key] = (value, stderr, interval, n_clusters)
    return results


def _sums_scores(present, group_keys, fields, reduction: Sums, settings: Settings) -> dict:
    rows = present.collect()
    results = {}
    for key, part in rows.partition_by(group_keys, as_dict=True, maintain_order=True).items():
        # summed in the field's own dtype (exact for integer counts), then as float64
        sums = {field: np.array([float(part[field].sum())]) for field in fields}
        value = float(reduction.formula(sums)[0])
        if settings.cluster is not None:
            per_cluster = part.group_by(settings.cluster, maintain_order=True).agg(
                [pl.col(field).sum() for field in fields]
            )
            values = {f: per_cluster[f].cast(pl.Float64).to_numpy() for f in fields}
            n_clusters = per_cluster.height
        else:
            values = {f: part[f].cast(pl.Float64).to_numpy() for f in fields}
            n_clusters = None
        units = per_cluster.height if settings.cluster is not None else part.height
        if units < 2:
            results[key] = (value, None, (None, None), n_clusters)
            continue
        replicates = bootstrap_sums(
            reduction, values, replicates=settings.bootstrap, seed=settings.seed
        )
        stderr, interval = _summary(replicates, settings.ci)
        results[key] = (value, stderr, interval, n_clusters)
    return results
