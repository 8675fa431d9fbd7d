"""CSV: empty text is "", types from every row, one name per column, schema= for text ids."""

from __future__ import annotations

import csv

import polars as pl
import pytest

import evalframe as ef
from evalframe import EvalframeError
from evalframe.io import load, scan


def write_rows(path, rows):
    with path.open("w", newline="") as handle:
        csv.writer(handle).writerows(rows)
    return path


def test_empty_prediction_is_a_wrong_answer_not_missing(tmp_path):
    # Python's csv (and pandas) write an empty string as an empty field.
    path = write_rows(
        tmp_path / "d.csv",
        [["prediction", "gold"], ["Paris", "Paris"], ["", "Rome"], ["", "Oslo"]],
    )
    frame = load(path)
    assert frame["prediction"].to_list() == ["Paris", "", ""]
    table = ef.aggregate(ef.score(path, ["exact_match"]))
    assert table["n"].to_list() == [3]
    assert table["value"].to_list() == pytest.approx([1 / 3])


def test_csv_empty_null_option(tmp_path):
    path = write_rows(tmp_path / "d.csv", [["prediction", "n"], ["a", "1"], ["", ""]])
    assert load(path, csv_empty="null")["prediction"].to_list() == ["a", None]
    assert load(path)["n"].to_list() == [1, None]  # empty numbers are null either way
    with pytest.raises(EvalframeError, match="csv_empty='none'"):
        load(path, csv_empty="none")


def test_schema_reads_numeric_looking_column_as_text(tmp_path):
    path = write_rows(tmp_path / "d.csv", [["id", "prediction", "gold"], ["007", "1", "1.0"]])
    frame = load(path, schema={"id": "str", "prediction": pl.String, "gold": "str"})
    assert frame.row(0) == ("007", "1", "1.0")
    # without schema=: '007' stays text (a number would not give it back), '1' is a number
    assert load(path).schema["id"] == pl.String
    assert load(path).schema["prediction"] == pl.Int64


def test_schema_cast_error_names_column_and_first_bad_row(tmp_path):
    path = write_rows(tmp_path / "d.csv", [["n"], ["1"], ["2"], ["two"], ["x"]])
    with pytest.raises(
        EvalframeError,
        match=r"column 'n' of '.*d\.csv' as Int64: 2 value\(s\) do not convert; the first is "
        r"row 2 \(line 4\): 'two'",
    ):
        load(path, schema={"n": "int"})


def test_schema_bool_and_empty_numbers(tmp_path):
    path = write_rows(tmp_path / "d.csv", [["ok", "n"], ["true", ""], ["False", "3"], ["", ""]])
    frame = load(path, schema={"ok": "bool", "n": "float"})
    assert frame["ok"].to_list() == [True, False, None]
    assert frame["n"].to_list() == [None, 3.0, None]


def test_duplicate_header_is_an_error(tmp_path):
    path = write_rows(tmp_path / "d.csv", [["prediction", "gold", "prediction"], ["a", "b", "c"]])
    with pytest.raises(EvalframeError, match=r"d\.csv'.*names column 'prediction' twice"):
        load(path)


def test_type_change_after_10000_rows(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text("x\n" + "1\n" * 20_000 + "10.5\n")
    frame = load(path)
    assert frame.schema["x"] == pl.Float64
    assert frame["x"][-1] == 10.5


def test_ragged_line_is_named(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text("a,b\n1,2\n3,4,5\n")
    message = r"d\.csv'.*line 3 has 3 fields but the header names 2"
    with pytest.raises(EvalframeError, match=message):
        load(path)


def test_bom_header_and_empty_file(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text("prediction,gold\nx,y\n", encoding="utf-8-sig")
    assert load(path).columns == ["prediction", "gold"]
    (tmp_path / "e.csv").write_text("")
    with pytest.raises(EvalframeError, match=r"e\.csv'.*empty \(0 bytes\)"):
        load(tmp_path / "e.csv")
    (tmp_path / "h.csv").write_text("a,b\n")
    assert load(tmp_path / "h.csv").columns == ["a", "b"]  # a header alone is 0 rows


def test_schema_applies_to_every_format_and_reconciles_files(tmp_path):
    pl.DataFrame({"id": [1, 2]}).write_parquet(tmp_path / "a.parquet")
    pl.DataFrame({"id": ["x"]}).write_ndjson(tmp_path / "b.jsonl")
    write_rows(tmp_path / "c.csv", [["id"], ["007"]])
    paths = [tmp_path / "a.parquet", tmp_path / "b.jsonl", tmp_path / "c.csv"]
    with pytest.warns(UserWarning, match="column 'id' is Int64 in .*a.parquet.* but String"):
        assert "id" not in load(paths).columns
    assert load(paths, schema={"id": "str"})["id"].to_list() == ["1", "2", "x", "007"]


@pytest.mark.parametrize(
    ("values", "dtype", "bad"),
    [([1.0, 1.5], "int", "1.5"), ([1, 2], "bool", "2"), ([2**53 + 1], "float", str(2**53 + 1))],
)
def test_schema_never_truncates(tmp_path, values, dtype, bad):
    pl.DataFrame({"x": values}).write_parquet(tmp_path / "d.parquet")
    with pytest.raises(EvalframeError, match=rf"column 'x' .* the first is row \d+: {bad}"):
        load(tmp_path / "d.parquet", schema={"x": dtype})


def test_schema_errors(tmp_path):
    pl.DataFrame({"x": [["a"]]}).write_parquet(tmp_path / "d.parquet")
    with pytest.raises(EvalframeError, match="cannot use 'integer' as the dtype of column 'x'"):
        load(tmp_path / "d.parquet", schema={"x": "integer"})
    with pytest.raises(EvalframeError, match=r"column\(s\) \['y'\] that the input does not have"):
        load(tmp_path / "d.parquet", schema={"y": "str"})
    with pytest.raises(EvalframeError, match="cannot convert column"):
        load(tmp_path / "d.parquet", schema={"x": "int"})
    assert load(tmp_path / "d.parquet", schema={"x": "list[str]"})["x"].to_list() == [["a"]]


def test_schema_on_frames(tmp_path):
    frame = pl.DataFrame({"id": [7]})
    assert load(frame, schema={"id": "str"})["id"].to_list() == ["7"]
    assert scan(frame.lazy(), schema={"id": "float"}).collect()["id"].to_list() == [7.0]


def test_inference_rules(tmp_path):
    path = write_rows(
        tmp_path / "d.csv",
        [
            ["n", "big", "x", "ok", "empty", "text"],
            ["1", "9223372036854775808", "1", "True", "", "1"],
            ["-2", "1", "NaN", "FALSE", "", "one"],
            ["", "", "1e3", "", "", ""],
        ],
    )
    frame = load(path)
    assert frame.schema == pl.Schema(
        {
            "n": pl.Int64,
            "big": pl.String,  # an integer beyond Int64 is never rounded to a float
            "x": pl.Float64,
            "ok": pl.Boolean,
            "empty": pl.String,
            "text": pl.String,
        }
    )
    assert frame["big"].to_list() == ["9223372036854775808", "1", ""]
    assert frame["ok"].to_list() == [True, False, None]


def test_invalid_utf8_names_the_line(tmp_path):
    path = tmp_path / "d.csv"
    path.write_bytes(b"a,b\nx,y\nz,\xff\n")
    with pytest.raises(EvalframeError, match=r"d\.csv'.*line 3 is not valid UTF-8"):
        load(path)


def test_number_like_text_a_number_would_not_give_back_stays_text(tmp_path):
    # '01' and '007' are labels: read as integers they would become 1 and 7
    path = tmp_path / "labels.csv"
    path.write_text("prediction,gold,n\n01,1,3\n007,7,4\n+2,2,5\n")
    frame = ef.load(path)
    assert frame.schema["prediction"] == pl.String and frame.schema["n"] == pl.Int64
    assert frame["prediction"].to_list() == ["01", "007", "+2"]
