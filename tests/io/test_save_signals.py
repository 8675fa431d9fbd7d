"""A save killed or interrupted mid-way, and a save whose writes fail (in subprocesses)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import polars as pl
import pytest

# 30M rows of strings: several seconds of streaming, a far larger file than the old one.
SAVER = textwrap.dedent(
    """
    import signal, sys
    signal.signal(signal.SIGINT, signal.default_int_handler)  # even if started ignoring it
    import polars as pl
    from evalframe.io import save

    i = pl.int_range(0, 30_000_000)
    plan = pl.LazyFrame().select(i.alias("i")).with_columns(
        s=pl.format("row-{}-{}", "i", pl.col("i") * 7),
        t=pl.col("i").cast(pl.String).str.zfill(12),
    )
    try:
        save(plan, sys.argv[1])
    except KeyboardInterrupt:
        sys.exit(130)
    """
)

OLD = pl.DataFrame({"old": [1, 2, 3]})


def _temporaries(folder: Path, name: str) -> list[Path]:
    pattern = re.compile(rf"\.{re.escape(name)}\.[A-Za-z0-9_]+\.partial")
    return [p for p in folder.iterdir() if pattern.fullmatch(p.name)]


def _wait_until_writing(folder: Path, name: str, saver: subprocess.Popen) -> None:
    deadline = time.monotonic() + 120
    while not any(p.stat().st_size > 0 for p in _temporaries(folder, name)):
        assert saver.poll() is None, "the save ended before it was interrupted"
        assert time.monotonic() < deadline, "the save did not start writing"
        time.sleep(0.002)


@pytest.mark.subprocess
@pytest.mark.parametrize(
    ("sent", "exit_code"),
    [(signal.SIGINT, 130), (signal.SIGTERM, -signal.SIGTERM), (signal.SIGKILL, -signal.SIGKILL)],
)
def test_a_signal_during_a_streamed_save_keeps_the_old_file(tmp_path, sent, exit_code):
    target = tmp_path / "o.parquet"
    OLD.write_parquet(target)
    before = target.read_bytes()
    saver = subprocess.Popen([sys.executable, "-c", SAVER, str(target)])
    try:
        _wait_until_writing(tmp_path, target.name, saver)
        saver.send_signal(sent)
        assert saver.wait(timeout=60) == exit_code
    finally:
        if saver.poll() is None:
            saver.kill()
    assert target.read_bytes() == before
    stray = _temporaries(tmp_path, target.name)
    if sent == signal.SIGKILL:  # nothing runs after SIGKILL: its temporary file may stay
        assert len(stray) <= 1
    else:
        assert stray == []
    assert sorted(p.name for p in tmp_path.iterdir() if p not in stray) == ["o.parquet"]


FAILING = textwrap.dedent(
    """
    import json, os, resource, signal, sys
    import polars as pl
    from evalframe import EvalframeError
    from evalframe.io import save

    folder = sys.argv[1]
    frame = pl.DataFrame({"i": range(300_000)}).with_columns(s=pl.format("row-{}", "i"))
    results = {}
    for name in ["o.parquet", "o.arrow", "o.csv", "o.jsonl", "o.json"]:
        save(pl.DataFrame({"old": [1]}), os.path.join(folder, name))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG
    resource.setrlimit(resource.RLIMIT_FSIZE, (100_000, 100_000))
    for name in ["o.parquet", "o.arrow", "o.csv", "o.jsonl", "o.json"]:
        for lazy in (False, True):
            try:
                save(frame.lazy() if lazy else frame, os.path.join(folder, name))
                results[f"{name} {lazy}"] = "no error"
            except EvalframeError as error:
                results[f"{name} {lazy}"] = str(error)
    print(json.dumps(results))
    """
)


@pytest.mark.subprocess
def test_a_failing_write_is_a_clear_error_and_keeps_the_old_file(tmp_path):
    done = subprocess.run(
        [sys.executable, "-c", FAILING, str(tmp_path)],
        capture_output=True, text=True, timeout=300, check=True,
    )
    results = json.loads(done.stdout)
    assert len(results) == 10
    for key, message in results.items():
        name = key.split()[0]
        assert message == f"cannot write {str(tmp_path / name)!r}: File too large", key
    names = ["o.arrow", "o.csv", "o.json", "o.jsonl", "o.parquet"]
    assert sorted(p.name for p in tmp_path.iterdir()) == names
    for name in names:
        frame = pl.read_parquet(tmp_path / name) if name.endswith(".parquet") else None
        if frame is not None:
            assert frame.equals(pl.DataFrame({"old": [1]}))
    assert os.path.getsize(tmp_path / "o.csv") == len(b"old\n1\n")
