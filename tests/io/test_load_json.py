"""JSON lines and lists: types are what the file says, or an error naming file, field, lines."""

from __future__ import annotations

import gzip
import json

import polars as pl
import pytest

import evalframe as ef
from evalframe import EvalframeError
from evalframe.io import load


def write_lines(path, records, *, compress=False):
    text = "".join(json.dumps(record) + "\n" for record in records)
    if compress:
        path.write_bytes(gzip.compress(text.encode()))
    else:
        path.write_text(text)
    return path


GOLDS = [["Paris", "City of Light"], ["Rome"], "Paris", ["Oslo"]]


@pytest.mark.parametrize("name", ["d.jsonl", "d.jsonl.gz"])
def test_string_among_lists_is_an_error_naming_field_types_and_lines(tmp_path, name):
    predictions = ["Paris", "Rome", "Paris", "Oslo"]
    records = [{"prediction": p, "gold": g} for p, g in zip(predictions, GOLDS, strict=True)]
    path = write_lines(tmp_path / name, records, compress=name.endswith(".gz"))
    message = (
        r"d\.jsonl(\.gz)?'.*field 'gold' is a list of strings on line 1 but a string on line 3"
    )
    with pytest.raises(EvalframeError, match=message):
        ef.score(path, ["exact_match"])  # never 0.25 from JSON text


@pytest.mark.parametrize(
    ("values", "first", "second"),
    [
        ([1, "1"], "a number on line 1", "a string on line 2"),
        ([True, 1], "a boolean on line 1", "a number on line 2"),
        ([["a"], [{"a": 1}]], "a list of strings on line 1", "a list of objects on line 2"),
        ([{"a": 1}, {"a": "x"}], "a number on line 1", "a string on line 2"),
        ([[1], "x"], "a list of numbers on line 1", "a string on line 2"),
    ],
)
def test_type_conflicts(tmp_path, values, first, second):
    path = write_lines(tmp_path / "d.jsonl", [{"x": value} for value in values])
    with pytest.raises(EvalframeError, match=rf"d\.jsonl.*{first} but {second}"):
        load(path)


def test_nested_conflict_names_the_nested_field(tmp_path):
    path = write_lines(tmp_path / "d.jsonl", [{"meta": {"src": 1}}, {"meta": {"src": "web"}}])
    with pytest.raises(EvalframeError, match=r"field 'meta\.src' is a number on line 1"):
        load(path)


@pytest.mark.slow
def test_conflict_far_into_the_file_is_found_with_its_line(tmp_path):
    records = [{"x": 1}] * 150_000 + [{"x": "one"}]
    path = write_lines(tmp_path / "d.jsonl", records)
    with pytest.raises(EvalframeError, match="a number on line 1 but a string on line 150001"):
        load(path)


def test_int_and_float_mix_is_float(tmp_path):
    path = write_lines(tmp_path / "d.jsonl", [{"x": 1}, {"x": 2.5}])
    assert load(path)["x"].to_list() == [1.0, 2.5]
    assert load(path)["x"].dtype == pl.Float64


def test_key_and_type_first_seen_after_10000_rows_are_kept(tmp_path):
    records = [{"x": 1, "y": None}] * 20_000 + [{"x": 2, "y": ["a"], "late": "k"}]
    frame = load(write_lines(tmp_path / "d.jsonl", records))
    assert frame.schema["late"] == pl.String
    assert frame.schema["y"] == pl.List(pl.String)
    assert frame["late"].to_list()[-1] == "k"


def test_syntax_error_names_the_line(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text('{"a": 1}\n{"a": 2}\n{"a": 3\n{"a": 4}\n')
    with pytest.raises(EvalframeError, match=r"d\.jsonl'.*line 3 is not valid JSON"):
        load(path)


def test_non_object_line_and_duplicate_key(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text('{"a": 1}\n[1, 2]\n')
    with pytest.raises(EvalframeError, match="line 2 holds a list"):
        load(path)
    path.write_text('{"a": 1}\n{"a": 1, "a": 2}\n')
    with pytest.raises(EvalframeError, match="line 2: key 'a' appears twice"):
        load(path)


def test_bom_and_blank_lines(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_bytes(b'\xef\xbb\xbf{"a": 1}\n{"a": 2}\n\n\n')
    assert load(path)["a"].to_list() == [1, 2]
    gz = tmp_path / "d.jsonl.gz"
    gz.write_bytes(gzip.compress(b'\xef\xbb\xbf{"a": 1}\n\n'))
    assert load(gz)["a"].to_list() == [1]


def test_bom_then_conflict_still_names_line_1(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_bytes(b'\xef\xbb\xbf{"a": 1}\n{"a": "x"}\n')
    with pytest.raises(EvalframeError, match="a number on line 1 but a string on line 2"):
        load(path)


def test_timestamp_looking_strings_stay_strings(tmp_path):
    record = {"t": "2024-01-01 10:00:00", "u": [{"v": "2024-01-02"}]}
    path = write_lines(tmp_path / "d.jsonl", [record])
    frame = load(path)
    assert frame["t"].to_list() == ["2024-01-01 10:00:00"]
    assert frame.schema["u"] == pl.List(pl.Struct({"v": pl.String}))


@pytest.mark.slow
def test_null_then_list_of_objects_across_blocks(tmp_path):
    records = [{"x": None}] * 100_000 + [{"x": [{"a": 1}]}]
    frame = load(write_lines(tmp_path / "d.jsonl", records))
    assert frame["x"].to_list()[-1] == [{"a": 1}]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", r"empty \(0 bytes\)"),
        (b"\n\n", "no JSON records"),
        (b"{}\n{}\n", "2 empty object"),
    ],
)
def test_empty_jsonl(tmp_path, content, message):
    path = tmp_path / "d.jsonl"
    path.write_bytes(content)
    with pytest.raises(EvalframeError, match=rf"d\.jsonl'.*{message}"):
        load(path)


def test_corrupt_and_truncated_gzip(tmp_path):
    data = gzip.compress(b'{"a": 1}\n' * 5000)
    truncated = tmp_path / "t.jsonl.gz"
    truncated.write_bytes(data[: len(data) // 2])
    with pytest.raises(EvalframeError, match=r"t\.jsonl\.gz'.*truncated or corrupt"):
        load(truncated)
    corrupt = tmp_path / "c.json.gz"
    corrupt.write_bytes(data[:10] + b"\x00" * 20 + data[30:])
    with pytest.raises(EvalframeError, match=r"c\.json\.gz'"):
        load(corrupt)
    plain = tmp_path / "p.jsonl.gz"
    plain.write_text('{"a": 1}\n')
    with pytest.raises(EvalframeError, match="not gzip-compressed data"):
        load(plain)


def test_extension_does_not_match_content(tmp_path):
    gz = tmp_path / "d.jsonl"
    gz.write_bytes(gzip.compress(b'{"a": 1}\n'))
    with pytest.raises(EvalframeError, match=r"it is gzip-compressed data.*\.gz"):
        load(gz)
    parquet = tmp_path / "p.jsonl"
    pl.DataFrame({"a": [1]}).write_parquet(parquet)
    with pytest.raises(EvalframeError, match=r"it is a parquet file.*\.parquet"):
        load(parquet)
    utf16 = tmp_path / "u.jsonl"
    utf16.write_text('{"a": 1}\n', encoding="utf-16")
    with pytest.raises(EvalframeError, match="UTF-16"):
        load(utf16)


def test_invalid_utf8_names_the_line(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_bytes(b'{"a": "x"}\n{"a": "\xff"}\n')
    with pytest.raises(EvalframeError, match="line 2 is not valid UTF-8"):
        load(path)


# ------------------------------------------------------------------ JSON lists


def test_json_list_conflict_names_records_and_lines(tmp_path):
    path = tmp_path / "d.json"
    path.write_text(json.dumps([{"gold": ["a"]}, {"gold": ["b"]}, {"gold": "c"}], indent=1))
    with pytest.raises(
        EvalframeError,
        match=r"field 'gold' is a list of strings on record 1 \(line 2\) but a string on "
        r"record 3 \(line 12\)",
    ):
        load(path)


def test_json_list_late_keys_bom_and_gzip(tmp_path):
    records = [{"a": 1}] * 20_000 + [{"a": 2, "late": "k"}]
    text = "\ufeff" + json.dumps(records)
    (tmp_path / "d.json").write_text(text, encoding="utf-8")
    assert load(tmp_path / "d.json")["late"].to_list()[-1] == "k"
    (tmp_path / "d.json.gz").write_bytes(gzip.compress(text.encode()))
    assert load(tmp_path / "d.json.gz").height == 20_001


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"a": 1, "b": 2}', r"one JSON object \(keys 'a', 'b'\) that fits no harness layout"),
        ('{"a": 1}\n{"a": 2}\n', "several JSON objects one after another.*name it .jsonl"),
        ("[]", "holds no JSON records"),
        ('[{"a": 1}, 3]', r"record 2 \(line 1\) is a number"),
        ('[{"a": 1},\n {"a": 2,}]', "line 2 is not valid JSON"),
        ('[{"a": 1}, null]', r"record 2 \(line 1\) is null"),
    ],
)
def test_json_list_errors(tmp_path, content, message):
    path = tmp_path / "d.json"
    path.write_text(content)
    with pytest.raises(EvalframeError, match=rf"d\.json'.*{message}"):
        load(path)


@pytest.mark.parametrize("name", ["d.jsonl", "d.json"])
def test_lists_that_open_with_nulls(tmp_path, name):
    # pyarrow 26 alone drops the leading nulls of [null, "a"] (an invalid table).
    records = [{"x": [None, "a"], "y": [None, None]}, {"x": [None, None], "y": [None]}]
    path = tmp_path / name
    if name.endswith(".json"):
        path.write_text(json.dumps(records))
    else:
        write_lines(path, records)
    frame = load(path)
    assert frame["x"].to_list() == [[None, "a"], [None, None]]
    assert frame.schema["x"] == pl.List(pl.String)
    assert frame["y"].to_list() == [[None, None], [None]]
