"""Per-group aggregates of scored frames, dispatched on each metric's spec.

Sample metrics (a ``Float64`` score per row) reduce by the mean, with the standard
error of the mean; corpus metrics (a struct of statistics per row) reduce by their
own formula (:mod:`evalframe.metrics.reduce`), with a seeded bootstrap standard
error. Which columns are metrics, and with which options, is read from the spec:

- columns that ``evalframe score`` recorded in a parquet file's metadata;
- in memory, a column whose name is a metric request (``"squad_f1"``,
  ``"f1(average=macro)"``) *and* whose dtype is that metric's statistics dtype
  (an ``Int64`` column called ``exact_match`` is not a score);
- or the ones named in ``metrics=``: a list of columns, or a mapping column ->
  metric request for aliased columns. A named numeric column that is not a metric
  (a user's own 0/1 ``correct``) is aggregated by its mean.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl

from evalframe.errors import EvalframeError, without_plan
from evalframe.io.load import Source, scan
from evalframe.metrics.reduce import Mean, Reduction, Sums, Table
from evalframe.metrics.request import MetricRequest, parse_request
from evalframe.stats.bootstrap import bootstrap_sums, bootstrap_table, replicate_stderr
from evalframe.stats.signature import signature

AGGREGATE_COLUMNS = ("metric", "n", "n_null", "value", "stderr", "ci_low", "ci_high", "signature")

#: Key of the parquet metadata in which ``evalframe score`` records its metric columns.
METADATA_KEY = "evalframe.metrics"

_ALL = "__evalframe_all__"


@dataclass(frozen=True)
class MetricColumn:
    """A column to aggregate: its name, the metric request behind it (None: a plain score)."""

    column: str
    request: MetricRequest | None

    @property
    def reduction(self) -> Reduction:
        return self.request.reduction() if self.request is not None else Mean()

    @property
    def level(self) -> str:
        return self.request.spec.level if self.request is not None else "sample"


def recorded_metrics(paths: Sequence[str | Path]) -> dict[str, str]:
    """Column -> metric request, as ``evalframe score`` recorded them in parquet metadata."""
    recorded: dict[str, str] = {}
    for path in paths:
        if not str(path).lower().endswith((".parquet", ".pq")):
            continue
        try:
            metadata = pl.read_parquet_metadata(path)
        except (OSError, pl.exceptions.PolarsError):
            continue
        recorded.update(decode_metadata(metadata))
    return recorded


def decode_metadata(metadata: Mapping[str, str]) -> dict[str, str]:
    """The column -> metric request mapping stored under :data:`METADATA_KEY`."""
    text = metadata.get(METADATA_KEY)
    if not text:
        return {}
    try:
        decoded = json.loads(text)
    except json.JSONDecodeError:
        return {}
    return {str(k): str(v) for k, v in decoded.items()} if isinstance(decoded, dict) else {}


def encode_metadata(columns: Mapping[str, str]) -> dict[str, str]:
    """Parquet key-value metadata recording column -> metric request."""
    return {METADATA_KEY: json.dumps(dict(columns), ensure_ascii=False)}


def _request_for(name: str) -> MetricRequest | None:
    try:
        return parse_request(name, column=name)
    except EvalframeError:
        return None


def statistics_match(request: MetricRequest, dtype: pl.DataType) -> bool:
    """Whether a column of ``dtype`` holds ``request``'s statistics (its spec's dtype)."""
    expected = request.spec.statistics
    if dtype == pl.Null:
        return True
    if isinstance(expected, pl.Struct):
        if not isinstance(dtype, pl.Struct):
            return False
        return [f.name for f in dtype.fields] == [f.name for f in expected.fields]
    return dtype == expected


def metric_columns(
    frame: pl.DataFrame | pl.LazyFrame, recorded: Mapping[str, str] | None = None
) -> list[str]:
    """The columns of a scored frame that hold metric statistics (see the module docstring)."""
    return [column.column for column in _detect(frame.collect_schema(), recorded or {})]


def _detect(schema: Mapping[str, pl.DataType], recorded: Mapping[str, str]) -> list[MetricColumn]:
    found = []
    for name, dtype in schema.items():
        text = recorded.get(name)
        request = parse_request(text, column=name) if text else _request_for(name)
        if request is not None and statistics_match(request, dtype):
            found.append(MetricColumn(name, request))
    return found


def _named(
    schema: Mapping[str, pl.DataType],
    metrics: Sequence[str] | Mapping[str, str | None],
    recorded: Mapping[str, str],
) -> list[MetricColumn]:
    if isinstance(metrics, str):
        metrics = [metrics]
    if not isinstance(metrics, Sequence | Mapping):
        raise EvalframeError(
            f"metrics={metrics!r}: expected a list of metric column names or a mapping "
            "column -> metric"
        )
    names = list(metrics)
    repeated = sorted({name for name in names if names.count(name) > 1}, key=str)
    if repeated:
        raise EvalframeError(f"metric column(s) named more than once: {repeated}")
    pairs = (
        list(metrics.items())
        if isinstance(metrics, Mapping)
        else [(name, recorded.get(name)) for name in metrics]
    )
    chosen = []
    for column, text in pairs:
        if not isinstance(column, str):
            raise EvalframeError(f"metric columns are named by strings, got {column!r}")
        if column not in schema:
            raise EvalframeError(
                f"metric column {column!r} not found; available: {list(schema)}"
            )
        request = parse_request(text, column=column) if text else _request_for(column)
        dtype = schema[column]
        if request is not None and statistics_match(request, dtype):
            chosen.append(MetricColumn(column, request))
        elif request is not None and request.spec.level == "corpus":
            raise EvalframeError(
                f"metric column {column!r} has dtype {dtype}; metric {request.name!r} is a "
                f"corpus metric whose statistics are {request.spec.statistics} (score the "
                "frame with evalframe.score to get them)"
            )
        elif dtype.is_numeric() or dtype in (pl.Boolean, pl.Null):
            chosen.append(MetricColumn(column, None))
        else:
            raise EvalframeError(
                f"metric column {column!r} has dtype {dtype}; expected numeric scores or a "
                "metric's statistics"
            )
    return chosen


def aggregate(
    scored: Source,
    by: str | Sequence[str] | None = None,
    metrics: Sequence[str] | Mapping[str, str | None] | None = None,
    *,
    ci: float = 0.95,
    keep_empty: bool = False,
    bootstrap: int = 1000,
    seed: int = 0,
) -> pl.DataFrame:
    """Aggregate metric columns per group: one row per group x metric.

    Columns: the ``by`` keys, ``metric`` (the column), ``n`` (rows with a score or
    statistics), ``n_null``, ``value``, ``stderr``, ``ci_low``/``ci_high`` (normal
    approximation, ``value -/+ z * stderr``) and ``signature`` (what determines the
    numbers, :mod:`evalframe.stats.signature`).

    Sample metrics: ``value`` is the mean, ``stderr`` the sample standard deviation
    over ``sqrt(n)``. Corpus metrics: ``value`` is the metric's reduce of the group's
    statistics (F1-macro of its confusion matrix, perplexity of its summed
    log-likelihood...), ``stderr`` the standard deviation of ``bootstrap`` seeded
    bootstrap replicates. Null scores are left out of ``n`` and counted in
    ``n_null``. With one row in a group, ``stderr`` and the interval are null. A
    group in which a metric has no score at all is left out unless ``keep_empty``.

    Parameters
    ----------
    scored
        A scored frame (DataFrame or LazyFrame), or scored files (a path, glob or list
        of paths; parquet written by evalframe records its metric columns).
    by
        Grouping column(s).
    metrics
        The columns to aggregate (default: every metric column, see the module
        docstring), or a mapping column -> metric request for aliased columns (None:
        the column's own name).
    ci
        Confidence level of the interval.
    bootstrap, seed
        Replicates and seed of the bootstrap of corpus metrics.

    Examples
    --------
    >>> import polars as pl
    >>> scored = pl.DataFrame({"task": ["a", "a", "a"], "squad_em": [1.0, 0.0, None]})
    >>> aggregate(scored, by="task").select("task", "n", "n_null", "value", "stderr")
    shape: (1, 5)
    ┌──────┬─────┬────────┬───────┬────────┐
    │ task ┆ n   ┆ n_null ┆ value ┆ stderr │
    │ ---  ┆ --- ┆ ---    ┆ ---   ┆ ---    │
    │ str  ┆ u32 ┆ u32    ┆ f64   ┆ f64    │
    ╞══════╪═════╪════════╪═══════╪════════╡
    │ a    ┆ 2   ┆ 1      ┆ 0.5   ┆ 0.5    │
    └──────┴─────┴────────┴───────┴────────┘
    """
    if not 0 < ci < 1:
        raise EvalframeError(f"ci={ci!r} must be strictly between 0 and 1 (e.g. 0.95)")
    if isinstance(bootstrap, bool) or not isinstance(bootstrap, int) or bootstrap < 2:
        raise EvalframeError(f"bootstrap={bootstrap!r} must be an integer >= 2 (e.g. 1000)")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise EvalframeError(f"seed={seed!r} must be a non-negative integer")
    recorded: dict[str, str] = {}
    if not isinstance(scored, pl.DataFrame | pl.LazyFrame):
        from evalframe.io.load import expand_paths

        if isinstance(scored, str | Path | Sequence) and not isinstance(scored, bytes):
            recorded = recorded_metrics(expand_paths(scored))
    frame = scan(scored)
    schema = frame.collect_schema()
    keys = _group_keys(by)
    missing_keys = [key for key in keys if key not in schema]
    if missing_keys:
        raise EvalframeError(
            f"cannot group by {missing_keys}: no such column(s); available: {list(schema)}"
        )
    clashing = [key for key in keys if key in AGGREGATE_COLUMNS]
    if clashing:
        raise EvalframeError(
            f"cannot group by {clashing}: the aggregate table has column(s) of that name "
            f"({', '.join(AGGREGATE_COLUMNS)}); rename the group column(s) first, e.g. "
            f"frame.rename({{{clashing[0]!r}: {clashing[0] + '_group'!r}}})"
        )
    chosen = _named(schema, metrics, recorded) if metrics is not None else _detect(schema, recorded)
    chosen = [column for column in chosen if column.column not in keys]
    if not chosen:
        raise EvalframeError(
            "no metric columns to aggregate: name them with metrics=[...] or score the frame first"
        )
    z = _normal_quantile(0.5 + ci / 2)
    try:
        table = _aggregate(frame, keys, chosen, z, ci, bootstrap, seed)
    except pl.exceptions.PolarsError as error:
        text = without_plan(error).strip()
        raise EvalframeError(
            f"cannot aggregate: {text.splitlines()[0] if text else type(error).__name__}"
        ) from error
    if not keep_empty:
        table = table.filter(pl.col("n") > 0)
    order = {column.column: i for i, column in enumerate(chosen)}
    table = table.with_columns(
        __order=pl.col("metric").replace_strict(order, return_dtype=pl.Int64)
    )
    sort_by = [*keys, "__order"] if keys else ["__order"]
    return table.sort(sort_by, nulls_last=True, maintain_order=True).drop("__order")


def _group_keys(by: str | Sequence[str] | None) -> list[str]:
    if by is None:
        return []
    keys = [by] if isinstance(by, str) else by
    if not isinstance(keys, Sequence) or not all(isinstance(key, str) for key in keys):
        raise EvalframeError(
            f"by={by!r}: expected a column name or a list of column names (str)"
        )
    repeated = sorted({key for key in keys if list(keys).count(key) > 1})
    if repeated:
        raise EvalframeError(f"by={list(keys)!r} names {repeated} more than once")
    return list(keys)


def _aggregate(
    frame: pl.LazyFrame,
    keys: list[str],
    chosen: list[MetricColumn],
    z: float,
    ci: float,
    bootstrap: int,
    seed: int,
) -> pl.DataFrame:
    tables = []
    samples = [column for column in chosen if column.level == "sample"]
    if samples:
        tables.append(_sample_table(frame, keys, samples, z, ci))
    for column in chosen:
        if column.level == "corpus":
            tables.append(_corpus_table(frame, keys, column, z, ci, bootstrap, seed))
    return pl.concat(tables, how="vertical_relaxed")


def _normal_quantile(p: float) -> float:
    from scipy.special import ndtri

    return float(ndtri(p))


def _grouped(frame: pl.LazyFrame, keys: list[str]) -> pl.LazyGroupBy:
    return frame.group_by(keys or pl.lit(0).alias(_ALL), maintain_order=True)


def _sample_table(
    frame: pl.LazyFrame, keys: list[str], columns: list[MetricColumn], z: float, ci: float
) -> pl.DataFrame:
    aggs = []
    for i, column in enumerate(columns):
        value = pl.col(column.column).cast(pl.Float64)
        aggs += [
            value.count().alias(f"n{i}"),
            value.null_count().alias(f"null{i}"),
            value.mean().alias(f"mean{i}"),
            value.std(ddof=1).alias(f"std{i}"),
        ]
    summary = _grouped(frame, keys).agg(aggs).collect()
    parts = []
    for i, column in enumerate(columns):
        n = pl.col(f"n{i}")
        stderr = pl.col(f"std{i}") / n.cast(pl.Float64).sqrt()
        parts.append(
            summary.select(
                *keys,
                metric=pl.lit(column.column),
                n=n,
                n_null=pl.col(f"null{i}"),
                value=pl.col(f"mean{i}"),
                stderr=stderr,
            ).with_columns(
                ci_low=pl.col("value") - z * pl.col("stderr"),
                ci_high=pl.col("value") + z * pl.col("stderr"),
                signature=pl.lit(
                    signature(column.request, stderr="sem", ci=ci, column=column.column)
                ),
            )
        )
    return pl.concat(parts, how="vertical_relaxed")


def _corpus_table(
    frame: pl.LazyFrame,
    keys: list[str],
    column: MetricColumn,
    z: float,
    ci: float,
    bootstrap: int,
    seed: int,
) -> pl.DataFrame:
    reduction = column.reduction
    name = column.column
    stats = pl.col(name)
    counts = _grouped(frame, keys).agg(
        n=stats.count(), n_null=stats.null_count()
    ).collect()
    dtype = frame.collect_schema()[name]
    fields = [f.name for f in dtype.fields] if isinstance(dtype, pl.Struct) else []
    present = (
        frame.filter(stats.is_not_null())
        .select(*(keys or [pl.lit(0).alias(_ALL)]), stats.struct.unnest() if fields else stats)
    )
    group_keys = keys or [_ALL]
    if isinstance(reduction, Table):
        cells = present.group_by([*group_keys, *fields], maintain_order=True).len().collect()
        groups = cells.partition_by(group_keys, as_dict=True, maintain_order=True)

        def score(part: pl.DataFrame) -> tuple[float, float | None]:
            cell_values = {field: part[field].to_numpy() for field in fields}
            cell_counts = part["len"].to_numpy().astype(np.int64)
            value = float(reduction.formula(cell_values, cell_counts[None, :])[0])
            if cell_counts.sum() < 2:
                return value, None
            replicates = bootstrap_table(
                reduction, cell_values, cell_counts, replicates=bootstrap, seed=seed
            )
            return value, replicate_stderr(replicates)

    elif isinstance(reduction, Sums):
        rows = present.collect()
        groups = rows.partition_by(group_keys, as_dict=True, maintain_order=True)

        def score(part: pl.DataFrame) -> tuple[float, float | None]:
            values = {field: part[field].cast(pl.Float64).to_numpy() for field in fields}
            # summed in the field's own dtype (exact for integer counts), then as float64
            sums = {field: np.array([float(part[field].sum())]) for field in fields}
            value = float(reduction.formula(sums)[0])
            if part.height < 2:
                return value, None
            replicates = bootstrap_sums(reduction, values, replicates=bootstrap, seed=seed)
            return value, replicate_stderr(replicates)

    else:  # pragma: no cover - a corpus metric always names Sums or Table
        raise EvalframeError(f"metric column {name!r}: corpus reduction {reduction!r} unknown")

    results = {key: score(part) for key, part in groups.items()}
    key_rows = counts.select(group_keys).rows()
    values = [results.get(tuple(row), (None, None)) for row in key_rows]
    text = signature(
        column.request, stderr="bootstrap", ci=ci, column=name, reduction=reduction,
        bootstrap=bootstrap, seed=seed,
    )
    table = counts.with_columns(
        metric=pl.lit(name),
        value=pl.Series([v for v, _ in values], dtype=pl.Float64),
        stderr=pl.Series([s for _, s in values], dtype=pl.Float64),
    ).with_columns(
        ci_low=pl.col("value") - z * pl.col("stderr"),
        ci_high=pl.col("value") + z * pl.col("stderr"),
        signature=pl.lit(text),
    )
    return table.select(*keys, *AGGREGATE_COLUMNS)
