"""score(): resolution, validation, column order, laziness, errors."""

from __future__ import annotations

import re

import polars as pl
import pyarrow as pa
import pytest

import evalframe as ef
from evalframe import EvalframeError
from evalframe.engine import collect


@pytest.fixture
def counts() -> pl.DataFrame:
    return pl.DataFrame(
        {"model": ["a", "b", "a"], "n": [10, 10, 5], "c": [0, 10, 2], "extra": [1.5, None, 3.0]}
    )


def test_adds_one_float64_column_per_metric_named_as_requested(counts):
    scored = ef.score(counts, ["pass@1", "pass@5"])
    assert scored.columns == ["model", "n", "c", "extra", "pass@1", "pass@5"]
    assert scored.schema["pass@1"] == pl.Float64
    assert scored.select("model", "n", "c", "extra").equals(counts)
    # pass@1 = c / n (hand computation): 0/10, 10/10, 2/5
    assert scored["pass@1"].to_list() == pytest.approx([0.0, 1.0, 0.4], abs=1e-15)


def test_lazy_in_lazy_out_and_same_values(counts):
    lazy = ef.score(counts.lazy(), ["pass@1"])
    assert isinstance(lazy, pl.LazyFrame)
    assert lazy.collect().equals(ef.score(counts, ["pass@1"]))


def test_arrow_table_source(counts):
    table = counts.to_arrow()
    assert isinstance(table, pa.Table)
    scored = ef.score(table, ["pass@1"])
    assert isinstance(scored, pl.DataFrame)
    assert scored["pass@1"].to_list() == pytest.approx([0.0, 1.0, 0.4])


def test_column_mapping(counts):
    renamed = counts.rename({"n": "samples", "c": "correct"})
    scored = ef.score(renamed, ["pass@1"], columns={"n": "samples", "c": "correct"})
    assert scored["pass@1"].to_list() == pytest.approx([0.0, 1.0, 0.4])


def test_missing_role_names_metric_role_and_column(counts):
    with pytest.raises(EvalframeError) as error:
        ef.score(counts.drop("c"), ["pass@1"])
    message = str(error.value)
    assert "'pass@1'" in message and "c='c'" in message and "--col" in message


def test_wrong_dtype_names_role_column_and_dtype(counts):
    bad = counts.with_columns(pl.col("c").cast(pl.String))
    with pytest.raises(EvalframeError, match=r"role 'c' is column 'c' of dtype String"):
        ef.score(bad, ["pass@1"])


def test_unknown_metric_and_unknown_role(counts):
    with pytest.raises(EvalframeError, match="unknown metric 'nope'"):
        ef.score(counts, ["nope"])
    with pytest.raises(EvalframeError, match="unknown role"):
        ef.score(counts, ["pass@1"], columns={"answer": "c"})


def test_duplicate_metric_and_existing_column(counts):
    with pytest.raises(EvalframeError, match="more than once"):
        ef.score(counts, ["pass@1", "pass@1"])
    scored = ef.score(counts, ["pass@1"])
    with pytest.raises(EvalframeError, match="overwrite"):
        ef.score(scored, ["pass@1"])
    rescored = ef.score(scored.with_columns(pl.lit(9.0).alias("pass@1")), ["pass@1"],
                        overwrite=True)
    assert rescored.equals(scored)


def test_invalid_values_raise_with_count(counts):
    bad = counts.with_columns(c=pl.Series([11, 12, 2]))
    with pytest.raises(EvalframeError, match=r"2 row\(s\)"):
        ef.score(bad, ["pass@1"])


@pytest.fixture
def counts_with_bad_rows(tmp_path):
    # 200,000 rows in 10 row groups, bad rows at 10 and 150,000-150,001: Polars hands
    # metrics the rows in batches, checked in parallel.
    rows = 200_000
    c = pl.Series([1] * rows)
    c[10] = 50
    c[150_000] = 30
    c[150_001] = 40
    path = tmp_path / "counts.parquet"
    pl.DataFrame({"n": [10] * rows, "c": c}).write_parquet(path, row_group_size=20_000)
    return path


def test_collected_errors_count_every_bad_row_and_name_the_first(counts_with_bad_rows):
    exact = (
        r"3 row\(s\) have c > n .*\(counted in rows 0-199999\)"
        r".*First offending row: 10 \(n=10, c=50\)$"
    )
    with pytest.raises(EvalframeError, match=exact):
        ef.score(pl.read_parquet(counts_with_bad_rows), ["pass@1"])
    with pytest.raises(EvalframeError, match=exact):
        collect(ef.score(pl.scan_parquet(counts_with_bad_rows), ["pass@1"]))


def test_streamed_errors_name_rows_by_their_number_in_the_input(counts_with_bad_rows):
    scored = ef.score(pl.scan_parquet(counts_with_bad_rows), ["pass@1"])
    with pytest.raises(EvalframeError) as error:
        collect(scored, streaming=True)
    message = str(error.value)
    low, high = map(int, re.search(r"counted in rows (\d+)-(\d+)", message).groups())
    row = int(re.search(r"First offending row: (\d+)", message).group(1))
    assert row in (10, 150_000) and low <= row <= high
    assert f"(n=10, c={50 if row == 10 else 30})" in message


def test_empty_metric_list(counts):
    with pytest.raises(EvalframeError, match="no metrics"):
        ef.score(counts, [])


def test_empty_frame_keeps_schema(counts):
    scored = ef.score(counts.head(0), ["pass@1"])
    assert scored.height == 0 and scored.schema["pass@1"] == pl.Float64


def test_files_and_globs(tmp_path, counts):
    counts.head(2).write_parquet(tmp_path / "a.parquet")
    counts.tail(1).write_parquet(tmp_path / "b.parquet")
    scored = ef.score(str(tmp_path / "*.parquet"), ["pass@1"])
    assert scored["pass@1"].to_list() == pytest.approx([0.0, 1.0, 0.4])
