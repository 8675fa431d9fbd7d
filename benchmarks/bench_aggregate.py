"""ef.aggregate against one hand-written Polars group-by computing the same numbers.

Usage: ``python benchmarks/bench_aggregate.py [--rows N] [--seed S]``

One seeded scored frame: ``rows`` rows, three group keys (``model``: 4 strings,
``task``: 25 strings, ``shot``: 4 integers; 400 groups) and four sample metrics
(``exact_match`` and ``acc``: 0/1 scores, ``squad_f1`` and ``rougeL``: scores in [0, 1],
1% null each). In the same process:

- hand-written: ``frame.lazy().group_by(keys).agg(count, mean, std, null count)`` for
  the four metrics, one pass;
- evalframe: ``ef.aggregate(frame, by=keys)`` (detects the metric columns and adds
  ``n_missing``, the standard error, Wilson / t intervals and the signature).

The means, counts and standard deviations are checked equal. Also: the no-superlinear
check (time per row at ``rows`` vs ``rows / 10``). Writes
``benchmarks/results/aggregate.json``. Target: evalframe within 1.5x of the group-by.
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
import polars as pl
from _harness import linearity, load_average, peak_rss_mb, write_results

import evalframe as ef

KEYS = ["model", "task", "shot"]
METRICS = ["exact_match", "acc", "squad_f1", "rougeL"]
TARGET_RATIO = 1.5


def workload(rows: int, seed: int) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    models = np.array([f"model-{i}" for i in range(4)], dtype=object)
    tasks = np.array([f"task_{i:02d}" for i in range(25)], dtype=object)
    columns = {
        "model": pl.Series(models[rng.integers(0, 4, rows)], dtype=pl.String),
        "task": pl.Series(tasks[rng.integers(0, 25, rows)], dtype=pl.String),
        "shot": rng.integers(0, 4, rows),
    }
    for name in METRICS:
        values = (
            (rng.random(rows) < 0.6).astype(np.float64)
            if name in ("exact_match", "acc")
            else rng.random(rows)
        )
        columns[name] = pl.Series(values).set(pl.Series(rng.random(rows) < 0.01), None)
    return pl.DataFrame(columns)


def hand_written(frame: pl.DataFrame) -> pl.DataFrame:
    aggregations = []
    for name in METRICS:
        score = pl.col(name)
        aggregations += [
            score.count().alias(f"{name}:n"),
            score.null_count().alias(f"{name}:n_null"),
            score.mean().alias(f"{name}:mean"),
            score.std().alias(f"{name}:std"),
        ]
    return frame.lazy().group_by(KEYS).agg(aggregations).collect()


def ours(frame: pl.DataFrame) -> pl.DataFrame:
    return ef.aggregate(frame, by=KEYS)


def same_numbers(table: pl.DataFrame, reference: pl.DataFrame) -> bool:
    for name in METRICS:
        part = table.filter(pl.col("metric") == name).join(reference, on=KEYS, how="inner")
        if part.height != reference.height:
            return False
        std = (part["stderr"] * part["n"].cast(pl.Float64).sqrt()).to_numpy()
        if not (
            (part["n"] == part[f"{name}:n"]).all()
            and (part["n_null"] == part[f"{name}:n_null"]).all()
            and np.allclose(part["value"].to_numpy(), part[f"{name}:mean"].to_numpy(),
                            rtol=0, atol=1e-12)
            and np.allclose(std, part[f"{name}:std"].to_numpy(), rtol=1e-9, atol=0)
        ):
            return False
    return True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=5, help="runs of each (best is kept)")
    args = parser.parse_args()

    frame = workload(args.rows, args.seed)
    ours(frame.head(1000))  # warm-up: imports, thread pool
    # interleaved, best of ``repeat`` each: wall time, and CPU time (less sensitive to
    # other processes on shared cores)
    wall = {"hand": math.inf, "ours": math.inf}
    cpu = dict(wall)
    for _ in range(args.repeat):
        for name, function in (("hand", hand_written), ("ours", ours)):
            start, start_cpu = time.perf_counter(), time.process_time()
            result = function(frame)
            wall[name] = min(wall[name], time.perf_counter() - start)
            cpu[name] = min(cpu[name], time.process_time() - start_cpu)
            if name == "hand":
                reference = result
            else:
                table = result
    hand_s, ours_s = wall["hand"], wall["ours"]
    equal = same_numbers(table, reference)
    ratio, cpu_ratio = ours_s / hand_s, cpu["ours"] / cpu["hand"]
    print(
        f"aggregate  rows={args.rows:,}  groups={reference.height}  hand-written group-by "
        f"{hand_s:.3f} s  ef.aggregate {ours_s:.3f} s  ratio {ratio:.2f}x (CPU time "
        f"{cpu['hand']:.3f} s vs {cpu['ours']:.3f} s: {cpu_ratio:.2f}x; target <= "
        f"{TARGET_RATIO}x)  same numbers={equal}  peak RSS {peak_rss_mb():.0f} MiB"
    )

    def make(rows: int):
        data = workload(rows, args.seed)
        return lambda: ours(data)

    small = max(args.rows // 10, 1)
    check = linearity(make, small, args.rows, args.repeat, label="ef.aggregate")
    write_results(
        "aggregate",
        {
            "benchmark": "aggregate",
            "reference": "one hand-written polars group_by (count, null count, mean, std)",
            "workload": (
                f"{args.rows} rows, keys {KEYS} (400 groups), metrics {METRICS} "
                f"(1% null), seed {args.seed}"
            ),
            "rows": args.rows,
            "groups": reference.height,
            "hand_written_seconds": hand_s,
            "evalframe_seconds": ours_s,
            "ratio": ratio,
            "hand_written_cpu_seconds": cpu["hand"],
            "evalframe_cpu_seconds": cpu["ours"],
            "cpu_ratio": cpu_ratio,
            "same_numbers": equal,
            "target": f"ef.aggregate within {TARGET_RATIO}x of the hand-written group-by",
            "meets_target": ratio <= TARGET_RATIO,
            "process_peak_rss_mb": peak_rss_mb(),
            "no_superlinear": check,
            "load_average_at_end": load_average(),
        },
    )


if __name__ == "__main__":
    main()
