"""evalframe on a local Ray cluster against one process: the cost of going distributed.

Usage: ``python benchmarks/bench_ray.py [--rows 1000000,10000000] [--files 16]
[--cpus 2] [--repeat 3] [--seed S]``

One seeded QA dump per size (``_qa_data.chunk``: distinct Unicode text on every row,
1-3 gold alternatives, pass@k counts), with ``model`` (4) and ``task`` (25) columns,
written as ``--files`` parquet files. The same pipeline both ways, files in, table out:

- one process: ``ef.aggregate(ef.score(files, METRICS), by=["model", "task"])``;
- Ray: a local cluster of ``--cpus`` CPUs started once (its start-up is reported, not
  timed), then ``efr.aggregate(efr.score(files, METRICS), by=["model", "task"])``: each
  block read, scored and reduced to its partial statistics in a worker, the partials
  combined on the driver. A first run on the smallest size warms the workers up.

The tables are checked equal (counts and signatures exactly, numbers within 1e-12; how
many numbers are bit for bit the same is reported). Reported per size: both wall
times (best of ``--repeat``), the overhead ratio (Ray / one process) and the time per row;
with two sizes or more, Ray's time per row at the largest over the smallest. Writes
``benchmarks/results/ray.json``. On one machine Ray cannot be faster than polars, which
already uses every core: the ratio is what the distribution costs, paid back by adding
machines (``docs/scale.md``).
"""

from __future__ import annotations

import argparse
import math
import os
import shutil
import tempfile
import time
from pathlib import Path

# Ray on this machine's loopback only, and without usage statistics (read at its import).
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")

import polars as pl
from _harness import growth_check, load_average, peak_rss_mb, timed, write_results
from _qa_data import chunk

import evalframe as ef

KEYS = ["model", "task"]
METRICS = ["squad_em", "squad_f1", "pass@10"]
FLOATS = ("value", "stderr", "ci_low", "ci_high")


def write_files(folder: Path, rows: int, files: int, seed: int) -> list[str]:
    """The dump of ``rows`` rows as ``files`` parquet files of about equal size."""
    folder.mkdir(parents=True, exist_ok=True)
    size = math.ceil(rows / files)
    paths = []
    for i, start in enumerate(range(0, rows, size)):
        part = chunk(start, min(size, rows - start), seed).with_columns(
            model=pl.format("model-{}", pl.col("id") % 4),
            task=pl.format("task_{}", (pl.col("id") // 4) % 25),
        )
        path = folder / f"part-{i:03d}.parquet"
        part.write_parquet(path)
        paths.append(str(path))
    return paths


def one_process(paths: list[str]) -> pl.DataFrame:
    return ef.aggregate(ef.score(paths, METRICS), by=KEYS)


def on_ray(paths: list[str]) -> pl.DataFrame:
    import evalframe.ray as efr

    return efr.aggregate(efr.score(paths, METRICS), by=KEYS)


def compare(table: pl.DataFrame, reference: pl.DataFrame) -> dict[str, object]:
    """Whether the tables agree as ef.combine promises, and how many numbers are bit for
    bit equal."""
    same_rows = table.drop(FLOATS).equals(reference.drop(FLOATS))
    close = identical = total = 0
    for name in FLOATS:
        for a, b in zip(table[name].to_list(), reference[name].to_list(), strict=True):
            total += 1
            identical += a == b
            close += a == b or (a is not None and b is not None
                                and math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-15))
    return {"same_rows_counts_signatures": same_rows, "numbers_within_1e-12": close == total,
            "numbers_bit_identical": f"{identical}/{total}"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default="10000000", help="comma-separated sizes")
    parser.add_argument("--files", type=int, default=16, help="parquet files per size")
    parser.add_argument("--cpus", type=int, default=2, help="CPUs of the local cluster")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each (best is kept)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    sizes = [int(part) for part in args.rows.split(",") if part.strip()]

    import ray

    import evalframe.ray as efr

    folder = Path(tempfile.mkdtemp(prefix="bench-ray-"))
    started = time.perf_counter()
    efr.init(num_cpus=args.cpus, object_store_memory=1 << 30, log_to_driver=False)
    ray.data.DataContext.get_current().enable_progress_bars = False
    startup = time.perf_counter() - started
    print(f"local Ray cluster of {args.cpus} CPUs started in {startup:.1f} s")
    runs = []
    try:
        warm = write_files(folder / "warm", 20_000, args.files, args.seed)
        on_ray(warm), one_process(warm)  # workers started, imports done, caches filled
        for rows in sizes:
            paths = write_files(folder / str(rows), rows, args.files, args.seed)
            one_s, reference = timed(lambda paths=paths: one_process(paths), args.repeat)
            ray_s, table = timed(lambda paths=paths: on_ray(paths), args.repeat)
            agreement = compare(table, reference)
            run = {
                "rows": rows,
                "files": args.files,
                "groups": reference.height // len(METRICS),
                "one_process_s": round(one_s, 3),
                "ray_s": round(ray_s, 3),
                "overhead_ratio": round(ray_s / one_s, 2),
                "one_process_us_per_row": round(1e6 * one_s / rows, 3),
                "ray_us_per_row": round(1e6 * ray_s / rows, 3),
                **agreement,
            }
            print(
                f"ray  rows={rows:,} in {args.files} files: one process {one_s:.2f} s "
                f"({run['one_process_us_per_row']} us/row), Ray {args.cpus} CPUs {ray_s:.2f} s "
                f"({run['ray_us_per_row']} us/row): {run['overhead_ratio']}x; {agreement}"
            )
            runs.append(run)
            shutil.rmtree(folder / str(rows), ignore_errors=True)
    finally:
        ray.shutdown()
        shutil.rmtree(folder, ignore_errors=True)
    growth = None
    if len(runs) > 1:  # the time per row on Ray from the smallest size to the largest
        small, large = runs[0], runs[-1]
        growth = growth_check(small["rows"], small["ray_s"], large["rows"], large["ray_s"])
        print(f"Ray: time per row at {large['rows']:,} rows / at {small['rows']:,}: "
              f"{growth['time_per_row_growth']}")
    write_results(
        "ray",
        {
            "benchmark": "ray",
            "reference": "ef.score + ef.aggregate in one process (polars, every core)",
            "workload": (
                f"_qa_data rows (distinct Unicode text, 1-3 golds, n/c counts) with 4 models x "
                f"25 tasks, metrics {METRICS}, by {KEYS}, {args.files} parquet files, "
                f"seed {args.seed}"
            ),
            "cluster": f"local, {args.cpus} CPUs, started in {startup:.1f} s (not timed)",
            "runs": runs,
            "no_superlinear": growth,
            "process_peak_rss_mb": peak_rss_mb(),
            "load_average_at_end": load_average(),
        },
    )


if __name__ == "__main__":
    main()
