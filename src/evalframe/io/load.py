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

import sys
import warnings
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Union

import polars as pl

from evalframe.errors import EvalframeError
from evalframe.io._cast import DtypeLike, apply_schema, parse_schema
from evalframe.io._common import first_line
from evalframe.io._csv import check_csv_empty, csv_locator, csv_problem, scan_csv
from evalframe.io._duplicates import check_policy
from evalframe.io.adapters import Adapter, Probe
from evalframe.io.adapters.table import (
    AUTO,
    LAYOUTS,
    TABLE,
    by_extension,
    closest,
    describe,
    detect,
    resolve_format,
)
from evalframe.io.formats import FORMAT_LABELS, READ_FORMATS, check_content, format_of
from evalframe.io.paths import expand_paths, expand_user_path, from_directory

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["Source", "expand_paths", "expand_user_path", "load", "scan"]

# pyarrow is imported only by the readers that use it (JSON), not to read parquet.
Source = Union[str, Path, Sequence[str | Path], pl.DataFrame, pl.LazyFrame, "pa.Table"]

#: Errors any reader can raise on a bad file (gzip: EOFError and zlib.error).
_BASE_READ_ERRORS = (OSError, EOFError, zlib.error, pl.exceptions.PolarsError)


def read_errors() -> tuple[type[BaseException], ...]:
    """The errors a reader can raise on a bad file, pyarrow's once a reader has loaded it.

    >>> OSError in read_errors()
    True
    """
    arrow = sys.modules.get("pyarrow")
    return _BASE_READ_ERRORS if arrow is None else (*_BASE_READ_ERRORS, arrow.ArrowException)

#: Bytes read first from every file, to tell an empty file or a wrong format.
HEAD_BYTES = 16


@dataclass(frozen=True)
class _Part:
    """One input file: its lazy frame, how to name a row, and how to explain a failure."""

    path: Path
    frame: pl.LazyFrame
    locate: Callable[[int], str]
    diagnose: Callable[[], str | None]
    layout: Adapter | None = None

    @property
    def level(self) -> str:
        return self.layout.level if self.layout is not None else "samples"

    @property
    def kind(self) -> str:
        return self.layout.kind if self.layout is not None else "samples"


def scan(
    source: Source,
    *,
    schema: Mapping[str, DtypeLike] | None = None,
    csv_empty: str = "string",
    glob: bool | None = None,
    format: str | None = None,
    columns: Sequence[str] | None = None,
    duplicates: str = "error",
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
    ``None`` globs only names that are not files, ``True`` every name, ``False`` none. A
    directory is every readable file below it.

    ``format`` says how files are laid out: ``"auto"`` (the default) recognises each harness
    layout from the file's content (an lm-evaluation-harness samples file, a lighteval details
    parquet, an Inspect log, a SQuAD predictions mapping...: see
    :func:`evalframe.list_formats`) and reads anything else as a plain table; ``"table"`` reads
    every file as a plain table; a layout's name reads every file in that layout. A JSON file
    holding one object that fits no layout is an error naming the closest layout and what it
    lacks, never one wide row; a forced layout that another layout's detection claims is an
    error naming both. ``columns`` reads only those columns (an error names any no file has).

    ``duplicates`` says what a harness file holding one sample twice is (a key of its layout
    written again, as a resumed run appends: :mod:`evalframe.io._duplicates`): ``"error"``
    (the default) names the key and both lines; ``"first"`` or ``"last"`` keeps one record of
    each key and warns how many were dropped. It applies within each file of a layout with a
    sample key; plain tables are read as they are.

    Stacked files: a column that is integer in one file and float in another is read as float,
    integers of different widths as the widest, each with a warning; a column whose dtypes
    cannot be reconciled is left out with a warning naming it and the files (name it in
    ``schema=`` to read it as one dtype, or read it alone); a column entirely null in one file
    (a JSON file cannot say its type) takes the other files' dtype. Files from a directory that
    hold harness aggregates next to per-sample files (an lm-eval output tree) give the samples.

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
    frame, _ = _scan(
        source, schema=schema, csv_empty=csv_empty, glob=glob, format=format, columns=columns,
        duplicates=duplicates,
    )
    return frame


def load(
    source: Source,
    *,
    schema: Mapping[str, DtypeLike] | None = None,
    csv_empty: str = "string",
    glob: bool | None = None,
    format: str | None = None,
    columns: Sequence[str] | None = None,
    duplicates: str = "error",
) -> pl.DataFrame | pl.LazyFrame:
    """Load ``source`` as ``score`` does: a LazyFrame stays lazy, anything else is read eagerly.

    Takes the keywords of :func:`scan`. A file that fails while it is read is named.

    >>> import polars as pl
    >>> load(pl.DataFrame({"pred": ["x"]})).columns
    ['pred']
    """
    frame, parts = _scan(
        source, schema=schema, csv_empty=csv_empty, glob=glob, format=format, columns=columns,
        duplicates=duplicates,
    )
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
    format: str | None = None,
    columns: Sequence[str] | None = None,
    duplicates: str = "error",
) -> tuple[pl.LazyFrame, list[_Part]]:
    targets = parse_schema(schema)
    check_csv_empty(csv_empty)
    check_policy(duplicates)
    layout = resolve_format(format)
    selected = _check_columns_argument(columns)
    frame = _in_memory(source)
    if frame is not None:
        if layout not in (AUTO, TABLE):
            raise EvalframeError(
                f"format={layout!r} reads files; the input is already a frame"
            )
        _check_schema_columns(targets, [frame.collect_schema()])
        _check_selected(selected, [frame.collect_schema()])
        located = apply_schema(frame, targets, source="the input", locate=lambda row: f"row {row}")
        return (located.select(selected) if selected is not None else located), []
    if isinstance(source, bytes) or not isinstance(source, str | Path | Sequence):
        raise EvalframeError(
            f"cannot load a {type(source).__name__}; expected a path, a glob, a list of paths, "
            "a polars DataFrame or LazyFrame, or a pyarrow Table"
        )
    readable = tuple(READ_FORMATS) + tuple(
        extension for adapter in LAYOUTS.values() for extension in adapter.extensions
    )
    paths = expand_paths(source, glob=glob, readable=readable, unit=_folder_unit(layout))
    parts = [_read_part(path, targets, csv_empty, layout, duplicates) for path in paths]
    parts = _one_level(parts, from_directory(source))
    _check_files(parts)
    schemas = [part.frame.collect_schema() for part in parts]
    _check_schema_columns(targets, schemas)
    _check_selected(selected, schemas)
    if selected is not None:
        parts = [_select(part, selected) for part in parts]
    return _stack(parts), parts


def _folder_unit(layout: str) -> Callable[[Path], Path | None] | None:
    """The file standing for a folder that is one dump of a layout (a HELM run folder's
    ``scenario_state.json``): under ``format="auto"`` a folder's file of that name counts
    when its content is detected as the layout; under a layout's name, when it exists."""
    candidates = [
        adapter
        for adapter in LAYOUTS.values()
        if adapter.folder_file and layout in (AUTO, adapter.name)
    ]
    if not candidates:
        return None

    def unit(folder: Path) -> Path | None:
        for adapter in candidates:
            path = folder / adapter.folder_file
            if not path.is_file():
                continue
            if layout == adapter.name:
                return path
            try:
                if adapter.detect(Probe(path, format_of(path, READ_FORMATS, "read"))):
                    return path
            except (EvalframeError, *read_errors(), ValueError):
                continue
        return None

    return unit


def _check_columns_argument(columns: Sequence[str] | None) -> list[str] | None:
    if columns is None:
        return None
    if isinstance(columns, str) or not all(isinstance(name, str) for name in columns):
        raise EvalframeError(f"columns={columns!r} must be a list of column names")
    names = list(dict.fromkeys(columns))
    if not names:
        raise EvalframeError("columns= is empty; name the columns to read")
    return names


def _check_selected(selected: list[str] | None, schemas: Sequence[pl.Schema]) -> None:
    if selected is None:
        return
    present = {name for found in schemas for name in found}
    missing = [name for name in selected if name not in present]
    if missing:
        raise EvalframeError(
            f"columns= names column(s) {missing} that the input does not have; "
            f"its columns: {sorted(present)}"
        )


def _select(part: _Part, selected: list[str]) -> _Part:
    schema = part.frame.collect_schema()
    frame = part.frame.select([pl.col(name) for name in selected if name in schema])
    return _Part(part.path, frame, part.locate, part.diagnose, part.layout)


def _one_level(parts: list[_Part], directory: bool) -> list[_Part]:
    """The files to stack: one kind of rows (samples, results, reference...), never a mix.

    A directory holding per-sample files next to harness aggregates or questions (an lm-eval
    output tree) gives its per-sample files; any other mix is an error.
    """
    if directory and len({part.level for part in parts}) > 1:
        samples = [part for part in parts if part.level == "samples"]
        if samples:
            skipped = [part for part in parts if part.level != "samples"]
            warnings.warn(
                f"read the per-sample files of the directory; left out {len(skipped)} file(s) "
                f"of other levels (harness aggregates, questions), first "
                f"{str(skipped[0].path)!r}",
                stacklevel=4,
            )
            parts = samples
    kinds = {part.kind for part in parts}
    if len(kinds) <= 1:
        return parts
    described = "; ".join(
        f"{kind}: {str(next(p.path for p in parts if p.kind == kind))!r}"
        for kind in sorted(kinds)
    )
    raise EvalframeError(
        f"cannot stack files whose rows are different things ({described}); read each kind "
        "on its own"
    )


def _check_files(parts: list[_Part]) -> None:
    """Each layout's check over all of its files read together (keys repeated across files)."""
    for layout in dict.fromkeys(part.layout for part in parts if part.layout is not None):
        if layout.check_files is not None:
            layout.check_files([(part.path, part.frame) for part in parts if part.layout is layout])


def _in_memory(source: object) -> pl.LazyFrame | None:
    if isinstance(source, pl.LazyFrame):
        return source
    if isinstance(source, pl.DataFrame):
        return source.lazy()
    arrow = sys.modules.get("pyarrow")  # a pyarrow table exists only once it is loaded
    if arrow is not None and isinstance(source, arrow.Table):
        frame = pl.from_arrow(source)
        assert isinstance(frame, pl.DataFrame)
        return frame.lazy()
    return None


def _read_part(
    path: Path,
    schema: Mapping[str, pl.DataType],
    csv_empty: str,
    layout: str = AUTO,
    duplicates: str = "error",
) -> _Part:
    special = by_extension(path) if layout != TABLE else None
    if special is not None and layout in (AUTO, special.name):
        return _read_adapted(path, None, special, schema, duplicates)
    kind = format_of(path, READ_FORMATS, "read")
    head = _read_head(path, kind)
    check_content(path, kind, head)
    if layout not in (AUTO, TABLE):
        forced = LAYOUTS.resolve(layout)
        _check_forced(path, Probe(path, kind), forced)
        return _read_adapted(path, kind, forced, schema, duplicates)
    if layout == AUTO and not _written_by_evalframe(path, kind):
        probe = Probe(path, kind)
        found = detect(probe)
        if found is not None:
            return _read_adapted(path, kind, found, schema, duplicates)
        unknown = _unknown_object(path, probe) if probe.top == "object" else None
        if unknown is not None:
            raise EvalframeError(unknown)
    try:
        frame, locate, diagnose = _reader(path, kind, schema, csv_empty)
        frame.collect_schema()
    except read_errors() as error:
        problem = csv_problem(path) if kind == "csv" else None
        message = (
            f"cannot read {str(path)!r}: {problem}" if problem else _failure(path, kind, error)
        )
        raise EvalframeError(message) from error
    csv = kind == "csv"
    frame = apply_schema(frame, schema, source=str(path), locate=locate, empty_is_null=csv)
    return _Part(path, frame, locate, diagnose)


def _written_by_evalframe(path: Path, kind: str) -> bool:
    """Whether ``path`` is a parquet file evalframe wrote (a scored file is read as it is)."""
    if kind != "parquet":
        return False
    try:
        return "evalframe.version" in (pl.read_parquet_metadata(path) or {})
    except (OSError, pl.exceptions.PolarsError):
        return False


def _check_forced(path: Path, probe: Probe, forced: Adapter) -> None:
    """Refuse a forced layout for a file that another layout's detection claims (a lighteval
    results file forced as lm-eval's reads as 0 rows otherwise)."""
    try:
        fits = forced.detect(probe)
    except (OSError, EOFError, ValueError, zlib.error, pl.exceptions.PolarsError):
        fits = False
    if fits:
        return
    other = detect(probe)
    if other is not None and other.name != forced.name:
        raise EvalframeError(
            f"cannot read {str(path)!r} as format {forced.name!r}: it is {describe(other)}; "
            f"{forced.name} expects {forced.expects}"
        )


def _read_adapted(
    path: Path,
    kind: str | None,
    adapter: Adapter,
    schema: Mapping[str, pl.DataType],
    duplicates: str = "error",
) -> _Part:
    try:
        frame = adapter.load(path, duplicates=duplicates)
        frame.collect_schema()
    except read_errors() as error:
        raise EvalframeError(
            f"cannot read {str(path)!r} as {adapter.harness} {adapter.files} "
            f"(format {adapter.name!r}): {first_line(error)}"
        ) from error
    except RecursionError as error:
        raise EvalframeError(
            f"cannot read {str(path)!r} as format {adapter.name!r}: it nests too deep"
        ) from error

    def by_row(row: int) -> str:
        return f"row {row} ({adapter.name} layout)"

    frame = apply_schema(frame, schema, source=str(path), locate=by_row)
    return _Part(path, frame, by_row, lambda: None, adapter)


def _unknown_object(path: Path, probe: Probe) -> str | None:
    """Why a JSON file holding one object that fits no layout is not read (``None`` when it
    is not one valid object: the JSON reader explains that)."""
    try:
        value = probe.value
    except (ValueError, OSError, EOFError, zlib.error):
        return None
    if not isinstance(value, dict):
        return None
    shown = ", ".join(repr(key) for key in list(value)[:3]) + (", ..." if len(value) > 3 else "")
    fact = (
        f"cannot read {str(path)!r}: one JSON object (keys {shown}) that fits no harness layout"
    )
    near = closest(list(value))
    if near is None:
        return (
            f"{fact}, nor is it a table (a JSON list of records or JSON lines); "
            "`evalframe formats` lists the layouts"
        )
    adapter, lacking = near
    if not lacking:
        return f"{fact}: it is one record of {describe(adapter)}, a file of several records"
    return (
        f"{fact}; closest: {describe(adapter)}, which also needs "
        f"{', '.join(map(repr, lacking))}"
    )


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
    from evalframe.io._json import (
        json_array_locator,
        jsonl_locator,
        read_json_array,
        read_jsonl,
    )

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
    dtypes, dropped = _common_dtypes(parts)
    frames = []
    for part in parts:
        schema = part.frame.collect_schema()
        kept = [name for name in schema if name not in dropped]
        casts = [
            pl.col(name).cast(dtypes[name]) if schema[name] != dtypes[name] else pl.col(name)
            for name in kept
        ]
        frames.append(part.frame.select(casts) if len(kept) < len(schema) or casts else part.frame)
    return pl.concat(frames, how="diagonal")


def _common_dtypes(parts: list[_Part]) -> tuple[dict[str, pl.DataType], set[str]]:
    """Each column's dtype over all files, and the columns whose dtypes cannot be reconciled.

    Null (a JSON column null throughout) fits any dtype; integers of different widths widen;
    integer and float read as float (both with a warning); any other difference leaves the
    column out, with a warning naming it, unless ``schema=`` chose its dtype.
    """
    chosen: dict[str, tuple[pl.DataType, Path]] = {}
    dropped: dict[str, str] = {}
    for part in parts:
        for name, dtype in part.frame.collect_schema().items():
            if name in dropped:
                continue
            if name not in chosen:
                chosen[name] = (dtype, part.path)
                continue
            first_dtype, first_path = chosen[name]
            if _fits(dtype, first_dtype):
                continue
            if _fits(first_dtype, dtype):
                chosen[name] = (dtype, part.path)
                continue
            wider = _numeric_supertype(first_dtype, dtype)
            if wider is not None:
                warnings.warn(
                    f"column {name!r} is {first_dtype} in {str(first_path)!r} but {dtype} in "
                    f"{str(part.path)!r}: read as {wider} in every file",
                    stacklevel=5,
                )
                chosen[name] = (wider, first_path)
                continue
            dropped[name] = (
                f"column {name!r} is {first_dtype} in {str(first_path)!r} but {dtype} in "
                f"{str(part.path)!r}"
            )
    for reason in dropped.values():
        warnings.warn(
            f"{reason}: the files disagree, so the column is left out of the stacked input "
            "(give schema={...} to read it as one dtype, or read the files one at a time)",
            stacklevel=5,
        )
    return {name: dtype for name, (dtype, _) in chosen.items()}, set(dropped)


def _numeric_supertype(a: pl.DataType, b: pl.DataType) -> pl.DataType | None:
    """The dtype holding both numeric dtypes ``a`` and ``b`` (lists inside lists), if any.

    >>> _numeric_supertype(pl.Int32, pl.Int64), _numeric_supertype(pl.Int64, pl.Float64)
    (Int64, Float64)
    >>> _numeric_supertype(pl.List(pl.Int64), pl.List(pl.Float32))
    List(Float64)
    >>> _numeric_supertype(pl.Int8, pl.String) is None
    True
    """
    if isinstance(a, pl.List) and isinstance(b, pl.List):
        inner = _numeric_supertype(a.inner, b.inner)
        return pl.List(inner) if inner is not None else None
    if not (a.is_numeric() and b.is_numeric()) or a.is_decimal() or b.is_decimal():
        return None
    if a.is_integer() and b.is_integer():
        if a.is_signed_integer() == b.is_signed_integer():
            return a if _width(a) >= _width(b) else b
        return pl.Int64 if max(_width(a), _width(b)) < 64 else pl.Float64
    return pl.Float64


def _width(dtype: pl.DataType) -> int:
    return {
        pl.Int8: 8, pl.Int16: 16, pl.Int32: 32, pl.Int64: 64, pl.Int128: 128,
        pl.UInt8: 8, pl.UInt16: 16, pl.UInt32: 32, pl.UInt64: 64,
    }.get(dtype.base_type(), 64)


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
