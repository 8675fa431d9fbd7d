"""drop_em + drop_f1 against lm-evaluation-harness's DROP ``process_results``, per row.

Seeded workload of DROP-like answers (numbers, dates, names, short phrases),
mostly single-span with ~10% multi-span rows; 1-3 gold alternatives per row.
Both sides score em and f1 in the same process; the scores are checked equal.

    python benchmarks/bench_drop.py [--rows N]

Writes benchmarks/results/drop.json.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import platform
import random
import threading
import time
from pathlib import Path

import polars as pl
from _harness import linearity

from evalframe import metrics as M

TARGET_RATIO = 15.0
WORDS = [
    "the", "a", "yard", "yards", "touchdown", "pass", "field", "goal", "quarter", "first",
    "second", "third", "fourth", "Smith", "Jones", "Brady", "Raiders", "Patriots", "run",
    "interception", "safety", "kick", "return", "punt", "half", "game",
]
MONTHS = [
    "January", "February", "March", "April", "May", "June", "July", "August", "September",
    "October", "November",
]


def load_reference():
    spec = importlib.util.find_spec("lm_eval")
    path = Path(next(iter(spec.submodule_search_locations))) / "tasks" / "drop" / "utils.py"
    module_spec = importlib.util.spec_from_file_location("_drop_reference", path)
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    return module


def answer(rng: random.Random) -> str:
    r = rng.random()
    if r < 0.45:
        number = rng.randint(0, 2000)
        return rng.choice([str(number), f"{number:,}", f"{number}.0", f"{number} yards"])
    if r < 0.55:
        return f"{rng.randint(1, 28)} {rng.choice(MONTHS)} {rng.randint(1900, 2020)}"
    return " ".join(rng.choices(WORDS, k=rng.randint(1, 4)))


def spans(rng: random.Random, multi: bool) -> list[str]:
    return [answer(rng) for _ in range(rng.randint(2, 3) if multi else 1)]


def workload(rows: int, seed: int = 0) -> pl.DataFrame:
    rng = random.Random(seed)
    predictions, golds = [], []
    for _ in range(rows):
        multi = rng.random() < 0.10
        gold = [spans(rng, multi) for _ in range(rng.randint(1, 3))]
        if rng.random() < 0.5:  # a correct or near-correct prediction half of the time
            prediction = list(rng.choice(gold))
        else:
            prediction = spans(rng, multi and rng.random() < 0.8)
        predictions.append(prediction)
        golds.append(gold)
    return pl.DataFrame(
        {"prediction": predictions, "gold": golds},
        schema={"prediction": pl.List(pl.String), "gold": pl.List(pl.List(pl.String))},
    )


class PeakRSS:
    """Peak resident memory (MiB) of this process while the block runs, sampled."""

    def __enter__(self):
        self.peak = self.base = _rss()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def _sample(self):
        while not self._stop.wait(0.002):
            self.peak = max(self.peak, _rss())

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, _rss())


def _rss() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    reference = load_reference()
    frame = workload(args.rows, args.seed)
    predictions = frame["prediction"].to_list()
    golds = [[tuple(alt) for alt in gold] for gold in frame["gold"].to_list()]

    # Warm up both (regex classes, imports) on a few rows, outside the timings.
    frame.head(100).select(M.drop_em("prediction", "gold"), M.drop_f1("prediction", "gold"))
    reference.process_results({"answers": golds[0]}, predictions[0])

    with PeakRSS() as ours_memory:
        start = time.perf_counter()
        ours = frame.lazy().select(
            M.drop_em("prediction", "gold").alias("em"), M.drop_f1("prediction", "gold").alias("f1")
        ).collect()
        ours_seconds = time.perf_counter() - start

    with PeakRSS() as ref_memory:
        start = time.perf_counter()
        ref = [
            reference.process_results({"answers": g}, p)
            for p, g in zip(predictions, golds, strict=True)
        ]
        ref_seconds = time.perf_counter() - start

    em_equal = ours["em"].to_list() == [float(r["em"]) for r in ref]
    f1_diff = max(
        (abs(a - float(r["f1"])) for a, r in zip(ours["f1"].to_list(), ref, strict=True)),
        default=0.0,
    )
    multi_rows = frame.select(
        (pl.col("prediction").list.len() > 1)
        | pl.col("gold").list.eval(pl.element().list.len() > 1).list.any()
    ).to_series().sum()
    ratio = ref_seconds / ours_seconds

    def make(rows: int):
        data = workload(rows, args.seed).lazy()
        scores = [M.drop_em("prediction", "gold"), M.drop_f1("prediction", "gold").alias("f1")]
        return lambda: data.select(scores).collect()

    growth = linearity(make, max(args.rows // 10, 1), args.rows, repeat=2, label="drop")
    result = {
        "benchmark": "drop",
        "rows": args.rows,
        "multi_span_rows": int(multi_rows),
        "seed": args.seed,
        "reference": "lm-eval 0.4.13 lm_eval/tasks/drop/utils.py process_results (per row)",
        "reference_seconds": round(ref_seconds, 4),
        "evalframe_seconds": round(ours_seconds, 4),
        "ratio": round(ratio, 2),
        "target_ratio": TARGET_RATIO,
        "meets_target": ratio >= TARGET_RATIO,
        "reference_peak_rss_mib": round(ref_memory.peak, 1),
        "evalframe_peak_rss_mib": round(ours_memory.peak, 1),
        "reference_peak_rss_increase_mib": round(ref_memory.peak - ref_memory.base, 1),
        "evalframe_peak_rss_increase_mib": round(ours_memory.peak - ours_memory.base, 1),
        "em_identical": em_equal,
        "f1_max_abs_diff": f1_diff,
        "no_superlinear": growth,
        "polars": pl.__version__,
        "python": platform.python_version(),
        "cpus": len(__import__("os").sched_getaffinity(0)),
    }
    print(json.dumps(result, indent=2))
    out = Path(__file__).resolve().parent / "results" / "drop.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
