"""Load evaluation dumps into polars frames: files, globs, lists, frames and Arrow tables.

Reading never changes a value silently: a value the file cannot give exactly (a JSON field
that is a string on one line and a list on another, a duplicated CSV header, a cast that would
truncate) is an :class:`~evalframe.EvalframeError` naming the input file, the column and the
first line or row, never JSON text, a renamed column or a null.

Per format (see ``docs/guide.md``, "Reading files"):

- parquet, Arrow IPC: the file's own types; scanned lazily (streams).
- JSON lines (``.jsonl``/``.ndjson``, also ``.gz``) and JSON lists (``.json``, also ``.gz``):
  types from every line, exactly (:mod:`evalframe.io._json`); read into memory.
- CSV: types inferred from every row, empty text is ``""`` unless ``csv_empty="null"``
  (:mod:`evalframe.io._csv`); scanned lazily after one inference pass.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import polars as pl
import pyarrow as pa

from evalframe.errors import EvalframeError
from evalframe.io._cast import DtypeLike, apply_schema, parse_schema
from evalframe.io._common import first_line
from evalframe.io._csv import check_csv_empty, csv_locator, csv_problem, scan_csv
from evalframe.io._json import json_array_locator, jsonl_locator, read_json_array, read_jsonl
from evalframe.io.formats import FORMAT_LABELS, READ_FORMATS, check_content, format_of
from evalframe.io.paths import expand_paths, expand_user_path

__all__ = ["Source", "expand_paths", "expand_user_path", "load", "scan"]

Source = str | Path | Sequence[str | Path] | pl.DataFrame | pl.LazyFrame | pa.Table

#: Errors a reader can raise on a bad file (gzip: EOFError and zlib.error).
READ_ERRORS = (OSError, EOFError, zlib.error, pl.exceptions.PolarsError, pa.ArrowException)

#: Bytes read first from every file, to tell an empty file or a wrong format.
HEAD_BYTES = 16


@dataclass(frozen=True)
class _Part:
    """One input file: its lazy frame, how to name a row, and how to explain a failure."""

    path: Path
    frame: pl.LazyFrame
    locate: Callable[[int], str]
    diagnose: Callable[[], str | None]


def scan(
    source: Source,
    *,
    schema: Mapping[str, DtypeLike] | None = None,
    csv_empty: str = "string",
    glob: bool | None = None,
) -> pl.LazyFrame:
    """A lazy frame of ``source``; several files are stacked (missing columns become null).

    ``source`` is a path, a glob, a list of them (see :mod:`evalframe.io.paths`: an existing
    file is read whatever its name holds, ``~`` is expanded, a file named twice is read once),
    a polars DataFrame or LazyFrame, or a pyarrow Table.

    ``schema`` maps columns to dtypes (``pl.String`` or a name: ``"str"``, ``"int"``,
    ``"float"``, ``"bool"``, ``"list[str]"``...), applied to every file of every format: a
    CSV id column of digits read as text, an int column as float. A value that does not
    convert exactly is an error naming the column and its first row. ``csv_empty`` says what
    an empty CSV text field is: ``"string"`` (``""``, the default) or ``"null"``. ``glob``:
    ``None`` globs only names that are not files, ``True`` every name, ``False`` none.

    A column whose dtype differs between files is an error naming both; a column that is
    entirely null in one file (a JSON file cannot say its type) takes the other files' dtype.

    Work done now, not at collect: every file's schema is read and checked; JSON files are
    parsed into memory (exact types need the whole file, and JSON cannot be streamed by
    column); a CSV file gets one streaming pass to infer its types; ``schema=`` columns get
    one query checking that they convert (on a LazyFrame source too). Parquet and IPC data
    is then read lazily, so a plan over them streams.

    >>> import polars as pl, tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "d.csv"
    >>> _ = path.write_text('id,prediction,gold\\n007,"",x\\n8,Paris,Paris\\n')
    >>> scan(path, schema={"id": "str"}).collect().rows()
    [('007', '', 'x'), ('8', 'Paris', 'Paris')]
    >>> scan(pl.DataFrame({"a": [1]})).collect().shape
    (1, 1)
    """
    frame, _ = _scan(source, schema=schema, csv_empty=csv_empty, glob=glob)
    return frame


def load(
    source: Source,
    *,
    schema: Mapping[str, DtypeLike] | None = None,
    csv_empty: str = "string",
    glob: bool | None = None,
) -> pl.DataFrame | pl.LazyFrame:
    """Load ``source`` as ``score`` does: a LazyFrame stays lazy, anything else is read eagerly.

    Takes the keywords of :func:`scan`. A file that fails while it is read is named.

    >>> import polars as pl
    >>> load(pl.DataFrame({"pred": ["x"]})).columns
    ['pred']
    """
    frame, parts = _scan(source, schema=schema, csv_empty=csv_empty, glob=glob)
    if isinstance(source, pl.LazyFrame):
        return frame
    try:
        return frame.collect()
    except pl.exceptions.PolarsError as error:
        for part in parts:
            _collect_part(part)
        raise EvalframeError(f"cannot read input: {first_line(error)}") from error


def _scan(
    source: Source,
    *,
    schema: Mapping[str, DtypeLike] | None,
    csv_empty: str,
    glob: bool | None,
) -> tuple[pl.LazyFrame, list[_Part]]:
    targets = parse_schema(schema)
    check_csv_empty(csv_empty)
    frame = _in_memory(source)
    if frame is not None:
        _check_schema_columns(targets, [frame.collect_schema()])
        located = apply_schema(frame, targets, source="the input", locate=lambda row: f"row {row}")
        return located, []
    if isinstance(source, bytes) or not isinstance(source, str | Path | Sequence):
        raise EvalframeError(
            f"cannot load a {type(source).__name__}; expected a path, a glob, a list of paths, "
            "a polars DataFrame or LazyFrame, or a pyarrow Table"
        )
    parts = [_read_part(path, targets, csv_empty) for path in expand_paths(source, glob=glob)]
    _check_schema_columns(targets, [part.frame.collect_schema() for part in parts])
    return _stack(parts), parts


def _in_memory(source: object) -> pl.LazyFrame | None:
    if isinstance(source, pl.LazyFrame):
        return source
    if isinstance(source, pl.DataFrame):
        return source.lazy()
    if isinstance(source, pa.Table):
        frame = pl.from_arrow(source)
        assert isinstance(frame, pl.DataFrame)
        return frame.lazy()
    return None


def _read_part(path: Path, schema: Mapping[str, pl.DataType], csv_empty: str) -> _Part:
    kind = format_of(path, READ_FORMATS, "read")
    head = _read_head(path, kind)
    check_content(path, kind, head)
    try:
        frame, locate, diagnose = _reader(path, kind, schema, csv_empty)
        frame.collect_schema()
    except READ_ERRORS as error:
        problem = csv_problem(path) if kind == "csv" else None
        message = (
            f"cannot read {str(path)!r}: {problem}" if problem else _failure(path, kind, error)
        )
        raise EvalframeError(message) from error
    csv = kind == "csv"
    frame = apply_schema(frame, schema, source=str(path), locate=locate, empty_is_null=csv)
    return _Part(path, frame, locate, diagnose)


def _read_head(path: Path, kind: str) -> bytes:
    """The first bytes of ``path``: an unreadable or empty file fails here, by name."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(HEAD_BYTES)
    except PermissionError as error:
        raise EvalframeError(f"cannot read {str(path)!r}: permission denied") from error
    except OSError as error:
        raise EvalframeError(f"cannot read {str(path)!r}: {error.strerror or error}") from error
    if not head:
        raise EvalframeError(
            f"cannot read {str(path)!r}: the file is empty (0 bytes); "
            f"expected a {FORMAT_LABELS[kind]} file"
        )
    return head


def _reader(
    path: Path, kind: str, schema: Mapping[str, pl.DataType], csv_empty: str
) -> tuple[pl.LazyFrame, Callable[[int], str], Callable[[], str | None]]:
    def by_row(row: int) -> str:
        return f"row {row}"

    if kind == "parquet":
        return pl.scan_parquet(path, glob=False), by_row, lambda: None
    if kind == "ipc":
        return pl.scan_ipc(path, glob=False), by_row, lambda: None
    if kind == "csv":
        frame = scan_csv(path, csv_empty=csv_empty, text_columns=schema)
        return frame, csv_locator(path), lambda: csv_problem(path)
    compressed = kind.endswith(".gz")
    if kind.startswith("ndjson"):
        frame = read_jsonl(path, compressed=compressed).lazy()
        return frame, jsonl_locator(path, compressed=compressed), lambda: None
    frame = read_json_array(path, compressed=compressed).lazy()
    return frame, json_array_locator(path, compressed=compressed), lambda: None


def _failure(path: Path, kind: str, error: BaseException) -> str:
    """A one-line message for an error a reader raised, naming the file and its format."""
    text = first_line(error)
    if isinstance(error, EOFError | zlib.error) or "compressed" in text or "inflate" in text:
        text = f"the gzip data is truncated or corrupt ({text})"
    elif isinstance(error, pl.exceptions.NoDataError):
        text = "it holds no data"
    return f"cannot read {str(path)!r} as {FORMAT_LABELS[kind]}: {text}"


def _collect_part(part: _Part) -> None:
    """Collect one file alone after the stacked read failed, to name the file that fails."""
    try:
        part.frame.collect()
    except pl.exceptions.PolarsError as error:
        problem = part.diagnose() or first_line(error)
        raise EvalframeError(f"cannot read {str(part.path)!r}: {problem}") from error


def _check_schema_columns(schema: Mapping[str, pl.DataType], schemas: Sequence[pl.Schema]) -> None:
    present = {name for found in schemas for name in found}
    missing = [name for name in schema if name not in present]
    if missing:
        raise EvalframeError(
            f"schema= names column(s) {missing} that the input does not have; "
            f"its columns: {sorted(present)}"
        )


def _stack(parts: list[_Part]) -> pl.LazyFrame:
    if len(parts) == 1:
        return parts[0].frame
    dtypes = _common_dtypes(parts)
    frames = []
    for part in parts:
        schema = part.frame.collect_schema()
        casts = [pl.col(n).cast(dtypes[n]) for n, dtype in schema.items() if dtype != dtypes[n]]
        frames.append(part.frame.with_columns(casts) if casts else part.frame)
    return pl.concat(frames, how="diagonal")


def _common_dtypes(parts: list[_Part]) -> dict[str, pl.DataType]:
    """Each column's dtype over all files; Null (a JSON column null throughout) fits any."""
    chosen: dict[str, tuple[pl.DataType, Path]] = {}
    for part in parts:
        for name, dtype in part.frame.collect_schema().items():
            if name not in chosen or (chosen[name][0] != dtype and _fits(chosen[name][0], dtype)):
                chosen[name] = (dtype, part.path)
            elif not _fits(dtype, chosen[name][0]):
                first_dtype, first_path = chosen[name]
                raise EvalframeError(
                    f"column {name!r} is {first_dtype} in {str(first_path)!r} but {dtype} in "
                    f"{str(part.path)!r}; files read together must agree on column dtypes "
                    "(or give schema={...} to read both as one dtype)"
                )
    return {name: dtype for name, (dtype, _) in chosen.items()}


def _fits(loose: pl.DataType, strict: pl.DataType) -> bool:
    """Whether a column of dtype ``loose`` holds only nulls where ``strict`` holds values.

    >>> _fits(pl.List(pl.Null), pl.List(pl.String)), _fits(pl.String, pl.Int64)
    (True, False)
    """
    if loose == strict or loose == pl.Null:
        return True
    if isinstance(loose, pl.List) and isinstance(strict, pl.List):
        return _fits(loose.inner, strict.inner)
    return False
