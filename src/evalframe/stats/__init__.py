"""Aggregates with honest error bars.

The statistics methods are in tables (:mod:`evalframe.stats.methods`), one per kind:
:data:`STDERR_METHODS` and :data:`INTERVAL_METHODS` (``aggregate``'s ``stderr=`` and
``interval=``), :data:`COMPARISON_TESTS` and :data:`CORRECTION_METHODS` (``compare``'s
``method=`` and ``correction=``).

>>> INTERVAL_METHODS.frame().select("name", "binary").rows()  # doctest: +NORMALIZE_WHITESPACE
[('auto', False), ('wilson', True), ('clopper_pearson', True), ('jeffreys', True),
 ('t', False), ('normal', False)]
"""

from evalframe.stats.aggregate import aggregate, cluster_column, metric_columns
from evalframe.stats.compare import compare
from evalframe.stats.gate import GateResult, gate
from evalframe.stats.groups import group_tasks
from evalframe.stats.methods import (
    COMPARISON_TESTS,
    CORRECTION_METHODS,
    INTERVAL_METHODS,
    STDERR_METHODS,
)
from evalframe.stats.partial import Partial, combine, partial
from evalframe.stats.power import PairedVariance, mde, paired_variance, power, sample_size
from evalframe.stats.ranks import ranks
from evalframe.stats.signature import signature
from evalframe.stats.significance import paired_ar, paired_bootstrap
from evalframe.stats.stderr import clustered_stderr, question_mean_stderr, variance_split

__all__ = [
    "COMPARISON_TESTS",
    "CORRECTION_METHODS",
    "INTERVAL_METHODS",
    "STDERR_METHODS",
    "GateResult",
    "PairedVariance",
    "Partial",
    "aggregate",
    "cluster_column",
    "clustered_stderr",
    "combine",
    "compare",
    "gate",
    "group_tasks",
    "mde",
    "metric_columns",
    "paired_ar",
    "paired_bootstrap",
    "paired_variance",
    "partial",
    "power",
    "question_mean_stderr",
    "ranks",
    "sample_size",
    "signature",
    "variance_split",
]
