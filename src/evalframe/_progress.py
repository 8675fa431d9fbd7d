"""An elapsed-time indicator for long calls of the Python API, in notebooks and terminals.

``ef.score``, ``ef.aggregate`` and ``ef.compare`` run one Polars plan each, so there is
no count of rows done to show; what a user waiting on 264k rows needs is to see that the
work goes on. :func:`working` shows ``scoring: 14s`` (tqdm: a widget in a notebook where
ipywidgets is installed, else a line on stderr) once a call has taken a second, redrawn
twice a second, and removed when the call ends. Nothing is shown when the session is not
interactive (no terminal, no notebook), when ``EVALFRAME_PROGRESS=0``, inside another
indicator, or under the command line (which draws its own).

>>> with working("scoring"):  # not interactive here: shows nothing
...     pass
"""

from __future__ import annotations

import functools
import os
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

__all__ = ["ENABLED", "shows_progress", "working"]

F = TypeVar("F", bound=Callable[..., Any])

#: Switched off by the command line, which shows its own progress.
ENABLED = [True]
#: Seconds a call runs before the indicator appears.
DELAY = 1.0
_ACTIVE = threading.local()


def _in_notebook() -> bool:
    shell = sys.modules.get("IPython")
    if shell is None:
        return False
    get = getattr(shell, "get_ipython", None)
    instance = get() if get else None
    return instance is not None and "IPKernelApp" in getattr(instance, "config", {})


def interactive() -> bool:
    """Whether an indicator would be seen: a notebook, or stderr on a terminal."""
    if not ENABLED[0] or os.environ.get("EVALFRAME_PROGRESS", "1") == "0":
        return False
    isatty = getattr(sys.stderr, "isatty", None)
    return _in_notebook() or bool(isatty and isatty())


def _bar(label: str) -> Any:
    if _in_notebook():
        try:
            import ipywidgets  # noqa: F401
            from tqdm.notebook import tqdm
        except ImportError:
            from tqdm import tqdm
    else:
        from tqdm import tqdm
    return tqdm(total=None, desc=label, bar_format="{desc}: {elapsed}", leave=False)


@contextmanager
def working(label: str) -> Iterator[None]:
    """Within the block, an elapsed-time indicator once it has run :data:`DELAY` seconds."""
    if getattr(_ACTIVE, "on", False) or not interactive():
        yield
        return
    try:
        import tqdm  # noqa: F401
    except ImportError:  # tqdm is optional: no indicator without it
        yield
        return
    done = threading.Event()

    def show() -> None:
        if done.wait(DELAY):
            return
        bar = _bar(label)
        try:
            while not done.wait(0.5):
                bar.refresh()
        finally:
            bar.close()

    _ACTIVE.on = True
    thread = threading.Thread(target=show, name="evalframe-progress", daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()
        _ACTIVE.on = False


def shows_progress(label: str) -> Callable[[F], F]:
    """Run the decorated function inside :func:`working` (``label``)."""

    def decorate(function: F) -> F:
        @functools.wraps(function)
        def run(*args: Any, **kwargs: Any) -> Any:
            with working(label):
                return function(*args, **kwargs)

        return run  # type: ignore[return-value]

    return decorate
