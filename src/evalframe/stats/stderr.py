"""Standard errors of a mean: independent rows, and rows clustered by question.

- :func:`mean_stderr`: the sample standard deviation over ``sqrt(n)`` (lm-eval's
  ``mean_stderr``), for rows that are independent draws.
- :func:`clustered_stderr`: the cluster-robust standard error of the mean (Miller 2024,
  "Adding Error Bars to Evals", eq. 4; the formula Inspect's ``stderr(cluster=...)``
  implements), for rows that repeat a question (several generations per question, or
  several questions per passage):

  ``SE = sqrt( C/(C-1) * sum_c ( sum_{i in c} (x_i - mean) )**2 ) / n``

  with ``C`` clusters and ``n`` rows. With one row per cluster it is the plug-in standard
  error times ``sqrt(n/(n-1))``, i.e. :func:`mean_stderr`.
- :func:`question_mean_stderr`: score each cluster by its mean, then the standard error
  of those means over clusters (the "average over samples first" form).
- :func:`variance_split`: Miller's decomposition with K samples per question: the
  variance of the question means (between) and the mean within-question variance.

Every function works on numpy arrays; :func:`clustered_stderr_expr` gives the same
clustered SE for a ``group_by`` over many groups at once, in two Polars passes.

The methods ``aggregate(stderr=...)`` takes are registered here, in
:data:`~evalframe.stats.methods.STDERR_METHODS`: ``"auto"`` (:func:`auto_stderr`) and
``"question_mean"`` (:func:`question_mean_stderr`).

>>> import numpy as np
>>> x = np.array([1.0, 1.0, 0.0, 0.0])
>>> round(mean_stderr(x), 6), round(clustered_stderr(x, np.array([0, 0, 1, 1])), 6)
(0.288675, 0.5)
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import polars as pl

from evalframe.stats.methods import STDERR_METHODS, StderrMethod


def mean_stderr(values: np.ndarray) -> float:
    """``std(values, ddof=1) / sqrt(n)``; NaN for fewer than two values."""
    values = np.asarray(values, dtype=np.float64)
    if values.size < 2:
        return math.nan
    return float(np.std(values, ddof=1) / math.sqrt(values.size))


def clustered_stderr(values: np.ndarray, clusters: np.ndarray) -> float:
    """The cluster-robust standard error of the mean, with the ``C/(C-1)`` correction.

    NaN for fewer than two clusters (no spread between clusters to estimate).
    """
    values = np.asarray(values, dtype=np.float64)
    _, index = np.unique(np.asarray(clusters), return_inverse=True)
    n_clusters = int(index.max()) + 1 if values.size else 0
    if n_clusters < 2:
        return math.nan
    residuals = values - values.mean()
    per_cluster = np.bincount(index, weights=residuals, minlength=n_clusters)
    variance = n_clusters / (n_clusters - 1) * float(np.sum(per_cluster**2))
    return math.sqrt(variance) / values.size


def auto_stderr(values: np.ndarray, clusters: np.ndarray | None = None) -> float:
    """:func:`clustered_stderr` where ``clusters`` repeat (rows repeat a question), else
    :func:`mean_stderr` (independent rows, where the two are equal).

    >>> x = np.array([1.0, 1.0, 0.0, 0.0])
    >>> round(auto_stderr(x), 6), round(auto_stderr(x, np.array([0, 0, 1, 1])), 6)
    (0.288675, 0.5)
    """
    values = np.asarray(values, dtype=np.float64)
    if clusters is None or np.unique(np.asarray(clusters)).size == values.size:
        return mean_stderr(values)
    return clustered_stderr(values, clusters)


STDERR_METHODS.add(StderrMethod(
    name="auto",
    function=auto_stderr,
    description=(
        "the standard error of the mean, cluster-robust where rows repeat a question "
        "(corpus metrics: a seeded bootstrap)"
    ),
    reference="Miller 2024, Adding Error Bars to Evals, eq. 4 (Inspect's stderr(cluster=))",
))


def question_mean_stderr(values: np.ndarray, clusters: np.ndarray) -> float:
    """The standard error over clusters of each cluster's mean score."""
    values = np.asarray(values, dtype=np.float64)
    _, index = np.unique(np.asarray(clusters), return_inverse=True)
    if values.size == 0:
        return math.nan
    sums = np.bincount(index, weights=values)
    counts = np.bincount(index)
    return mean_stderr(sums / counts)


STDERR_METHODS.add(StderrMethod(
    name="question_mean",
    function=question_mean_stderr,
    description=(
        "score each question by the mean of its samples, then the standard error over "
        "the questions (needs clusters)"
    ),
    reference="Miller 2024, Adding Error Bars to Evals, section 3.2",
    needs_clusters=True,
    per_question=True,
))


def variance_split(values: np.ndarray, clusters: np.ndarray) -> tuple[float, float]:
    """(between, within): Miller's split of the variance with K samples per question.

    Miller (2024), section 3.2: a question's mean over its K samples has variance
    ``between + within / K``, where ``within`` is the mean within-question variance
    (``ddof=1``) and ``between`` the variance of the questions' true scores. So
    ``between = var(question means) - within / K`` (K the harmonic mean of the samples
    per question; floored at 0), and the variance of the overall mean is
    ``(between + within / K) / n_questions``. NaN when a question has one sample only.

    >>> x = np.array([1.0, 1.0, 0.0, 0.0, 1.0, 0.0])
    >>> between, within = variance_split(x, np.array([0, 0, 1, 1, 2, 2]))
    >>> round(between, 12), round(within, 12)  # var of means 0.25 - (1/6) / 2; mean(0, 0, 1/2)
    (0.166666666667, 0.166666666667)
    """
    values = np.asarray(values, dtype=np.float64)
    _, index = np.unique(np.asarray(clusters), return_inverse=True)
    counts = np.bincount(index)
    means = np.bincount(index, weights=values) / counts
    squares = np.bincount(index, weights=(values - means[index]) ** 2)
    with np.errstate(invalid="ignore", divide="ignore"):
        within = float(np.mean(squares / (counts - 1))) if counts.size else math.nan
    if means.size < 2 or not np.isfinite(within):
        return math.nan, within
    k = counts.size / float(np.sum(1.0 / counts))
    between = max(float(np.var(means, ddof=1)) - within / k, 0.0)
    return between, within


def clustered_stderr_expr(
    frame: pl.LazyFrame, keys: Sequence[str], value: str, cluster: str
) -> pl.LazyFrame:
    """Per group of ``keys``: ``n``, ``n_clusters``, ``mean``, the clustered ``stderr``, and
    the question-mean form (``question_mean``, ``question_stderr``).

    Two passes: the sum and count of ``value`` per (group, cluster), then per group
    ``sum_c (S_c - n_c * mean)**2`` (the squared residual sum of each cluster), which
    equals the formula of :func:`clustered_stderr`; and the mean and standard error of
    the clusters' means (:func:`question_mean_stderr`). Null values are left out.
    """
    keys = list(keys)
    x = pl.col(value).cast(pl.Float64)
    per_cluster = (
        frame.filter(x.is_not_null())
        .group_by([*keys, cluster])
        .agg(sum=x.sum(), count=x.count())
    )
    return clustered_from_sums(per_cluster, keys, "sum", "count")


def clustered_from_sums(
    per_cluster: pl.LazyFrame, keys: Sequence[str], sums: str, counts: str
) -> pl.LazyFrame:
    """The second pass of :func:`clustered_stderr_expr`, from each cluster's sum and count.

    ``per_cluster`` holds one row per (group, cluster) with a value count above 0: the
    statistics that add up across batches, so a clustered standard error can be computed
    from batches' sums merged (:func:`evalframe.combine`).
    """
    keys = list(keys)
    total = pl.col(counts).sum()
    mean = pl.col(sums).sum() / total
    clusters = pl.len()
    residual = ((pl.col(sums) - pl.col(counts) * mean) ** 2).sum()
    question_means = pl.col(sums) / pl.col(counts)
    aggregations = [
        total.alias("n"),
        clusters.cast(pl.UInt32).alias("n_clusters"),
        mean.alias("mean"),
        (
            pl.when(clusters > 1)
            .then((clusters / (clusters - 1) * residual).sqrt() / total)
            .otherwise(None)
        ).alias("stderr"),
        question_means.mean().alias("question_mean"),
        (question_means.std(ddof=1) / clusters.cast(pl.Float64).sqrt()).alias("question_stderr"),
    ]
    if keys:
        return per_cluster.group_by(keys).agg(aggregations)
    return per_cluster.select(aggregations)
