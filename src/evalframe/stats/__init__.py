"""Aggregates with honest error bars."""

from evalframe.stats.aggregate import aggregate, metric_columns
from evalframe.stats.compare import compare
from evalframe.stats.groups import group_tasks
from evalframe.stats.power import PairedVariance, mde, paired_variance, power, sample_size
from evalframe.stats.signature import signature
from evalframe.stats.significance import paired_ar, paired_bootstrap
from evalframe.stats.stderr import clustered_stderr, question_mean_stderr, variance_split

__all__ = [
    "PairedVariance",
    "aggregate",
    "clustered_stderr",
    "compare",
    "group_tasks",
    "mde",
    "metric_columns",
    "paired_ar",
    "paired_bootstrap",
    "paired_variance",
    "power",
    "question_mean_stderr",
    "sample_size",
    "signature",
    "variance_split",
]
