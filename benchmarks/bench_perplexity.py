"""Perplexity family from a text column: evalframe vs lm-eval's functions, one process.

Usage: ``python benchmarks/bench_perplexity.py [--rows N] [--seed S] [--repeat R]``

One seeded workload of ``N`` documents of realistic multilingual text (English, French,
German, Russian, Greek, Japanese, Chinese words, emoji, digits, curly quotes and dashes;
separated mostly by spaces, with newlines, paragraph breaks, tabs, no-break and
ideographic spaces) and a log-likelihood per document (``-bytes * ln 2 * bpb`` with
``bpb ~ U[0.6, 1.4]``) is scored for ``word_perplexity``, ``byte_perplexity`` and
``bits_per_byte`` by both:

- reference (lm-eval 0.4.13): per document ``PerplexityTask.count_words(doc)`` and
  ``count_bytes(doc)`` (what ``process_results`` computes), then
  ``lm_eval.api.metrics.weighted_perplexity`` over the word items and over the byte
  items, and ``bits_per_byte`` over the byte items;
- evalframe: the three statistics expressions (lengths counted from ``text``), their
  column sums in the same lazy plan, and each metric's reduction formula.

The scores are compared (relative difference), the word and byte counts are checked
equal row by row, and the timings, their ratio and the peak memory are printed and
written to ``benchmarks/results/perplexity.json``. For context the plain-polars word
count (``str.count_matches`` of Python's whitespace class) is timed as well.
Target: evalframe at least 20x faster at 1,000,000 documents.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import polars as pl
from _harness import linearity, peak_rss_mb, timed, write_results

from evalframe.metrics import bits_per_byte, byte_perplexity, resolve, word_perplexity
from evalframe.normalize._python_text import whitespace_class

RESULTS = Path(__file__).resolve().parent / "results" / "perplexity.json"

_WORDS = (
    "the of and to in is was for on that with as by at from it an be this are which "
    "model data language evaluation results score perplexity token corpus 2024 3.14 100 "
    "été naïve café über straße Größe résumé déjà Ångström "
    "Привет мир язык модель данные "
    "λόγος γλώσσα δεδομένα "
    "東京 日本語 言語 モデル データ 評価 "
    "中文 语言 模型 数据 "
    "🙂 🚀 👩‍🔬 "
    "“quoted” ‘single’ — – … it’s l’été"
)
VOCABULARY = _WORDS.split()
#: (separator, weight): mostly one space, the rest as in scraped web and wiki text.
SEPARATORS = [
    (" ", 880), ("\n", 30), ("\n\n", 15), (", ", 30), (". ", 25), ("\t", 4),
    ("  ", 6), ("\u00a0", 4), ("\u3000", 3), ("\u2009", 1), (" \n", 2),
]


def workload(rows: int, seed: int) -> pl.DataFrame:
    """``text`` (str) and ``loglikelihood`` (f64): ``rows`` documents of ~60 words."""
    rng = np.random.default_rng(seed)
    lengths = np.clip(rng.lognormal(mean=3.9, sigma=0.6, size=rows).astype(np.int64), 1, 400)
    total = int(lengths.sum())
    words = pl.Series(VOCABULARY).gather(rng.integers(0, len(VOCABULARY), total))
    weights = np.array([w for _, w in SEPARATORS], dtype=np.float64)
    separators = pl.Series([s for s, _ in SEPARATORS]).gather(
        rng.choice(len(SEPARATORS), size=total, p=weights / weights.sum())
    )
    tokens = pl.DataFrame(
        {"doc": np.repeat(np.arange(rows), lengths), "word": words, "sep": separators}
    )
    texts = (
        tokens.group_by("doc", maintain_order=True)
        .agg(pl.concat_str("word", "sep").str.join(""))
        .get_column("word")
    )
    # some documents open with whitespace; the last separator is kept (a trailing one)
    lead = rng.random(rows) < 0.05
    texts = pl.select(
        pl.when(pl.lit(pl.Series(lead))).then(pl.lit(" ") + pl.lit(texts)).otherwise(pl.lit(texts))
    ).to_series()
    bits = rng.uniform(0.6, 1.4, rows)
    loglikelihood = -texts.str.len_bytes().cast(pl.Float64).to_numpy() * np.log(2) * bits
    return pl.DataFrame({"text": texts, "loglikelihood": loglikelihood})


METRICS = {
    "word_perplexity": word_perplexity,
    "byte_perplexity": byte_perplexity,
    "bits_per_byte": bits_per_byte,
}


def evalframe_scores(frame: pl.DataFrame) -> dict[str, float]:
    """Statistics expressions, their sums in the same plan, then each reduction's formula."""
    stats = [
        function("loglikelihood", text="text").alias(name) for name, function in METRICS.items()
    ]
    fields = {name: [f.name for f in resolve(name)[0].statistics.fields] for name in METRICS}
    sums = (
        frame.lazy()
        .select(stats)
        .select(
            pl.col(name).struct.field(field).sum().alias(f"{name}.{field}")
            for name in METRICS
            for field in fields[name]
        )
        .collect()
    )
    return {
        name: float(
            resolve(name)[0]
            .reduction()
            .formula({field: sums[f"{name}.{field}"].to_numpy() for field in fields[name]})[0]
        )
        for name in METRICS
    }


def reference_scores(docs: list[str], loglikelihoods: list[float]) -> tuple[dict, list, list]:
    from lm_eval.api.metrics import bits_per_byte as lm_bits_per_byte
    from lm_eval.api.metrics import weighted_perplexity
    from lm_eval.api.task import PerplexityTask

    count_words, count_bytes = PerplexityTask.count_words, PerplexityTask.count_bytes
    word_items, byte_items = [], []
    for doc, ll in zip(docs, loglikelihoods, strict=True):
        word_items.append((ll, count_words(doc)))
        byte_items.append((ll, count_bytes(doc)))
    scores = {
        "word_perplexity": weighted_perplexity(word_items),
        "byte_perplexity": weighted_perplexity(byte_items),
        "bits_per_byte": lm_bits_per_byte(byte_items),
    }
    return scores, word_items, byte_items


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=3, help="evalframe runs (best is kept)")
    args = parser.parse_args()

    import lm_eval.api.task  # noqa: F401  (imported before timing, as a harness has it)

    frame = workload(args.rows, args.seed)
    docs, loglikelihoods = frame["text"].to_list(), frame["loglikelihood"].to_list()
    text_bytes = int(frame["text"].str.len_bytes().sum())
    evalframe_scores(frame.head(1000))  # warm-up: imports, thread pool, tables

    ours_s, ours = timed(lambda: evalframe_scores(frame), args.repeat)
    rss_after_ours = peak_rss_mb()
    pattern = whitespace_class() + "+"
    plain_s, _ = timed(
        lambda: frame.select(pl.col("text").str.count_matches(pattern).sum()), args.repeat
    )
    ref_s, (reference, word_items, byte_items) = timed(
        lambda: reference_scores(docs, loglikelihoods), 1
    )
    rss_after_ref = peak_rss_mb()

    counted = frame.select(
        word_perplexity("loglikelihood", text="text").struct.field("n_words"),
        byte_perplexity("loglikelihood", text="text").struct.field("n_bytes"),
    )
    counts_equal = counted["n_words"].to_list() == [w for _, w in word_items] and counted[
        "n_bytes"
    ].to_list() == [b for _, b in byte_items]
    differences = {
        name: abs(ours[name] - reference[name]) / abs(reference[name]) for name in METRICS
    }
    ratio = ref_s / ours_s
    print(
        f"rows={args.rows:,} ({text_bytes / 2**20:.0f} MiB of text)  lm-eval {ref_s:7.3f} s  "
        f"evalframe {ours_s:6.3f} s  ratio {ratio:6.1f}x  (polars count_matches alone "
        f"{plain_s:.3f} s)  counts equal: {counts_equal}"
    )
    for name in METRICS:
        print(
            f"  {name:16s} evalframe {ours[name]:.15g}  lm-eval {reference[name]:.15g}  "
            f"rel diff {differences[name]:.1e}"
        )
    print(f"  peak RSS {rss_after_ours:.0f} MiB -> {rss_after_ref:.0f} MiB")

    summary = {
        "benchmark": "perplexity",
        "reference": (
            "lm-eval 0.4.13: PerplexityTask.count_words / count_bytes per document, then "
            "lm_eval.api.metrics.weighted_perplexity (words, bytes) and bits_per_byte"
        ),
        "evalframe": (
            "word_perplexity, byte_perplexity, bits_per_byte statistics from the text column, "
            "their sums in one lazy plan, and the reductions' formulas"
        ),
        "workload": (
            f"{args.rows:,} multilingual documents, ~60 words (lognormal), "
            f"{text_bytes / 2**20:.0f} MiB of UTF-8; seed {args.seed}"
        ),
        "rows": args.rows,
        "text_mib": text_bytes / 2**20,
        "reference_seconds": ref_s,
        "evalframe_seconds": ours_s,
        "ratio": ratio,
        "polars_count_matches_seconds": plain_s,
        "target": "evalframe >= 20x faster at 1,000,000 documents",
        "meets_target": ratio >= 20,
        "counts_equal": counts_equal,
        "scores": {name: {"evalframe": ours[name], "lm_eval": reference[name]} for name in METRICS},
        "max_relative_difference": max(differences.values()),
        "process_peak_rss_mb_after_evalframe": rss_after_ours,
        "process_peak_rss_mb_after_reference": rss_after_ref,
    }

    def make(rows: int):
        data = workload(rows, args.seed + 1)
        return lambda: evalframe_scores(data)

    summary["no_superlinear"] = linearity(
        make, max(args.rows // 10, 1), args.rows, args.repeat, label="perplexity"
    )
    write_results(RESULTS.stem, summary)


if __name__ == "__main__":
    main()
