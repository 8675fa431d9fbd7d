"""Scoring: metric names -> validated role columns -> one lazy plan of expressions."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import polars as pl

from evalframe.errors import EvalframeError
from evalframe.io.load import Source, scan
from evalframe.metrics.registry import MetricSpec, resolve
from evalframe.schema import ROLES, resolve_columns


def plan_metrics(
    schema: Mapping[str, pl.DataType],
    metrics: Sequence[str],
    columns: Mapping[str, str] | None = None,
) -> list[tuple[str, MetricSpec, pl.Expr]]:
    """Resolve and validate every metric against ``schema``; return (name, spec, expr)."""
    if isinstance(metrics, str):
        metrics = [metrics]
    if not metrics:
        raise EvalframeError("no metrics requested; see evalframe.list_metrics()")
    mapping = dict(columns or {})
    unknown_roles = sorted(set(mapping) - set(ROLES))
    if unknown_roles:
        raise EvalframeError(
            f"unknown role(s) {unknown_roles} in the column mapping; known roles: "
            f"{', '.join(ROLES)}"
        )
    for role, column in mapping.items():
        if not isinstance(column, str):
            raise EvalframeError(
                f"role {role!r} is mapped to {column!r}; expected a column name (str)"
            )
    duplicates = sorted({name for name in metrics if list(metrics).count(name) > 1})
    if duplicates:
        raise EvalframeError(f"metric(s) requested more than once: {duplicates}")
    planned = []
    for name in metrics:
        spec, params = resolve(name)
        chosen = resolve_columns(name, spec.role_sets, schema, mapping, spec.dtypes)
        planned.append((name, spec, spec.build(chosen, params).alias(name)))
    return planned


def score(
    source: Source,
    metrics: Sequence[str],
    *,
    columns: Mapping[str, str] | None = None,
    overwrite: bool = False,
) -> pl.DataFrame | pl.LazyFrame:
    """Score every row of ``source`` with ``metrics``.

    Returns the input with one column per metric appended, named exactly as
    requested (``"pass@10"``), rows and columns in their original order. A
    sample-level metric gives a ``Float64`` score per row (null where an input is
    null). A ``LazyFrame`` source gives a ``LazyFrame``; anything else is collected.

    Parameters
    ----------
    source
        A path, glob or list of paths (parquet, jsonl/json, csv, arrow), a polars
        DataFrame or LazyFrame, or a pyarrow Table.
    metrics
        Registry names, see :func:`evalframe.list_metrics`.
    columns
        Role -> column name, for columns not named as their role (``{"gold": "answers"}``).
    overwrite
        Replace input columns that have a metric's name (otherwise an error).

    Examples
    --------
    >>> import polars as pl, evalframe as ef
    >>> df = pl.DataFrame(
    ...     {"pred": ["Paris", "the cat", None], "answers": [["Paris"], ["cat"], ["x"]]}
    ... )
    >>> ef.score(df, ["squad_em"], columns={"prediction": "pred", "gold": "answers"})
    shape: (3, 3)
    ┌─────────┬───────────┬──────────┐
    │ pred    ┆ answers   ┆ squad_em │
    │ ---     ┆ ---       ┆ ---      │
    │ str     ┆ list[str] ┆ f64      │
    ╞═════════╪═══════════╪══════════╡
    │ Paris   ┆ ["Paris"] ┆ 1.0      │
    │ the cat ┆ ["cat"]   ┆ 1.0      │
    │ null    ┆ ["x"]     ┆ null     │
    └─────────┴───────────┴──────────┘
    """
    frame = scan(source)
    schema = frame.collect_schema()
    planned = plan_metrics(schema, metrics, columns)
    clashing = [name for name, _, _ in planned if name in schema]
    if clashing and not overwrite:
        raise EvalframeError(
            f"the input already has column(s) {clashing} named like the requested metrics; "
            "pass overwrite=True (CLI: --overwrite) to replace them, or rename them"
        )
    scored = frame.with_columns([expr for _, _, expr in planned])
    if isinstance(source, pl.LazyFrame):
        return scored
    return collect(scored)


def collect(frame: pl.LazyFrame, *, streaming: bool = False) -> pl.DataFrame:
    """Collect a scored plan, turning polars' errors about the input into EvalframeError."""
    try:
        return frame.collect(engine="streaming" if streaming else "auto")
    except EvalframeError:
        raise
    except pl.exceptions.PolarsError as error:
        text = str(error).strip()
        raise EvalframeError(text.splitlines()[0] if text else type(error).__name__) from error
