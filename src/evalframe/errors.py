"""The one exception type evalframe raises for bad input."""

from __future__ import annotations


class EvalframeError(ValueError):
    """Bad input: a missing column, a wrong dtype, or invalid values.

    Messages name the metric, the column, how many rows are affected and the
    first offending row, and say what was expected.

    Examples
    --------
    >>> from evalframe import EvalframeError
    >>> issubclass(EvalframeError, ValueError)
    True
    """
