"""math_equal against math-verify called per row: 100,000 (prediction, gold) pairs, 20% distinct.

Seeded workload of math answers as models write them and golds as datasets store them:
integers, decimals, fractions (``1/2``, ``\\frac{1}{2}``, ``\\dfrac12``), percentages,
thousands separators, units, ``\\boxed{}``, "The answer is ..." sentences, intervals and
sets. 20,000 distinct pairs, each used at least once, the rest drawn again at random
(100,000 rows). The reference is math-verify's documented usage per row,
``verify(parse(gold), parse(prediction))``, timed on a random subset of the rows and
scaled to all of them; its verdicts are checked equal to evalframe's on that subset.

evalframe is timed cold (no worker running, empty caches: what a first call in a session
pays, worker start-up included) and started (fresh workers that have imported
math-verify, empty caches everywhere). CPU time counts this process and the worker
processes (read from ``/proc``). The time per row is checked at two sizes (10x rows,
same share of distinct pairs), both started. The machine's load average is recorded: on
a shared machine the workers may not get a core each.

    python benchmarks/bench_math_equal.py [--rows N] [--reference-rows M]

Writes benchmarks/results/math_equal.json.
"""

from __future__ import annotations

import argparse
import logging
import os
import random
import resource
import time

import polars as pl
from _harness import growth_check, peak_rss_mb, write_results

import evalframe.metrics._math_equal as kernel
from evalframe.metrics.math import math_equal

TARGET_RATIO = 4.0
DISTINCT_SHARE = 0.2


def _number(rng: random.Random) -> tuple[str, float]:
    kind = rng.random()
    if kind < 0.4:
        value = rng.randint(-50, 2000)
        return str(value), float(value)
    if kind < 0.6:
        a, b = rng.randint(1, 20), rng.randint(2, 20)
        return rng.choice([f"{a}/{b}", f"\\frac{{{a}}}{{{b}}}", f"$\\frac{{{a}}}{{{b}}}$"]), a / b
    if kind < 0.75:
        value = round(rng.uniform(0, 100), rng.randint(1, 3))
        return str(value), value
    if kind < 0.85:
        value = rng.randint(1, 99)
        return f"{value}%", value / 100
    value = rng.randint(1000, 99999)
    return f"{value:,}", float(value)


def _response(rng: random.Random, text: str) -> str:
    return rng.choice(
        [
            text,
            f"The answer is {text}.",
            f"So the final answer is $\\boxed{{{text.strip('$')}}}$",
            f"We get \\boxed{{{text.strip('$')}}}",
            f"Answer: {text}",
            f"{text} \\text{{ cm}}" if not text.startswith("$") else text,
        ]
    )


def _pair(rng: random.Random) -> tuple[str, str]:
    if rng.random() < 0.08:  # intervals and sets
        a, b = sorted(rng.sample(range(-9, 10), 2))
        gold = rng.choice([f"$[{a}, {b})$", f"$\\{{{a},{b}\\}}$"])
        pred = rng.choice([gold, f"$[{a},{b}]$", f"$\\{{{b},{a}\\}}$", f"$({a},{b})$"])
        return _response(rng, pred), gold
    gold_text, gold_value = _number(rng)
    r = rng.random()
    if r < 0.45:  # the same value written another way
        if gold_value == int(gold_value):
            pred_text = rng.choice(
                [str(int(gold_value)), f"{gold_value:.1f}", f"${int(gold_value)}$"]
            )
        else:
            pred_text = rng.choice([str(round(gold_value, 6)), f"${round(gold_value, 4)}$"])
    elif r < 0.65:
        pred_text = gold_text
    else:  # a wrong answer
        pred_text, _ = _number(rng)
    return _response(rng, pred_text), gold_text


def workload(rows: int, seed: int = 0) -> pl.DataFrame:
    rng = random.Random(seed)
    distinct: dict[tuple[str, str], None] = {}
    wanted = int(rows * DISTINCT_SHARE)
    while len(distinct) < wanted:
        distinct[_pair(rng)] = None
    pairs = list(distinct)
    chosen = pairs + [rng.choice(pairs) for _ in range(rows - len(pairs))]
    rng.shuffle(chosen)
    return pl.DataFrame({"prediction": [p for p, _ in chosen], "gold": [g for _, g in chosen]})


def _worker_cpu() -> float:
    """User + system CPU seconds of the running worker processes."""
    total = 0.0
    tick = os.sysconf("SC_CLK_TCK")
    for worker in kernel._POOL.workers:
        if worker is None:
            continue
        try:
            with open(f"/proc/{worker.process.pid}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / tick
        except OSError:
            pass
    return total


def _own_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def run_evalframe(frame: pl.DataFrame, *, cold: bool) -> dict[str, float]:
    """One timed run with empty caches (here and in the workers).

    ``cold``: no worker running yet (their start-up is timed); else the workers are
    started, and have imported everything, before the clock starts.
    """
    kernel._POOL.close()
    if not cold:
        warm_up = pl.DataFrame({"p": [str(i) for i in range(kernel.PARALLEL_THRESHOLD + 8)]})
        warm_up.select(kernel.math_equivalent(pl.col("p"), pl.col("p")))
    kernel._PAIRS.clear()
    kernel._PARSED.clear()
    before_workers = _worker_cpu()
    before_own = _own_cpu()
    start = time.perf_counter()
    scored = frame.select(math_equal("prediction", "gold"))
    wall = time.perf_counter() - start
    own = _own_cpu() - before_own
    workers = _worker_cpu() - before_workers
    return {"wall": wall, "cpu_main": own, "cpu_workers": workers, "scores": scored}


def run_reference(frame: pl.DataFrame) -> tuple[float, float, list[float]]:
    import math_verify as mv

    predictions, golds = frame["prediction"].to_list(), frame["gold"].to_list()
    before = _own_cpu()
    start = time.perf_counter()
    scores = [
        float(mv.verify(mv.parse(g), mv.parse(p))) for p, g in zip(predictions, golds, strict=True)
    ]
    return time.perf_counter() - start, _own_cpu() - before, scores


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--reference-rows", type=int, default=4_000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    logging.getLogger("math_verify").setLevel(logging.ERROR)

    frame = workload(args.rows, args.seed)
    small = workload(args.rows // 10, args.seed + 1)
    distinct = frame.unique().height
    sample = frame.sample(args.reference_rows, seed=args.seed)

    ref_wall, ref_cpu, ref_scores = run_reference(sample)
    ref_per_row = ref_wall / sample.height
    ref_full = ref_per_row * frame.height

    cold = run_evalframe(frame, cold=True)
    warm = run_evalframe(frame, cold=False)
    warm_small = run_evalframe(small, cold=False)
    kernel._POOL.close()

    # the verdicts on the reference's rows
    ours = frame.with_columns(cold["scores"].to_series().alias("score"))
    checked = sample.join(ours.unique(["prediction", "gold"]), on=["prediction", "gold"],
                          how="left", maintain_order="left")
    identical = checked["score"].to_list() == ref_scores

    per_row_small = warm_small["wall"] / small.height
    per_row_large = warm["wall"] / frame.height
    ratio = ref_full / cold["wall"]
    result = {
        "benchmark": "math_equal",
        "rows": frame.height,
        "distinct_pairs": distinct,
        "seed": args.seed,
        "reference": "math-verify 0.9.0 verify(parse(gold), parse(prediction)), per row",
        "reference_rows_timed": sample.height,
        "reference_seconds_per_row": round(ref_per_row, 7),
        "reference_seconds_scaled": round(ref_full, 2),
        "reference_cpu_over_wall": round(ref_cpu / ref_wall, 2),
        "evalframe_seconds_cold": round(cold["wall"], 3),
        "evalframe_seconds_started": round(warm["wall"], 3),
        "evalframe_cpu_seconds_cold": round(cold["cpu_main"] + cold["cpu_workers"], 3),
        "evalframe_cpu_main_cold": round(cold["cpu_main"], 3),
        "evalframe_cpu_workers_cold": round(cold["cpu_workers"], 3),
        "evalframe_cpu_over_wall_cold": round(
            (cold["cpu_main"] + cold["cpu_workers"]) / cold["wall"], 2
        ),
        "evalframe_cpu_seconds_started": round(warm["cpu_main"] + warm["cpu_workers"], 3),
        "evalframe_cpu_over_wall_started": round(
            (warm["cpu_main"] + warm["cpu_workers"]) / warm["wall"], 2
        ),
        "evalframe_cpu_seconds_per_distinct_pair_started": round(
            (warm["cpu_main"] + warm["cpu_workers"]) / distinct, 7
        ),
        "evalframe_seconds_per_distinct_pair_started": round(warm["wall"] / distinct, 7),
        "workers": kernel.default_workers(),
        "ratio_cold": round(ratio, 2),
        "ratio_started": round(ref_full / warm["wall"], 2),
        "target_ratio": TARGET_RATIO,
        "meets_target": ratio >= TARGET_RATIO,
        "per_row_seconds_small_started": round(per_row_small, 8),
        "per_row_seconds_large_started": round(per_row_large, 8),
        "small_rows": small.height,
        "per_row_growth_10x": round(per_row_large / per_row_small, 3),
        "linear": per_row_large / per_row_small <= 1.3,
        "no_superlinear": growth_check(small.height, warm_small["wall"], frame.height,
                                       warm["wall"]),
        "verdicts_identical_on_reference_rows": identical,
        "peak_rss_mib": round(peak_rss_mb(), 1),
        "cpus": len(os.sched_getaffinity(0)),
        "load_average_1min": round(os.getloadavg()[0], 2),
    }
    for key, value in result.items():
        print(f"{key}: {value}")
    write_results("math_equal", result)


if __name__ == "__main__":
    main()
