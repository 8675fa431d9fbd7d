"""JSON lines and JSON arrays, read exactly: a field's type is the one the file gives it.

pyarrow's JSON reader parses the whole file (in parallel blocks) and unifies every field's
type over all of it, so a key or a type first seen on the last line is kept. It refuses a
field whose JSON type changes (a string on one line, a list on another) where polars would
silently turn the values into JSON text. Only then, after the failure, is the file read again
line by line in Python to say which field, which two types and on which lines.

Rules: integers and non-integers in one field are Float64 (exact up to 2**53); a field that is
null (or an empty list) on every line has no type in the file and reads as Null (List(Null));
strings that look like timestamps stay strings. Every table is validated in full (UTF-8, list
lengths: pyarrow 26 drops the nulls that open a list, ``[null, "a"]``, which a second read with
the inferred types avoids).

Trade-off: the frame is built in memory (Arrow columns, about the size of the data) when the
file is scanned, instead of polars' lazy ``scan_ndjson``, whose types come from the first rows
only and which turns a type change into JSON text. On 1M lines (164 MB) pyarrow is as fast
or faster (0.5-1.0 s; gzip 0.6 s against 1.0 s) for about 25% more peak memory (690 against
565 MiB), and a plan over a JSON file no longer streams: a dump must fit in memory. Convert
it to parquet once to scan it lazily afterwards.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl

from evalframe.errors import EvalframeError
from evalframe.io._source import check_depth, chunks, file_chunks, open_binary, read_bytes

if TYPE_CHECKING:
    import pyarrow as pa

BOM = b"\xef\xbb\xbf"
#: The largest block pyarrow's JSON reader takes (its block size is an int32).
MAX_BLOCK = 2**31 - 1


def parse_errors() -> tuple[type[Exception], ...]:
    """What pyarrow raises on a file it cannot parse or unify (not on an unreadable file).

    pyarrow is loaded by the JSON readers only, not when this module is imported.
    """
    import pyarrow as pa

    return (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError)


_SPACE = re.compile(r"[ \t\n\r]*")

SINGULAR = {
    "string": "a string",
    "number": "a number",
    "boolean": "a boolean",
    "list": "a list",
    "object": "an object",
}
PLURAL = {
    "string": "strings",
    "number": "numbers",
    "boolean": "booleans",
    "list": "lists",
    "object": "objects",
}


# ---------------------------------------------------------------- JSON lines


def read_jsonl(path: Path, *, compressed: bool) -> pl.DataFrame:
    """A JSON lines file (``compressed``: gzip) as a DataFrame, or an error naming the line.

    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "d.jsonl"
    >>> _ = path.write_text('{"gold": ["a"]}\\n{"gold": "b"}\\n')
    >>> try:
    ...     read_jsonl(path, compressed=False)
    ... except EvalframeError as error:
    ...     print(str(error).split(": ", 1)[1])
    field 'gold' is a list of strings on line 1 but a string on line 2; a field must have one \
JSON type on every line (null aside): write a single value as a one-item list (["b"])
    """
    check_depth(path, file_chunks(path), lines=True)
    try:
        table = _exact(lambda schema: _arrow_jsonl(path, compressed, schema=schema))
    except parse_errors() as error:
        _raise_problem(path, _jsonl_problem(path, compressed))
        try:  # blocks inferred apart can fail to unify (null, then a list of objects)
            table = _exact(
                lambda schema: _arrow_jsonl(path, compressed, schema=schema, one_block=True)
            )
        except parse_errors() as again:
            raise EvalframeError(
                f"cannot read {str(path)!r} as JSON lines: {arrow_message(again)}"
            ) from error
    frame = _frame(table, path)
    if _has_empty_row(frame):  # a line `null` or `{}`: pyarrow reads it as a row of nulls
        _raise_problem(path, _jsonl_problem(path, compressed))
    return frame


def _arrow_jsonl(
    path: Path, compressed: bool, *, one_block: bool = False, schema: pa.Schema | None = None
) -> pa.Table:
    import pyarrow as pa
    import pyarrow.json as pj

    parse = pj.ParseOptions(explicit_schema=schema, unexpected_field_behavior="infer")
    with _open_arrow(path, compressed) as stream:
        if not one_block:
            return pj.read_json(stream, parse_options=parse)
        data = stream.read()
    block = min(len(data) + 1, MAX_BLOCK)
    options = pj.ReadOptions(block_size=block, use_threads=False)
    return pj.read_json(pa.BufferReader(data), read_options=options, parse_options=parse)


def _exact(read: Callable[[pa.Schema | None], pa.Table]) -> pa.Table:
    """Read with inferred types; read again with those types given when the first read is not
    exact: a timestamp pyarrow guessed from strings, or an invalid table (pyarrow 26 drops
    the nulls that open a list before its item type is known: ``[null, "a"]``). Every table
    is checked in full (list lengths, UTF-8), which costs a fraction of the parse.
    """
    import pyarrow as pa

    table = read(None)
    schema = _as_text_schema(table.schema)
    if schema == table.schema:
        try:
            return _repaired(table)
        except pa.ArrowInvalid:
            pass
    return _repaired(read(schema))


def _repaired(table: pa.Table) -> pa.Table:
    """``table`` with its lists of nulls rebuilt (see :func:`_repair`), checked in full."""
    import pyarrow as pa

    if not any(_has_null_list(field.type) for field in table.schema):
        table.validate(full=True)
        return table
    columns = [
        pa.chunked_array(map(_repair, column.chunks), column.type)
        if _has_null_list(column.type)
        else column
        for column in table.columns
    ]
    fixed = pa.Table.from_arrays(columns, schema=table.schema)
    fixed.validate(full=True)
    return fixed


def _has_null_list(dtype: pa.DataType) -> bool:
    import pyarrow as pa

    if pa.types.is_list(dtype):
        return pa.types.is_null(dtype.value_type) or _has_null_list(dtype.value_type)
    return pa.types.is_struct(dtype) and any(_has_null_list(f.type) for f in dtype)


def _repair(array: pa.Array) -> pa.Array:
    """Rebuild lists of nulls: pyarrow 26's JSON reader gives them too few (null) items."""
    import pyarrow as pa

    if pa.types.is_list(array.type):
        values = array.values
        if pa.types.is_null(values.type):
            values = pa.nulls(array.offsets[-1].as_py() if len(array.offsets) else 0)
        else:
            values = _repair(values)
        return pa.ListArray.from_arrays(array.offsets, values, array.type, mask=array.is_null())
    if pa.types.is_struct(array.type):
        children = [_repair(array.field(index)) for index in range(array.type.num_fields)]
        return pa.StructArray.from_arrays(children, fields=list(array.type), mask=array.is_null())
    return array


def _open_arrow(path: Path, compressed: bool) -> pa.NativeFile:
    import pyarrow as pa

    return pa.PythonFile(open_binary(path), mode="r") if compressed else pa.OSFile(str(path))


def _lines(path: Path, compressed: bool) -> Iterator[tuple[int, bytes]]:
    """(1-based line number, bytes without the end of line, and without a leading BOM)."""
    with open_binary(path) as handle:
        for number, line in enumerate(handle, 1):
            yield number, line.removeprefix(BOM) if number == 1 else line


def _jsonl_problem(path: Path, compressed: bool) -> str | None:
    """The first invalid line or type conflict of a JSON lines file, or None."""
    types = _Types("line")
    records = 0
    for number, raw in _lines(path, compressed):
        if not raw.strip():
            continue
        where = f"line {number}"
        value, problem = _decode(raw, where)
        if problem:
            return problem
        if not isinstance(value, dict):
            return f"{where} holds {_kind_phrase(value)}; expected one JSON object per line"
        if not value:
            return f"{where} holds an empty object {{}}; expected a record (one per line)"
        records += 1
        problem = types.add(value, where)
        if problem:
            return problem
    return None if records else "it holds no JSON records (only blank lines)"


def jsonl_locator(path: Path, *, compressed: bool) -> Callable[[int], str]:
    """A function naming a row of the frame by its line in the file (blank lines skipped).

    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "d.jsonl"
    >>> _ = path.write_text('{"a": 1}\\n\\n{"a": 2}\\n')
    >>> jsonl_locator(path, compressed=False)(1)
    'row 1 (line 3)'
    """

    def locate(row: int) -> str:
        records = -1
        for number, raw in _lines(path, compressed):
            if raw.strip():
                records += 1
                if records == row:
                    return f"row {row} (line {number})"
        return f"row {row}"

    return locate


def line_locator(path: Path, *, compressed: bool) -> Callable[[int], str]:
    """A function naming a row of the frame as its line in the file (blank lines skipped).

    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "d.jsonl"
    >>> _ = path.write_text('{"a": 1}\\n\\n{"a": 2}\\n')
    >>> line_locator(path, compressed=False)(1)
    'line 3'
    """
    rows = jsonl_locator(path, compressed=compressed)

    def locate(row: int) -> str:
        where = rows(row)
        return where[where.index("(") + 1 : -1] if "(" in where else where

    return locate


# ---------------------------------------------------------------- JSON arrays


def read_json_array(path: Path, *, compressed: bool) -> pl.DataFrame:
    """A JSON file holding a list of records (objects) as a DataFrame.

    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "d.json"
    >>> _ = path.write_text('[{"a": 1},\\n {"a": 2.5, "b": "x"}]')
    >>> read_json_array(path, compressed=False).to_dicts()
    [{'a': 1.0, 'b': None}, {'a': 2.5, 'b': 'x'}]
    """
    data = read_bytes(path)
    check_depth(path, chunks(data))
    start = data.lstrip()[:1]
    if start == b"{":
        raise EvalframeError(f"cannot read {str(path)!r}: {_object_problem(data)}")
    if start != b"[":
        _raise_problem(path, _json_array_problem(data))
        raise EvalframeError(f"cannot read {str(path)!r}: expected a JSON list of records")
    try:
        records = _records(_exact(lambda schema: _arrow_array(data, schema)))
    except parse_errors() as error:
        _raise_problem(path, _json_array_problem(data))
        message = f"cannot read {str(path)!r} as JSON: {arrow_message(error)}"
        raise EvalframeError(message) from error
    frame = _frame(records, path)
    if _has_empty_row(frame):  # a record `{}` is a row of nulls
        _raise_problem(path, _json_array_problem(data))
    return frame


def _object_problem(data: bytes) -> str:
    """Why a .json file starting with ``{`` is not read: one object, or JSON lines misnamed."""
    expected = "a .json file must hold a list of records ([{...}, {...}])"
    try:
        value = json.loads(data)
    except json.JSONDecodeError as error:
        if error.msg == "Extra data":
            return (
                "it holds several JSON objects one after another, which is JSON lines: "
                "name it .jsonl"
            )
        return f"line {error.lineno} is not valid JSON: {error.msg} (column {error.colno})"
    keys = ", ".join(repr(key) for key in list(value)[:3]) + (", ..." if len(value) > 3 else "")
    return (
        f"it holds one JSON object (keys {keys}), not a list of records; {expected}, "
        "one record per line is JSON lines (.jsonl)"
    )


def _arrow_array(data: bytes, schema: pa.Schema | None = None) -> pa.Table:
    """Parse the array as the one field of one object, so pyarrow unifies every record's types."""
    import pyarrow as pa
    import pyarrow.json as pj

    wrapped = b'{"rows":' + data + b"\n}"
    if len(wrapped) >= MAX_BLOCK:
        raise EvalframeError("a JSON list of records over 2 GiB: write it as JSON lines (.jsonl)")
    read = pj.ReadOptions(block_size=len(wrapped) + 1, use_threads=False)
    parse = pj.ParseOptions(explicit_schema=schema, newlines_in_values=True)
    return pj.read_json(pa.BufferReader(wrapped), read_options=read, parse_options=parse)


def _records(table: pa.Table) -> pa.Table:
    import pyarrow as pa

    rows = table.column("rows").combine_chunks()
    if not pa.types.is_list(rows.type):
        raise pa.ArrowInvalid("not a list")
    values = rows.flatten()
    if len(values) == 0:
        return pa.table({})
    if not pa.types.is_struct(values.type) or values.null_count:
        raise pa.ArrowInvalid("records must be objects")
    return pa.Table.from_struct_array(values)


def _json_array_problem(data: bytes) -> str | None:
    """The first syntax error, non-object record or type conflict of a JSON array, or None."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        return f"line {line} is not valid UTF-8"
    decoder = json.JSONDecoder(object_pairs_hook=_unique_keys)
    types = _Types("record")
    index, line = _SPACE.match(text, 0).end(), 1
    if text[index : index + 1] != "[":
        return "line 1: expected a JSON list of records ('[')"
    index += 1
    for number in range(1, len(text) + 1):
        begin = _SPACE.match(text, index).end()
        if text[begin : begin + 1] == "]" and number == 1:
            return None
        line += text.count("\n", index, begin)
        where = f"record {number} (line {line})"
        try:
            value, end = decoder.raw_decode(text, begin)
        except json.JSONDecodeError as error:
            return f"line {error.lineno} is not valid JSON: {error.msg} (column {error.colno})"
        except _DuplicateKey as error:
            return f"{where}: key {error.args[0]!r} appears twice in one object"
        if not isinstance(value, dict):
            return f"{where} is {_kind_phrase(value)}; expected a list of objects"
        if not value:
            return f"{where} is an empty object {{}}; expected a record"
        problem = types.add(value, where)
        if problem:
            return problem
        line += text.count("\n", begin, end)
        index = _SPACE.match(text, end).end()
        line += text.count("\n", end, index)
        separator = text[index : index + 1]
        if separator == "]":
            return None
        if separator != ",":
            return f"line {line} is not valid JSON: expected ',' or ']' after record {number}"
        index += 1
    return None


def json_array_locator(path: Path, *, compressed: bool) -> Callable[[int], str]:
    """A function naming a row of the frame as a record of the JSON list (1-based).

    >>> json_array_locator(Path("d.json"), compressed=False)(0)
    'row 0 (record 1)'
    """
    return lambda row: f"row {row} (record {row + 1})"


# ---------------------------------------------------------------- shared


def _has_empty_row(frame: pl.DataFrame) -> bool:
    """Whether some row is null in every column (a record of nulls, or no record at all)."""
    return bool(frame.select(pl.all_horizontal(pl.all().is_null()).any()).item())


def _frame(table: pa.Table, path: Path) -> pl.DataFrame:
    if table.num_columns == 0:
        what = f"{table.num_rows} empty object(s)" if table.num_rows else "no JSON records"
        raise EvalframeError(f"cannot read {str(path)!r}: it holds {what}; nothing to read")
    frame = pl.from_arrow(table)
    assert isinstance(frame, pl.DataFrame)
    return frame


def _raise_problem(path: Path, problem: str | None) -> None:
    if problem:
        raise EvalframeError(f"cannot read {str(path)!r}: {problem}") from None


def arrow_message(error: BaseException) -> str:
    """pyarrow's message without its block-relative row number, which misleads.

    >>> arrow_message(ValueError("JSON parse error: Invalid value. in row 3"))
    'JSON parse error: Invalid value.'
    """
    return re.sub(r" in row \d+$", "", str(error).strip().splitlines()[0])


class _DuplicateKey(ValueError):
    pass


def _unique_keys(pairs: list[tuple[str, object]]) -> dict[str, object]:
    record = dict(pairs)
    if len(record) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKey(key)
            seen.add(key)
    return record


def _decode(raw: bytes, where: str) -> tuple[object, str | None]:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        return None, f"{where} is not valid UTF-8 (byte {error.start + 1} of the line)"
    try:
        return json.loads(text, object_pairs_hook=_unique_keys), None
    except _DuplicateKey as error:
        return None, f"{where}: key {error.args[0]!r} appears twice in one object"
    except json.JSONDecodeError as error:
        return None, f"{where} is not valid JSON: {error.msg} (column {error.colno})"


def _kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "list" if isinstance(value, list) else "object"


def _kind_phrase(value: object) -> str:
    kind = _kind(value)
    return "null" if kind == "null" else f"{SINGULAR[kind]} ({str(value)[:40]})"


class _Types:
    """The JSON type each field (and list item, and nested field) has, and where first seen."""

    def __init__(self, unit: str) -> None:
        self.unit = unit
        self.seen: dict[tuple[str, ...], tuple[str, str]] = {}

    def add(self, record: dict[str, object], where: str) -> str | None:
        for key, value in record.items():
            problem = self._add(value, (key,), where)
            if problem:
                return problem
        return None

    def _add(self, value: object, path: tuple[str, ...], where: str) -> str | None:
        kind = _kind(value)
        if kind == "null":
            return None
        first = self.seen.setdefault(path, (kind, where))
        if first[0] != kind:
            return self._conflict(path, first, (kind, where), value)
        children: list[tuple[object, tuple[str, ...]]] = []
        if isinstance(value, list):
            children = [(item, (*path, "[]")) for item in value]
        elif isinstance(value, dict):
            children = [(item, (*path, key)) for key, item in value.items()]
        for child, child_path in children:
            problem = self._add(child, child_path, where)
            if problem:
                return problem
        return None

    def _conflict(
        self,
        path: tuple[str, ...],
        first: tuple[str, str],
        second: tuple[str, str],
        value: object,
    ) -> str:
        keys = list(path)
        depth = 0
        while keys and keys[-1] == "[]":
            keys.pop()
            depth += 1
        field = ".".join(keys).replace(".[]", "[]")
        first_items = self.seen.get((*path, "[]"), (None,))[0] if first[0] == "list" else None
        second_items = _items_kind(value) if second[0] == "list" else None
        a = _describe(first[0], depth, first_items)
        b = _describe(second[0], depth, second_items)
        hint = ""
        if {first[0], second[0]} == {"string", "list"} and depth == 0:
            single = value if isinstance(value, str) else None
            example = json.dumps([single], ensure_ascii=False) if single is not None else '["..."]'
            hint = f": write a single value as a one-item list ({example})"
        return (
            f"field {field!r} is {a} on {first[1]} but {b} on {second[1]}; a field must have "
            f"one JSON type on every {self.unit} (null aside){hint}"
        )


def _items_kind(value: object) -> str | None:
    kinds = [_kind(item) for item in value] if isinstance(value, list) else []
    return next((kind for kind in kinds if kind != "null"), None)


def _describe(kind: str, depth: int, items: str | None) -> str:
    noun = PLURAL[kind] if depth else SINGULAR[kind]
    if kind == "list" and items:
        noun += f" of {PLURAL[items]}"
    if depth:
        noun = "a list of " + "lists of " * (depth - 1) + noun
    return noun


def _as_text(dtype: pa.DataType) -> pa.DataType:
    """``dtype`` with timestamps (which pyarrow infers from ISO-8601 strings) as strings."""
    import pyarrow as pa

    if pa.types.is_timestamp(dtype) or pa.types.is_date(dtype) or pa.types.is_time(dtype):
        return pa.string()
    if pa.types.is_list(dtype):
        return pa.list_(_as_text(dtype.value_type))
    if pa.types.is_struct(dtype):
        return pa.struct([pa.field(f.name, _as_text(f.type)) for f in dtype])
    return dtype


def _as_text_schema(schema: pa.Schema) -> pa.Schema:
    import pyarrow as pa

    return pa.schema([pa.field(field.name, _as_text(field.type)) for field in schema])
