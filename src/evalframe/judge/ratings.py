"""Ratings of many models from pairwise outcomes: Bradley-Terry, Elo-scaled, bootstrap intervals.

:func:`ratings` fits the Bradley-Terry model by maximum likelihood, as Chatbot Arena does
(FastChat ``fastchat/serve/monitor/rating_systems.py``, ``compute_bt``; the older
``elo_analysis.compute_mle_elo`` fits the same likelihood with scikit-learn's logistic
regression on duplicated battles): model ``i`` beats model ``j`` with probability
``1 / (1 + base ** ((R_j - R_i) / scale))``. A battle's outcome for ``model_a`` is 1 (``"A"``),
0 (``"B"``) or 0.5 (``"tie"``, and ``"inconsistent"``, which the pairwise harness counts as a
tie): a tie is half a win for each side, exactly as ``compute_mle_elo``'s duplicated battles
(one win for each side) and ``compute_bt``'s 0.5 labels count it. ``"error"`` and null
outcomes are left out; so are battles of a model against itself (they do not change the
likelihood). The ratings are Elo-scaled (``scale`` 400, ``base`` 10) and anchored: with
``anchor="m"`` model ``m`` is exactly ``init``, with ``anchor=("m", 1114)`` exactly 1114, and
with no anchor the mean rating is ``init``.

The maximum-likelihood ratings exist only when no group of models never loses to the others
(Zermelo's condition: the graph "took a point from" is strongly connected, a tie counting both
ways). A model that wins every battle has no finite rating (the likelihood keeps growing as its
rating goes up), so :func:`ratings` raises :class:`~evalframe.EvalframeError` naming the
models, instead of returning the arbitrary large number an optimiser stops at.

Intervals come from a seeded bootstrap resampled by question, as Chatbot Arena's
``compute_bootstrap_bt`` resamples with multinomial weights: the distinct (model_a, model_b,
outcome) cells are counted once per cluster (``cluster``, the question id); a replicate draws
the clusters with replacement (one multinomial draw of their counts) and refits on the
reweighted cells, so nothing is re-read per replicate. Without the cluster column, battles are
resampled one by one (Chatbot Arena's own resampling). A replicate in which the ratings do not
exist (a resample in which some model never loses) is left out of the interval and counted in
``bootstrap_dropped``, with a warning. ``ci_low``/``ci_high`` are the percentile interval of
the replicates, ``stderr`` their standard deviation.

Each model also gets a ``rank`` (1 for the highest rating) and, from the same bootstrap
replicates, ``rank_low`` / ``rank_high`` (the range of ranks it takes in the central ``ci``
share of the replicates) and ``tied_with`` (the models whose rating difference from it has a
replicate interval containing 0); see :mod:`evalframe.stats.ranks`.

With ``style=`` the fit is Chatbot Arena's style control (FastChat ``elo_analysis.py``,
``construct_style_matrices`` / ``fit_mle_elo``, and ``rating_systems.py``,
``compute_style_control``): every battle adds the standardised style differences of its two
answers (:mod:`evalframe.judge.style`) to the logit, ``ln(base) * (R_a - R_b) / scale +
features @ beta``, and the ratings and the coefficients ``beta`` are fitted together by maximum
likelihood (the references' scikit-learn fit without its small L2 penalty), one cell per
battle, with the same bootstrap by question. ``return_coefficients=True`` also returns the
coefficients (logit per standard deviation of each feature, and in Elo points).

:func:`win_rate_matrix` gives the observed win rates of every pair (ties half).

>>> import polars as pl
>>> battles = pl.DataFrame({
...     "model_a": ["x", "x", "y", "x", "y", "z"],
...     "model_b": ["y", "z", "z", "y", "x", "x"],
...     "outcome": ["A", "A", "tie", "B", "B", "B"],
... })
>>> table = ratings(battles, anchor="y", bootstrap=0)
>>> table.select("model", pl.col("rating").round(1), "wins", "losses", "ties")
shape: (3, 5)
┌───────┬────────┬──────┬────────┬──────┐
│ model ┆ rating ┆ wins ┆ losses ┆ ties │
│ ---   ┆ ---    ┆ ---  ┆ ---    ┆ ---  │
│ str   ┆ f64    ┆ u32  ┆ u32    ┆ u32  │
╞═══════╪════════╪══════╪════════╪══════╡
│ x     ┆ 1184.3 ┆ 4    ┆ 1      ┆ 0    │
│ y     ┆ 1000.0 ┆ 1    ┆ 2      ┆ 1    │
│ z     ┆ 828.5  ┆ 0    ┆ 2      ┆ 1    │
└───────┴────────┴──────┴────────┴──────┘
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import polars as pl

from evalframe.errors import EvalframeError
from evalframe.io.load import Source, scan
from evalframe.judge.style import (
    StyleSpec,
    check_style,
    standardized,
    style_counts,
    style_differences,
)
from evalframe.metrics.judge import OUTCOMES
from evalframe.stats.options import check_level, check_replicates_or_none, check_seed
from evalframe.stats.ranks import point_ranks, rank_intervals, with_ranks
from evalframe.stats.signature import Signature

__all__ = ["COEFFICIENT_COLUMNS", "RATING_COLUMNS", "Ratings", "ratings", "win_rate_matrix"]

#: The columns of :func:`ratings`.
RATING_COLUMNS = (
    "model", "rating", "stderr", "ci_low", "ci_high", "rank", "rank_low", "rank_high",
    "tied_with", "n_battles", "wins", "losses", "ties", "bootstrap_dropped", "signature",
)
#: The columns of the style coefficients (``return_coefficients=True``).
COEFFICIENT_COLUMNS = (
    "feature", "coefficient", "stderr", "ci_low", "ci_high", "elo_per_sd", "feature_mean",
    "feature_std", "bootstrap_dropped", "signature",
)
#: Ratings equal to this many Elo points share a rank (the fit is far more precise).
_RANK_DIGITS = 6
#: The smallest curvature, relative to the largest, of a fit whose parameters are identified.
_CONDITION = 1e-10
#: The smallest curvature of the mean log-likelihood of an identified fit (a separated one
#: runs off to where every battle's probability is 0 or 1, and the curvature to 0).
_FLAT = 1e-9


class Ratings(NamedTuple):
    """The ratings table and the style coefficients (``return_coefficients=True``)."""

    ratings: pl.DataFrame
    coefficients: pl.DataFrame

#: What a battle's outcome is worth to ``model_a``; errors are left out.
_VALUE = {label: value for label, value in OUTCOMES.items() if value is not None}
#: Tolerance on the largest gradient entry of the mean log-likelihood (natural units).
_GTOL = 1e-12


@dataclass(frozen=True)
class _Battles:
    """The battles as cells (model_a index, model_b index, outcome) with weights: the
    distinct cells, or, under style control, one cell per battle with its features."""

    models: list[str]
    first: np.ndarray  # model_a index per cell
    second: np.ndarray  # model_b index per cell
    outcome: np.ndarray  # 1, 0.5 or 0 per cell
    weight: np.ndarray  # summed battle weight per cell
    cluster_cells: tuple[np.ndarray, np.ndarray, np.ndarray] | None  # (cluster, cell, weight)
    n_clusters: int
    counts: pl.DataFrame  # per model: n_battles, wins, losses, ties
    features: np.ndarray  # (cells, style features), standardised; no columns without style
    feature_mean: np.ndarray  # each feature's mean before standardisation
    feature_std: np.ndarray  # and its standard deviation


def _read(
    battles: Source,
    model_a: str,
    model_b: str,
    outcome: str,
    weight: str | None,
    cluster: str | None,
    style: StyleSpec | None = None,
) -> tuple[pl.DataFrame, bool]:
    frame = scan(battles)
    schema = frame.collect_schema()
    needed = [model_a, model_b, outcome, *([weight] if weight else [])]
    if style is not None:
        if style.counted():
            needed += list(style.answers)
        needed += [column for pair in style.columns.values() for column in pair]
    absent = [name for name in dict.fromkeys(needed) if name not in schema]
    if absent:
        what = "ratings need" if style is None else "style-controlled ratings need"
        raise EvalframeError(
            f"{what} the column(s) {absent}, which the battles do not have; available: "
            f"{list(schema)}"
        )
    clustered = cluster is not None and cluster in schema
    selected = [
        pl.col(model_a).cast(pl.String).alias("a"),
        pl.col(model_b).cast(pl.String).alias("b"),
        pl.col(outcome).alias("outcome"),
        (pl.col(weight).cast(pl.Float64) if weight else pl.lit(1.0)).alias("w"),
        (pl.col(cluster) if clustered else pl.int_range(pl.len())).alias("cluster"),
    ]
    if style is not None:
        selected.append(pl.int_range(pl.len(), dtype=pl.Int64).alias("row"))
        selected += _style_inputs(style, schema)
    table = frame.select(selected).collect()
    if table.schema["outcome"] not in (pl.String, pl.Null):
        raise EvalframeError(
            f"column {outcome!r} has dtype {table.schema['outcome']}; expected the outcomes "
            f"{', '.join(map(repr, OUTCOMES))}"
        )
    wrong = table.filter(pl.col("outcome").is_not_null() & ~pl.col("outcome").is_in(OUTCOMES))
    if wrong.height:
        raise EvalframeError(
            f"column {outcome!r}: {wrong.height} battle(s) have an outcome that is not one of "
            f"{', '.join(map(repr, OUTCOMES))}; first: {wrong['outcome'][0]!r}"
        )
    kept = table.filter(
        pl.col("outcome").is_in(list(_VALUE)) & (pl.col("a") != pl.col("b"))
    )
    nulls = kept.select(
        pl.col("a").is_null().sum() + pl.col("b").is_null().sum(), pl.col("w").is_null().sum()
    ).row(0)
    if nulls[0]:
        raise EvalframeError(
            f"{nulls[0]} battle(s) have no model name (null {model_a!r} or {model_b!r})"
        )
    if nulls[1] or (weight and (kept["w"] < 0).any()):
        raise EvalframeError(
            f"weight column {weight!r} must be a non-negative number on every battle"
        )
    if clustered and kept["cluster"].null_count():
        raise EvalframeError(
            f"cluster column {cluster!r} is null in {kept['cluster'].null_count()} battle(s); "
            "every battle needs a question id (or pass cluster=None to resample battles)"
        )
    if style is not None:
        _check_style_values(kept, style)
    return kept, clustered


def _style_inputs(style: StyleSpec, schema: Mapping[str, pl.DataType]) -> list[pl.Expr]:
    """The counts ``{feature}_a`` / ``{feature}_b``: precomputed columns, or counted."""
    for name, pair in style.columns.items():
        for column in pair:
            if not schema[column].is_numeric():
                raise EvalframeError(
                    f"style_columns[{name!r}]: column {column!r} has dtype {schema[column]}; "
                    "expected counts (numbers)"
                )
    for column in style.answers if style.counted() else ():
        if schema[column] not in (pl.String, pl.Null):
            raise EvalframeError(
                f"answer column {column!r} has dtype {schema[column]}; style features are "
                "counted in the answers' text (String)"
            )
    exprs = [
        pl.col(column).cast(pl.Float64).alias(f"{name}_{side}")
        for name, pair in style.columns.items()
        for side, column in zip(("a", "b"), pair, strict=True)
    ]
    return exprs + style_counts(style.counted(), answers=style.answers,
                                length_unit=style.length_unit)


def _check_style_values(kept: pl.DataFrame, style: StyleSpec) -> None:
    """Every rated battle has both answers' counts: finite, not negative."""
    for name in [*style.features, *style.counted()]:
        for side, index in (("a", 0), ("b", 1)):
            column = f"{name}_{side}"
            if column not in kept.columns:
                continue
            source = style.columns[name][index] if name in style.columns else \
                style.answers[index]
            bad = kept.filter(
                pl.col(column).is_null() | ~pl.col(column).is_finite() | (pl.col(column) < 0)
            )
            if bad.height:
                row = bad.row(0, named=True)
                what = "the count" if name in style.columns else "the answer"
                raise EvalframeError(
                    f"style feature {name!r}: {bad.height} rated battle(s) have no usable "
                    f"{what} in {source!r} (null, negative or not finite); first: row "
                    f"{row['row']} ({row['a']} vs {row['b']}). Fill it (an empty answer is "
                    "\"\") or leave the battle out"
                )


def _prepare(
    battles: Source,
    model_a: str,
    model_b: str,
    outcome: str,
    weight: str | None,
    cluster: str | None,
    style: StyleSpec | None = None,
) -> tuple[_Battles, bool]:
    table, clustered = _read(battles, model_a, model_b, outcome, weight, cluster, style)
    if table.height == 0:
        raise EvalframeError("no battles to rate: every outcome is an error, null or a self-match")
    models = sorted(set(table["a"].to_list()) | set(table["b"].to_list()))
    if len(models) < 2:
        raise EvalframeError(f"ratings need at least two models; the battles have {models}")
    index = {name: i for i, name in enumerate(models)}
    coded = table.with_columns(
        pl.col("a").replace_strict(index, return_dtype=pl.Int64).alias("i"),
        pl.col("b").replace_strict(index, return_dtype=pl.Int64).alias("j"),
        pl.col("outcome").replace_strict(_VALUE, return_dtype=pl.Float64).alias("y"),
    )
    if style is None:
        cells = (
            coded.group_by("i", "j", "y")
            .agg(pl.col("w").sum())
            .sort("i", "j", "y")
            .with_row_index("cell")
        )
        coded = coded.join(cells.select("i", "j", "y", "cell"), on=["i", "j", "y"], how="left")
        features = np.zeros((cells.height, 0))
        mean = std = np.zeros(0)
    else:  # every battle has its own features: a cell each
        coded = coded.with_row_index("cell")
        cells = coded.select("cell", "i", "j", "y", "w")
        differences = style_differences(coded, style.features, style.normalization)
        features, mean, std = standardized(differences)
    per_cluster = coded.group_by("cluster", "cell").agg(pl.col("w").sum())
    cluster_ids = per_cluster["cluster"].unique(maintain_order=False)
    cluster_index = per_cluster.select(
        pl.col("cluster").rank("dense").cast(pl.Int64) - 1
    ).to_series().to_numpy()
    sides = pl.concat(
        [
            coded.select(
                pl.col("a").alias("model"),
                (pl.col("outcome") == "A").alias("win"),
                (pl.col("outcome") == "B").alias("loss"),
            ),
            coded.select(
                pl.col("b").alias("model"),
                (pl.col("outcome") == "B").alias("win"),
                (pl.col("outcome") == "A").alias("loss"),
            ),
        ]
    )
    counts = sides.group_by("model").agg(
        pl.len().cast(pl.UInt32).alias("n_battles"),
        pl.col("win").sum().cast(pl.UInt32).alias("wins"),
        pl.col("loss").sum().cast(pl.UInt32).alias("losses"),
        (~pl.col("win") & ~pl.col("loss")).sum().cast(pl.UInt32).alias("ties"),
    )
    prepared = _Battles(
        models=models,
        first=cells["i"].to_numpy(),
        second=cells["j"].to_numpy(),
        outcome=cells["y"].to_numpy(),
        weight=cells["w"].to_numpy(),
        cluster_cells=(
            cluster_index,
            per_cluster["cell"].cast(pl.Int64).to_numpy(),
            per_cluster["w"].to_numpy(),
        ),
        n_clusters=len(cluster_ids),
        counts=counts,
        features=features,
        feature_mean=mean,
        feature_std=std,
    )
    return prepared, clustered


def _loss(
    params: np.ndarray, battles: _Battles, weight: np.ndarray, alpha: float, reference: int
) -> tuple[float, np.ndarray, np.ndarray]:
    """The mean negative log-likelihood over the free parameters, its gradient and Hessian.

    ``params`` holds every rating but the reference model's, which is 0, then the style
    coefficients: a battle's logit is ``alpha * (theta_a - theta_b) + features @ beta``.
    """
    n = len(battles.models)
    full = np.insert(params[: n - 1], reference, 0.0)
    beta = params[n - 1:]
    x = battles.features
    logits = alpha * (full[battles.first] - full[battles.second])
    if beta.size:
        logits = logits + x @ beta
    total = weight.sum()
    w = weight / total
    # -[y log p + (1 - y) log(1 - p)] with p = sigmoid(logit), stably
    loss = float(np.sum(w * (np.logaddexp(0.0, logits) - battles.outcome * logits)))
    p = 0.5 * (1.0 + np.tanh(0.5 * logits))
    residual = w * (p - battles.outcome)
    grad = alpha * (
        np.bincount(battles.first, residual, n) - np.bincount(battles.second, residual, n)
    )
    curvature = w * p * (1.0 - p)
    pairs = np.bincount(battles.first * n + battles.second, curvature, n * n).reshape(n, n)
    hess = -(pairs + pairs.T)
    hess[np.diag_indices(n)] += (
        np.bincount(battles.first, curvature, n) + np.bincount(battles.second, curvature, n)
    )
    hess *= alpha * alpha
    keep = np.arange(n) != reference
    grad, hess = grad[keep], hess[np.ix_(keep, keep)]
    if beta.size:
        weighted = curvature[:, None] * x
        cross = alpha * np.stack(
            [np.bincount(battles.first, column, n) - np.bincount(battles.second, column, n)
             for column in weighted.T],
            axis=1,
        )[keep]
        grad = np.concatenate([grad, x.T @ residual])
        hess = np.block([[hess, cross], [cross.T, x.T @ weighted]])
    return loss, grad, hess


def _fit(
    battles: _Battles, weight: np.ndarray, alpha: float, reference: int, start: np.ndarray
) -> np.ndarray:
    """The maximum-likelihood parameters (free ratings in natural units, the reference at 0
    left out, then the style coefficients), by scipy."""
    from scipy.optimize import minimize

    def fun(params: np.ndarray) -> tuple[float, np.ndarray]:
        loss, grad, _ = _loss(params, battles, weight, alpha, reference)
        return loss, grad

    def hess(params: np.ndarray) -> np.ndarray:
        return _loss(params, battles, weight, alpha, reference)[2]

    result = minimize(
        fun, start, jac=True, hess=hess, method="trust-exact",
        options={"gtol": _GTOL, "maxiter": 200},
    )
    params = result.x
    _, grad, hessian = _loss(params, battles, weight, alpha, reference)
    # trust-exact may stop near the optimum when the loss no longer changes in floating
    # point ("a bad approximation"), its gradient still ~1e-8: Newton steps, exact there,
    # finish the fit
    for _ in range(3):
        if not np.all(np.isfinite(params)) or np.max(np.abs(grad), initial=0.0) <= 1e-12:
            break
        try:
            step = np.linalg.solve(hessian, grad)
        except np.linalg.LinAlgError:
            break
        candidate = params - step
        _, candidate_grad, candidate_hessian = _loss(
            candidate, battles, weight, alpha, reference
        )
        if not np.max(np.abs(candidate_grad)) < np.max(np.abs(grad)):
            break
        params, grad, hessian = candidate, candidate_grad, candidate_hessian
    if not np.all(np.isfinite(params)) or np.max(np.abs(grad)) > 1e-8:
        raise EvalframeError(
            f"the Bradley-Terry fit did not converge ({result.message}); largest gradient "
            f"{np.max(np.abs(grad)):.3g}"
        )
    if battles.features.shape[1]:
        _check_identified(hessian, battles)
    return params


def _check_identified(hessian: np.ndarray, battles: _Battles) -> None:
    """The style-controlled fit's curvature in every direction: none is (nearly) flat."""
    eigenvalues = np.linalg.eigvalsh(hessian)
    if eigenvalues[0] > max(_CONDITION * eigenvalues[-1], _FLAT):
        return
    raise EvalframeError(
        "the style-controlled ratings are not identified: the likelihood is flat in some "
        f"direction (smallest curvature {eigenvalues[0]:.3g}, largest {eigenvalues[-1]:.3g}). "
        "The style features may repeat each other or a model (a model whose answers alone "
        "set a feature), or separate the outcomes (the longer answer always wins); leave a "
        "feature out"
    )


def _components(battles: _Battles, weight: np.ndarray) -> np.ndarray:
    """Strongly connected components of "took a point from" (a tie counts both ways)."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    n = len(battles.models)
    present = weight > 0
    wins_a = present & (battles.outcome > 0)
    wins_b = present & (battles.outcome < 1)
    rows = np.concatenate([battles.first[wins_a], battles.second[wins_b]])
    cols = np.concatenate([battles.second[wins_a], battles.first[wins_b]])
    graph = coo_matrix((np.ones(len(rows)), (rows, cols)), shape=(n, n)).tocsr()
    _, labels = connected_components(graph, directed=True, connection="strong")
    return labels


def _check_exists(battles: _Battles) -> None:
    labels = _components(battles, battles.weight)
    if labels.max() == 0:
        return
    models = np.array(battles.models)
    winners = sorted(_never(battles, lose=True))
    losers = sorted(_never(battles, lose=False))
    groups = [sorted(models[labels == label].tolist()) for label in np.unique(labels)]
    detail = []
    if winners:
        detail.append(f"never lost a point: {winners}")
    if losers:
        detail.append(f"never won a point: {losers}")
    if not detail:
        detail.append(
            "split into groups of which one never takes a point from another (or they never "
            f"met); groups: {groups}"
        )
    raise EvalframeError(
        "the Bradley-Terry ratings do not exist (the likelihood grows without bound): some "
        f"model(s) {'; '.join(detail)}. Add battles against them, leave them out, or compare "
        "them by their observed win rates (win_rate_matrix)"
    )


def _never(battles: _Battles, *, lose: bool) -> list[str]:
    """Models that never lose (``lose=True``) or never win any share of a battle."""
    n = len(battles.models)
    took = np.zeros(n)  # share of the points the model gave away (lose) or took (win)
    w = battles.weight
    if lose:
        np.add.at(took, battles.first, w * (1 - battles.outcome))
        np.add.at(took, battles.second, w * battles.outcome)
    else:
        np.add.at(took, battles.first, w * battles.outcome)
        np.add.at(took, battles.second, w * (1 - battles.outcome))
    return [battles.models[i] for i in range(n) if took[i] == 0]


def _anchor(
    anchor: str | tuple[str, float] | None, models: list[str], init: float
) -> tuple[int | None, float]:
    if anchor is None:
        return None, float(init)
    if isinstance(anchor, str):
        name, rating = anchor, float(init)
    elif (
        isinstance(anchor, tuple | list)
        and len(anchor) == 2
        and isinstance(anchor[0], str)
        and isinstance(anchor[1], int | float)
        and not isinstance(anchor[1], bool)
    ):
        name, rating = anchor[0], float(anchor[1])
    else:
        raise EvalframeError(
            f"anchor={anchor!r}: expected a model name, a (model, rating) pair, or None"
        )
    if not math.isfinite(rating):
        raise EvalframeError(f"anchor={anchor!r}: the rating must be a finite number")
    if name not in models:
        raise EvalframeError(f"anchor model {name!r} is not in the battles; models: {models}")
    return models.index(name), rating


def _scaled(
    theta: np.ndarray, anchor: int | None, rating: float, scale: float
) -> np.ndarray:
    """Elo-scaled ratings: the anchor exactly at ``rating``, or the mean at ``rating``."""
    theta = np.atleast_2d(theta)
    centre = theta[:, [anchor]] if anchor is not None else theta.mean(axis=1, keepdims=True)
    return rating + scale * (theta - centre)


def check_numbers(scale: float, base: float, init: float, bootstrap: int, seed: int,
                   ci: float) -> None:
    for name, value in (("scale", scale), ("base", base), ("init", init)):
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(
            value
        ):
            raise EvalframeError(f"{name}={value!r} must be a finite number")
    if scale <= 0:
        raise EvalframeError(f"scale={scale!r} must be positive (e.g. 400)")
    if base <= 1:
        raise EvalframeError(f"base={base!r} must be greater than 1 (e.g. 10)")
    check_replicates_or_none(bootstrap)
    check_seed(seed)
    check_level(ci)


def _cluster_draws(battles: _Battles, replicates: int, seed: int) -> np.ndarray:
    """``(replicates, clusters)``: how often each cluster is drawn (multinomially)."""
    n = battles.n_clusters
    rng = np.random.default_rng(seed)
    return rng.multinomial(n, np.full(n, 1.0 / n), size=replicates).astype(np.float64)


def _incidence(battles: _Battles):  # -> scipy.sparse.csr_matrix (clusters x cells)
    from scipy.sparse import coo_matrix

    clusters, cells, weights = battles.cluster_cells
    shape = (battles.n_clusters, len(battles.weight))
    return coo_matrix((weights, (clusters, cells)), shape=shape).tocsr()


def _replicate_weights(battles: _Battles, replicates: int, seed: int) -> np.ndarray:
    """``(replicates, cells)`` weights: the clusters drawn with replacement (multinomially)."""
    drawn = _cluster_draws(battles, replicates, seed)
    return np.asarray((_incidence(battles).T @ drawn.T).T)


def ratings(
    battles: Source,
    *,
    model_a: str = "model_a",
    model_b: str = "model_b",
    outcome: str = "outcome",
    weight: str | None = None,
    anchor: str | tuple[str, float] | None = None,
    scale: float = 400,
    base: float = 10,
    init: float = 1000,
    bootstrap: int = 1000,
    seed: int = 0,
    cluster: str | None = "sample_id",
    ci: float = 0.95,
    style: bool | str | Sequence[str] | None = None,
    style_columns: Mapping[str, Sequence[str]] | None = None,
    answer_a: str = "answer_a",
    answer_b: str = "answer_b",
    length_unit: str = "words",
    style_normalization: str = "chatbot_arena",
    return_coefficients: bool = False,
) -> pl.DataFrame | Ratings:
    """Bradley-Terry ratings on the Elo scale, with intervals from a bootstrap by question,
    ranks with rank intervals, and optionally controlled for the answers' style.

    Parameters
    ----------
    battles
        One row per battle (a pairwise result: ``model_a``, ``model_b``, ``outcome``).
    model_a, model_b, outcome
        The columns of the two models and the outcome (``"A"``, ``"B"``, ``"tie"``,
        ``"inconsistent"``, ``"error"``).
    weight
        A column of battle weights (how many battles a row counts as, e.g. 3 for an
        Arena-Hard strong verdict); None: 1 each.
    anchor
        A model name (rated exactly ``init``), a ``(model, rating)`` pair, or None (the
        mean rating is ``init``).
    scale, base, init
        The Elo scale: a difference of ``scale`` points is odds of ``base`` to 1.
    bootstrap
        Replicates of the bootstrap (0: no intervals).
    seed
        Seed of the bootstrap (``numpy.random.default_rng``).
    cluster
        The question-id column whose clusters the bootstrap resamples; when the battles
        have no such column (or None), battles are resampled one by one.
    ci
        Level of the percentile intervals of the ratings, the ranks and the coefficients.
    style
        Control for style (Chatbot Arena's style control): True for the four features of
        :data:`evalframe.judge.style.STYLE_FEATURES` (``length``, ``markdown_headers``,
        ``markdown_lists``, ``bold``), or a list of them; None (default): no control.
    style_columns
        Precomputed counts per feature, ``{"length": ("tokens_a", "tokens_b")}``, used
        instead of counting in the text (a name that is not one of the four adds a feature
        of your own).
    answer_a, answer_b
        The answers' text columns the features are counted in.
    length_unit
        ``"words"`` (default) or ``"characters"``: the unit of ``length`` counted in text.
    style_normalization
        ``"chatbot_arena"`` (default, ``(a - b) / (a + b + 1)``) or ``"arena_hard"``
        (see :mod:`evalframe.judge.style`).
    return_coefficients
        Return :class:`Ratings` ``(ratings, coefficients)``: the table and the style
        coefficients (:data:`COEFFICIENT_COLUMNS`, one row per feature).

    Returns
    -------
    pl.DataFrame or Ratings
        :data:`RATING_COLUMNS`, one row per model, by rating (highest first); with
        ``return_coefficients=True``, also the coefficients' table.

    Raises
    ------
    EvalframeError
        When the ratings do not exist (a model, or a group of models, never loses a point
        to the others; under style control, features that separate the outcomes or repeat
        each other), on unknown outcomes, missing columns or invalid options.

    Examples
    --------
    In these battles the longer answer wins 7 times in 8, and x mostly writes longer ones:
    its lead is length, and goes once length is controlled for.

    >>> words = lambda counts: [" ".join(["w"] * k) for k in counts]
    >>> battles = pl.DataFrame({
    ...     "sample_id": [f"q{i}" for i in range(8)],
    ...     "model_a": ["x", "y"] * 4, "model_b": ["y", "x"] * 4,
    ...     "outcome": ["A", "B", "A", "B", "A", "A", "A", "A"],
    ...     "answer_a": words([6, 2, 5, 1, 4, 2, 6, 3]),
    ...     "answer_b": words([2, 5, 1, 4, 2, 3, 3, 1]),
    ... })
    >>> ratings(battles, bootstrap=0)["rating"].round(1).to_list()
    [1095.4, 904.6]
    >>> table, coefficients = ratings(battles, style=["length"], bootstrap=0,
    ...                               return_coefficients=True)
    >>> table.select("model", pl.col("rating").round(1), "rank")
    shape: (2, 3)
    ┌───────┬────────┬──────┐
    │ model ┆ rating ┆ rank │
    │ ---   ┆ ---    ┆ ---  │
    │ str   ┆ f64    ┆ u32  │
    ╞═══════╪════════╪══════╡
    │ y     ┆ 1042.9 ┆ 1    │
    │ x     ┆ 957.1  ┆ 2    │
    └───────┴────────┴──────┘
    >>> coefficients.select("feature", pl.col("coefficient", "elo_per_sd").round(2)).rows()
    [('length', 2.74, 475.43)]
    """
    check_numbers(scale, base, init, bootstrap, seed, ci)
    spec = check_style(
        style, style_columns=style_columns, answers=(answer_a, answer_b),
        length_unit=length_unit, normalization=style_normalization,
    )
    if not isinstance(return_coefficients, bool):
        raise EvalframeError(
            f"return_coefficients={return_coefficients!r} must be True or False"
        )
    prepared, clustered = _prepare(battles, model_a, model_b, outcome, weight, cluster, spec)
    _check_exists(prepared)
    models = prepared.models
    n_models, n_features = len(models), prepared.features.shape[1]
    anchor_index, anchor_rating = _anchor(anchor, models, init)
    reference = anchor_index if anchor_index is not None else 0
    alpha = math.log(base)
    params = _fit(prepared, prepared.weight, alpha, reference, np.zeros(n_models - 1 + n_features))
    theta = np.insert(params[: n_models - 1], reference, 0.0)
    rating = _scaled(theta, anchor_index, anchor_rating, scale)[0]
    replicates = coefficients = None
    dropped = 0
    if bootstrap:
        fits = _bootstrap(prepared, alpha, reference, params, bootstrap, seed)
        usable = ~np.isnan(fits[:, 0]) if fits.shape[1] else np.ones(bootstrap, dtype=bool)
        dropped = int(bootstrap - usable.sum())
        if dropped:
            warnings.warn(
                f"{dropped} of {bootstrap} bootstrap replicates left out: in them some model "
                "never loses a point, so its rating does not exist"
                + (" (or the style-controlled fit is not identified)" if n_features else ""),
                stacklevel=2,
            )
        if usable.sum() >= 2:
            kept = fits[usable]
            full = np.insert(kept[:, : n_models - 1], reference, 0.0, axis=1)
            replicates = _scaled(full, anchor_index, anchor_rating, scale)
            coefficients = kept[:, n_models - 1:]
    signature = _rating_signature(
        anchor_index, anchor_rating, models, scale, base, bootstrap, seed,
        cluster if clustered else None, ci, weight, spec,
    )
    table = _rating_table(prepared, rating, replicates, ci).with_columns(
        pl.lit(dropped, pl.UInt32).alias("bootstrap_dropped"),
        pl.lit(signature).alias("signature"),
    )
    table = table.sort(["rating", "model"], descending=[True, False]).select(RATING_COLUMNS)
    if not return_coefficients:
        return table
    features = list(spec.features) if spec is not None else []
    beta = params[n_models - 1:]
    return Ratings(
        table,
        _coefficient_table(features, beta, coefficients, prepared, alpha, scale, ci, dropped,
                           signature),
    )


def _bootstrap(
    battles: _Battles, alpha: float, reference: int, start: np.ndarray, replicates: int,
    seed: int,
) -> np.ndarray:
    """``(replicates, parameters)`` fits on the resampled battles; NaN where a replicate's
    ratings do not exist."""
    drawn = _cluster_draws(battles, replicates, seed)
    incidence_t = _incidence(battles).T.tocsr()
    fits = np.full((replicates, len(start)), np.nan)
    styled = battles.features.shape[1] > 0
    for b in range(replicates):
        weights = incidence_t @ drawn[b]
        if _components(battles, weights).max() > 0:
            continue
        try:
            fits[b] = _fit(battles, weights, alpha, reference, start)
        except EvalframeError:
            if not styled:  # the ratings of a connected resample always exist
                raise
    return fits


def _rating_table(
    battles: _Battles, rating: np.ndarray, replicates: np.ndarray | None, ci: float
) -> pl.DataFrame:
    """Per model: the rating, its bootstrap stderr and interval, its rank and interval."""
    n = len(battles.models)
    stderr = low = high = np.full(n, np.nan)
    if replicates is not None:
        stderr = replicates.std(axis=0, ddof=1)
        low, high = np.quantile(replicates, [(1 - ci) / 2, (1 + ci) / 2], axis=0)
    table = pl.DataFrame(
        {"model": battles.models, "rating": rating, "stderr": stderr, "ci_low": low,
         "ci_high": high},
        schema={"model": pl.String, "rating": pl.Float64, "stderr": pl.Float64,
                "ci_low": pl.Float64, "ci_high": pl.Float64},
    ).with_columns(pl.col("stderr", "ci_low", "ci_high").fill_nan(None))
    point = np.round(rating, _RANK_DIGITS)
    if replicates is not None:
        table = with_ranks(table, "model", rank_intervals(point, replicates, ci=ci))
    else:
        table = table.with_columns(
            pl.Series("rank", point_ranks(point), dtype=pl.UInt32),
            pl.lit(None, pl.UInt32).alias("rank_low"),
            pl.lit(None, pl.UInt32).alias("rank_high"),
            pl.lit(None, pl.List(pl.String)).alias("tied_with"),
        )
    return table.join(battles.counts, on="model", how="left")


def _coefficient_table(
    features: list[str], beta: np.ndarray, replicates: np.ndarray | None, battles: _Battles,
    alpha: float, scale: float, ci: float, dropped: int, signature: str,
) -> pl.DataFrame:
    """Per style feature: its coefficient (logit per standard deviation of the feature),
    bootstrap stderr and interval, the same in Elo points, and the standardisation."""
    k = len(features)
    stderr = low = high = np.full(k, np.nan)
    if replicates is not None and k:
        stderr = replicates.std(axis=0, ddof=1)
        low, high = np.quantile(replicates, [(1 - ci) / 2, (1 + ci) / 2], axis=0)
    floats = {name: pl.Float64 for name in COEFFICIENT_COLUMNS[1:8]}
    return pl.DataFrame(
        {
            "feature": features, "coefficient": beta, "stderr": stderr, "ci_low": low,
            "ci_high": high, "elo_per_sd": beta * scale / alpha,
            "feature_mean": battles.feature_mean, "feature_std": battles.feature_std,
        },
        schema={"feature": pl.String, **floats},
    ).with_columns(
        pl.col("stderr", "ci_low", "ci_high").fill_nan(None),
        pl.lit(dropped, pl.UInt32).alias("bootstrap_dropped"),
        pl.lit(signature).alias("signature"),
    ).select(COEFFICIENT_COLUMNS)


def _rating_signature(
    anchor: int | None,
    rating: float,
    models: Sequence[str],
    scale: float,
    base: float,
    bootstrap: int,
    seed: int,
    cluster: str | None,
    ci: float,
    weight: str | None,
    style: StyleSpec | None = None,
) -> str:
    pairs = [
        ("rating", "bradley-terry-mle"),
        ("ties", "half"),
        ("scale", f"{scale:g}"),
        ("base", f"{base:g}"),
        ("anchor", f"{models[anchor]}={rating:g}" if anchor is not None else f"mean={rating:g}"),
    ]
    if weight:
        pairs.append(("weight", weight))
    if style is not None:
        pairs.append(("style", style.describe()))
    pairs.append(("B", str(bootstrap)))
    if bootstrap:
        pairs += [("seed", str(seed)), ("resample", cluster or "battle"),
                  ("ci", f"percentile-{ci:g}"), ("ranks", "percentile-of-ranks")]
    return str(Signature(tuple(pairs)))


def win_rate_matrix(
    battles: Source,
    *,
    model_a: str = "model_a",
    model_b: str = "model_b",
    outcome: str = "outcome",
    weight: str | None = None,
    long: bool = False,
) -> pl.DataFrame:
    """The observed win rate of every model against every other (ties half).

    Every battle counts for both sides: ``model_a``'s share is 1 (``"A"``), 0 (``"B"``) or
    0.5 (``"tie"``, ``"inconsistent"``), ``model_b``'s the rest; errors are left out.

    Returns
    -------
    pl.DataFrame
        Wide (default): ``model`` and one column per opponent (sorted), holding the row
        model's win rate against it; null on the diagonal and for pairs that never met.
        ``long=True``: ``model``, ``opponent``, ``n`` (summed weight), ``win_rate``.

    Examples
    --------
    >>> import polars as pl
    >>> battles = pl.DataFrame({"model_a": ["x", "x", "y"], "model_b": ["y", "y", "z"],
    ...                         "outcome": ["A", "tie", "B"]})
    >>> win_rate_matrix(battles)
    shape: (3, 4)
    ┌───────┬──────┬──────┬──────┐
    │ model ┆ x    ┆ y    ┆ z    │
    │ ---   ┆ ---  ┆ ---  ┆ ---  │
    │ str   ┆ f64  ┆ f64  ┆ f64  │
    ╞═══════╪══════╪══════╪══════╡
    │ x     ┆ null ┆ 0.75 ┆ null │
    │ y     ┆ 0.25 ┆ null ┆ 0.0  │
    │ z     ┆ null ┆ 1.0  ┆ null │
    └───────┴──────┴──────┴──────┘
    """
    table, _ = _read(battles, model_a, model_b, outcome, weight, None)
    table = table.with_columns(
        pl.col("outcome").replace_strict(_VALUE, return_dtype=pl.Float64).alias("y")
    )
    sides = pl.concat(
        [
            table.select(pl.col("a").alias("model"), pl.col("b").alias("opponent"),
                         (pl.col("y") * pl.col("w")).alias("points"), "w"),
            table.select(pl.col("b").alias("model"), pl.col("a").alias("opponent"),
                         ((1 - pl.col("y")) * pl.col("w")).alias("points"), "w"),
        ]
    )
    pairs = (
        sides.group_by("model", "opponent")
        .agg(pl.col("w").sum().alias("n"), pl.col("points").sum().alias("points"))
        .with_columns(
            pl.when(pl.col("n") > 0).then(pl.col("points") / pl.col("n")).alias("win_rate")
        )
        .select("model", "opponent", "n", "win_rate")
        .sort("model", "opponent")
    )
    if long:
        return pairs
    models = sorted(set(table["a"].to_list()) | set(table["b"].to_list()))
    wide = pl.DataFrame({"model": models}, schema={"model": pl.String})
    for opponent in models:
        column = pairs.filter(pl.col("opponent") == opponent).select(
            "model", pl.col("win_rate").alias(opponent)
        )
        wide = wide.join(column, on="model", how="left", maintain_order="left")
    return wide
