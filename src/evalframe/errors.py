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


def without_plan(error: Exception) -> str:
    """The message of an error raised inside a polars plan, without the plan.

    Polars appends the expression it was evaluating to an exception raised in a
    kernel; the user's message is what comes before it.

    >>> without_plan(ValueError("bad row\\n\\nThis error occurred in ..."))
    'bad row'
    >>> without_plan(ValueError("bad row\\n\\nResolved plan until failure: ..."))
    'bad row'
    """
    text = str(error)
    for marker in ("\n\nThis error occurred", "\n\nResolved plan until failure"):
        text = text.split(marker, 1)[0]
    return text
