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


class OptionError(EvalframeError):
    """An argument that cannot be used as given: which one, its value, and what is wrong.

    The message names the argument as the function takes it (``ci=1.5 ...``);
    ``problem`` says what is wrong in words that fit any spelling of it, so that a caller
    that took the value under another name (the command line's ``--ci``) can say it in
    its own terms with :meth:`reworded`. ``problem`` is a clause that follows the value
    (``must be >= 2``), or with ``clause=False`` a finding that follows it after a colon
    (``no such column(s); available: a, b``).

    >>> error = OptionError("bootstrap=1 must be an integer >= 2", option="bootstrap",
    ...                     value=1, problem="must be >= 2")
    >>> error.reworded("--bootstrap")
    '--bootstrap 1 must be >= 2'
    >>> OptionError("by=['x']: no such column", option="by", value=["x", "y"],
    ...             problem="no such column(s)", clause=False).reworded("--by")
    '--by x,y: no such column(s)'
    """

    def __init__(
        self, message: str, *, option: str, value: object, problem: str, clause: bool = True
    ) -> None:
        super().__init__(message)
        self.option = option
        self.value = value
        self.problem = problem
        self.clause = clause

    def reworded(self, name: str, shown: str | None = None) -> str:
        """The error for the argument called ``name``, its value shown as ``shown`` (by
        default the value, a list of values joined by commas)."""
        if shown is None:
            value = self.value
            items = value if isinstance(value, list | tuple) else [value]
            shown = ",".join(str(item) for item in items)
        return f"{name} {shown} {self.problem}" if self.clause else (
            f"{name} {shown}: {self.problem}"
        )


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
