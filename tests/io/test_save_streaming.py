"""A LazyFrame is streamed to parquet, IPC, CSV and JSON lines: memory stays far below its size."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

# 20M rows of strings: collected, the frame is 813 MB (estimated_size) and collecting it peaks
# at 1.2 GB resident; streamed, saving it in any of the four formats peaks near 450 MB (polars
# 2.1), all four in one process near 500 MB, and up to 800 MB on a machine busy with other work.
STREAMER = textwrap.dedent(
    """
    import json, os, sys
    import polars as pl
    from evalframe.io import save

    i = pl.int_range(0, 20_000_000)
    plan = pl.LazyFrame().select(i.alias("i")).with_columns(
        s=pl.format("row-{}-{}", "i", pl.col("i") * 7),
        t=pl.col("i").cast(pl.String).str.zfill(12),
    )
    sizes = {}
    for name in sys.argv[2:]:
        path = os.path.join(sys.argv[1], name)
        save(plan, path)
        sizes[name] = os.path.getsize(path)
        os.remove(path)
    # VmHWM is this process's own peak; ru_maxrss would carry the parent's peak over fork
    # and exec (Linux keeps the larger), which is the whole test session's
    with open("/proc/self/status") as status:
        peak = next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmHWM"))
    print(json.dumps({"peak": peak, "sizes": sizes}))
    """
)

COLLECTED = 800_000_000  # bytes, less than the frame collected


@pytest.mark.subprocess
@pytest.mark.parametrize("name", ["o.parquet", "o.arrow", "o.csv", "o.jsonl"])
def test_a_lazyframe_is_streamed_not_collected(tmp_path, name):
    # one format per process: each peak is the save's own, not the allocator's history
    done = subprocess.run(
        [sys.executable, "-c", STREAMER, str(tmp_path), name],
        capture_output=True, text=True, timeout=600, check=True,
    )
    report = json.loads(done.stdout)
    assert report["peak"] < COLLECTED, report
    assert list(report["sizes"]) == [name]
    assert report["sizes"][name] > 50_000_000, report  # every row was written
    assert list(tmp_path.iterdir()) == []
