"""Inspect AI's string scorers against the inspect_* metrics, per row.

Seeded workload of completions (a few sentences with numbers such as ``$1,234.50``,
``-3.5``, ``60%``, then ``ANSWER: X`` / a word / nothing) and one to three targets per row
(letters, words, numbers); a quarter of the completions repeat earlier ones. The reference
is inspect_ai 0.3.285 itself: each scorer awaited on a ``TaskState`` per row in one event
loop, its value mapped by ``value_to_float``. Every score is checked equal. Two sizes (the
second 10x the first) check that the time per row does not grow.

    python benchmarks/bench_inspect_scorers.py [--rows N]

Writes benchmarks/results/inspect_scorers.json.
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

import polars as pl
from _harness import growth_by_name, side_by_side, timed, write_results

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from inspect_ai import scorer as inspect_scorer

from evalframe import metrics as M
from tests.conformance.test_inspect_scorers_conformance import reference_scores

WORDS = ["so", "the", "total", "is", "we", "get", "then", "Paris", "cost", "each", "and",
         "$1,234.50", "-3.5", "60%", "42", "twelve", "1e3", "(7)", "answer", "yes"]
FINALS = ["ANSWER: {l}", "ANSWER: {w}.", "The answer is {n}.", "{n}", "", "ANSWER:{l}\n"]
TARGETS = ["A", "B", "C", "yes", "no", "Paris", "42", "1234.5", "-3.5", "7", "60"]


def row(rng: random.Random) -> str:
    words = " ".join(rng.choices(WORDS, k=rng.randint(5, 30)))
    final = rng.choice(FINALS).format(
        l=rng.choice("ABCDabcd"), w=rng.choice(["yes", "no", "Paris"]), n=rng.choice(["42", "7"])
    )
    return words + "\n" + final


def workload(rows: int, seed: int = 0) -> tuple[list[str], list[list[str]]]:
    rng = random.Random(seed)
    completions: list[str] = []
    for _ in range(rows):
        repeat = completions and rng.random() < 0.25
        completions.append(rng.choice(completions) if repeat else row(rng))
    targets = [rng.sample(TARGETS, rng.randint(1, 3)) for _ in range(rows)]
    return completions, targets


SCORERS = {
    "inspect_match": (lambda: inspect_scorer.match(), M.inspect_match),
    "inspect_match(numeric=true)": (
        lambda: inspect_scorer.match(numeric=True), lambda p, g: M.inspect_match(p, g, numeric=True)
    ),
    "inspect_includes": (lambda: inspect_scorer.includes(), M.inspect_includes),
    "inspect_answer(pattern=letter)": (lambda: inspect_scorer.answer("letter"), M.inspect_answer),
    "inspect_answer(pattern=word)": (
        lambda: inspect_scorer.answer("word"), lambda p, g: M.inspect_answer(p, g, pattern="word")
    ),
}


def measure(rows: int) -> dict:
    completions, targets = workload(rows)
    frame = pl.DataFrame({"completion": completions, "target": targets})
    result: dict = {"rows": rows}
    for name, (make_reference, ours) in SCORERS.items():
        reference_time, (expected, _) = timed(
            lambda make=make_reference: reference_scores(make(), completions, targets), repeat=1
        )

        def run(ours=ours):
            return frame.select(ours("completion", "target").alias("s"))["s"]

        evalframe_time, got = timed(run, repeat=3)
        assert got.to_list() == expected, f"{name}: evalframe and the reference disagree"
        result[name] = side_by_side(reference_time, evalframe_time, rows)
    print(result)
    return result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=5_000)
    args = parser.parse_args()
    measure(100)  # character classes and number tables, built once
    small, large = measure(args.rows), measure(10 * args.rows)
    growth = growth_by_name(small, large, SCORERS)
    write_results("inspect_scorers", {
        "reference": "inspect_ai 0.3.285 scorer.match/includes/answer, value_to_float",
        "runs": [small, large],
        "no_superlinear": growth,
    })


if __name__ == "__main__":
    main()
