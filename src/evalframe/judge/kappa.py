"""Chance-corrected agreement from counts: Cohen's and Fleiss' kappa, vectorised over replicates.

Both statistics are computed from sufficient statistics (counts), not from the labels, so that
one call evaluates the point estimate and every bootstrap replicate at once: the replicates'
counts are the cluster counts reweighted (:mod:`evalframe.judge.audit`).

- :func:`cohen_kappa` takes confusion matrices ``(..., K, K)`` (rows: the first rater's label,
  columns: the second's) and gives ``kappa = 1 - sum(w * observed) / sum(w * expected)``, with
  ``expected[i, j] = rows[i] * columns[j] / n`` and ``w`` 1 off the diagonal (unweighted),
  ``|i - j|`` (linear) or ``(i - j) ** 2`` (quadratic), the labels in the matrix's order.
  This is ``sklearn.metrics.cohen_kappa_score`` (``labels`` in that order, ``weights`` the
  same): for unweighted kappa, ``(p_o - p_e) / (1 - p_e)``. Undefined (NaN, as scikit-learn's
  default ``replace_undefined_by``) when there is no label, or when the expected
  disagreement is 0 (both raters used one and the same label throughout).
- :func:`fleiss_kappa` takes, per set of items, the item count ``N``, the category totals
  ``sum_i n_ij`` and ``sum_i P_i`` (``P_i = (sum_j n_ij**2 - n) / (n (n - 1))``, the share of
  agreeing rater pairs on item ``i``), for ``n`` raters per item; ``p_j = sum_i n_ij / (N n)``,
  ``P_e = sum_j p_j**2`` and ``kappa = (mean P_i - P_e) / (1 - P_e)``:
  ``statsmodels.stats.inter_rater.fleiss_kappa(table, method="fleiss")`` on the item-by-category
  table. NaN when there is no item or ``P_e`` is 1 (every rating the same category).

>>> import numpy as np
>>> float(cohen_kappa(np.array([[2, 1], [0, 2]])))
0.6153846153846154
"""

from __future__ import annotations

import numpy as np

__all__ = ["WEIGHTS", "cohen_kappa", "fleiss_item_agreement", "fleiss_kappa"]

#: The weightings :func:`cohen_kappa` knows (None: unweighted).
WEIGHTS = ("linear", "quadratic")


def _weight_matrix(k: int, weights: str | None) -> np.ndarray:
    index = np.arange(k)
    distance = np.abs(index[:, None] - index[None, :]).astype(np.float64)
    if weights is None:
        return (distance > 0).astype(np.float64)
    if weights == "linear":
        return distance
    if weights == "quadratic":
        return distance**2
    raise ValueError(f"weights={weights!r}: expected None, 'linear' or 'quadratic'")


def cohen_kappa(confusion: np.ndarray, weights: str | None = None) -> np.ndarray:
    """Cohen's kappa of confusion matrices ``(..., K, K)``; NaN where undefined.

    Parameters
    ----------
    confusion
        Counts (or weighted counts) of label pairs: ``confusion[..., i, j]`` is how often
        the first rater said label ``i`` and the second label ``j``.
    weights
        ``None`` (unweighted), ``"linear"`` or ``"quadratic"``: the cost of a disagreement
        between labels ``i`` and ``j`` is ``|i - j|`` or ``(i - j) ** 2``, so the order of
        the labels matters (an ordinal scale).

    Returns
    -------
    np.ndarray
        One kappa per matrix (a 0-d array for one matrix).

    Examples
    --------
    >>> import numpy as np
    >>> table = np.array([[[3, 0], [0, 2]], [[0, 2], [3, 0]], [[5, 0], [0, 0]]])
    >>> cohen_kappa(table).tolist()
    [1.0, -0.9230769230769229, nan]
    >>> float(cohen_kappa(np.array([[2, 1, 0], [0, 1, 1], [0, 0, 3]]), "quadratic"))
    0.8333333333333334
    """
    observed = np.asarray(confusion, dtype=np.float64)
    if observed.ndim < 2 or observed.shape[-1] != observed.shape[-2]:
        raise ValueError(f"confusion matrices must be (..., K, K); got shape {observed.shape}")
    w = _weight_matrix(observed.shape[-1], weights)
    n = observed.sum(axis=(-2, -1))
    rows = observed.sum(axis=-1)
    columns = observed.sum(axis=-2)
    with np.errstate(divide="ignore", invalid="ignore"):
        expected = rows[..., :, None] * columns[..., None, :] / n[..., None, None]
        disagreement = (w * observed).sum(axis=(-2, -1))
        chance = (w * expected).sum(axis=(-2, -1))
        kappa = 1.0 - disagreement / chance
    return np.where((n > 0) & (chance > 0), kappa, np.nan)


def fleiss_item_agreement(counts: np.ndarray) -> np.ndarray:
    """``P_i`` of items given as category counts ``(..., K)``, all with the same raters.

    >>> import numpy as np
    >>> fleiss_item_agreement(np.array([[3, 0, 0], [2, 1, 0], [1, 1, 1]])).tolist()
    [1.0, 0.3333333333333333, 0.0]
    """
    counts = np.asarray(counts, dtype=np.float64)
    raters = counts.sum(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return ((counts**2).sum(axis=-1) - raters) / (raters * (raters - 1.0))


def fleiss_kappa(
    items: np.ndarray, category_totals: np.ndarray, agreement_sum: np.ndarray, raters: int
) -> np.ndarray:
    """Fleiss' kappa from sufficient statistics, vectorised; NaN where undefined.

    Parameters
    ----------
    items
        ``(R,)``: the number of items ``N`` (a reweighted count in a bootstrap replicate).
    category_totals
        ``(R, K)``: ``sum_i n_ij``, the ratings of each category over the items.
    agreement_sum
        ``(R,)``: ``sum_i P_i`` (:func:`fleiss_item_agreement`).
    raters
        The number of raters of every item (at least 2).

    Examples
    --------
    >>> import numpy as np
    >>> table = np.array([[3, 0], [0, 3], [2, 1], [3, 0]])
    >>> kappa = fleiss_kappa(np.array([4.0]), table.sum(axis=0)[None, :],
    ...                      fleiss_item_agreement(table).sum()[None], 3)
    >>> round(float(kappa[0]), 12)
    0.625
    """
    items = np.asarray(items, dtype=np.float64)
    totals = np.asarray(category_totals, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        shares = totals / (items[..., None] * raters)
        expected = (shares**2).sum(axis=-1)
        observed = np.asarray(agreement_sum, dtype=np.float64) / items
        kappa = (observed - expected) / (1.0 - expected)
    return np.where((items > 0) & (expected < 1.0) & np.isfinite(kappa), kappa, np.nan)
