"""Aggregates with honest error bars."""

from evalframe.stats.aggregate import aggregate, metric_columns
from evalframe.stats.compare import compare
from evalframe.stats.groups import group_tasks
from evalframe.stats.power import PairedVariance, mde, paired_variance, power, sample_size
from evalframe.stats.signature import signature

__all__ = [
    "PairedVariance",
    "aggregate",
    "compare",
    "group_tasks",
    "mde",
    "metric_columns",
    "paired_variance",
    "power",
    "sample_size",
    "signature",
]
