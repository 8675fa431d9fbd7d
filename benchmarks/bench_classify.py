"""Classifying raw judge replies: ``ef.judge.classify(format="mtbench")`` against the
per-row rule MT-bench's own script runs.

Usage: ``python benchmarks/bench_classify.py [--rows N] [--distinct D]``

One seeded frame of ``rows`` pairs of replies (both orders), drawn from ``distinct``
realistic replies (a sentence of reasoning, then ``[[A]]``, ``[[B]]`` or ``[[C]]``; one
without a verdict). In one process, best of three:

- reference: FastChat's rule per reply (``"[[A]]" in judgment`` -> A, ``"[[B]]"`` -> B,
  ``"[[C]]"`` -> tie, else error), the second order mapped back, then the outcome of the
  pair (the two orders agree, or not), in a Python loop over the rows;
- evalframe: ``classify`` (each distinct reply parsed once, the outcome vectorized).

The outcomes are checked equal. Writes ``benchmarks/results/classify.json``. Target: at
least 10x the per-row rule.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import polars as pl
from _harness import load_average, side_by_side, write_results

import evalframe as ef

TARGET = 10.0


def workload(rows: int, distinct: int, seed: int) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    replies = [
        f"Assistant {'AB'[i % 2]} gives a more thorough answer to question {i}; weighing "
        f"accuracy, depth and helpfulness — «naïve» points aside — my final verdict is "
        f"[[{'ABC'[i % 3]}]]" + " Further notes." * (i % 4)
        for i in range(distinct - 1)
    ] + ["I cannot decide between the two answers."]
    pool = np.array(replies, dtype=object)
    return pl.DataFrame({"g1": pool[rng.integers(0, distinct, rows)],
                         "g2": pool[rng.integers(0, distinct, rows)]})


def fastchat_rule(judgment: str) -> str:
    if "[[A]]" in judgment:
        return "A"
    if "[[B]]" in judgment:
        return "B"
    if "[[C]]" in judgment:
        return "tie"
    return "error"


SWAP = {"A": "B", "B": "A", "tie": "tie", "error": "error"}


def per_row(frame: pl.DataFrame) -> list[str]:
    outcomes = []
    for first, second in zip(frame["g1"].to_list(), frame["g2"].to_list(), strict=True):
        ab, ba = fastchat_rule(first), SWAP[fastchat_rule(second)]
        if "error" in (ab, ba):
            outcomes.append("error")
        elif ab == ba:
            outcomes.append(ab)
        else:
            outcomes.append("inconsistent")
    return outcomes


def best(function, repeat: int = 3):
    times, result = [], None
    for _ in range(repeat):
        started = time.perf_counter()
        result = function()
        times.append(time.perf_counter() - started)
    return min(times), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--distinct", type=int, default=49)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    frame = workload(args.rows, args.distinct, args.seed)
    reference_s, expected = best(lambda: per_row(frame))
    evalframe_s, result = best(lambda: ef.judge.classify(
        frame, verdict_ab="g1", verdict_ba="g2", format="mtbench"))
    if result["outcome"].to_list() != expected:
        raise SystemExit("the outcomes differ from the per-row rule")
    summary = {
        "workload": f"{args.rows:,} reply pairs from {args.distinct} distinct replies",
        "rows": args.rows,
        **side_by_side(reference_s, evalframe_s, args.rows),
        "target": f"at least {TARGET:.0f}x the per-row rule",
        "load_average": load_average(),
    }
    summary["met"] = summary["speedup"] >= TARGET
    print(summary)
    write_results("classify", summary)


if __name__ == "__main__":
    main()
