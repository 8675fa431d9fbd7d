"""The ``schema=`` keyword of ``scan``/``load``: dtype names, and casts that never lose a value."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import polars as pl

from evalframe.errors import EvalframeError
from evalframe.io._common import first_line, short

DtypeLike = pl.DataType | type[pl.DataType] | str

#: Names accepted for a dtype in ``schema=`` (also inside ``list[...]``).
DTYPE_NAMES: dict[str, pl.DataType] = {
    "str": pl.String(),
    "string": pl.String(),
    "utf8": pl.String(),
    "int": pl.Int64(),
    "int64": pl.Int64(),
    "i64": pl.Int64(),
    "int32": pl.Int32(),
    "i32": pl.Int32(),
    "float": pl.Float64(),
    "float64": pl.Float64(),
    "f64": pl.Float64(),
    "float32": pl.Float32(),
    "f32": pl.Float32(),
    "bool": pl.Boolean(),
    "boolean": pl.Boolean(),
}

#: Text a CSV boolean may hold (compared case-insensitively).
BOOLEAN_TEXT = {"true": True, "false": False}


def parse_dtype(value: DtypeLike, column: str) -> pl.DataType:
    """A polars dtype from a dtype, a dtype class or a name (``"str"``, ``"list[int]"``).

    >>> parse_dtype("list[str]", "gold")
    List(String)
    >>> parse_dtype(pl.Int64, "n")
    Int64
    """
    if isinstance(value, pl.DataType):
        return value
    if isinstance(value, type) and issubclass(value, pl.DataType):
        try:
            return value()
        except TypeError:
            pass
    elif isinstance(value, str):
        name = value.strip().lower().replace(" ", "")
        if name in DTYPE_NAMES:
            return DTYPE_NAMES[name]
        if name.startswith("list[") and name.endswith("]"):
            return pl.List(parse_dtype(name[5:-1], column))
    known = ", ".join(sorted(DTYPE_NAMES))
    raise EvalframeError(
        f"schema: cannot use {value!r} as the dtype of column {column!r}; give a polars dtype "
        f"(pl.Int64, pl.List(pl.String)) or a name: {known}, or list[NAME]"
    )


def parse_schema(schema: Mapping[str, DtypeLike] | None) -> dict[str, pl.DataType]:
    """``schema=`` as a mapping column -> polars dtype (checked before any file is read).

    >>> parse_schema({"id": "str", "n": "int"})
    {'id': String, 'n': Int64}
    """
    if schema is None:
        return {}
    if not isinstance(schema, Mapping):
        raise EvalframeError(
            f"schema= must be a mapping column -> dtype (e.g. {{'id': 'str'}}); "
            f"got a {type(schema).__name__}"
        )
    parsed: dict[str, pl.DataType] = {}
    for column, dtype in schema.items():
        if not isinstance(column, str):
            raise EvalframeError(f"schema: column names must be strings; got {column!r}")
        parsed[column] = parse_dtype(dtype, column)
    return parsed


def apply_schema(
    frame: pl.LazyFrame,
    schema: Mapping[str, pl.DataType],
    *,
    source: str,
    locate: Callable[[int], str],
    empty_is_null: bool = False,
) -> pl.LazyFrame:
    """Cast the columns ``schema`` names, or raise naming the column and its first bad row.

    A value that would change (``1.5`` to an integer, ``"x"`` to a number, ``2`` to a
    boolean) is an error, never a silent truncation or null. With ``empty_is_null`` (CSV text
    read for a non-text dtype) an empty string is null. Columns ``schema`` names that
    ``frame`` lacks are left to the caller. Checking runs one query over those columns.

    >>> frame = pl.LazyFrame({"id": [7, 8], "x": ["1", "2.5"]})
    >>> apply_schema(frame, {"id": pl.String}, source="d", locate=str).collect()["id"].to_list()
    ['7', '8']
    >>> try:
    ...     apply_schema(frame, {"x": pl.Int64}, source="d.csv", locate=lambda r: f"row {r}")
    ... except EvalframeError as error:
    ...     print(error)
    cannot read column 'x' of 'd.csv' as Int64: 1 value(s) do not convert; the first is row 1: '2.5'
    """
    current = frame.collect_schema()
    casts = {
        name: _conversion(name, current[name], target, empty_is_null)
        for name, target in schema.items()
        if name in current and current[name] != target
    }
    if not casts:
        return frame
    _check(frame, casts, schema, current, source, locate)
    return frame.with_columns(converted.alias(name) for name, (converted, _) in casts.items())


def convert(name: str, current: pl.DataType, target: pl.DataType, empty_is_null: bool) -> pl.Expr:
    """Column ``name`` converted from ``current`` to ``target`` (unchecked: see apply_schema).

    >>> frame = pl.DataFrame({"ok": ["True", "false", ""]})
    >>> frame.select(convert("ok", pl.String(), pl.Boolean(), True))["ok"].to_list()
    [True, False, None]
    """
    return _conversion(name, current, target, empty_is_null)[0].alias(name)


def _conversion(
    name: str, current: pl.DataType, target: pl.DataType, empty_is_null: bool
) -> tuple[pl.Expr, pl.Expr]:
    """The converted column and a mask of the rows whose value it does not keep."""
    source = pl.col(name)
    if empty_is_null and current == pl.String and target != pl.String:
        source = pl.when(source != "").then(source)
    if current == pl.String and target == pl.Boolean:
        converted = source.str.to_lowercase().replace_strict(
            BOOLEAN_TEXT, default=None, return_dtype=pl.Boolean
        )
    else:
        converted = source.cast(target, strict=False)
    bad = source.is_not_null() & converted.is_null()
    if _is_number(current) and (_is_number(target) or target == pl.Boolean):
        both_float = current.is_float() and target.is_float()
        if not both_float:  # 1.5 -> 1, 2 -> true, 2**53 + 1 -> float: the value would change
            bad = bad | (converted.cast(current, strict=False) != source).fill_null(False)
    return converted, bad


def _is_number(dtype: pl.DataType) -> bool:
    return dtype.is_numeric() or dtype == pl.Boolean


def _check(
    frame: pl.LazyFrame,
    casts: Mapping[str, tuple[pl.Expr, pl.Expr]],
    schema: Mapping[str, pl.DataType],
    current: Mapping[str, pl.DataType],
    source: str,
    locate: Callable[[int], str],
) -> None:
    query = frame.select(
        pl.struct(count=bad.sum(), first=bad.arg_true().first()).alias(name)
        for name, (_, bad) in casts.items()
    )
    try:
        found = query.collect().row(0, named=True)
    except pl.exceptions.PolarsError as error:
        wanted = {name: f"{current[name]} -> {schema[name]}" for name in casts}
        raise EvalframeError(
            f"cannot convert column(s) of {source!r} as schema= asks ({wanted}): "
            f"{first_line(error)}"
        ) from error
    for name, result in found.items():
        if result["count"]:
            row = int(result["first"])
            value = frame.select(pl.col(name)).slice(row, 1).collect().item()
            raise EvalframeError(
                f"cannot read column {name!r} of {source!r} as {schema[name]}: "
                f"{result['count']} value(s) do not convert; the first is {locate(row)}: "
                f"{short(value)}"
            )
