"""A statistical regression gate for continuous integration: :func:`gate`.

A candidate's scored dump is compared with a baseline's on the items both answered (the
paired tests of :func:`~evalframe.stats.compare.compare`), per ``by`` group and metric,
and the gate decides:

- **regressed** (exit code 1): the candidate is significantly *worse* in at least one
  group, by a one-sided test at ``alpha`` after the multiple-comparison ``correction``
  over every group and metric of the gate (one family: the gate answers one question,
  "did anything regress?", so Holm keeps the probability of a false alarm at or below
  ``alpha`` however many tasks there are);
- **underpowered** (exit code 3): nothing regressed, but some group is too small to
  detect a regression of ``mde`` with probability ``power``: its silence is not evidence.
  The power is that of the test actually run (McNemar's exact test for 0/1 scores on
  independent pairs, the paired t (noncentral t) otherwise, the bootstrap's normal
  approximation for corpus metrics) at the level of each comparison after the correction
  (``alpha / m`` for ``m`` comparisons, what Holm's first step needs), from the observed
  spread of the paired differences (for McNemar, the observed rate of discordant pairs,
  at least ``mde``);
- **passed** (exit code 0): no group regressed and every group could have detected
  ``mde``.

Worse is lower for a metric whose higher values are better, higher otherwise (the
metric's registry entry says which); a plain score column needs ``higher_is_better=``.
The one-sided p-value of a regression is McNemar's exact binomial tail ``P(Binom(b + c,
1/2) <= b)`` (``b`` pairs only the candidate got right, ``c`` only the baseline); for the
other tests, half the two-sided p-value of ``compare``'s test when the difference points
the worse way (exact for the paired t), else one minus that half.

>>> import polars as pl, evalframe as ef
>>> base = pl.DataFrame({"sample_id": range(400), "prediction": ["a"] * 300 + ["b"] * 100,
...                      "gold": ["a"] * 400})
>>> cand = base.with_columns(prediction=pl.Series(["a"] * 250 + ["b"] * 150))
>>> result = gate(ef.score(cand, ["exact_match"]), ef.score(base, ["exact_match"]), mde=0.05)
>>> result.status, result.exit_code
('regressed', 1)
>>> result.table.select("n_pairs", "diff", "status").row(0)
(400, -0.125, 'regressed')
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from evalframe.errors import EvalframeError, OptionError
from evalframe.io.load import Source, scan
from evalframe.stats.aggregate import group_keys
from evalframe.stats.columns import MetricColumn, find_columns, recorded_in
from evalframe.stats.compare import adjust_p_values, check_options, compare
from evalframe.stats.methods import COMPARISON_TESTS, either
from evalframe.stats.power import mde as detectable_effect
from evalframe.stats.power import power as power_of_test
from evalframe.stats.signature import signature_fields

__all__ = ["EXIT_CODES", "GATE_COLUMNS", "GateResult", "gate"]

#: The exit code of each outcome (``evalframe gate`` exits with it).
EXIT_CODES = {"passed": 0, "regressed": 1, "underpowered": 3}

#: Columns of the gate's table after the ``by`` keys.
GATE_COLUMNS = (
    "metric",
    "n_pairs",
    "n_null_pairs",
    "n_unmatched_candidate",
    "n_unmatched_baseline",
    "value_candidate",
    "value_baseline",
    "diff",
    "ci_low",
    "ci_high",
    "p_value",
    "p_adjusted",
    "power",
    "detectable",
    "status",
    "reason",
    "method",
    "signature",
)

_SIDE = "__ef_gate_side"
_CANDIDATE, _BASELINE = "candidate", "baseline"
_UNMATCHED = ("error", "ignore")


@dataclass(frozen=True)
class GateResult:
    """What :func:`gate` decided, and why.

    ``status``: ``"passed"``, ``"regressed"`` or ``"underpowered"``; ``exit_code`` its
    exit code (0, 1, 3); ``table``: one row per group and metric (the ``by`` keys, then
    :data:`GATE_COLUMNS`); the options it ran with. ``str(result)`` is a one-screen
    summary; :meth:`to_markdown` and :meth:`to_json` are for CI systems.
    """

    status: str
    table: pl.DataFrame
    by: tuple[str, ...]
    mde: float
    alpha: float
    power: float
    correction: str | None
    ci: float

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.status]

    @property
    def regressions(self) -> pl.DataFrame:
        """The rows that regressed significantly."""
        return self.table.filter(pl.col("status") == "regressed")

    @property
    def underpowered(self) -> pl.DataFrame:
        """The rows too small to detect a regression of ``mde`` at ``power``."""
        return self.table.filter(pl.col("status") == "underpowered")

    def __str__(self) -> str:
        from evalframe.stats.gate_output import summary

        return summary(self)

    def to_markdown(self) -> str:
        """The summary as Markdown (a CI job summary, a pull-request comment)."""
        from evalframe.stats.gate_output import markdown

        return markdown(self)

    def to_json(self) -> str:
        """The decision and every row as JSON (for CI systems)."""
        from evalframe.stats.gate_output import as_json

        return as_json(self)

    def _repr_markdown_(self) -> str:
        return self.to_markdown()


def gate(
    candidate: Source,
    baseline: Source,
    *,
    mde: float,
    by: str | Sequence[str] | None = None,
    on: str | Sequence[str] = "sample_id",
    metrics: Sequence[str] | None = None,
    alpha: float = 0.05,
    power: float = 0.8,
    correction: str | None = "holm",
    method: str = "auto",
    cluster: str | bool | None = None,
    missing: str = "wrong",
    unmatched: str = "error",
    higher_is_better: Mapping[str, bool] | None = None,
    model: str = "model",
    candidate_model: Any = None,
    baseline_model: Any = None,
    ci: float = 0.95,
    bootstrap: int = 1000,
    seed: int = 0,
    columns: Mapping[str, str] | None = None,
) -> GateResult:
    """Decide whether ``candidate`` regressed against ``baseline``: passed, regressed or
    underpowered (see :mod:`evalframe.stats.gate`).

    Parameters
    ----------
    candidate, baseline
        Scored dumps (frames, or files :func:`evalframe.scan` reads), one model each, or
        one model each chosen with ``candidate_model`` / ``baseline_model``.
    mde
        The smallest regression that matters (in the metric's units: 0.02 is two points
        of accuracy). Groups that cannot detect it at ``power`` are underpowered.
    by
        Grouping columns (e.g. ``"task"``): each group is tested on its own.
    on
        The column(s) identifying an item (as ``compare``).
    metrics
        The metric columns to gate on (default: every metric column; both dumps must
        have the same ones).
    alpha
        The false-alarm rate of the whole gate (one-sided tests, corrected).
    power
        The probability with which a regression of ``mde`` must be detectable.
    correction
        ``"holm"`` (default), ``"bh"`` or None, over every group and metric together.
    method, cluster, missing, ci, bootstrap, seed, columns
        As :func:`evalframe.compare` (``method`` must be a test: not ``"bayes"``).
    unmatched
        ``"error"`` (default): an item only one dump has is an error (a candidate that
        skipped items would otherwise be judged on the rest); ``"ignore"``: compare the
        items both have, counting the others in ``n_unmatched_*``.
    higher_is_better
        Column -> whether higher is better, for plain score columns (a registered
        metric knows it) or to override.
    model, candidate_model, baseline_model
        When a dump holds several models (a ``model`` column), the one to take from each.

    Returns
    -------
    GateResult
    """
    _check_gate_options(mde, alpha, power, unmatched, method)
    check_options(ci=ci, method=method, bootstrap=bootstrap, seed=seed,
                  correction=correction, missing=missing)
    keys = group_keys(by)
    sides = {
        _CANDIDATE: _side(candidate, _CANDIDATE, model, candidate_model),
        _BASELINE: _side(baseline, _BASELINE, model, baseline_model),
    }
    _check_keys(sides, keys, on, cluster)
    recorded = _recorded(candidate, baseline)
    names = _metric_names(sides, metrics, columns, recorded)
    frame = pl.concat(
        [side.with_columns(pl.lit(name).alias(_SIDE)) for name, side in sides.items()],
        how="diagonal_relaxed",
    )
    found = find_columns(frame, names, columns=columns, recorded=recorded[0],
                         recorded_roles=recorded[1])
    directions = _directions(found.columns, higher_is_better)
    table = compare(
        frame, baseline=_BASELINE, model=_SIDE, by=keys or None, on=on, metrics=names,
        cluster=cluster, ci=ci, method=method, bootstrap=bootstrap, seed=seed,
        correction=None, missing=missing, columns=columns,
    )
    if unmatched == "error":
        _check_matched(table, frame, keys, on)
    decided = _decide(table, frame, keys, directions, mde=mde, alpha=alpha,
                      target=power, correction=correction)
    statuses = set(decided["status"].to_list())
    status = ("regressed" if "regressed" in statuses
              else "underpowered" if "underpowered" in statuses else "passed")
    return GateResult(status=status, table=decided, by=tuple(keys), mde=mde, alpha=alpha,
                      power=power, correction=correction, ci=ci)


def check_gate_options(*, mde: float, alpha: float = 0.05, power: float = 0.8,
                       unmatched: str = "error", method: str = "auto") -> None:
    """Check the gate's own options before any input is read (``OptionError``)."""
    _check_gate_options(mde, alpha, power, unmatched, method)


def _check_gate_options(mde: float, alpha: float, power: float, unmatched: str,
                        method: str) -> None:
    if isinstance(mde, bool) or not isinstance(mde, int | float) or not (
        math.isfinite(mde) and mde > 0
    ):
        raise OptionError(f"mde={mde!r}: expected the smallest regression that matters, a "
                          "number > 0 in the metric's units (0.02: two points of accuracy)",
                          option="mde", value=mde, problem="expected a number > 0")
    for name, value in (("alpha", alpha), ("power", power)):
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < 1:
            raise OptionError(f"{name}={value!r}: expected a number strictly between 0 and 1",
                              option=name, value=value,
                              problem="expected a number strictly between 0 and 1")
    if not power > alpha:
        raise OptionError(f"power={power!r} must exceed alpha={alpha!r}", option="power",
                          value=power, problem=f"must exceed alpha={alpha!r}")
    if unmatched not in _UNMATCHED:
        raise OptionError(f"unmatched={unmatched!r}: expected {either(_UNMATCHED)}",
                          option="unmatched", value=unmatched,
                          problem=f"expected {either(_UNMATCHED)}")
    entry = COMPARISON_TESTS.get(method) if isinstance(method, str) else None
    if entry is not None and not entry.automatic and not _is_test(entry.name):
        tests = [t.name for t in COMPARISON_TESTS.entries() if _is_test(t.name) or t.automatic]
        raise OptionError(
            f"method={method!r} gives no p-value for the gate to decide on; expected "
            f"{either(tests)}", option="method", value=method,
            problem=f"gives no p-value; expected {either(tests)}",
        )


#: The compare methods the gate decides with (they give a p-value), and the power
#: calculation of each: the test :func:`evalframe.power` plans for.
_PLANNED_AS = {"mcnemar": "mcnemar_exact", "paired": "t", "randomization": "t",
               "bootstrap": "z"}


def _is_test(name: str) -> bool:
    return name in _PLANNED_AS


def _side(source: Source, name: str, model: str, chosen: Any) -> pl.LazyFrame:
    """One dump, reduced to one model, as a LazyFrame."""
    frame = scan(source)
    schema = frame.collect_schema()
    if _SIDE in schema:
        raise EvalframeError(f"the {name}'s dump has a column {_SIDE!r}, which the gate uses")
    if model not in schema:
        if chosen is not None:
            raise EvalframeError(
                f"{name}_model={chosen!r}: the {name}'s dump has no model column {model!r}"
            )
        return frame
    models = frame.select(pl.col(model).unique(maintain_order=True)).collect()[model]
    if chosen is None:
        if models.len() > 1:
            raise EvalframeError(
                f"the {name}'s dump holds {models.len()} models in its {model!r} column "
                f"({models.head(5).to_list()}); choose one with {name}_model=... "
                f"(--{name}-model)"
            )
        return frame
    if chosen not in models.to_list():
        raise EvalframeError(
            f"{name}_model={chosen!r} is not in the {name}'s {model!r} column; present: "
            f"{models.head(10).to_list()}"
        )
    return frame.filter(pl.col(model) == chosen)


def _check_keys(sides: Mapping[str, pl.LazyFrame], keys: list[str],
                on: str | Sequence[str], cluster: str | bool | None) -> None:
    """Every ``by`` / ``on`` / ``cluster`` column is in both dumps (said of the dump
    that lacks it)."""
    named = {"by": keys, "on": [on] if isinstance(on, str) else list(on)}
    if isinstance(cluster, str):
        named["cluster"] = [cluster]
    for side, frame in sides.items():
        schema = frame.collect_schema()
        for option, names in named.items():
            absent = [name for name in names if isinstance(name, str) and name not in schema]
            if absent:
                raise OptionError(
                    f"{option}={absent[0]!r}: the {side}'s dump has no column {absent[0]!r}; "
                    f"available: {', '.join(schema)}",
                    option=option, value=absent[0], clause=False,
                    problem=f"the {side}'s dump has no such column; available: "
                    f"{', '.join(schema)}",
                )


def _recorded(candidate: Source, baseline: Source) -> tuple[dict[str, str], dict[str, str]]:
    """The metric columns and roles older ``evalframe score`` files recorded, which the two
    dumps must agree on."""
    (metrics_c, roles_c), (metrics_b, roles_b) = recorded_in(candidate), recorded_in(baseline)
    for column in metrics_c.keys() & metrics_b.keys():
        if metrics_c[column] != metrics_b[column]:
            raise EvalframeError(
                f"metric column {column!r} was scored as {metrics_c[column]!r} in the "
                f"candidate's dump and as {metrics_b[column]!r} in the baseline's: rescore "
                "one of them so both measure the same thing"
            )
    return {**metrics_b, **metrics_c}, {**roles_b, **roles_c}


def _metric_names(
    sides: Mapping[str, pl.LazyFrame], metrics: Sequence[str] | None,
    columns: Mapping[str, str] | None, recorded: tuple[dict[str, str], dict[str, str]],
) -> list[str]:
    """The metric columns to gate on: both dumps must have every one of them."""
    if metrics is not None:
        if isinstance(metrics, str) or not all(isinstance(name, str) for name in metrics):
            raise OptionError(f"metrics={metrics!r}: expected a list of column names",
                              option="metrics", value=metrics,
                              problem="expected a list of column names")
        for name, side in sides.items():
            absent = [column for column in metrics if column not in side.collect_schema()]
            if absent:
                raise EvalframeError(
                    f"metric column(s) {absent} are not in the {name}'s dump"
                )
        return list(metrics)
    found = {
        name: [c.column for c in find_columns(side, None, columns=columns,
                                              recorded=recorded[0],
                                              recorded_roles=recorded[1]).columns]
        for name, side in sides.items()
    }
    only = {name: [c for c in cols if c not in found[other]]
            for (name, cols), other in zip(found.items(), [_BASELINE, _CANDIDATE], strict=True)}
    for name, extra in only.items():
        if extra:
            raise EvalframeError(
                f"metric column(s) {extra} are in the {name}'s dump only; score both dumps "
                "with the same metrics, or choose the columns with metrics=[...] (-m)"
            )
    names = found[_CANDIDATE]
    if not names:
        raise EvalframeError(
            "no metric columns in the dumps: score them first, or name the columns with "
            "metrics=[...] (-m)"
        )
    return names


def _directions(
    found: Sequence[MetricColumn], given: Mapping[str, bool] | None
) -> dict[str, bool]:
    given = dict(given or {})
    directions = {}
    for column in found:
        if column.column in given:
            directions[column.column] = bool(given.pop(column.column))
        elif column.request is not None:
            directions[column.column] = column.request.spec.higher_is_better
        else:
            raise EvalframeError(
                f"column {column.column!r} is not a scored metric: the gate cannot know "
                "whether higher is better; say so with higher_is_better={"
                f"{column.column!r}: True}} (--higher-is-better / --lower-is-better)"
            )
    if given:
        raise OptionError(
            f"higher_is_better names column(s) {sorted(given)} that are not gated",
            option="higher_is_better", value=sorted(given), problem="names no gated column",
        )
    return directions


def _check_matched(table: pl.DataFrame, frame: pl.LazyFrame, keys: list[str],
                   on: str | Sequence[str]) -> None:
    for side, column in ((_CANDIDATE, "n_unmatched_baseline"),
                         (_BASELINE, "n_unmatched_model")):
        count = int(table[column].max() or 0)
        if not count:
            continue
        items = [*keys, *([on] if isinstance(on, str) else on)]
        items = list(dict.fromkeys(items))
        other = _BASELINE if side == _CANDIDATE else _CANDIDATE
        first = (
            frame.filter(pl.col(_SIDE) == other).select(items).unique(maintain_order=True)
            .join(frame.filter(pl.col(_SIDE) == side).select(items).unique(),
                  on=items, how="anti", nulls_equal=True)
            .head(1).collect()
        )
        where = ", ".join(f"{k}={v!r}" for k, v in first.row(0, named=True).items()) \
            if first.height else "?"
        raise EvalframeError(
            f"the {side}'s dump lacks {count} item(s) the {other}'s has (first: {where}); "
            "a gate on the items both have would judge the rest only: score the same "
            "items, or pass unmatched='ignore' (--allow-unmatched)"
        )


def _decide(
    table: pl.DataFrame, frame: pl.LazyFrame, keys: list[str], directions: Mapping[str, bool],
    *, mde: float, alpha: float, target: float, correction: str | None,
) -> pl.DataFrame:
    diff = table["diff"].cast(pl.Float64).fill_null(math.nan).to_numpy()
    two_sided = table["p_value"].cast(pl.Float64).fill_null(math.nan).to_numpy()
    higher = np.array([directions[m] for m in table["metric"].to_list()], dtype=bool)
    worse = np.where(higher, diff < 0, diff > 0)
    with np.errstate(invalid="ignore"):
        one_sided = np.where(worse, two_sided / 2, 1 - two_sided / 2)
    one_sided = _exact_mcnemar(table, higher, one_sided)
    adjusted = adjust_p_values(one_sided, correction) if correction else one_sided
    family = int(np.count_nonzero(~np.isnan(one_sided)))
    level = alpha / family if correction and family > 1 else alpha
    power_at, detectable, reasons = _planned(table, frame, keys, mde=mde, level=level,
                                             target=target)
    regressed = worse & (adjusted < alpha)
    under = ~regressed & ~(detectable <= mde)
    status = np.where(regressed, "regressed", np.where(under, "underpowered", "passed"))
    reasons = [
        None if s != "underpowered" else reason or (
            f"detects {d:.3g} at power {target:g}, not {mde:g}"
        )
        for s, reason, d in zip(status, reasons, detectable, strict=True)
    ]
    out = table.rename({"value_model": "value_candidate",
                        "n_unmatched_model": "n_unmatched_candidate"}).with_columns(
        pl.Series("p_value", one_sided, dtype=pl.Float64, nan_to_null=True),
        pl.Series("p_adjusted", adjusted, dtype=pl.Float64, nan_to_null=True),
        pl.Series("power", power_at, dtype=pl.Float64, nan_to_null=True),
        pl.Series("detectable", detectable, dtype=pl.Float64, nan_to_null=True),
        pl.Series("status", status.tolist(), dtype=pl.String),
        pl.Series("reason", reasons, dtype=pl.String),
        pl.col("signature") + pl.lit(
            f"|gate:one-sided|alpha:{alpha:g}|correction:{correction or 'none'}"
            f"|mde:{mde:g}|power:{target:g}"
        ),
    )
    return out.select(*keys, *GATE_COLUMNS)


def discordant_counts(n: int, diff: float, stderr: float) -> tuple[int, int]:
    """``(b, c)``: the pairs only the candidate / only the baseline got right, from the
    paired summary of 0/1 scores (``n`` pairs, mean difference, its standard error).

    The differences are -1, 0 or 1, so ``b - c = n diff`` and their variance (``ddof=1``)
    ``s^2 = (b + c - n diff^2) / (n - 1)`` with ``s^2 = n stderr^2``.

    Two wins and six losses in 40 pairs: ``diff = -0.1``, ``s^2 = (8 - 40 * 0.01) / 39``:

    >>> discordant_counts(40, -0.1, (7.6 / 39 / 40) ** 0.5)
    (2, 6)
    """
    difference = round(n * diff)
    discordant = round(n * stderr * stderr * (n - 1) + n * diff * diff)
    return (discordant + difference) // 2, (discordant - difference) // 2


def _exact_mcnemar(table: pl.DataFrame, higher: np.ndarray,
                   one_sided: np.ndarray) -> np.ndarray:
    """McNemar rows: the exact one-sided p-value of a regression, ``P(Binom(b + c, 1/2) <=
    b)`` (fewer wins than losses; the reverse for a metric whose lower values are better),
    where halving the two-sided p-value is exact only in the worse direction."""
    from scipy.stats import binom

    out = one_sided.copy()
    for i, row in enumerate(table.iter_rows(named=True)):
        if row["method"] != "mcnemar" or row["stderr"] is None or row["diff"] is None:
            continue
        b, c = discordant_counts(row["n_pairs"], row["diff"], row["stderr"])
        wins = b if higher[i] else c
        out[i] = float(binom.cdf(wins, b + c, 0.5)) if b + c else 1.0
    return out


def _planned(
    table: pl.DataFrame, frame: pl.LazyFrame, keys: list[str], *, mde: float, level: float,
    target: float,
) -> tuple[np.ndarray, np.ndarray, list[str | None]]:
    """Per row: the power to detect a regression of ``mde`` with the test run, the smallest
    regression detectable at ``target``, and why there is none (too few pairs...)."""
    clusters = _cluster_counts(table, frame, keys)
    power_at = np.full(table.height, math.nan)
    detectable = np.full(table.height, math.nan)
    reasons: list[str | None] = [None] * table.height
    for i, row in enumerate(table.iter_rows(named=True)):
        n, stderr, diff = row["n_pairs"], row["stderr"], row["diff"]
        if n < 2 or stderr is None or diff is None or not math.isfinite(stderr):
            reasons[i] = f"too few pairs to test ({n})"
            continue
        test = _PLANNED_AS[row["method"]]
        options: dict[str, Any] = {"alpha": level, "two_sided": False, "test": test}
        if test == "mcnemar_exact":
            # a regression of mde needs at least mde discordant pairs
            observed = sum(discordant_counts(n, diff, stderr)) / n
            options["discordant"] = min(max(observed, mde), 1.0)
        else:
            variance = stderr * stderr * n
            if not variance > 0:
                reasons[i] = "no spread in the paired differences: power unknown"
                continue
            options["variance"] = variance
            if test == "t" and clusters[i] is not None:
                options["clusters"] = clusters[i]
                if clusters[i] < 2:
                    reasons[i] = f"too few clusters to test ({clusters[i]})"
                    continue
        power_at[i] = power_of_test(mde, n, **options)
        detectable[i] = detectable_effect(n, power=target, **options)
    return power_at, detectable, reasons


def _cluster_counts(table: pl.DataFrame, frame: pl.LazyFrame,
                    keys: list[str]) -> list[int | None]:
    """The number of clusters of each row's pairs (None where the pairs are independent):
    the candidate's distinct values of the column its signature names as the cluster."""
    counts: list[int | None] = []
    cache: dict[str, pl.DataFrame] = {}
    for row in table.iter_rows(named=True):
        column = signature_fields(row["signature"]).get("cluster")
        if not column:
            counts.append(None)
            continue
        if column not in cache:
            grouped = frame.filter(pl.col(_SIDE) == _CANDIDATE)
            cache[column] = (
                grouped.group_by(keys).agg(__ef_n=pl.col(column).n_unique()).collect()
                if keys else grouped.select(__ef_n=pl.col(column).n_unique()).collect()
            )
        found = cache[column]
        for key in keys:
            found = found.filter(pl.col(key).eq_missing(row[key]))
        counts.append(int(found["__ef_n"][0]) if found.height else None)
    return counts
