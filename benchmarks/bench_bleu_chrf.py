"""Corpus BLEU and chrF together, as a user scores a translation dump, against sacrebleu.

Usage: ``python benchmarks/bench_bleu_chrf.py [--rows N] [--repeat R]``

One process, one workload (``bench_bleu.workload``: sentence pairs of 20-30 words, a Zipf
vocabulary with punctuation, numbers and non-ASCII words, hypotheses edited from the
references). The reference is ``sacrebleu.corpus_bleu`` plus ``sacrebleu.corpus_chrf``; evalframe
scores both metrics in one ``ef.score`` and reduces them with ``ef.aggregate`` (its 1,000-replicate
bootstrap included, which sacrebleu does not compute). Both scores are checked equal to
sacrebleu's. Results go to ``benchmarks/results/bleu_chrf.json``.
"""

from __future__ import annotations

import argparse

import sacrebleu
from _harness import linearity, peak_rss_mb, timed, write_results
from bench_bleu import workload

import evalframe as ef


def reference(hyps: list[str], refs: list[str]) -> tuple[float, float]:
    return (sacrebleu.corpus_bleu(hyps, [refs]).score, sacrebleu.corpus_chrf(hyps, [refs]).score)


def evalframe_pipeline(frame) -> tuple[float, float]:
    scored = ef.score(frame, ["bleu", "chrf"], columns={"prediction": "hyp", "gold": "ref"})
    table = ef.aggregate(scored, metrics=["bleu", "chrf"])
    values = dict(table.select("metric", "value").rows())
    return values["bleu"], values["chrf"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    frame = workload(args.rows, args.seed)
    hyps, refs = frame["hyp"].to_list(), frame["ref"].to_list()
    first, _ = timed(lambda: evalframe_pipeline(frame.head(1000)), 1)
    seconds, mine = timed(lambda: evalframe_pipeline(frame), args.repeat)
    reference_seconds, theirs = timed(lambda: reference(hyps, refs), 1)
    assert mine == theirs, (mine, theirs)
    summary = {
        "workload": "sentence pairs of 20-30 words (bench_bleu.workload)",
        "rows": args.rows,
        "reference": "sacrebleu 2.6.0 corpus_bleu + corpus_chrf",
        "reference_s": round(reference_seconds, 3),
        "evalframe": "ef.score(['bleu', 'chrf']) + ef.aggregate (bootstrap included)",
        "evalframe_s": round(seconds, 3),
        "ratio": round(reference_seconds / seconds, 2),
        "target_ratio": 5,
        "first_call_1000_rows_s": round(first, 3),
        "scores": {"bleu": mine[0], "chrf": mine[1]},
        "identical_to_reference": True,
        "peak_rss_mb": round(peak_rss_mb(), 1),
    }
    print(summary)

    def make(rows: int):
        data = workload(rows, args.seed + 1)
        return lambda: evalframe_pipeline(data)

    summary["no_superlinear"] = linearity(
        make, max(args.rows // 10, 1), args.rows, args.repeat, label="bleu_chrf"
    )
    write_results("bleu_chrf", summary)


if __name__ == "__main__":
    main()
