"""Saving results: formats by extension, streaming, metadata, clear errors."""

from __future__ import annotations

import polars as pl
import pyarrow.parquet as pq
import pytest

from evalframe import EvalframeError
from evalframe.io import load, save

FRAME = pl.DataFrame({"model": ["a", "b"], "squad_f1": [0.5, None]})


@pytest.mark.parametrize("name", ["o.parquet", "o.csv", "o.jsonl", "o.arrow", "o.json"])
@pytest.mark.parametrize("lazy", [False, True])
def test_round_trip(tmp_path, name, lazy):
    save(FRAME.lazy() if lazy else FRAME, tmp_path / name)
    assert load(tmp_path / name).equals(FRAME)


def test_parquet_metadata(tmp_path):
    save(FRAME, tmp_path / "o.parquet", metadata={"evalframe.version": "x"})
    assert pq.read_metadata(tmp_path / "o.parquet").metadata[b"evalframe.version"] == b"x"


def test_csv_refuses_nested_columns(tmp_path):
    with pytest.raises(EvalframeError, match=r"columns \['gold'\] are nested"):
        save(pl.DataFrame({"gold": [["a"]]}), tmp_path / "o.csv")


def test_unknown_extension(tmp_path):
    with pytest.raises(EvalframeError, match="cannot write"):
        save(FRAME, tmp_path / "o.xlsx")


@pytest.mark.parametrize("name", ["o.parquet", "o.csv", "o.jsonl", "o.arrow"])
def test_a_plan_failing_half_way_leaves_no_partial_file(tmp_path, name):
    # 200,000 rows in row groups; a bad row deep inside fails the streamed plan after
    # earlier batches were written. Nothing may be left that looks like a result, and a
    # file already at the target stays as it was.
    import evalframe as ef

    c = [1] * 200_000
    c[150_000] = 30
    source = tmp_path / "counts.parquet"
    pl.DataFrame({"n": [10] * 200_000, "c": c}).write_parquet(source, row_group_size=20_000)
    with pytest.raises(EvalframeError, match=r"First offending row: 150000 \(n=10, c=30\)$"):
        save(ef.score(ef.scan(source), ["pass@1"]), tmp_path / name)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["counts.parquet"]

    save(FRAME, tmp_path / name)
    before = (tmp_path / name).read_bytes()
    with pytest.raises(EvalframeError):
        save(ef.score(ef.scan(source), ["pass@1"]), tmp_path / name)
    assert (tmp_path / name).read_bytes() == before


def test_unwritable_target_is_a_clear_error(tmp_path):
    with pytest.raises(EvalframeError, match="cannot write"):
        save(FRAME, tmp_path / "missing-dir" / "o.parquet")
