"""score(): resolution, validation, column order, laziness, errors."""

from __future__ import annotations

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
    assert scored.columns == [
        "model", "n", "c", "extra", "pass@1", "pass@5", "pass@1:missing", "pass@5:missing",
        "_evalframe",
    ]
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


EXACT = (
    r"metric 'pass@1': 3 row\(s\) have c > n .*; expected .*"
    r"First offending row: 10 \(n=10, c=50\)$"
)


def test_collected_errors_count_every_bad_row_and_name_the_first(counts_with_bad_rows):
    with pytest.raises(EvalframeError, match=EXACT):
        ef.score(pl.read_parquet(counts_with_bad_rows), ["pass@1"])
    with pytest.raises(EvalframeError, match=EXACT):
        collect(ef.score(pl.scan_parquet(counts_with_bad_rows), ["pass@1"]))


def test_streamed_errors_are_located_in_the_whole_input(counts_with_bad_rows, tmp_path):
    # a streamed save stops at whichever batch fails first; the error is then located
    # again over the whole input, in one streaming pass
    scored = ef.score(pl.scan_parquet(counts_with_bad_rows), ["pass@1"])
    with pytest.raises(EvalframeError, match=EXACT):
        ef.save(scored, tmp_path / "out.parquet")
    assert not (tmp_path / "out.parquet").exists()


def test_first_offending_row_is_the_first_across_every_check_and_metric():
    # row 3 breaks "c > n" for pass@1 and pass@5; row 1 breaks "k > n" for pass@5 only;
    # row 2 has a negative c: the first offending row of the input is 1 (pass@5, k > n)
    frame = pl.DataFrame({"n": [10, 4, 10, 10], "c": [1, 1, -2, 50]})
    with pytest.raises(EvalframeError) as error:
        ef.score(frame, ["pass@1", "pass@5"])
    message = str(error.value)
    assert message.startswith("metric 'pass@5': 1 row(s) have k=5 > n"), message
    assert "First offending row: 1 (n=4, c=1)" in message
    assert "a negative c in 1 row(s) (first: row 2)" in message
    assert "c > n (more passed than drawn) in 1 row(s) (first: row 3)" in message


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


def test_wrong_argument_types_are_clear_errors(counts):
    with pytest.raises(EvalframeError, match="overwrite='yes' must be True or False"):
        ef.score(counts, ["pass@1"], overwrite="yes")
    with pytest.raises(EvalframeError, match="columns must map roles"):
        ef.score(counts, ["pass@1"], columns=["n"])
    with pytest.raises(EvalframeError, match="metrics must be a list"):
        ef.score(counts, None)


@pytest.mark.subprocess
def test_import_evalframe_defers_every_heavy_module():
    import subprocess
    import sys

    code = (
        "import sys, evalframe as ef\n"
        "heavy = [m for m in ('polars', 'numpy', 'pyarrow') if m in sys.modules]\n"
        "assert not heavy, heavy\n"
        "assert callable(ef.score) and ef.metrics.squad_em and ef.EvalframeError\n"
        "assert 'score' in dir(ef) and 'polars' in sys.modules\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


@pytest.mark.subprocess
def test_no_public_name_is_shadowed_by_a_submodule():
    """Importing ``evalframe.<x>`` binds ``evalframe.x`` to the module: a public function
    of the same name, loaded on first use, would then be hidden by it."""
    import pkgutil
    import subprocess
    import sys

    submodules = {module.name for module in pkgutil.iter_modules(ef.__path__)}
    functions = {name for name in ef.__all__ if name not in ef._SUBMODULES}
    assert not functions & submodules
    code = (
        "import importlib, pkgutil, evalframe as ef\n"
        "for m in pkgutil.iter_modules(ef.__path__):\n"
        "    if m.name != '__main__': importlib.import_module('evalframe.' + m.name)\n"
        "import types\n"
        "bad = [n for n in ef.__all__ if n not in ef._SUBMODULES\n"
        "       and isinstance(getattr(ef, n), types.ModuleType)]\n"
        "assert not bad, bad\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
