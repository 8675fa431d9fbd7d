"""Expression helpers: row guards and kernels shared between metrics."""

from __future__ import annotations

import polars as pl
import pytest

from evalframe import EvalframeError
from evalframe._expr import RowCheck, guard, shared_kernel


def test_guard_passes_values_through_when_rows_are_valid():
    frame = pl.DataFrame({"x": [1.0, 2.0, None]})
    check = RowCheck(invalid=pl.col("x") < 0, what="x < 0", expected="x >= 0")
    out = frame.select(guard("m", pl.col("x"), [check]))
    assert out.to_series().to_list() == [1.0, 2.0, None]


def test_guard_names_metric_count_row_and_values():
    frame = pl.DataFrame({"x": [1.0, -2.0, -3.0], "y": ["a", "b", "c"]})
    check = RowCheck(
        invalid=pl.col("x") < 0, what="x < 0", expected="x >= 0", show=(("y", pl.col("y")),)
    )
    with pytest.raises(EvalframeError) as error:
        frame.select(guard("m", pl.col("x"), [check]))
    message = str(error.value)
    assert "metric 'm'" in message and "2 row(s) have x < 0 (counted in rows 0-2)" in message
    assert "expected x >= 0" in message and "First offending row: 1 (y='b')" in message


def test_guard_numbers_rows_in_the_whole_input_outside_the_engine():
    # A lazy plan may hand the kernel several batches; the row number stays global.
    rows = 300_000
    values = pl.Series("x", [1.0] * rows)
    values[250_000] = -1.0
    check = RowCheck(invalid=pl.col("x") < 0, what="x < 0", expected="x >= 0")
    for engine in ("in-memory", "streaming"):
        plan = values.to_frame().lazy().select(guard("m", pl.col("x"), [check]))
        with pytest.raises(EvalframeError, match=r"First offending row: 250000(?!\d)"):
            plan.collect(engine=engine)


def test_guard_reads_a_rule_off_the_values():
    frame = pl.DataFrame({"x": [0, -1, 5]})
    check = RowCheck(invalid=lambda values: values == -1, what="code -1", expected="no -1")
    with pytest.raises(EvalframeError, match="1 row\\(s\\) have code -1.*First offending row: 1"):
        frame.select(guard("m", pl.col("x"), [check], dtype=pl.Int64))
    ok = pl.DataFrame({"x": [0, None, 5]}).select(guard("m", pl.col("x"), [check], pl.Int64))
    assert ok.to_series().to_list() == [0, None, 5]


def test_shared_kernel_runs_once_for_several_uses():
    seen = []

    def doubled(series: pl.Series) -> pl.Series:
        seen.append(len(series))
        return series * 2

    shared = shared_kernel(pl.col("x"), doubled, pl.Int64)
    assert shared_kernel(pl.col("x"), doubled, pl.Int64) is shared
    frame = pl.DataFrame({"x": list(range(1000))})
    out = frame.lazy().select((shared + 1).alias("a"), (shared % 7).alias("b")).collect()
    assert out["a"].to_list() == [2 * x + 1 for x in range(1000)]
    assert out["b"].to_list() == [2 * x % 7 for x in range(1000)]
    assert sum(seen) == 1000  # every row went through the kernel once, not twice


def test_shared_kernel_shares_column_expressions_and_keeps_no_literal():
    from evalframe import _expr

    def kernel(series: pl.Series) -> pl.Series:
        return series.str.to_uppercase()

    first = _expr.shared_kernel(pl.col("a"), kernel, pl.String)
    assert _expr.shared_kernel(pl.col("a"), kernel, pl.String) is first
    before = len(_expr._SHARED_KERNELS)
    for batch in range(50):  # a literal per batch, as a kernel evaluating rows eagerly builds
        literal = pl.lit(pl.Series([f"row {batch}"] * 1000))
        out = pl.select(_expr.shared_kernel(literal, kernel, pl.String)).to_series()
        assert out[0] == f"ROW {batch}"
    assert len(_expr._SHARED_KERNELS) == before


def test_shared_kernel_cache_is_bounded_by_bytes():
    from evalframe import _expr

    def kernel(series: pl.Series) -> pl.Series:
        return series

    for i in range(20_000):  # many distinct inputs: the cache stays within its bytes
        _expr.shared_kernel(pl.col(f"column_{i}"), kernel, pl.Int64)
    cache = _expr._SHARED_KERNELS
    assert 0 < cache.used <= _expr.SHARED_KERNEL_BYTES
    assert len(cache) < 20_000
    newest = _expr.shared_kernel(pl.col("column_19999"), kernel, pl.Int64)
    assert _expr.shared_kernel(pl.col("column_19999"), kernel, pl.Int64) is newest


def test_shared_kernel_keeps_no_input_embedding_data():
    from evalframe import _expr

    def kernel(series: pl.Series) -> pl.Series:
        return series

    before = _expr._SHARED_KERNELS.used
    data = pl.Series([f"value {i}" for i in range(20_000)])
    embedding = pl.col("a").replace(data, data)  # reads a column and holds the data
    _expr.shared_kernel(embedding, kernel, pl.String)
    assert _expr._SHARED_KERNELS.used == before
