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
    }


def write_results(name: str, summary: dict[str, Any]) -> Path:
    """Write ``summary`` plus the environment to ``benchmarks/results/<name>.json``."""
    path = RESULTS_DIR / f"{name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({**summary, "environment": environment()}, indent=2) + "\n")
    print(f"wrote {path}")
    return path
