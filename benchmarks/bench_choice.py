"""Multiple-choice accuracy: evalframe's acc + acc_norm + acc_pmi vs lm-eval's process_results.

Usage: ``python benchmarks/bench_choice.py [--rows N] [--choices C] [--reference-rows M]
[--seed S]``

One seeded workload: ``N`` questions with ``C`` choices each; choice texts drawn from a
pool of Unicode strings (accents, combining marks, CJK, emoji, mixed lengths); summed
log-probabilities ~ N(-2.5 · length, 3) (longer choices are less likely, as with a real
model), unconditioned log-probabilities a little higher; the gold index uniform.

- reference: lm-eval 0.4.13's ``ConfigurableTask.process_results`` (the
  ``multiple_choice`` branch, ``acc``, ``acc_norm`` and ``acc_mutual_info`` requested,
  so one call gives all three), called on a minimal stand-in task once per row, as the
  harness calls it per document. Python per row is slow, so by default it is timed on
  the first ``--reference-rows`` (100,000) rows and **extrapolated linearly** to ``N``
  (its cost is per row; the printed and written figures say so);
- evalframe: ``ef.score(frame, ["acc", "acc_norm", "acc_pmi"])``, the whole frame.

The three accuracies are compared on the rows the reference scored (they must be
equal), and the timings (no tracing while timed: tracemalloc slows the per-row Python
of the reference several times over; the heap peaks come from separate runs), their
ratio and the peak memory are printed and written to
``benchmarks/results/choice.json``. Target: evalframe at least 50x faster at 1,000,000
rows x 4 choices.
"""

from __future__ import annotations

import argparse
import types
from pathlib import Path

import numpy as np
import polars as pl
from _harness import growth_check, heap_peak_mb, peak_rss_mb, timed, write_results

import evalframe as ef

RESULTS = Path(__file__).resolve().parent / "results" / "choice.json"
METRICS = ["acc", "acc_norm", "acc_pmi"]
LM_EVAL_METRICS = {"acc": "acc", "acc_norm": "acc_norm", "acc_pmi": "acc_mutual_info"}
#: Rows of the reference run again under tracemalloc for its heap peak.
HEAP_ROWS = 10_000

#: Choice texts: ASCII, accents (precomposed and combining), CJK, emoji, long and short.
POOL = [
    "Paris", "London", "Berlin", "Madrid", "Zürich", "São Paulo", "Kraków", "Reykjavík",
    "東京", "北京市", "서울", "Москва", "Αθήνα", "القاهرة", "e\u0301te\u0301", "été",
    "naïve café", "the mitochondria", "photosynthesis", "42", "None of the above",
    "😀 happy", "🚀", "a very long answer that goes on and on for a while", "x", "Ω",
]


def workload(rows: int, choices: int, seed: int) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    pool = np.array(POOL, dtype=object)
    texts = pool[rng.integers(0, len(pool), (rows, choices))]
    lengths = np.vectorize(len, otypes=[np.float64])(texts)
    logprobs = -2.5 * lengths + rng.normal(0.0, 3.0, (rows, choices))
    unconditioned = logprobs + rng.normal(2.0, 1.5, (rows, choices))
    return pl.DataFrame(
        {
            "choices": pl.Series(texts.tolist(), dtype=pl.List(pl.String)),
            "choice_logprobs": pl.Series(logprobs).reshape((rows, choices)).arr.to_list(),
            "unconditioned_logprobs": pl.Series(unconditioned).reshape((rows, choices))
            .arr.to_list(),
            "gold_index": rng.integers(0, choices, rows),
        }
    )


def lm_eval_task():
    """The attributes ``ConfigurableTask.process_results`` reads for multiple choice."""
    return types.SimpleNamespace(
        config=types.SimpleNamespace(process_results=None),
        _metric_fn_list=dict.fromkeys(LM_EVAL_METRICS.values()),
        OUTPUT_TYPE="multiple_choice",
        doc_to_choice=lambda doc: doc["choices"],
        doc_to_target=lambda doc: doc["gold"],
        multiple_input=False,
        multiple_target=False,
    )


def reference_inputs(frame: pl.DataFrame) -> tuple[list[dict], list[list[tuple[float, bool]]]]:
    """Per document, what the harness passes: the doc and (loglikelihood, is_greedy) pairs."""
    docs = [
        {"choices": choices, "gold": gold}
        for choices, gold in zip(frame["choices"].to_list(), frame["gold_index"].to_list(),
                                 strict=True)
    ]
    results = [
        [(ll, False) for ll in conditioned + unconditioned]
        for conditioned, unconditioned in zip(
            frame["choice_logprobs"].to_list(), frame["unconditioned_logprobs"].to_list(),
            strict=True,
        )
    ]
    return docs, results








def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--choices", type=int, default=4)
    parser.add_argument("--reference-rows", type=int, default=100_000,
                        help="rows the reference is timed on (extrapolated to --rows)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=3, help="evalframe runs (best is kept)")
    args = parser.parse_args()

    import warnings

    from lm_eval.api.task import ConfigurableTask

    frame = workload(args.rows, args.choices, args.seed)
    ef.score(frame.head(1000), METRICS)  # warm-up: imports, thread pool

    ours_s, scored = timed(lambda: ef.score(frame, METRICS), args.repeat)
    rss_after_ours = peak_rss_mb()
    ours_heap = heap_peak_mb(lambda: ef.score(frame, METRICS))
    small = frame.head(max(args.rows // 10, 1))
    small_s, _ = timed(lambda: ef.score(small, METRICS), args.repeat)
    growth = growth_check(small.height, small_s, args.rows, ours_s)
    print(f"  no-superlinear: time per row x{growth['time_per_row_growth']:.2f} at "
          f"{args.rows:,} vs {small.height:,} rows ({'ok' if growth['passes'] else 'SUPERLINEAR'})")

    sample = frame.head(min(args.reference_rows, args.rows))
    docs, results = reference_inputs(sample)
    task = lm_eval_task()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")

        def reference(rows: int | None = None):
            return [ConfigurableTask.process_results(task, doc, result)
                    for doc, result in zip(docs[:rows], results[:rows], strict=True)]

        sample_s, reference_out = timed(reference, 1)
        rss_after_ref = peak_rss_mb()
        heap_rows = min(HEAP_ROWS, len(docs))
        ref_heap = heap_peak_mb(lambda: reference(heap_rows))
    ref_s = sample_s * args.rows / max(len(sample), 1)
    extrapolated = len(sample) < args.rows

    mismatches = {
        metric: int(np.count_nonzero(
            scored[metric].head(len(sample)).to_numpy()
            != np.array([out[LM_EVAL_METRICS[metric]] for out in reference_out])
        ))
        for metric in METRICS
    }
    ratio = ref_s / ours_s
    print(
        f"rows={args.rows:,} x {args.choices} choices, metrics {'+'.join(METRICS)}\n"
        f"  lm-eval process_results  {ref_s:8.2f} s"
        + (f"  (timed on {len(sample):,} rows: {sample_s:.2f} s, extrapolated)" if extrapolated
           else "")
        + f"\n  evalframe ef.score       {ours_s:8.3f} s\n"
        f"  ratio {ratio:.1f}x   mismatches {mismatches}   peak RSS "
        f"{rss_after_ours:.0f} MiB -> {rss_after_ref:.0f} MiB"
    )
    summary = {
        "benchmark": "choice",
        "reference": "lm_eval.api.task.ConfigurableTask.process_results, multiple_choice branch "
        "(lm-eval 0.4.13), one call per row",
        "metrics": METRICS,
        "workload": f"{args.choices} choices per row, Unicode texts from a pool of {len(POOL)}, "
        f"logprob ~ N(-2.5 len, 3), unconditioned = logprob + N(2, 1.5), seed {args.seed}",
        "rows": args.rows,
        "choices": args.choices,
        "reference_rows_timed": len(sample),
        "reference_extrapolated": extrapolated,
        "reference_seconds_timed": sample_s,
        "reference_seconds": ref_s,
        "evalframe_seconds": ours_s,
        "ratio": ratio,
        "mismatches_on_reference_rows": mismatches,
        "target": "evalframe >= 50x faster at 1,000,000 rows x 4 choices",
        "meets_target": ratio >= 50 and not any(mismatches.values()),
        "evalframe_python_heap_peak_mb": ours_heap,
        f"reference_python_heap_peak_mb_on_{heap_rows}_rows": ref_heap,
        "process_peak_rss_mb_after_evalframe": rss_after_ours,
        "process_peak_rss_mb_after_reference": rss_after_ref,
        "no_superlinear": growth,
    }
    write_results(RESULTS.stem, summary)


if __name__ == "__main__":
    main()
