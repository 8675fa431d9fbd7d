"""A one-line progress display for judge runs, on stderr, silent unless stderr is a terminal.

The line reads ``judging 1,234/10,000 | errors 3 | cached 200 | 45.1 req/s | 27s``: prompts
done out of the total (cache hits count as done), prompts that ended in an error, answers
read from the cache, and judge requests per second since the run started (retries
included). It is redrawn in place at most ten times a second and finished with a newline.

>>> import io
>>> bar = Progress(10, stream=io.StringIO())      # not a terminal: silent
>>> bar.enabled
False
>>> class Terminal(io.StringIO):
...     def isatty(self):
...         return True
>>> screen = Terminal()
>>> bar = Progress(2, stream=screen)
>>> bar.update(done=2, cached=1, requests=1)
>>> bar.close()
>>> screen.getvalue().rsplit("\\r", 1)[-1].split(" | ")[:3]
['judging 2/2', 'errors 0', 'cached 1']
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

__all__ = ["Progress"]


class Progress:
    """Progress of a judge run, drawn on a terminal.

    Parameters
    ----------
    total : int
        Prompts in the run.
    stream : text stream or None
        Where to draw; ``sys.stderr`` (looked up when drawing) by default.
    enabled : bool or None
        None (default) draws only when ``stream`` is a terminal; True or False forces it.
    quiet : bool
        Never draw (the CLI's ``--quiet``); wins over ``enabled``.
    interval : float
        Least seconds between two redraws.
    """

    def __init__(self, total: int, *, stream: TextIO | None = None, enabled: bool | None = None,
                 quiet: bool = False, interval: float = 0.1) -> None:
        self.total = int(total)
        self._stream = stream
        if quiet:
            self.enabled = False
        elif enabled is None:
            isatty = getattr(self.stream, "isatty", None)
            self.enabled = bool(isatty and isatty())
        else:
            self.enabled = bool(enabled)
        self.interval = interval
        self.done = self.errors = self.cached = self.requests = 0
        self._start = time.monotonic()
        self._drawn = 0.0
        self._width = 0

    @property
    def stream(self) -> TextIO:
        return self._stream if self._stream is not None else sys.stderr

    def update(self, *, done: int | None = None, errors: int | None = None,
               cached: int | None = None, requests: int | None = None,
               force: bool = False) -> None:
        """Set the counters given (absolute values) and redraw when it is time."""
        if done is not None:
            self.done = done
        if errors is not None:
            self.errors = errors
        if cached is not None:
            self.cached = cached
        if requests is not None:
            self.requests = requests
        if not self.enabled:
            return
        now = time.monotonic()
        if force or now - self._drawn >= self.interval or self.done >= self.total:
            self._drawn = now
            self._draw(now)

    def line(self, now: float | None = None) -> str:
        """The text of the progress line.

        >>> Progress(4, enabled=False).line().split(" | ")[0]
        'judging 0/4'
        """
        elapsed = (time.monotonic() if now is None else now) - self._start
        rate = self.requests / elapsed if elapsed > 0 else 0.0
        return (f"judging {self.done:,}/{self.total:,} | errors {self.errors:,} | "
                f"cached {self.cached:,} | {rate:,.1f} req/s | {elapsed:,.0f}s")

    def _draw(self, now: float) -> None:
        text = self.line(now)
        padding = " " * max(0, self._width - len(text))
        self._width = len(text)
        try:
            self.stream.write("\r" + text + padding)
            self.stream.flush()
        except (OSError, ValueError):  # a closed or broken stream: stop drawing
            self.enabled = False

    def close(self) -> None:
        """Draw the final counts and end the line."""
        if not self.enabled:
            return
        self._draw(time.monotonic())
        try:
            self.stream.write("\n")
            self.stream.flush()
        except (OSError, ValueError):
            pass
        self.enabled = False
