"""Ranks with intervals: which place each model holds, and how sure that place is.

A leaderboard's order is an estimate like the scores behind it. :func:`ranks` adds to a
table of scores, per group (a task and metric), four columns:

``rank``
    1 for the best point value; equal values share the smallest rank (``"min"`` ties:
    1, 2, 2, 4).
``rank_low``, ``rank_high``
    The range of ranks the model takes in the central ``ci`` share of the replicates
    (percentile-of-ranks): each replicate of the group's values is ranked the same way,
    the ``floor(R * (1 - ci) / 2)`` best and as many worst replicate ranks of the model are
    set aside, and the rest span ``[rank_low, rank_high]``; widened, where needed, to hold
    ``rank``. The interval is marginal, one model at a time (like every ``ci_low`` /
    ``ci_high`` in evalframe), not simultaneous over the leaderboard: about ``ci`` of the
    models' intervals hold their true rank, not all of them at once with probability
    ``ci``.
``tied_with``
    The models this one cannot be told apart from: those whose difference from it has a
    replicate interval (the central ``ci`` percentile interval of the replicate
    differences) containing 0. Sorted by rank, then name.

Where the replicates come from: :func:`evalframe.judge.ratings` uses its own bootstrap
replicates (resampled by question, so models that share questions are resampled
together). :func:`ranks`, given only each row's ``value`` and ``stderr`` (the table of
:func:`evalframe.aggregate`, :func:`evalframe.compare`, :func:`evalframe.judge.report`),
draws seeded normal replicates, ``value + stderr * z``, independently per row. Treating the
models as independent is conservative when they answered the same questions: their scores
are then positively correlated, the variance of a difference is smaller than the sum of the
variances, and the true rank intervals are narrower than these.

>>> import polars as pl
>>> table = pl.DataFrame({"model": ["a", "b", "c", "d"], "metric": ["acc"] * 4,
...                       "value": [0.80, 0.79, 0.60, 0.60],
...                       "stderr": [0.01, 0.01, 0.01, 0.0]})
>>> ranks(table).select("model", "rank", "rank_low", "rank_high", "tied_with")
shape: (4, 5)
┌───────┬──────┬──────────┬───────────┬───────────┐
│ model ┆ rank ┆ rank_low ┆ rank_high ┆ tied_with │
│ ---   ┆ ---  ┆ ---      ┆ ---       ┆ ---       │
│ str   ┆ u32  ┆ u32      ┆ u32       ┆ list[str] │
╞═══════╪══════╪══════════╪═══════════╪═══════════╡
│ a     ┆ 1    ┆ 1        ┆ 2         ┆ ["b"]     │
│ b     ┆ 2    ┆ 1        ┆ 2         ┆ ["a"]     │
│ c     ┆ 3    ┆ 3        ┆ 4         ┆ ["d"]     │
│ d     ┆ 3    ┆ 3        ┆ 4         ┆ ["c"]     │
└───────┴──────┴──────────┴───────────┴───────────┘
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl

from evalframe.errors import EvalframeError
from evalframe.stats.options import check_level, check_seed
from evalframe.stats.signature import signature_fields

__all__ = ["RANK_COLUMNS", "RankIntervals", "rank_intervals", "ranks", "ties_as_text"]

#: The columns :func:`ranks` (and :func:`evalframe.judge.ratings`) add.
RANK_COLUMNS = ("rank", "rank_low", "rank_high", "tied_with")


def ties_as_text(table: pl.DataFrame) -> pl.DataFrame:
    """``table`` with its ``tied_with`` list written as JSON text, for a CSV file (which
    holds no lists): ``["a", "b"]``, ``[]`` for no tie, null kept null. Nothing is lost:
    ``json.loads`` gives the list back, whatever the model names hold.

    >>> import polars as pl
    >>> ties_as_text(pl.DataFrame({"model": ["x", "y"], "tied_with": [["y, 2"], []]}))[
    ...     "tied_with"].to_list()
    ['["y, 2"]', '[]']
    """
    if "tied_with" not in table.columns or not isinstance(table.schema["tied_with"], pl.List):
        return table
    import json

    text = [None if ties is None else json.dumps(ties, ensure_ascii=False)
            for ties in table["tied_with"].to_list()]
    return table.with_columns(tied_with=pl.Series(text, dtype=pl.String))


@dataclass(frozen=True)
class RankIntervals:
    """Ranks of ``K`` models and their intervals (see the module's description)."""

    rank: np.ndarray  # (K,) int
    low: np.ndarray  # (K,) int
    high: np.ndarray  # (K,) int
    tied: np.ndarray  # (K, K) bool, False on the diagonal


def point_ranks(values: np.ndarray, higher_is_better: bool = True) -> np.ndarray:
    """``"min"`` ranks along the last axis, 1 for the best value.

    >>> point_ranks(np.array([3.0, 5.0, 3.0, 1.0])).tolist()
    [2, 1, 2, 4]
    """
    from scipy.stats import rankdata

    score = -values if higher_is_better else values
    return rankdata(score, method="min", axis=-1).astype(np.int64)


def rank_intervals(
    point: np.ndarray,
    replicates: np.ndarray,
    *,
    ci: float = 0.95,
    higher_is_better: bool = True,
) -> RankIntervals:
    """Ranks, their percentile-of-ranks intervals and the pairs that cannot be separated.

    Parameters
    ----------
    point
        The point values, one per model (``K``).
    replicates
        ``(R, K)`` replicate values (bootstrap replicates, or simulated draws), ``R >= 2``.
    ci
        The share of replicates the intervals span.
    higher_is_better
        The direction of the values.

    Examples
    --------
    >>> draws = np.array([[3.0, 2.0, 1.0], [2.0, 3.0, 1.0], [3.0, 2.0, 0.0]] * 10)
    >>> found = rank_intervals(np.array([3.0, 2.0, 1.0]), draws, ci=0.9)
    >>> found.rank.tolist(), found.low.tolist(), found.high.tolist()
    ([1, 2, 3], [1, 1, 3], [2, 2, 3])
    >>> found.tied.astype(int).tolist()
    [[0, 1, 0], [1, 0, 0], [0, 0, 0]]
    """
    point = np.asarray(point, dtype=np.float64)
    replicates = np.asarray(replicates, dtype=np.float64)
    count = len(point)
    if replicates.ndim != 2 or replicates.shape[1] != count or replicates.shape[0] < 2:
        raise EvalframeError(
            f"rank intervals need (replicates >= 2, {count}) replicate values; got the shape "
            f"{replicates.shape}"
        )
    rank = point_ranks(point, higher_is_better)
    drawn = np.sort(point_ranks(replicates, higher_is_better), axis=0)
    cut = int(np.floor(replicates.shape[0] * (1 - ci) / 2 + 1e-9))
    low = np.minimum(drawn[cut], rank)
    high = np.maximum(drawn[replicates.shape[0] - 1 - cut], rank)
    tied = np.zeros((count, count), dtype=bool)
    for i in range(count):
        difference = replicates[:, [i]] - replicates
        lower, upper = np.quantile(difference, [(1 - ci) / 2, (1 + ci) / 2], axis=0)
        tied[i] = (lower <= 0) & (upper >= 0)
    np.fill_diagonal(tied, False)
    return RankIntervals(rank, low, high, tied)


#: The value column of each kind of table, and where its keys end.
_KINDS = {
    "compare": ("diff", "metric"),
    "report": ("win_rate_a", "wins_a"),
    "ratings": ("rating", None),
    "aggregate": ("value", "metric"),
}


def _kind(columns: Sequence[str]) -> str | None:
    names = set(columns)
    if {"diff", "value_model", "baseline"} <= names:
        return "compare"
    if {"win_rate_a", "wins_a"} <= names:
        return "report"
    if {"rating", "model", "n_battles"} <= names:
        return "ratings"
    if {"metric", "value"} <= names:
        return "aggregate"
    return None


def _keys(kind: str | None, columns: list[str], by: str) -> list[str] | None:
    """The group keys of a known table (every key but ``by``, the metric included)."""
    if kind is None:
        return None
    end = _KINDS[kind][1]
    if end is None:
        return []
    stop = columns.index(end) + (1 if end == "metric" else 0)
    return [column for column in columns[:stop] if column != by]


def _direction(frame: pl.DataFrame) -> list[bool]:
    """Per row: is higher better, as the row's metric says (the signature's ``metric``
    field, a registered metric); True where the table does not say."""
    from evalframe.metrics.registry import resolve

    if "signature" not in frame.columns:
        return [True] * frame.height
    found: dict[str | None, bool] = {}
    directions = []
    for text in frame["signature"].to_list():
        name = signature_fields(text).get("metric")
        if name not in found:
            try:
                found[name] = resolve(name)[0].higher_is_better if name else True
            except EvalframeError:  # a user's own column (column:NAME), or unknown here
                found[name] = True
        directions.append(found[name])
    return directions


def ranks(
    table: pl.DataFrame | pl.LazyFrame,
    *,
    by: str = "model",
    within: str | Sequence[str] | None = None,
    value: str | None = None,
    stderr: str = "stderr",
    higher_is_better: bool | None = None,
    ci: float = 0.95,
    draws: int = 10_000,
    seed: int = 0,
) -> pl.DataFrame:
    """Rank ``by`` within each group of a table of scores, with rank intervals.

    Parameters
    ----------
    table
        A table with one row per model and group, a value and its standard error: the
        long table of :func:`evalframe.aggregate` (``value``), :func:`evalframe.compare`
        (``diff``, the model minus the baseline), :func:`evalframe.judge.report`
        (``win_rate_a``), or any table naming ``value`` and ``within``.
    by
        The column whose entries are ranked (the model).
    within
        The columns whose groups are ranked apart; default: every key of the table but
        ``by``, the metric included (an aggregate's ``by`` keys and ``metric``; a
        comparison's keys, ``baseline`` and ``metric``; a report's keys). ``[]`` ranks the
        whole table as one group.
    value, stderr
        The value and standard-error columns (default ``value``; ``diff`` for a comparison,
        ``win_rate_a`` for a judge report, ``rating`` for ratings).
    higher_is_better
        The direction of the value; None (default): the metric's (its registered spec, read
        from the row's signature), higher where the table does not say; for a judge report,
        higher when ``by`` is ``model_a`` (side A's win rate), lower when ``model_b``.
    ci
        The share of replicates the rank intervals span, and the level of the difference
        intervals behind ``tied_with``.
    draws
        Normal replicates drawn per group, ``value + stderr * z`` (seeded).
    seed
        Seed of the draws (``numpy.random.default_rng``); the groups draw in the order of
        their first row.

    Returns
    -------
    pl.DataFrame
        The table, rows in their order, with :data:`RANK_COLUMNS` (replacing any there).

    Raises
    ------
    EvalframeError
        A column that is missing, a null or non-finite value or standard error (naming the
        row), a negative standard error, a model twice in one group, or groups whose
        metrics disagree on the direction.
    """
    frame = table.collect() if isinstance(table, pl.LazyFrame) else table
    if not isinstance(frame, pl.DataFrame):
        raise EvalframeError(f"ranks: expected a polars DataFrame, got {type(table).__name__}")
    check_level(ci)
    check_seed(seed)
    if isinstance(draws, bool) or not isinstance(draws, int) or draws < 100:
        raise EvalframeError(f"draws={draws!r} must be an integer >= 100 (e.g. 10000)")
    frame = frame.drop([name for name in RANK_COLUMNS if name in frame.columns])
    columns = frame.columns
    kind = _kind(columns)
    if value is None:
        if kind is None and "value" in columns:
            value = "value"
        elif kind is None:
            raise EvalframeError(
                "ranks: the table is not one of aggregate, compare, judge.report or "
                f"judge.ratings; name its value column (value=...). Columns: {columns}"
            )
        else:
            value = _KINDS[kind][0]
    if within is None:
        keys = _keys(kind, columns, by)
        if keys is None:
            raise EvalframeError(
                "ranks: name the columns whose groups are ranked apart (within=[...], or [] "
                f"for one group); columns: {columns}"
            )
    else:
        keys = [within] if isinstance(within, str) else list(within)
    needed = [by, *keys, value, stderr]
    absent = [name for name in dict.fromkeys(needed) if name not in columns]
    if absent:
        raise EvalframeError(f"ranks: the table has no column(s) {absent}; columns: {columns}")
    if by in keys:
        raise EvalframeError(f"ranks: within={keys} names the ranked column {by!r}")
    indexed = frame.with_row_index("__ef_row")
    _check_numbers(indexed, by, value, stderr)
    twice = indexed.group_by([*keys, by]).agg(pl.len()).filter(pl.col("len") > 1)
    if twice.height:
        where = twice.row(0, named=True)
        raise EvalframeError(
            f"ranks: {by}={where[by]!r} has {where['len']} rows in one group "
            f"({', '.join(f'{key}={where[key]!r}' for key in keys) or 'the whole table'}); "
            "each group needs one row per model (add the distinguishing column to within)"
        )
    if higher_is_better is None and kind == "report" and value == "win_rate_a":
        # A's win rate: higher is better for the A side's model, lower for the B side's
        if by not in ("model_a", "model_b"):
            raise EvalframeError(
                f"ranks: a judge report's win_rate_a is side A's win rate; say whether {by!r} "
                "names side A's models (higher_is_better=True) or side B's (False)"
            )
        higher_is_better = by == "model_a"
    directions = (
        [bool(higher_is_better)] * frame.height if higher_is_better is not None
        else _direction(frame)
    )
    indexed = indexed.with_columns(pl.Series("__ef_higher", directions, dtype=pl.Boolean))
    rng = np.random.default_rng(seed)
    parts = []
    groups = (
        indexed.group_by(keys, maintain_order=True) if keys else [((), indexed)]
    )
    for _, group in groups:
        parts.append(_ranked(group, by, value, stderr, ci, draws, rng))
    ranked = pl.concat(parts).sort("__ef_row")
    return (
        frame.with_columns(
            ranked["rank"], ranked["rank_low"], ranked["rank_high"], ranked["tied_with"]
        )
    )


def _check_numbers(frame: pl.DataFrame, by: str, value: str, stderr: str) -> None:
    for column, what in ((value, "value"), (stderr, "standard error")):
        if not frame.schema[column].is_numeric():
            raise EvalframeError(
                f"ranks: column {column!r} ({what}) has dtype {frame.schema[column]}; expected "
                "numbers"
            )
        numbers = pl.col(column).cast(pl.Float64)
        bad = frame.filter(numbers.is_null() | ~numbers.is_finite())
        if bad.height:
            row = bad.row(0, named=True)
            raise EvalframeError(
                f"ranks: {bad.height} row(s) have no finite {what} in {column!r}; first: row "
                f"{row['__ef_row']} ({by}={row[by]!r}, {column}={row[column]!r}). A rank "
                f"interval needs every model's {what}"
            )
    negative = frame.filter(pl.col(stderr) < 0)
    if negative.height:
        row = negative.row(0, named=True)
        raise EvalframeError(
            f"ranks: row {row['__ef_row']} ({by}={row[by]!r}) has a negative standard error "
            f"{row[stderr]!r}"
        )


def _ranked(
    group: pl.DataFrame, by: str, value: str, stderr: str, ci: float, draws: int,
    rng: np.random.Generator,
) -> pl.DataFrame:
    higher = group["__ef_higher"].unique().to_list()
    if len(higher) > 1:
        raise EvalframeError(
            "ranks: a group mixes metrics where higher is better with metrics where lower is "
            "better; rank each metric apart (keep 'metric' in within) or give higher_is_better"
        )
    point = group[value].cast(pl.Float64).to_numpy()
    spread = group[stderr].cast(pl.Float64).to_numpy()
    replicates = point + spread * rng.standard_normal((draws, len(point)))
    found = rank_intervals(point, replicates, ci=ci, higher_is_better=higher[0])
    return with_ranks(group.select("__ef_row", by), by, found)


def with_ranks(frame: pl.DataFrame, by: str, found: RankIntervals) -> pl.DataFrame:
    """``frame`` (one row per model, in the order of ``found``) with :data:`RANK_COLUMNS`;
    ``tied_with`` lists the tied models by rank, then name."""
    names = frame[by].to_list()
    order = sorted(range(len(names)), key=lambda k: (found.rank[k], str(names[k])))
    tied = [[names[j] for j in order if found.tied[i, j]] for i in range(len(names))]
    return frame.with_columns(
        pl.Series("rank", found.rank, dtype=pl.UInt32),
        pl.Series("rank_low", found.low, dtype=pl.UInt32),
        pl.Series("rank_high", found.high, dtype=pl.UInt32),
        pl.Series("tied_with", tied, dtype=pl.List(frame.schema[by])),
    )
