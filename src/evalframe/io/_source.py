"""Bytes of an input file, read the same way by every reader: gzip, size and nesting limits.

- A name ending in ``.gz`` is gzip, decompressed as a stream by :func:`open_binary` in every
  reader (the harness layouts and the plain JSON readers alike). The stream refuses to grow past
  :func:`inflated_limit` (``MAX_RATIO`` times the compressed size, at least ``FREE_BYTES``): a
  gzip bomb (1 GiB of zeros in 1 MB) stops after a bounded read instead of filling memory.
- JSON is refused when it is nested deeper than ``MAX_DEPTH`` levels (:func:`check_depth`):
  Python's parser gives up near 1,000 levels and pyarrow's crashes the process past about
  10,000, so the depth is measured first, by a vectorised scan that skips strings.
- :func:`load_json` parses one JSON value (a results file, a predictions mapping) with those
  checks, naming the file and the line of any problem.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import zlib
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from evalframe.errors import EvalframeError

#: How many times its compressed size a gzip file may grow to (gzip's own maximum is ~1,032).
MAX_RATIO = 200
#: What any gzip file may grow to, whatever its ratio.
FREE_BYTES = 64 << 20
#: The deepest JSON nesting read (evaluation dumps nest a few levels; Python stops near 1,000).
MAX_DEPTH = 500
#: Bytes decompressed or scanned at a time.
CHUNK = 1 << 23

BOM = b"\xef\xbb\xbf"

#: +1 for an opening bracket, -1 for a closing one, 0 for any other byte.
_BRACKETS = np.zeros(256, np.int8)
_BRACKETS[[ord("["), ord("{")]] = 1
_BRACKETS[[ord("]"), ord("}")]] = -1


def is_gzip(path: Path) -> bool:
    """Whether ``path`` is read as gzip (its name ends in ``.gz``).

    >>> is_gzip(Path("samples.jsonl.GZ")), is_gzip(Path("results.json"))
    (True, False)
    """
    return path.name.lower().endswith(".gz")


def inflated_limit(path: Path) -> int:
    """The most bytes the gzip file ``path`` may decompress to.

    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> inflated_limit(folder / "absent.gz") == FREE_BYTES
    True
    """
    try:
        size = os.stat(path).st_size
    except OSError:
        size = 0
    return max(FREE_BYTES, MAX_RATIO * size)


class _Bounded(io.RawIOBase):
    """A gzip file decompressed as a stream that refuses to grow past its limit."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._file = gzip.GzipFile(path, "rb")
        self._left = inflated_limit(path)

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:  # type: ignore[no-untyped-def, override]
        view = memoryview(buffer).cast("B")
        count = self._file.readinto(view[: min(len(view), self._left + 1)])
        self._left -= count
        if self._left < 0:
            raise EvalframeError(
                f"cannot read {str(self._path)!r}: it decompresses to more than "
                f"{inflated_limit(self._path):,} bytes ({MAX_RATIO} times its size), which is "
                "what a gzip bomb does; decompress it yourself (gunzip) to read a file this "
                "compressible"
            )
        return count

    def close(self) -> None:
        self._file.close()
        super().close()


def open_binary(path: Path) -> BinaryIO:
    """``path`` opened for reading bytes: decompressed (and bounded) when its name ends in
    ``.gz``. Errors of a corrupt gzip stream are ``OSError``, ``EOFError`` or ``zlib.error``.

    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "d.jsonl.gz"
    >>> _ = path.write_bytes(gzip.compress(b'{"a": 1}\\n'))
    >>> with open_binary(path) as handle:
    ...     handle.read()
    b'{"a": 1}\\n'
    """
    if is_gzip(path):
        return io.BufferedReader(_Bounded(path), CHUNK)  # type: ignore[return-value]
    return open(path, "rb")


def read_bytes(path: Path) -> bytes:
    """Every byte of ``path`` (decompressed, see :func:`open_binary`), a leading BOM removed."""
    with open_binary(path) as handle:
        data = handle.read()
    return data.removeprefix(BOM)


def chunks(data: bytes, size: int = CHUNK) -> Iterator[bytes]:
    """``data`` in slices of ``size`` bytes."""
    for start in range(0, len(data), size):
        yield data[start : start + size]


def file_chunks(path: Path) -> Iterator[bytes]:
    """The bytes of ``path`` (decompressed), a slice at a time."""
    with open_binary(path) as handle:
        while chunk := handle.read(CHUNK):
            yield chunk


def too_deep(pieces: Iterable[bytes], limit: int = MAX_DEPTH) -> tuple[int, int] | None:
    """The byte offset and line where JSON text first nests deeper than ``limit``, or ``None``.

    Brackets inside strings do not count (a quote after an odd run of backslashes is escaped).
    The text may hold several values (JSON lines): depth is counted over the whole stream, which
    is what a streaming parser sees when a value runs on past its line.

    >>> too_deep([b'{"a": "[[[[", "b": [[1]]}'], limit=2)
    (20, 1)
    >>> too_deep([b'[{"x": "\\\\"]"}]'], limit=2) is None
    True
    """
    depth, inside, offset, line, pending = 0, 0, 0, 1, b""
    for piece in pieces:
        data = pending + piece
        cut = len(data.rstrip(b"\\"))  # a run of backslashes is never split between slices
        data, pending = data[:cut], data[cut:]
        found, depth, inside = _scan(data, depth, inside, limit)
        if found is not None:
            return offset + found, line + data.count(b"\n", 0, found)
        offset += len(data)
        line += data.count(b"\n")
    if pending:
        found, _, _ = _scan(pending, depth, inside, limit)
        if found is not None:
            return offset + found, line
    return None


def lines_too_deep(pieces: Iterable[bytes], limit: int = MAX_DEPTH) -> tuple[int, int] | None:
    """:func:`too_deep` for JSON lines, where every line is a value of its own.

    A line can nest past ``limit`` only if it holds more than ``limit`` opening brackets, so
    only such lines (rare: evaluation records hold a few dozen) are scanned bracket by
    bracket; the rest costs one vectorised count of the opening brackets per line.

    >>> lines_too_deep([b'{"a": [1]}\\n{"b": [[[[1]]]]}\\n'], limit=3)
    (19, 2)
    >>> lines_too_deep([b'{"a": "[[[[[["}\\n[[1]]\\n'], limit=3) is None
    True
    """
    offset, line, pending = 0, 1, b""
    for piece in pieces:
        data = pending + piece
        end = data.rfind(b"\n") + 1
        data, pending = data[:end], data[end:]
        found = _deep_line(data, limit)
        if found is not None:
            return offset + found[0], line + found[1]
        offset += len(data)
        line += data.count(b"\n")
    found = _deep_line(pending, limit)
    return None if found is None else (offset + found[0], line + found[1])


def _deep_line(data: bytes, limit: int) -> tuple[int, int] | None:
    """(offset, line index) where a line of ``data`` first nests past ``limit``, or None."""
    if len(data) <= limit:
        return None
    text = np.frombuffer(data, np.uint8)
    opening = text == ord("[")
    opening |= text == ord("{")
    opens = np.flatnonzero(opening)
    if len(opens) <= limit:
        return None
    ends = np.flatnonzero(text == ord("\n"))
    starts = np.concatenate(([0], ends + 1))
    stops = np.concatenate((ends, [len(data)]))
    counts = np.searchsorted(opens, stops) - np.searchsorted(opens, starts)
    for index in np.flatnonzero(counts > limit):
        start, stop = int(starts[index]), int(stops[index])
        found = too_deep([data[start:stop]], limit)
        if found is not None:
            return start + found[0], int(index)
    return None


def _scan(data: bytes, depth: int, inside: int, limit: int) -> tuple[int | None, int, int]:
    """One slice: where it first passes ``limit`` (or None), the depth and string state after."""
    text = np.frombuffer(data, np.uint8)
    quotes = np.flatnonzero(text == ord('"'))
    if len(quotes):
        run = np.zeros(len(quotes), np.int64)
        live = np.ones(len(quotes), bool)
        back = 1
        while live.any():
            at = quotes - back
            live &= at >= 0
            live[live] = text[at[live]] == ord("\\")
            run += live
            back += 1
        quotes = quotes[run % 2 == 0]
    signs = _BRACKETS[text]
    brackets = np.flatnonzero(signs)
    outside = brackets[(np.searchsorted(quotes, brackets) + inside) % 2 == 0]
    if len(outside):
        path = np.cumsum(signs[outside], dtype=np.int64) + depth
        over = np.flatnonzero(path > limit)
        if len(over):
            return int(outside[over[0]]), depth, inside
        depth = int(path[-1])
    return None, depth, (inside + len(quotes)) % 2


def check_depth(
    path: Path, pieces: Iterable[bytes], limit: int = MAX_DEPTH, *, lines: bool = False
) -> None:
    """Raise when the JSON text ``pieces`` of ``path`` nests deeper than ``limit``.

    ``lines``: the text is JSON lines, each line a value (:func:`lines_too_deep`).
    """
    found = (lines_too_deep if lines else too_deep)(pieces, limit)
    if found is not None:
        raise EvalframeError(
            f"cannot read {str(path)!r}: its JSON nests more than {limit} levels deep (line "
            f"{found[1]}, byte {found[0] + 1}); evaluation records nest a few levels"
        )


def load_json(
    path: Path,
    what: str,
    data: bytes | None = None,
    *,
    object_pairs_hook: Callable[[list[tuple[str, Any]]], Any] | None = None,
) -> object:
    """The one JSON value ``path`` holds (``data``: its bytes, when already read), or an error
    naming the file, ``what`` it was read as and the line. ``object_pairs_hook`` is
    :func:`json.loads`'s (to see a key an object holds twice).

    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "r.json"
    >>> _ = path.write_text('{"a": [1, 2]}')
    >>> load_json(path, "results")
    {'a': [1, 2]}
    >>> _ = path.write_text('{"a": 1}\\n{"a": 2}\\n')
    >>> try:
    ...     load_json(path, "results")
    ... except EvalframeError as error:
    ...     print(str(error).split(": ", 1)[1])
    it holds several JSON values one after another (JSON lines?); expected one JSON object
    """
    try:
        raw = read_bytes(path) if data is None else data.removeprefix(BOM)
    except (OSError, EOFError, zlib.error) as error:
        raise EvalframeError(f"cannot read {str(path)!r} as {what}: {error}") from error
    check_depth(path, chunks(raw))
    try:
        return json.loads(raw, object_pairs_hook=object_pairs_hook)
    except UnicodeDecodeError as error:
        line = raw.count(b"\n", 0, error.start) + 1
        detail = f"line {line} is not valid UTF-8"
    except json.JSONDecodeError as error:
        detail = (
            "it holds several JSON values one after another (JSON lines?); expected one JSON "
            "object"
            if error.msg == "Extra data"
            else f"line {error.lineno} is not valid JSON: {error.msg} (column {error.colno})"
        )
    except RecursionError:
        detail = "its JSON nests too deep for Python's parser"
    raise EvalframeError(f"cannot read {str(path)!r} as {what}: {detail}")
