"""boxed, gsm8k_answer and last_number against their references, per row.

Seeded workload of math chain-of-thought responses (a few sentences with numbers and
inline LaTeX, then a final answer as ``\\boxed{...}`` with nested braces, ``#### n``, a
plain number, or nothing); a quarter of the responses repeat earlier ones, as several
models' dumps of one task do. References, in the same process:

- ``boxed``: lm-evaluation-harness 0.4.13's ``remove_boxed(last_boxed_only_string(x))``
  (``tasks/minerva_math/utils.py``, executed from the installed source; where it raises,
  the documented value);
- ``gsm8k_answer``: lighteval 0.13.0's ``gsm8k_normalizer`` (OpenAI's ``extract_answer``);
- ``last_number``: the Qwen2.5-Math branch's expression, run by Python's ``re``.

Every answer is checked equal. Two sizes (the second 10x the first) check that the time
per row does not grow.

    python benchmarks/bench_extract_simple.py [--rows N]

Writes benchmarks/results/extract_simple.json.
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

import polars as pl
from _harness import growth_by_name, side_by_side, timed, write_results

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evalframe.extract.simple import boxed, gsm8k_answer, last_number
from tests.conformance._lighteval_import import import_lighteval
from tests.conformance.test_simple_extract_conformance import (
    _minerva,
    qwen_last_number,
    reference_boxed,
)

WORDS = ["so", "the", "total", "is", "we", "get", "then", "apples", "cost", "each", "and",
         "therefore", "$x$", "$2x + 1$", "\\frac{a}{b}", "per", "day"]
FINALS = ["The answer is $\\boxed{{{x}}}$.", "\\boxed{{\\frac{{{x}}}{{2}}}}", "#### {x}",
          "So the answer is {x}.", "\\boxed {x}$", "", "\\fbox{{{x}}}", "\\boxed{{{x}"]


def response(rng: random.Random) -> str:
    sentences = []
    for _ in range(rng.randint(2, 6)):
        words = rng.choices(WORDS, k=rng.randint(5, 14))
        if rng.random() < 0.6:
            words.insert(rng.randrange(len(words)), f"{rng.randint(1, 5000):,}")
        sentences.append(" ".join(words) + ".")
    final = rng.choice(FINALS).format(x=rng.randint(-50, 5000))
    return " ".join(sentences) + "\n" + final


def workload(rows: int, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    texts: list[str] = []
    for _ in range(rows):
        texts.append(rng.choice(texts) if texts and rng.random() < 0.25 else response(rng))
    return texts


def references():
    last, remove = _minerva()
    normalizer = import_lighteval("lighteval.metrics.normalizations").gsm8k_normalizer
    return {
        "boxed": lambda texts: [reference_boxed(t, last, remove)[0] for t in texts],
        "gsm8k_answer": lambda texts: [normalizer(t) for t in texts],
        "last_number": lambda texts: [qwen_last_number(t) for t in texts],
    }


OURS = {"boxed": boxed, "gsm8k_answer": gsm8k_answer, "last_number": last_number}


def measure(rows: int) -> dict:
    texts = workload(rows)
    frame = pl.DataFrame({"text": texts})
    result: dict = {"rows": rows}
    for name, reference in references().items():
        reference_time, expected = timed(lambda reference=reference: reference(texts), repeat=1)

        def run(name=name):
            return frame.select(OURS[name]("text").struct.field("extracted")).to_series()

        evalframe_time, got = timed(run, repeat=3)
        assert got.to_list() == expected, f"{name}: evalframe and the reference disagree"
        result[name] = side_by_side(reference_time, evalframe_time, rows)
    print(result)
    return result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=20_000)
    args = parser.parse_args()
    small, large = measure(args.rows), measure(10 * args.rows)
    growth = growth_by_name(small, large, OURS)
    write_results("extract_simple", {
        "reference": {
            "boxed": "lm-eval 0.4.13 minerva_math remove_boxed(last_boxed_only_string)",
            "gsm8k_answer": "lighteval 0.13.0 gsm8k_normalizer (OpenAI extract_answer)",
            "last_number": "Qwen2.5-Math extract_answer last-number branch (its expression)",
        },
        "runs": [small, large],
        "no_superlinear": growth,
    })


if __name__ == "__main__":
    main()
