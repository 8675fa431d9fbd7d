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
import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from evalframe.errors import EvalframeError, without_plan
from evalframe.io.load import Source, scan
from evalframe.metrics.reduce import Mean, Reduction
from evalframe.metrics.request import MetricRequest, parse_request
from evalframe.stats._corpus import corpus_table
from evalframe.stats._sample import SampleColumn, Settings, sample_table
from evalframe.stats.intervals import METHODS
from evalframe.stats.missing import answer_columns, check_policy

AGGREGATE_COLUMNS = (
    "metric", "n", "n_missing", "n_null", "value", "stderr", "ci_low", "ci_high", "n_clusters",
    "signature",
)

#: Key of the parquet metadata in which ``evalframe score`` records its metric columns.
METADATA_KEY = "evalframe.metrics"
#: Key of the parquet metadata in which ``evalframe score`` records its role mapping.
ROLES_KEY = "evalframe.roles"

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


def _recorded(paths: Sequence[str | Path], key: str) -> dict[str, str]:
    """What the files recorded under ``key``; files that disagree on a name are an error.

    Stacked files must mean the same thing by a column: one file's ``acc`` scored as
    ``exact_match`` and another's as ``acc`` cannot be aggregated together.
    """
    recorded: dict[str, str] = {}
    source: dict[str, str] = {}
    for path in paths:
        if not str(path).lower().endswith((".parquet", ".pq")):
            continue
        try:
            found = decode_metadata(pl.read_parquet_metadata(path), key)
        except (OSError, pl.exceptions.PolarsError):  # not evalframe's: nothing recorded
            continue
        for name, value in found.items():
            if name in recorded and recorded[name] != value:
                what = "column" if key == METADATA_KEY else "role"
                raise EvalframeError(
                    f"{what} {name!r} is {recorded[name]!r} in {source[name]!r} but {value!r} "
                    f"in {str(path)!r}: files read together must record the same "
                    f"{'metric' if key == METADATA_KEY else 'column'} for it; aggregate them "
                    "separately, or rename the column in one of them"
                )
            recorded[name], source[name] = value, str(path)
    return recorded


def recorded_metrics(paths: Sequence[str | Path]) -> dict[str, str]:
    """Column -> metric request, as ``evalframe score`` recorded them in parquet metadata."""
    return _recorded(paths, METADATA_KEY)


def recorded_mapping(paths: Sequence[str | Path]) -> dict[str, str]:
    """The role -> column mapping ``evalframe score`` recorded in parquet metadata."""
    return _recorded(paths, ROLES_KEY)


def decode_metadata(metadata: Mapping[str, str], key: str = METADATA_KEY) -> dict[str, str]:
    """The mapping stored under ``key`` (column -> metric request by default)."""
    text = metadata.get(key)
    if not text:
        return {}
    try:
        decoded = json.loads(text)
    except json.JSONDecodeError:
        return {}
    return {str(k): str(v) for k, v in decoded.items()} if isinstance(decoded, dict) else {}


def encode_metadata(
    columns: Mapping[str, str], roles: Mapping[str, str] | None = None
) -> dict[str, str]:
    """Parquet key-value metadata recording column -> metric request (and the role mapping)."""
    metadata = {METADATA_KEY: json.dumps(dict(columns), ensure_ascii=False)}
    if roles:
        metadata[ROLES_KEY] = json.dumps(dict(roles), ensure_ascii=False)
    return metadata


def _request_for(name: str) -> MetricRequest | None:
    try:
        return parse_request(name, column=name)
    except EvalframeError:
        return None


def statistics_match(request: MetricRequest, dtype: pl.DataType) -> bool:
    """Whether a column of ``dtype`` holds ``request``'s statistics (for its options)."""
    expected = request.statistics()
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
    lost = unusable_recorded(schema, recorded)
    if lost:
        warnings.warn(
            f"metric column(s) recorded by evalframe score are not aggregated: {lost}",
            stacklevel=3,
        )
    return found


def unusable_recorded(
    schema: Mapping[str, pl.DataType], recorded: Mapping[str, str]
) -> list[str]:
    """Recorded metric columns that are gone, or whose dtype is no longer the metric's."""
    lost = []
    for name, text in recorded.items():
        if name not in schema:
            lost.append(f"{name!r} (no such column: renamed or dropped?)")
            continue
        request = _request_for_text(text, name)
        if request is not None and not statistics_match(request, schema[name]):
            lost.append(f"{name!r} (dtype {schema[name]}, not the statistics of {text!r})")
    return lost


def _request_for_text(text: str, name: str) -> MetricRequest | None:
    try:
        return parse_request(text, column=name)
    except EvalframeError:
        return None


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
                f"corpus metric whose statistics are {request.statistics()} (score the "
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
    interval: str = "auto",
    missing: str = "wrong",
    cluster: str | bool | None = None,
    stderr: str = "auto",
    columns: Mapping[str, str] | None = None,
    keep_empty: bool = False,
    wide: bool = False,
    bootstrap: int = 1000,
    seed: int = 0,
) -> pl.DataFrame:
    """Aggregate metric columns per group: one row per group x metric.

    Columns: the ``by`` keys, ``metric`` (the column), the name parameters of
    parameterised metrics as numbers (``k`` for ``pass@10``: a pass@k curve is ``k``
    against ``value``), ``n`` (rows that count), ``n_missing`` (answers the model did not
    give), ``n_null`` (rows that cannot be scored: no gold), ``value``, ``stderr``,
    ``ci_low``/``ci_high``, ``n_clusters`` and ``signature`` (what determines the numbers,
    :mod:`evalframe.stats.signature`).

    Sample metrics: ``value`` is the mean. A missing answer counts as the metric's worst
    score by default (``missing="wrong"``; ``"exclude"`` leaves it out, ``"error"``
    raises; see :mod:`evalframe.stats.missing`). ``stderr`` is the standard error of the
    mean; when rows repeat a question, cluster-robust (Miller 2024; Inspect's
    ``stderr(cluster=...)``), on the ``cluster`` column, or by default on ``sample_id``
    when it repeats within a group. The interval never leaves the metric's bounds:
    Wilson for 0/1 scores (on the effective sample size when clustered), Student-t
    clipped to the bounds otherwise (``interval="auto"``; or ``"wilson"``, ``"t"``,
    ``"normal"``). Corpus metrics: ``value`` is the metric's reduce of the group's
    statistics, ``stderr`` the standard deviation of ``bootstrap`` seeded bootstrap
    replicates (whole clusters resampled when clustered) and the interval their
    percentile interval; missing answers are left out and counted in ``n_missing``.
    With one row (or cluster) in a group, ``stderr`` and the interval are null. A group
    in which a metric has no score at all is left out unless ``keep_empty``.

    Parameters
    ----------
    scored
        A scored frame (DataFrame or LazyFrame), or scored files (a path, glob or list
        of paths; parquet written by evalframe records its metric columns and roles).
    by
        Grouping column(s).
    metrics
        The columns to aggregate (default: every metric column, see the module
        docstring), or a mapping column -> metric request for aliased columns (None:
        the column's own name).
    ci
        Confidence level of the interval.
    interval
        ``"auto"``, ``"wilson"``, ``"t"`` or ``"normal"`` (sample metrics); corpus
        metrics use the bootstrap percentile interval unless ``"normal"``.
    missing
        What a missing answer counts as: ``"wrong"``, ``"exclude"`` or ``"error"``.
    cluster
        The column of question ids to cluster on; ``None``: the ``cluster`` column if
        there is one, else ``sample_id`` where it repeats within a group; ``False``:
        never cluster.
    stderr
        ``"auto"`` (clustered when clustering applies) or ``"question_mean"`` (score
        each cluster by its mean, then the standard error over clusters).
    columns
        The role -> column mapping ``score`` used, to find each metric's answer and gold
        columns (a file written by ``evalframe score`` records it).
    wide
        One row per group, metrics as columns (``value`` under the metric's name,
        then ``<metric>:stderr``, ``:ci_low``, ``:ci_high``, ``:n``, ``:n_missing``).
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
    if isinstance(ci, bool) or not isinstance(ci, int | float) or not 0 < ci < 1:
        raise EvalframeError(f"ci={ci!r} must be a number strictly between 0 and 1 (e.g. 0.95)")
    for name, flag in (("keep_empty", keep_empty), ("wide", wide)):
        if not isinstance(flag, bool):
            raise EvalframeError(f"{name}={flag!r} must be True or False")
    if isinstance(bootstrap, bool) or not isinstance(bootstrap, int) or bootstrap < 2:
        raise EvalframeError(f"bootstrap={bootstrap!r} must be an integer >= 2 (e.g. 1000)")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise EvalframeError(f"seed={seed!r} must be a non-negative integer")
    if interval not in METHODS or interval == "bootstrap":
        raise EvalframeError(
            f"interval={interval!r} is invalid; expected 'auto', 'wilson', 't' or 'normal'"
        )
    if stderr not in ("auto", "question_mean"):
        raise EvalframeError(f"stderr={stderr!r} is invalid; expected 'auto' or 'question_mean'")
    check_policy(missing)
    recorded: dict[str, str] = {}
    recorded_roles: dict[str, str] = {}
    if not isinstance(scored, pl.DataFrame | pl.LazyFrame):
        from evalframe.io.load import expand_paths

        if isinstance(scored, str | Path | Sequence) and not isinstance(scored, bytes):
            paths = expand_paths(scored)
            recorded = recorded_metrics(paths)
            recorded_roles = recorded_mapping(paths)
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
    mapping = dict(recorded_roles)
    mapping.update(columns or {})
    settings = Settings(
        ci=ci, interval=interval, missing=missing, stderr=stderr,
        cluster=_cluster_column(frame, schema, keys, cluster, mapping, stderr),
        bootstrap=bootstrap, seed=seed,
    )
    try:
        table = _aggregate(frame, schema, keys, chosen, mapping, settings)
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
    table = table.sort(sort_by, nulls_last=True, maintain_order=True).drop("__order")
    table = _with_parameters(table, keys, chosen)
    return widen(table, keys) if wide else table


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


def _cluster_column(
    frame: pl.LazyFrame,
    schema: Mapping[str, pl.DataType],
    keys: list[str],
    cluster: str | bool | None,
    mapping: Mapping[str, str],
    stderr: str,
) -> str | None:
    """The column to cluster on, if any (see :func:`aggregate`'s ``cluster``)."""
    if cluster is False:
        if stderr == "question_mean":
            raise EvalframeError("stderr='question_mean' needs clusters; cluster=False says none")
        return None
    if isinstance(cluster, str):
        if cluster not in schema:
            raise EvalframeError(
                f"cluster={cluster!r}: no such column; available: {list(schema)}"
            )
        return _checked_clusters(frame, cluster)
    if cluster not in (None, True):
        raise EvalframeError(f"cluster={cluster!r}: expected a column name, None or False")
    role_column = mapping.get("cluster", "cluster")
    if role_column in schema and role_column not in keys:
        return _checked_clusters(frame, role_column)
    sample_id = mapping.get("sample_id", "sample_id")
    if sample_id in schema and sample_id not in keys:
        group = keys or [pl.lit(0).alias(_ALL)]
        # whether ids repeat and whether any is null, in one pass
        found = (
            frame.group_by(group)
            .agg(
                repeat=pl.col(sample_id).n_unique() < pl.len(),
                nulls=pl.col(sample_id).null_count(),
            )
            .select(pl.col("repeat").any(), pl.col("nulls").sum())
            .collect()
        )
        if found["repeat"].item():
            # null ids: the check's error names the count and the first such row
            return _checked_clusters(frame, sample_id) if found["nulls"].item() else sample_id
    if cluster is True or stderr == "question_mean":
        raise EvalframeError(
            "clustering was asked for, but there is no 'cluster' column and 'sample_id' "
            "does not repeat within a group; name the column with cluster='...'"
        )
    return None


def _checked_clusters(frame: pl.LazyFrame, cluster: str) -> str:
    """``cluster``, after checking no row lacks a cluster id (they would form one cluster)."""
    found = frame.select(
        nulls=pl.col(cluster).is_null().sum(),
        first=pl.int_range(pl.len()).filter(pl.col(cluster).is_null()).min(),
    ).collect()
    if found["nulls"].item():
        raise EvalframeError(
            f"cluster column {cluster!r} is null in {found['nulls'].item()} row(s) (first: row "
            f"{found['first'].item()}); every row needs a cluster id (a question id), or pass "
            "cluster=False"
        )
    return cluster


def _aggregate(
    frame: pl.LazyFrame,
    schema: Mapping[str, pl.DataType],
    keys: list[str],
    chosen: list[MetricColumn],
    mapping: Mapping[str, str],
    settings: Settings,
) -> pl.DataFrame:
    tables = []
    samples = [
        SampleColumn(
            column=column.column,
            request=column.request,
            bounds=column.request.spec.bounds if column.request is not None else _UNBOUNDED,
            worst=column.request.spec.worst if column.request is not None else None,
            roles=(
                answer_columns(column.request, schema, mapping)
                if column.request is not None
                else None
            ),
        )
        for column in chosen
        if column.level == "sample"
    ]
    if samples:
        tables.append(sample_table(frame, keys, samples, settings))
    for column in chosen:
        if column.level == "corpus":
            tables.append(
                corpus_table(
                    frame, keys, column.column, column.request, column.reduction,
                    column.request.spec.bounds, answer_columns(column.request, schema, mapping),
                    settings,
                )
            )
    # a metric whose reference has its own signature (sacrebleu's) adds that column
    extra = [
        name for name in ("reference_signature",)
        if any(name in table.columns and table[name].null_count() < table.height
               for table in tables)
    ]
    return pl.concat(
        [
            table.select(
                *keys, *AGGREGATE_COLUMNS,
                *(pl.col(name) if name in table.columns
                  else pl.lit(None, dtype=pl.String).alias(name) for name in extra),
            )
            for table in tables
        ],
        how="vertical_relaxed",
    )


_UNBOUNDED = (-math.inf, math.inf)


def _with_parameters(
    table: pl.DataFrame, keys: list[str], chosen: list[MetricColumn]
) -> pl.DataFrame:
    """Numeric columns for the name parameters of parameterised metrics (``k``, ``tau``)."""
    values: dict[str, dict[str, object]] = {}
    for column in chosen:
        if column.request is not None:
            for name, value in column.request.params.items():
                values.setdefault(name, {})[column.column] = value
    if not values:
        return table
    extra = []
    for name, by_metric in values.items():
        label = name if name not in keys and name not in table.columns else f"param_{name}"
        dtype = pl.Int64 if all(isinstance(v, int) for v in by_metric.values()) else pl.Float64
        extra.append(
            pl.col("metric")
            .replace_strict(by_metric, default=None, return_dtype=dtype)
            .alias(label)
        )
    table = table.with_columns(extra)
    names = [expr.meta.output_name() for expr in extra]
    rest = [c for c in table.columns if c not in keys and c != "metric" and c not in names]
    return table.select(*keys, "metric", *names, *rest)


def widen(table: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
    """One row per group; for each metric its value and ``<metric>:<statistic>`` columns."""
    parts = []
    for (metric,), part in table.partition_by("metric", as_dict=True, maintain_order=True).items():
        parts.append(
            part.select(
                *keys,
                pl.col("value").alias(metric),
                *[
                    pl.col(name).alias(f"{metric}:{name}")
                    for name in ("stderr", "ci_low", "ci_high", "n", "n_missing")
                ],
            )
        )
    if not keys:
        return pl.concat(parts, how="horizontal")
    wide = parts[0]
    for part in parts[1:]:
        wide = wide.join(part, on=keys, how="full", coalesce=True, nulls_equal=True,
                         maintain_order="left_right")
    return wide
