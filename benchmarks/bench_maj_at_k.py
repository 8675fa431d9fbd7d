"""maj@k on ``list[str]`` generations: evalframe's expression vs lighteval's per-row vote.

Usage: ``python benchmarks/bench_maj_at_k.py [--rows N] [--k K] [--seed S]``

One seeded workload: ``rows`` prompts of ``k`` generations each, short answers drawn
from a few dozen strings with a skew towards the gold (so votes are close and ties
happen), the gold a ``str``. Both sides score it in the same process:

- reference: lighteval's ``MajAtN.compute`` loop body per row (``max(answers,
  key=answers.count)`` over the first ``k`` generations, then exact match with the
  gold), the way lighteval runs it over a dataset;
- evalframe: ``df.select(maj_at_k("gens", "gold", k=k))``.

The scores are checked equal. Also: the no-superlinear check (time per row at
``rows`` vs ``rows / 10``). Writes ``benchmarks/results/maj_at_k.json``.
"""

from __future__ import annotations

import argparse

import numpy as np
import polars as pl
from _harness import linearity, load_average, peak_rss_mb, timed, write_results

from evalframe.metrics import maj_at_k

#: maj@k of 1M rows x 8 generations before the vectorised vote (list.eval), this machine.
BASELINE_SECONDS = 1.5366


def workload(rows: int, k: int, seed: int) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    vocabulary = np.array([str(value) for value in range(40)], dtype=object)
    gold = rng.integers(0, 40, rows)
    noise = rng.integers(0, 40, (rows, k))
    # about 35% of the generations are the gold, the rest spread over the vocabulary
    picks = np.where(rng.random((rows, k)) < 0.35, gold[:, None], noise)
    flat = pl.Series("gens", vocabulary[picks.ravel()], dtype=pl.String)
    gens = flat.reshape((rows, k)).cast(pl.List(pl.String))
    return pl.DataFrame({"gens": gens, "gold": pl.Series(vocabulary[gold], dtype=pl.String)})


def reference(gens: list[list[str]], golds: list[str], k: int) -> np.ndarray:
    """lighteval ``MajAtN.compute`` (normalize none): the vote, then exact match."""
    out = np.empty(len(gens), dtype=np.float64)
    for i, (answers, gold) in enumerate(zip(gens, golds, strict=True)):
        answers = answers[:k]
        majority = max(answers, key=answers.count)
        out[i] = 1.0 if majority == gold else 0.0
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--k", type=int, default=8)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=3, help="evalframe runs (best is kept)")
    args = parser.parse_args()

    frame = workload(args.rows, args.k, args.seed)
    expression = maj_at_k("gens", "gold", k=args.k)
    frame.head(100).select(expression)  # warm-up: imports, thread pool

    def ours():
        return frame.select(expression).to_series().to_numpy()

    ours_s, scores = timed(ours, args.repeat)
    rss_ours = peak_rss_mb()
    texts, golds = frame["gens"].to_list(), frame["gold"].to_list()
    ref_s, expected = timed(lambda: reference(texts, golds, args.k), 1)
    equal = bool(np.array_equal(scores, expected))
    print(
        f"maj@{args.k}  rows={args.rows:,}  lighteval-style {ref_s:7.3f} s  evalframe "
        f"{ours_s:7.4f} s  ratio {ref_s / ours_s:6.1f}x  equal={equal}  peak RSS {rss_ours:.0f} MiB"
    )
    if BASELINE_SECONDS is not None:
        print(f"before: {BASELINE_SECONDS:.3f} s -> speed-up {BASELINE_SECONDS / ours_s:.2f}x")

    def make(rows: int):
        data = workload(rows, args.k, args.seed)
        return lambda: data.select(expression)

    small = max(args.rows // 10, 1)
    check = linearity(make, small, args.rows, args.repeat, label=f"maj@{args.k}")
    write_results(
        "maj_at_k",
        {
            "benchmark": "maj_at_k",
            "reference": "lighteval MajAtN.compute per row (max(answers, key=answers.count))",
            "workload": (
                f"{args.rows} rows x {args.k} generations over 40 answers, seed {args.seed}"
            ),
            "rows": args.rows,
            "k": args.k,
            "evalframe_seconds": ours_s,
            "reference_seconds": ref_s,
            "ratio": ref_s / ours_s,
            "scores_equal": equal,
            "baseline_seconds": BASELINE_SECONDS,
            "speedup_vs_baseline": (
                BASELINE_SECONDS / ours_s if BASELINE_SECONDS is not None else None
            ),
            "target": "maj@k >= 2x faster than the list.eval vote (baseline_seconds)",
            "meets_target": (
                BASELINE_SECONDS / ours_s >= 2.0 if BASELINE_SECONDS is not None else None
            ),
            "process_peak_rss_mb": rss_ours,
            "no_superlinear": check,
            "load_average_at_end": load_average(),
        },
    )


if __name__ == "__main__":
    main()
