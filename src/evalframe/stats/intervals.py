"""Confidence intervals that respect a metric's bounds.

- :func:`wilson_interval`: for 0/1 scores (accuracy, exact match). Never leaves [0, 1] and
  has non-zero width at 0 and 1, where the normal interval collapses to a point. With
  clustered rows it is computed on the effective sample size ``p (1 - p) / SE**2`` (the
  number of independent rows the clustered standard error is worth).
- :func:`t_interval`: Student-t with ``df`` degrees of freedom (``n - 1``, or clusters
  - 1), clipped to the metric's bounds: for bounded continuous scores (token F1).
- :func:`normal_interval`: ``value -/+ z SE``, clipped to the bounds.
- :func:`percentile_interval`: the bootstrap percentile interval of replicate scores,
  for corpus metrics (F1-macro, MCC, perplexity): replicates are values of the metric,
  so the interval stays inside its bounds.

All vectorised over numpy arrays (one entry per group). The methods ``aggregate(interval=...)``
takes are registered here, in :data:`~evalframe.stats.methods.INTERVAL_METHODS`, each as a
function of an :class:`Estimate` (every group of one metric) and the level: ``"auto"``,
``"wilson"``, ``"t"`` and ``"normal"``.

>>> import numpy as np
>>> low, high = wilson_interval(np.array([0.0]), np.array([3.0]), 0.95)
>>> float(low[0]), round(float(high[0]), 4)
(0.0, 0.5615)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from evalframe.errors import EvalframeError
from evalframe.stats.methods import INTERVAL_METHODS, either


def normal_quantile(level: float) -> float:
    """The two-sided normal quantile for a confidence ``level`` (1.96 for 0.95)."""
    from scipy.special import ndtri  # imported when first needed (start-up time)

    return float(ndtri(0.5 + level / 2))


@dataclass(frozen=True)
class Estimate:
    """What the interval of each group of one metric is computed from (one entry each).

    ``value`` and its ``stderr``; ``n`` rows; ``units``: the independent units (the rows,
    or the clusters when clustered); ``df``: the degrees of freedom of the t interval;
    ``binary``: every score is 0 or 1; ``repeated``: rows repeat a cluster (Wilson is then
    on the effective sample size); ``bounds``: where the interval may lie.
    """

    value: np.ndarray
    stderr: np.ndarray
    n: np.ndarray
    units: np.ndarray
    df: np.ndarray
    binary: np.ndarray
    repeated: np.ndarray
    bounds: tuple[np.ndarray | float, np.ndarray | float]


def _auto_applied(binary: np.ndarray) -> list[str]:
    return ["wilson" if flag else "t" for flag in binary]


@INTERVAL_METHODS.decorator(
    name="auto",
    description="Wilson for 0/1 scores, else Student-t clipped to the metric's bounds "
    "(corpus metrics: the bootstrap percentile interval)",
    applied=_auto_applied,
)
def _auto(estimate: Estimate, level: float) -> tuple[np.ndarray, np.ndarray]:
    return _wilson_or_t(estimate, level, np.asarray(estimate.binary, dtype=bool))


def _wilson_or_t(
    estimate: Estimate, level: float, use_wilson: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Wilson where ``use_wilson``, Student-t elsewhere; none for a group of one score.

    Independent rows: Wilson on ``n``; clustered rows: on the effective sample size (the
    number of units, rows or questions, where it is undefined: every score 0 or 1).
    """
    e = estimate
    n_eff = np.where(e.repeated, effective_n(e.value, e.stderr, e.units), e.n)
    w_low, w_high = wilson_interval(e.value, n_eff, level)
    t_low, t_high = t_interval(e.value, e.stderr, e.df, level, e.bounds)
    low = np.where(use_wilson, w_low, t_low)
    high = np.where(use_wilson, w_high, t_high)
    # one score: no spread to estimate, no interval
    single = np.asarray(e.n) < 2
    low[single], high[single] = np.nan, np.nan
    return low, high


def wilson_interval(
    mean: np.ndarray, n: np.ndarray, level: float
) -> tuple[np.ndarray, np.ndarray]:
    """Wilson's score interval for a proportion ``mean`` of ``n`` (effective) trials.

    ``(p + z²/2n -/+ z sqrt(p(1-p)/n + z²/4n²)) / (1 + z²/n)``; as statsmodels'
    ``proportion_confint(method="wilson")``. NaN where ``n`` is 0 or NaN.
    """
    p = np.asarray(mean, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    z = normal_quantile(level)
    with np.errstate(invalid="ignore", divide="ignore"):
        z2n = z * z / n
        centre = (p + z2n / 2) / (1 + z2n)
        half = z / (1 + z2n) * np.sqrt(p * (1 - p) / n + z2n / (4 * n))
    low = np.clip(centre - half, 0.0, 1.0)
    high = np.clip(centre + half, 0.0, 1.0)
    bad = ~(n > 0)
    low[bad], high[bad] = np.nan, np.nan
    return low, high


@INTERVAL_METHODS.decorator(
    name="wilson",
    description="Wilson's score interval, on the effective sample size when clustered "
    "(0/1 scores only)",
    binary=True,
    reference="statsmodels proportion_confint(method='wilson')",
)
def _wilson(estimate: Estimate, level: float) -> tuple[np.ndarray, np.ndarray]:
    _binary_only("wilson", estimate)
    return _wilson_or_t(estimate, level, np.ones(len(estimate.value), dtype=bool))


def _binary_only(name: str, estimate: Estimate) -> None:
    if not np.asarray(estimate.binary, dtype=bool).all():
        others = [entry.name for entry in INTERVAL_METHODS.entries() if not entry.binary]
        raise EvalframeError(
            f"interval={name!r} is for 0/1 scores; some groups have other values "
            f"(use {either(others)})"
        )


def _beta_interval(
    estimate: Estimate, level: float, low_shape: tuple[float, float],
    high_shape: tuple[float, float], exact_ends: bool,
) -> tuple[np.ndarray, np.ndarray]:
    """Beta quantiles of ``x = value * n`` successes in ``n`` (effective) trials: the low
    end from Beta(x + a, n - x + b), the high end from Beta(x + c, n - x + d), with
    ``low_shape = (a, b)`` and ``high_shape = (c, d)``; ``exact_ends``: 0 at x = 0 and 1
    at x = n (Clopper-Pearson). None for a group of one score."""
    from scipy.stats import beta

    e = estimate
    n = np.asarray(np.where(e.repeated, effective_n(e.value, e.stderr, e.units), e.n),
                   dtype=np.float64)
    x = np.asarray(e.value, dtype=np.float64) * n
    tail = (1.0 - level) / 2
    with np.errstate(invalid="ignore", divide="ignore"):
        low = beta.ppf(tail, x + low_shape[0], n - x + low_shape[1])
        high = beta.isf(tail, x + high_shape[0], n - x + high_shape[1])
    low, high = np.atleast_1d(np.asarray(low, dtype=np.float64)).copy(), np.atleast_1d(
        np.asarray(high, dtype=np.float64)).copy()
    if exact_ends:
        low[x <= 0] = 0.0
        high[x >= n] = 1.0
    bad = ~(n > 0) | (np.asarray(e.n) < 2)
    low[bad], high[bad] = np.nan, np.nan
    return low, high


@INTERVAL_METHODS.decorator(
    name="clopper_pearson",
    description="the exact binomial (Clopper-Pearson) interval, which never undercovers; on "
    "the effective sample size when clustered (0/1 scores only)",
    binary=True,
    reference="statsmodels proportion_confint(method='beta')",
)
def _clopper_pearson(estimate: Estimate, level: float) -> tuple[np.ndarray, np.ndarray]:
    _binary_only("clopper_pearson", estimate)
    return _beta_interval(estimate, level, (0.0, 1.0), (1.0, 0.0), exact_ends=True)


@INTERVAL_METHODS.decorator(
    name="jeffreys",
    description="the Bayesian interval under Jeffreys' prior Beta(1/2, 1/2), equal-tailed, "
    "0 at no success and 1 at all successes (Brown, Cai and DasGupta 2001; statsmodels "
    "leaves the observed proportion outside it there); on the effective sample size when "
    "clustered (0/1 scores only)",
    binary=True,
    reference="statsmodels proportion_confint(method='jeffreys'), ends as Brown et al.",
)
def _jeffreys(estimate: Estimate, level: float) -> tuple[np.ndarray, np.ndarray]:
    _binary_only("jeffreys", estimate)
    return _beta_interval(estimate, level, (0.5, 0.5), (0.5, 0.5), exact_ends=True)


def effective_n(mean: np.ndarray, stderr: np.ndarray, n: np.ndarray) -> np.ndarray:
    """The number of independent 0/1 rows a (clustered) standard error is worth.

    ``p (1 - p) / SE**2``; ``n`` itself where that is undefined (p at 0 or 1, SE 0).
    """
    p = np.asarray(mean, dtype=np.float64)
    se = np.asarray(stderr, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        n_eff = p * (1 - p) / (se * se)
    usable = np.isfinite(n_eff) & (n_eff > 0)
    return np.where(usable, n_eff, n)


def _clip(
    low: np.ndarray, high: np.ndarray, bounds: tuple[float, float]
) -> tuple[np.ndarray, np.ndarray]:
    lower, upper = bounds
    return np.clip(low, lower, upper), np.clip(high, lower, upper)


def t_interval(
    value: np.ndarray,
    stderr: np.ndarray,
    df: np.ndarray,
    level: float,
    bounds: tuple[float, float],
) -> tuple[np.ndarray, np.ndarray]:
    """``value -/+ t(df) SE``, clipped to ``bounds``; NaN where ``df`` < 1."""
    from scipy.special import stdtrit  # imported when first needed (start-up time)

    df = np.asarray(df, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        t = np.where(df >= 1, stdtrit(np.maximum(df, 1), 0.5 + level / 2), np.nan)
    value, stderr = np.asarray(value, dtype=np.float64), np.asarray(stderr, dtype=np.float64)
    return _clip(value - t * stderr, value + t * stderr, bounds)


@INTERVAL_METHODS.decorator(
    name="t",
    description="Student-t on n - 1 degrees of freedom (clusters - 1 when clustered), "
    "clipped to the metric's bounds",
    reference="scipy.stats.t.interval",
)
def _t(estimate: Estimate, level: float) -> tuple[np.ndarray, np.ndarray]:
    return t_interval(estimate.value, estimate.stderr, estimate.df, level, estimate.bounds)


def normal_interval(
    value: np.ndarray, stderr: np.ndarray, level: float, bounds: tuple[float, float]
) -> tuple[np.ndarray, np.ndarray]:
    """``value -/+ z SE``, clipped to ``bounds``."""
    z = normal_quantile(level)
    value, stderr = np.asarray(value, dtype=np.float64), np.asarray(stderr, dtype=np.float64)
    return _clip(value - z * stderr, value + z * stderr, bounds)


@INTERVAL_METHODS.decorator(
    name="normal",
    description="value -/+ z stderr clipped to the metric's bounds (corpus metrics too, "
    "on their bootstrap stderr)",
    reference="scipy.stats.norm.interval",
    on_corpus=True,
)
def _normal(estimate: Estimate, level: float) -> tuple[np.ndarray, np.ndarray]:
    return normal_interval(estimate.value, estimate.stderr, level, estimate.bounds)


def percentile_interval(replicates: np.ndarray, level: float) -> tuple[float, float]:
    """The bootstrap percentile interval: the ``(1-level)/2`` and ``(1+level)/2`` quantiles.

    NaN when a replicate is NaN (the metric is undefined on some resample).
    """
    replicates = np.asarray(replicates, dtype=np.float64)
    if replicates.size == 0 or np.isnan(replicates).any():
        return float("nan"), float("nan")
    low, high = np.quantile(replicates, [(1 - level) / 2, (1 + level) / 2])
    return float(low), float(high)


#: The interval methods ``aggregate`` accepts (the names in ``INTERVAL_METHODS``; ``"auto"``
#: picks one by the scores).
METHODS = tuple(INTERVAL_METHODS.names())
