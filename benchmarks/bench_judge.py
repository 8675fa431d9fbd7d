"""The pairwise judge pipeline on a million rows, with a judge that answers at once.

Usage: ``python benchmarks/bench_judge.py [--rows N] [--reference-rows M] [--repeat R]``

What is timed is evalframe's own work around the judge: building both prompts of every row,
asking the judge (an instant Python callable, so the run measures the hand-offs), parsing both
verdicts, classifying the outcome, and the report (win rates with intervals, position bias).
The reference is the loop a harness runs per row (FastChat's ``play_a_match_pair`` shape):
``str.format`` the two prompts, call the judge, search the verdict, classify, then count; it is
timed on ``M`` rows and scaled to ``N``. Both judges give the same verdicts, and the counts of
the two reports are checked equal on the rows both scored. Text is mixed Unicode (accents,
CJK, emoji) with braces and newlines. Results go to ``benchmarks/results/judge.json``.
"""

from __future__ import annotations

import argparse
import re
import time
import zlib

import numpy as np
import polars as pl
from _harness import linearity, peak_rss_mb, timed, write_results

import evalframe as ef
from evalframe.judge.formats import FORMATS

WORDS = ["Paris", "naïve", "über", "東京", "résumé", "{brace}", "42", "café", "🙂", "(b)", "1,000"]


def workload(rows: int, seed: int = 0) -> pl.DataFrame:
    rng = np.random.default_rng(seed)

    def texts(width: int) -> list[str]:
        picks = rng.integers(0, len(WORDS), size=(rows, width))
        return [" ".join(WORDS[i] for i in row) for row in picks]

    return pl.DataFrame({
        "sample_id": np.arange(rows) % 800,
        "question": texts(8), "answer_a": texts(12), "answer_b": texts(12),
        "model_a": "base", "model_b": "candidate",
    })


def instant_judge(prompt: str) -> str:
    """A judge that answers at once, deterministic in the prompt (a checksum picks)."""
    return ("FIRST", "SECOND", "TIE")[zlib.crc32(prompt.encode()) % 3]


def evalframe_pipeline(frame: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    judged = ef.judge.pairwise(frame, instant_judge, quiet=True, concurrency=2)
    return judged, ef.judge.report(judged)


def reference_pipeline(frame: pl.DataFrame) -> dict[str, int]:
    """The per-row loop: format, ask, parse, classify, count."""
    template = FORMATS["default"].template
    rubric = FORMATS["default"].rubric
    word = re.compile(r"\s*([A-Za-z]+)")
    counts = {"A": 0, "B": 0, "tie": 0, "inconsistent": 0, "error": 0}

    def verdict(reply: str, swapped: bool) -> str:
        found = word.match(reply.strip(" \t\n.,!"))
        label = found.group(1).upper() if found else ""
        if label == "TIE":
            return "tie"
        if label not in ("FIRST", "SECOND"):
            return "error"
        return ("B" if label == "FIRST" else "A") if swapped else (
            "A" if label == "FIRST" else "B")

    for question, a, b in frame.select("question", "answer_a", "answer_b").iter_rows():
        ab = template.format(rubric=rubric, question=question, answer_a=a, answer_b=b)
        ba = template.format(rubric=rubric, question=question, answer_a=b, answer_b=a)
        first, second = verdict(instant_judge(ab), False), verdict(instant_judge(ba), True)
        if "error" in (first, second):
            counts["error"] += 1
        elif first == second:
            counts[first] += 1
        else:
            counts["inconsistent"] += 1
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--reference-rows", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()

    frame = workload(args.rows)
    seconds, (judged, report) = timed(lambda: evalframe_pipeline(frame), args.repeat)
    stages = {}
    t = time.perf_counter()
    ef.judge.classify(judged.select("verdict_ab", "verdict_ba"))
    stages["classify_s"] = round(time.perf_counter() - t, 3)
    t = time.perf_counter()
    ef.judge.report(judged)
    stages["report_s"] = round(time.perf_counter() - t, 3)

    sample = frame.head(args.reference_rows)
    reference_seconds, counts = timed(lambda: reference_pipeline(sample), 1)
    mine = ef.judge.classify(
        judged.head(args.reference_rows).select("verdict_ab", "verdict_ba")
    )["outcome"].value_counts()
    assert dict(mine.rows()) == {key: value for key, value in counts.items() if value}, (
        dict(mine.rows()), counts)
    scaled = reference_seconds * args.rows / args.reference_rows
    summary = {
        "workload": "pairwise judging with position swap, an instant callable judge, Unicode text",
        "rows": args.rows,
        "prompts": 2 * args.rows,
        "evalframe_s": round(seconds, 3),
        "reference_rows_timed": args.reference_rows,
        "reference_s_scaled": round(scaled, 3),
        "ratio": round(scaled / seconds, 2),
        **stages,
        "report_row": report.select("wins_a", "wins_b", "ties", "inconsistent", "errors",
                                    "win_rate_a", "ci_low", "ci_high", "position_bias").to_dicts(),
        "peak_rss_mb": round(peak_rss_mb(), 1),
    }
    print(summary)

    def make(rows: int):
        data = workload(rows, seed=1)
        return lambda: evalframe_pipeline(data)

    summary["no_superlinear"] = linearity(
        make, max(args.rows // 10, 1), args.rows, args.repeat, label="judge"
    )
    write_results("judge", summary)


if __name__ == "__main__":
    main()
