"""A report of 10 models x 50 tasks: the file's size and the time to write it.

Usage: ``python benchmarks/bench_report.py [--models M] [--tasks T] [--items N]``

One seeded scored frame: ``models`` x ``tasks`` x ``items`` rows with an exact-match
score (0/1) and a token F1 (in [0, 1]), and ``sample_id`` shared across models so the
paired comparison with a baseline runs. Timed in one fresh process (as a user runs it):
``ef.report(scored, by="task", baseline=...)`` then ``.save("report.html")``, the first
run (the chart library built or read from the disk cache) and the best of three. The
reference is writing the same aggregate table with Polars alone (``write_csv``), the
floor of any report. Writes ``benchmarks/results/report.json``. Target: at most 2 MB and
under 5 s.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
import polars as pl
from _harness import load_average, peak_rss_mb, write_results

import evalframe as ef

TARGET_SECONDS = 5.0
TARGET_BYTES = 2 * 2**20


def workload(models: int, tasks: int, items: int, seed: int) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    rows = models * tasks * items
    model = np.repeat([f"model-{i:02d}" for i in range(models)], tasks * items)
    task = np.tile(np.repeat([f"task_{j:02d}" for j in range(tasks)], items), models)
    sample = np.tile([f"q{k:04d}" for k in range(items)], models * tasks)
    skill = np.repeat(rng.uniform(0.3, 0.8, models), tasks * items)
    correct = (rng.random(rows) < skill).astype(np.float64)
    return pl.DataFrame({
        "model": model, "task": task, "sample_id": sample,
        "exact_match": correct, "squad_f1": np.clip(correct * 0.8 + rng.random(rows) * 0.3, 0, 1),
    })


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--models", type=int, default=10)
    parser.add_argument("--tasks", type=int, default=50)
    parser.add_argument("--items", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    scored = workload(args.models, args.tasks, args.items, args.seed)
    folder = Path(tempfile.mkdtemp())
    times = []
    for run in range(3):
        started = time.perf_counter()
        result = ef.report(scored, by="task", baseline="model-00")
        path = result.save(folder / f"report-{run}.html")
        times.append(time.perf_counter() - started)
    size = path.stat().st_size
    started = time.perf_counter()
    ef.aggregate(scored, by=["model", "task"]).drop("signature").write_csv(folder / "t.csv")
    floor = time.perf_counter() - started
    summary = {
        "workload": f"{args.models} models x {args.tasks} tasks x {args.items} items, "
                    "exact_match + squad_f1, compared with model-00",
        "rows": scored.height,
        "first_run_s": round(times[0], 3),
        "best_of_3_s": round(min(times), 3),
        "aggregate_to_csv_s": round(floor, 3),
        "file_bytes": size,
        "file_mib": round(size / 2**20, 3),
        "peak_rss_mb": round(peak_rss_mb(), 1),
        "load_average": load_average(),
        "target": f"at most {TARGET_BYTES // 2**20} MB and {TARGET_SECONDS:.0f} s",
        "met": size <= TARGET_BYTES and times[0] <= TARGET_SECONDS,
    }
    print(summary)
    write_results("report", summary)


if __name__ == "__main__":
    main()
