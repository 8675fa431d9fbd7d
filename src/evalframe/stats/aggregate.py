"""Per-group aggregates of metric columns: mean, standard error, normal confidence interval."""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl
from scipy.stats import norm

from evalframe._version import __version__
from evalframe.errors import EvalframeError
from evalframe.metrics.registry import is_metric_name

AGGREGATE_COLUMNS = ("metric", "n", "n_null", "value", "stderr", "ci_low", "ci_high", "signature")


def metric_columns(frame: pl.DataFrame | pl.LazyFrame) -> list[str]:
    """The columns of a scored frame that are named as registered metrics."""
    return [name for name in frame.collect_schema() if is_metric_name(name)]


def signature(metric: str, ci: float) -> str:
    """What determines an aggregate's numbers, as a reproducible string.

    >>> signature("squad_f1", 0.95)
    'metric:squad_f1|agg:mean|stderr:sem|ci:normal-0.95|evalframe:0.1.0'
    """
    return f"metric:{metric}|agg:mean|stderr:sem|ci:normal-{ci:g}|evalframe:{__version__}"


def aggregate(
    scored: pl.DataFrame | pl.LazyFrame,
    by: str | Sequence[str] | None = None,
    metrics: Sequence[str] | None = None,
    *,
    ci: float = 0.95,
    keep_empty: bool = False,
) -> pl.DataFrame:
    """Aggregate metric columns per group: one row per group x metric.

    Columns: the ``by`` keys, ``metric``, ``n`` (non-null scores), ``n_null``,
    ``value`` (the mean), ``stderr`` (sample standard deviation / sqrt(n)),
    ``ci_low``/``ci_high`` (normal approximation, ``value -/+ z * stderr``) and
    ``signature``. Null scores are left out of ``n`` and counted in ``n_null``.
    With one score in a group, ``stderr`` and the interval are null (no spread to
    estimate). A group in which a metric has no score at all (a code task scored
    with a QA metric) is left out unless ``keep_empty=True``.

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
    frame = scored.lazy()
    schema = frame.collect_schema()
    keys = [by] if isinstance(by, str) else list(by or [])
    missing_keys = [key for key in keys if key not in schema]
    if missing_keys:
        raise EvalframeError(
            f"cannot group by {missing_keys}: no such column(s); available: {list(schema)}"
        )
    names = list(metrics) if metrics is not None else metric_columns(frame)
    if not names:
        raise EvalframeError(
            "no metric columns to aggregate: name them with metrics=[...] or score the frame first"
        )
    for name in names:
        if name not in schema:
            raise EvalframeError(f"metric column {name!r} not found; available: {list(schema)}")
        if not (schema[name].is_numeric() or schema[name] == pl.Null):
            raise EvalframeError(
                f"metric column {name!r} has dtype {schema[name]}; expected numeric scores"
            )
    z = float(norm.ppf(0.5 + ci / 2))
    parts = []
    for name in names:
        value = pl.col(name).cast(pl.Float64)
        summary = frame.group_by(keys or pl.lit(0).alias("__all__"), maintain_order=True).agg(
            n=value.count(),
            n_null=value.null_count(),
            value=value.mean(),
            std=value.std(ddof=1),
        )
        if not keys:
            summary = summary.drop("__all__")
        parts.append(summary.with_columns(metric=pl.lit(name)))
    table = pl.concat(parts, how="vertical").collect()
    stderr = pl.col("std") / pl.col("n").cast(pl.Float64).sqrt()
    table = (
        table.with_columns(stderr=stderr)
        .with_columns(
            ci_low=pl.col("value") - z * pl.col("stderr"),
            ci_high=pl.col("value") + z * pl.col("stderr"),
            signature=pl.concat_str(
                pl.lit("metric:"),
                pl.col("metric"),
                pl.lit(signature("", ci).removeprefix("metric:")),
            ),
        )
        .select(*keys, *AGGREGATE_COLUMNS)
    )
    if not keep_empty:
        table = table.filter(pl.col("n") > 0)
    if keys:
        order = {name: i for i, name in enumerate(names)}
        table = table.with_columns(
            __order=pl.col("metric").replace_strict(order, return_dtype=pl.Int64)
        ).sort([*keys, "__order"], nulls_last=True, maintain_order=True).drop("__order")
    return table
