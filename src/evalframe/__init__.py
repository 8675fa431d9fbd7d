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

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from evalframe._version import __version__

if TYPE_CHECKING:  # the names below, imported only when first used (a fast import)
    from evalframe import extract, judge, metrics, normalize, plot
    from evalframe.engine import score
    from evalframe.errors import EvalframeError
    from evalframe.extract.api import extraction_expr
    from evalframe.extract.audit import ExtractionAudit, audit_extractors
    from evalframe.extract.table import list_extractors
    from evalframe.formatted import FormattedTable, table
    from evalframe.io import load, save, scan
    from evalframe.io.adapters import list_formats
    from evalframe.io.join import join_metadata
    from evalframe.metrics.registry import list_metrics
    from evalframe.normalize.table import list_normalizers
    from evalframe.reporting import Report, report
    from evalframe.rescoring import Rescore, rescore
    from evalframe.stats import (
        GateResult,
        PairedVariance,
        Partial,
        aggregate,
        combine,
        compare,
        gate,
        group_tasks,
        mde,
        paired_ar,
        paired_bootstrap,
        paired_variance,
        partial,
        power,
        ranks,
        sample_size,
    )

#: Where each public name lives: imported on first use, so ``import evalframe`` stays fast
#: (a command or a script pays only for what it uses).
_LOCATIONS = {
    "EvalframeError": "evalframe.errors",
    "FormattedTable": "evalframe.formatted",
    "ExtractionAudit": "evalframe.extract.audit",
    "PairedVariance": "evalframe.stats",
    "Partial": "evalframe.stats",
    "combine": "evalframe.stats",
    "partial": "evalframe.stats",
    "Report": "evalframe.reporting",
    "Rescore": "evalframe.rescoring",
    "aggregate": "evalframe.stats",
    "audit_extractors": "evalframe.extract.audit",
    "compare": "evalframe.stats",
    "gate": "evalframe.stats",
    "GateResult": "evalframe.stats",
    "extraction_expr": "evalframe.extract.api",
    "group_tasks": "evalframe.stats",
    "join_metadata": "evalframe.io.join",
    "list_extractors": "evalframe.extract.table",
    "list_formats": "evalframe.io.adapters",
    "list_metrics": "evalframe.metrics.registry",
    "list_normalizers": "evalframe.normalize.table",
    "load": "evalframe.io",
    "mde": "evalframe.stats",
    "paired_ar": "evalframe.stats",
    "paired_bootstrap": "evalframe.stats",
    "paired_variance": "evalframe.stats",
    "power": "evalframe.stats",
    "ranks": "evalframe.stats",
    "report": "evalframe.reporting",
    "rescore": "evalframe.rescoring",
    "sample_size": "evalframe.stats",
    "save": "evalframe.io",
    "scan": "evalframe.io",
    "table": "evalframe.formatted",
    "score": "evalframe.engine",
}
_SUBMODULES = ("extract", "judge", "metrics", "normalize", "plot")


def __getattr__(name: str) -> Any:
    if name in _SUBMODULES:
        value = importlib.import_module(f"evalframe.{name}")
    elif name in _LOCATIONS:
        value = getattr(importlib.import_module(_LOCATIONS[name]), name)
    else:
        raise AttributeError(f"module 'evalframe' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """The public surface (what tab completion offers): ``__all__``, not the helpers."""
    return sorted(__all__)


__all__ = [
    "EvalframeError",
    "ExtractionAudit",
    "FormattedTable",
    "GateResult",
    "PairedVariance",
    "Partial",
    "Report",
    "Rescore",
    "__version__",
    "aggregate",
    "audit_extractors",
    "combine",
    "compare",
    "extract",
    "extraction_expr",
    "gate",
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
    "partial",
    "plot",
    "power",
    "ranks",
    "report",
    "rescore",
    "sample_size",
    "save",
    "scan",
    "score",
    "table",
]
