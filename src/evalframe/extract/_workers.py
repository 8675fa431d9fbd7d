"""Worker processes that can be killed: slow Python work on text, with a hard limit per item.

Parsing answers with sympy (the lighteval and math-verify extraction cascades, the math
comparison) can run for minutes on a pathological text, in code a signal cannot always
interrupt, and not at all under a timeout outside the main thread (polars runs kernels on
its own threads, where ``signal.alarm`` cannot be set). The work is therefore sent to
worker processes, which can be killed:

- the workers are plain ``python`` processes started with :mod:`subprocess` (no fork of
  a process running polars threads, no re-import of the user's ``__main__`` as the
  ``spawn`` start method does), kept for the session in one :data:`POOL`, one per core by
  default (:func:`default_workers`);
- a *task* is a function named ``"module:function"``, imported by the worker, called as
  ``function(item, options)`` for each item in the worker's main thread (where the task's
  own signal timeouts work);
- each item has a hard wall-clock limit: a worker that has not answered by then is
  killed (and replaced on the next item), and the item gets the caller's ``stopped``
  value. :meth:`Pool.run` returns the answers and how many workers were killed, so the
  caller counts and reports them.

Users: :mod:`evalframe.metrics._math_equal` (the math comparison of (prediction, gold)
pairs) and :mod:`evalframe.extract.lighteval_math` (lighteval's extraction cascade).

>>> POOL.run("operator:add", 10, [1, 2, 3], workers=1, limit=5.0, stopped=None,
...          what="adding")
([11, 12, 13], 0)
"""

from __future__ import annotations

import atexit
import contextlib
import importlib
import os
import pickle
import select
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["POOL", "Pool", "default_workers", "task_function"]

#: Extra seconds the first answer of a fresh worker may take: it imports its libraries.
FIRST_ANSWER_GRACE = 60.0

_HEADER = struct.Struct("<Q")


def _send(stream: Any, message: Any) -> None:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_HEADER.pack(len(data)) + data)
    stream.flush()


def _read_exact(fd: int, size: int, deadline: float | None) -> bytes:
    chunks, remaining = [], size
    while remaining:
        if deadline is not None:
            wait = deadline - time.monotonic()
            if wait <= 0:
                raise TimeoutError
            ready, _, _ = select.select([fd], [], [], wait)
            if not ready:
                raise TimeoutError
        chunk = os.read(fd, min(remaining, 1 << 20))
        if not chunk:
            raise EOFError
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def _receive(fd: int, deadline: float | None) -> Any:
    (size,) = _HEADER.unpack(_read_exact(fd, _HEADER.size, deadline))
    return pickle.loads(_read_exact(fd, size, deadline))


@dataclass(frozen=True)
class _Failure:
    """An exception in a worker, sent back to be raised in the parent."""

    message: str
    details: str


def task_function(task: str) -> Callable[[Any, Any], Any]:
    """The function a task names (``"module:function"``), imported on first use.

    >>> task_function("operator:add")(3, 4)
    7
    """
    module, _, name = task.partition(":")
    return getattr(importlib.import_module(module), name)


def serve() -> None:
    """A worker's loop: read (task, options, items), answer one result per item."""
    out = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    sys.stdout = sys.stderr  # nothing else may write to the protocol stream
    fd = sys.stdin.fileno()
    while True:
        try:
            message = _receive(fd, None)
        except EOFError:
            return
        if message is None:
            return
        task, options, items = message
        for item in items:
            try:
                result = task_function(task)(item, options)
            except Exception as error:  # reported to the parent, which raises it
                import traceback

                _send(out, _Failure(f"{type(error).__name__}: {error}", traceback.format_exc()))
                break
            _send(out, result)


class _Worker:
    def __init__(self) -> None:
        root = str(Path(__file__).resolve().parents[2])
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(
            [root, *([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])]
        )
        env.setdefault("POLARS_MAX_THREADS", "1")
        self.process = subprocess.Popen(
            [sys.executable, "-c", "from evalframe.extract._workers import serve; serve()"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            close_fds=True,
        )
        assert self.process.stdin is not None and self.process.stdout is not None
        self.stdin = self.process.stdin
        self.fd = self.process.stdout.fileno()

    def run(
        self, task: str, options: Any, items: Sequence[Any], limit: float, first: bool
    ) -> Iterable[Any]:
        """Answers for ``items`` in order; raises TimeoutError/EOFError on the stuck item."""
        _send(self.stdin, (task, options, list(items)))
        for index in range(len(items)):
            extra = FIRST_ANSWER_GRACE if first and index == 0 else 0.0
            yield _receive(self.fd, time.monotonic() + limit + extra)

    def close(self, kill: bool = False) -> None:
        with contextlib.suppress(Exception):
            if kill:
                self.process.kill()
            else:
                _send(self.stdin, None)
                self.stdin.close()
        with contextlib.suppress(Exception):
            self.process.wait(timeout=5)
        with contextlib.suppress(Exception):
            self.process.kill()
            self.process.wait(timeout=5)
        for stream in (self.process.stdin, self.process.stdout):
            with contextlib.suppress(Exception):
                stream.close()


class Pool:
    """Worker processes kept for the session; one call uses them at a time."""

    def __init__(self) -> None:
        self.workers: list[_Worker | None] = []
        self.fresh: list[bool] = []
        self.lock = threading.Lock()

    def size(self, wanted: int) -> None:
        while len(self.workers) < wanted:
            self.workers.append(None)
            self.fresh.append(True)

    def _chunk(
        self, slot: int, task: str, options: Any, items: Sequence[Any], limit: float,
        stopped: Any, results: list, indices: Sequence[int], errors: list, killed: list,
    ) -> None:
        position = 0
        while position < len(indices):
            if slot >= len(self.workers):  # the pool was closed (an interrupted call)
                return
            worker = self.workers[slot]
            if worker is None:
                worker = self.workers[slot] = _Worker()
                self.fresh[slot] = True
            chunk = [items[i] for i in indices[position:]]
            try:
                for answer in worker.run(task, options, chunk, limit, self.fresh[slot]):
                    self.fresh[slot] = False
                    if isinstance(answer, _Failure):
                        errors.append(answer)
                        return
                    results[indices[position]] = answer
                    position += 1
            except (TimeoutError, EOFError, OSError, pickle.UnpicklingError):
                # the item at ``position`` ran past the hard limit (or killed its worker)
                worker.close(kill=True)
                if slot >= len(self.workers):
                    return
                self.workers[slot] = None
                killed.append(indices[position])
                results[indices[position]] = stopped
                position += 1

    def run(
        self,
        task: str,
        options: Any,
        items: Sequence[Any],
        *,
        workers: int,
        limit: float,
        stopped: Any,
        what: str,
        order: Callable[[Any], Any] | None = None,
    ) -> tuple[list, int]:
        """``task`` on every item, spread over ``workers`` processes: (answers, killed).

        ``limit`` is the hard wall-clock limit of one item (seconds); an item past it gets
        ``stopped`` and its worker is killed. ``workers=0`` runs the task in this process
        (no limit). ``order`` sorts the items before they are split among the workers
        (items with the same key go to the same worker, whose caches then serve them).
        An exception in a worker is raised here as ``RuntimeError``, naming ``what``.
        """
        if workers == 0:
            function = task_function(task)
            return [function(item, options) for item in items], 0
        with self.lock:
            self.size(workers)
            indices = sorted(range(len(items)), key=lambda i: order(items[i])) if order else (
                list(range(len(items)))
            )
            used = max(1, min(workers, len(items)))
            size = -(-len(indices) // used)
            groups = [indices[i * size : (i + 1) * size] for i in range(used)]
            results: list = [stopped] * len(items)
            errors: list[_Failure] = []
            killed: list[int] = []
            threads = [
                threading.Thread(
                    target=self._chunk,
                    args=(slot, task, options, items, limit, stopped, results, group, errors,
                          killed),
                    daemon=True,
                )
                for slot, group in enumerate(groups)
                if group
            ]
            try:
                for thread in threads:
                    thread.start()
                for thread in threads:
                    thread.join()
            except BaseException:  # interrupted: answers may still be in flight, start afresh
                self.close(kill=True)
                raise
            if errors:
                raise RuntimeError(
                    f"{what} failed in a worker process: {errors[0].message}\n"
                    f"{errors[0].details}"
                )
            return results, len(killed)

    def close(self, kill: bool = False) -> None:
        for worker in self.workers:
            if worker is not None:
                worker.close(kill=kill)
        self.workers = []
        self.fresh = []


#: The session's worker processes, shared by every task.
POOL = Pool()
atexit.register(POOL.close)


def default_workers() -> int:
    """One worker per core this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)
