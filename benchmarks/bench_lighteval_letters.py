"""lighteval_letters against lighteval 0.13.0's ``extract_target_from_pred``, per row.

Seeded workload of GPQA-like chain-of-thought responses (a few sentences of reasoning
that mention options, then a final line in one of the usual formats, or none), four
choices, the gpqa_instruct configuration (``NativeLetters``,
``try_extract_without_anchor=True``). Both sides extract every row in the same process;
the letters are checked equal. Two sizes (the second 10x the first) check that the time
per row does not grow.

    python benchmarks/bench_lighteval_letters.py [--rows N]

Writes benchmarks/results/lighteval_letters.json.
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

import polars as pl
from _harness import growth_check, side_by_side, timed, write_results

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evalframe.extract.table import EXTRACTORS
from tests.conformance._lighteval_import import import_lighteval

WORDS = ["the", "option", "energy", "because", "so", "which", "is", "a", "reaction", "of",
         "value", "must", "be", "larger", "than", "we", "get", "then", "mass", "field"]
FINAL = ["Answer: {x}", "**Answer: ({x})**", "The final answer is {x}. I hope it is correct.",
         "Therefore, the answer is ({x}).", "answer: {x}", "{x}", "So I pick {x}", "", "Answer: e"]


def response(rng: random.Random) -> str:
    sentences = []
    for _ in range(rng.randint(2, 8)):
        words = rng.choices(WORDS, k=rng.randint(6, 18))
        if rng.random() < 0.4:
            words.insert(rng.randrange(len(words)), f"({rng.choice('ABCD')})")
        sentences.append(" ".join(words).capitalize() + ".")
    final = rng.choice(FINAL).format(x=rng.choice("ABCD"))
    return " ".join(sentences) + "\n\n" + final


def workload(rows: int, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    return [response(rng) for _ in range(rows)]


def reference(texts: list[str]) -> list[str | None]:
    emu = import_lighteval("lighteval.metrics.utils.extractive_match_utils")
    from lighteval.tasks.requests import Doc
    from lighteval.utils.language import Language

    config = emu.IndicesExtractionConfig(
        prefix_for_extraction="NativeLetters", try_extract_without_anchor=True
    )
    doc = Doc(query="", choices=["A", "B", "C", "D"], gold_index=0)
    regexes = emu.get_extraction_regexes(doc, [config], Language.ENGLISH)
    out = []
    for text in texts:
        found = emu.extract_target_from_pred(text, regexes, "first_match", "any_match", 5)
        out.append(found[0] if found else None)
    return out


def ours(frame: pl.DataFrame) -> list[str | None]:
    extractor = EXTRACTORS["lighteval_letters"]
    return frame.select(extractor("text").struct.field("extracted"))["extracted"].to_list()


def measure(rows: int) -> dict:
    texts = workload(rows)
    frame = pl.DataFrame({"text": texts})
    reference_time, expected = timed(lambda: reference(texts), repeat=1)
    evalframe_time, got = timed(lambda: ours(frame), repeat=3)
    assert got == expected, "evalframe and lighteval disagree"
    result = {"rows": rows, **side_by_side(reference_time, evalframe_time, rows)}
    print(result)
    return result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=20_000)
    args = parser.parse_args()
    small, large = measure(args.rows), measure(10 * args.rows)
    growth = large["evalframe_us_per_row"] / small["evalframe_us_per_row"]
    print(f"time per row at 10x rows: {growth:.2f}x")
    write_results("lighteval_letters", {
        "reference": "lighteval 0.13.0 extract_target_from_pred (gpqa_instruct config)",
        "runs": [small, large],
        "per_row_growth_at_10x": round(growth, 3),
        "no_superlinear": growth_check(small["rows"], small["evalframe_s"], large["rows"],
                                       large["evalframe_s"]),
    })


if __name__ == "__main__":
    main()
