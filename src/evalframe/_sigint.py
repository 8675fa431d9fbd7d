"""Ctrl-C while polars runs a query in the background: Python's handler alone.

Importing polars installs its own SIGINT handler at the operating-system level, in
front of Python's. When an interrupt arrives while some polars call is running, that
handler raises a flag which polars' worker threads answer by panicking. Inside an
ordinary ``collect()`` polars catches the panic and raises ``KeyboardInterrupt``; in a
query started with ``collect(background=True)`` nothing catches it, and the process
aborts ("Rayon: detected unexpected panic; aborting", exit status 134).

:class:`PythonSigintOnly` puts Python's own handler back in front for the length
of a background query, so Ctrl-C is the usual ``KeyboardInterrupt`` in the main thread
(which polls the query and stops it), and restores polars' handler afterwards, so its
other queries stay interruptible.
"""

from __future__ import annotations

import signal
import sys
import threading
from functools import cache
from types import TracebackType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import ctypes

#: Bytes enough for the C ``struct sigaction`` of every supported platform (Linux
#: x86-64 and aarch64 take 152, macOS 16); it is only copied out and back.
_SIGACTION_BYTES = 1024


class PythonSigintOnly:
    """Within the block, SIGINT goes to Python's handler only; afterwards as before.

    Outside the main thread, where signal handlers cannot be changed, or when SIGINT's
    handler was not installed from Python, the block runs as it is. Set ``restore`` to
    False inside the block to keep Python's handler in front afterwards (a background
    query that could not be stopped is still running).

    >>> import signal
    >>> before = signal.getsignal(signal.SIGINT)
    >>> with PythonSigintOnly():
    ...     signal.getsignal(signal.SIGINT) is before
    True
    >>> signal.getsignal(signal.SIGINT) is before
    True
    """

    def __init__(self) -> None:
        self.restore = True
        self._saved: ctypes.Array[ctypes.c_char] | None = None

    def __enter__(self) -> PythonSigintOnly:
        handler = signal.getsignal(signal.SIGINT)
        if threading.current_thread() is threading.main_thread() and handler is not None:
            self._saved = _operating_system_handler()
            signal.signal(signal.SIGINT, handler)  # Python's C-level handler, in front again
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if self._saved is not None and self.restore:
            _set_operating_system_handler(self._saved)
        self._saved = None


@cache
def _libc() -> ctypes.CDLL | None:
    import ctypes

    if sys.platform not in ("linux", "darwin"):
        return None
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.sigaction  # noqa: B018 - present on every POSIX C library
    except (OSError, AttributeError):
        return None
    return libc


def _operating_system_handler() -> ctypes.Array[ctypes.c_char] | None:
    """SIGINT's current ``struct sigaction``, as opaque bytes (None where unavailable)."""
    import ctypes

    libc = _libc()
    if libc is None:
        return None
    action = ctypes.create_string_buffer(_SIGACTION_BYTES)
    if libc.sigaction(signal.SIGINT, None, action) != 0:
        return None
    return action


def _set_operating_system_handler(action: ctypes.Array[ctypes.c_char]) -> None:
    libc = _libc()
    if libc is not None:
        libc.sigaction(signal.SIGINT, action, None)
