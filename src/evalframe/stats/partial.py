"""Aggregate past one machine: each batch to its sufficient statistics, then combine them.

:func:`partial` reduces one batch of scored rows (a file, a Ray block, a Dask partition)
to a small, picklable :class:`Partial`: per group and metric the counts, means and
standard deviations, each cluster's sums, a corpus metric's cells or sums, and its
bootstrap replicate sums. :func:`combine` merges any number of them into exactly the
table :func:`~evalframe.stats.aggregate.aggregate` gives for all the rows at once:
integer counts equal, every other number within floating-point rounding (1e-12), the
same signature. Nothing depends on how the rows were split: the corpus bootstrap draws
each row's weights from its content (:mod:`evalframe.stats.bootstrap`), and whether
rows repeat a question is decided on the merged counts.

>>> import polars as pl, evalframe as ef
>>> scored = ef.score(pl.DataFrame({
...     "task": ["a", "a", "b", "b"], "prediction": ["x", "y", "z", None],
...     "gold": ["x", "z", "z", "q"],
... }), ["exact_match"])
>>> parts = [ef.partial(batch, by="task") for batch in scored.iter_slices(3)]
>>> ef.combine(parts).select("task", "n", "n_missing", "value").equals(
...     ef.aggregate(scored, by="task").select("task", "n", "n_missing", "value"))
True
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, fields

import polars as pl

from evalframe.errors import EvalframeError, OptionError, without_plan
from evalframe.io.load import Source
from evalframe.metrics.request import parse_request
from evalframe.stats._sample import CLUSTER, Settings
from evalframe.stats._sufficient import Statistics, batch_statistics, finish
from evalframe.stats.aggregate import (
    arrange,
    check_options,
    checked_clusters,
    read_scored,
)
from evalframe.stats.columns import (
    MetricColumn,
)
from evalframe.stats.methods import STDERR_METHODS

_ALL = "__evalframe_all__"


@dataclass(frozen=True)
class MetricEntry:
    """What a :class:`Partial` records of a metric column: enough to finish its aggregate."""

    column: str
    #: The canonical metric request (None: a plain score, aggregated by its mean).
    request: str | None
    missing_known: bool
    references: tuple[str, ...]
    answers: tuple[str, ...]

    @classmethod
    def of(cls, column: MetricColumn) -> MetricEntry:
        return cls(
            column=column.column,
            request=column.request.text if column.request is not None else None,
            missing_known=column.missing is not None,
            references=tuple(column.references),
            answers=tuple(column.answers),
        )

    def metric_column(self) -> MetricColumn:
        request = (
            parse_request(self.request, column=self.column) if self.request is not None else None
        )
        return MetricColumn(
            column=self.column, request=request,
            missing=pl.lit(False) if self.missing_known else None,
            references=self.references, answers=self.answers,
        )


@dataclass(frozen=True)
class Partial:
    """The sufficient statistics of one batch of scored rows (see :func:`partial`).

    Picklable and small: its size grows with the groups, the clusters and the distinct
    cells of label metrics, not with the rows.
    """

    by: tuple[str, ...]
    metrics: tuple[MetricEntry, ...]
    missing: str
    stderr: str
    #: The column whose ids the statistics are kept per (None: none).
    cluster: str | None
    #: True: the rows are clustered on ``cluster`` (or not at all when it is None);
    #: False: ``cluster`` is ``sample_id``, clustered on where it repeats in a group.
    cluster_decided: bool
    #: Clustering was asked for (``cluster=True``, or a standard error that needs it).
    cluster_required: bool
    bootstrap: int
    seed: int
    #: Rows in the batch.
    rows: int
    #: Rows whose ``sample_id`` is null, where the clustering is not yet decided.
    null_ids: int
    #: Per (group, id): the rows, where the clustering is not yet decided.
    ids: pl.DataFrame | None
    statistics: Statistics

    def __repr__(self) -> str:
        metrics = ", ".join(entry.column for entry in self.metrics)
        return f"Partial(rows={self.rows}, by={list(self.by)}, metrics=[{metrics}])"


def partial(
    batch: Source,
    by: str | Sequence[str] | None = None,
    metrics: Sequence[str] | Mapping[str, str | None] | None = None,
    *,
    missing: str = "wrong",
    cluster: str | bool | None = None,
    stderr: str = "auto",
    columns: Mapping[str, str] | None = None,
    bootstrap: int = 1000,
    seed: int = 0,
) -> Partial:
    """One batch of scored rows reduced to its sufficient statistics, for :func:`combine`.

    The arguments are :func:`~evalframe.stats.aggregate.aggregate`'s that determine the
    statistics (the interval's are :func:`combine`'s); every batch of one aggregate takes
    the same ones. Where ``sample_id`` may repeat a question across batches, whether to
    cluster on it is decided by :func:`combine`, over all of them.

    Examples
    --------
    >>> import polars as pl, evalframe as ef
    >>> scored = ef.score(pl.DataFrame({"prediction": ["x", "y"], "gold": ["x", "x"]}),
    ...                   ["exact_match"])
    >>> ef.partial(scored)
    Partial(rows=2, by=[], metrics=[exact_match])
    """
    check_options(missing=missing, stderr=stderr, bootstrap=bootstrap, seed=seed)
    frame, schema, keys, found, chosen = read_scored(batch, by, metrics, columns)
    column, decided, required = _cluster_choice(frame, schema, keys, cluster, found.mapping,
                                                stderr)
    settings = Settings(
        ci=0.95, interval="auto", missing=missing, stderr=stderr, cluster=column,
        bootstrap=bootstrap, seed=seed,
    )
    ids = None
    null_ids = 0
    try:
        if not decided:
            group = keys or [pl.lit(0).alias(_ALL)]
            ids = (
                frame.group_by([*group, pl.col(column).alias(CLUSTER)])
                .agg(pl.len().alias("rows"))
                .collect()
            )
            null_ids = int(ids.filter(pl.col(CLUSTER).is_null())["rows"].sum() or 0)
        statistics = batch_statistics(
            frame, keys, chosen, settings, unclustered=column is None or not decided
        )
        rows = frame.select(pl.len()).collect().item()
    except pl.exceptions.PolarsError as error:
        raise _polars_error(error) from error
    return Partial(
        by=tuple(keys), metrics=tuple(MetricEntry.of(c) for c in chosen), missing=missing,
        stderr=stderr, cluster=column, cluster_decided=decided, cluster_required=required,
        bootstrap=bootstrap, seed=seed, rows=rows, null_ids=null_ids, ids=ids,
        statistics=statistics,
    )


def combine(
    partials: Iterable[Partial],
    *,
    ci: float = 0.95,
    interval: str = "auto",
    keep_empty: bool = False,
    wide: bool = False,
) -> pl.DataFrame:
    """The aggregate table of all the batches whose :func:`partial` statistics are given.

    Equal to :func:`~evalframe.stats.aggregate.aggregate` of the batches' rows together,
    with the same options: the same rows, integer counts and signatures; values,
    standard errors and intervals within floating-point rounding. The partials must all
    have been made with the same ``by``, metrics and options.

    >>> import polars as pl, evalframe as ef
    >>> scored = ef.score(pl.DataFrame({"prediction": list("xyzx"), "gold": list("xxzz")}),
    ...                   ["exact_match"])
    >>> ef.combine([ef.partial(scored[:1]), ef.partial(scored[1:])]).select("n", "value")
    shape: (1, 2)
    ┌─────┬───────┐
    │ n   ┆ value │
    │ --- ┆ ---   │
    │ u32 ┆ f64   │
    ╞═════╪═══════╡
    │ 4   ┆ 0.5   │
    └─────┴───────┘
    """
    check_options(ci=ci, interval=interval, keep_empty=keep_empty, wide=wide)
    parts = list(partials)
    if not parts:
        raise EvalframeError("combine needs at least one partial (evalframe.partial of a batch)")
    for i, part in enumerate(parts):
        if not isinstance(part, Partial):
            raise EvalframeError(
                f"combine: item {i} is a {type(part).__name__}, not a Partial; make each with "
                "evalframe.partial(batch, ...)"
            )
    # a batch without rows cannot read what its columns are (the scoring record is in the
    # rows); it adds nothing, so it is left out
    filled = [part for part in parts if part.rows > 0]
    parts = filled or parts[:1]
    _check_same(parts)
    first = parts[0]
    keys = list(first.by)
    settings = Settings(
        ci=ci, interval=interval, missing=first.missing, stderr=first.stderr,
        cluster=_decided_cluster(parts, keys), bootstrap=first.bootstrap, seed=first.seed,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # partial warned already, where the rows were read
        chosen = [entry.metric_column() for entry in first.metrics]
    try:
        table = finish([part.statistics for part in parts], keys, chosen, settings)
    except pl.exceptions.PolarsError as error:
        raise _polars_error(error) from error
    return arrange(table, keys, chosen, keep_empty=keep_empty, wide=wide)


_SHARED = ("by", "metrics", "missing", "stderr", "cluster", "cluster_decided",
           "cluster_required", "bootstrap", "seed")


def _check_same(parts: Sequence[Partial]) -> None:
    """Refuse partials made with different groups, metrics or options: no table is right."""
    first = parts[0]
    for i, part in enumerate(parts[1:], start=1):
        for field in fields(Partial):
            if field.name in _SHARED and getattr(part, field.name) != getattr(first, field.name):
                raise EvalframeError(
                    f"combine: partial {i} was made with {field.name}="
                    f"{_shown(getattr(part, field.name))}, partial 0 with "
                    f"{_shown(getattr(first, field.name))}; every batch of one aggregate needs "
                    "the same by, metrics and options"
                )
        for j, (a, b) in enumerate(zip(part.statistics.corpus, first.statistics.corpus,
                                       strict=True)):
            if a.fields != b.fields:
                raise EvalframeError(
                    f"combine: partial {i} has corpus statistics {list(a.fields)} for metric "
                    f"{j}, partial 0 {list(b.fields)}"
                )


def _shown(value: object) -> str:
    if isinstance(value, tuple) and value and isinstance(value[0], MetricEntry):
        return repr([entry.column if entry.request in (None, entry.column)
                     else f"{entry.column}={entry.request}" for entry in value])
    return repr(value)


def _cluster_choice(
    frame: pl.LazyFrame,
    schema: Mapping[str, pl.DataType],
    keys: list[str],
    cluster: str | bool | None,
    mapping: Mapping[str, str],
    stderr: str,
) -> tuple[str | None, bool, bool]:
    """(column, decided, required): what a batch can say about clustering on its own."""
    needs_clusters = STDERR_METHODS[stderr].needs_clusters
    if cluster is False:
        if needs_clusters:
            raise EvalframeError(f"stderr={stderr!r} needs clusters; cluster=False says none")
        return None, True, False
    if isinstance(cluster, str):
        if cluster not in schema:
            raise OptionError(
                f"cluster={cluster!r}: no such column; available: {list(schema)}",
                option="cluster", value=cluster, clause=False,
                problem=f"no such column; available: {', '.join(schema)}",
            )
        return checked_clusters(frame, cluster), True, True
    if cluster not in (None, True):
        raise EvalframeError(f"cluster={cluster!r}: expected a column name, None or False")
    required = cluster is True or needs_clusters
    role_column = mapping.get("cluster", "cluster")
    if role_column in schema and role_column not in keys:
        return checked_clusters(frame, role_column), True, required
    sample_id = mapping.get("sample_id", "sample_id")
    if sample_id in schema and sample_id not in keys:
        return sample_id, False, required
    if required:
        raise EvalframeError(
            "clustering was asked for, but there is no 'cluster' column and no 'sample_id' "
            "column; name the column with cluster='...'"
        )
    return None, True, False


def _decided_cluster(parts: Sequence[Partial], keys: list[str]) -> str | None:
    """The column the merged rows are clustered on: ``sample_id`` where it repeats."""
    first = parts[0]
    if first.cluster_decided:
        return first.cluster
    on = [*(keys or [_ALL]), CLUSTER]
    merged = pl.concat([part.ids for part in parts], how="vertical_relaxed").group_by(on).agg(
        pl.col("rows").sum()
    )
    repeats = bool(merged.height and merged["rows"].max() > 1)
    if repeats:
        nulls = sum(part.null_ids for part in parts)
        if nulls:
            raise EvalframeError(
                f"cluster column {first.cluster!r} is null in {nulls} row(s); every row needs a "
                "cluster id (a question id), or pass cluster=False"
            )
        return first.cluster
    if first.cluster_required:
        raise EvalframeError(
            "clustering was asked for, but there is no 'cluster' column and "
            f"{first.cluster!r} does not repeat within a group; name the column with "
            "cluster='...'"
        )
    return None


def _polars_error(error: pl.exceptions.PolarsError) -> EvalframeError:
    text = without_plan(error).strip()
    return EvalframeError(
        f"cannot aggregate: {text.splitlines()[0] if text else type(error).__name__}"
    )
