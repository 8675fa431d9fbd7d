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

The corpus metrics of :func:`evalframe.aggregate` must give the same replicates however
the rows were split into batches (:func:`evalframe.combine`), so there the draws never
depend on the order or the split of the rows:

- Table statistics and clustered statistics are resampled after the batches are merged,
  from their cells and clusters in sorted order;
- unclustered Sums statistics use the Poisson bootstrap (Hanley and MacGibbon 2006;
  Chamandy et al. 2012, the bootstrap of data split over many machines): each row's
  weight in each replicate is an independent Poisson(1) count, drawn by a counter-based
  generator (SplitMix64 over the seed, the row's key and the replicate number), so a
  batch computes its rows' share of every replicate on its own
  (:func:`poisson_replicate_sums`).

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
import polars as pl

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


# --- the Poisson bootstrap, keyed by row --------------------------------------------------

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
#: Poisson(1) CDF thresholds on 32-bit uniforms: a weight is how many a draw reaches.
_POISSON_THRESHOLDS = None


def _thresholds() -> np.ndarray:
    global _POISSON_THRESHOLDS
    if _POISSON_THRESHOLDS is None:
        from scipy.stats import poisson

        cdf = poisson.cdf(np.arange(0, 20), 1.0)
        edges = np.floor(cdf * 2.0**32)
        _POISSON_THRESHOLDS = edges[edges < 2.0**32].astype(np.uint64)
    return _POISSON_THRESHOLDS


def _mix(z: np.ndarray) -> np.ndarray:
    """SplitMix64's output function (Steele, Lea and Flood 2014), elementwise on uint64."""
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def poisson_weights(keys: np.ndarray, replicates: int, seed: int) -> np.ndarray:
    """``(replicates, len(keys))`` Poisson(1) weights, a pure function of (seed, key, replicate).

    >>> w = poisson_weights(np.arange(50_000, dtype=np.uint64), 4, seed=0)
    >>> w.shape, round(float(w.mean()), 2), round(float(w.var()), 2)
    ((4, 50000), 1.0, 1.0)
    >>> bool((poisson_weights(np.array([7], dtype=np.uint64), 4, 0)
    ...       == w[:, 7:8]).all())  # a row's weights do not depend on the other rows
    True
    """
    with np.errstate(over="ignore"):
        base = _mix(np.asarray(keys, dtype=np.uint64) ^ _mix(np.array([seed], dtype=np.uint64)))
        steps = (np.arange(replicates, dtype=np.uint64) + np.uint64(1)) * _GOLDEN
        uniform = _mix(base[None, :] + steps[:, None]) >> np.uint64(32)
    weights = np.zeros(uniform.shape, dtype=np.uint8)
    for edge in _thresholds():
        weights += uniform >= edge
    return weights


def poisson_replicate_sums(
    keys: np.ndarray, matrix: np.ndarray, *, replicates: int, seed: int
) -> np.ndarray:
    """``(replicates, fields)``: each replicate's Poisson-weighted column sums of ``matrix``.

    ``keys``: one uint64 per row (:func:`row_keys`); ``matrix``: ``(rows, fields)``
    statistics. The sums of two batches add up to the sums of the whole, whatever the split.

    >>> keys = np.arange(6, dtype=np.uint64)
    >>> x = np.arange(12, dtype=np.float64).reshape(6, 2)
    >>> whole = poisson_replicate_sums(keys, x, replicates=5, seed=1)
    >>> split = (poisson_replicate_sums(keys[:2], x[:2], replicates=5, seed=1)
    ...          + poisson_replicate_sums(keys[2:], x[2:], replicates=5, seed=1))
    >>> bool(np.array_equal(whole, split))
    True
    """
    matrix = np.asarray(matrix, dtype=np.float64)
    keys = np.asarray(keys, dtype=np.uint64)
    sums = np.zeros((replicates, matrix.shape[1]), dtype=np.float64)
    step = max(1, BLOCK // max(replicates, 1))
    for start in range(0, keys.size, step):
        weights = poisson_weights(keys[start:start + step], replicates, seed)
        with np.errstate(invalid="ignore", over="ignore"):  # inf statistics: NaN replicates
            sums += weights.astype(np.float64) @ matrix[start:start + step]
    return sums


def row_keys(frame: pl.LazyFrame | pl.DataFrame) -> pl.Expr:
    """A UInt64 key of each row from its content: what the Poisson weights are drawn from.

    A hash of every column (in name order; categorical columns as their text), so a row
    has the same key in any batch, in any process of the same Polars version. Rows equal
    in every column share their weights: they are drawn together.

    >>> frame = pl.DataFrame({"b": ["x", "y"], "a": [1, 2]})
    >>> frame.select(row_keys(frame)).to_series().equals(
    ...     frame.select("a", "b").select(row_keys(frame)).to_series())
    True
    """
    schema = frame.collect_schema() if isinstance(frame, pl.LazyFrame) else frame.schema
    columns = [
        pl.col(name).cast(pl.String) if isinstance(dtype, pl.Categorical | pl.Enum)
        else pl.col(name)
        for name, dtype in sorted(schema.items())
    ]
    return pl.struct(columns).hash(seed=0x5EED)
