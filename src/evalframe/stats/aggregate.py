"""Per-group aggregates of scored frames, dispatched on each metric's spec.

Sample metrics (a ``Float64`` score per row) reduce by the mean, with the standard
error of the mean; corpus metrics (a struct of statistics per row) reduce by their
own formula (:mod:`evalframe.metrics.reduce`), with a seeded bootstrap standard
error. Which columns are metrics, with which options, and which of their rows are
missing answers is read from the scored-result contract that ``evalframe.score`` puts
in the data (:mod:`evalframe.scored`), through :mod:`evalframe.stats.columns`, which also
says how frames without it are read.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence

import polars as pl

from evalframe._progress import shows_progress
from evalframe.errors import EvalframeError, OptionError, without_plan
from evalframe.io.load import Source, scan
from evalframe.stats._sample import Settings
from evalframe.stats._sufficient import AGGREGATE_COLUMNS, batch_statistics, finish
from evalframe.stats.columns import (
    Found,
    MetricColumn,
    check_nan_scores,
    find_columns,
    recorded_in,
)
from evalframe.stats.methods import INTERVAL_METHODS, STDERR_METHODS, check_method
from evalframe.stats.missing import check_policy
from evalframe.stats.options import check_flag, check_level, check_replicates, check_seed

_ALL = "__evalframe_all__"


def metric_columns(
    frame: pl.DataFrame | pl.LazyFrame, recorded: Mapping[str, str] | None = None
) -> list[str]:
    """The metric columns of a scored frame (see :mod:`evalframe.stats.columns`)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return [c.column for c in find_columns(frame.lazy(), recorded=recorded).columns]


@shows_progress("aggregating")
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
    clipped to the bounds otherwise (``interval="auto"``; or ``"wilson"``,
    ``"clopper_pearson"``, ``"jeffreys"``, ``"t"``, ``"normal"``). Corpus metrics:
    ``value`` is the metric's reduce of the group's statistics, ``stderr`` the standard
    deviation of ``bootstrap`` seeded bootstrap
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
        ``"auto"``, ``"wilson"``, ``"clopper_pearson"`` (exact: never undercovers),
        ``"jeffreys"`` (Bayesian, for small samples), ``"t"`` or ``"normal"`` (sample
        metrics); corpus
        metrics use the bootstrap percentile interval unless ``"normal"``. The methods
        are :data:`evalframe.stats.INTERVAL_METHODS`.
    missing
        What a missing answer counts as: ``"wrong"``, ``"exclude"`` or ``"error"``.
    cluster
        The column of question ids to cluster on; ``None``: the ``cluster`` column if
        there is one, else ``sample_id`` where it repeats within a group; ``False``:
        never cluster.
    stderr
        ``"auto"`` (clustered when clustering applies) or ``"question_mean"`` (score
        each cluster by its mean, then the standard error over clusters): the methods of
        :data:`evalframe.stats.STDERR_METHODS`.
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
    Row 3 gives no answer (wrong by default); row 4 has no gold (left out, in ``n_null``):

    >>> import polars as pl, evalframe as ef
    >>> scored = ef.score(pl.DataFrame({
    ...     "task": ["a"] * 4, "prediction": ["x", "y", None, "w"], "gold": ["x", "z", "q", None],
    ... }), ["exact_match"])
    >>> aggregate(scored, by="task").select("task", "n", "n_missing", "n_null", "value")
    shape: (1, 5)
    ┌──────┬─────┬───────────┬────────┬──────────┐
    │ task ┆ n   ┆ n_missing ┆ n_null ┆ value    │
    │ ---  ┆ --- ┆ ---       ┆ ---    ┆ ---      │
    │ str  ┆ u32 ┆ u32       ┆ u32    ┆ f64      │
    ╞══════╪═════╪═══════════╪════════╪══════════╡
    │ a    ┆ 3   ┆ 1         ┆ 1      ┆ 0.333333 │
    └──────┴─────┴───────────┴────────┴──────────┘
    """
    check_options(
        ci=ci, interval=interval, missing=missing, stderr=stderr, keep_empty=keep_empty,
        wide=wide, bootstrap=bootstrap, seed=seed,
    )
    frame, schema, keys, found, chosen = read_scored(scored, by, metrics, columns)
    mapping = found.mapping
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
    return arrange(table, keys, chosen, keep_empty=keep_empty, wide=wide)


def arrange(
    table: pl.DataFrame,
    keys: list[str],
    chosen: Sequence[MetricColumn],
    *,
    keep_empty: bool,
    wide: bool,
) -> pl.DataFrame:
    """The aggregate rows in their order (keys, then the metrics' order), empty groups
    dropped unless ``keep_empty``, the name parameters added, widened if ``wide``."""
    if not keep_empty:
        table = table.filter(pl.col("n") > 0)
    order = {column.column: i for i, column in enumerate(chosen)}
    table = table.with_columns(
        __order=pl.col("metric").replace_strict(order, return_dtype=pl.Int64)
    )
    sort_by = [*keys, "__order"] if keys else ["__order"]
    table = table.sort(sort_by, nulls_last=True, maintain_order=True).drop("__order")
    table = _with_parameters(table, keys, chosen)
    return widen(table, keys, [column.column for column in chosen]) if wide else table


def read_scored(
    scored: Source,
    by: str | Sequence[str] | None,
    metrics: Sequence[str] | Mapping[str, str | None] | None,
    columns: Mapping[str, str] | None,
) -> tuple[pl.LazyFrame, Mapping[str, pl.DataType], list[str], Found, list[MetricColumn]]:
    """(frame, schema, keys, found, chosen): a scored source read for aggregating.

    The group keys are checked, the metric columns found (those that are not keys), and
    NaN scores refused.
    """
    recorded, recorded_roles = recorded_in(scored)
    frame = scan(scored)
    schema = frame.collect_schema()
    keys = group_keys(by)
    check_keys(keys, schema)
    found = find_columns(
        frame, metrics, columns=columns, recorded=recorded, recorded_roles=recorded_roles
    )
    chosen = [column for column in found.columns if column.column not in keys]
    if not chosen:
        raise EvalframeError(
            "no metric columns to aggregate: name them with metrics=[...] or score the frame first"
        )
    check_nan_scores(frame, chosen)
    return frame, schema, keys, found, chosen


def check_keys(keys: list[str], schema: Mapping[str, pl.DataType]) -> None:
    """Refuse group keys that are not columns, or that the aggregate table has a column of."""
    missing_keys = [key for key in keys if key not in schema]
    if missing_keys:
        raise OptionError(
            f"cannot group by {missing_keys}: no such column(s); available: {list(schema)}",
            option="by", value=missing_keys, clause=False,
            problem=f"no such column(s); available: {', '.join(schema)}",
        )
    clashing = [key for key in keys if key in AGGREGATE_COLUMNS]
    if clashing:
        names = ", ".join(AGGREGATE_COLUMNS)
        raise OptionError(
            f"cannot group by {clashing}: the aggregate table has column(s) of that name "
            f"({names}); rename the group column(s) first, e.g. "
            f"frame.rename({{{clashing[0]!r}: {clashing[0] + '_group'!r}}})",
            option="by", value=clashing, clause=False,
            problem=f"the table has column(s) of that name ({names}); rename the group "
            "column(s) first",
        )


def check_options(
    *,
    ci: float = 0.95,
    interval: str = "auto",
    missing: str = "wrong",
    stderr: str = "auto",
    keep_empty: bool = False,
    wide: bool = False,
    bootstrap: int = 1000,
    seed: int = 0,
) -> None:
    """Check the options of :func:`aggregate` that do not depend on the data.

    ``aggregate`` checks them first; a caller can check them before it reads any input.
    Raises :class:`~evalframe.errors.OptionError`.

    >>> check_options(interval="wilsn")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    evalframe.errors.OptionError: interval='wilsn' is invalid; did you mean 'wilson'? ...
    """
    check_level(ci)
    check_flag(keep_empty, "keep_empty")
    check_flag(wide, "wide")
    check_replicates(bootstrap)
    check_seed(seed)
    check_method(INTERVAL_METHODS, interval, "interval")
    check_method(STDERR_METHODS, stderr, "stderr")
    check_policy(missing)


def cluster_column(
    scored: Source,
    by: str | Sequence[str] | None = None,
    metrics: Sequence[str] | Mapping[str, str | None] | None = None,
    *,
    cluster: str | bool | None = None,
    stderr: str = "auto",
    columns: Mapping[str, str] | None = None,
) -> str | None:
    """The column :func:`aggregate` clusters on, given the same arguments; None if none.

    A group's standard errors are clustered on it where the group's rows repeat a cluster
    (the aggregate's ``n_clusters`` is then below ``n``); corpus metrics resample its
    clusters.

    >>> import polars as pl
    >>> rows = pl.DataFrame({"sample_id": [1, 1, 2, 2], "correct": [1.0, 0.0, 1.0, 1.0]})
    >>> cluster_column(rows, metrics=["correct"]), cluster_column(rows, cluster=False)
    ('sample_id', None)
    """
    check_method(STDERR_METHODS, stderr, "stderr")
    recorded, recorded_roles = recorded_in(scored)
    frame = scan(scored)
    schema = frame.collect_schema()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        found = find_columns(
            frame, metrics, columns=columns, recorded=recorded, recorded_roles=recorded_roles
        )
    return _cluster_column(frame, schema, group_keys(by), cluster, found.mapping, stderr)


def group_keys(by: str | Sequence[str] | None) -> list[str]:
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
    needs_clusters = STDERR_METHODS[stderr].needs_clusters
    if cluster is False:
        if needs_clusters:
            raise EvalframeError(f"stderr={stderr!r} needs clusters; cluster=False says none")
        return None
    if isinstance(cluster, str):
        if cluster not in schema:
            raise OptionError(
                f"cluster={cluster!r}: no such column; available: {list(schema)}",
                option="cluster", value=cluster, clause=False,
                problem=f"no such column; available: {', '.join(schema)}",
            )
        return checked_clusters(frame, cluster)
    if cluster not in (None, True):
        raise EvalframeError(f"cluster={cluster!r}: expected a column name, None or False")
    role_column = mapping.get("cluster", "cluster")
    if role_column in schema and role_column not in keys:
        return checked_clusters(frame, role_column)
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
            return checked_clusters(frame, sample_id) if found["nulls"].item() else sample_id
    if cluster is True or needs_clusters:
        raise EvalframeError(
            "clustering was asked for, but there is no 'cluster' column and 'sample_id' "
            "does not repeat within a group; name the column with cluster='...'"
        )
    return None


def checked_clusters(frame: pl.LazyFrame, cluster: str) -> str:
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
    statistics = batch_statistics(
        frame, keys, chosen, settings, unclustered=settings.cluster is None
    )
    return finish([statistics], keys, chosen, settings)


def _with_parameters(
    table: pl.DataFrame, keys: list[str], chosen: Sequence[MetricColumn]
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


def widen(
    table: pl.DataFrame, keys: list[str], metrics: Sequence[str] | None = None
) -> pl.DataFrame:
    """One row per group; for each metric its value and ``<metric>:<statistic>`` columns.

    ``metrics``: the columns an empty table widens to (no row says which metrics there
    are; without them, the keys alone).

    >>> empty = pl.DataFrame(schema={"task": pl.String, "metric": pl.String, "value": pl.Float64,
    ...     "stderr": pl.Float64, "ci_low": pl.Float64, "ci_high": pl.Float64, "n": pl.UInt32,
    ...     "n_missing": pl.UInt32})
    >>> widen(empty, ["task"], ["acc"]).columns
    ['task', 'acc', 'acc:stderr', 'acc:ci_low', 'acc:ci_high', 'acc:n', 'acc:n_missing']
    """
    if table.height == 0:
        statistics = ("stderr", "ci_low", "ci_high", "n", "n_missing")
        schema = {key: table.schema[key] for key in keys}
        for metric in metrics or ():
            schema[metric] = table.schema["value"]
            schema.update({f"{metric}:{name}": table.schema[name] for name in statistics})
        return pl.DataFrame(schema=schema)
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
