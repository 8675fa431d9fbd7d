"""Scoring: metric names -> validated role columns -> one lazy plan of expressions."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import polars as pl

from evalframe._expr import numbered_rows
from evalframe.errors import EvalframeError, without_plan
from evalframe.io.load import Source, scan
from evalframe.metrics.request import MetricRequest, parse_requests
from evalframe.schema import ROLES, resolve_columns

#: Metrics as users give them: names with options (``"f1(average=macro)"``), a list of
#: them, or a mapping output column -> metric.
Metrics = str | Sequence[str] | Mapping[str, str]


def plan_metrics(
    schema: Mapping[str, pl.DataType],
    metrics: Metrics | Sequence[MetricRequest],
    columns: Mapping[str, str] | None = None,
) -> list[tuple[MetricRequest, pl.Expr]]:
    """Resolve and validate every metric against ``schema``; return (request, expression)."""
    requests = _requests(metrics)
    mapping = check_mapping(columns)
    planned = []
    for request in requests:
        chosen = resolve_columns(
            request.column, request.spec.role_sets, schema, mapping, request.spec.dtypes
        )
        planned.append((request, request.build(chosen).alias(request.column)))
    return planned


def _requests(metrics: Metrics | Sequence[MetricRequest]) -> list[MetricRequest]:
    if isinstance(metrics, Sequence) and not isinstance(metrics, str) and metrics and all(
        isinstance(item, MetricRequest) for item in metrics
    ):
        return list(metrics)
    return parse_requests(metrics)


def check_mapping(columns: Mapping[str, str] | None) -> dict[str, str]:
    """The role -> column mapping, checked: known roles, column names as strings."""
    if columns is not None and not isinstance(columns, Mapping):
        raise EvalframeError(
            f"columns must map roles to column names (a dict), got {type(columns).__name__}"
        )
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
    return mapping


def score(
    source: Source,
    metrics: Metrics,
    *,
    columns: Mapping[str, str] | None = None,
    overwrite: bool = False,
) -> pl.DataFrame | pl.LazyFrame:
    """Score every row of ``source`` with ``metrics``.

    Returns the input with one column per metric appended, named exactly as
    requested (``"pass@10"``, ``"f1(average=macro)"``) or by the alias
    (``"em_ci=exact_match(ignore_case=true)"``, or ``{"em_ci": "exact_match(...)"}``),
    rows and columns in their original order. A sample-level metric gives a
    ``Float64`` score per row (null where an input is null); a corpus-level metric
    (F1-macro, MCC, perplexity...) gives the row's statistics, a struct that
    :func:`evalframe.aggregate` reduces to the score. A ``LazyFrame`` source gives a
    ``LazyFrame``; anything else is collected. Metric names and options are checked
    before any input is read.

    Parameters
    ----------
    source
        A path, glob or list of paths (parquet, jsonl/json, csv, arrow), a polars
        DataFrame or LazyFrame, or a pyarrow Table.
    metrics
        Registry names with options, ``name(key=value, ...)``, optionally
        ``alias=name(...)``; a list of them, or a mapping column -> metric. See
        :func:`evalframe.list_metrics`.
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
    requests = parse_requests(metrics)
    check_mapping(columns)
    scored, _ = score_plan(scan(source), requests, columns, overwrite=overwrite)
    if isinstance(source, pl.LazyFrame):
        return scored
    return collect(scored)


def score_plan(
    frame: pl.LazyFrame,
    metrics: Metrics | Sequence[MetricRequest],
    columns: Mapping[str, str] | None = None,
    *,
    overwrite: bool = False,
) -> tuple[pl.LazyFrame, list[tuple[MetricRequest, pl.Expr]]]:
    """The lazy plan that appends ``metrics`` to ``frame``, and the planned metrics.

    Error messages from the metrics name rows by their number in ``frame``: the
    plan numbers the rows with a streaming counter and drops it again at the end.
    """
    schema = frame.collect_schema()
    row_number = _unused_name(schema, "__evalframe_row")
    with numbered_rows(row_number):
        planned = plan_metrics(schema, metrics, columns)
    clashing = [request.column for request, _ in planned if request.column in schema]
    if clashing and not overwrite:
        raise EvalframeError(
            f"the input already has column(s) {clashing} named like the requested metrics; "
            "pass overwrite=True (CLI: --overwrite) to replace them, or rename them"
        )
    scored = (
        frame.with_row_index(row_number)
        .with_columns([expr for _, expr in planned])
        .drop(row_number)
    )
    return scored, planned


def _unused_name(schema: Mapping[str, pl.DataType], base: str) -> str:
    name = base
    while name in schema:
        name += "_"
    return name


def collect(frame: pl.LazyFrame, *, streaming: bool = False) -> pl.DataFrame:
    """Collect a scored plan, turning polars' errors about the input into EvalframeError.

    Polars may hand metrics the rows in batches, checked in parallel; an error then
    counts the offending rows of one batch. Unless ``streaming``, a failed plan is
    checked again in one batch, so the error counts every offending row and names
    the first one in the input.
    """
    try:
        return frame.collect(engine="streaming" if streaming else "auto")
    except EvalframeError as error:
        if not streaming:
            try:
                frame.collect(engine="in-memory")
            except EvalframeError as whole:
                raise EvalframeError(without_plan(whole)) from whole.__cause__
        raise EvalframeError(without_plan(error)) from error.__cause__
    except pl.exceptions.PolarsError as error:
        text = str(error).strip()
        raise EvalframeError(text.splitlines()[0] if text else type(error).__name__) from error
