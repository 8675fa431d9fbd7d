"""How ties, inconsistent pairs and verdict strengths count: the report's policies, by name.

A policy turns the rows of a pairwise result into three things :func:`evalframe.judge.report`
needs: each row's ``outcome`` (``"A"``, ``"B"``, ``"tie"``, ``"inconsistent"``, ``"error"``:
the counts), the scores whose mean is ``win_rate_a`` (A's share of the win, null where a row
does not count), and the policy's own columns, named as its harness names them.

- ``default``: a tie and an inconsistent pair (the winner changed when the answers swapped
  places, or one order gave a winner and the other a tie) are each half a win for both
  sides; errors are left out. ``win_rate_a = (wins_a + 0.5 * (ties + inconsistent)) /
  n_valid``. A judge that always picks the first slot makes every pair inconsistent, so
  position bias cannot move the win rate from 0.5.
- ``mtbench``: FastChat MT-bench's ``show_result.py --mode pairwise-*``. A match with an
  ``error`` game is left out; a tie in the first game, or two games that disagree, is a tie
  ("inconsistent counts as tie"); otherwise the agreed winner wins. Its columns, for model A:
  ``win``, ``loss``, ``tie`` (ties and inconsistent pairs), ``win_rate = win / (win + loss +
  tie)``, ``loss_rate`` and ``win_rate_adjusted = (win + 0.5 tie) / (win + loss + tie)``,
  which is ``win_rate_a``. (For model B, swap ``win`` and ``loss``.)
- ``arena_hard``: Arena-Hard-Auto's battles (``show_result.py``): each of the two games of a
  row is one battle, or ``weight`` (3) battles for a strong verdict (``A>>B``, ``B>>A``:
  ``strength`` above 1); a battle scores 1 for A, 0 for B, 0.5 for a tie (``A=B`` counts
  once). ``win_rate_a`` is the mean score over the battles. A row with an unparseable game
  is dropped whole, as Arena-Hard-Auto v2's ``load_judgments`` drops a judgment with a null
  game score (``unparsed="row"``); v0.1's ``get_battles_from_judgment`` dropped only that
  game (``unparsed="game"``). Arena-Hard-Auto v0.1 reports the win rate against the baseline
  predicted by a Bradley-Terry fit of these battles; with one model against the baseline that
  prediction is exactly this mean (the maximum-likelihood win probability of two players is
  the observed share, ties half). v2 prints the mean of 100 unseeded bootstrap means of the
  same battles, whose expectation is this mean. Extra column: ``n_battles``.
- ``alpaca_eval``: AlpacaEval's preference encoding (``metrics/helpers.py``,
  ``AbsoluteScoringRule.describe_head2head``, and ``ZeroOneScoringRule`` for
  ``discrete_win_rate``), read from the ``preference`` column: 1 = the baseline's answer
  (``output_1``, A) is better, 2 = the model's (``output_2``, B), 1.5 or 0 = a draw, a float
  in between the weighted annotator's preference (``preference - 1`` is the model's share).
  A value outside [1, 2] (0 read as 1.5), null or NaN is not a preference and is left out.
  Its columns, for the model (B), as AlpacaEval reports them (percent): ``win_rate``,
  ``standard_error`` (of the mean, ``ddof=1``), ``win_rate_ci_low`` / ``win_rate_ci_high``
  (the report's interval on this scale), ``n_wins`` (share above 0.5),
  ``n_wins_base`` (below 0.5), ``n_draws`` (exactly 1.5 or 0), ``n_total`` and
  ``discrete_win_rate`` (the preference rounded half to even with 1.5 read as a draw).
  ``win_rate_a`` is the baseline's share, ``1 - win_rate / 100``.

>>> import polars as pl
>>> from evalframe.judge.report import report
>>> frame = pl.DataFrame({"outcome": ["A", "inconsistent", "tie", "B"]})
>>> report(frame, policy="mtbench").select("win", "loss", "tie", "win_rate", "win_rate_adjusted")
shape: (1, 5)
┌─────┬──────┬─────┬──────────┬───────────────────┐
│ win ┆ loss ┆ tie ┆ win_rate ┆ win_rate_adjusted │
│ --- ┆ ---  ┆ --- ┆ ---      ┆ ---               │
│ u32 ┆ u32  ┆ u32 ┆ f64      ┆ f64               │
╞═════╪══════╪═════╪══════════╪═══════════════════╡
│ 1   ┆ 1    ┆ 2   ┆ 0.25     ┆ 0.5               │
└─────┴──────┴─────┴──────────┴───────────────────┘
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

import polars as pl

from evalframe._registry import Registry
from evalframe.errors import EvalframeError
from evalframe.metrics.judge import OUTCOMES

__all__ = [
    "POLICIES",
    "AlpacaEval",
    "ArenaHard",
    "Columns",
    "Default",
    "MTBench",
    "Policy",
    "list_policies",
    "resolve_policy",
]

#: The labels a verdict column holds (mapped back to A/B terms).
VERDICTS = ("A", "B", "tie", "error")
#: The column every policy writes each row's outcome to, and the scored column.
OUTCOME = "__outcome"
SCORE = "win_rate"
#: A row number, to cluster the battles of one judgment (Arena-Hard).
ROW = "__row"


@dataclass(frozen=True)
class Columns:
    """Where a pairwise result keeps what the policies read."""

    outcome: str = "outcome"
    verdict_ab: str = "verdict_ab"
    verdict_ba: str = "verdict_ba"
    strength_ab: str = "strength_ab"
    strength_ba: str = "strength_ba"
    preference: str = "preference"


def classify_verdicts(verdict_ab: pl.Expr, verdict_ba: pl.Expr) -> pl.Expr:
    """The outcome of two verdicts in A/B terms (the classification rule of the harness).

    Either verdict ``"error"`` (or null: no verdict) -> ``"error"``; the same winner twice
    -> that winner; two ties -> ``"tie"``; anything else (opposite winners, a winner and a
    tie) -> ``"inconsistent"``.

    >>> import polars as pl
    >>> frame = pl.DataFrame({"ab": ["A", "A", "tie", "B", "A"],
    ...                       "ba": ["A", "B", "tie", "tie", None]})
    >>> frame.select(classify_verdicts(pl.col("ab"), pl.col("ba"))).to_series().to_list()
    ['A', 'inconsistent', 'tie', 'inconsistent', 'error']
    """
    broken = (
        verdict_ab.is_null() | verdict_ba.is_null()
        | (verdict_ab == "error") | (verdict_ba == "error")
    )
    return (
        pl.when(broken)
        .then(pl.lit("error"))
        .when(verdict_ab == verdict_ba)
        .then(verdict_ab)
        .otherwise(pl.lit("inconsistent"))
    )


def _require(schema: Mapping[str, pl.DataType], names: tuple[str, ...], why: str) -> None:
    absent = [name for name in names if name not in schema]
    if absent:
        raise EvalframeError(
            f"{why} needs the column(s) {absent}, which the result does not have; available: "
            f"{list(schema)}"
        )


def _check_labels(frame: pl.LazyFrame, column: str, labels: tuple[str, ...]) -> None:
    """Every non-null value of ``column`` is one of ``labels`` (else a clear error)."""
    expr = pl.col(column)
    wrong = expr.is_not_null() & ~expr.is_in(list(labels))
    found = frame.select(
        count=wrong.sum(),
        first=pl.int_range(pl.len()).filter(wrong).first(),
        value=expr.filter(wrong).first(),
    ).collect()
    if found["count"].item():
        raise EvalframeError(
            f"column {column!r}: {found['count'].item()} row(s) hold a value that is not one of "
            f"{', '.join(repr(label) for label in labels)}; first: row {found['first'].item()} "
            f"({found['value'].item()!r})"
        )


def _string(schema: Mapping[str, pl.DataType], column: str) -> None:
    dtype = schema[column]
    if dtype not in (pl.String, pl.Null) and not isinstance(dtype, pl.Categorical | pl.Enum):
        raise EvalframeError(f"column {column!r} has dtype {dtype}; expected str labels")


#: The policies by name.
POLICIES: Registry[Policy] = Registry(
    "judge policy",
    noun="policy",
    plural="policies",
    columns=("name", "description", "reference"),
    message="{where}unknown {noun} {name}; expected one of {quoted} (or an "
    "evalframe.judge.policies.Policy, e.g. ArenaHard(weight=5)){hint}",
)


@dataclass(frozen=True)
class Policy:
    """A tie and inconsistency policy: how each row counts (see the module docstring)."""

    name: str = "default"
    description: str = (
        "a tie and an inconsistent pair are each half a win for both sides; errors left out"
    )
    reference: str = "evalframe"
    #: Whether the report's position-bias rate applies (the order shown is known).
    position: bool = True
    #: Whether the scores are battles (several per row), clustered at least by row.
    battle_level: bool = False
    #: Whether the report can add AlpacaEval's length-controlled win rate
    #: (:mod:`evalframe.judge.length_controlled`).
    length_control: bool = False

    @property
    def text(self) -> str:
        """The policy as written in a signature (with its options)."""
        return self.name

    def outcome(
        self, frame: pl.LazyFrame, schema: Mapping[str, pl.DataType], columns: Columns
    ) -> pl.Expr:
        """Each row's outcome: the ``outcome`` column, or the two verdicts classified."""
        if columns.outcome in schema:
            _string(schema, columns.outcome)
            _check_labels(frame, columns.outcome, tuple(OUTCOMES))
            return pl.col(columns.outcome).fill_null("error")
        if columns.verdict_ab in schema and columns.verdict_ba in schema:
            for column in (columns.verdict_ab, columns.verdict_ba):
                _string(schema, column)
                _check_labels(frame, column, VERDICTS)
            _check_second_game(frame, schema, columns)
            return classify_verdicts(pl.col(columns.verdict_ab), pl.col(columns.verdict_ba))
        raise EvalframeError(
            f"policy {self.name!r} reads each row's outcome from the column "
            f"{columns.outcome!r} (or classifies {columns.verdict_ab!r} and "
            f"{columns.verdict_ba!r}); the result has neither: available {list(schema)}"
        )

    def scores(
        self, rows: pl.LazyFrame, schema: Mapping[str, pl.DataType], columns: Columns
    ) -> pl.LazyFrame:
        """``rows`` (holding the outcome) with A's score per row in ``win_rate``."""
        return rows.with_columns(_outcome_score(pl.col(OUTCOME)).alias(SCORE))

    def aggregations(self, schema: Mapping[str, pl.DataType], columns: Columns) -> list[pl.Expr]:
        """The policy's own per-group columns (computed over the rows, outcome included)."""
        return []

    @property
    def extra(self) -> tuple[str, ...]:
        """The names of the policy's own columns, in order."""
        return ()

    def headline(self) -> list[pl.Expr]:
        """Columns computed from the finished report (its interval, ``ci_low`` /
        ``ci_high`` on A's win rate), named in :attr:`extra`: none by default."""
        return []


def _check_second_game(
    frame: pl.LazyFrame, schema: Mapping[str, pl.DataType], columns: Columns
) -> None:
    """One judgment per row (AlpacaEval's files: ``verdict_ba`` all null) is not a swap."""
    found = frame.select(
        rows=pl.len(), second=pl.col(columns.verdict_ba).is_not_null().sum()
    ).collect()
    if found["rows"].item() and not found["second"].item():
        hint = (
            "; the result has AlpacaEval's preference column: report(..., "
            "policy='alpaca_eval')"
            if columns.preference in schema
            else ""
        )
        raise EvalframeError(
            f"column {columns.verdict_ba!r} is null on every row: each pair was judged once, "
            f"without the swapped order, so no row can be classified{hint}"
        )


def _outcome_score(outcome: pl.Expr) -> pl.Expr:
    known = {label: value for label, value in OUTCOMES.items() if value is not None}
    return outcome.replace_strict(known, default=None, return_dtype=pl.Float64)


Default = Policy
POLICIES.add(Default())


@dataclass(frozen=True)
class MTBench(Policy):
    """FastChat MT-bench's ``show_result.py``: inconsistent counts as a tie."""

    name: str = "mtbench"
    description: str = (
        "FastChat MT-bench show_result.py: errors left out, a first-game tie or two games "
        "that disagree count as a tie; win_rate and win_rate_adjusted"
    )
    reference: str = "FastChat fastchat/llm_judge/show_result.py display_result_pairwise"

    def aggregations(self, schema: Mapping[str, pl.DataType], columns: Columns) -> list[pl.Expr]:
        outcome = pl.col(OUTCOME)
        win = (outcome == "A").sum().cast(pl.UInt32)
        loss = (outcome == "B").sum().cast(pl.UInt32)
        tie = outcome.is_in(["tie", "inconsistent"]).sum().cast(pl.UInt32)
        total = (win + loss + tie).cast(pl.Float64)
        valid = total > 0
        return [
            win.alias("win"),
            loss.alias("loss"),
            tie.alias("tie"),
            pl.when(valid).then(win / total).alias("win_rate"),
            pl.when(valid).then(loss / total).alias("loss_rate"),
            pl.when(valid).then((win + 0.5 * tie) / total).alias("win_rate_adjusted"),
        ]

    @property
    def extra(self) -> tuple[str, ...]:
        return ("win", "loss", "tie", "win_rate", "loss_rate", "win_rate_adjusted")


POLICIES.add(MTBench())


@dataclass(frozen=True)
class ArenaHard(Policy):
    """Arena-Hard-Auto's battles: a strong verdict counts ``weight`` times, a tie once."""

    name: str = "arena_hard"
    description: str = (
        "Arena-Hard-Auto show_result.py: each game one battle, a strong verdict (>>) weight "
        "battles, a tie half a win once; win_rate_a the mean battle score"
    )
    reference: str = "Arena-Hard-Auto show_result.py load_judgments / get_battles_from_judgment"
    battle_level: bool = True
    weight: int = 3
    unparsed: Literal["row", "game"] = "row"

    def __post_init__(self) -> None:
        if isinstance(self.weight, bool) or not isinstance(self.weight, int) or self.weight < 1:
            raise EvalframeError(f"weight={self.weight!r} must be an integer >= 1 (e.g. 3)")
        if self.unparsed not in ("row", "game"):
            raise EvalframeError(
                f"unparsed={self.unparsed!r} is invalid; expected 'row' (Arena-Hard-Auto v2: "
                "a judgment with an unparseable game is dropped) or 'game' (v0.1: only that game)"
            )

    @property
    def text(self) -> str:
        return f"arena_hard(weight={self.weight},unparsed={self.unparsed})"

    def outcome(
        self, frame: pl.LazyFrame, schema: Mapping[str, pl.DataType], columns: Columns
    ) -> pl.Expr:
        _require(schema, (columns.verdict_ab, columns.verdict_ba), "policy 'arena_hard'")
        for column in (columns.verdict_ab, columns.verdict_ba):
            _string(schema, column)
            _check_labels(frame, column, VERDICTS)
        for column in (columns.strength_ab, columns.strength_ba):
            if column in schema and not (schema[column].is_integer() or schema[column] == pl.Null):
                raise EvalframeError(
                    f"column {column!r} has dtype {schema[column]}; expected integer strengths "
                    "(3 for a strong verdict, 1 otherwise)"
                )
        return classify_verdicts(pl.col(columns.verdict_ab), pl.col(columns.verdict_ba))

    def _game(self, verdict: str, strength: str, schema: Mapping[str, pl.DataType]) -> pl.Expr:
        """One game's battles: its score repeated (``weight`` times when strong), or null."""
        label = pl.col(verdict)
        score = label.replace_strict({"A": 1.0, "B": 0.0, "tie": 0.5}, default=None,
                                     return_dtype=pl.Float64)
        strong = (
            pl.col(strength).fill_null(1) > 1 if strength in schema else pl.lit(False)
        )
        copies = pl.when(label.is_in(["A", "B"]) & strong).then(self.weight).otherwise(1)
        return score.repeat_by(pl.when(score.is_null()).then(0).otherwise(copies))

    def battles(self, schema: Mapping[str, pl.DataType], columns: Columns) -> pl.Expr:
        """Each row's battle scores (a list: both games, strong verdicts repeated)."""
        games = pl.concat_list(
            self._game(columns.verdict_ab, columns.strength_ab, schema),
            self._game(columns.verdict_ba, columns.strength_ba, schema),
        )
        if self.unparsed == "row":
            empty = pl.lit([], pl.List(pl.Float64))
            games = pl.when(pl.col(OUTCOME) == "error").then(empty).otherwise(games)
        return games

    def scores(
        self, rows: pl.LazyFrame, schema: Mapping[str, pl.DataType], columns: Columns
    ) -> pl.LazyFrame:
        games = self.battles(schema, columns)
        # a row without battles keeps one null score, so that its group is reported
        battles = pl.when(games.list.len() > 0).then(games).otherwise(
            pl.lit([None], pl.List(pl.Float64))
        )
        return rows.with_columns(battles.alias(SCORE)).explode(SCORE)

    def aggregations(self, schema: Mapping[str, pl.DataType], columns: Columns) -> list[pl.Expr]:
        return [self.battles(schema, columns).list.len().sum().cast(pl.UInt32).alias("n_battles")]

    @property
    def extra(self) -> tuple[str, ...]:
        return ("n_battles",)


POLICIES.add(ArenaHard())


@dataclass(frozen=True)
class AlpacaEval(Policy):
    """AlpacaEval's preferences: 1 = baseline (A), 2 = model (B), 1.5 or 0 = a draw."""

    name: str = "alpaca_eval"
    description: str = (
        "AlpacaEval metrics/helpers.py AbsoluteScoringRule.describe_head2head (and "
        "ZeroOneScoringRule for discrete_win_rate) on the preference column"
    )
    reference: str = "alpaca_eval 0.6.6 alpaca_eval.metrics.get_winrate"
    position: bool = False
    length_control: bool = True

    def outcome(
        self, frame: pl.LazyFrame, schema: Mapping[str, pl.DataType], columns: Columns
    ) -> pl.Expr:
        _require(schema, (columns.preference,), "policy 'alpaca_eval'")
        dtype = schema[columns.preference]
        if not (dtype.is_numeric() or dtype == pl.Null) or dtype.is_decimal():
            raise EvalframeError(
                f"column {columns.preference!r} has dtype {dtype}; expected AlpacaEval's "
                "numeric preferences (1 = baseline better, 2 = model better, 1.5 or 0 = draw)"
            )
        share = model_share(pl.col(columns.preference))
        return (
            pl.when(share.is_null())
            .then(pl.lit("error"))
            .when(share > 0.5)
            .then(pl.lit("B"))
            .when(share < 0.5)
            .then(pl.lit("A"))
            .otherwise(pl.lit("tie"))
        )

    def scores(
        self, rows: pl.LazyFrame, schema: Mapping[str, pl.DataType], columns: Columns
    ) -> pl.LazyFrame:
        return rows.with_columns(
            (1.0 - model_share(pl.col(columns.preference))).alias(SCORE)
        )

    def aggregations(self, schema: Mapping[str, pl.DataType], columns: Columns) -> list[pl.Expr]:
        preference = pl.col(columns.preference).cast(pl.Float64)
        share = model_share(preference)
        discrete = discrete_share(preference)
        return [
            (share.mean() * 100).alias("win_rate"),
            (share.std(ddof=1) / share.count().sqrt() * 100).alias("standard_error"),
            (share > 0.5).sum().cast(pl.UInt32).alias("n_wins"),
            (share < 0.5).sum().cast(pl.UInt32).alias("n_wins_base"),
            ((preference == 1.5) | (preference == 0)).sum().cast(pl.UInt32).alias("n_draws"),
            share.count().cast(pl.UInt32).alias("n_total"),
            (discrete.mean() * 100).alias("discrete_win_rate"),
        ]

    @property
    def extra(self) -> tuple[str, ...]:
        return (
            "win_rate", "standard_error", "win_rate_ci_low", "win_rate_ci_high", "n_wins",
            "n_wins_base", "n_draws", "n_total", "discrete_win_rate",
        )

    def headline(self) -> list[pl.Expr]:
        # the interval of the headline (the model's win rate, in percent): the report's
        # interval is on A's (the baseline's) share, 1 - the model's share per row, and
        # its t and Wilson intervals are symmetric under that complement
        return [
            ((1.0 - pl.col("ci_high")) * 100).alias("win_rate_ci_low"),
            ((1.0 - pl.col("ci_low")) * 100).alias("win_rate_ci_high"),
        ]


POLICIES.add(AlpacaEval())


def _counted(value: pl.Expr) -> pl.Expr:
    """``value`` where AlpacaEval counts it as a preference (in [1, 2], not NaN), else null."""
    judged = value.is_not_nan() & value.is_between(1.0, 2.0)
    return pl.when(judged).then(value)


def model_share(preference: pl.Expr) -> pl.Expr:
    """The model's (B's) share of the win, ``preference - 1`` with 0 read as 1.5; null where
    AlpacaEval's ``AbsoluteScoringRule`` leaves the value out (null, NaN, outside [1, 2]).

    >>> import polars as pl
    >>> pl.select(model_share(pl.Series([2.0, 1.25, 0.0, 2.5, None]))).to_series().to_list()
    [1.0, 0.25, 0.5, None, None]
    """
    value = preference.cast(pl.Float64)
    return _counted(pl.when(value == 0).then(pl.lit(1.5)).otherwise(value)) - 1.0


def discrete_share(preference: pl.Expr) -> pl.Expr:
    """1, 0.5 or 0 as AlpacaEval's ``ZeroOneScoringRule`` counts a preference: 1.5 read as 0,
    rounded half to even, 0 read as 1.5, then kept in [1, 2] (so 2.5 rounds to a win).

    >>> import polars as pl
    >>> pl.select(discrete_share(pl.Series([1.5, 1.6, 2.5, 0.4, 0.6, None]))).to_series().to_list()
    [0.5, 1.0, 1.0, 0.5, 0.0, None]
    """
    value = preference.cast(pl.Float64)
    rounded = pl.when(value == 1.5).then(pl.lit(0.0)).otherwise(value).round(
        0, mode="half_to_even"
    )
    return _counted(pl.when(rounded == 0).then(pl.lit(1.5)).otherwise(rounded)) - 1.0


def resolve_policy(policy: str | Policy) -> Policy:
    """The policy named ``policy`` (or ``policy`` itself).

    >>> resolve_policy("mtbench").name
    'mtbench'
    """
    if isinstance(policy, Policy):
        return policy
    return POLICIES.resolve(policy)


def list_policies() -> pl.DataFrame:
    """The policies as a table: name, description, reference.

    >>> list_policies()["name"].to_list()
    ['default', 'mtbench', 'arena_hard', 'alpaca_eval']
    """
    return POLICIES.frame()
