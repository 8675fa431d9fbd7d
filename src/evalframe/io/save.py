"""Write scored frames and aggregate tables to parquet, CSV, JSON lines, JSON or Arrow IPC.

A save is atomic: the frame is written to a private temporary file beside the target
and renamed onto it only when complete (:mod:`evalframe.io._atomic`), so a reader sees
the old file or the new one, never a part, and concurrent saves to one path leave the
last one to finish. Polars runs the write in its own threads while this thread waits
for it, so Ctrl-C and SIGTERM stop a long save promptly and remove its temporary file.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path

import polars as pl

from evalframe._sigint import PythonSigintOnly
from evalframe._slices import streaming_slices
from evalframe._version import __version__
from evalframe.errors import EvalframeError, located, without_plan
from evalframe.io._atomic import Output, replacing, resolve_target
from evalframe.io.formats import WRITE_FORMATS, format_of

#: Seconds an interrupted save waits for its plan to stop (a batch in flight finishes).
_STOP_TIMEOUT = 5.0

#: The longest pause between two looks at a running save (a wakeup costs microseconds;
#: the pause is at most what a save's end is noticed late).
_MAX_POLL_SECONDS = 0.005


def save(
    frame: pl.DataFrame | pl.LazyFrame,
    path: str | Path,
    *,
    metadata: Mapping[str, str] | None = None,
    format: str | None = None,
) -> None:
    """Write ``frame`` to ``path``, atomically; the format follows the extension.

    ``format="every_eval_ever"`` writes Every Eval Ever records instead: an aggregate table
    (columns ``metric``, ``value``, ``stderr``, ``ci_low``, ``ci_high``, ``n``, as
    ``ef.aggregate`` returns) as one aggregate record (``.json``), any other table as
    instance-level records (``.jsonl``); ``metadata`` then gives the record's fields
    evalframe cannot know (:mod:`evalframe.io.adapters.every_eval_ever_write`).

    A LazyFrame written to parquet, IPC, CSV or JSON lines is streamed (it need not
    fit in memory). ``metadata`` is stored as key-value metadata in parquet files, with
    ``evalframe.version``, so that reading the file back never takes it for a harness's
    layout (a scored lighteval details file is read as it is).
    ``~`` is expanded and a symbolic link is written through (the file it points to
    is replaced; the link stays). A new file gets the mode ``open()`` would give it
    (``0o666`` less the umask); a replaced file keeps its mode. The folder must exist.

    Nothing is written until the frame is complete: on an error or an interruption
    (Ctrl-C, SIGTERM) the temporary file is removed and a file already at ``path``
    is left as it was. Errors of the plan itself (a metric's check, an unreadable
    input) are raised as they are; a failure to write raises :class:`EvalframeError`
    naming ``path`` and the cause.

    >>> import polars as pl, tempfile, os
    >>> out = os.path.join(tempfile.mkdtemp(), "s.parquet")
    >>> save(pl.DataFrame({"x": [1.0]}), out)
    >>> pl.read_parquet(out)["x"].to_list(), os.listdir(os.path.dirname(out))
    ([1.0], ['s.parquet'])
    """
    if format is not None:
        _save_as(frame, path, format, metadata)
        return
    kind = format_of(path, WRITE_FORMATS, "write")
    if kind == "csv":
        _check_flat(frame, path)
    shown = str(path)
    if kind == "parquet":
        metadata = {"evalframe.version": __version__, **(metadata or {})}
    with replacing(resolve_target(path, shown), shown) as out:
        _write(frame, out, kind, metadata)


#: ``format=`` values of :func:`save` (otherwise the extension decides).
SAVE_FORMATS = ("every_eval_ever",)


def _save_as(
    frame: pl.DataFrame | pl.LazyFrame,
    path: str | Path,
    format: str,
    metadata: Mapping[str, object] | None,
) -> None:
    name = format.strip().lower().replace("-", "_") if isinstance(format, str) else format
    if name not in SAVE_FORMATS:
        raise EvalframeError(
            f"unknown save format {format!r}; known: {list(SAVE_FORMATS)} (leave format=None "
            "to write by the file's extension)"
        )
    from evalframe.io.adapters.every_eval_ever_write import write

    write(frame, path, metadata=metadata)


def _write(
    frame: pl.DataFrame | pl.LazyFrame, out: Output, kind: str, metadata: Mapping[str, str] | None
) -> None:
    if kind == "json":  # polars has no JSON sink: the frame is collected
        data = _run(frame, out, _collected) if isinstance(frame, pl.LazyFrame) else frame
        data.write_json(out)
        return
    _run(frame.lazy(), out, lambda plan: _sink(plan, out, kind, metadata))


def _collected(plan: pl.LazyFrame) -> pl.LazyFrame:
    return plan


def _sink(
    plan: pl.LazyFrame, out: Output, kind: str, metadata: Mapping[str, str] | None
) -> pl.LazyFrame:
    """The plan that streams ``plan`` into ``out`` in format ``kind``."""
    if kind == "parquet":
        return plan.sink_parquet(out, metadata=dict(metadata or {}) or None, lazy=True)
    if kind == "ipc":
        return plan.sink_ipc(out, lazy=True)
    if kind == "ndjson":
        return plan.sink_ndjson(out, lazy=True)
    return plan.sink_csv(out, lazy=True)


def _run(
    plan: pl.LazyFrame, out: Output, finish: Callable[[pl.LazyFrame], pl.LazyFrame]
) -> pl.DataFrame:
    """Run ``finish(plan)`` in polars' threads and wait for it here, where signals are handled.

    Meanwhile SIGINT is Python's alone (:mod:`evalframe._sigint`: polars' own handler
    would abort the process). When the wait is interrupted, the plan stops at its next
    batch (a pass-through step on top of ``plan`` raises) or its next write (``out``
    refuses it), whichever comes first; polars cannot cancel a running streaming query
    otherwise.
    """
    stopping = threading.Event()

    def stop_here(batch: pl.DataFrame) -> pl.DataFrame:
        if stopping.is_set():
            raise _Stopped("the save was stopped")
        return batch

    with PythonSigintOnly() as sigint, streaming_slices():
        job = _Background(finish(plan.map_batches(stop_here, streamable=True)))
        try:
            return job.result()
        except EvalframeError as error:  # a check of the plan (a metric's): its message
            # only, located in the whole input when the plan was built by the engine
            raise EvalframeError(without_plan(located(error))) from None
        except BaseException:
            stopping.set()
            out.abort()
            sigint.restore = job.stop(_STOP_TIMEOUT)
            raise


class _Stopped(Exception):
    """Raised inside the plan of a save that was interrupted, to end it."""


class _Background:
    """A polars query running in the background, polled from the calling thread.

    Python runs signal handlers only between bytecodes of the main thread, so a save
    that waited inside polars would notice Ctrl-C only once the write was over.

    >>> _Background(pl.LazyFrame({"x": [1]})).result().shape
    (1, 1)
    """

    def __init__(self, plan: pl.LazyFrame) -> None:
        self._query = plan.collect(background=True)
        self._over = False

    def result(self) -> pl.DataFrame:
        """Wait for the query; its error, if it fails, is raised here."""
        delay = 0.001
        while True:
            self._over = True  # when fetch raises, the query is over
            result = self._query.fetch()
            if result is not None:
                return result
            self._over = False
            time.sleep(delay)
            delay = min(2 * delay, _MAX_POLL_SECONDS)

    def stop(self, timeout: float) -> bool:
        """Cancel the query and wait, up to ``timeout`` seconds; whether it has ended."""
        if self._over:
            return True
        self._query.cancel()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                if self._query.fetch() is not None:
                    return True
            except Exception:  # the query failed, as it should once its output is gone
                return True
            time.sleep(0.01)
        return False


def _check_flat(frame: pl.DataFrame | pl.LazyFrame, path: str | Path) -> None:
    nested = [
        name
        for name, dtype in frame.collect_schema().items()
        if isinstance(dtype, pl.List | pl.Array | pl.Struct)
    ]
    if nested:
        raise EvalframeError(
            f"cannot write {str(path)!r} as CSV: columns {nested} are nested (lists or structs); "
            "write parquet or JSON lines instead, or drop those columns"
        )
