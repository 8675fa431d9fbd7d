"""Aggregates with honest error bars."""

from evalframe.stats.aggregate import aggregate, metric_columns, signature

__all__ = ["aggregate", "metric_columns", "signature"]
