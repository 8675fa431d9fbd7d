"""Bootstrap standard errors of corpus metrics, vectorised over the per-row statistics.

A bootstrap replicate resamples the ``n`` rows of a group with replacement and
reduces the resampled statistics to a score; the standard error is the standard
deviation of ``B`` replicate scores (``ddof=1``; *not* divided by ``sqrt(B)``, which
is lighteval's ``bootstrap_stderr`` bug). Nothing loops over rows in Python:

- :class:`~evalframe.metrics.reduce.Table` statistics (label pairs) are counted
  into cells once; resampling ``n`` rows is then exactly a multinomial draw of the
  cell counts, ``rng.multinomial(n, counts / n, size=B)``: one call for all ``B``
  replicates, whatever ``n``.
- :class:`~evalframe.metrics.reduce.Sums` statistics: each replicate's sums are
  ``w @ S`` with ``w`` the resampling counts of the rows (``np.bincount`` of ``n``
  uniform draws), a few replicates at a time.

Randomness comes from ``numpy.random.default_rng(seed)`` afresh for every group and
metric, so a group's interval does not depend on which other groups are present.

>>> import numpy as np
>>> from evalframe.metrics.reduce import Sums
>>> ratio = Sums("ratio", lambda s: s["x"] / s["n"])
>>> values = {"x": np.array([1.0, 0.0, 1.0, 1.0]), "n": np.ones(4)}
>>> replicates = bootstrap_sums(ratio, values, replicates=200, seed=0)
>>> replicates.shape, bool(0.0 <= replicates.min() <= replicates.max() <= 1.0)
((200,), True)
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from evalframe.metrics.reduce import Sums, Table

#: Rows x replicates drawn per step of the Sums bootstrap (bounds its memory).
BLOCK = 4_000_000


def bootstrap_table(
    reduction: Table,
    cells: Mapping[str, np.ndarray],
    counts: np.ndarray,
    *,
    replicates: int,
    seed: int,
) -> np.ndarray:
    """``replicates`` scores of a contingency table resampled row by row (multinomially)."""
    counts = np.asarray(counts, dtype=np.int64)
    n = int(counts.sum())
    rng = np.random.default_rng(seed)
    drawn = rng.multinomial(n, counts / n, size=replicates)
    return np.asarray(reduction.formula(cells, drawn), dtype=np.float64)


def bootstrap_sums(
    reduction: Sums,
    values: Mapping[str, np.ndarray],
    *,
    replicates: int,
    seed: int,
) -> np.ndarray:
    """``replicates`` scores of the rows' statistics resampled with replacement."""
    names = list(values)
    matrix = np.column_stack([np.asarray(values[name], dtype=np.float64) for name in names])
    n = matrix.shape[0]
    rng = np.random.default_rng(seed)
    step = max(1, BLOCK // max(n, 1))
    sums = np.empty((replicates, len(names)), dtype=np.float64)
    for start in range(0, replicates, step):
        stop = min(start + step, replicates)
        weights = np.stack(
            [np.bincount(rng.integers(0, n, size=n), minlength=n) for _ in range(stop - start)]
        ).astype(np.float64)
        with np.errstate(invalid="ignore", over="ignore"):  # inf statistics: NaN replicates
            sums[start:stop] = weights @ matrix
    return np.asarray(
        reduction.formula({name: sums[:, i] for i, name in enumerate(names)}), dtype=np.float64
    )


def bootstrap_clusters(n_clusters: int, replicates: int, seed: int) -> np.ndarray:
    """``(replicates, n_clusters)`` resampling counts: whole clusters drawn with replacement.

    The cluster bootstrap for rows that repeat a question: a replicate draws
    ``n_clusters`` clusters (questions) with replacement and keeps all their rows, so the
    correlation within a question is kept. Row ``b`` of the result says how often each
    cluster was drawn in replicate ``b``; a replicate's statistics are ``weights @
    per_cluster_statistics``.
    """
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, n_clusters, size=(replicates, n_clusters))
    offsets = np.arange(replicates)[:, None] * n_clusters
    counts = np.bincount((draws + offsets).ravel(), minlength=replicates * n_clusters)
    return counts.reshape(replicates, n_clusters).astype(np.float64)


def replicate_stderr(scores: np.ndarray) -> float:
    """The standard deviation of the replicate scores (``ddof=1``): the bootstrap stderr."""
    return float(np.std(scores, ddof=1))
