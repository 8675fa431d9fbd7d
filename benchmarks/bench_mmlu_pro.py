"""MMLU-Pro's extraction cascades against the scripts' own regex calls, per row.

Seeded workload of chain-of-thought responses to 10-option questions (a few sentences that
mention options, then a final line: ``The answer is (X).``, ``The answer is **X**.``,
``Answer: X``, a bare letter, or nothing); a quarter repeat earlier ones. The references
are the scripts' functions as transcribed in ``tests/conformance/test_mmlu_pro_extraction.py``
(Python ``re``, each step called only when the ones before found nothing), run in the same
process. Every answer is checked equal. Two sizes (the second 10x the first) check that the
time per row does not grow.

    python benchmarks/bench_mmlu_pro.py [--rows N]

Writes benchmarks/results/mmlu_pro.json.
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

import polars as pl
from _harness import growth_by_name, side_by_side, timed, write_results

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evalframe.extract.mmlu_pro import mmlu_pro_answer_is, mmlu_pro_extract, mmlu_pro_last_capital
from tests.conformance.test_mmlu_pro_extraction import (
    reference_answer_is,
    reference_current,
    reference_last_capital,
)

WORDS = ["the", "option", "is", "wrong", "because", "we", "know", "that", "Let's", "think",
         "step", "by", "so", "energy", "rate", "of", "I", "consider", "(C)", "B.", "and"]
FINALS = ["The answer is ({x}).", "The answer is **{x}**.", "Answer: {x}", "{x}", "",
          "Therefore the answer is {x}", "the best choice is {x}."]


def response(rng: random.Random) -> str:
    lines = [" ".join(rng.choices(WORDS, k=rng.randint(8, 30))) for _ in range(rng.randint(2, 8))]
    return "\n".join(lines) + "\n" + rng.choice(FINALS).format(x=rng.choice("ABCDEFGHIJ"))


def workload(rows: int, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    texts: list[str] = []
    for _ in range(rows):
        texts.append(rng.choice(texts) if texts and rng.random() < 0.25 else response(rng))
    return texts


PAIRS = {
    "mmlu_pro": (mmlu_pro_extract, reference_current),
    "mmlu_pro_answer_is": (mmlu_pro_answer_is, reference_answer_is),
    "mmlu_pro_last_capital": (mmlu_pro_last_capital, reference_last_capital),
}


def measure(rows: int) -> dict:
    texts = workload(rows)
    frame = pl.DataFrame({"text": texts})
    result: dict = {"rows": rows}
    for name, (ours, reference) in PAIRS.items():
        reference_time, expected = timed(
            lambda reference=reference: [reference(t) for t in texts], repeat=1
        )

        def run(ours=ours):
            return frame.select(ours("text").struct.field("extracted")).to_series()

        evalframe_time, got = timed(run, repeat=3)
        assert got.to_list() == expected, f"{name}: evalframe and the reference disagree"
        result[name] = side_by_side(reference_time, evalframe_time, rows)
    print(result)
    return result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=10_000)
    args = parser.parse_args()
    pl.DataFrame({"text": ["x"]}).select(mmlu_pro_extract("text"))  # classes built once
    small, large = measure(args.rows), measure(10 * args.rows)
    growth = growth_by_name(small, large, PAIRS)
    write_results("mmlu_pro", {
        "reference": "TIGER-AI-Lab/MMLU-Pro extract_answer cascades (Python re), transcribed",
        "runs": [small, large],
        "no_superlinear": growth,
    })


if __name__ == "__main__":
    main()
