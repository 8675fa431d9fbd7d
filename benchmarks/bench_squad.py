"""SQuAD EM + F1: evalframe against the official per-row functions, same workload, one process.

Workload (seeded): predictions of 1-8 words, 1-3 gold alternatives of 1-6 words, words
drawn from a vocabulary with articles, punctuation, case and a few non-ASCII words;
about 30% of alternatives copy the prediction. The reference is get_raw_scores' loop:
for each row, the golds that normalise to something (else [""]), then max over them of
compute_exact and of compute_f1 (transformers.data.metrics.squad_metrics).

evalframe computes squad_em and squad_f1 in one lazy with_columns (sharing the
normalisation). The floor is a pass that lower-cases both columns and sums lengths.

    python benchmarks/bench_squad.py [--rows N] [--reference-rows M]

The reference is timed on min(rows, reference-rows) rows and scaled linearly (it is a
per-row loop); evalframe and the floor run on all rows. Writes results/squad.json.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from pathlib import Path

import numpy as np
import polars as pl

from evalframe import metrics as M

VOCABULARY = [
    "the", "a", "an", "The", "A", "Paris", "France", "1973", "October", "cat", "dog's",
    "New", "York", "city,", "U.S.", "$12", "nearly", "river", "(born", "1850)", "Dr.",
    "king", "Queen", "of", "and", "in", "Élan", "naïve", "über", "Σοφία", "x", "y", "z",
] + [f"w{i}" for i in range(5000)]


def workload(rows: int, seed: int = 0) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    vocabulary = np.array(VOCABULARY, dtype=object)
    words = pl.Series(vocabulary[rng.integers(0, len(vocabulary), rows * 8)], dtype=pl.String)
    lengths = rng.integers(1, 9, rows)
    starts = np.arange(rows) * 8
    index = np.concatenate([np.arange(s, s + n) for s, n in zip(starts, lengths, strict=True)])
    owner = np.repeat(np.arange(rows), lengths)
    pred = (
        pl.DataFrame({"row": owner, "w": words.gather(index)})
        .group_by("row", maintain_order=True)
        .agg(pl.col("w").str.join(" "))["w"]
    )
    n_gold = rng.integers(1, 4, rows)
    alt_row = np.repeat(np.arange(rows), n_gold)
    n_alt = alt_row.size
    alt_words = pl.Series(vocabulary[rng.integers(0, len(vocabulary), n_alt * 6)], dtype=pl.String)
    alt_len = rng.integers(1, 7, n_alt)
    alt_index = np.concatenate(
        [np.arange(s, s + n) for s, n in zip(np.arange(n_alt) * 6, alt_len, strict=True)]
    )
    alt_owner = np.repeat(np.arange(n_alt), alt_len)
    alternatives = (
        pl.DataFrame({"alt": alt_owner, "w": alt_words.gather(alt_index)})
        .group_by("alt", maintain_order=True)
        .agg(pl.col("w").str.join(" "))["w"]
    )
    copy = rng.random(n_alt) < 0.3
    alternatives = pl.select(
        pl.when(pl.lit(pl.Series(copy))).then(pl.lit(pred.gather(alt_row))).otherwise(
            pl.lit(alternatives)
        )
    ).to_series()
    gold = (
        pl.DataFrame({"row": alt_row, "g": alternatives})
        .group_by("row", maintain_order=True)
        .agg("g")["g"]
    )
    return pl.DataFrame({"pred": pred, "gold": gold})


def reference(frame: pl.DataFrame) -> tuple[list[int], list[float]]:
    from transformers.data.metrics.squad_metrics import (
        compute_exact,
        compute_f1,
        normalize_answer,
    )

    exact, f1 = [], []
    for prediction, answers in zip(frame["pred"].to_list(), frame["gold"].to_list(), strict=True):
        golds = [a for a in answers if normalize_answer(a)] or [""]
        exact.append(max(compute_exact(a, prediction) for a in golds))
        f1.append(max(compute_f1(a, prediction) for a in golds))
    return exact, f1


def evalframe_scores(frame: pl.DataFrame) -> pl.DataFrame:
    return (
        frame.lazy()
        .with_columns(
            M.squad_em("pred", "gold").alias("squad_em"),
            M.squad_f1("pred", "gold").alias("squad_f1"),
        )
        .collect()
    )


def floor(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.select(
        pl.col("pred").str.to_lowercase().str.len_bytes().sum(),
        pl.col("gold").list.eval(pl.element().str.to_lowercase().str.len_bytes()).list.sum().sum(),
    )


def best_of(repeats: int, function, *args) -> tuple[float, object]:
    best, result = float("inf"), None
    for _ in range(repeats):
        start = time.perf_counter()
        result = function(*args)
        best = min(best, time.perf_counter() - start)
    return best, result


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--reference-rows", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    frame = workload(args.rows, args.seed)
    ours_seconds, scored = best_of(args.repeats, evalframe_scores, frame)
    floor_seconds, _ = best_of(args.repeats, floor, frame)

    reference_rows = min(args.rows, args.reference_rows)
    sample = frame.head(reference_rows)
    start = time.perf_counter()
    exact, f1 = reference(sample)
    reference_measured = time.perf_counter() - start
    reference_seconds = reference_measured * args.rows / reference_rows

    head = scored.head(reference_rows)
    agree = head["squad_em"].to_list() == [float(v) for v in exact] and head[
        "squad_f1"
    ].to_list() == [float(v) for v in f1]

    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    result = {
        "benchmark": "squad_em + squad_f1",
        "rows": args.rows,
        "reference_rows_timed": reference_rows,
        "reference": "transformers.data.metrics.squad_metrics get_raw_scores loop "
        "(compute_exact, compute_f1)",
        "reference_seconds": reference_seconds,
        "reference_seconds_measured": reference_measured,
        "evalframe_seconds": ours_seconds,
        "floor_seconds": floor_seconds,
        "ratio_reference_over_evalframe": reference_seconds / ours_seconds,
        "ratio_evalframe_over_floor": ours_seconds / floor_seconds,
        "target_ratio": 25.0,
        "meets_target": reference_seconds / ours_seconds >= 25.0,
        "identical_to_reference": agree,
        "peak_memory_mib": peak_kib / 1024,
        "polars": pl.__version__,
        "python": sys.version.split()[0],
    }
    out = Path(__file__).resolve().parent / "results" / "squad.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    return result


if __name__ == "__main__":
    main()
