"""Scoring: metric names -> validated role columns -> one lazy plan of expressions."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

import polars as pl

from evalframe._expr import diagnosing, locating, numbered_rows
from evalframe._progress import shows_progress
from evalframe.errors import EvalframeError, RowError, located, without_plan
from evalframe.io.join import join_gold
from evalframe.io.load import Source, scan
from evalframe.io.reshape import one_row_per_sample
from evalframe.metrics.answers import RoleColumns, answer_columns, missing_rows
from evalframe.metrics.request import MetricRequest, parse_requests
from evalframe.schema import ROLES, check_mapped_columns, resolve_columns
from evalframe.scored import ScoredMetric, merged_contract_expr, missing_column

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
    check_mapped_columns(mapping, schema)
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


@shows_progress("scoring")
def score(
    source: Source,
    metrics: Metrics,
    *,
    columns: Mapping[str, str] | None = None,
    overwrite: bool = False,
    schema: Mapping[str, object] | None = None,
    csv_empty: str = "string",
    format: str | None = None,
    select: Sequence[str] | None = None,
    gold: Source | None = None,
    on: str | Sequence[str] | None = None,
    group_by: str | Sequence[str] | None = None,
    duplicates: str = "error",
) -> pl.DataFrame | pl.LazyFrame:
    """Score every row of ``source`` with ``metrics``.

    Returns the input with one column per metric appended, named exactly as
    requested (``"pass@10"``, ``"f1(average=macro)"``) or by the alias
    (``"em_ci=exact_match(ignore_case=true)"``, or ``{"em_ci": "exact_match(...)"}``),
    rows and columns in their original order. A sample-level metric gives a
    ``Float64`` score per row; a corpus-level metric (F1-macro, MCC, perplexity...) gives
    the row's statistics, a struct that :func:`evalframe.aggregate` reduces to the score.
    A row whose gold is null cannot be scored: null. A **missing answer** (a null
    prediction, or nothing extracted from it, with the gold present) is scored as wrong
    (the metric's worst score; a corpus metric's statistics stay null) and flagged in
    ``<metric>:missing``, appended after the metric columns, with one ``_evalframe``
    column recording what each metric column is (:mod:`evalframe.scored`), so every later
    step reads the same meaning from the data itself. A ``LazyFrame`` source gives a
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
    schema, csv_empty, format, select, duplicates
        How files are read, see :func:`evalframe.scan`: column types to read
        (``{"answer": "str"}``), what an empty CSV field means, the file layout
        (``"auto"`` recognises harness dumps; see :func:`evalframe.list_formats`), the
        only columns to read (``select`` is ``scan``'s ``columns``), and what a harness file
        holding one sample twice is (``"error"``, or keep the ``"first"`` / ``"last"``).
    gold, on
        Golds from another input (a path or a frame, read as ``source`` is), matched with the
        predictions on the key column(s) ``on``: one row per gold key, in the golds' order (per
        model when the predictions have a ``model`` column the golds do not), a question
        without a prediction kept as a missing answer (``aggregate`` counts it as wrong by
        default, as the official SQuAD v1.1 script scores it 0; ``missing="exclude"`` scores
        only answered questions, as SQuAD v2.0's script does), a prediction for an unknown key
        kept with null golds. Both are reported in a warning; see
        :func:`evalframe.io.join.join_gold`.
    group_by
        Collapse rows into one per sample first (before ``gold`` is matched): rows with the
        same values in these columns become one row, a column that varies within a group
        becomes a list, and the ``passed`` and ``prediction`` roles always do, so one row per
        run scores with pass@k, maj@k and avg@k. See
        :func:`evalframe.io.reshape.one_row_per_sample`.

    Examples
    --------
    >>> import polars as pl, evalframe as ef
    >>> df = pl.DataFrame(
    ...     {"pred": ["Paris", "the cat", None], "answers": [["Paris"], ["cat"], ["x"]]}
    ... )
    >>> scored = ef.score(df, ["squad_em"], columns={"prediction": "pred", "gold": "answers"})
    >>> scored.drop("_evalframe")  # the record of what each metric column is, see evalframe.scored
    shape: (3, 4)
    ┌─────────┬───────────┬──────────┬──────────────────┐
    │ pred    ┆ answers   ┆ squad_em ┆ squad_em:missing │
    │ ---     ┆ ---       ┆ ---      ┆ ---              │
    │ str     ┆ list[str] ┆ f64      ┆ bool             │
    ╞═════════╪═══════════╪══════════╪══════════════════╡
    │ Paris   ┆ ["Paris"] ┆ 1.0      ┆ false            │
    │ the cat ┆ ["cat"]   ┆ 1.0      ┆ false            │
    │ null    ┆ ["x"]     ┆ 0.0      ┆ true             │
    └─────────┴───────────┴──────────┴──────────────────┘
    """
    requests = parse_requests(metrics)
    check_mapping(columns)
    if not isinstance(overwrite, bool):
        raise EvalframeError(f"overwrite={overwrite!r} must be True or False")
    frame = prepare_input(
        source, columns=columns, schema=schema, csv_empty=csv_empty, format=format,
        select=select, gold=gold, on=on, group_by=group_by, duplicates=duplicates,
    )
    scored, _ = score_plan(frame, requests, columns, overwrite=overwrite)
    if isinstance(source, pl.LazyFrame):
        return scored
    return collect(scored)


def prepare_input(
    source: Source,
    *,
    columns: Mapping[str, str] | None = None,
    schema: Mapping[str, object] | None = None,
    csv_empty: str = "string",
    format: str | None = None,
    select: Sequence[str] | None = None,
    gold: Source | None = None,
    on: str | Sequence[str] | None = None,
    group_by: str | Sequence[str] | None = None,
    duplicates: str = "error",
) -> pl.LazyFrame:
    """The input as :func:`score` sees it: read, grouped one row per sample, golds matched.

    >>> import polars as pl
    >>> runs = pl.DataFrame({"id": ["a", "a"], "passed": [True, True]})
    >>> prepare_input(runs, group_by="id").collect().rows()
    [('a', [True, True])]
    """
    reading = {
        "schema": schema, "csv_empty": csv_empty, "format": format, "duplicates": duplicates,
    }
    frame = scan(source, columns=select, **reading)
    mapping = check_mapping(columns)
    if group_by is not None:
        lists = [mapping.get(role, role) for role in ("passed", "prediction")]
        frame = one_row_per_sample(frame, group_by, lists=lists)
    if (gold is None) != (on is None):
        raise EvalframeError(
            "gold= and on= go together: gold= is the input holding the golds, on= the key "
            "column(s) that match them with the predictions"
        )
    if gold is not None:
        frame = join_gold(frame, scan(gold, **reading), on)  # type: ignore[arg-type]
    return frame


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
    requests = _requests(metrics)

    def locate() -> EvalframeError | None:
        return diagnose(frame, requests, columns)

    with numbered_rows(row_number), locating(locate):
        planned = plan_metrics(schema, requests, columns)
    mapping = check_mapping(columns)
    found = [answer_columns(request, schema, mapping) for request, _ in planned]
    contract = [
        _scored_metric(request, schema, mapping, roles)
        for (request, _), roles in zip(planned, found, strict=True)
    ]
    # a metric's flag column goes with it: one left behind by a dropped metric is replaced
    clashing = [entry.column for entry in contract if entry.column in schema]
    if clashing and not overwrite:
        raise EvalframeError(
            f"the input already has column(s) {clashing} named like the requested metrics; "
            "pass overwrite=True (CLI: --overwrite) to replace them, or rename them"
        )
    # Where an extractor finds no answer is computed beside the scores, in one context with
    # them, so polars' common-subexpression elimination runs each extraction once.
    beside = []
    for i, roles in enumerate(found):
        if roles is not None and roles.unextracted:
            names = [f"{row_number}_unextracted{i}_{j}" for j in range(len(roles.unextracted))]
            beside += [
                expr.alias(name) for expr, name in zip(roles.unextracted, names, strict=True)
            ]
            found[i] = replace(roles, unextracted=tuple(pl.col(name) for name in names))
    flags = [
        missing_rows(roles).alias(entry.missing)
        for entry, roles in zip(contract, found, strict=True)
        if roles is not None and entry.missing is not None
    ]
    # A missing answer is scored as wrong (the metric's worst score) in the column itself,
    # so the per-row scores are honest for any tool that reads them; the flag keeps which
    # rows they were (see evalframe.scored).
    filled = [
        pl.when(pl.col(entry.missing))
        .then(pl.lit(request.spec.worst, dtype=pl.Float64))
        .otherwise(pl.col(request.column))
        .alias(request.column)
        for (request, _), entry in zip(planned, contract, strict=True)
        if entry.missing is not None and request.spec.level == "sample"
    ]
    scored = (
        frame.with_row_index(row_number)
        .with_columns([expr for _, expr in planned] + beside)
        .drop(row_number)
        .with_columns(flags)
        .drop([expr.meta.output_name() for expr in beside])
        .with_columns([*filled, merged_contract_expr(frame, contract, mapping)])
    )
    return scored, planned


def _scored_metric(
    request: MetricRequest,
    schema: Mapping[str, pl.DataType],
    mapping: Mapping[str, str],
    answers: RoleColumns | None,
) -> ScoredMetric:
    """What the contract records of one planned metric column."""
    roles = resolve_columns(
        request.column, request.spec.role_sets, schema, mapping, request.spec.dtypes
    )
    used = {role: column for role, column in roles.items() if isinstance(column, str)}
    flag = missing_column(request.column) if answers is not None else None
    return ScoredMetric(request.column, request.text, flag, used)


def _unused_name(schema: Mapping[str, pl.DataType], base: str) -> str:
    name = base
    while name in schema:
        name += "_"
    return name


def diagnose(
    frame: pl.LazyFrame,
    metrics: Metrics | Sequence[MetricRequest],
    columns: Mapping[str, str] | None = None,
) -> RowError | None:
    """Check every row of ``frame`` for every metric; the error for the first bad row, or None.

    One streaming pass over the input (constant memory): each check's offending rows
    are counted and the first is found; the reported check is the one whose first
    offending row comes first in the input, and the others are summarised after it.
    """
    schema = frame.collect_schema()
    row_number = _unused_name(schema, "__evalframe_row")
    with numbered_rows(row_number), diagnosing() as guards:
        plan_metrics(schema, metrics, columns)
    if not guards:
        return None
    numbered = frame.with_row_index(row_number)
    row = pl.col(row_number)
    aggregations = []
    for g, record in enumerate(guards):
        bits = pl.col(f"__bits{g}")
        numbered = numbered.with_columns(record.failures.alias(f"__bits{g}"))
        for j in range(len(record.checks)):
            broken = (bits & (1 << j)) != 0
            aggregations += [
                broken.sum().alias(f"count_{g}_{j}"),
                row.filter(broken).min().alias(f"first_{g}_{j}"),
            ]
    found = numbered.select(aggregations).collect(engine="streaming").row(0, named=True)
    failures = sorted(
        (found[f"first_{g}_{j}"], g, j, found[f"count_{g}_{j}"])
        for g, record in enumerate(guards)
        for j in range(len(record.checks))
        if found[f"count_{g}_{j}"]
    )
    if not failures:
        return None
    first, g, j, count = failures[0]
    record, check = guards[g], guards[g].checks[j]
    values = ""
    if check.show:
        shown = (
            frame.with_row_index(row_number)
            .filter(row == first)
            .select([expr.alias(f"__show{i}") for i, (_, expr) in enumerate(check.show)])
            .collect()
        )
        values = " (" + ", ".join(
            f"{label}={shown[f'__show{i}'].to_list()[0]!r}"
            for i, (label, _) in enumerate(check.show)
        ) + ")"
    others = [
        f"{guards[h].checks[k].what} in {n} row(s) (first: row {row_first}) for metric "
        f"{guards[h].metric!r}"
        for row_first, h, k, n in failures[1:]
        if (h, k) != (g, j)
    ]
    message = (
        f"metric {record.metric!r}: {count} row(s) have {check.what}; expected "
        f"{check.expected}. First offending row: {first}{values}"
    )
    if others:
        message += ". Also: " + "; ".join(others[:3]) + ("; ..." if len(others) > 3 else "")
    return RowError(message)


def collect(frame: pl.LazyFrame) -> pl.DataFrame:
    """Collect a scored plan, turning polars' errors about the input into EvalframeError.

    Polars hands metrics the rows in batches, checked in parallel; a failed check
    is located in the whole input (:func:`evalframe.errors.located`), so the error
    counts every offending row and names the first one in the input, across every
    check.
    """
    try:
        return frame.collect()
    except EvalframeError as error:
        raise EvalframeError(without_plan(located(error))) from error.__cause__
    except pl.exceptions.PolarsError as error:
        text = without_plan(error).strip()
        raise EvalframeError(text.splitlines()[0] if text else type(error).__name__) from error
