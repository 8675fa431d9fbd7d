"""Loading dumps: formats, globs, lists, errors."""

from __future__ import annotations

import gzip
import json
import re

import polars as pl
import pytest

from evalframe import EvalframeError
from evalframe.io import expand_paths, load, scan

FRAME = pl.DataFrame(
    {"prediction": ["a", None, "c"], "gold": [["a"], ["b", "B"], []], "n": [1, 2, None]}
)


@pytest.mark.parametrize("name", ["d.parquet", "d.pq", "d.jsonl", "d.ndjson", "d.arrow", "d.ipc"])
def test_round_trip_formats(tmp_path, name):
    path = tmp_path / name
    if name.endswith(("jsonl", "ndjson")):
        FRAME.write_ndjson(path)
    elif name.endswith(("arrow", "ipc")):
        FRAME.write_ipc(path)
    else:
        FRAME.write_parquet(path)
    assert load(path).equals(FRAME)


def test_json_array_and_gzip(tmp_path):
    records = FRAME.to_dicts()
    (tmp_path / "d.json").write_text(json.dumps(records))
    assert load(tmp_path / "d.json").equals(FRAME)
    (tmp_path / "d.json.gz").write_bytes(gzip.compress(json.dumps(records).encode()))
    assert load(tmp_path / "d.json.gz").equals(FRAME)
    lines = "\n".join(json.dumps(r) for r in records)
    (tmp_path / "d.jsonl.gz").write_bytes(gzip.compress(lines.encode()))
    assert load(tmp_path / "d.jsonl.gz").equals(FRAME)


def test_csv(tmp_path):
    flat = FRAME.drop("gold")
    flat.write_csv(tmp_path / "d.csv")
    # A CSV cannot tell a null text field from an empty one: "" by default, null on request.
    assert load(tmp_path / "d.csv", csv_empty="null").equals(flat)
    assert load(tmp_path / "d.csv")["prediction"].to_list() == ["a", "", "c"]


def test_glob_and_list_keep_file_order_and_fill_missing_columns(tmp_path):
    FRAME.head(1).write_parquet(tmp_path / "part-0.parquet")
    FRAME.tail(2).drop("n").write_parquet(tmp_path / "part-1.parquet")
    both = load(str(tmp_path / "part-*.parquet"))
    assert both["prediction"].to_list() == ["a", None, "c"]
    assert both["n"].to_list() == [1, None, None]
    listed = load([tmp_path / "part-0.parquet", tmp_path / "part-1.parquet"])
    assert listed.equals(both)


def test_conflicting_dtypes_across_files_leave_the_column_out_with_a_warning(tmp_path):
    pl.DataFrame({"n": [1], "keep": ["a"]}).write_parquet(tmp_path / "a.parquet")
    pl.DataFrame({"n": ["1"], "keep": ["b"]}).write_parquet(tmp_path / "b.parquet")
    with pytest.warns(UserWarning, match="column 'n' is Int64 in .*a.parquet.* but String"):
        both = load(str(tmp_path / "*.parquet"))
    assert both.to_dict(as_series=False) == {"keep": ["a", "b"]}
    # the same column read as one dtype by schema=
    typed = load(str(tmp_path / "*.parquet"), schema={"n": "str"})
    assert typed["n"].to_list() == ["1", "1"]
    # a column nobody selected does not matter
    assert load(str(tmp_path / "*.parquet"), columns=["keep"])["keep"].to_list() == ["a", "b"]


@pytest.mark.parametrize(
    ("first", "second", "unified"),
    [
        (pl.Int32, pl.Int64, pl.Int64),
        (pl.Int64, pl.Float64, pl.Float64),
        (pl.UInt8, pl.Int16, pl.Int64),
        (pl.List(pl.Int64), pl.List(pl.Float64), pl.List(pl.Float64)),
    ],
)
def test_numeric_dtypes_that_differ_by_width_or_kind_are_unified(tmp_path, first, second, unified):
    value = [1] if not isinstance(first, pl.List) else [[1]]
    pl.DataFrame({"x": pl.Series(value, dtype=first)}).write_parquet(tmp_path / "a.parquet")
    pl.DataFrame({"x": pl.Series(value, dtype=second)}).write_parquet(tmp_path / "b.parquet")
    with pytest.warns(UserWarning, match=re.escape(f"read as {unified}")):
        both = load(str(tmp_path / "*.parquet"))
    assert both.schema["x"] == unified
    assert both.height == 2


def test_columns_selects_and_names_what_is_missing(tmp_path):
    pl.DataFrame({"a": [1], "b": ["x"]}).write_parquet(tmp_path / "a.parquet")
    assert load(tmp_path / "a.parquet", columns=["b"]).columns == ["b"]
    with pytest.raises(EvalframeError, match=r"columns= names column\(s\) \['c'\]"):
        load(tmp_path / "a.parquet", columns=["b", "c"])
    with pytest.raises(EvalframeError, match="must be a list"):
        load(tmp_path / "a.parquet", columns="b")


def test_a_directory_reads_every_readable_file_below_it(tmp_path):
    (tmp_path / "m1").mkdir()
    (tmp_path / "m1" / ".hidden").mkdir()
    pl.DataFrame({"a": [1]}).write_parquet(tmp_path / "m1" / "x.parquet")
    pl.DataFrame({"a": [9]}).write_parquet(tmp_path / "m1" / ".hidden" / "y.parquet")
    (tmp_path / "notes.txt").write_text("not data")
    (tmp_path / "b.jsonl").write_text('{"a": 2}\n')
    assert load(tmp_path)["a"].to_list() == [2, 1]
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(EvalframeError, match="holds no readable file"):
        load(empty)


def test_unknown_format_name_suggests_the_closest():
    with pytest.raises(EvalframeError, match="did you mean 'table'"):
        load(FRAME, format="tabel")


def test_lazy_frame_stays_lazy():
    assert isinstance(load(FRAME.lazy()), pl.LazyFrame)
    assert isinstance(scan(FRAME), pl.LazyFrame)


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda p: p / "missing.parquet", "file not found"),
        (lambda p: p / "nothing-*.parquet", "no files match"),
        (lambda p: p, "is a directory"),
    ],
)
def test_path_errors(tmp_path, make, message):
    with pytest.raises(EvalframeError, match=message):
        expand_paths(make(tmp_path))


def test_unknown_extension_and_unreadable_file(tmp_path):
    (tmp_path / "d.xlsx").write_text("x")
    with pytest.raises(EvalframeError, match="unknown file extension"):
        load(tmp_path / "d.xlsx")
    (tmp_path / "broken.parquet").write_text("not parquet")
    with pytest.raises(EvalframeError, match="broken.parquet"):
        load(tmp_path / "broken.parquet")


def test_unsupported_object():
    with pytest.raises(EvalframeError, match="cannot load a int"):
        load(3)


def test_column_null_throughout_one_json_file_takes_the_others_dtype(tmp_path):
    (tmp_path / "a.jsonl").write_text('{"gold": ["x"], "n": 1}\n')
    (tmp_path / "b.jsonl").write_text('{"gold": null, "n": 2}\n{"gold": [], "n": 3}\n')
    both = load(str(tmp_path / "*.jsonl"))
    assert both.schema["gold"] == pl.List(pl.String)
    assert both["gold"].to_list() == [["x"], None, []]


def test_arrow_table_source():
    import pyarrow as pa

    table = pa.table({"prediction": ["a"], "gold": [["a"]]})
    assert load(table).equals(pl.from_arrow(table))
    assert load(table, schema={"prediction": "str"}).shape == (1, 2)
