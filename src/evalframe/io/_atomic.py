"""Atomic file replacement: a private temporary file beside the target, renamed into place.

Each save writes to its own temporary file (``.<name>.<random>.partial``, created by
:func:`tempfile.mkstemp` in the target's folder, so the rename cannot cross file
systems) through an :class:`Output` that records whether writing itself failed. Only a
complete, flushed file is renamed onto the target; on any error or interruption the
temporary file is removed and the target is left as it was. SIGTERM is turned into an
exception for the duration (:func:`sigterm_raises`) so that the cleanup runs too.
"""

from __future__ import annotations

import io
import os
import signal
import stat
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from types import FrameType

from evalframe.errors import EvalframeError
from evalframe.io.paths import expand_user_path

#: Bytes of the target's name kept in the temporary file's name (file names are limited
#: to 255 bytes; the dot, the random part and the suffix need room too).
_NAME_KEPT = 200


class Interrupted(BaseException):
    """SIGTERM arrived during a save; raised so the cleanup runs, then the signal is re-sent."""


class Output(io.RawIOBase):
    """The temporary file a save writes, as a binary file object that polars writes into.

    Writes go straight to the file descriptor. An ``OSError`` while writing is kept in
    :attr:`failure`, so that a polars error caused by it can be told apart from an
    error of the plan (reading an input, a metric's check). After :meth:`abort` every
    write fails, which stops a streaming sink at its next write.

    >>> import os, tempfile
    >>> target = Path(tempfile.mkdtemp()) / "t.csv"
    >>> with replacing(target, "t.csv") as out:
    ...     _ = out.write(b"x\\n1\\n")
    >>> target.read_text(), sorted(os.listdir(target.parent))
    ('x\\n1\\n', ['t.csv'])
    """

    def __init__(self, fd: int, path: Path) -> None:
        super().__init__()
        self.path = path
        self.failure: OSError | None = None
        self._fd = fd
        self._lock = threading.Lock()  # a write in flight finishes before the file is closed
        self._stopped = False

    def writable(self) -> bool:
        return True

    def write(self, data: bytes | bytearray | memoryview) -> int:  # type: ignore[override]
        with self._lock:
            if self._stopped:
                raise OSError("the save was stopped")
            view = memoryview(data).cast("B")
            try:
                written = 0
                while written < len(view):
                    written += os.write(self._fd, view[written:])
            except OSError as error:
                self.failure = self.failure or error
                raise
            return written

    def abort(self) -> None:
        """Refuse every further write, close the file and remove it (idempotent)."""
        with self._lock:
            fd, self._stopped, self._fd = self._fd, True, -1
        if fd >= 0:
            with suppress(OSError):
                os.close(fd)
        with suppress(OSError):
            self.path.unlink()

    def commit(self, target: Path) -> None:
        """Flush the file to disk, give it the target's mode, rename it onto the target."""
        with self._lock:
            fd, self._stopped, self._fd = self._fd, True, -1
        try:
            os.fsync(fd)
            _take_mode(fd, target)
        finally:
            os.close(fd)
        os.replace(self.path, target)
        _sync_folder(target.parent)


@contextmanager
def replacing(target: Path, shown: str) -> Iterator[Output]:
    """Write a new version of ``target`` through the :class:`Output` this yields.

    ``target`` is the file to replace, already resolved (:func:`resolve_target`);
    ``shown`` is the path as the user gave it, for messages. On success the new file
    replaces ``target`` atomically; on any exception or interruption the temporary
    file is removed and ``target`` is unchanged. A failure to write becomes an
    :class:`EvalframeError` naming ``shown`` and the cause; anything else (an error of
    the plan, ``KeyboardInterrupt``) is re-raised as it is.

    >>> import tempfile
    >>> target = Path(tempfile.mkdtemp()) / "t.txt"
    >>> with replacing(target, "t.txt") as out:
    ...     _ = out.write(b"new")
    >>> target.read_bytes()
    b'new'
    """
    with sigterm_raises(shown):
        out = _create_beside(target, shown)
        committing = False
        try:
            yield out
            committing = True
            out.commit(target)
        except BaseException as error:
            late: KeyboardInterrupt | None = None
            while True:  # a second Ctrl-C must not skip the cleanup
                try:
                    out.abort()
                    break
                except KeyboardInterrupt as interrupt:
                    late = interrupt
            if late is not None:
                raise late from error
            failure = out.failure
            if failure is None and committing and isinstance(error, OSError):
                failure = error  # a step of our own: fsync, chmod, rename
            if failure is None or isinstance(error, KeyboardInterrupt | Interrupted):
                raise  # the plan's own error, or an interruption: as it is
            raise EvalframeError(f"cannot write {shown!r}: {_reason(failure)}") from failure


def resolve_target(path: str | os.PathLike[str], shown: str) -> Path:
    """The file that writing ``path`` replaces: ``~`` expanded, symbolic links followed.

    ``~`` is expanded as for reading (:func:`evalframe.io.paths.expand_user_path`).

    Writing through a symbolic link writes the file it points to (the link stays a
    link), as ``open(path, "w")`` does. Raises :class:`EvalframeError` when ``path`` is
    a folder, its folder does not exist, or the file exists and may not be written.

    >>> import os, tempfile
    >>> folder = Path(os.path.realpath(tempfile.mkdtemp()))
    >>> (folder / "real.csv").write_text("x")
    1
    >>> (folder / "link.csv").symlink_to("real.csv")
    >>> resolve_target(folder / "link.csv", "link.csv") == folder / "real.csv"
    True
    """
    target = Path(os.path.realpath(expand_user_path(path)))
    if target.is_symlink():
        raise EvalframeError(f"cannot write {shown!r}: a loop of symbolic links")
    if target.is_dir():
        raise EvalframeError(f"cannot write {shown!r}: it is a folder; give a file name")
    folder = target.parent
    if not folder.is_dir():
        what = "is not a folder" if folder.exists() else "does not exist"
        raise EvalframeError(
            f"cannot write {shown!r}: the folder {str(folder)!r} {what} (create it first)"
        )
    if target.exists() and not _may_write(target):
        raise EvalframeError(f"cannot write {shown!r}: permission denied (the file is read-only)")
    return target


def _may_write(path: Path) -> bool:
    effective = os.access in os.supports_effective_ids
    return os.access(path, os.W_OK, effective_ids=effective)


def _create_beside(target: Path, shown: str) -> Output:
    try:
        fd, name = tempfile.mkstemp(
            dir=target.parent, prefix=f".{_shortened(target.name)}.", suffix=".partial"
        )
    except OSError as error:
        folder = str(target.parent)
        raise EvalframeError(
            f"cannot write {shown!r}: cannot create a file in {folder!r}: {_reason(error)}"
        ) from error
    return Output(fd, Path(name))


def _shortened(name: str) -> str:
    """``name`` cut to :data:`_NAME_KEPT` bytes, at a character boundary.

    >>> _shortened("é" * 150) == "é" * 100
    True
    """
    return os.fsencode(name)[:_NAME_KEPT].decode("utf-8", "ignore")


def _reason(error: OSError) -> str:
    return error.strerror or str(error) or type(error).__name__


def _take_mode(fd: int, target: Path) -> None:
    """Give the temporary file the target's owner and mode, or a new file's mode."""
    try:
        existing = os.stat(target)
    except FileNotFoundError:
        os.fchmod(fd, 0o666 & ~_umask())
        return
    if (existing.st_uid, existing.st_gid) != (os.geteuid(), os.getegid()):
        with suppress(OSError):  # only root may give a file away; keep the mode at least
            os.fchown(fd, existing.st_uid, existing.st_gid)
    os.fchmod(fd, stat.S_IMODE(existing.st_mode))


def _umask() -> int:
    """The process's umask, read without changing it where the system allows."""
    with suppress(OSError, ValueError), open("/proc/self/status") as status:
        for line in status:
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _sync_folder(folder: Path) -> None:
    """Make the rename durable (best effort: not every file system syncs folders)."""
    with suppress(OSError):
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


@contextmanager
def sigterm_raises(shown: str) -> Iterator[None]:
    """Within the block, SIGTERM raises :class:`Interrupted` (once) so cleanups run.

    Only in the main thread, and only where SIGTERM is not ignored or handled outside
    Python. When the block ends with :class:`Interrupted`, the previous handler is put
    back and the signal sent again, so it has its usual effect (by default, the process
    ends as killed by SIGTERM); if that handler returns, an :class:`EvalframeError`
    says the save was interrupted.

    >>> with sigterm_raises("o.csv"):
    ...     signal.getsignal(signal.SIGTERM).__name__
    '_raise_once'
    """
    previous = signal.getsignal(signal.SIGTERM)
    if threading.current_thread() is not threading.main_thread() or previous in (
        signal.SIG_IGN,
        None,
    ):
        yield
        return
    fired: list[int] = []
    armed = [True]  # once the block is over, a late SIGTERM is only passed on

    def _raise_once(signum: int, frame: FrameType | None) -> None:
        if not fired:  # a second SIGTERM must not interrupt the cleanup of the first
            fired.append(signum)
            if armed[0]:
                raise Interrupted(signum)

    signal.signal(signal.SIGTERM, _raise_once)
    completed = False
    try:
        yield
        armed[0], completed = False, True
    except Interrupted:
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)
    if fired:
        signal.raise_signal(signal.SIGTERM)  # what SIGTERM would have done, now cleaned up
    if not completed:
        raise EvalframeError(f"cannot write {shown!r}: interrupted by SIGTERM")
