"""The power of each test a paired comparison may run, registered in
:data:`~evalframe.stats.methods.POWER_TESTS` (``power(test=...)``, ``mde``, ``sample_size``).

Every function takes the absolute difference ``effect`` and ``n`` questions (numpy arrays,
broadcast) and returns the probability that the test rejects at level ``alpha``:

- ``"z"``: the paired z-test (the normal approximation, Miller 2024, §5):
  ``Phi(x - z) + Phi(-x - z)`` with ``x = effect sqrt(n / variance)``, ``z = z_{1-alpha/2}``
  (one-sided: ``Phi(x - z_{1-alpha})``);
- ``"t"``: the paired t-test ``ef.compare`` runs on non-binary (or clustered) scores, from
  the noncentral t: ``df = n - 1`` (``clusters - 1`` with ``clusters=``), noncentrality
  ``effect sqrt(n / variance)``, power ``P(T' > t_{1-alpha/2, df}) + P(T' < -t_{1-alpha/2,
  df})`` (statsmodels ``TTestPower``);
- ``"mcnemar_exact"``: McNemar's exact test, what ``ef.compare`` runs on 0/1 scores: with
  ``D`` discordant pairs among ``n`` (``D ~ Binom(n, discordant)``) and ``b`` of them in the
  candidate's favour (``b | D ~ Binom(D, p10 / discordant)``), the test rejects when
  ``min(1, 2 P(Binom(D, 1/2) <= min(b, D - b))) <= alpha`` (one-sided: ``P(Binom(D, 1/2) >=
  b) <= alpha``, the tail in the difference's direction). The power is the exact sum
  ``sum_D P(D) P(reject | D)``, over the ``D`` holding all but ``1e-12`` of the mass;
- ``"mcnemar"``: the asymptotic McNemar test without continuity correction, Connor (1987)
  and Miettinen (1968): ``Phi((effect sqrt(n) - z sqrt(discordant)) / sqrt(discordant -
  effect**2))`` (two-sided: plus the opposite tail, which is negligible).

``discordant = p10 + p01`` is the probability that the two models disagree on a question,
``effect = |p10 - p01|``.

>>> from evalframe.stats.methods import POWER_TESTS
>>> POWER_TESTS.names()
['z', 't', 'mcnemar_exact', 'mcnemar']
>>> kwargs = dict(variance=None, alpha=0.05, two_sided=True, clusters=None)
>>> round(float(mcnemar_exact_power(0.1, 200, discordant=0.3, **kwargs)), 4)
0.7034
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from evalframe.stats.methods import POWER_TESTS, PowerTest

__all__ = [
    "exact_mcnemar_curve",
    "mcnemar_asymptotic_power",
    "mcnemar_exact_power",
    "t_power",
    "z_power",
]

Array = npt.NDArray[np.float64]

#: The mass of the number of discordant pairs left out of the exact sum.
TAIL = 1e-12


def _ndtr(x):
    from scipy.special import ndtr

    return ndtr(x)


def _ndtri(p):
    from scipy.special import ndtri

    return ndtri(p)


def z_power(effect: Any, n: Any, *, variance: Any, alpha: Any, two_sided: bool,
            discordant: Any = None, clusters: Any = None) -> Array:
    """The paired z-test's power.

    >>> round(float(z_power(0.05, 400, variance=0.25, alpha=0.05, two_sided=True)), 4)
    0.516
    """
    x = np.asarray(effect, dtype=np.float64) * np.sqrt(np.asarray(n) / np.asarray(variance))
    alpha = np.asarray(alpha, dtype=np.float64)
    z = _ndtri(1 - alpha / 2) if two_sided else _ndtri(1 - alpha)
    if two_sided:
        return _ndtr(x - z) + _ndtr(-x - z)
    return _ndtr(x - z)


def t_power(effect: Any, n: Any, *, variance: Any, alpha: Any, two_sided: bool,
            discordant: Any = None, clusters: Any = None) -> Array:
    """The paired t-test's power, from the noncentral t (``df = n - 1``, or ``clusters - 1``).

    >>> round(float(t_power(0.5, 20, variance=1.0, alpha=0.05, two_sided=True)), 4)
    0.5645
    """
    from scipy import stats

    n = np.asarray(n, dtype=np.float64)
    dof = (np.asarray(clusters, dtype=np.float64) if clusters is not None else n) - 1
    nc = np.asarray(effect, dtype=np.float64) * np.sqrt(n / np.asarray(variance))
    alpha = np.asarray(alpha, dtype=np.float64)
    if two_sided:
        crit = stats.t.isf(alpha / 2, dof)
        return stats.nct.sf(crit, dof, nc) + stats.nct.cdf(-crit, dof, nc)
    return stats.nct.sf(stats.t.isf(alpha, dof), dof, nc)


def mcnemar_asymptotic_power(effect: Any, n: Any, *, variance: Any = None, alpha: Any,
                             two_sided: bool, discordant: Any, clusters: Any = None) -> Array:
    """The asymptotic McNemar test's power (Connor 1987), without continuity correction.

    >>> round(float(mcnemar_asymptotic_power(0.1, 200, discordant=0.3, alpha=0.05,
    ...                                      two_sided=True)), 4)
    0.7365
    """
    effect = np.asarray(effect, dtype=np.float64)
    discordant = np.asarray(discordant, dtype=np.float64)
    alpha = np.asarray(alpha, dtype=np.float64)
    z = _ndtri(1 - alpha / 2) if two_sided else _ndtri(1 - alpha)
    root_n = np.sqrt(np.asarray(n, dtype=np.float64))
    spread = np.sqrt(np.maximum(discordant - effect**2, 0.0))
    null = z * np.sqrt(discordant)
    with np.errstate(divide="ignore", invalid="ignore"):
        upper = _ndtr((effect * root_n - null) / spread)
        lower = _ndtr((-effect * root_n - null) / spread) if two_sided else 0.0
    return np.nan_to_num(upper + lower, nan=0.0)


def _discordant_range(n: np.ndarray, discordant: float) -> tuple[np.ndarray, np.ndarray]:
    """The counts of discordant pairs holding all but :data:`TAIL` of ``Binom(n, discordant)``."""
    from scipy import stats

    low = stats.binom.ppf(TAIL / 2, n, discordant).astype(np.int64)
    high = stats.binom.ppf(1 - TAIL / 2, n, discordant).astype(np.int64)
    return np.clip(low, 0, n), np.clip(high, 0, n)


def _rejection_given(counts: np.ndarray, effect: float, discordant: float, alpha: float,
                     two_sided: bool) -> np.ndarray:
    """``P(reject | D)`` for each count ``D`` of discordant pairs: ``b | D ~ Binom(D,
    p10 / discordant)``, and the test rejects where its p-value, computed as ``compare``
    computes it, is ``<= alpha``."""
    from scipy import stats

    def rejects(k: np.ndarray) -> np.ndarray:
        tail = stats.binom.cdf(k, counts, 0.5)
        p = np.minimum(1.0, 2.0 * tail) if two_sided else tail
        return (k >= 0) & (p <= alpha)

    # the largest k such that min(b, D - b) <= k (one-sided: D - b <= k) rejects; -1: none
    k = stats.binom.ppf(alpha / 2 if two_sided else alpha, counts, 0.5).astype(np.int64)
    k = np.where(rejects(k), k, k - 1)
    k = np.where(rejects(k), k, k - 1)  # the rounding of ppf: a step at most
    k = np.where(rejects(k + 1), k + 1, k)
    favour = 0.5 * (1.0 + effect / discordant)  # P(a discordant pair favours the candidate)
    upper = stats.binom.sf(counts - k - 1, counts, favour)  # b >= D - k
    reject = upper + stats.binom.cdf(k, counts, favour) if two_sided else upper
    return np.where(k >= 0, reject, 0.0)


def exact_mcnemar_curve(effect: float, sizes: Any, discordant: float, alpha: float,
                        two_sided: bool) -> np.ndarray:
    """McNemar's exact power at each number of questions in ``sizes`` (one effect).

    ``P(reject | D)`` depends on ``D`` only, so it is computed once for every ``D`` any
    size needs, and each size's power is its binomial weights' dot product with it.

    >>> exact_mcnemar_curve(0.1, [100, 200], 0.3, 0.05, True).round(4)
    array([0.3731, 0.7034])
    """
    from scipy import stats

    sizes = np.asarray(sizes, dtype=np.int64).ravel()
    low, high = _discordant_range(sizes, discordant)
    first = int(low.min())
    reject = _rejection_given(np.arange(first, int(high.max()) + 1), effect, discordant,
                              alpha, two_sided)
    lengths = high - low + 1
    owner = np.repeat(np.arange(sizes.size), lengths)
    starts = np.cumsum(lengths) - lengths
    counts = low[owner] + (np.arange(owner.size) - starts[owner])
    weights = stats.binom.pmf(counts, sizes[owner], discordant)
    return np.add.reduceat(weights * reject[counts - first], starts)


def mcnemar_exact_power(effect: Any, n: Any, *, variance: Any = None, alpha: Any,
                        two_sided: bool, discordant: Any, clusters: Any = None) -> Array:
    """McNemar's exact test's power: ``sum_D P(D; n, discordant) P(reject | D)``.

    >>> round(float(mcnemar_exact_power(0.1, 200, discordant=0.3, alpha=0.05,
    ...                                 two_sided=True)), 4)
    0.7034
    """
    effect, n, discordant, alpha = np.broadcast_arrays(
        np.asarray(effect, dtype=np.float64), np.asarray(n, dtype=np.float64),
        np.asarray(discordant, dtype=np.float64), np.asarray(alpha, dtype=np.float64),
    )
    out = np.empty(effect.shape, dtype=np.float64)
    for index in np.ndindex(effect.shape):
        out[index] = exact_mcnemar_curve(float(effect[index]), int(n[index]),
                                         float(discordant[index]), float(alpha[index]),
                                         two_sided)[0]
    return out


POWER_TESTS.add(PowerTest(
    name="z",
    function=z_power,
    description="the paired z-test: the normal approximation of the mean difference",
    reference="Miller (2024), Adding Error Bars to Evals, section 5",
))
POWER_TESTS.add(PowerTest(
    name="t",
    function=t_power,
    description="the paired t-test (df = n - 1, or clusters - 1): the noncentral t",
    reference="statsmodels TTestPower",
    takes_clusters=True,
))
POWER_TESTS.add(PowerTest(
    name="mcnemar_exact",
    function=mcnemar_exact_power,
    description="McNemar's exact test of the discordant pairs (what compare runs on 0/1 "
    "scores): exact binomial sums",
    reference="scipy.stats.binomtest; statsmodels mcnemar(exact=True)",
    binary=True,
    needs_discordant=True,
    monotone=False,
    integer_n=True,
))
POWER_TESTS.add(PowerTest(
    name="mcnemar",
    function=mcnemar_asymptotic_power,
    description="the asymptotic McNemar test without continuity correction",
    reference="Connor (1987), Biometrics 43:207-211; Miettinen (1968)",
    binary=True,
    needs_discordant=True,
))
