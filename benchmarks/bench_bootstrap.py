"""Bootstrap stderr of F1-macro: evalframe's aggregate vs lm-eval's ``bootstrap_stderr``.

Usage: ``python benchmarks/bench_bootstrap.py [--rows N] [--replicates B]
[--reference-replicates R]``

One seeded workload (5 string classes, predictions right 60% of the time) is reduced
by both in the same process:

- reference: ``lm_eval.api.metrics.bootstrap_stderr(f1_macro, items, iters=B)``, with
  ``f1_macro`` written as lm-eval writes its ``f1`` aggregation (unzip the (gold, pred)
  pairs, call ``sklearn.metrics.f1_score``) but with ``average="macro"``. A replicate
  costs the same whatever B, so the reference runs ``R`` replicates in one process
  (``random.Random(0).choices`` as lm-eval's ``_bootstrap_internal``) and its time is
  extrapolated to B; lm-eval spreads the chunks of 1,000 replicates over
  ``multiprocessing.cpu_count()`` processes, so the extrapolated time is divided by
  the number of cores (the ideal speed-up, generous to the reference).
- evalframe: ``ef.aggregate(ef.score(frame, ["f1(average=macro)"]), bootstrap=B)``: the
  statistics, the point estimate and the B replicates (a multinomial over the cells of
  the confusion matrix, equivalent to resampling the rows), end to end.

Both standard errors are printed (they estimate the same quantity from different random
streams; they agree to within the bootstrap's own noise). Results go to
``benchmarks/results/bootstrap.json``. Target: evalframe at least 20x faster at
1,000,000 rows, B = 1000.
"""

from __future__ import annotations

import argparse
import os
import random
import time
from pathlib import Path

import numpy as np
import polars as pl
from _harness import linearity, write_results

import evalframe as ef

RESULTS = Path(__file__).resolve().parent / "results" / "bootstrap.json"
LABELS = np.array(["positive", "négatif", "neutral", "mixed", "n/a"])


def workload(rows: int, seed: int) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    gold = rng.integers(0, len(LABELS), rows)
    wrong = (gold + rng.integers(1, len(LABELS), rows)) % len(LABELS)
    prediction = np.where(rng.random(rows) < 0.6, gold, wrong)
    return pl.DataFrame({"prediction": LABELS[prediction], "gold": LABELS[gold]})


def f1_macro(items):
    """lm-eval's ``f1`` aggregation (api/metrics.py), with average='macro'."""
    from sklearn.metrics import f1_score

    unzipped_list = list(zip(*items, strict=True))
    golds, preds = unzipped_list[0], unzipped_list[1]
    return np.max(f1_score(golds, preds, average="macro"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--replicates", type=int, default=1000)
    parser.add_argument("--reference-replicates", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=3, help="evalframe runs (best is kept)")
    args = parser.parse_args()

    from lm_eval.api.metrics import sample_stddev

    frame = workload(args.rows, args.seed)
    items = list(zip(frame["gold"].to_list(), frame["prediction"].to_list(), strict=True))

    def ours() -> pl.DataFrame:
        scored = ef.score(frame, ["f1(average=macro)"])
        return ef.aggregate(scored, bootstrap=args.replicates)

    ours()  # warm-up
    ours_s = float("inf")
    for _ in range(args.repeat):
        start = time.perf_counter()
        table = ours()
        ours_s = min(ours_s, time.perf_counter() - start)

    rnd = random.Random(0)  # as lm-eval's _bootstrap_internal seeds each chunk
    start = time.perf_counter()
    replicates = [
        f1_macro(rnd.choices(items, k=len(items))) for _ in range(args.reference_replicates)
    ]
    per_replicate = (time.perf_counter() - start) / args.reference_replicates
    cores = os.cpu_count() or 1
    ref_s = per_replicate * args.replicates / cores

    value = table["value"].item()
    from sklearn.metrics import f1_score

    exact = f1_score(frame["gold"].to_numpy(), frame["prediction"].to_numpy(), average="macro")
    run = {
        "rows": args.rows,
        "replicates": args.replicates,
        "reference_replicates_timed": args.reference_replicates,
        "reference_seconds_per_replicate": per_replicate,
        "reference_seconds_extrapolated": ref_s,
        "cores": cores,
        "evalframe_seconds": ours_s,
        "ratio": ref_s / ours_s,
        "evalframe_value": value,
        "sklearn_value": float(exact),
        "evalframe_stderr": table["stderr"].item(),
        "reference_stderr_from_timed_replicates": (
            sample_stddev(replicates) if len(replicates) > 1 else None
        ),
    }
    print(
        f"rows={args.rows:,}  B={args.replicates}  lm-eval bootstrap_stderr "
        f"{ref_s:8.1f} s (extrapolated from {args.reference_replicates} replicates, "
        f"{per_replicate:.2f} s each, / {cores} cores)  evalframe {ours_s:6.3f} s  "
        f"ratio {run['ratio']:7.1f}x  stderr {run['evalframe_stderr']:.6f}  "
        f"value {value:.12f} (sklearn {exact:.12f})"
    )
    summary = {
        "benchmark": "bootstrap",
        "reference": "lm_eval.api.metrics.bootstrap_stderr (lm-eval 0.4.13) of an F1-macro "
        "aggregation written as lm-eval's f1",
        "workload": f"5 string labels, 60% correct, seed {args.seed}",
        "rows": args.rows,
        "target": "evalframe >= 20x faster at 1,000,000 rows, B = 1000",
        "meets_target": run["ratio"] >= 20,
        "runs": [run],
    }

    def make(rows: int):
        data = workload(rows, args.seed + 1)
        metrics = ["f1(average=macro)"]
        return lambda: ef.aggregate(ef.score(data, metrics), bootstrap=args.replicates)

    summary["no_superlinear"] = linearity(
        make, max(args.rows // 10, 1), args.rows, args.repeat, label="bootstrap"
    )
    write_results(RESULTS.stem, summary)


if __name__ == "__main__":
    main()
