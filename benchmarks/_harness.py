"""What every benchmark script shares: timing, memory, environment, the results file.

Imported by the ``bench_*.py`` scripts (run as ``python benchmarks/bench_x.py``, which puts
this folder on ``sys.path``).
"""

from __future__ import annotations

import json
import platform
import resource
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

RESULTS_DIR = Path(__file__).resolve().parent / "results"


def peak_rss_mb() -> float:
    """Peak resident set size of this process so far (MiB; ru_maxrss is KiB on Linux)."""
    scale = 1024 * 1024 if sys.platform == "darwin" else 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / scale


def timed(function: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    """Best wall time over ``repeat`` runs, and the result (no tracing while timed)."""
    best, result = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        result = function()
        best = min(best, time.perf_counter() - start)
    return best, result


def heap_peak_mb(function: Callable[[], Any]) -> float:
    """The Python-heap peak (MiB) of one more run, traced apart from the timed runs.

    tracemalloc slows Python code and numpy's many small allocations several-fold, so it
    is never on while a run is timed.
    """
    tracemalloc.start()
    function()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak / 2**20


def environment() -> dict[str, Any]:
    """The versions and machine facts a result depends on."""
    return {
        "python": platform.python_version(),
        "polars": pl.__version__,
        "numpy": np.__version__,
        "machine": platform.machine(),
        "threads": pl.thread_pool_size(),
        "load_average": load_average(),
    }


def write_results(name: str, summary: dict[str, Any]) -> Path:
    """Write ``summary`` plus the environment to ``benchmarks/results/<name>.json``."""
    path = RESULTS_DIR / f"{name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({**summary, "environment": environment()}, indent=2) + "\n")
    print(f"wrote {path}")
    return path


#: Time per row at the larger size may be at most this many times that at the smaller.
GROWTH_LIMIT = 1.3


def side_by_side(reference_seconds: float, evalframe_seconds: float, rows: int) -> dict[str, Any]:
    """One comparison entry: both times, the speed-up and evalframe's time per row.

    >>> side_by_side(2.0, 0.5, 1000)["speedup"]
    4.0
    """
    return {
        "reference_s": round(reference_seconds, 4),
        "evalframe_s": round(evalframe_seconds, 4),
        "speedup": round(reference_seconds / evalframe_seconds, 2),
        "evalframe_us_per_row": round(1e6 * evalframe_seconds / rows, 3),
    }


def growth_by_name(small: dict[str, Any], large: dict[str, Any], names) -> dict[str, Any]:
    """The no-superlinear verdict of each named entry of two runs (``rows`` + entries made
    by :func:`side_by_side`), printed and returned for the results file."""
    checks = {
        name: growth_check(small["rows"], small[name]["evalframe_s"], large["rows"],
                           large[name]["evalframe_s"])
        for name in names
    }
    print("time per row at 10x rows:",
          {name: check["time_per_row_growth"] for name, check in checks.items()})
    return checks


def growth_check(
    small_rows: int, small_seconds: float, large_rows: int, large_seconds: float,
    limit: float = GROWTH_LIMIT,
) -> dict[str, Any]:
    """The no-superlinear verdict from timings at two sizes.

    ``time_per_row_growth`` is (time per row at ``large_rows``) / (time per row at
    ``small_rows``); a linear workload gives about 1.0 (less when fixed costs weigh on
    the small size), a superlinear one more than ``limit``.

    >>> growth_check(1000, 1.0, 10000, 10.0)["time_per_row_growth"]
    1.0
    >>> growth_check(1000, 1.0, 10000, 20.0)["passes"]
    False
    """
    growth = (large_seconds / large_rows) / (small_seconds / small_rows)
    return {
        "small_rows": small_rows,
        "small_seconds": small_seconds,
        "large_rows": large_rows,
        "large_seconds": large_seconds,
        "time_per_row_growth": round(growth, 4),
        "limit": limit,
        "passes": growth <= limit,
    }


def linearity(
    make: Callable[[int], Callable[[], Any]], small: int, large: int, repeat: int = 3,
    limit: float = GROWTH_LIMIT, label: str = "",
) -> dict[str, Any]:
    """Time a workload at ``small`` and ``large`` rows and check time per row stays flat.

    ``make(rows)`` builds the data of that size (not timed) and returns the function to
    time; each size keeps its best of ``repeat`` runs. The verdict is
    :func:`growth_check`'s, printed as one line.
    """
    seconds = {}
    for rows in (small, large):
        run = make(rows)
        seconds[rows], _ = timed(run, repeat)
        del run
    check = growth_check(small, seconds[small], large, seconds[large], limit)
    print(
        f"{label + ': ' if label else ''}no-superlinear {small:,} rows {seconds[small]:.3f} s, "
        f"{large:,} rows {seconds[large]:.3f} s: time per row x{check['time_per_row_growth']:.2f}"
        f" ({'ok' if check['passes'] else 'SUPERLINEAR'}, limit {limit})"
    )
    return check


def load_average() -> list[float]:
    """The 1, 5 and 15 minute load averages (the machine's cores are shared)."""
    import os

    return [round(value, 2) for value in os.getloadavg()]
