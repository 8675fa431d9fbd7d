"""Paired comparisons of models evaluated on the same items: :func:`compare`.

Two models scored on the same items are compared item by item: rows are matched on
the ``on`` key(s) within each ``by`` group, and every test works on the matched pairs,
so the variation shared by both models (easy and hard items) cancels out. Items that
one model has and the other lacks are counted (``n_unmatched_model``,
``n_unmatched_baseline``), pairs with a null score on either side are counted
(``n_null_pairs``); neither is ever dropped silently.

Methods (``method=``, resolved per metric column and written in the ``method`` column):

- ``"paired"`` (sample metrics): the differences ``d_i = x_i - y_i``; ``stderr`` is
  :func:`~evalframe.stats.stderr.mean_stderr` of ``d`` (or, with ``cluster=``,
  :func:`~evalframe.stats.stderr.clustered_stderr`); the interval is
  ``diff -/+ t * stderr`` and the p-value two-sided, with Student's t on ``n - 1``
  degrees of freedom (``C - 1`` with ``C`` clusters): exact for normal differences and
  a little wider than the normal interval for small ``n``, equal to it for large ``n``.
- ``"mcnemar"`` (sample metrics whose every value is 0 or 1): the p-value of McNemar's
  exact test, a binomial test of the discordant pairs (``b``: model right and
  baseline wrong, ``c``: the reverse), ``min(1, 2 * P(Binom(b + c, 1/2) <= min(b, c)))``
  (``scipy.stats.binomtest(b, b + c, 0.5)``, statsmodels' ``mcnemar(exact=True)``);
  1 when there is no discordant pair. The interval stays the paired-t one.
- ``"bootstrap"``: a paired bootstrap: each of ``bootstrap`` replicates resamples the
  matched items with replacement, once, and applies the draw to both models, so the
  replicate difference keeps the pairing. ``stderr`` is the standard deviation of the
  replicate differences (``ddof=1``), the interval their percentiles, and the p-value
  ``min(1, 2 * min(1 + #{diff* <= 0}, 1 + #{diff* >= 0}) / (B + 1))``: the smallest
  level at which the percentile interval excludes 0, with the ``+1`` rule that keeps it
  at least ``2 / (B + 1)`` (a finite bootstrap cannot prove a smaller one). Sums
  reductions draw row weights (``np.bincount``) applied to both sides' fields, Table
  reductions draw the joint (model cell, baseline cell) table multinomially (exactly a
  row resampling); with ``cluster=`` whole clusters are resampled.
- ``"randomization"``: approximate randomisation (sacrebleu's ``paired_ar``): each of
  ``B`` trials swaps the two sides of every pair with probability 1/2;
  ``p = (1 + #{|diff*| >= |diff|}) / (B + 1)``. (sacrebleu counts ``diff* > diff``,
  which gives a model compared with itself ``p = 1 / (B + 1)``; here it gets 1.) For
  Table reductions, the pairs swapped within each joint cell are drawn binomially (the
  same distribution, without a draw per row). The interval and ``stderr`` are the
  paired-t ones for sample metrics, the paired bootstrap's for corpus metrics.
- ``"auto"`` (default): ``"mcnemar"`` for 0/1 sample metrics (a ``Boolean`` column, or
  every non-null value 0 or 1 over the whole column) whose pairs are not clustered,
  ``"paired"`` for other sample metrics (clustered pairs included: McNemar and
  randomisation treat pairs as independent, and are refused on clustered pairs),
  ``"bootstrap"`` for corpus metrics.

Randomness comes from ``numpy.random.default_rng(seed)`` afresh for every group, metric
and procedure, so one comparison does not depend on which others are in the table.
``value_model`` and ``value_baseline`` are the metric on the matched, non-null pairs
only, so that ``diff`` compares like with like (they differ from :func:`aggregate
<evalframe.stats.aggregate.aggregate>`'s values when items are unmatched or null).

Multiple comparisons: ``correction="holm"`` (Holm's step-down) or ``"bh"``
(Benjamini-Hochberg) adds ``p_adjusted``, adjusting the p-values of every row of one
metric together (all ``by`` groups and models; each metric is its own family, as its
rows answer one question), as ``statsmodels.stats.multitest.multipletests`` with
``method="holm"`` / ``"fdr_bh"``. Null p-values are left out of the family.

The tests and the corrections are registered here, beside their functions, in
:data:`~evalframe.stats.methods.COMPARISON_TESTS` and
:data:`~evalframe.stats.methods.CORRECTION_METHODS`: what ``compare`` accepts, dispatches
on and lists.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import polars as pl

from evalframe._progress import shows_progress
from evalframe.errors import EvalframeError, OptionError, without_plan
from evalframe.io.load import Source, scan
from evalframe.metrics.reduce import Sums, Table
from evalframe.stats import intervals
from evalframe.stats.aggregate import group_keys
from evalframe.stats.bootstrap import (
    BLOCK,
    bootstrap_clusters,
    bootstrap_sums,
    bootstrap_table,
    replicate_stderr,
)
from evalframe.stats.columns import MetricColumn, apply_missing, find_columns, recorded_in
from evalframe.stats.methods import (
    COMPARISON_TESTS,
    CORRECTION_METHODS,
    ComparisonTest,
    CorrectionMethod,
    check_method,
    either,
)
from evalframe.stats.missing import check_policy
from evalframe.stats.options import check_level, check_replicates, check_seed
from evalframe.stats.signature import Signature, metric_pairs
from evalframe.stats.stderr import clustered_stderr_expr

#: Columns of the comparison table after the ``by`` keys (``p_adjusted`` follows
#: ``p_value`` when a correction is asked for).
COMPARE_COLUMNS = (
    "model",
    "baseline",
    "metric",
    "n_pairs",
    "n_null_pairs",
    "n_unmatched_model",
    "n_unmatched_baseline",
    "value_model",
    "value_baseline",
    "diff",
    "stderr",
    "ci_low",
    "ci_high",
    "p_value",
    "correlation",
    "method",
    "signature",
)

_MODEL = "__ef_model"
_ORDER = "__ef_model_order"
_IN_M = "__ef_in_model"
_IN_B = "__ef_in_baseline"
_CLUSTER = "__ef_cluster"
_CLUSTER_B = "__ef_cluster_baseline"
_X, _Y, _D = "__ef_x", "__ef_y", "__ef_d"

_STATS = ("value_model", "value_baseline", "diff", "stderr", "ci_low", "ci_high", "p_value",
          "correlation")


@shows_progress("comparing")
def compare(
    scored: Source,
    *,
    baseline: Any,
    model: str = "model",
    by: str | Sequence[str] | None = None,
    on: str | Sequence[str] = "sample_id",
    metrics: Sequence[str] | Mapping[str, str | None] | None = None,
    cluster: str | bool | None = None,
    ci: float = 0.95,
    method: str = "auto",
    bootstrap: int = 1000,
    seed: int = 0,
    correction: str | None = None,
    missing: str = "wrong",
    columns: Mapping[str, str] | None = None,
) -> pl.DataFrame:
    """Compare every model with ``baseline`` on the same items: paired differences.

    One row per ``by`` group x model (other than the baseline) x metric column:
    the ``by`` keys, ``model``, ``baseline``, ``metric``, ``n_pairs`` (matched items
    with a score on both sides), ``n_null_pairs`` (matched items with a null on either
    side), ``n_unmatched_model`` / ``n_unmatched_baseline`` (items only that side has),
    ``value_model`` / ``value_baseline`` (the metric over the pairs), ``diff`` (model
    minus baseline), ``stderr``, ``ci_low`` / ``ci_high``, ``p_value`` (two-sided, H0:
    no difference), ``p_adjusted`` (with ``correction``), ``correlation`` (Pearson's r
    of the paired scores of a sample metric; null when undefined, and for corpus
    metrics), ``method`` and ``signature``. The methods are described in
    :mod:`evalframe.stats.compare`. With fewer than two pairs (clusters), ``stderr``,
    the interval and the paired-t / bootstrap p-value are null.

    Parameters
    ----------
    scored
        A scored frame (DataFrame or LazyFrame) in long form, one row per model and
        item, or scored files (a path, glob or list of paths).
    baseline
        The value of the ``model`` column every other model is compared with.
    model
        The column naming the model of each row.
    by
        Grouping column(s) (e.g. ``"task"``): each group is compared on its own, and
        rows are matched within it.
    on
        The column(s) identifying an item within a group; each model must have at most
        one row per item (a repeated key is an error).
    metrics
        The columns to compare (default: every metric column, as in ``aggregate``), or a
        mapping column -> metric request for aliased columns.
    cluster
        A column grouping items that are not independent (several questions on one
        passage, several samples of one question): the paired stderr is clustered, the
        bootstrap resamples whole clusters. It must have the same value on both sides
        of a pair. ``None`` (default) clusters as :func:`evalframe.aggregate` does: on the
        ``cluster`` column if there is one, else on ``sample_id`` when it repeats within
        a model and group (items keyed ``on=["sample_id", "repeat"]``); ``False`` never.
        Clustered pairs are compared by the clustered paired test (``auto`` never picks
        McNemar, which treats every pair as independent and, with 5 samples a question,
        rejects about 10% of equal models at 0.05).
    ci
        Confidence level of the interval.
    method
        ``"auto"``, ``"paired"``, ``"mcnemar"``, ``"bootstrap"`` or ``"randomization"``:
        the tests of :data:`evalframe.stats.COMPARISON_TESTS`.
    bootstrap, seed
        Replicates (or randomisation trials) and seed of the bootstrap and randomisation.
    correction
        None, ``"holm"`` or ``"bh"`` (:data:`evalframe.stats.CORRECTION_METHODS`): adds
        ``p_adjusted``, per metric over every row.
    missing
        What a missing answer (a null prediction with its gold present) of a sample
        metric counts as, as in :func:`evalframe.aggregate`: ``"wrong"`` (default: the
        metric's worst score, so the model loses that pair), ``"exclude"`` (left out,
        counted in ``n_null_pairs``) or ``"error"``.
    columns
        The role -> column mapping ``score`` used, to find the answer and gold columns
        (recorded by ``evalframe score`` in its parquet files).

    Returns
    -------
    polars.DataFrame
        Sorted by the ``by`` keys, then the models in order of first appearance, then
        the metrics.

    Examples
    --------
    Four items; model ``new`` fixes items 2 and 3 and gives no answer to item 4, a missing
    answer, wrong by default: it loses that pair. McNemar's exact test on ``b = 2`` and
    ``c = 1`` discordant pairs: ``2 * P(Binom(3, 1/2) <= 1) = 2 * (1 + 3) / 8 = 1``; the
    difference is ``3/4 - 2/4``.

    >>> import polars as pl, evalframe as ef
    >>> runs = pl.DataFrame({
    ...     "model": ["old"] * 4 + ["new"] * 4,
    ...     "sample_id": [1, 2, 3, 4] * 2,
    ...     "prediction": ["a", "x", "x", "d", "a", "b", "c", None],
    ...     "gold": ["a", "b", "c", "d"] * 2,
    ... })
    >>> compare(ef.score(runs, ["exact_match"]), baseline="old").select(
    ...     "model", "n_pairs", "n_null_pairs", "diff", "p_value", "method")
    shape: (1, 6)
    ┌───────┬─────────┬──────────────┬──────┬─────────┬─────────┐
    │ model ┆ n_pairs ┆ n_null_pairs ┆ diff ┆ p_value ┆ method  │
    │ ---   ┆ ---     ┆ ---          ┆ ---  ┆ ---     ┆ ---     │
    │ str   ┆ u32     ┆ u32          ┆ f64  ┆ f64     ┆ str     │
    ╞═══════╪═════════╪══════════════╪══════╪═════════╪═════════╡
    │ new   ┆ 4       ┆ 0            ┆ 0.25 ┆ 1.0     ┆ mcnemar │
    └───────┴─────────┴──────────────┴──────┴─────────┴─────────┘
    """
    check_options(
        ci=ci, method=method, bootstrap=bootstrap, seed=seed, correction=correction,
        missing=missing,
    )
    recorded, recorded_roles = recorded_in(scored)
    frame = scan(scored)
    schema = frame.collect_schema()
    keys, items = _keys(schema, model, by, on, cluster if isinstance(cluster, str) else None)
    on_keys = [on] if isinstance(on, str) else list(dict.fromkeys(on))
    pair_keys = [*keys, *items]
    found = find_columns(
        frame, metrics, columns=columns, recorded=recorded, recorded_roles=recorded_roles
    )
    chosen = found.columns
    cluster = _cluster_column(frame, schema, model, keys, items, cluster, found.mapping)
    used = {model, *pair_keys, *([cluster] if cluster else [])}
    chosen = [column for column in chosen if column.column not in used]
    if not chosen:
        raise EvalframeError(
            "no metric columns to compare: name them with metrics=[...] or score the frame first"
        )
    kept = [model, *pair_keys, *([cluster] if cluster and cluster not in pair_keys else [])]
    frame = apply_missing(frame, chosen, missing)
    try:
        data = frame.select(*kept, *(c.column for c in chosen)).collect()
    except pl.exceptions.PolarsError as error:
        text = without_plan(error).strip()
        raise EvalframeError(
            f"cannot compare: {text.splitlines()[0] if text else type(error).__name__}"
        ) from error
    models = _models(data, model, baseline)
    _check_unique(data, model, pair_keys)
    methods = [_resolve(column, method, data, clustered=cluster is not None) for column in chosen]
    pairs = _pairs(data, model, baseline, models, pair_keys, chosen, cluster)
    group_keys = [_MODEL, *keys]
    groups = pairs.group_by(group_keys, maintain_order=True).agg(
        n_unmatched_model=(pl.col(_IN_M) & ~pl.col(_IN_B)).sum().cast(pl.UInt32),
        n_unmatched_baseline=(~pl.col(_IN_M) & pl.col(_IN_B)).sum().cast(pl.UInt32),
    )
    matched = pairs.filter(pl.col(_IN_M) & pl.col(_IN_B))
    tables = []
    for i, (column, resolved) in enumerate(zip(chosen, methods, strict=True)):
        table = _compare_metric(
            matched, group_keys, i, column, resolved, cluster is not None, ci, bootstrap, seed
        )
        text = _signature(
            column, resolved, on_keys, cluster, ci, bootstrap, seed, correction,
            _missing_label(column, missing),
        )
        tables.append(
            groups.join(table, on=group_keys, how="left", nulls_equal=True, maintain_order="left")
            .with_columns(
                pl.col("n_pairs", "n_null_pairs").fill_null(0),
                metric=pl.lit(column.column),
                method=pl.lit(resolved),
                signature=pl.lit(text),
                __ef_metric_order=pl.lit(i),
            )
        )
    result = pl.concat(tables, how="vertical_relaxed")
    order = {value: i for i, value in enumerate(models)}
    result = result.with_columns(
        pl.col(_MODEL).replace_strict(order, return_dtype=pl.Int64).alias(_ORDER)
    ).sort([*keys, _ORDER, "__ef_metric_order"], nulls_last=True, maintain_order=True)
    result = result.with_columns(
        pl.col(_MODEL).alias("model"),
        pl.lit(baseline, dtype=schema[model]).alias("baseline"),
    )
    names = list(COMPARE_COLUMNS)
    if correction is not None:
        result = result.with_columns(p_adjusted=_adjust(result, correction))
        names.insert(names.index("p_value") + 1, "p_adjusted")
    return result.select(*keys, *names)


def _missing_label(column: MetricColumn, missing: str) -> str:
    """The missing-answer policy that made a column's numbers, as the signature says it."""
    if not column.missing_known:
        return "unknown"
    return missing if column.level == "sample" else "exclude"


# --- validation -------------------------------------------------------------------------


def check_options(
    *,
    ci: float = 0.95,
    method: str = "auto",
    bootstrap: int = 1000,
    seed: int = 0,
    correction: str | None = None,
    missing: str = "wrong",
) -> None:
    """Check the options of :func:`compare` that do not depend on the data.

    ``compare`` checks them first; a caller can check them before it reads any input.
    Raises :class:`~evalframe.errors.OptionError`.

    >>> check_options(method="mcnemr")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    evalframe.errors.OptionError: method='mcnemr' is unknown; did you mean 'mcnemar'? ...
    """
    check_level(ci)
    check_method(COMPARISON_TESTS, method, "method", verb="is unknown")
    check_replicates(bootstrap)
    check_seed(seed)
    if correction is not None:
        check_method(CORRECTION_METHODS, correction, "correction", verb="is unknown",
                     optional=True)
    check_policy(missing)


def _keys(
    schema: Mapping[str, pl.DataType],
    model: str,
    by: str | Sequence[str] | None,
    on: str | Sequence[str],
    cluster: str | None,
) -> tuple[list[str], list[str]]:
    """(by keys, item keys not among them), checked against the frame's columns."""
    if not isinstance(model, str):
        raise EvalframeError(f"model={model!r}: expected the name of the model column (a str)")
    keys = group_keys(by)
    if isinstance(on, str):
        on = [on]
    if (
        not isinstance(on, Sequence)
        or not on
        or not all(isinstance(key, str) for key in on)
    ):
        raise EvalframeError(f"on={on!r}: expected a column name or a non-empty list of them")
    items = [key for key in dict.fromkeys(on) if key not in keys]
    named = {"model": [model], "by": keys, "on": list(on)}
    if cluster is not None:
        if not isinstance(cluster, str):
            raise EvalframeError(f"cluster={cluster!r}: expected a column name (a str)")
        named["cluster"] = [cluster]
    for role, columns in named.items():
        missing = [column for column in columns if column not in schema]
        if missing:
            raise OptionError(
                f"{role}={columns if role in ('by', 'on') else columns[0]!r}: no column "
                f"{missing[0]!r} in the frame; available: {list(schema)}",
                option=role, value=missing, clause=False,
                problem=f"no such column(s); available: {', '.join(schema)}",
            )
    if model in keys or model in on:
        raise EvalframeError(
            f"the model column {model!r} cannot also be a by or on key: rows of different "
            "models are matched on the keys"
        )
    clashing = [key for key in keys if key in COMPARE_COLUMNS or key == "p_adjusted"]
    if clashing:
        raise EvalframeError(
            f"cannot group by {clashing}: the comparison table has column(s) of that name; "
            f"rename the column(s) first, e.g. frame.rename({{{clashing[0]!r}: "
            f"{clashing[0] + '_group'!r}}})"
        )
    return keys, items


def _models(data: pl.DataFrame, model: str, baseline: Any) -> list[Any]:
    column = data[model]
    if column.null_count():
        first = int(column.is_null().arg_max())
        raise EvalframeError(
            f"model column {model!r} has {column.null_count()} null value(s) (first at row "
            f"{first}); every row must name its model"
        )
    models = column.unique(maintain_order=True).to_list()
    if baseline not in models:
        raise EvalframeError(
            f"baseline={baseline!r} is not a value of the model column {model!r}; present: "
            f"{models}"
        )
    others = [value for value in models if value != baseline]
    if not others:
        raise EvalframeError(
            f"the model column {model!r} has only the baseline {baseline!r}: nothing to "
            "compare it with"
        )
    return others


def _check_unique(data: pl.DataFrame, model: str, keys: list[str]) -> None:
    repeated = data.select(model, *keys).filter(pl.len().over([model, *keys]) > 1)
    if repeated.height:
        row = repeated.row(0, named=True)
        count = repeated.filter(
            pl.all_horizontal(pl.col(k).eq_missing(row[k]) for k in [model, *keys])
        ).height
        values = ", ".join(f"{key}={row[key]!r}" for key in keys)
        raise EvalframeError(
            f"model {row[model]!r} has {count} rows for the item ({values}); pairing needs at "
            f"most one row per model and item: make the keys {keys} unique (add a sample "
            "index to on=, or average the samples first)"
        )


def _is_binary(data: pl.DataFrame, column: str) -> tuple[bool, Any]:
    """Whether every non-null value is 0 or 1, and the first value that is not."""
    values = data[column]
    if values.dtype == pl.Boolean:
        return True, None
    bad = values.filter(values.is_not_null() & ~values.cast(pl.Float64).is_in([0.0, 1.0]))
    return bad.len() == 0, bad[0] if bad.len() else None


def _cluster_column(
    frame: pl.LazyFrame,
    schema: Mapping[str, pl.DataType],
    model: str,
    keys: list[str],
    items: list[str],
    cluster: str | bool | None,
    mapping: Mapping[str, str],
) -> str | None:
    """The column to cluster on, found as ``aggregate`` finds it (see :func:`compare`)."""
    if cluster is False:
        return None
    if isinstance(cluster, str):
        return cluster
    if cluster not in (None, True):
        raise EvalframeError(f"cluster={cluster!r}: expected a column name, None or False")
    taken = {model, *keys}
    role_column = mapping.get("cluster", "cluster")
    if role_column in schema and role_column not in taken:
        return role_column
    sample_id = mapping.get("sample_id", "sample_id")
    if sample_id in schema and sample_id not in taken and items != [sample_id]:
        repeats = (
            frame.group_by([model, *keys])
            .agg(repeat=pl.col(sample_id).n_unique() < pl.len())
            .select(pl.col("repeat").any())
            .collect()
            .item()
        )
        if repeats:
            return sample_id
    if cluster is True:
        raise EvalframeError(
            "clustering was asked for, but there is no 'cluster' column and 'sample_id' "
            "does not repeat within a model and group; name the column with cluster='...'"
        )
    return None


def _choose(level: str, clustered: bool, is_binary) -> str:
    """``auto``: the test for a metric column, by its level and scores (``is_binary()``)."""
    if level == "corpus":
        return "bootstrap"
    if clustered:
        return "paired"
    return "mcnemar" if is_binary() else "paired"


COMPARISON_TESTS.add(ComparisonTest(
    name="auto",
    function=_choose,
    description="mcnemar for 0/1 sample metrics with independent pairs, paired for other "
    "sample metrics, bootstrap for corpus metrics",
    automatic=True,
))


def _resolve(column: MetricColumn, method: str, data: pl.DataFrame, *, clustered: bool) -> str:
    """The test that compares ``column``: ``method``, checked against the column, or the
    one an automatic method picks."""
    test = COMPARISON_TESTS[method]
    if test.automatic:
        return test.function(
            column.level, clustered, lambda: _is_binary(data, column.column)[0]
        )
    if column.level not in test.levels:
        fitting = [t.name for t in COMPARISON_TESTS.entries() if column.level in t.levels]
        why = " (its score is not a mean of row scores)" if column.level == "corpus" else ""
        raise EvalframeError(
            f"metric column {column.column!r} is a {column.level} metric{why}: "
            f"method={method!r} does not apply; use "
            f"{' or '.join(repr(name) for name in fitting)} (or choose the columns with "
            "metrics=[...])"
        )
    if column.level == "sample" and test.independent and clustered:
        fitting = [t.name for t in COMPARISON_TESTS.entries()
                   if "sample" in t.levels and not t.independent]
        raise EvalframeError(
            f"method={method!r} treats every pair as independent, but the pairs of "
            f"{column.column!r} are clustered (several rows per question): it would reject "
            f"too often. Use {either(fitting)} (clustered), or cluster=False if the rows are "
            "independent"
        )
    if test.binary:
        binary, first = _is_binary(data, column.column)
        if not binary:
            fitting = [t.name for t in COMPARISON_TESTS.entries()
                       if column.level in t.levels and not t.binary and not t.automatic]
            raise EvalframeError(
                f"method={method!r} needs 0/1 scores; metric column {column.column!r} has the "
                f"value {first!r}; use {either(fitting)}"
            )
    return test.name


# --- pairing ----------------------------------------------------------------------------


def _pairs(
    data: pl.DataFrame,
    model: str,
    baseline: Any,
    models: list[Any],
    keys: list[str],
    chosen: list[MetricColumn],
    cluster: str | None,
) -> pl.DataFrame:
    """Every model's rows full-joined with the baseline's on the keys (``__m{i}``, ``__b{i}``)."""
    is_baseline = data[model] == baseline
    side_cluster = cluster is not None and cluster not in keys
    model_rows = data.filter(~is_baseline).select(
        pl.col(model).alias(_MODEL),
        *keys,
        *([pl.col(cluster).alias(_CLUSTER)] if side_cluster else []),
        *(pl.col(c.column).alias(f"__m{i}") for i, c in enumerate(chosen)),
        pl.lit(True).alias(_IN_M),
    )
    baseline_rows = data.filter(is_baseline).select(
        *keys,
        *([pl.col(cluster).alias(_CLUSTER_B)] if side_cluster else []),
        *(pl.col(c.column).alias(f"__b{i}") for i, c in enumerate(chosen)),
        pl.lit(True).alias(_IN_B),
    )
    names = pl.DataFrame({_MODEL: pl.Series(models, dtype=data.schema[model])})
    pairs = model_rows.join(
        names.join(baseline_rows, how="cross"),
        on=[_MODEL, *keys],
        how="full",
        coalesce=True,
        nulls_equal=True,
        maintain_order="left_right",
    ).with_columns(pl.col(_IN_M, _IN_B).fill_null(False))
    if cluster is None:
        return pairs
    if not side_cluster:
        return pairs.with_columns(pl.col(cluster).alias(_CLUSTER))
    differ = pairs.filter(
        pl.col(_IN_M) & pl.col(_IN_B) & pl.col(_CLUSTER).ne_missing(pl.col(_CLUSTER_B))
    )
    if differ.height:
        row = differ.row(0, named=True)
        values = ", ".join(f"{key}={row[key]!r}" for key in keys)
        raise EvalframeError(
            f"cluster column {cluster!r} differs between the sides of the item ({values}): "
            f"{row[_CLUSTER]!r} for model {row[_MODEL]!r}, {row[_CLUSTER_B]!r} for the "
            "baseline; a pair must lie in one cluster"
        )
    return pairs


# --- one metric -------------------------------------------------------------------------


def _diff_bounds(column: MetricColumn, present: pl.DataFrame) -> tuple[float, float]:
    """Where a difference of two scores can lie: ``[lo - hi, hi - lo]`` for bounds [lo, hi].

    A column that is not a metric's has no known bounds, unless its scores are 0 or 1.
    """
    if column.request is None:
        binary = present.select(
            pl.all_horizontal(pl.col(_X, _Y).is_in([0.0, 1.0]).all())
        ).item()
        return (-1.0, 1.0) if binary else (-math.inf, math.inf)
    low, high = column.request.spec.bounds
    return (low - high, high - low)


def _compare_metric(
    matched: pl.DataFrame,
    group_keys: list[str],
    i: int,
    column: MetricColumn,
    method: str,
    clustered: bool,
    ci: float,
    bootstrap: int,
    seed: int,
) -> pl.DataFrame:
    x, y = pl.col(f"__m{i}"), pl.col(f"__b{i}")
    valid = x.is_not_null() & y.is_not_null()
    counts = matched.group_by(group_keys, maintain_order=True).agg(
        n_pairs=valid.sum().cast(pl.UInt32), n_null_pairs=(~valid).sum().cast(pl.UInt32)
    )
    present = matched.filter(valid).select(
        *group_keys,
        x.alias(_X),
        y.alias(_Y),
        *([pl.col(_CLUSTER)] if clustered else []),
    )
    if column.level == "sample":
        present = present.with_columns(pl.col(_X, _Y).cast(pl.Float64)).with_columns(
            (pl.col(_X) - pl.col(_Y)).alias(_D)
        )
        bounds = _diff_bounds(column, present)
        stats = _sample_stats(present, group_keys, method, clustered, ci, bounds)
        if COMPARISON_TESTS[method].resamples:
            stats = _resampled(present, group_keys, stats, column, method, clustered, ci,
                               bootstrap, seed)
    else:
        stats = _resampled(present, group_keys, None, column, method, clustered, ci,
                           bootstrap, seed)
    return counts.join(stats, on=group_keys, how="left", nulls_equal=True)


def _sample_stats(
    present: pl.DataFrame,
    group_keys: list[str],
    method: str,
    clustered: bool,
    ci: float,
    bounds: tuple[float, float],
) -> pl.DataFrame:
    """Paired-t statistics of every group at once (and McNemar's exact p-value)."""
    x, y = pl.col(_X), pl.col(_Y)
    summary = present.group_by(group_keys, maintain_order=True).agg(
        n=pl.len(),
        value_model=x.mean(),
        value_baseline=y.mean(),
        sd=pl.col(_D).std(ddof=1),
        correlation=pl.corr(x, y),
        discordant_b=((x == 1) & (y == 0)).sum(),
        discordant_c=((x == 0) & (y == 1)).sum(),
    )
    if clustered:
        clusters = clustered_stderr_expr(present.lazy(), group_keys, _D, _CLUSTER).collect()
        summary = summary.join(
            clusters.select(*group_keys, "n_clusters", "stderr"),
            on=group_keys, how="left", nulls_equal=True,
        ).with_columns(dof=pl.col("n_clusters").cast(pl.Float64) - 1)
    else:
        summary = summary.with_columns(
            stderr=pl.col("sd") / pl.col("n").cast(pl.Float64).sqrt(),
            dof=pl.col("n").cast(pl.Float64) - 1,
        )
    diff = (summary["value_model"] - summary["value_baseline"]).to_numpy()
    stderr = summary["stderr"].cast(pl.Float64).fill_null(math.nan).to_numpy()
    dof = summary["dof"].to_numpy()
    low, high = intervals.t_interval(diff, stderr, dof, ci, bounds)
    paired = {
        "diff": diff, "stderr": stderr, "dof": dof,
        "b": summary["discordant_b"].to_numpy(), "c": summary["discordant_c"].to_numpy(),
    }
    # a closed-form test's p-value; a resampling test replaces the paired-t one later
    test = COMPARISON_TESTS[method]
    p = _paired_t(paired) if test.resamples else test.function(paired)
    return summary.select(
        *group_keys,
        "value_model",
        "value_baseline",
        diff=pl.Series(diff),
        stderr=pl.Series(stderr, nan_to_null=True),
        ci_low=pl.Series(low, nan_to_null=True),
        ci_high=pl.Series(high, nan_to_null=True),
        p_value=pl.Series(p, nan_to_null=True),
        correlation=pl.col("correlation").fill_nan(None),
    )


def _t_p_value(diff: np.ndarray, stderr: np.ndarray, dof: np.ndarray) -> np.ndarray:
    """Two-sided Student-t p-value of ``diff / stderr``; NaN where ``stderr`` is undefined.

    A zero ``stderr`` (every pair differs by the same amount) gives 1 for no difference,
    0 otherwise.
    """
    from scipy import stats as st

    ok = np.isfinite(stderr) & (dof >= 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = 2 * st.t.sf(np.abs(diff) / stderr, np.where(ok, dof, 1.0))
    p = np.where(stderr == 0, np.where(diff == 0, 1.0, 0.0), p)
    return np.where(ok, p, math.nan)


def _paired_t(paired: Mapping[str, np.ndarray]) -> np.ndarray:
    return _t_p_value(paired["diff"], paired["stderr"], paired["dof"])


COMPARISON_TESTS.add(ComparisonTest(
    name="paired",
    function=_paired_t,
    description="the paired t-test of the differences, with a clustered standard error "
    "when clustered (sample metrics)",
    reference="scipy.stats.ttest_rel",
    levels=("sample",),
))


def mcnemar_exact(b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """McNemar's exact two-sided p-value from the discordant counts ``b`` and ``c``.

    ``min(1, 2 * P(Binom(b + c, 1/2) <= min(b, c)))``, vectorised: the same as
    ``scipy.stats.binomtest(b, b + c, 0.5).pvalue`` and statsmodels'
    ``mcnemar([[., b], [c, .]], exact=True).pvalue``; 1 when ``b + c = 0``.

    Parameters
    ----------
    b, c
        Discordant pairs: model right and baseline wrong, and the reverse.

    Returns
    -------
    numpy.ndarray
        One p-value per element.

    Examples
    --------
    >>> import numpy as np
    >>> mcnemar_exact(np.array([3, 5, 0]), np.array([0, 5, 0]))
    array([0.25, 1.  , 1.  ])
    """
    from scipy import stats as st

    b = np.asarray(b, dtype=np.int64)
    c = np.asarray(c, dtype=np.int64)
    return np.minimum(1.0, 2.0 * st.binom.cdf(np.minimum(b, c), b + c, 0.5))


def _mcnemar(paired: Mapping[str, np.ndarray]) -> np.ndarray:
    return mcnemar_exact(paired["b"], paired["c"])


COMPARISON_TESTS.add(ComparisonTest(
    name="mcnemar",
    function=_mcnemar,
    description="McNemar's exact test of the discordant pairs, the interval paired-t "
    "(0/1 sample metrics, independent pairs)",
    reference="statsmodels mcnemar(exact=True); scipy.stats.binomtest",
    binary=True,
    levels=("sample",),
    independent=True,
))


# --- resampling (bootstrap, randomisation) ----------------------------------------------


def _resampled(
    present: pl.DataFrame,
    group_keys: list[str],
    sample_stats: pl.DataFrame | None,
    column: MetricColumn,
    method: str,
    clustered: bool,
    ci: float,
    bootstrap: int,
    seed: int,
) -> pl.DataFrame:
    """Per group: the paired bootstrap and/or randomisation test (a loop over groups)."""
    test = COMPARISON_TESTS[method]
    reduction = column.reduction
    if column.level == "sample":
        reduction = _MEAN_SUMS
    cells = None
    if isinstance(reduction, Table):
        present, cells = _cell_ids(present)
    rows = []
    for key, part in present.partition_by(group_keys, as_dict=True, maintain_order=True).items():
        pair = _pair_for(reduction, part, cells)
        clusters = part[_CLUSTER].to_numpy() if clustered else None
        row: dict[str, Any] = dict(zip(group_keys, key, strict=True))
        row.update(stderr=None, ci_low=None, ci_high=None, p_value=None)
        value_model, value_baseline = pair.values()
        row.update(value_model=value_model, value_baseline=value_baseline,
                   diff=value_model - value_baseline)
        # corpus metrics take their stderr and interval from the paired bootstrap
        if column.level == "corpus" and test.function is not _paired_bootstrap:
            row.update(_paired_bootstrap(pair, clusters, bootstrap, seed, ci))
        if test.resamples:
            row.update(test.function(pair, clusters, bootstrap, seed, ci))
        rows.append(row)
    schema = {name: present.schema[name] for name in group_keys}
    schema.update({name: pl.Float64 for name in _STATS if name != "correlation"})
    table = pl.DataFrame(rows, schema=schema)
    for name in ("stderr", "ci_low", "ci_high", "p_value"):
        table = table.with_columns(pl.col(name).fill_nan(None))
    if sample_stats is None:
        return table.with_columns(correlation=pl.lit(None, dtype=pl.Float64))
    # sample metrics: exact means and the correlation from the vectorised pass; the
    # bootstrap replaces the interval, randomisation only the p-value
    replaced = list(test.replaces)
    return sample_stats.drop(replaced).join(
        table.select(*group_keys, *replaced), on=group_keys, how="left", nulls_equal=True
    ).select(*group_keys, *_STATS)


def bootstrap_p_value(replicates: np.ndarray) -> float:
    """Two-sided p-value of H0 ``diff = 0`` from paired-bootstrap replicate differences.

    ``min(1, 2 * min(1 + #{diff* <= 0}, 1 + #{diff* >= 0}) / (B + 1))``: twice the
    smaller tail of the replicates beyond 0, with ``+1`` in both tails so that ``B``
    replicates never claim a p-value below ``2 / (B + 1)``. NaN when a replicate is NaN
    (the metric is undefined on some resample), as the percentile interval.

    Parameters
    ----------
    replicates
        The ``B`` replicate differences (model minus baseline).

    Returns
    -------
    float

    Examples
    --------
    >>> import numpy as np
    >>> bootstrap_p_value(np.array([0.1, 0.2, -0.1, 0.3]))  # 2 * (1 + 1) / 5
    0.8
    >>> bootstrap_p_value(np.zeros(99))
    1.0
    """
    replicates = np.asarray(replicates, dtype=np.float64)
    if np.isnan(replicates).any():
        return math.nan
    total = replicates.size + 1
    below = 1 + int(np.count_nonzero(replicates <= 0))
    above = 1 + int(np.count_nonzero(replicates >= 0))
    return min(1.0, 2.0 * min(below, above) / total)


def _paired_bootstrap(
    pair: _PairedSums | _PairedTable, clusters: np.ndarray | None, replicates: int, seed: int,
    ci: float,
) -> dict[str, float]:
    """The paired bootstrap of one group: stderr, percentile interval and p-value (none
    with fewer than two pairs or clusters)."""
    units = pair.rows if clusters is None else np.unique(clusters).size
    if units < 2:
        return {}
    draws = pair.bootstrap(clusters, replicates, seed)
    low, high = intervals.percentile_interval(draws, ci)
    return {"stderr": replicate_stderr(draws), "ci_low": low, "ci_high": high,
            "p_value": bootstrap_p_value(draws)}


COMPARISON_TESTS.add(ComparisonTest(
    name="bootstrap",
    function=_paired_bootstrap,
    description="a paired bootstrap, whole clusters resampled when clustered: stderr, "
    "percentile interval and p-value",
    reference="Koehn 2004; Efron and Tibshirani 1993",
    replaces=("stderr", "ci_low", "ci_high", "p_value"),
))


def randomization_p_value(trials: np.ndarray, observed: float) -> float:
    """``(1 + #{|diff*| >= |diff|}) / (B + 1)``: the approximate-randomisation p-value.

    A relative tolerance of ``1e-12`` counts trials that tie with the observed
    difference up to rounding (a model compared with itself gets 1). NaN when a trial
    is NaN (the metric is undefined on some trial).

    Parameters
    ----------
    trials
        The ``B`` differences with randomly swapped sides.
    observed
        The observed difference.

    Returns
    -------
    float

    Examples
    --------
    >>> import numpy as np
    >>> randomization_p_value(np.array([0.5, -0.2, 0.1, -0.5]), 0.5)  # (1 + 2) / 5
    0.6
    """
    trials = np.asarray(trials, dtype=np.float64)
    if np.isnan(trials).any() or math.isnan(observed):
        return math.nan
    threshold = abs(observed) * (1 - 1e-12)
    return (1 + int(np.count_nonzero(np.abs(trials) >= threshold))) / (trials.size + 1)


def _randomization(
    pair: _PairedSums | _PairedTable, clusters: np.ndarray | None, trials: int, seed: int,
    ci: float,
) -> dict[str, float]:
    """Approximate randomisation of one group: the p-value."""
    observed, differences = pair.randomize(trials, seed)
    return {"p_value": randomization_p_value(differences, observed)}


COMPARISON_TESTS.add(ComparisonTest(
    name="randomization",
    function=_randomization,
    description="approximate randomisation, each pair's sides swapped with probability "
    "1/2: the p-value (independent pairs)",
    reference="sacrebleu paired_ar (Riezler and Maxwell 2005), with the >= rule",
    independent=True,
    replaces=("p_value",),
))


def _mean_formula(sums: Mapping[str, np.ndarray]) -> np.ndarray:
    return np.asarray(sums["score"], dtype=np.float64) / np.asarray(sums["one"])


#: A sample metric, as sums: the mean is ``sum(score) / sum(one)``.
_MEAN_SUMS = Sums("mean", _mean_formula)


def _cell_ids(present: pl.DataFrame) -> tuple[pl.DataFrame, dict[str, np.ndarray]]:
    """Adds ``__ef_a``/``__ef_b``, each side's index among the distinct cells; and the cells."""
    model = present[_X].struct.unnest()
    base = present[_Y].struct.unnest()
    fields = model.columns
    both = pl.concat([model, base])
    # sorted, as aggregate orders them: the same value to the last bit
    cells = both.unique().sort(fields, nulls_last=True).with_row_index("__ef_id")
    ids = both.join(cells, on=fields, how="left", nulls_equal=True, maintain_order="left")[
        "__ef_id"
    ]
    present = present.with_columns(
        __ef_a=ids.head(present.height), __ef_b=ids.tail(present.height)
    )
    return present, {name: cells[name].to_numpy() for name in fields}


class _PairedSums:
    """Both sides' statistics of a Sums reduction on the same ``n`` items."""

    def __init__(self, reduction: Sums, part: pl.DataFrame) -> None:
        self.reduction = reduction
        self.rows = part.height
        if reduction is _MEAN_SUMS:
            model = part.select(score=pl.col(_X), one=pl.lit(1, dtype=pl.Int64))
            base = part.select(score=pl.col(_Y), one=pl.lit(1, dtype=pl.Int64))
        else:
            model, base = part[_X].struct.unnest(), part[_Y].struct.unnest()
        self.fields = model.columns
        self.model_sums = {f: np.array([float(model[f].sum())]) for f in self.fields}
        self.base_sums = {f: np.array([float(base[f].sum())]) for f in self.fields}
        self.model = np.column_stack([model[f].cast(pl.Float64).to_numpy() for f in self.fields])
        self.base = np.column_stack([base[f].cast(pl.Float64).to_numpy() for f in self.fields])

    def _score(self, sums: np.ndarray) -> np.ndarray:
        return np.asarray(
            self.reduction.formula({f: sums[:, j] for j, f in enumerate(self.fields)}),
            dtype=np.float64,
        )

    def values(self) -> tuple[float, float]:
        return (float(self.reduction.formula(self.model_sums)[0]),
                float(self.reduction.formula(self.base_sums)[0]))

    def bootstrap(self, clusters: np.ndarray | None, replicates: int, seed: int) -> np.ndarray:
        width = len(self.fields)
        both = np.hstack([self.model, self.base])
        if clusters is not None:  # a Sums score is a formula of sums: resample cluster sums
            _, index = np.unique(clusters, return_inverse=True)
            per_cluster = np.stack(
                [np.bincount(index, weights=both[:, j]) for j in range(both.shape[1])], axis=1
            )
            weights = bootstrap_clusters(per_cluster.shape[0], replicates, seed)
            sums = weights @ per_cluster
            return self._score(sums[:, :width]) - self._score(sums[:, width:])

        def diff(sums: Mapping[str, np.ndarray]) -> np.ndarray:
            matrix = np.column_stack([sums[str(j)] for j in range(2 * width)])
            return self._score(matrix[:, :width]) - self._score(matrix[:, width:])

        values = {str(j): both[:, j] for j in range(both.shape[1])}
        return bootstrap_sums(Sums("diff", diff), values, replicates=replicates, seed=seed)

    def randomize(self, trials: int, seed: int) -> tuple[float, np.ndarray]:
        """(observed, trial differences): each pair's sides swapped with probability 1/2."""
        rng = np.random.default_rng(seed)
        n = self.model.shape[0]
        model_total, base_total = self.model.sum(axis=0), self.base.sum(axis=0)
        delta = self.base - self.model
        observed = float(
            self._score(model_total[None])[0] - self._score(base_total[None])[0]
        )
        out = np.empty(trials, dtype=np.float64)
        step = max(1, BLOCK // max(n, 1))
        for start in range(0, trials, step):
            stop = min(start + step, trials)
            swap = rng.integers(2, size=(stop - start, n), dtype=bool).astype(np.float64)
            moved = swap @ delta
            out[start:stop] = self._score(model_total + moved) - self._score(base_total - moved)
        return observed, out


class _PairedTable:
    """Both sides' statistics of a Table reduction: a joint (model cell, baseline cell) table.

    The ``J`` joint cells of the pairs are counted once; a table of joint counts (one row
    per replicate) becomes each side's cell counts by summing the joint cells that share
    that side's cell (``np.add.reduceat``: no ``J x cells`` matrix).
    """

    def __init__(
        self, reduction: Table, part: pl.DataFrame, cells: Mapping[str, np.ndarray]
    ) -> None:
        self.reduction = reduction
        self.rows = part.height
        a = part["__ef_a"].to_numpy()
        b = part["__ef_b"].to_numpy()
        ids, local = np.unique(np.concatenate([a, b]), return_inverse=True)
        self.width = ids.size
        codes = local[: a.size] * self.width + local[a.size :]
        joint, self.joint_index, self.counts = np.unique(
            codes, return_inverse=True, return_counts=True
        )
        self.cells = {name: values[ids] for name, values in cells.items()}
        self.model_cell = joint // self.width
        self.base_cell = joint % self.width

    def _side(self, joint_counts: np.ndarray, cell: np.ndarray) -> np.ndarray:
        """Per replicate, the counts of one side's cells (``joint_counts`` is ``m x J``)."""
        order = np.argsort(cell, kind="stable")
        ordered = cell[order]
        starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
        out = np.zeros((joint_counts.shape[0], self.width), dtype=np.int64)
        summed = np.add.reduceat(joint_counts[:, order], starts, axis=1)
        out[:, ordered[starts]] = np.rint(summed).astype(np.int64)
        return out

    def _score(self, counts: np.ndarray) -> np.ndarray:
        return np.asarray(self.reduction.formula(self.cells, counts), dtype=np.float64)

    def _diff(self, joint_counts: np.ndarray) -> np.ndarray:
        return self._score(self._side(joint_counts, self.model_cell)) - self._score(
            self._side(joint_counts, self.base_cell)
        )

    def values(self) -> tuple[float, float]:
        counts = self.counts[None, :]
        return (float(self._score(self._side(counts, self.model_cell))[0]),
                float(self._score(self._side(counts, self.base_cell))[0]))

    def bootstrap(self, clusters: np.ndarray | None, replicates: int, seed: int) -> np.ndarray:
        if clusters is None:  # resampling rows is a multinomial draw of the joint cells
            return bootstrap_table(
                Table("diff", lambda _, counts: self._diff(counts)),
                {"joint": np.arange(self.counts.size)}, self.counts,
                replicates=replicates, seed=seed,
            )
        # resampling clusters (bootstrap_clusters, as aggregate): each row weighs as often
        # as its cluster is drawn; a replicate's joint counts are the weights summed per cell
        _, index = np.unique(clusters, return_inverse=True)
        weights = bootstrap_clusters(int(index.max()) + 1, replicates, seed)
        order = np.argsort(self.joint_index, kind="stable")
        ordered = self.joint_index[order]
        starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
        out = np.empty(replicates, dtype=np.float64)
        step = max(1, BLOCK // index.size)
        for start in range(0, replicates, step):
            rows = weights[start : start + step][:, index[order]]
            joint = np.zeros((rows.shape[0], self.counts.size))
            joint[:, ordered[starts]] = np.add.reduceat(rows, starts, axis=1)
            out[start : start + step] = self._diff(joint)
        return out

    def randomize(self, trials: int, seed: int) -> tuple[float, np.ndarray]:
        """(observed, trial differences); the swapped pairs of a joint cell ~ Binom(count, 1/2)."""
        rng = np.random.default_rng(seed)
        observed = float(self._diff(self.counts[None, :])[0])
        swapped = rng.binomial(self.counts, 0.5, size=(trials, self.counts.size))
        kept = self.counts[None, :] - swapped
        model = self._side(kept, self.model_cell) + self._side(swapped, self.base_cell)
        base = self._side(swapped, self.model_cell) + self._side(kept, self.base_cell)
        return observed, self._score(model) - self._score(base)


def _pair_for(
    reduction: Sums | Table, part: pl.DataFrame, cells: Mapping[str, np.ndarray] | None
) -> _PairedSums | _PairedTable:
    if isinstance(reduction, Table):
        assert cells is not None
        return _PairedTable(reduction, part, cells)
    if isinstance(reduction, Sums):
        return _PairedSums(reduction, part)
    raise EvalframeError(f"corpus reduction {reduction!r} unknown")  # pragma: no cover


# --- multiple comparisons, signature ----------------------------------------------------


def holm(ranked: np.ndarray) -> np.ndarray:
    """Holm's step-down adjustment of ascending p-values: ``(m - j + 1) p_(j)``, made
    non-decreasing by a running maximum (not capped at 1).

    >>> holm(np.array([0.01, 0.03, 0.04]))
    array([0.03, 0.06, 0.06])
    """
    m = ranked.size
    rank = np.arange(1, m + 1)
    return np.maximum.accumulate(ranked * (m - rank + 1))


CORRECTION_METHODS.add(CorrectionMethod(
    name="holm",
    function=holm,
    description="Holm's step-down method (controls the family-wise error rate)",
    reference="statsmodels multipletests(method='holm')",
))


def benjamini_hochberg(ranked: np.ndarray) -> np.ndarray:
    """Benjamini-Hochberg's adjustment of ascending p-values: ``m / j * p_(j)``, made
    non-decreasing from the top by a running minimum (not capped at 1).

    >>> benjamini_hochberg(np.array([0.01, 0.03, 0.04]))
    array([0.03, 0.04, 0.04])
    """
    m = ranked.size
    rank = np.arange(1, m + 1)
    return np.minimum.accumulate((ranked * m / rank)[::-1])[::-1]


CORRECTION_METHODS.add(CorrectionMethod(
    name="bh",
    function=benjamini_hochberg,
    description="Benjamini-Hochberg (controls the false discovery rate)",
    reference="statsmodels multipletests(method='fdr_bh')",
))


def adjust_p_values(p: np.ndarray, correction: str) -> np.ndarray:
    """Holm (``"holm"``) or Benjamini-Hochberg (``"bh"``) adjusted p-values; NaN stays NaN.

    The family is the non-NaN p-values. Holm: sorted ascending, ``(m - j + 1) p_(j)``
    made non-decreasing by a running maximum; BH: ``m / j * p_(j)`` made non-decreasing
    from the top by a running minimum; both capped at 1 (statsmodels'
    ``multipletests(method="holm" / "fdr_bh")``). Any correction of
    :data:`~evalframe.stats.methods.CORRECTION_METHODS` is applied the same way.

    Parameters
    ----------
    p
        P-values.
    correction
        ``"holm"`` or ``"bh"``.

    Returns
    -------
    numpy.ndarray

    Examples
    --------
    >>> import numpy as np
    >>> adjust_p_values(np.array([0.01, 0.04, 0.03, np.nan]), "holm")
    array([0.03, 0.06, 0.06,  nan])
    >>> adjust_p_values(np.array([0.01, 0.04, 0.03]), "bh")
    array([0.03, 0.04, 0.04])
    """
    method = check_method(CORRECTION_METHODS, correction, "correction", verb="is unknown")
    p = np.asarray(p, dtype=np.float64)
    out = np.full(p.shape, math.nan)
    kept = np.flatnonzero(~np.isnan(p))
    if kept.size == 0:
        return out
    order = kept[np.argsort(p[kept], kind="stable")]
    out[order] = np.minimum(method.function(p[order]), 1.0)
    return out


def _adjust(result: pl.DataFrame, correction: str) -> pl.Series:
    adjusted = np.full(result.height, math.nan)
    p = result["p_value"].cast(pl.Float64).fill_null(math.nan).to_numpy()
    metric = result["metric"].to_numpy()
    for name in dict.fromkeys(metric.tolist()):
        rows = np.flatnonzero(metric == name)
        adjusted[rows] = adjust_p_values(p[rows], correction)
    return pl.Series("p_adjusted", adjusted, nan_to_null=True)


def _signature(
    column: MetricColumn,
    method: str,
    items: Sequence[str],
    cluster: str | None,
    ci: float,
    bootstrap: int,
    seed: int,
    correction: str | None,
    missing: str,
) -> str:
    if column.request is None:
        pairs = [("metric", f"column:{column.column}")]
    else:
        pairs = metric_pairs(column.request)
    pairs.append(("reduce", column.reduction.name))
    pairs.append(("missing", missing))
    pairs.append(("method", method))
    test = COMPARISON_TESTS[method]
    # the stderr and interval: the paired bootstrap's where it gives them, else paired-t
    resampled = "stderr" in test.replaces or column.level == "corpus"
    if resampled:
        stderr, interval = "bootstrap", "percentile"
    else:
        stderr, interval = ("clustered" if cluster else "sem"), "t"
    pairs.append(("stderr", stderr))
    if cluster:
        pairs.append(("cluster", cluster))
    if resampled or test.resamples:
        pairs.extend([("B", str(bootstrap)), ("seed", str(seed))])
    pairs.append(("ci", f"{interval}-{ci:g}"))
    pairs.append(("on", "+".join(items)))
    pairs.append(("correction", correction or "none"))
    return str(Signature(tuple(pairs)))


#: The names of the built-in tests and corrections (as :data:`COMPARISON_TESTS` and
#: :data:`CORRECTION_METHODS` list them).
METHODS = tuple(COMPARISON_TESTS.names())
CORRECTIONS = tuple(CORRECTION_METHODS.names())
