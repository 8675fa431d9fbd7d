"""Corpus chrF: evalframe vs sacrebleu 2.6.0's ``corpus_chrf``, one process.

Usage: ``python benchmarks/bench_chrf.py [--rows N] [--seed S] [--repeat R]``

One seeded workload of ``N`` (hypothesis, reference) sentence pairs: each reference has
20-30 words drawn from a vocabulary of common English words, numbers (years, decimals,
thousands with commas, percentages), proper names and some non-ASCII words (French,
German, Spanish, Russian, Greek, Japanese, Chinese, curly quotes, dashes), with commas,
full stops, question marks, parentheses and quotes attached as in running text. Each
hypothesis is its reference as a translation system garbles it: about 70% of the words
kept, 15% replaced by another vocabulary word, 8% dropped, neighbours swapped now and
then, and an extra word inserted here and there (sentence chrF around 55-75).

Both sides score the corpus:

- reference: ``sacrebleu.corpus_chrf(hypotheses, [references])`` (char order 6, word
  order 0, beta 2), timed once;
- evalframe: the ``chrf`` statistics expression over the two columns, the column sums in
  the same lazy plan, and the metric's reduction formula (best of ``--repeat`` runs).

The scores are compared, the per-row statistics are checked equal to sacrebleu's
``_extract_corpus_statistics`` on a sample of rows, and the timings, the ratio, the peak
memory (process RSS and the traced Python/numpy heap of one evalframe run) and the cost
of the first call in a fresh process are printed and written to
``benchmarks/results/chrf.json``. The issue's target is for ``bleu`` + ``chrf`` together:
at least 5x faster than ``corpus_bleu`` + ``corpus_chrf``; this script times chrF alone.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import polars as pl
from _harness import heap_peak_mb, linearity, peak_rss_mb, timed, write_results

from evalframe.metrics import chrf, resolve

RESULTS = Path(__file__).resolve().parent / "results" / "chrf.json"

_WORDS = (
    "the of and to in is was for on that with as by at from it an be this are which have "
    "has had not but or they their there been were will would can could should more most "
    "new year years people time government report council market company said says also "
    "after before between during against under over about into through until while when "
    "where who whom what why how than then them these those such only other some any each "
    "first second last next many much several every city country state world water energy "
    "policy economy president minister members committee parliament agreement decision "
    "european national international economic social political public private security "
    "2019 2020 2021 2023 2024 1,000 15,000 3.5 12.7 100 42 7 25% 0.5% €20 $300 "
    "Paris London Berlin Madrid Moscow Tokyo Beijing Brussels Geneva Obama Merkel Macron "
    "été naïve café über Straße Größe résumé déjà Ångström señor año niño façade coöperate "
    "Привет мир язык модель данные правительство "
    "λόγος γλώσσα δεδομένα "
    "東京 日本語 言語 中文 语言 "
    "“quoted” ‘single’ — – … it’s l’été d’accord"
)
VOCABULARY = _WORDS.split()
#: What follows a word: (suffix, weight).
SUFFIXES = [("", 880), (",", 60), (".", 20), (";", 5), (":", 5), ("?", 5), ("!", 3), (")", 6),
            ("'s", 8), ('"', 4)]
#: What precedes a word: (prefix, weight).
PREFIXES = [("", 980), ("(", 8), ('"', 7), ("'", 3), ("-", 2)]


def _choice(rng: np.random.Generator, table: list[tuple[str, int]], size: int) -> pl.Series:
    weights = np.array([w for _, w in table], dtype=np.float64)
    picks = rng.choice(len(table), size=size, p=weights / weights.sum())
    return pl.Series([s for s, _ in table]).gather(picks)


def workload(rows: int, seed: int) -> pl.DataFrame:
    """``hypothesis`` and ``reference`` (str): ``rows`` sentence pairs of 20-30 words."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(20, 31, rows)
    total = int(lengths.sum())
    words = pl.Series(VOCABULARY).gather(rng.integers(0, len(VOCABULARY), total))
    tokens = pl.DataFrame(
        {
            "row": np.repeat(np.arange(rows), lengths),
            "prefix": _choice(rng, PREFIXES, total),
            "word": words,
            "suffix": _choice(rng, SUFFIXES, total),
        }
    ).select("row", pl.concat_str("prefix", "word", "suffix").alias("word"))
    # the hypothesis: keep, replace, drop; some neighbours swapped; some words inserted
    roll = rng.random(total)
    replacement = pl.Series(VOCABULARY).gather(rng.integers(0, len(VOCABULARY), total))
    order = np.arange(total, dtype=np.float64)
    order[rng.random(total) < 0.04] += 1.5  # moves the word after its right neighbour
    insert = rng.random(total) < 0.05
    extra = pl.Series(VOCABULARY).gather(rng.integers(0, len(VOCABULARY), total))
    hyp_tokens = (
        tokens.with_columns(
            word=pl.when(pl.lit(roll < 0.15)).then(pl.lit(replacement)).otherwise("word"),
            order=pl.lit(order),
            dropped=pl.lit(roll >= 0.92),
            extra=pl.when(pl.lit(insert)).then(pl.lit(extra)),
        )
        .filter(~pl.col("dropped"))
        .sort("row", "order")
        .with_columns(
            word=pl.when(pl.col("extra").is_not_null())
            .then(pl.concat_str("word", pl.lit(" "), "extra"))
            .otherwise("word")
        )
    )

    def sentences(frame: pl.DataFrame) -> pl.Series:
        joined = frame.group_by("row", maintain_order=True).agg(pl.col("word").str.join(" "))
        full = pl.DataFrame({"row": np.arange(rows)}).join(joined, on="row", how="left")
        return (full["word"].fill_null("") + ".").rename("text")

    return pl.DataFrame(
        {"hypothesis": sentences(hyp_tokens), "reference": sentences(tokens)}
    )


def evalframe_score(frame: pl.DataFrame) -> float:
    """The statistics expression, its column sums in the same plan, then the formula."""
    spec, _ = resolve("chrf")
    fields = [f.name for f in spec.statistics.fields]
    sums = (
        frame.lazy()
        .select(chrf("hypothesis", "reference").alias("s"))
        .select(pl.col("s").struct.field(name).sum() for name in fields)
        .collect()
    )
    return float(spec.reduction().formula({name: sums[name].to_numpy() for name in fields})[0])


_FIRST_CALL = """
import json, sys, time
data = json.load(sys.stdin)
t0 = time.perf_counter()
import polars as pl
import evalframe.metrics as M
t1 = time.perf_counter()
frame = pl.DataFrame({"h": data["h"], "r": data["r"]})
def run():
    return frame.select(M.chrf("h", "r").alias("s")).unnest("s").sum()
t2 = time.perf_counter(); run(); t3 = time.perf_counter(); run(); t4 = time.perf_counter()
print(t1 - t0, t3 - t2, t4 - t3)
"""


def first_call_seconds(frame: pl.DataFrame) -> dict[str, float]:
    """In a fresh process: import time, the first call on 1,000 rows, and a second call."""
    small = frame.head(1000)
    data = json.dumps({"h": small["hypothesis"].to_list(), "r": small["reference"].to_list()})
    out = subprocess.run(
        [sys.executable, "-c", _FIRST_CALL], input=data, capture_output=True, text=True,
        check=True,
    )
    imported, first, second = (float(x) for x in out.stdout.split())
    return {"import_seconds": imported, "first_call_seconds": first, "second_call_seconds": second}


def statistics_equal(frame: pl.DataFrame, sample: int, seed: int) -> bool:
    """Row statistics equal to sacrebleu's own segment statistics on ``sample`` rows."""
    from sacrebleu.metrics import CHRF

    rows = np.random.default_rng(seed).choice(frame.height, size=min(sample, frame.height),
                                              replace=False)
    part = frame[np.sort(rows)]
    ours = part.select(chrf("hypothesis", "reference").alias("s")).unnest("s").rows()
    theirs = CHRF()._extract_corpus_statistics(
        part["hypothesis"].to_list(), [part["reference"].to_list()]
    )
    return [list(row) for row in ours] == [list(row) for row in theirs]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=3, help="evalframe runs (best is kept)")
    args = parser.parse_args()

    import sacrebleu

    frame = workload(args.rows, args.seed)
    hypotheses, references = frame["hypothesis"].to_list(), frame["reference"].to_list()
    first = first_call_seconds(frame)
    evalframe_score(frame.head(1000))  # warm-up: thread pool, tables

    ours_s, ours = timed(lambda: evalframe_score(frame), args.repeat)
    rss_after_ours = peak_rss_mb()
    heap_mb = heap_peak_mb(lambda: evalframe_score(frame))
    ref_s, reference = timed(lambda: sacrebleu.corpus_chrf(hypotheses, [references]).score, 1)
    rss_after_ref = peak_rss_mb()
    equal = statistics_equal(frame, 5000, args.seed)

    ratio = ref_s / ours_s
    words = frame["reference"].str.split(" ").list.len().mean()
    print(
        f"rows={args.rows:,} (~{words:.1f} words per reference)  sacrebleu {ref_s:7.3f} s  "
        f"evalframe {ours_s:6.3f} s  ratio {ratio:5.1f}x"
    )
    print(f"  chrF evalframe {ours!r}  sacrebleu {reference!r}  |diff| {abs(ours - reference):.1e}")
    print(f"  statistics equal to sacrebleu's on 5,000 rows: {equal}")
    print(f"  peak RSS {rss_after_ours:.0f} MiB (after evalframe) -> {rss_after_ref:.0f} MiB; "
          f"traced heap of one evalframe run {heap_mb:.0f} MiB")
    print(f"  fresh process: {json.dumps(first)}")

    summary = {
        "benchmark": "chrf",
        "reference": "sacrebleu 2.6.0: sacrebleu.corpus_chrf(hypotheses, [references])",
        "evalframe": (
            "chrf statistics over the two columns, their column sums in one lazy plan, and "
            "the reduction's formula (CHRF._compute_f_score)"
        ),
        "workload": (
            f"{args.rows:,} sentence pairs, references of 20-30 words (mixed vocabulary with "
            f"punctuation, numbers, non-ASCII words), hypotheses garbled from them; seed "
            f"{args.seed}"
        ),
        "rows": args.rows,
        "reference_seconds": ref_s,
        "evalframe_seconds": ours_s,
        "ratio": ratio,
        "target": (
            "bleu + chrf together at least 5x faster than corpus_bleu + corpus_chrf "
            "(chrf alone timed here)"
        ),
        "scores": {"evalframe": ours, "sacrebleu": reference},
        "absolute_difference": abs(ours - reference),
        "statistics_equal_on_5000_rows": equal,
        "first_call_in_fresh_process": first,
        "evalframe_traced_heap_peak_mb": heap_mb,
        "process_peak_rss_mb_after_evalframe": rss_after_ours,
        "process_peak_rss_mb_after_reference": rss_after_ref,
    }

    def make(rows: int):
        data = workload(rows, args.seed + 1)
        return lambda: evalframe_score(data)

    summary["no_superlinear"] = linearity(
        make, max(args.rows // 10, 1), args.rows, args.repeat, label="chrf"
    )
    write_results(RESULTS.stem, summary)


if __name__ == "__main__":
    main()
