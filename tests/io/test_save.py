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
