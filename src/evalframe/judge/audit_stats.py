"""The judge audit's numbers: each measure from summed statistics, with bootstrap intervals.

Every measure is a formula of sums of per-row statistics (:mod:`evalframe.judge.audit_rows`):
counts and sums for the rates and the length slope, confusion cells for agreement and Cohen's
kappa, item counts for Fleiss' kappa. The statistics are summed per cluster into a
(clusters x statistics) matrix per group; the point estimate is the formula of its column
sums, and a bootstrap replicate the formula of the column sums reweighted by one multinomial
draw of the clusters (``numpy.random.default_rng(seed)``, fresh for each group, drawn in
blocks so that memory stays bounded however many clusters), so every judge and measure of a
group is resampled with the same draws and nothing is re-read. The interval is the percentile
interval of the replicates in which the measure is defined.

>>> import numpy as np
>>> replicates(np.array([[1.0, 0.0], [1.0, 1.0]]), 3, seed=0).tolist()
[[2.0, 1.0], [2.0, 1.0], [2.0, 2.0]]
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl

from evalframe.judge.audit_rows import ALL, CELLS, CLUSTER_INDEX, FLEISS_STATS, JUDGE
from evalframe.judge.kappa import cohen_kappa, fleiss_kappa
from evalframe.stats.signature import Signature

__all__ = [
    "AUDIT_COLUMNS", "MEASURES", "Context", "Measure", "evaluate", "measure_kinds", "replicates",
]

#: Every measure, in the order the table lists them.
MEASURES = (
    "position_bias", "flip_rate", "length_bias", "self_win_rate", "self_preference",
    "agreement", "cohen_kappa", "fleiss_kappa",
)
#: The columns after the ``by`` keys.
AUDIT_COLUMNS = (
    "judge", "measure", "value", "ci_low", "ci_high", "n", "n_excluded", "signature",
)
#: Replicate weights drawn at once: at most this many (replicates x clusters) cells.
_BLOCK_CELLS = 4_000_000


@dataclass(frozen=True)
class Measure:
    """A measure: its per-row statistics (summed per cluster) and the formula on their sums."""

    name: str
    stats: tuple[str, ...]
    n: str
    excluded: str
    formula: Callable[[np.ndarray], np.ndarray]  # (replicates, len(stats)) -> (replicates,)


def _ratio(x: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(x[:, 0] > 0, x[:, 1] / x[:, 0], np.nan)


def _slope(x: np.ndarray) -> np.ndarray:
    """Least-squares slope on the standardised difference from ``n, Σd, Σy, Σd², Σdy``."""
    n, sd, sy, sdd, sdy = x.T
    with np.errstate(divide="ignore", invalid="ignore"):
        s_dd = sdd - sd * sd / n
        s_dy = sdy - sd * sy / n
        slope = s_dy / np.sqrt(s_dd * (n - 1.0))
    defined = (n >= 2) & (s_dd > 1e-12 * np.maximum(sdd, 1.0))
    return np.where(defined, slope, np.nan)


def _agreement(x: np.ndarray) -> np.ndarray:
    cells = x.reshape(len(x), 3, 3)
    total = cells.sum(axis=(1, 2))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(total > 0, np.trace(cells, axis1=1, axis2=2) / total, np.nan)


def measure_kinds(kappa_weights: str | None) -> dict[str, Measure]:
    """Every measure but Fleiss' kappa (whose formula needs the group's rater count)."""
    return {
        "position_bias": Measure("position_bias", ("__pb_d", "__pb_f"), "__pb_d", "__pb_x",
                                  _ratio),
        "flip_rate": Measure("flip_rate", ("__fr_n", "__fr_f"), "__fr_n", "__fr_x", _ratio),
        "length_bias": Measure(
            "length_bias", ("__lb_n", "__lb_d", "__lb_y", "__lb_dd", "__lb_dy"), "__lb_n",
            "__lb_x", _slope,
        ),
        "self_win_rate": Measure("self_win_rate", ("__sw_n", "__sw_y"), "__sw_n", "__sw_x",
                                  _ratio),
        "self_preference": Measure("self_preference", ("__sp_n", "__sp_v"), "__sp_n",
                                    "__sp_x", _ratio),
        "agreement": Measure("agreement", CELLS, "__ck_n", "__ck_x", _agreement),
        "cohen_kappa": Measure(
            "cohen_kappa", CELLS, "__ck_n", "__ck_x",
            lambda x: cohen_kappa(x.reshape(len(x), 3, 3), kappa_weights),
        ),
    }


@dataclass(frozen=True)
class Context:
    """What an audit was asked: the group keys, measures, bootstrap, and what the signature says."""

    keys: list[str]
    chosen: tuple[str, ...]
    kinds: dict[str, Measure]
    bootstrap: int
    seed: int
    ci: float
    source: str | None
    kappa_weights: str | None
    cluster: str | None
    human: bool
    self_models: Mapping[str, str | Sequence[str]]


def replicates(stats: np.ndarray, bootstrap: int, *, seed: int) -> np.ndarray:
    """``(bootstrap, k)``: the column sums of ``stats`` (clusters x k) under resampling."""
    clusters = stats.shape[0]
    rng = np.random.default_rng(seed)
    out = np.empty((bootstrap, stats.shape[1]))
    block = max(1, _BLOCK_CELLS // max(clusters, 1))
    probabilities = np.full(clusters, 1.0 / clusters)
    for start in range(0, bootstrap, block):
        size = min(block, bootstrap - start)
        weights = rng.multinomial(clusters, probabilities, size=size).astype(np.float64)
        out[start:start + size] = weights @ stats
    return out


def _scatter(part: pl.DataFrame, columns: Sequence[str], clusters: int) -> np.ndarray:
    matrix = np.zeros((clusters, len(columns)))
    if part.height:
        sums = part.group_by(CLUSTER_INDEX).agg(pl.col(list(columns)).sum())
        index = sums[CLUSTER_INDEX].to_numpy()
        matrix[index] = sums.select(columns).to_numpy().astype(np.float64)
    return matrix


@dataclass(frozen=True)
class _Slot:
    """One row of the table: where its statistics are in the group's matrix (or none)."""

    judge: str | None
    measure: str
    columns: slice | None = None  # the formula's statistics
    n: int = 0  # the column counting units
    excluded: int = 0  # the column counting units left out
    formula: Callable[[np.ndarray], np.ndarray] = _ratio


def _group_slots(
    part: pl.DataFrame, items: pl.DataFrame | None, judges: list[str | None], clusters: int,
    context: Context,
) -> tuple[list[_Slot], np.ndarray]:
    """The rows of one group, and its (clusters x statistics) matrix they read."""
    slots: list[_Slot] = []
    blocks: list[np.ndarray] = []
    width = 0

    def add(frame: pl.DataFrame, stats: Sequence[str], n: str, excluded: str) -> tuple[slice,
                                                                                      int, int]:
        nonlocal width
        columns = list(dict.fromkeys([*stats, n, excluded]))
        blocks.append(_scatter(frame, columns, clusters))
        start = width
        width += len(columns)
        return (slice(start, start + len(stats)), start + columns.index(n),
                start + columns.index(excluded))

    for judge in judges:
        mine = part.filter(pl.col(JUDGE).is_null() if judge is None else pl.col(JUDGE) == judge)
        for name in context.chosen:
            if name == "fleiss_kappa":
                continue
            kind = context.kinds[name]
            if kind.n not in mine.columns:
                slots.append(_Slot(judge, name))
                continue
            columns, n, excluded = add(mine, kind.stats, kind.n, kind.excluded)
            slots.append(_Slot(judge, name, columns, n, excluded, kind.formula))
    if "fleiss_kappa" in context.chosen:
        names = " + ".join(str(judge) for judge in judges)
        if items is None or len(judges) < 2:
            slots.append(_Slot(names, "fleiss_kappa"))
        else:
            columns, n, excluded = add(items, FLEISS_STATS[:5], "__fk_n", "__fk_x")
            raters = len(judges)

            def formula(x: np.ndarray) -> np.ndarray:
                return fleiss_kappa(x[:, 0], x[:, 1:4], x[:, 4], raters)

            slots.append(_Slot(names, "fleiss_kappa", columns, n, excluded, formula))
    matrix = np.hstack(blocks) if blocks else np.zeros((clusters, 0))
    return slots, matrix


def evaluate(rows: pl.DataFrame, fleiss: pl.DataFrame | None, context: Context) -> pl.DataFrame:
    """The audit table of the rows' statistics (and Fleiss' items), one row per group, judge
    and measure."""
    keys = context.keys
    group = keys or [ALL]
    out: list[dict[str, object]] = []
    undefined: list[str] = []
    partitions = rows.partition_by(group, maintain_order=True, as_dict=True)
    fleiss_parts = (
        fleiss.partition_by(group, maintain_order=True, as_dict=True)
        if fleiss is not None else {}
    )
    for group_key, part in partitions.items():
        clusters = int(part[CLUSTER_INDEX].max()) + 1
        key_values = dict(zip(keys, group_key, strict=True)) if keys else {}
        judges = part[JUDGE].unique().sort(nulls_last=True).to_list()
        slots, stats = _group_slots(part, fleiss_parts.get(group_key), judges, clusters,
                                    context)
        totals = stats.sum(axis=0, keepdims=True)
        resampled = (
            replicates(stats, context.bootstrap, seed=context.seed)
            if context.bootstrap and stats.shape[1] else None
        )
        for slot in slots:
            row: dict[str, object] = {
                **key_values, "judge": slot.judge, "measure": slot.measure, "value": None,
                "ci_low": None, "ci_high": None, "n": 0, "n_excluded": None,
                "signature": _signature(slot.measure, slot.judge, context),
            }
            out.append(row)
            if slot.columns is None:
                continue
            row["n"] = round(float(totals[0, slot.n]))
            row["n_excluded"] = round(float(totals[0, slot.excluded]))
            value = float(slot.formula(totals[:, slot.columns])[0])
            if not math.isfinite(value):
                continue
            row["value"] = value
            if resampled is None:
                continue
            draws = slot.formula(resampled[:, slot.columns])
            finite = draws[np.isfinite(draws)]
            if len(finite) < len(draws):
                where = f"judge {slot.judge}" + (f", {key_values}" if keys else "")
                undefined.append(f"{slot.measure} ({where}): {len(draws) - len(finite)} of "
                                 f"{len(draws)}")
            if len(finite) >= 2:
                low, high = np.quantile(finite, [(1 - context.ci) / 2, (1 + context.ci) / 2])
                row["ci_low"], row["ci_high"] = float(low), float(high)
    if undefined:
        warnings.warn(
            "audit: bootstrap replicates in which a measure is undefined (no unit drawn, one "
            "label only) are left out of its interval: " + "; ".join(undefined),
            stacklevel=3,
        )
    return _table(out, rows, context)


def _table(out: list[dict[str, object]], rows: pl.DataFrame, context: Context) -> pl.DataFrame:
    keys = context.keys
    schema: dict[str, pl.DataType] = {key: rows.schema[key] for key in keys}
    schema.update({
        "judge": pl.String(), "measure": pl.String(), "value": pl.Float64(),
        "ci_low": pl.Float64(), "ci_high": pl.Float64(), "n": pl.UInt32(),
        "n_excluded": pl.UInt32(), "signature": pl.String(),
    })
    table = pl.DataFrame(out, schema=schema, orient="row") if out else pl.DataFrame(
        schema=schema
    )
    order = {name: i for i, name in enumerate(MEASURES)}
    table = table.with_columns(
        pl.col("measure").replace_strict(order, return_dtype=pl.Int64).alias("__order"),
        (pl.col("measure") == "fleiss_kappa").alias("__together"),
    )
    # each judge's measures, then the measures of the judges together
    table = table.sort([*keys, "__together", "judge", "__order"], nulls_last=True,
                       maintain_order=True)
    return table.select(*keys, *AUDIT_COLUMNS)


def _signature(measure: str, judge: str | None, context: Context) -> str:
    """What determines a row's number: the measure and its rules, the bootstrap, the judge."""
    pairs: list[tuple[str, str]] = [("audit", measure)]
    if measure not in ("position_bias", "flip_rate"):
        pairs.append(("verdict", context.source or "-"))
        pairs.append(("inconsistent", "tie"))
    if measure == "length_bias":
        pairs.append(("slope", "ols-on-std-length-diff-chars"))
    if measure in ("self_win_rate", "self_preference") and judge is not None:
        own = context.self_models.get(judge, ())
        listed = sorted({judge, *([own] if isinstance(own, str) else own)})
        pairs.append(("self", ",".join(listed)))
    if measure == "self_preference":
        pairs.append(("reference", "human" if context.human else "other-judges"))
    if measure == "cohen_kappa":
        pairs.append(("weights", context.kappa_weights or "none"))
    pairs.append(("B", str(context.bootstrap)))
    if context.bootstrap:
        pairs += [("seed", str(context.seed)), ("resample", context.cluster or "row"),
                  ("ci", f"percentile-{context.ci:g}")]
    if judge is not None:
        pairs.append(("judge", judge))
    return str(Signature(tuple(pairs)))
