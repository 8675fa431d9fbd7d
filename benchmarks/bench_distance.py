"""String distances and TER: evalframe vs lighteval's StringDistance and sacrebleu, one process.

Usage: ``python benchmarks/bench_distance.py [--rows N] [--ter-rows M] [--seed S] [--repeat R]``

One seeded workload of ``N`` (prediction, gold) pairs of 20-30 words each, from a realistic
vocabulary (English words, contractions, punctuation and quotes, numbers, some French,
German and Russian words): the gold is a passage, the prediction copies a random prefix
of it and then drifts (substituted, dropped and new words), as a memorisation probe does.

- **String distance** (the target): lighteval 0.13.0's ``StringDistance`` as its
  ``copyright`` metric builds it (``metric_types=["edit_distance", "edit_similarity"]``,
  ``strip_prediction=True``), its ``compute`` called on every row, against evalframe's
  ``edit_distance`` + ``edit_similarity`` through ``ef.score`` (one frame, both metrics).
  The values are checked equal row by row. lighteval's module imports torch at the top,
  so the class is executed from the installed source file (as the conformance test does).
- **TER** (recorded, no target): ``sacrebleu.corpus_ter`` against evalframe's ``ter`` +
  its reduction on the first ``M`` rows. evalframe computes TER's segment statistics
  with sacrebleu itself (over the distinct pairs), so the time is of the same order.

The first call in a process (building the tokeniser's character tables) is timed apart,
on 100 rows, before anything else runs. Results go to ``benchmarks/results/distance.json``.
Target: the string distances at least 20x faster than lighteval at 100,000 rows.
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import logging
import time
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
from _harness import heap_peak_mb, linearity, peak_rss_mb, timed, write_results

import evalframe as ef
from evalframe.metrics import distance

RESULTS = Path(__file__).resolve().parent / "results" / "distance.json"
METRICS = ["edit_distance", "edit_similarity"]

VOCABULARY = str.split(
    "the of and to in a is that for it as was with be by on not he I this are or his from at "
    "which but have an had they you were their one all we can her has there been if more when "
    "will would who so no said time people year way day man thing woman life child world "
    "school state family student group country problem hand part place case week company "
    "system program question work government number night point home water room mother area "
    "money story fact month lot right study book eye job word business issue side kind head "
    "house service friend father power hour game line end member law car city community name "
    "don't it's I'm they'll we're you've can't won't isn't cannot gonna "
    "1 2 3 10 25 100 1,000 2019 2024 3.5 42% $20 #1 "
    ", , , . . ; : ! ? ( ) \" ' -- ... “ ” — "
    "café naïve été déjà über Größe straße résumé Привет мир книга"
)


def workload(rows: int, seed: int) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    vocabulary = np.array(VOCABULARY, dtype=object)
    predictions, golds = [], []
    for _ in range(rows):
        gold = vocabulary[rng.integers(0, len(vocabulary), rng.integers(20, 31))].tolist()
        keep = int(rng.integers(0, len(gold) + 1))
        prediction = list(gold[:keep])
        for word in gold[keep:]:
            draw = rng.random()
            if draw < 0.5:
                prediction.append(word)
            elif draw < 0.8:
                prediction.append(vocabulary[rng.integers(0, len(vocabulary))])
            elif draw < 0.9:
                prediction.extend(vocabulary[rng.integers(0, len(vocabulary), 2)].tolist())
        golds.append(" ".join(gold))
        predictions.append(" ".join(prediction) + (" " if rng.random() < 0.1 else ""))
    return pl.DataFrame({"prediction": predictions, "gold": golds})


def load_string_distance():
    from lighteval.tasks.requests import Doc
    from lighteval.utils.utils import as_list
    from nltk.metrics.distance import edit_distance
    from nltk.tokenize.treebank import TreebankWordTokenizer

    spec = importlib.util.find_spec("lighteval")
    path = Path(next(iter(spec.submodule_search_locations))) / "metrics" / "metrics_sample.py"
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = {"SampleLevelComputation", "StringDistance"}
    body = [node for node in tree.body if isinstance(node, ast.ClassDef) and node.name in names]
    namespace: dict[str, Any] = {
        "np": np, "ABC": ABC, "abstractmethod": abstractmethod, "as_list": as_list,
        "Doc": Doc, "ModelResponse": object, "logger": logging.getLogger("lighteval"),
        "edit_distance": edit_distance, "TreebankWordTokenizer": TreebankWordTokenizer,
    }
    exec(compile(ast.Module(body=body, type_ignores=[]), str(path), "exec"), namespace)
    return namespace["StringDistance"], Doc


class Response:
    def __init__(self, text: list[str]):
        self.text = text

    @property
    def final_text(self) -> list[str]:
        return self.text


def lighteval_scores(predictions: list[str], golds: list[str]) -> dict[str, list[float]]:
    string_distance, doc_type = load_string_distance()
    metric = string_distance(metric_types=METRICS, strip_prediction=True)
    out: dict[str, list[float]] = {name: [] for name in METRICS}
    for prediction, gold in zip(predictions, golds, strict=True):
        result = metric.compute(doc=doc_type(query="", choices=[gold], gold_index=0),
                                model_response=Response([prediction]))
        for name in METRICS:
            out[name].append(result[name])
    return out


def evalframe_scores(frame: pl.DataFrame) -> pl.DataFrame:
    # forget the results of earlier runs (the kernel keeps its last batches' results so
    # metrics of one request share them): every timed run computes from the texts
    distance._kernel.cache_clear()
    return ef.score(frame, METRICS)


def evalframe_ter(frame: pl.DataFrame) -> float:
    return float(ef.aggregate(ef.score(frame, ["ter"]), metrics=["ter"])["value"].item())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--ter-rows", type=int, default=5_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=3, help="evalframe runs (best is kept)")
    args = parser.parse_args()

    frame = workload(args.rows, args.seed)
    start = time.perf_counter()
    evalframe_scores(frame.head(100))
    first_call_s = time.perf_counter() - start

    ours_s, scored = timed(lambda: evalframe_scores(frame), args.repeat)
    heap_mb = heap_peak_mb(lambda: evalframe_scores(frame))
    rss_after_ours = peak_rss_mb()
    ref_s, reference = timed(
        lambda: lighteval_scores(frame["prediction"].to_list(), frame["gold"].to_list()), 1
    )
    rss_after_ref = peak_rss_mb()
    equal = {name: scored[name].to_list() == reference[name] for name in METRICS}
    ratio = ref_s / ours_s
    print(f"rows={args.rows:,}  lighteval {ref_s:8.2f} s  evalframe {ours_s:6.3f} s  "
          f"ratio {ratio:6.1f}x  first call {first_call_s:.3f} s  equal {equal}")
    print(f"  peak RSS {rss_after_ours:.0f} MiB -> {rss_after_ref:.0f} MiB; evalframe Python "
          f"heap peak {heap_mb:.0f} MiB")

    import sacrebleu

    ter_frame = frame.head(args.ter_rows)
    hypotheses, references = ter_frame["prediction"].to_list(), [ter_frame["gold"].to_list()]
    ter_ref_s, ter_reference = timed(lambda: sacrebleu.corpus_ter(hypotheses, references), 1)
    ter_ours_s, ter_ours = timed(lambda: evalframe_ter(ter_frame), 1)
    ter_difference = abs(ter_ours - ter_reference.score)
    print(f"TER rows={args.ter_rows:,}  sacrebleu {ter_ref_s:.2f} s  evalframe {ter_ours_s:.2f} s"
          f"  ratio {ter_ref_s / ter_ours_s:.2f}x  |diff| {ter_difference:.1e}")

    summary = {
        "benchmark": "distance",
        "reference": (
            "lighteval 0.13.0 StringDistance(metric_types=['edit_distance', "
            "'edit_similarity'], strip_prediction=True).compute per row (nltk 3.10 "
            "TreebankWordTokenizer and edit_distance)"
        ),
        "evalframe": "ef.score(frame, ['edit_distance', 'edit_similarity'])",
        "workload": (
            f"{args.rows:,} pairs of 20-30 words (English, contractions, punctuation, "
            f"numbers, some French/German/Russian); prediction copies a prefix of the gold "
            f"then drifts; seed {args.seed}"
        ),
        "rows": args.rows,
        "reference_seconds": ref_s,
        "evalframe_seconds": ours_s,
        "ratio": ratio,
        "target": "evalframe >= 20x faster than lighteval's StringDistance at 100,000 rows",
        "meets_target": ratio >= 20,
        "values_equal": equal,
        "first_call_seconds_100_rows": first_call_s,
        "evalframe_python_heap_peak_mb": heap_mb,
        "process_peak_rss_mb_after_evalframe": rss_after_ours,
        "process_peak_rss_mb_after_reference": rss_after_ref,
        "ter": {
            "rows": args.ter_rows,
            "reference": "sacrebleu 2.6.0 corpus_ter (defaults)",
            "evalframe": "ef.score(['ter']) + ef.aggregate (segment statistics by sacrebleu)",
            "reference_seconds": ter_ref_s,
            "evalframe_seconds": ter_ours_s,
            "ratio": ter_ref_s / ter_ours_s,
            "score_sacrebleu": ter_reference.score,
            "score_evalframe": ter_ours,
            "abs_difference": ter_difference,
        },
    }

    def make(rows: int):
        data = workload(rows, args.seed + 1)
        return lambda: evalframe_scores(data)

    summary["no_superlinear"] = linearity(
        make, max(args.rows // 10, 1), args.rows, args.repeat, label="distance"
    )
    write_results(RESULTS.stem, summary)


if __name__ == "__main__":
    main()
