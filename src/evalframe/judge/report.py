"""The report of a pairwise judgment run: outcome counts, win rate with an interval, position bias.

One row per group of ``by``. The counts are the rows' outcomes (``wins_a``, ``wins_b``,
``ties``, ``inconsistent``, ``errors``; ``n_valid`` = every row that is not an error).
``win_rate_a`` is A's share of the win under the chosen policy
(:mod:`evalframe.judge.policies`); by default ``(wins_a + 0.5 * (ties + inconsistent)) /
n_valid``, null when nothing is valid.

Its ``stderr``, ``ci_low``/``ci_high`` and ``n_clusters`` are exactly what
:func:`evalframe.aggregate` reports for the ``win_rate`` metric of the same rows: the standard
error of the mean of the rows' scores (1, 0, 0.5), cluster-robust when rows repeat a question
(the ``cluster`` column, or ``sample_id`` where it repeats within a group, or the column named
by ``cluster=``); the interval is Wilson's when every score of the group is 0 or 1 (no tie,
no inconsistent pair; on the effective sample size when clustered) and Student-t clipped to
[0, 1] otherwise, so it never leaves [0, 1]. Under ``arena_hard`` the scores are the battles,
clustered at least by the judgment row they come from (``cluster=False`` clusters by row).

The position-bias rate ``position_bias`` is how often the judge chose the first slot: among
the single verdicts that pick a winner (``verdict_ab`` or ``verdict_ba`` equal to ``"A"`` or
``"B"``; ties, errors and missing verdicts are not counted, ``n_decisive`` of them), the share
that picked the answer shown first. ``verdict_ab`` was given with A first, so ``"A"`` is the
first slot there; ``verdict_ba`` with B first (mapped back to A/B terms), so ``"B"`` is the
first slot there. 0.5 is no preference for either slot, 1.0 a judge that always answers
FIRST. Null when there is no decisive verdict, when the verdict columns are absent, and under
``alpaca_eval`` (AlpacaEval does not record which answer was shown first).

Under ``alpaca_eval``, ``length_controlled=True`` adds AlpacaEval 2.0's length-controlled
win rate (:mod:`evalframe.judge.length_controlled`): ``length_controlled_winrate``,
``lc_standard_error`` (percent, as AlpacaEval reports them) and ``lc_ci_low`` /
``lc_ci_high`` (``length_controlled_winrate -/+ z * lc_standard_error``, ``z`` the normal
quantile of ``ci``, clipped to [0, 100]), after the policy's columns. Each group must be one
model against one baseline. ``glm_data`` names the folder of AlpacaEval's ``df_gamed.csv``;
without it, the models given are fitted together.

``signature`` (as :mod:`evalframe.stats.signature`) says what determines the numbers: the
metric, the standard-error and interval method, the policy with its options, the judge model
(when the result names one), how the length-controlled win rate was fitted (``lc:``) and
evalframe's version.

>>> import polars as pl
>>> result = pl.DataFrame({"outcome": ["A", "B", "tie", "inconsistent", "error"]})
>>> report(result).select("wins_a", "wins_b", "ties", "inconsistent", "errors", "n_valid",
...                       "win_rate_a")
shape: (1, 7)
┌────────┬────────┬──────┬──────────────┬────────┬─────────┬────────────┐
│ wins_a ┆ wins_b ┆ ties ┆ inconsistent ┆ errors ┆ n_valid ┆ win_rate_a │
│ ---    ┆ ---    ┆ ---  ┆ ---          ┆ ---    ┆ ---     ┆ ---        │
│ u32    ┆ u32    ┆ u32  ┆ u32          ┆ u32    ┆ u32     ┆ f64        │
╞════════╪════════╪══════╪══════════════╪════════╪═════════╪════════════╡
│ 1      ┆ 1      ┆ 1    ┆ 1            ┆ 1      ┆ 4       ┆ 0.5        │
└────────┴────────┴──────┴──────────────┴────────┴─────────┴────────────┘
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

import polars as pl

from evalframe.errors import EvalframeError
from evalframe.io.load import Source, scan
from evalframe.judge import length_controlled as lc
from evalframe.judge.grouping import group_columns
from evalframe.judge.policies import OUTCOME, ROW, SCORE, Columns, Policy, resolve_policy
from evalframe.scored import missing_column
from evalframe.stats.aggregate import aggregate
from evalframe.stats.intervals import METHODS
from evalframe.stats.signature import Signature

__all__ = ["REPORT_COLUMNS", "report"]

#: The columns every report has (after the ``by`` keys; the policy's own come before
#: ``signature``).
REPORT_COLUMNS = (
    "wins_a", "wins_b", "ties", "inconsistent", "errors", "n_valid", "win_rate_a", "stderr",
    "ci_low", "ci_high", "n_clusters", "position_bias", "n_decisive",
)

_ALL = "__evalframe_all__"
#: Columns naming the judge model, in the order they are looked for.
_JUDGE_COLUMNS = ("judge_model", "judge")


def report(
    result: Source,
    *,
    by: str | Sequence[str] | None = None,
    policy: str | Policy = "default",
    ci: float = 0.95,
    outcome: str = "outcome",
    verdict_ab: str = "verdict_ab",
    verdict_ba: str = "verdict_ba",
    strength_ab: str = "strength_ab",
    strength_ba: str = "strength_ba",
    preference: str = "preference",
    cluster: str | bool | None = None,
    interval: str = "auto",
    length_controlled: bool = False,
    glm_data: str | os.PathLike[str] | None = None,
) -> pl.DataFrame:
    """Win/loss/tie counts, the win rate of A with its interval, and the position-bias rate.

    Parameters
    ----------
    result
        A pairwise result (DataFrame, LazyFrame or file(s)): the rows of
        :func:`evalframe.judge.pairwise`, of :func:`evalframe.judge.classify`, or judgments
        read by an adapter (``mtbench_pair``, ``alpaca_eval``).
    by
        Grouping column(s), e.g. ``["model_a", "model_b"]`` or ``"model"``.
    policy
        ``"default"``, ``"mtbench"``, ``"arena_hard"``, ``"alpaca_eval"`` or a
        :class:`~evalframe.judge.policies.Policy` (``ArenaHard(weight=5)``).
    ci
        Confidence level of the interval.
    outcome, verdict_ab, verdict_ba, strength_ab, strength_ba, preference
        The result's columns. Without an ``outcome`` column the two verdicts are
        classified (a missing verdict is an error); ``arena_hard`` reads the verdicts and
        strengths, ``alpaca_eval`` the preference.
    cluster
        The column of question ids to cluster on; ``None``: the ``cluster`` column, or
        ``sample_id`` where it repeats within a group; ``False``: never (as ``aggregate``).
    interval
        ``"auto"`` (Wilson for 0/1 scores, else t clipped to [0, 1]), ``"wilson"``, ``"t"``
        or ``"normal"``.
    length_controlled
        Add AlpacaEval's length-controlled win rate (``policy="alpaca_eval"`` only; the
        result needs ``question``, ``answer_a``, ``answer_b``): see
        :mod:`evalframe.judge.length_controlled`.
    glm_data
        With ``length_controlled``: the folder holding AlpacaEval's ``df_gamed.csv`` (and
        optionally ``alpaca_eval.json``), from the Hugging Face dataset
        ``tatsu-lab/alpaca_eval``; None: the difficulties are estimated from the models
        given (at least two besides the baseline).

    Returns
    -------
    pl.DataFrame
        The ``by`` keys, :data:`REPORT_COLUMNS`, the policy's own columns, the
        length-controlled columns when asked, ``signature``; one row per group, sorted by
        the keys.

    Examples
    --------
    >>> import polars as pl
    >>> result = pl.DataFrame({"model_b": ["x", "x", "y", "y"],
    ...                        "verdict_ab": ["A", "B", "A", "A"],
    ...                        "verdict_ba": ["A", "A", "B", "B"]})
    >>> report(result, by="model_b").select("model_b", "wins_a", "inconsistent", "win_rate_a",
    ...                                    "position_bias")
    shape: (2, 5)
    ┌─────────┬────────┬──────────────┬────────────┬───────────────┐
    │ model_b ┆ wins_a ┆ inconsistent ┆ win_rate_a ┆ position_bias │
    │ ---     ┆ ---    ┆ ---          ┆ ---        ┆ ---           │
    │ str     ┆ u32    ┆ u32          ┆ f64        ┆ f64           │
    ╞═════════╪════════╪══════════════╪════════════╪═══════════════╡
    │ x       ┆ 1      ┆ 1            ┆ 0.75       ┆ 0.25          │
    │ y       ┆ 0      ┆ 2            ┆ 0.5        ┆ 1.0           │
    └─────────┴────────┴──────────────┴────────────┴───────────────┘
    """
    if isinstance(ci, bool) or not isinstance(ci, int | float) or not 0 < ci < 1:
        raise EvalframeError(f"ci={ci!r} must be a number strictly between 0 and 1 (e.g. 0.95)")
    if interval not in METHODS or interval == "bootstrap":
        raise EvalframeError(
            f"interval={interval!r} is invalid; expected 'auto', 'wilson', 't' or 'normal'"
        )
    chosen = resolve_policy(policy)
    tables = _length_control(chosen, length_controlled, glm_data)
    extra = (*chosen.extra, *(lc.COLUMNS if length_controlled else ()))
    frame = scan(result)
    schema = frame.collect_schema()
    keys = _keys(by, schema, extra)
    columns = Columns(outcome, verdict_ab, verdict_ba, strength_ab, strength_ba, preference)
    rows = frame.with_columns(chosen.outcome(frame, schema, columns).alias(OUTCOME))
    counts = _counts(rows, schema, keys, chosen, columns)
    stats = _win_rate(rows, schema, keys, chosen, columns, ci, interval, cluster)
    table = (
        counts.join(stats, on=keys, how="left", nulls_equal=True, maintain_order="left")
        if keys
        else pl.concat([counts, stats], how="horizontal")
    )
    if length_controlled:
        controlled = lc.length_controlled(frame, keys, preference=preference, glm_data=tables,
                                          ci=ci).rename({"signature": "__lc"})
        table = (
            table.join(controlled, on=keys, how="left", nulls_equal=True, maintain_order="left")
            if keys
            else pl.concat([table, controlled], how="horizontal")
        )
    table = table.with_columns(*chosen.headline(), _signature(table, chosen))
    if keys:
        table = table.sort(keys, nulls_last=True, maintain_order=True)
    return table.select(*keys, *REPORT_COLUMNS, *extra, "signature")


def _length_control(
    policy: Policy, length_controlled: bool, glm_data: str | os.PathLike[str] | None
) -> lc.GlmData | None:
    """Check the length-control options (before any input is read); read ``glm_data``."""
    if not isinstance(length_controlled, bool):
        raise EvalframeError(f"length_controlled={length_controlled!r}: expected True or False")
    if glm_data is not None and not length_controlled:
        raise EvalframeError(
            f"glm_data={os.fspath(glm_data)!r} is read only for the length-controlled win "
            "rate: add length_controlled=True"
        )
    if length_controlled and not policy.length_control:
        raise EvalframeError(
            f"length_controlled=True is AlpacaEval's length-controlled win rate: it needs "
            f"policy='alpaca_eval', not {policy.name!r}"
        )
    return lc.read_glm_data(glm_data) if glm_data is not None else None


def _keys(
    by: str | Sequence[str] | None, schema: Mapping[str, pl.DataType], extra: Sequence[str]
) -> list[str]:
    taken = {*REPORT_COLUMNS, *extra, "signature", SCORE, OUTCOME, ROW, "n", "value"}
    return group_columns(by, schema, taken=taken, table="report")


def _counts(
    rows: pl.LazyFrame,
    schema: Mapping[str, pl.DataType],
    keys: list[str],
    policy: Policy,
    columns: Columns,
) -> pl.DataFrame:
    """One row per group: the outcome counts, the position-bias rate, the policy's columns."""
    outcome = pl.col(OUTCOME)

    def count(condition: pl.Expr) -> pl.Expr:
        return condition.sum().cast(pl.UInt32)

    aggregations = [
        count(outcome == "A").alias("wins_a"),
        count(outcome == "B").alias("wins_b"),
        count(outcome == "tie").alias("ties"),
        count(outcome == "inconsistent").alias("inconsistent"),
        count(outcome == "error").alias("errors"),
        count(outcome != "error").alias("n_valid"),
        *_position(schema, policy, columns),
        *policy.aggregations(schema, columns),
    ]
    judge = next((name for name in _JUDGE_COLUMNS if name in schema), None)
    if judge is not None:
        named = pl.col(judge).cast(pl.String)
        aggregations += [
            named.drop_nulls().n_unique().alias("__judges"),
            named.drop_nulls().first().alias("__judge"),
        ]
    group = keys or [pl.lit(0).alias(_ALL)]
    table = rows.group_by(group, maintain_order=True).agg(aggregations).collect()
    return table.drop(_ALL) if not keys else table


def _position(schema: Mapping[str, pl.DataType], policy: Policy, columns: Columns) -> list[pl.Expr]:
    """``position_bias`` and ``n_decisive`` (see the module docstring)."""
    games = [
        (name, first)
        for name, first in ((columns.verdict_ab, "A"), (columns.verdict_ba, "B"))
        if name in schema
    ]
    if not policy.position or not games:
        return [
            pl.lit(None, pl.Float64).alias("position_bias"),
            pl.lit(0, pl.UInt32).alias("n_decisive"),
        ]
    decisive = pl.sum_horizontal(
        [pl.col(name).is_in(["A", "B"]).fill_null(False).cast(pl.UInt32) for name, _ in games]
    )
    first = pl.sum_horizontal(
        [(pl.col(name) == slot).fill_null(False).cast(pl.UInt32) for name, slot in games]
    )
    n_decisive = decisive.sum().cast(pl.UInt32)
    return [
        pl.when(n_decisive > 0).then(first.sum() / n_decisive).alias("position_bias"),
        n_decisive.alias("n_decisive"),
    ]


def _win_rate(
    rows: pl.LazyFrame,
    schema: Mapping[str, pl.DataType],
    keys: list[str],
    policy: Policy,
    columns: Columns,
    ci: float,
    interval: str,
    cluster: str | bool | None,
) -> pl.DataFrame:
    """``win_rate_a`` with its standard error and interval, from :func:`evalframe.aggregate`."""
    if isinstance(cluster, str) and cluster not in schema:
        raise EvalframeError(f"cluster={cluster!r}: no such column; available: {list(schema)}")
    if cluster not in (None, False, True) and not isinstance(cluster, str):
        raise EvalframeError(f"cluster={cluster!r}: expected a column name, None or False")
    if policy.battle_level:
        # the battles of one judgment row are never independent: cluster at least by row
        rows = rows.with_row_index(ROW)
        if not isinstance(cluster, str):
            found = [name for name in ("cluster", "sample_id") if name in schema]
            cluster = found[0] if cluster is None and found else ROW
    carried = [name for name in ("cluster", "sample_id") if name in schema and cluster is None]
    if isinstance(cluster, str):
        carried = [cluster]
    scored = policy.scores(rows, schema, columns)
    kept = list(dict.fromkeys([*keys, SCORE, *(c for c in carried if c not in keys)]))
    # a null win-rate score is a battle without a verdict (not a missing answer): left out
    # of n and counted in n_null, as the policies' references do
    table = aggregate(
        scored.select(kept).with_columns(pl.lit(False).alias(missing_column(SCORE))),
        by=keys or None,
        metrics={SCORE: "win_rate"},
        ci=ci,
        interval=interval,
        cluster=cluster,
        keep_empty=True,
    )
    return table.select(
        *keys,
        pl.col("value").alias("win_rate_a"),
        "stderr",
        "ci_low",
        "ci_high",
        "n_clusters",
        pl.col("signature").alias("__signature"),
    )


def _signature(table: pl.DataFrame, policy: Policy) -> pl.Expr:
    """aggregate's signature of the win rate, with the policy and the judge model added."""
    judges = table["__judges"].to_list() if "__judges" in table.columns else None
    judge = table["__judge"].to_list() if "__judge" in table.columns else None
    texts = []
    for row, text in enumerate(table["__signature"].to_list()):
        pairs = [tuple(pair.split(":", 1)) for pair in (text or "").split("|") if ":" in pair]
        pairs = [(k, v) for k, v in pairs if k not in ("version", "missing")]
        pairs.append(("policy", policy.text))
        if judges is not None and judges[row]:
            pairs.append(("judge", judge[row] if judges[row] == 1 else f"mixed({judges[row]})"))
        if "__lc" in table.columns:
            pairs.append(tuple(table["__lc"][row].split(":", 1)))
        texts.append(str(Signature(tuple(pairs))))
    return pl.Series("signature", texts, dtype=pl.String)
