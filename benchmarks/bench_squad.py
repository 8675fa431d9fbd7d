"""SQuAD EM + F1: evalframe against the official per-row functions, same workload, one process.

Two seeded workloads, both scored by default:

- ``ascii``: predictions of 1-8 words, 1-3 gold alternatives of 1-6 words, words drawn
  from a vocabulary of about 5,000 words with articles, punctuation, case and a few
  non-ASCII words (about 3% of the strings have a non-ASCII character);
- ``unicode``: the same shapes over a small vocabulary heavy in punctuation
  (``Paris,`` ``1,000`` ``Tower.`` ``(b)``), accents (``élan`` ``naïve`` ``über``),
  curly quotes, dashes, Greek capitals and a no-break space: about 38% of the
  strings have a non-ASCII character.

About 30% of alternatives copy the prediction. The reference is get_raw_scores' loop:
for each row, the golds that normalise to something (else [""]), then max over them of
compute_exact and of compute_f1 (transformers.data.metrics.squad_metrics).

evalframe computes squad_em and squad_f1 in one lazy with_columns (sharing their
work). The floor is a pass that lower-cases both columns and sums lengths.

    python benchmarks/bench_squad.py [--rows 200000,1000000] [--workload both]
        [--ascii-rows 200000,1000000,10000000] [--unicode-rows ...]

The reference is timed on min(rows, reference-rows) rows of each workload and scaled
linearly (it is a per-row loop); evalframe and the floor run on all rows, best of
``--repeats`` (rounds over all sizes, so a change in the machine's load touches them
alike). The CPU time of evalframe's best run over its wall time says how much of both
cores it uses. The time per row from each size to the next checks that nothing grows
faster than the rows (at most 1.3). Writes results/squad.json.
"""

from __future__ import annotations

import argparse
import itertools
import os
import time

import numpy as np
import polars as pl
from _harness import peak_rss_mb, write_results

from evalframe import metrics as M

VOCABULARY = [
    "the", "a", "an", "The", "A", "Paris", "France", "1973", "October", "cat", "dog's",
    "New", "York", "city,", "U.S.", "$12", "nearly", "river", "(born", "1850)", "Dr.",
    "king", "Queen", "of", "and", "in", "Élan", "naïve", "über", "Σοφία", "x", "y", "z",
] + [f"w{i}" for i in range(5000)]

#: A small vocabulary of words with punctuation, drawn with probability 0.9.
UNICODE_ASCII_WORDS = [
    "the", "a", "an", "The", "A", "THE", "Paris", "Paris,", "France", "France.", "1,000",
    "1973", "Tower.", "Eiffel", "(b)", "(a)", "U.S.", "Dr.", "city,", "dog's", "New",
    "York", "of", "and", "in", "river", "king", "Queen", "$12", "nearly", "x", "y", "z",
    "e.g.", "3.14", "well-known", "state-of-the-art", "x-ray", "an-the", "50%", "#1",
    "Tower", "tower", "river.", "king's", "Mr.", "St.", "born", "(1850)", "“", "i.e.",
]
#: Accents, curly quotes, dashes, Greek, a decomposed accent and a no-break space.
UNICODE_WORDS = [
    "élan", "naïve", "über", "Élan", "café", "Zürich", "São", "Ångström", "déjà",
    "“Paris”", "“the", "end”", "‘a’", "l’homme", "—", "–", "1939–1945", "the—end",
    "Σοφία", "ΟΔΟΣ", "Straße", "résumé", "cafe\u0301", "10\xa0km", "über-the", "…",
]


def _texts(rng: np.random.Generator, n: int, max_words: int, draw) -> pl.Series:
    """``n`` texts of 1..max_words words joined by single spaces."""
    words = draw(n * max_words)
    lengths = rng.integers(1, max_words + 1, n)
    keep = np.arange(max_words)[None, :] < lengths[:, None]
    owner = np.repeat(np.arange(n), lengths)
    return (
        pl.DataFrame({"row": owner, "w": words.filter(pl.Series(keep.ravel()))})
        .group_by("row", maintain_order=True)
        .agg(pl.col("w").str.join(" "))["w"]
    )


#: Rows generated at a time (bounds the generator's memory at 10M rows).
BLOCK_ROWS = 1_000_000


def workload(rows: int, seed: int = 0, kind: str = "ascii") -> pl.DataFrame:
    """The seeded ``kind`` workload: a ``pred`` string and a ``gold`` list per row.

    Generated in blocks of ``BLOCK_ROWS`` rows; the first block is seeded with ``seed``,
    block ``k`` with ``[seed, k]``.
    """
    blocks = [
        _workload_block(min(BLOCK_ROWS, rows - start), seed if start == 0 else [seed, k], kind)
        for k, start in enumerate(range(0, rows, BLOCK_ROWS))
    ]
    return pl.concat(blocks).rechunk()


def _workload_block(rows: int, seed, kind: str) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    if kind == "ascii":
        vocabulary = np.array(VOCABULARY, dtype=object)

        def draw(n: int) -> pl.Series:
            return pl.Series(vocabulary[rng.integers(0, len(vocabulary), n)], dtype=pl.String)
    else:
        plain = np.array(UNICODE_ASCII_WORDS, dtype=object)
        fancy = np.array(UNICODE_WORDS, dtype=object)

        def draw(n: int) -> pl.Series:
            words = plain[rng.integers(0, len(plain), n)]
            special = rng.random(n) < 0.1
            words[special] = fancy[rng.integers(0, len(fancy), int(special.sum()))]
            return pl.Series(words, dtype=pl.String)

    pred = _texts(rng, rows, 8, draw)
    n_gold = rng.integers(1, 4, rows)
    alt_row = np.repeat(np.arange(rows), n_gold)
    alternatives = _texts(rng, alt_row.size, 6, draw)
    copy = rng.random(alt_row.size) < 0.3
    alternatives = pl.select(
        pl.when(pl.lit(pl.Series(copy))).then(pl.lit(pred.gather(alt_row))).otherwise(
            pl.lit(alternatives)
        )
    ).to_series()
    gold = (
        pl.DataFrame({"row": alt_row, "g": alternatives})
        .group_by("row", maintain_order=True)
        .agg("g")["g"]
    )
    return pl.DataFrame({"pred": pred, "gold": gold})


def non_ascii_share(frame: pl.DataFrame) -> float:
    """The share of strings (predictions and alternatives) with a non-ASCII character."""
    strings = pl.concat([frame["pred"], frame["gold"].explode()])
    return float((strings.str.len_bytes() != strings.str.len_chars()).mean())


def reference_functions():
    """The official functions (imported before any timing: the import takes seconds)."""
    from transformers.data.metrics.squad_metrics import (
        compute_exact,
        compute_f1,
        normalize_answer,
    )

    return compute_exact, compute_f1, normalize_answer


def reference(frame: pl.DataFrame) -> tuple[list[int], list[float]]:
    compute_exact, compute_f1, normalize_answer = reference_functions()
    exact, f1 = [], []
    for prediction, answers in zip(frame["pred"].to_list(), frame["gold"].to_list(), strict=True):
        golds = [a for a in answers if normalize_answer(a)] or [""]
        exact.append(max(compute_exact(a, prediction) for a in golds))
        f1.append(max(compute_f1(a, prediction) for a in golds))
    return exact, f1


def evalframe_scores(frame: pl.DataFrame) -> pl.DataFrame:
    return (
        frame.lazy()
        .with_columns(
            M.squad_em("pred", "gold").alias("squad_em"),
            M.squad_f1("pred", "gold").alias("squad_f1"),
        )
        .collect()
    )


def floor(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.select(
        pl.col("pred").str.to_lowercase().str.len_bytes().sum(),
        pl.col("gold").list.eval(pl.element().str.to_lowercase().str.len_bytes()).list.sum().sum(),
    )


def best_of(repeats: int, function, *args) -> tuple[float, float, object]:
    """Best wall time, the CPU time of that run, and the result."""
    best, cpu, result = float("inf"), 0.0, None
    for _ in range(repeats):
        wall_start, cpu_start = time.perf_counter(), time.process_time()
        result = function(*args)
        wall, used = time.perf_counter() - wall_start, time.process_time() - cpu_start
        if wall < best:
            best, cpu = wall, used
    return best, cpu, result


def run_workload(kind: str, sizes: list[int], args) -> dict:
    largest = max(sizes)
    frame = workload(largest, args.seed, kind)
    parts = {rows: frame.head(rows) for rows in sizes}
    evalframe_scores(frame.head(1000))  # first-call tables, outside the timings
    # Rounds over every size and both passes, so that a change in the machine's load
    # touches all of them alike; the best of the rounds is kept for each.
    best = {rows: {"evalframe": (float("inf"), 0.0), "floor": float("inf")} for rows in sizes}
    for _ in range(args.repeats):
        for rows in sizes:
            wall, cpu, scored = best_of(1, evalframe_scores, parts[rows])
            if wall < best[rows]["evalframe"][0]:
                best[rows]["evalframe"] = (wall, cpu)
            best[rows]["floor"] = min(best[rows]["floor"], best_of(1, floor, parts[rows])[0])
            if rows == largest:
                largest_scored = scored
    runs = []
    for rows in sizes:
        (ours, cpu), floor_seconds = best[rows]["evalframe"], best[rows]["floor"]
        runs.append({
            "rows": rows,
            "evalframe_seconds": ours,
            "evalframe_cpu_over_wall": cpu / ours,
            "floor_seconds": floor_seconds,
            "ratio_evalframe_over_floor": ours / floor_seconds,
            "evalframe_us_per_row": ours / rows * 1e6,
        })
        print(f"{kind} {rows:>10,} rows: evalframe {ours:.3f} s (cpu/wall {cpu / ours:.2f}), "
              f"floor {floor_seconds:.4f} s, {ours / floor_seconds:.1f}x the floor", flush=True)

    reference_rows = min(largest, args.reference_rows)
    sample = frame.head(reference_rows)
    start = time.perf_counter()
    exact, f1 = reference(sample)
    measured = time.perf_counter() - start
    per_row = measured / reference_rows
    head = largest_scored.head(reference_rows)
    identical = head["squad_em"].to_list() == [float(v) for v in exact] and head[
        "squad_f1"
    ].to_list() == [float(v) for v in f1]
    for run in runs:
        run["reference_seconds"] = per_row * run["rows"]
        run["ratio_reference_over_evalframe"] = run["reference_seconds"] / run["evalframe_seconds"]
        print(f"{kind} {run['rows']:>10,} rows: reference {run['reference_seconds']:.2f} s, "
              f"{run['ratio_reference_over_evalframe']:.1f}x faster", flush=True)
    # Time per row from each size to the next (at most 1.3 when nothing is superlinear).
    steps = [
        {"from_rows": a["rows"], "to_rows": b["rows"],
         "per_row_time_ratio": b["evalframe_us_per_row"] / a["evalframe_us_per_row"],
         "floor_per_row_time_ratio": (b["floor_seconds"] / b["rows"])
         / (a["floor_seconds"] / a["rows"])}
        for a, b in itertools.pairwise(runs)
    ]
    for step in steps:
        print(f"{kind} per-row time {step['to_rows']:,} / {step['from_rows']:,} rows: "
              f"{step['per_row_time_ratio']:.2f} (floor {step['floor_per_row_time_ratio']:.2f})")
    return {
        "workload": kind,
        "non_ascii_share_of_strings": non_ascii_share(frame),
        "reference_rows_timed": reference_rows,
        "reference_seconds_measured": measured,
        "identical_to_reference": identical,
        "runs": runs,
        "per_row_time_steps": steps,
        "not_superlinear": all(step["per_row_time_ratio"] <= 1.3 for step in steps),
    }


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default="200000,1000000",
                        help="comma-separated sizes (default 200000,1000000)")
    parser.add_argument("--ascii-rows", help="sizes for the ascii workload (default --rows)")
    parser.add_argument("--unicode-rows", help="sizes for the unicode workload (default --rows)")
    parser.add_argument("--workload", choices=["ascii", "unicode", "both"], default="both")
    parser.add_argument("--reference-rows", type=int, default=200_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    kinds = ["ascii", "unicode"] if args.workload == "both" else [args.workload]

    def sizes(kind: str) -> list[int]:
        given = getattr(args, f"{kind}_rows") or args.rows
        return sorted(int(size) for size in given.split(","))

    reference_functions()
    load_before = os.getloadavg()
    workloads = [run_workload(kind, sizes(kind), args) for kind in kinds]
    targets = {"reference_over_evalframe_min": 40.0, "evalframe_over_floor_max": 10.0,
               "cpu_over_wall_min": 1.6}
    largest = [w["runs"][-1] for w in workloads]
    summary = {
        "benchmark": "squad_em + squad_f1",
        "reference": "transformers.data.metrics.squad_metrics get_raw_scores loop "
        "(compute_exact, compute_f1)",
        "workloads": workloads,
        "targets": targets,
        "meets_targets": all(w["identical_to_reference"] and w["not_superlinear"]
                             for w in workloads)
        and all(r["ratio_reference_over_evalframe"] >= 40.0 for r in largest)
        and all(r["ratio_evalframe_over_floor"] <= 10.0 for r in largest)
        and all(r["evalframe_cpu_over_wall"] >= 1.6 for r in largest),
        "load_average_before": load_before,
        "load_average_after": os.getloadavg(),
        "peak_memory_mib": peak_rss_mb(),
    }
    write_results("squad", summary)
    return summary


if __name__ == "__main__":
    main()
