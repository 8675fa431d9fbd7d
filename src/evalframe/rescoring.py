"""Re-score a harness dump with evalframe's metrics and compare, row by row, with the harness.

Harness adapters keep each per-sample metric value a harness wrote as ``harness.<metric>``
(``harness.acc``, ``harness.exact_match``). :func:`rescore` scores the dump and, for every
requested metric column, counts the rows where evalframe and the harness agree and lists the
ones where they do not: how a harness metric bug shows (the DROP one, an extraction regex).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import polars as pl

from evalframe.engine import Metrics, collect, prepare_input, score_plan
from evalframe.errors import EvalframeError
from evalframe.io.load import Source
from evalframe.metrics.request import MetricRequest, parse_requests
from evalframe.scored import missing_column

__all__ = ["HARNESS_PREFIX", "Rescore", "harness_column", "rescore"]

#: The prefix adapters give a harness's own per-sample metric values.
HARNESS_PREFIX = "harness."

#: Columns that say which row a difference is on, shown when the dump has them.
KEYS = ("task", "model", "filter", "sample_id", "epoch", "id")


def harness_column(request: MetricRequest) -> str:
    """The harness column a metric request is compared with by default.

    ``harness.<alias>`` when the request names its column (an alias, or the key of a
    mapping), else ``harness.<metric name>``: a request with options and no alias
    (``exact_match(ignore_case=true)``) is the task's own metric with its options.

    >>> from evalframe.metrics.request import parse_request
    >>> [harness_column(parse_request(text)) for text in
    ...  ["acc", "pass@10", "em=drop_em", "exact_match(ignore_case=true)"]]
    ['harness.acc', 'harness.pass@10', 'harness.em', 'harness.exact_match']
    """
    # an alias never holds '(' (the request syntax); a column that does is the request itself
    named = "(" not in request.column
    return HARNESS_PREFIX + (request.column if named else request.name)


@dataclass(frozen=True)
class Rescore:
    """What :func:`rescore` found.

    Attributes
    ----------
    summary
        One row per metric: ``metric`` (the column scored), ``request`` (the metric and its
        options), ``against`` (the harness column it was compared with), ``n`` rows,
        ``n_agree``, ``n_differ``, ``n_null_evalframe`` / ``n_null_harness`` (rows one side
        left null and the other did not: counted in ``n_differ`` too), ``max_abs_difference``.
    differences
        The rows that differ: ``row`` (0-based, in the input), the key columns the dump has
        (task, model, filter, sample_id...), ``metric``, ``evalframe`` and ``harness`` values.
    scored
        The scored input.
    """

    summary: pl.DataFrame
    differences: pl.DataFrame
    scored: pl.DataFrame

    @property
    def agrees(self) -> bool:
        """Whether every row of every metric agrees."""
        return int(self.summary["n_differ"].sum()) == 0


def rescore(
    source: Source,
    metrics: Metrics,
    *,
    against: Mapping[str, str] | None = None,
    tolerance: float = 0.0,
    columns: Mapping[str, str] | None = None,
    **reading: object,
) -> Rescore:
    """Score ``source`` with ``metrics`` and compare each metric with the harness's values.

    Each metric is compared with the harness column :func:`harness_column` names:
    ``harness.<alias>`` for a request with an alias (name a metric as the harness does:
    ``"em=drop_em"``), else ``harness.<metric name>``, options or not
    (``"exact_match(ignore_case=true)"`` with ``harness.exact_match``: the task's own options
    are the usual case); ``against`` maps a metric column to another one
    (``{"squad_em": "harness.em"}``). The summary says which column each was compared with.
    Two values agree when both are null, both NaN, or they
    differ by at most ``tolerance`` (0: bit for bit). Harness booleans read as 1.0 / 0.0. A
    missing answer (a null prediction: scored wrong, see :mod:`evalframe.scored`) agrees with
    the harness's null or with its score.
    ``reading`` takes :func:`evalframe.score`'s reading keywords (``format``, ``gold``,
    ``on``, ``group_by``, ``schema``...).

    >>> import polars as pl
    >>> dump = pl.DataFrame({
    ...     "prediction": ["4", "five", "6"], "gold": ["4", "5", "6 "],
    ...     "harness.exact_match": [1.0, 0.0, 1.0],
    ... })
    >>> found = rescore(dump, ["exact_match"])
    >>> found.summary.select("metric", "n", "n_agree", "n_differ").rows()
    [('exact_match', 3, 2, 1)]
    >>> found.differences.select("row", "evalframe", "harness").rows()
    [(2, 0.0, 1.0)]
    >>> rescore(dump, ["exact_match(ignore_case=true)"]).summary.select(
    ...     "request", "against", "n_agree").rows()
    [('exact_match(ignore_case=true)', 'harness.exact_match', 2)]
    """
    requests = parse_requests(metrics)
    if not isinstance(tolerance, int | float) or not tolerance >= 0:
        raise EvalframeError(f"tolerance={tolerance!r} must be a number >= 0")
    targets = dict(against or {})
    unknown = [name for name in targets if name not in {r.column for r in requests}]
    if unknown:
        raise EvalframeError(
            f"against= names column(s) {unknown} that no requested metric produces; "
            f"requested: {[r.column for r in requests]}"
        )
    frame = prepare_input(source, columns=columns, **reading)  # type: ignore[arg-type]
    schema = frame.collect_schema()
    for request in requests:
        target = targets.setdefault(request.column, harness_column(request))
        if target not in schema:
            stored = [name for name in schema if name.startswith(HARNESS_PREFIX)]
            raise EvalframeError(
                f"the input has no column {target!r} to compare {request.column!r} with; "
                f"harness values in the input: {stored or 'none'} (map one with "
                f"against={{{request.column!r}: ...}} or name the metric as the harness does, "
                f"'{stored[0].removeprefix(HARNESS_PREFIX) if stored else 'name'}=<metric>')"
            )
        if request.spec.level != "sample":
            raise EvalframeError(
                f"{request.column!r} is a corpus-level metric: its rows hold statistics, not "
                "scores; compare its aggregate with the harness's instead"
            )
        if not (schema[target].is_numeric() or schema[target] in (pl.Boolean, pl.Null)):
            raise EvalframeError(
                f"harness column {target!r} is {schema[target]}; expected numbers or booleans"
            )
    scored_plan, _ = score_plan(frame, requests, columns, overwrite=True)
    scored = collect(scored_plan.with_row_index("__row"))
    keys = [name for name in KEYS if name in scored.columns]
    summaries, differences = [], []
    for request in requests:
        mine = pl.col(request.column).cast(pl.Float64)
        theirs = pl.col(targets[request.column]).cast(pl.Float64)
        flag = missing_column(request.column)
        # a missing answer is scored wrong; a harness that left it null says the same
        unanswered = (
            pl.col(flag) & theirs.is_null() if flag in scored.columns else pl.lit(False)
        )
        both_null = (mine.is_null() & theirs.is_null()) | unanswered
        one_null = (mine.is_null() ^ theirs.is_null()) & ~unanswered
        both_nan = mine.is_nan() & theirs.is_nan()
        close = (mine - theirs).abs() <= tolerance
        agree = both_null | (~one_null & (both_nan | close.fill_null(False)))
        compared = scored.select(
            pl.col("__row"), *keys, mine.alias("evalframe"), theirs.alias("harness"),
            agree.alias("agree"), mine.is_null().alias("mine_null"),
            theirs.is_null().alias("theirs_null"),
        )
        differ = compared.filter(~pl.col("agree"))
        gap = compared.select((pl.col("evalframe") - pl.col("harness")).abs().max()).item()
        summaries.append(
            {
                "metric": request.column,
                "request": request.text,
                "against": targets[request.column],
                "n": compared.height,
                "n_agree": compared.height - differ.height,
                "n_differ": differ.height,
                "n_null_evalframe": differ.filter(pl.col("mine_null")).height,
                "n_null_harness": differ.filter(pl.col("theirs_null")).height,
                "max_abs_difference": gap,
            }
        )
        differences.append(
            differ.select(
                pl.col("__row").alias("row"), *keys,
                pl.lit(request.column).alias("metric"), "evalframe", "harness",
            )
        )
    summary = pl.DataFrame(
        summaries,
        schema={
            "metric": pl.String, "request": pl.String, "against": pl.String, "n": pl.UInt32,
            "n_agree": pl.UInt32, "n_differ": pl.UInt32, "n_null_evalframe": pl.UInt32,
            "n_null_harness": pl.UInt32,
            "max_abs_difference": pl.Float64,
        },
    )
    return Rescore(summary, pl.concat(differences, how="vertical"), scored.drop("__row"))

