"""evalframe: a vectorized dataframe batch scorer for language-model evaluation results.

>>> import polars as pl, evalframe as ef
>>> scored = ef.score(pl.DataFrame({"n": [10, 10], "c": [2, 5], "task": ["a", "a"]}), ["pass@1"])
>>> ef.aggregate(scored, by=["task"]).select("task", "metric", "n", "value")
shape: (1, 4)
┌──────┬────────┬─────┬───────┐
│ task ┆ metric ┆ n   ┆ value │
│ ---  ┆ ---    ┆ --- ┆ ---   │
│ str  ┆ str    ┆ u32 ┆ f64   │
╞══════╪════════╪═════╪═══════╡
│ a    ┆ pass@1 ┆ 2   ┆ 0.35  │
└──────┴────────┴─────┴───────┘
"""

from evalframe import extract, judge, metrics, normalize
from evalframe._version import __version__
from evalframe.engine import score
from evalframe.errors import EvalframeError
from evalframe.extract.api import extraction_expr
from evalframe.extract.audit import ExtractionAudit, audit_extractors
from evalframe.extract.table import list_extractors
from evalframe.io import load, save, scan
from evalframe.io.adapters import list_formats
from evalframe.io.join import join_metadata
from evalframe.metrics.registry import list_metrics
from evalframe.normalize.table import list_normalizers
from evalframe.rescore import Rescore, rescore
from evalframe.stats import (
    PairedVariance,
    aggregate,
    compare,
    group_tasks,
    mde,
    paired_ar,
    paired_bootstrap,
    paired_variance,
    power,
    sample_size,
)

__all__ = [
    "EvalframeError",
    "ExtractionAudit",
    "PairedVariance",
    "Rescore",
    "__version__",
    "aggregate",
    "audit_extractors",
    "compare",
    "extract",
    "extraction_expr",
    "group_tasks",
    "join_metadata",
    "judge",
    "list_extractors",
    "list_formats",
    "list_metrics",
    "list_normalizers",
    "load",
    "mde",
    "metrics",
    "normalize",
    "paired_ar",
    "paired_bootstrap",
    "paired_variance",
    "power",
    "rescore",
    "sample_size",
    "save",
    "scan",
    "score",
]
