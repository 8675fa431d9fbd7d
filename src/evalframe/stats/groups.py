"""Scores of groups of tasks (MMLU's 57 subjects) from the subtasks' aggregate rows.

A benchmark reported by name is often a group of subtasks, each aggregated on its own
(:func:`evalframe.aggregate` with ``by=[..., "task"]``). :func:`group_tasks` turns those
rows into one row per group, with ``K`` subtasks of sizes ``n_i`` (``N = sum n_i``),
scores ``v_i`` and standard errors ``se_i``, the subtasks' samples independent:

- ``method="mean"``: the unweighted (macro) mean ``sum v_i / K``, ``SE = sqrt(sum se_i**2)
  / K`` (the variance of a mean of independent means; lm-eval's
  ``unweighted_mean_stderr``, used by its groups with ``weight_by_size: false``);
- ``method="weighted"``: the size-weighted (micro) mean ``sum n_i v_i / N``, ``SE =
  sqrt(sum (n_i / N)**2 se_i**2)`` (the same rule with weights ``n_i / N``; for a mean
  metric, the stratified standard error of the mean over all ``N`` samples);
- ``method="pooled"``: lm-eval's group aggregate with ``weight_by_size: true``
  (``lm_eval.api.metrics.aggregate_subtask_metrics`` and ``pooled_sample_stderr``,
  lm-eval 0.4.13): the size-weighted mean, and ``SE = sqrt(sum (n_i - 1) n_i se_i**2 /
  (N - K) / N)``, the pooled within-subtask variance over ``N``. It equals ``weighted``
  up to the ``n_i - 1`` / ``N - K`` degrees-of-freedom corrections.

Never the average of the subtasks' standard errors (lighteval's ``|_average`` rows):
that is the standard error of *one* subtask of typical size, not of the group's mean, so
it is too wide by about ``sqrt(K)``. Example: 57 subtasks of 100 questions at 70%
accuracy each have ``se_i = 0.046``; their average is 0.046, while the macro mean's SE is
``sqrt(57 * 0.046**2) / 57 = 0.0061``, 7.5 times smaller.

>>> import polars as pl
>>> table = pl.DataFrame({"task": ["a", "b"], "metric": ["acc", "acc"], "n": [100, 300],
...                       "value": [0.5, 0.7], "stderr": [0.05, 0.03]})
>>> group_tasks(table, {"ab": ["a", "b"]}, method=["mean", "weighted"]).select(
...     "task", "method", "n", "value", "stderr").with_columns(pl.col("stderr").round(6))
shape: (2, 5)
┌──────┬──────────┬─────┬───────┬──────────┐
│ task ┆ method   ┆ n   ┆ value ┆ stderr   │
│ ---  ┆ ---      ┆ --- ┆ ---   ┆ ---      │
│ str  ┆ str      ┆ i64 ┆ f64   ┆ f64      │
╞══════╪══════════╪═════╪═══════╪══════════╡
│ ab   ┆ mean     ┆ 400 ┆ 0.6   ┆ 0.029155 │
│ ab   ┆ weighted ┆ 400 ┆ 0.65  ┆ 0.025739 │
└──────┴──────────┴─────┴───────┴──────────┘
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import polars as pl

from evalframe.errors import EvalframeError
from evalframe.stats.signature import Signature

__all__ = ["METHODS", "group_tasks"]

#: The ways :func:`group_tasks` combines subtasks.
METHODS = ("mean", "weighted", "pooled")

#: The columns of an aggregate table a group row computes (others are summed or null).
_STANDARD = ("metric", "n", "n_null", "value", "stderr", "ci_low", "ci_high", "signature")
#: The columns a group row adds to an aggregate table's.
_ADDED = ("n_tasks", "method")
#: Count columns of an aggregate table that a group row sums over its subtasks.
_SUMMED = ("n_null", "n_missing", "n_clusters")
_REQUIRED = ("metric", "n", "value", "stderr")
_GROUP = "__evalframe_group"
#: The level in a signature's ``ci:<method>-<level>`` pair.
_CI = r"(?:^|\|)ci:[A-Za-z_]+-([^|]+)"
#: The ``group:<name>|method:<m>|`` pairs a group row's signature starts with.
_PREFIX = r"^((?:group:[^|]*\|method:[^|]*\|)+)"
#: A signature naming nothing but the version (of parts without signatures).
_BARE = r"^version:[^|]*$"


def _keys(by: str | Sequence[str] | None) -> list[str]:
    if by is None:
        return []
    keys = [by] if isinstance(by, str) else list(by)
    if not all(isinstance(key, str) for key in keys) or len(set(keys)) != len(keys):
        raise EvalframeError(f"by={by!r}: expected distinct column names (str)")
    return keys


def _methods(method: str | Sequence[str]) -> list[str]:
    methods = [method] if isinstance(method, str) else list(method)
    unknown = [m for m in methods if m not in METHODS]
    if not methods or unknown or len(set(methods)) != len(methods):
        raise EvalframeError(
            f"method={method!r}: expected one or more distinct of {list(METHODS)}"
        )
    return methods


def _members(groups: Mapping[str, Sequence[str]], task: str, dtype: pl.DataType) -> pl.DataFrame:
    if not isinstance(groups, Mapping) or not groups:
        raise EvalframeError(
            f"groups={groups!r}: expected a mapping group name -> list of subtask names"
        )
    names, tasks = [], []
    for name, subtasks in groups.items():
        if isinstance(subtasks, str) or not isinstance(subtasks, Sequence) or not subtasks:
            raise EvalframeError(
                f"group {name!r}: expected a non-empty list of subtask names, got {subtasks!r}"
            )
        repeated = sorted({t for t in subtasks if list(subtasks).count(t) > 1}, key=str)
        if repeated:
            raise EvalframeError(f"group {name!r} lists subtask(s) {repeated} more than once")
        names += [name] * len(subtasks)
        tasks += list(subtasks)
    members = pl.DataFrame({_GROUP: names, task: tasks}, schema_overrides={_GROUP: pl.String})
    try:
        return members.with_columns(pl.col(task).cast(dtype, strict=True))
    except pl.exceptions.PolarsError as error:
        raise EvalframeError(
            f"groups: subtask names do not convert to the {task!r} column's dtype {dtype}"
        ) from error


def _describe(row: Mapping[str, object], keys: Sequence[str]) -> str:
    return ", ".join(f"{key}={row[key]!r}" for key in keys)


def group_tasks(
    table: pl.DataFrame,
    groups: Mapping[str, Sequence[str]],
    *,
    by: str | Sequence[str] | None = None,
    task: str = "task",
    method: str | Sequence[str] = "weighted",
    missing: str = "error",
    ci: float | None = None,
) -> pl.DataFrame:
    """Rows of each group of tasks from an aggregate table of its subtasks.

    For every group, combination of ``by`` keys and ``metric`` that has at least one of
    the group's subtasks, one row per ``method`` (formulas in the module docstring): the
    group's ``value`` and ``stderr``, ``n`` (and ``n_null``, ``n_missing``,
    ``n_clusters``) summed over its subtasks, the normal interval ``ci_low``/``ci_high``
    = ``value -/+ z stderr``, ``task`` = the group's name, ``n_tasks`` the subtasks
    combined and ``method``. ``signature`` is ``group:<name>|method:<method>|`` followed
    by the subtasks' signature (which must be one for the whole group; its ``ci`` pair
    becomes ``ci:normal-<level>``). A subtask's null ``stderr`` (one sample) makes the
    group's null. The columns are the table's (another column, a pass@k table's ``k``,
    keeps its value where all the subtasks agree, else null) plus ``n_tasks`` and
    ``method``, so ``pl.concat([table, grouped], how="diagonal_relaxed")`` lists subtasks
    and groups together. A group may name another group's rows in such a table (nested
    groups; its signature then lists the inner groups' ``group:|method:`` pairs too).

    Parameters
    ----------
    table
        An aggregate table: ``by`` keys, ``task``, ``metric``, ``n``, ``value``,
        ``stderr`` (from :func:`evalframe.aggregate` with ``by=[*by, task]``), one row per
        ``by`` x task x metric.
    groups
        Group name -> its subtasks' names (values of the ``task`` column). A subtask may
        be in several groups.
    by
        The other key columns of the table (e.g. ``["model"]``).
    task
        The column naming the task.
    method
        ``"mean"``, ``"weighted"`` (default), ``"pooled"``, or a list of them.
    missing
        ``"error"`` (default): a group whose subtask has no row (or a null ``value``) for
        some ``by`` x metric raises an error listing them. ``"skip"``: the group is
        computed over the subtasks present, ``n_tasks`` says how many.
    ci
        Confidence level of the interval; default the subtasks' (``ci:normal-<level>``
        in their signature), else 0.95.

    Returns
    -------
    polars.DataFrame

    Examples
    --------
    >>> import polars as pl
    >>> table = pl.DataFrame({
    ...     "model": ["m", "m", "m"], "task": ["x", "y", "z"], "metric": ["acc"] * 3,
    ...     "n": [10, 30, 5], "value": [0.4, 0.8, 0.6], "stderr": [0.16, 0.07, 0.24],
    ... })
    >>> out = group_tasks(table, {"xy": ["x", "y"]}, by="model", method="pooled")
    >>> out.select("model", "task", "n_tasks", "n", "value", pl.col("stderr").round(6))
    shape: (1, 6)
    ┌───────┬──────┬─────────┬─────┬───────┬─────────┐
    │ model ┆ task ┆ n_tasks ┆ n   ┆ value ┆ stderr  │
    │ ---   ┆ ---  ┆ ---     ┆ --- ┆ ---   ┆ ---     │
    │ str   ┆ str  ┆ u32     ┆ i64 ┆ f64   ┆ f64     │
    ╞═══════╪══════╪═════════╪═════╪═══════╪═════════╡
    │ m     ┆ xy   ┆ 2       ┆ 40  ┆ 0.7   ┆ 0.06573 │
    └───────┴──────┴─────────┴─────┴───────┴─────────┘
    >>> group_tasks(table, {"all": ["x", "y", "w"]}, by="model")
    Traceback (most recent call last):
    ...
    evalframe.errors.EvalframeError: group 'all' misses 1 subtask row(s) ...
    """
    if not isinstance(table, pl.DataFrame):
        raise EvalframeError(
            f"group_tasks: expected an aggregate table (a polars DataFrame), got "
            f"{type(table).__name__}"
        )
    keys = _keys(by)
    methods = _methods(method)
    if missing not in ("error", "skip"):
        raise EvalframeError(f"missing={missing!r}: expected 'error' or 'skip'")
    if task in keys:
        raise EvalframeError(f"by={keys!r} includes the task column {task!r}")
    absent = [c for c in (*keys, task, *_REQUIRED) if c not in table.columns]
    if absent:
        raise EvalframeError(
            f"group_tasks: the table has no column(s) {absent}; available: {table.columns}"
        )
    row_keys = [*keys, task, "metric"]
    duplicated = table.filter(pl.struct(row_keys).is_duplicated())
    if duplicated.height:
        raise EvalframeError(
            f"group_tasks: {duplicated.height} rows share their {row_keys} (first: "
            f"{_describe(duplicated.row(0, named=True), row_keys)}); name every key column "
            "in by="
        )
    members = _members(groups, task, table.schema[task])
    existing = set(table[task].cast(pl.String).to_list())
    clashing = sorted(str(name) for name in groups if str(name) in existing)
    if clashing:
        raise EvalframeError(
            f"group name(s) {clashing} are also tasks of the table: the group's rows could not "
            "be told from the task's; rename the group(s)"
        )
    group_keys = [*keys, "metric", _GROUP]
    joined = table.join(members, on=task, how="inner")
    present = joined.filter(pl.col("value").is_not_null())
    expected = joined.select(group_keys).unique().join(members, on=_GROUP, how="inner")
    lacking = expected.join(present.select(*group_keys, task), on=[*group_keys, task], how="anti")
    if lacking.height and missing == "error":
        listed = (
            lacking.group_by(group_keys, maintain_order=True)
            .agg(pl.col(task).sort())
            .sort(group_keys)
        )
        first = listed.row(0, named=True)
        context = _describe(first, [*keys, "metric"])
        raise EvalframeError(
            f"group {first[_GROUP]!r} misses {lacking.height} subtask row(s) (no row or a null "
            f"value) across {listed.height} combination(s) of {[*keys, 'metric']}; first: "
            f"{context}: {first[task]} (pass missing='skip' to combine the subtasks present)"
        )

    if ci is None:
        ci = _inferred_ci(present)
    if not 0 < ci < 1:
        raise EvalframeError(f"ci={ci!r} must be strictly between 0 and 1 (e.g. 0.95)")
    from scipy.special import ndtri

    z = float(ndtri(0.5 + ci / 2))
    # a part's signature: the group prefixes of a part that is itself a group, then its base
    signature = (
        pl.col("signature").cast(pl.String)
        if "signature" in present.columns
        else pl.lit(None, dtype=pl.String)
    )
    base = signature.str.replace(_PREFIX, "")
    present = present.with_columns(
        __prefix=signature.str.extract(_PREFIX, 1).fill_null(""),
        __base=pl.when(base.str.contains(_BARE)).then(None).otherwise(base),
    )
    mixed = (
        present.group_by(group_keys)
        .agg(pl.col("__base").n_unique().alias("k"), pl.col("__base").unique())
        .filter(pl.col("k") > 1)
    )
    if mixed.height:
        row = mixed.row(0, named=True)
        raise EvalframeError(
            f"group {row[_GROUP]!r} ({_describe(row, [*keys, 'metric'])}): its subtasks were "
            f"aggregated differently, signatures {sorted(map(str, row['__base']))}; one group "
            "number needs one way of computing its parts"
        )

    n = pl.col("n").cast(pl.Float64)
    v = pl.col("value").cast(pl.Float64)
    se2 = pl.col("stderr").cast(pl.Float64) ** 2
    total = n.sum()
    count = pl.len().cast(pl.Float64)
    values = {"mean": v.mean(), "weighted": (n * v).sum() / total, "pooled": (n * v).sum() / total}
    errors = {
        "mean": se2.sum().sqrt() / count,
        "weighted": ((n / total) ** 2 * se2).sum().sqrt(),
        "pooled": ((((n - 1) * se2 * n).sum() / (total - count)) / total).sqrt(),
    }
    computed = {*keys, task, *_STANDARD, *_ADDED}
    summed = [c for c in _SUMMED if c in present.columns]
    # other columns (a pass@k table's k, say) are kept where the subtasks agree
    carried = [
        c for c in table.columns if c not in computed and c not in summed and c != _GROUP
    ]
    common = [
        pl.when(pl.col(c).n_unique() == 1).then(pl.col(c).first()).alias(c) for c in carried
    ]
    parts = []
    for index, name in enumerate(methods):
        stderr = errors[name]
        if name == "pooled":
            stderr = pl.when(total > count).then(stderr)
        aggregated = present.group_by(group_keys, maintain_order=True).agg(
            pl.col("n").sum(),
            *(pl.col(c).sum() for c in summed),
            *common,
            value=values[name],
            stderr=pl.when(pl.col("stderr").null_count() == 0).then(stderr),
            n_tasks=pl.len(),
            __prefix=pl.col("__prefix").unique().sort().str.join(""),
            __base=pl.col("__base").first(),
        )
        parts.append(
            aggregated.with_columns(
                method=pl.lit(name), __row=pl.int_range(pl.len()), __method=pl.lit(index)
            )
        )
    order = {name: i for i, name in enumerate(groups)}
    result = (
        pl.concat(parts, how="vertical_relaxed")
        .with_columns(__order=pl.col(_GROUP).replace_strict(order, return_dtype=pl.Int64))
        .sort("__order", "__row", "__method")
    )
    result = result.with_columns(signature=_signature(ci))
    bounds = [_bounds(row) for row in result.select("metric", "signature").iter_rows()]
    low = pl.Series([b[0] for b in bounds], dtype=pl.Float64)
    high = pl.Series([b[1] for b in bounds], dtype=pl.Float64)
    result = result.with_columns(
        # the normal interval, clipped to the metric's bounds (a group of accuracies stays
        # in [0, 1])
        ci_low=pl.max_horizontal(pl.col("value") - z * pl.col("stderr"), pl.lit(low)),
        ci_high=pl.min_horizontal(pl.col("value") + z * pl.col("stderr"), pl.lit(high)),
    ).rename({_GROUP: task})
    columns = [
        *(c for c in table.columns if c not in _ADDED),
        *(c for c in _STANDARD if c not in table.columns),
    ]
    selected = []
    for column in columns:
        expr = pl.col(column) if column in result.columns else pl.lit(None)
        if column in table.columns and column != task:
            expr = expr.cast(table.schema[column])
        selected.append(expr.alias(column))
    return result.select(*selected, *_ADDED)


def _bounds(row: tuple[object, object]) -> tuple[float, float]:
    """The metric's bounds, from its signature (``metric:NAME``) or its column name."""
    from evalframe.metrics.registry import resolve

    metric, text = row
    names = [part[len("metric:"):] for part in str(text or "").split("|")
             if part.startswith("metric:")]
    for name in [*names, str(metric)]:
        try:
            return resolve(name)[0].bounds
        except EvalframeError:
            continue
    return (-math.inf, math.inf)


def _inferred_ci(present: pl.DataFrame) -> float:
    if "signature" not in present.columns:
        return 0.95
    levels = (
        present.select(pl.col("signature").str.extract(_CI, 1).drop_nulls().unique())
        .to_series()
        .to_list()
    )
    if len(levels) > 1:
        raise EvalframeError(
            f"group_tasks: the subtasks' intervals have different levels {sorted(levels)}; "
            "pass ci="
        )
    return float(levels[0]) if levels else 0.95


def _signature(ci: float) -> pl.Expr:
    """``group:<name>|method:<m>|`` + inner groups' prefixes + the parts' signature.

    The parts' ``ci`` pair becomes ``ci:normal-<ci>`` (a group's interval is normal).
    """
    prefix = pl.concat_str(
        pl.lit("group:"), pl.col(_GROUP), pl.lit("|method:"), pl.col("method"), pl.lit("|"),
        pl.col("__prefix"),
    )
    base = pl.col("__base").str.replace(r"(^|\|)ci:[^|]*", f"${{1}}ci:normal-{ci:g}")
    return pl.concat_str(prefix, base.fill_null(pl.lit(str(Signature(())))))
