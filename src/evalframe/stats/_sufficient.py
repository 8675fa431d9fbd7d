"""The sufficient statistics of a batch of scored rows, and the aggregate table from them.

:func:`batch_statistics` reduces one batch (a frame, or any part of one) to what the
aggregate needs, per group: sample metrics' counts, means and standard deviations (and
each cluster's sums), corpus metrics' cells, sums and Poisson bootstrap replicate sums.
:func:`finish` merges the statistics of any number of batches and computes the table.
``aggregate`` is ``finish`` of one batch, the whole frame; ``combine`` of many.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import polars as pl

from evalframe.stats._corpus import CorpusStatistics, corpus_statistics, finish_corpus
from evalframe.stats._sample import (
    Settings,
    finish_samples,
    merge_samples,
    sample_statistics,
)
from evalframe.stats.columns import MetricColumn

#: The columns of an aggregate table after the group keys.
AGGREGATE_COLUMNS = (
    "metric", "n", "n_missing", "n_null", "value", "stderr", "ci_low", "ci_high", "n_clusters",
    "signature",
)


@dataclass(frozen=True)
class Statistics:
    """What one batch contributes: sample metrics' per-group (and per-cluster) statistics,
    and each corpus metric's :class:`~evalframe.stats._corpus.CorpusStatistics`."""

    samples: pl.DataFrame | None
    clusters: pl.DataFrame | None
    corpus: tuple[CorpusStatistics, ...]


def batch_statistics(
    frame: pl.LazyFrame,
    keys: list[str],
    chosen: Sequence[MetricColumn],
    settings: Settings,
    *,
    unclustered: bool,
) -> Statistics:
    """The :class:`Statistics` of ``frame``, kept per ``settings.cluster`` id when set.

    ``unclustered``: whether the corpus metrics' row bootstrap is needed too (the cluster
    column is a candidate that may not repeat; :func:`finish` decides).
    """
    samples = [column for column in chosen if column.level == "sample"]
    summary = per_cluster = None
    if samples:
        summary, per_cluster = sample_statistics(frame, keys, samples, settings)
    corpus = tuple(
        corpus_statistics(
            frame, keys, column, settings, cluster=settings.cluster, unclustered=unclustered
        )
        for column in chosen
        if column.level == "corpus"
    )
    return Statistics(summary, per_cluster, corpus)


def finish(
    parts: Sequence[Statistics],
    keys: list[str],
    chosen: Sequence[MetricColumn],
    settings: Settings,
) -> pl.DataFrame:
    """The aggregate rows (before sorting) from the statistics of one or more batches."""
    tables = []
    samples = [column for column in chosen if column.level == "sample"]
    if samples:
        summary = merge_samples([part.samples for part in parts], keys, len(samples))
        per_cluster = (
            [part.clusters for part in parts] if settings.cluster is not None else None
        )
        tables.append(finish_samples(summary, per_cluster, keys, samples, settings))
    corpus = [column for column in chosen if column.level == "corpus"]
    for j, column in enumerate(corpus):
        tables.append(finish_corpus([part.corpus[j] for part in parts], keys, column, settings))
    # a metric whose reference has its own signature (sacrebleu's) adds that column
    extra = [
        name for name in ("reference_signature",)
        if any(name in table.columns and table[name].null_count() < table.height
               for table in tables)
    ]
    return pl.concat(
        [
            table.select(
                *keys, *AGGREGATE_COLUMNS,
                *(pl.col(name) if name in table.columns
                  else pl.lit(None, dtype=pl.String).alias(name) for name in extra),
            )
            for table in tables
        ],
        how="vertical_relaxed",
    )
