"""The one exception type evalframe raises for bad input."""

from __future__ import annotations

from collections.abc import Callable


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


class RowError(EvalframeError):
    """Invalid values in some rows, found by a check inside a plan.

    Polars runs checks batch by batch (and in parallel), so the rows one check saw
    are not all the input. When the engine built the plan, the check registers a
    locator with its message (:func:`register_locator`): a function that checks
    every row of the input again, in one streaming pass, and returns the error for
    the first offending row of the input across every check, counted over the whole
    input. :func:`located` applies it. (Polars re-creates exceptions raised in a
    kernel, keeping their type and message but not their attributes, hence a
    registry keyed by the message.)
    """


#: Locators of recent row errors, by message (bounded; the newest win).
_LOCATORS: dict[str, Callable[[], EvalframeError | None]] = {}


def register_locator(message: str, locate: Callable[[], EvalframeError | None]) -> None:
    """Remember how to locate the row error whose message is ``message``."""
    if len(_LOCATORS) >= 64:
        _LOCATORS.pop(next(iter(_LOCATORS)))
    _LOCATORS[message] = locate


def located(error: EvalframeError) -> EvalframeError:
    """The error with the first offending row of the whole input, where that can be found.

    >>> located(EvalframeError("bad")).args
    ('bad',)
    """
    if not isinstance(error, RowError):
        return error
    locate = _LOCATORS.pop(without_plan(error), None)
    if locate is None:
        return error
    try:
        found = locate()
    except Exception:  # the input cannot be read again: keep what the batch saw
        return error
    return found if found is not None else error


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
