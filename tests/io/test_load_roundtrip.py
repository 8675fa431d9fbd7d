"""Property: a frame written to parquet, JSON lines or CSV reads back through ``ef.load`` with
every value and dtype, or the load raises; never a silent change.

What each format can hold (also in docs/guide.md, "Reading files"):

- parquet and Arrow IPC: everything, NaN and infinities included.
- JSON lines: no NaN or infinity (polars writes them as null, JSON has no such numbers); a
  column that is null everywhere, or a list column with no non-null item, has no type in the
  file and reads as Null / List(Null).
- CSV (flat columns): no types; read with ``schema=`` they come back exactly. By default an
  empty text field is ``""``, so a null text value reads as ``""``; with ``csv_empty="null"``
  an unquoted empty field is null and a quoted one (``""``, as polars writes an empty string)
  is ``""``, so a file polars wrote comes back exactly.
"""

from __future__ import annotations

import math

import polars as pl
from hypothesis import given
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

from evalframe import EvalframeError
from evalframe.io import load

INT64 = st.integers(min_value=-(2**63), max_value=2**63 - 1)
TEXT = st.text(st.characters(codec="utf-8"), max_size=12) | st.sampled_from(["", " ", "1", "true"])

KINDS = ["str", "int", "float", "bool", "list[str]", "list[int]"]
FLAT = ["str", "int", "float", "bool"]
DTYPES = {
    "str": pl.String(),
    "int": pl.Int64(),
    "float": pl.Float64(),
    "bool": pl.Boolean(),
    "list[str]": pl.List(pl.String()),
    "list[int]": pl.List(pl.Int64()),
}


def values(kind: str, special_floats: bool) -> st.SearchStrategy:
    floats = st.floats(allow_nan=special_floats, allow_infinity=special_floats)
    scalar = {"str": TEXT, "int": INT64, "float": floats, "bool": st.booleans()}
    if kind.startswith("list"):
        inner = scalar[kind[5:-1]]
        return st.none() | st.lists(st.none() | inner, max_size=3)
    return st.none() | scalar[kind]


@st.composite
def frames(draw, kinds: list[str], special_floats: bool) -> pl.DataFrame:
    height = draw(st.integers(min_value=1, max_value=8))
    chosen = draw(st.lists(st.sampled_from(kinds), min_size=1, max_size=5))
    columns = {
        f"c{index}": pl.Series(
            draw(st.lists(values(kind, special_floats), min_size=height, max_size=height)),
            dtype=DTYPES[kind],
        )
        for index, kind in enumerate(chosen)
    }
    return pl.DataFrame(columns)


def read_or_raise(path, **options) -> pl.DataFrame | None:
    try:
        return load(path, **options)
    except EvalframeError:
        return None


@given(frames(KINDS, special_floats=True))
def test_parquet_and_arrow_round_trip(tmp_path_factory, frame):
    folder = tmp_path_factory.mktemp("rt")
    frame.write_parquet(folder / "d.parquet")
    frame.write_ipc(folder / "d.arrow")
    assert_frame_equal(load(folder / "d.parquet"), frame, check_exact=True)
    assert_frame_equal(load(folder / "d.arrow"), frame, check_exact=True)


def without_type_where_json_has_none(frame: pl.DataFrame) -> pl.DataFrame:
    """The frame as JSON can say it: no non-null value (or list item) means no type."""
    columns = []
    for series in frame.iter_columns():
        if series.null_count() == series.len():
            series = pl.Series(series.name, series.to_list(), dtype=pl.Null)
        elif isinstance(series.dtype, pl.List) and _items(series) == 0:
            series = pl.Series(series.name, series.to_list(), dtype=pl.List(pl.Null))
        columns.append(series)
    return pl.DataFrame(columns)


def _items(series: pl.Series) -> int:
    return int(series.list.eval(pl.element().drop_nulls()).list.len().sum())


@given(frames(KINDS, special_floats=False))
def test_jsonl_round_trip(tmp_path_factory, frame):
    path = tmp_path_factory.mktemp("rt") / "d.jsonl"
    frame.write_ndjson(path)
    got = read_or_raise(path)
    if got is not None:
        assert_frame_equal(got, without_type_where_json_has_none(frame), check_exact=True)


@given(frames(FLAT, special_floats=True))
def test_csv_round_trip_with_schema(tmp_path_factory, frame):
    path = tmp_path_factory.mktemp("rt") / "d.csv"
    frame.write_csv(path)
    schema = dict(frame.schema)
    text = [name for name, dtype in schema.items() if dtype == pl.String]
    empty_is_text = frame.with_columns(pl.col(text).fill_null(""))
    # polars writes "" quoted and null as an empty field: csv_empty="null" tells them apart.
    for options, expected in [({}, empty_is_text), ({"csv_empty": "null"}, frame)]:
        got = read_or_raise(path, schema=schema, **options)
        if got is not None:
            assert_frame_equal(got, expected, check_exact=True)


@given(frames(["int", "float", "bool"], special_floats=True))
def test_csv_inferred_types_round_trip(tmp_path_factory, frame):
    """Without schema=, numbers and booleans come back as they were (a column that is null
    throughout has nothing to infer from and reads as text)."""
    path = tmp_path_factory.mktemp("rt") / "d.csv"
    frame.write_csv(path)
    got = read_or_raise(path)
    if got is not None:
        empty = [s.name for s in frame.iter_columns() if s.null_count() == s.len()]
        expected = frame.with_columns(pl.col(empty).cast(pl.String).fill_null(""))
        assert_frame_equal(got, expected, check_exact=True)


def test_round_trip_is_not_vacuous(tmp_path):
    """The properties above accept a raise; these ordinary frames must read."""
    frame = pl.DataFrame(
        {
            "s": ["é", "", None],
            "i": [1, None, -(2**63)],
            "f": [0.1, None, -0.0],
            "b": [True, None, False],
        }
    )
    for name, write in [("d.jsonl", frame.write_ndjson), ("d.csv", frame.write_csv)]:
        write(tmp_path / name)
        options = {"schema": dict(frame.schema)} if name.endswith("csv") else {}
        got = load(tmp_path / name, **options)
        assert got.height == 3
        assert math.isclose(got["f"][0], 0.1)
