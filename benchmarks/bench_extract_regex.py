"""GSM8K's flexible-extract against lm-evaluation-harness's ``RegexFilter``, per row.

Seeded workload of chain-of-thought responses of 200-500 characters: words (some non-ASCII:
accents, CJK, Cyrillic, emoji), punctuation (lone dots and commas, ellipses, parentheses),
and numbers written every way a model writes them (``1,250``, ``$3.50``, ``-7``, ``12.5%``,
``٣``, ``#### 72``, a final ``The answer is 72.``); some responses hold no number.

The reference is lm-eval 0.4.13's shipped chain, ``RegexFilter(regex_pattern=
"(-?[$0-9.,]{2,})|(-?[0-9]+)", group_select=-1)`` then ``TakeFirstFilter`` (``gsm8k.yaml``
``flexible-extract``), applied as ``FilterEnsemble`` applies it: one list of responses per
document. Python is timed on ``--reference-rows`` rows and scaled to the full count;
evalframe's ``gsm8k_flexible`` extractor runs on every row, at ``--rows / 10`` and
``--rows`` rows (time per row at 10x the rows must stay within 1.3x). The answers are
checked equal on the reference's rows.

    python benchmarks/bench_extract_regex.py [--rows N] [--reference-rows M]

Writes benchmarks/results/extract_regex.json.
"""

from __future__ import annotations

import argparse

import numpy as np
import polars as pl
from _harness import growth_check, peak_rss_mb, timed, write_results

from evalframe.extract.lm_eval_pipelines import FLEXIBLE, apply_filters
from evalframe.extract.table import EXTRACTORS

TARGET_RATIO = 20.0
WORDS = [
    "so", "the", "total", "is", "we", "get", "then", "apples", "cost", "each", "and",
    "therefore", "she", "he", "buys", "sells", "per", "day", "week", "left", "more", "than",
    "half", "twice", "of", "in", "at", "for", "with", "from", "after", "before", "first",
    "next", "finally", "café", "naïve", "résumé", "déjà", "Größe", "東京", "東京都", "ценa",
    "итого", "😀", "✓", "x", "y", "n", "answer", "number",
]  # fmt: skip
PUNCT = ["", "", "", "", ",", ".", ".", "!", "?", ":", ";", "...", ")", "("]


def _numbers(rng: np.random.Generator, count: int) -> list[str]:
    values = rng.integers(0, 100_000, count)
    kinds = rng.integers(0, 10, count)
    out = []
    for value, kind in zip(values.tolist(), kinds.tolist(), strict=True):
        small = value % 100
        out.append([
            f"{value:,}", f"${value:,}", f"{value / 100:.2f}", f"-{small}", f"{small}%",
            str(small), f"${value / 100:,.2f}", "٣", f"{small}.", f"{value // 7}",
        ][kind])  # fmt: skip
    return out


def workload(rows: int, seed: int = 0) -> list[str]:
    """``rows`` responses of 200-500 characters (seeded; numpy draws, Python joins)."""
    rng = np.random.default_rng(seed)
    pool_words = [w + p for w in WORDS for p in PUNCT]
    pool_numbers = _numbers(rng, 20_000)
    lengths = rng.integers(200, 501, rows)
    finals = rng.integers(0, 4, rows)
    texts = []
    for row in range(rows):
        target = int(lengths[row])
        tokens = []
        size = 0
        words = rng.integers(0, len(pool_words), 120)
        numbers = rng.integers(0, len(pool_numbers), 120)
        kinds = rng.random(120)
        for i in range(120):
            token = pool_numbers[numbers[i]] if kinds[i] < 0.12 else pool_words[words[i]]
            tokens.append(token)
            size += len(token) + 1
            if size >= target:
                break
        text = " ".join(tokens)
        final = int(finals[row])
        if final == 1:
            text = f"{text}\nThe answer is {pool_numbers[numbers[0]]}."
        elif final == 2:
            text = f"{text}\n#### {pool_numbers[numbers[1]]}"
        texts.append(text[:target])
    return texts


def reference(texts: list[str]) -> list[str]:
    from lm_eval.filters.extraction import RegexFilter
    from lm_eval.filters.selection import TakeFirstFilter

    docs = [{} for _ in texts]
    resps = RegexFilter(regex_pattern=FLEXIBLE, group_select=-1).apply(
        [[text] for text in texts], docs
    )
    return list(TakeFirstFilter().apply(resps, docs))


def ours(frame: pl.DataFrame) -> pl.Series:
    """The extractor in a lazy query (as ``ef.score`` and ``ef.extract`` run it)."""
    extractor = EXTRACTORS["gsm8k_flexible"]
    query = frame.lazy().select(extractor("response").struct.field("extracted"))
    return query.collect().to_series()


def ours_eager(frame: pl.DataFrame) -> pl.Series:
    """The same in an eager ``select`` (one batch, one thread)."""
    extractor = EXTRACTORS["gsm8k_flexible"]
    return frame.select(extractor("response").struct.field("extracted")).to_series()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--reference-rows", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    texts = workload(args.rows, args.seed)
    frame = pl.DataFrame({"response": texts})
    small = frame.head(args.rows // 10)
    sample = texts[: args.reference_rows]
    ours(frame.head(1000))  # warm up (pattern compilation, imports), outside the timings
    reference(sample[:1000])

    small_s, _ = timed(lambda: ours(small), args.repeat)
    full_s, answers = timed(lambda: ours(frame), args.repeat)
    eager_s, eager = timed(lambda: ours_eager(frame), args.repeat)
    assert eager.equals(answers)
    reference_s, expected = timed(lambda: reference(sample), 1)
    identical = answers.head(len(sample)).to_list() == expected
    assert identical, "evalframe differs from lm-eval's RegexFilter"
    # The documents' chain too (regex on each response, then take_first), on the sample.
    chain = [
        {"function": "regex", "regex_pattern": FLEXIBLE, "group_select": -1},
        {"function": "take_first"},
    ]
    documents = pl.DataFrame({"r": [[text] for text in sample]})
    chain_s, chained = timed(lambda: documents.select(apply_filters("r", chain)).to_series(), 1)
    assert chained.to_list() == expected

    scaled_reference_s = reference_s * args.rows / len(sample)
    ratio = scaled_reference_s / full_s
    growth = (full_s / args.rows) / (small_s / len(small))
    invalid = int((answers == "[invalid]").sum())
    mean_characters = float(frame.select(pl.col("response").str.len_chars().mean()).item())
    summary = {
        "benchmark": "extract_regex",
        "workload": "chain-of-thought responses of 200-500 characters (words, Unicode, "
        "punctuation, numbers with commas, decimals, $, %, signs)",
        "rows": args.rows,
        "mean_characters": round(mean_characters, 1),
        "rows_without_number": invalid,
        "seed": args.seed,
        "reference": "lm-eval 0.4.13 RegexFilter(regex_pattern='(-?[$0-9.,]{2,})|(-?[0-9]+)', "
        "group_select=-1) + TakeFirstFilter (gsm8k.yaml flexible-extract)",
        "reference_rows_timed": len(sample),
        "reference_seconds_on_sample": round(reference_s, 4),
        "reference_seconds_scaled": round(scaled_reference_s, 3),
        "reference_us_per_row": round(reference_s / len(sample) * 1e6, 3),
        "evalframe": "EXTRACTORS['gsm8k_flexible'] over a String column, in a lazy query",
        "evalframe_seconds": round(full_s, 4),
        "evalframe_us_per_row": round(full_s / args.rows * 1e6, 3),
        "evalframe_seconds_at_tenth": round(small_s, 4),
        "evalframe_us_per_row_at_tenth": round(small_s / len(small) * 1e6, 3),
        "time_per_row_growth_10x": round(growth, 3),
        "growth_within_1_3x": growth <= 1.3,
        "no_superlinear": growth_check(len(small), small_s, args.rows, full_s),
        "evalframe_eager_select_seconds": round(eager_s, 4),
        "ratio_eager_select": round(scaled_reference_s / eager_s, 2),
        "ratio": round(ratio, 2),
        "target_ratio": TARGET_RATIO,
        "meets_target": ratio >= TARGET_RATIO,
        "apply_filters_chain_seconds_on_sample": round(chain_s, 4),
        "identical_to_reference": identical,
        "peak_rss_mb": round(peak_rss_mb(), 1),
    }
    print(summary)
    write_results("extract_regex", summary)


if __name__ == "__main__":
    main()
