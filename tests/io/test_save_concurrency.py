"""Several processes saving to one path at once: each save is whole, the last one wins."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import polars as pl
import pytest

WRITERS, ROUNDS, ROWS = 6, 4, 100_000

WRITER = textwrap.dedent(
    """
    import os, sys, time
    import polars as pl
    from evalframe.io import save

    number, target, ready, start, rounds, rows = sys.argv[1:]
    frame = pl.DataFrame({"writer": [int(number)] * int(rows), "i": range(int(rows))})
    frame = frame.with_columns(s=pl.format("{}-{}", "writer", "i"))
    open(ready, "w").close()
    while not os.path.exists(start):
        time.sleep(0.001)
    for _ in range(int(rounds)):
        save(frame.lazy() if int(number) % 2 else frame, target)
    """
)


def _frame(number: int) -> pl.DataFrame:
    frame = pl.DataFrame({"writer": [number] * ROWS, "i": range(ROWS)})
    return frame.with_columns(s=pl.format("{}-{}", "writer", "i"))


def _read(path: Path) -> pl.DataFrame:
    # One open of the path: polars' readers may open it twice (footer, then pages) and so
    # mix two versions when a save replaces the file in between; the bytes of one open
    # are one version.
    data = io.BytesIO(path.read_bytes())
    return pl.read_parquet(data) if path.suffix == ".parquet" else pl.read_ndjson(data)


def _assert_one_whole_frame(frame: pl.DataFrame) -> None:
    writers = frame["writer"].unique().to_list()
    assert len(writers) == 1, f"rows of several writers: {writers}"
    assert frame.equals(_frame(writers[0]))


@pytest.mark.subprocess
@pytest.mark.parametrize("name", ["o.parquet", "o.jsonl"])
def test_concurrent_saves_leave_one_whole_file_and_no_temporary_file(tmp_path, name):
    out, signals = tmp_path / "out", tmp_path / "signals"
    out.mkdir()
    signals.mkdir()
    target, start = out / name, signals / "start"

    def _arguments(number: int) -> list[str]:
        ready = signals / f"ready{number}"
        return [str(number), str(target), str(ready), str(start), str(ROUNDS), str(ROWS)]

    env = {**os.environ, "POLARS_MAX_THREADS": "1"}
    writers = [
        subprocess.Popen([sys.executable, "-c", WRITER, *_arguments(number)], env=env)
        for number in range(WRITERS)
    ]
    try:
        deadline = time.monotonic() + 120
        while len(list(signals.glob("ready*"))) < WRITERS:
            assert time.monotonic() < deadline, "the writers did not start"
            assert all(w.poll() is None for w in writers), "a writer failed to start"
            time.sleep(0.01)
        start.touch()
        reads = 0
        while any(w.poll() is None for w in writers):  # a reader sees whole files only
            if target.exists():
                _assert_one_whole_frame(_read(target))
                reads += 1
            time.sleep(0.005)
        codes = [w.wait(timeout=120) for w in writers]
    finally:
        for w in writers:
            if w.poll() is None:
                w.kill()
    assert codes == [0] * WRITERS
    _assert_one_whole_frame(_read(target))
    assert sorted(p.name for p in out.iterdir()) == [name]
    assert reads > 0
