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

All vectorised over numpy arrays (one entry per group).

>>> import numpy as np
>>> low, high = wilson_interval(np.array([0.0]), np.array([3.0]), 0.95)
>>> float(low[0]), round(float(high[0]), 4)
(0.0, 0.5615)
"""

from __future__ import annotations

import numpy as np

#: The interval methods ``aggregate`` accepts (``"auto"`` picks one by the scores).
METHODS = ("auto", "wilson", "t", "normal", "bootstrap")


def normal_quantile(level: float) -> float:
    """The two-sided normal quantile for a confidence ``level`` (1.96 for 0.95)."""
    from scipy.special import ndtri  # imported when first needed (start-up time)

    return float(ndtri(0.5 + level / 2))


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


def normal_interval(
    value: np.ndarray, stderr: np.ndarray, level: float, bounds: tuple[float, float]
) -> tuple[np.ndarray, np.ndarray]:
    """``value -/+ z SE``, clipped to ``bounds``."""
    z = normal_quantile(level)
    value, stderr = np.asarray(value, dtype=np.float64), np.asarray(stderr, dtype=np.float64)
    return _clip(value - z * stderr, value + z * stderr, bounds)


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


def percentile_interval(replicates: np.ndarray, level: float) -> tuple[float, float]:
    """The bootstrap percentile interval: the ``(1-level)/2`` and ``(1+level)/2`` quantiles.

    NaN when a replicate is NaN (the metric is undefined on some resample).
    """
    replicates = np.asarray(replicates, dtype=np.float64)
    if replicates.size == 0 or np.isnan(replicates).any():
        return float("nan"), float("nan")
    low, high = np.quantile(replicates, [(1 - level) / 2, (1 + level) / 2])
    return float(low), float(high)
