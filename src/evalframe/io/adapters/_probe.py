"""A cheap look at a file before it is read: its top-level JSON shape, first record, columns.

Detection reads as little as it can: the first line of a JSON lines file, the first element of a
JSON list (growing the read until that element is complete), the schema of a parquet or Arrow
file, the header of a CSV file. A top-level JSON object is parsed whole (such files are
mappings that no reader can stream: predictions ``{id: answer}``, a results summary).
"""

from __future__ import annotations

import json
import zlib
from functools import cached_property
from pathlib import Path

import polars as pl

from evalframe.io._source import load_json, open_binary

#: Bytes read at a time while looking for the end of a JSON list's first element.
CHUNK = 1 << 16

#: The largest first element a JSON list may have for detection (it is read whole later anyway).
MAX_FIRST_ELEMENT = 1 << 28

BOM = b"\xef\xbb\xbf"


class Probe:
    """What detection needs to know about one file, each part computed once, on demand.

    ``kind`` is the read format from the extension (``"ndjson"``, ``"json.gz"``, ``"parquet"``...)
    or ``None`` for an extension only an adapter knows (``.eval``).

    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "d.json"
    >>> _ = path.write_text('[{"id": "a", "x": [1, 2]}, {"id": "b"}]')
    >>> probe = Probe(path, "json")
    >>> probe.top, probe.keys
    ('array', ('id', 'x'))
    """

    def __init__(self, path: Path, kind: str | None) -> None:
        self.path = path
        self.kind = kind

    @property
    def name(self) -> str:
        """The file's name, lower-cased."""
        return self.path.name.lower()

    @cached_property
    def top(self) -> str | None:
        """``"object"``, ``"array"`` or ``"lines"`` for JSON, ``"table"`` otherwise, ``None``
        when a JSON file's first character is neither ``{`` nor ``[``."""
        if self.kind is None or not self.kind.startswith(("json", "ndjson")):
            return "table"
        start = self._text_head().lstrip()[:1]
        if self.kind.startswith("ndjson"):
            return "lines" if start == b"{" else None
        return {b"{": "object", b"[": "array"}.get(start)

    @cached_property
    def record(self) -> dict[str, object] | None:
        """The first record of a JSON lines file or JSON list, or the object a JSON file holds;
        ``None`` when it is not a JSON object (or the file is not JSON)."""
        try:
            if self.top == "lines":
                value: object = json.loads(self._first_line())
            elif self.top == "array":
                value = self._first_element()
            elif self.top == "object":
                value = self.value
            else:
                return None
        except (ValueError, OSError, EOFError, zlib.error, RecursionError):
            return None
        return value if isinstance(value, dict) else None

    @cached_property
    def value(self) -> object:
        """The whole file parsed as one JSON value (for files that hold one object); an
        :class:`~evalframe.EvalframeError` (a ``ValueError``) when it is not one."""
        return load_json(self.path, "JSON")

    @cached_property
    def keys(self) -> tuple[str, ...]:
        """The first record's keys (JSON) or the column names (parquet, Arrow, CSV)."""
        if self.top == "table":
            return tuple(self.columns)
        record = self.record
        return tuple(record) if record is not None else ()

    @cached_property
    def columns(self) -> list[str]:
        """Column names of a parquet or Arrow file, the header of a CSV file."""
        try:
            if self.kind == "parquet":
                return list(pl.read_parquet_schema(self.path))
            if self.kind == "ipc":
                return list(pl.read_ipc_schema(self.path))
            if self.kind == "csv":
                return list(pl.scan_csv(self.path, infer_schema=False).collect_schema())
        except (OSError, pl.exceptions.PolarsError):
            return []
        return list(self.record or ())

    @cached_property
    def schema(self) -> pl.Schema | None:
        """The full schema of a parquet or Arrow file (nested types included)."""
        try:
            if self.kind == "parquet":
                return pl.scan_parquet(self.path, glob=False).collect_schema()
            if self.kind == "ipc":
                return pl.scan_ipc(self.path, glob=False).collect_schema()
        except (OSError, pl.exceptions.PolarsError):
            return None
        return None

    def has(self, *keys: str) -> bool:
        """Whether the first record (or the schema) holds every one of ``keys``."""
        present = set(self.keys)
        return all(key in present for key in keys)

    # -- reading ------------------------------------------------------------------------------

    def _open(self):
        return open_binary(self.path)

    def _text_head(self) -> bytes:
        try:
            with self._open() as handle:
                return handle.read(CHUNK).removeprefix(BOM)
        except (OSError, EOFError, zlib.error, ValueError):
            return b""

    def _first_line(self) -> bytes:
        with self._open() as handle:
            line = handle.readline(MAX_FIRST_ELEMENT + 1)
        if len(line) > MAX_FIRST_ELEMENT:
            raise ValueError("the first line is too large to inspect")
        return line.removeprefix(BOM)

    def _first_element(self) -> object:
        decoder = json.JSONDecoder()
        buffer = b""
        with self._open() as handle:
            while len(buffer) <= MAX_FIRST_ELEMENT:
                chunk = handle.read(CHUNK if not buffer else len(buffer))
                buffer += chunk
                text = buffer.removeprefix(BOM).lstrip()[1:].lstrip()
                try:
                    value, _ = decoder.raw_decode(text.decode("utf-8", errors="strict"))
                    return value
                except (ValueError, UnicodeDecodeError):
                    if not chunk:
                        raise
        raise ValueError("the first element of the JSON list is too large to inspect")
