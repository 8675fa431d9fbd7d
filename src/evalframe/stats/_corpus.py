"""The aggregate of corpus metrics: the reduce of each group's statistics, bootstrapped.

The value is the metric's formula over the group's statistics; the standard error is
the standard deviation of seeded bootstrap replicates (rows resampled, or whole
clusters when the rows repeat a question), and the interval is the bootstrap
percentile interval, which stays inside the metric's bounds.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl

from evalframe.errors import EvalframeError
from evalframe.metrics.reduce import Sums, Table
from evalframe.stats import intervals
from evalframe.stats._sample import CLUSTER, Settings, check_stray
from evalframe.stats.bootstrap import (
    bootstrap_clusters,
    bootstrap_table,
    poisson_replicate_sums,
    replicate_stderr,
)
from evalframe.stats.bootstrap import row_keys as bootstrap_row_keys
from evalframe.stats.columns import MetricColumn, check_unknown_missing
from evalframe.stats.methods import INTERVAL_METHODS
from evalframe.stats.signature import signature

_ALL = "__evalframe_all__"
_KEY = "__evalframe_row_key__"
_REPLICATE = "__replicate"


@dataclass(frozen=True)
class CorpusStatistics:
    """The sufficient statistics of one corpus metric over a batch, per group.

    Every table has the group keys (or ``__evalframe_all__``). ``counts``: ``n``,
    ``n_missing``, ``n_null``. A :class:`~evalframe.metrics.reduce.Table` metric:
    ``cells``, how often each distinct statistics row occurs (``len``), per cluster id
    (``__evalframe_cluster__``) when rows may be clustered. A
    :class:`~evalframe.metrics.reduce.Sums` metric: ``totals`` (the fields' sums),
    ``per_cluster`` (their sums per cluster id) when rows may be clustered, and
    ``replicates`` (per replicate ``__replicate``, the Poisson-weighted sums of
    :func:`~evalframe.stats.bootstrap.poisson_replicate_sums`) when they may not be.
    ``references``: the smallest and largest number of references per group (``low``,
    ``high``) when the metric's reference signature counts them from a list column.
    """

    fields: tuple[str, ...]
    counts: pl.DataFrame
    cells: pl.DataFrame | None = None
    totals: pl.DataFrame | None = None
    per_cluster: pl.DataFrame | None = None
    replicates: pl.DataFrame | None = None
    references: pl.DataFrame | None = None


def corpus_table(
    frame: pl.LazyFrame, keys: list[str], metric: MetricColumn, settings: Settings
) -> pl.DataFrame:
    """One row per group: counts, value, bootstrap stderr, percentile interval, signature.

    Missing answers are left out of the statistics and counted in ``n_missing``.
    """
    statistics = corpus_statistics(
        frame, keys, metric, settings,
        cluster=settings.cluster, unclustered=settings.cluster is None,
    )
    return finish_corpus([statistics], keys, metric, settings)


def corpus_statistics(
    frame: pl.LazyFrame,
    keys: list[str],
    metric: MetricColumn,
    settings: Settings,
    *,
    cluster: str | None,
    unclustered: bool,
    row_keys: pl.Expr | None = None,
) -> CorpusStatistics:
    """The :class:`CorpusStatistics` of ``metric`` over ``frame``.

    ``cluster``: the column whose ids the statistics are kept per (None: none);
    ``unclustered``: whether the statistics of the row bootstrap are needed too.
    ``row_keys``: the UInt64 key of each row the Poisson replicates are drawn from
    (default: :func:`~evalframe.stats.bootstrap.row_keys` of every column).
    """
    column, request, reduction = metric.column, metric.request, metric.reduction
    scored = metric.scored if metric.scored is not None else pl.lit(True)
    stats = pl.when(scored).then(pl.col(column))
    group = keys or [pl.lit(0).alias(_ALL)]
    on = keys or [_ALL]
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
    by_cluster = [pl.col(cluster).alias(CLUSTER)] if cluster is not None else []
    statistics = pl.col(column).struct.unnest() if fields else pl.col(column)
    keyed = isinstance(reduction, Sums) and unclustered
    present = frame.filter(stats.is_not_null()).select(
        *group, *by_cluster, statistics,
        *([(row_keys if row_keys is not None else bootstrap_row_keys(frame)).alias(_KEY)]
          if keyed else []),
    )
    references = _reference_counts(frame, group, request, metric.references)
    if isinstance(reduction, Table):
        cells = present.group_by([*on, *(by_cluster and [CLUSTER]), *fields]).agg(
            pl.len().cast(pl.UInt64).alias("len")
        ).collect()
        return CorpusStatistics(tuple(fields), counts, cells=cells, references=references)
    if not isinstance(reduction, Sums):  # pragma: no cover - a corpus metric names Sums or Table
        raise EvalframeError(f"metric column {column!r}: corpus reduction {reduction!r} unknown")
    rows = present.collect()
    # summed in the field's own dtype (exact for integer counts), then as float64
    groups = rows.partition_by(on, as_dict=True, maintain_order=True)
    totals = pl.DataFrame(
        [[*key, *(part[f].sum() for f in fields)] for key, part in groups.items()],
        schema={**{name: rows.schema[name] for name in on},
                **{f: _sum_dtype(rows.schema[f]) for f in fields}},
        orient="row",
    )
    per_cluster = None
    if cluster is not None:
        per_cluster = rows.group_by([*on, CLUSTER], maintain_order=True).agg(
            [pl.col(f).sum() for f in fields]
        )
    replicates = None
    if keyed:
        parts = []
        for key, part in groups.items():
            sums = poisson_replicate_sums(
                part[_KEY].to_numpy(),
                np.column_stack([part[f].cast(pl.Float64).to_numpy() for f in fields]),
                replicates=settings.bootstrap, seed=settings.seed,
            )
            parts.append(pl.DataFrame({
                **{name: pl.Series([value] * settings.bootstrap, dtype=rows.schema[name])
                   for name, value in zip(on, key, strict=True)},
                _REPLICATE: pl.Series(np.arange(settings.bootstrap), dtype=pl.UInt32),
                **{f: sums[:, j] for j, f in enumerate(fields)},
            }))
        replicates = (
            pl.concat(parts) if parts else pl.DataFrame(
                schema={**{name: rows.schema[name] for name in on}, _REPLICATE: pl.UInt32,
                        **dict.fromkeys(fields, pl.Float64)}
            )
        )
    return CorpusStatistics(
        tuple(fields), counts, totals=totals, per_cluster=per_cluster, replicates=replicates,
        references=references,
    )


def _sum_dtype(dtype: pl.DataType) -> pl.DataType:
    """The dtype a field's sum is kept in: Int64 for counts (exact), Float64 otherwise."""
    return pl.Int64 if dtype.is_integer() or dtype == pl.Boolean else pl.Float64


def merge_corpus(parts: Sequence[CorpusStatistics], keys: list[str]) -> CorpusStatistics:
    """The :class:`CorpusStatistics` of several batches, added up."""
    if len(parts) == 1:
        return parts[0]
    on = keys or [_ALL]

    def added(tables: list[pl.DataFrame | None], by: list[str]) -> pl.DataFrame | None:
        present = [table for table in tables if table is not None]
        if not present:
            return None
        stacked = pl.concat(present, how="vertical_relaxed")
        return stacked.group_by(by, maintain_order=True).agg(pl.exclude(by).sum())

    fields = list(parts[0].fields)
    counts = pl.concat([p.counts for p in parts], how="vertical_relaxed").group_by(
        on, maintain_order=True
    ).agg(
        pl.col("n").sum(),
        # unknown missing answers stay unknown (null), not 0
        pl.when(pl.col("n_missing").is_not_null().all()).then(pl.col("n_missing").sum())
        .cast(pl.UInt32).alias("n_missing"),
        pl.col("n_null").sum().cast(pl.UInt32),
    )
    cells = None
    if parts[0].cells is not None:
        clustered = CLUSTER in parts[0].cells.columns
        cells = added([p.cells for p in parts], [*on, *([CLUSTER] if clustered else []), *fields])
    references = None
    if parts[0].references is not None:
        references = pl.concat(
            [p.references for p in parts if p.references is not None], how="vertical_relaxed"
        ).group_by(on, maintain_order=True).agg(pl.col("low").min(), pl.col("high").max())
    return CorpusStatistics(
        tuple(fields), counts, cells=cells,
        totals=added([p.totals for p in parts], on),
        per_cluster=added([p.per_cluster for p in parts], [*on, CLUSTER]),
        replicates=added([p.replicates for p in parts], [*on, _REPLICATE]),
        references=references,
    )


def finish_corpus(
    parts: Sequence[CorpusStatistics], keys: list[str], metric: MetricColumn, settings: Settings
) -> pl.DataFrame:
    """Aggregate rows of a corpus metric from its (merged) statistics."""
    merged = merge_corpus(parts, keys)
    column, request, reduction = metric.column, metric.request, metric.reduction
    on = keys or [_ALL]
    fields = list(merged.fields)
    counts = merged.counts
    if isinstance(reduction, Table):
        scores = _table_scores(merged.cells, on, fields, reduction, settings)
    else:
        scores = _sums_scores(merged, on, fields, reduction, settings)
    rows = [scores.get(tuple(row), (None, None, (None, None), None))
            for row in counts.select(on).rows()]
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
        reference_signature=_reference_signatures(counts, on, request, merged.references),
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


def _reference_counts(
    frame: pl.LazyFrame, group: list, request, references: tuple[str, ...]
) -> pl.DataFrame | None:
    """Per group, the fewest and most references of a row, where the signature counts them."""
    if request is None or request.spec.reference_signature is None:
        return None
    schema = frame.collect_schema()
    gold = next((name for name in references if name in schema), None)
    if gold is None or not isinstance(schema[gold], pl.List):
        return None
    return (
        frame.filter(pl.col(gold).is_not_null())
        .group_by(group, maintain_order=True)
        .agg(low=pl.col(gold).list.len().min(), high=pl.col(gold).list.len().max())
        .collect()
    )


def _reference_signatures(
    counts: pl.DataFrame, on: list[str], request, references: pl.DataFrame | None
) -> pl.Series | pl.Expr:
    """Per group, the reference implementation's signature (``nrefs`` from the golds)."""
    make = request.spec.reference_signature if request is not None else None
    if make is None:
        return pl.lit(None, dtype=pl.String)
    options = request.keyword_options()
    if references is None:
        return pl.lit(make(nrefs=1, **options), dtype=pl.String)
    found = {
        tuple(row[:-2]): (row[-2] if row[-2] == row[-1] else "var")
        for row in references.select(*on, "low", "high").rows()
    }
    return pl.Series(
        [make(nrefs=found.get(tuple(key), 1), **options) for key in counts.select(on).rows()],
        dtype=pl.String,
    )


def _summary(replicates: np.ndarray, level: float) -> tuple[float, tuple[float, float]]:
    return replicate_stderr(replicates), intervals.percentile_interval(replicates, level)


def _table_scores(cells: pl.DataFrame, on, fields, reduction: Table, settings: Settings) -> dict:
    """Per group: (value, stderr, interval, clusters), the cells in a canonical (sorted) order.

    The order of the cells and the clusters is the data's, not the batches', so the
    bootstrap draws the same replicates however the rows were split.
    """
    clustered = settings.cluster is not None
    if not clustered and CLUSTER in cells.columns:
        cells = cells.group_by([*on, *fields]).agg(pl.col("len").sum())
    results = {}
    for key, part in cells.partition_by(on, as_dict=True, maintain_order=True).items():
        distinct = (
            part.select(fields).unique().sort(fields, nulls_last=True)
            .with_row_index("__cell")
        )
        part = part.join(distinct, on=fields, how="left", nulls_equal=True)
        cell_values = {field: distinct[field].to_numpy() for field in fields}
        counts = np.bincount(
            part["__cell"].to_numpy(), weights=part["len"].to_numpy(), minlength=distinct.height
        ).astype(np.int64)
        value = float(reduction.formula(cell_values, counts[None, :])[0])
        n = int(counts.sum())
        if not clustered:
            n_clusters = None
            if n < 2:
                results[key] = (value, None, (None, None), None)
                continue
            replicates = bootstrap_table(
                reduction, cell_values, counts, replicates=settings.bootstrap, seed=settings.seed
            )
        else:
            ids = part.select(CLUSTER).unique().sort(CLUSTER, nulls_last=True).with_row_index("__c")
            part = part.join(ids, on=CLUSTER, how="left", nulls_equal=True)
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


def _sums_scores(merged: CorpusStatistics, on, fields, reduction: Sums, settings: Settings) -> dict:
    """Per group: (value, stderr, interval, clusters) from the merged sums."""
    n_by_group = {tuple(row[:-1]): row[-1] for row in merged.counts.select(*on, "n").rows()}
    clustered = settings.cluster is not None
    per_cluster = {}
    if clustered:
        for key, part in merged.per_cluster.partition_by(on, as_dict=True).items():
            per_cluster[key] = part.sort(CLUSTER, nulls_last=True)
    replicates = {}
    if not clustered:
        for key, part in merged.replicates.partition_by(on, as_dict=True).items():
            replicates[key] = part.sort(_REPLICATE)
    results = {}
    for row in merged.totals.iter_rows(named=True):
        key = tuple(row[name] for name in on)
        sums = {field: np.array([float(row[field])]) for field in fields}
        value = float(reduction.formula(sums)[0])
        if clustered:
            part = per_cluster[key]
            n_clusters = part.height
            if n_clusters < 2:
                results[key] = (value, None, (None, None), n_clusters)
                continue
            values = {f: part[f].cast(pl.Float64).to_numpy() for f in fields}
            weights = bootstrap_clusters(n_clusters, settings.bootstrap, settings.seed)
            matrix = np.column_stack([values[f] for f in fields])
            with np.errstate(invalid="ignore", over="ignore"):  # inf statistics: NaN replicates
                drawn = weights @ matrix
            scores = np.asarray(
                reduction.formula({f: drawn[:, j] for j, f in enumerate(fields)}),
                dtype=np.float64,
            )
        else:
            n_clusters = None
            if n_by_group.get(key, 0) < 2:
                results[key] = (value, None, (None, None), None)
                continue
            part = replicates[key]
            scores = np.asarray(
                reduction.formula({f: part[f].to_numpy() for f in fields}), dtype=np.float64
            )
        stderr, interval = _summary(scores, settings.ci)
        results[key] = (value, stderr, interval, n_clusters)
    return results
