"""Loading an lm-eval ``--log_samples`` file: ``ef.load`` vs ``pl.read_ndjson``, one process.

Usage: ``python benchmarks/bench_load_lm_eval.py [--megabytes M] [--seed S] [--repeat R]
[--keep]``

Writes a seeded ``samples_<task>_<date>.jsonl`` of about ``M`` MB (default 1000) in lm-eval
0.4.13's layout (``EvaluationTracker.save_results_samples``): a 5-shot, 4-choice
multiple-choice task whose lines hold the ``doc`` (question, choices, label), the stringified
``target``, the ``arguments`` dict (``gen_args_<i>``: the few-shot context, repeated for each
choice, and the continuation), ``resps`` and ``filtered_resps`` as strings, ``filter``,
``metrics``, the three hashes and ``acc``/``acc_norm``; text in English, French, German,
Russian, Greek, Japanese and Chinese with emoji, next to a ``results_<date>.json``.

Timed, best of ``R``, in this process: ``pl.read_ndjson(path)`` (polars' own reader, types
from the first rows) and ``ef.load(path)`` (detection, the exact read, every canonical column:
choices, choice_logprobs, is_greedy, gold_index, harness.*). Target: ``ef.load`` no worse than
1.5x ``pl.read_ndjson``. The ratio goes to ``benchmarks/results/load_lm_eval.json``; the file is
deleted afterwards unless ``--keep``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import shutil
import tempfile
from pathlib import Path

import polars as pl
from _harness import growth_check, peak_rss_mb, timed, write_results

import evalframe as ef

_TEXT = (
    "the of and to in is was for on that with as by at from it an be this are which "
    "model data language evaluation results score question answer city river 2024 3.14 "
    "été naïve café über straße Größe résumé déjà Ångström Привет мир язык модель данные "
    "λόγος γλώσσα δεδομένα 東京 日本語 言語 モデル データ 評価 中文 语言 模型 数据 🙂 🚀 "
    "“quoted” — it’s l’été"
)
WORDS = _TEXT.split()
DATE = "2024-05-01T10-00-00.000001"


def _sentence(rng: random.Random, low: int, high: int) -> str:
    return " ".join(rng.choices(WORDS, k=rng.randint(low, high)))


def _line(rng: random.Random, doc_id: int, shots: list[str]) -> str:
    question = _sentence(rng, 12, 40) + "?"
    choices = [_sentence(rng, 1, 8) for _ in range(4)]
    label = rng.randrange(4)
    context = "".join(shots) + f"Question: {question}\nAnswer:"
    logprobs = [-rng.uniform(0.1, 30.0) for _ in choices]
    pairs = [[str(value), str(value == max(logprobs))] for value in logprobs]
    best = max(range(4), key=lambda i: logprobs[i])
    norm = max(range(4), key=lambda i: logprobs[i] / len(choices[i]))
    record = {
        "doc_id": doc_id,
        "doc": {"question": question, "choices": choices, "label": label},
        "target": str(label),
        "arguments": {
            f"gen_args_{i}": {"arg_0": context, "arg_1": f" {choice}"}
            for i, choice in enumerate(choices)
        },
        "resps": [[pair] for pair in pairs],
        "filtered_resps": pairs,
        "filter": "none",
        "metrics": ["acc", "acc_norm"],
        "doc_hash": hashlib.sha256(question.encode()).hexdigest(),
        "prompt_hash": hashlib.sha256(context.encode()).hexdigest(),
        "target_hash": hashlib.sha256(str(label).encode()).hexdigest(),
        "acc": float(best == label),
        "acc_norm": float(norm == label),
    }
    return json.dumps(record, ensure_ascii=False) + "\n"


def write_workload(folder: Path, megabytes: float, seed: int) -> tuple[Path, int]:
    """The samples file (about ``megabytes`` MB) and its number of lines."""
    rng = random.Random(seed)
    shots = [
        f"Question: {_sentence(rng, 12, 40)}?\nAnswer: {_sentence(rng, 1, 8)}\n\n" for _ in range(5)
    ]
    path = folder / f"samples_mmlu_like_{DATE}.jsonl"
    limit, size, rows = megabytes * 1e6, 0, 0
    with open(path, "w", encoding="utf-8") as handle:
        while size < limit:
            line = _line(rng, rows, shots)
            handle.write(line)
            size += len(line.encode("utf-8"))
            rows += 1
    results = {"results": {"mmlu_like": {"acc,none": 0.25}}, "versions": {"mmlu_like": 1.0},
               "configs": {"mmlu_like": {"target_delimiter": " "}}, "n-shot": {"mmlu_like": 5},
               "model_name": "bench/model"}  # fmt: skip
    (folder / f"results_{DATE}.json").write_text(json.dumps(results))
    return path, rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megabytes", type=float, default=1000.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="bench-lm-eval-")) / "bench__model"
    folder.mkdir()
    try:
        path, rows = write_workload(folder, args.megabytes, args.seed)
        size = path.stat().st_size / 1e6
        print(f"{rows:,} lines, {size:,.0f} MB: {path}")
        polars_time, plain = timed(lambda: pl.read_ndjson(path), args.repeat)
        del plain
        evalframe_time, frame = timed(lambda: ef.load(path), args.repeat)
        assert frame.height == rows
        assert frame.schema["choice_logprobs"] == pl.List(pl.Float64)
        scored = ef.score(frame.head(10_000), ["acc", "acc_norm"])
        assert scored["acc"].to_list() == scored["harness.acc"].to_list()
        del frame, scored
        ratio = evalframe_time / polars_time
        small_folder = folder.parent / "small" / folder.name
        small_folder.mkdir(parents=True)
        small_path, small_rows = write_workload(small_folder, args.megabytes / 10, args.seed + 1)
        small_time, _ = timed(lambda: ef.load(small_path), args.repeat)
        growth = growth_check(small_rows, small_time, rows, evalframe_time)
        print(f"no-superlinear: time per row x{growth['time_per_row_growth']:.2f} at {rows:,} vs "
              f"{small_rows:,} rows ({'ok' if growth['passes'] else 'SUPERLINEAR'})")
        print(f"pl.read_ndjson {polars_time:.2f} s, ef.load {evalframe_time:.2f} s: {ratio:.2f}x")
        write_results(
            "load_lm_eval",
            {
                "workload": "lm-eval 0.4.13 samples file, 5-shot 4-choice multiple choice, "
                "Unicode text",
                "rows": rows,
                "megabytes": round(size, 1),
                "seed": args.seed,
                "repeat": args.repeat,
                "polars_read_ndjson_s": round(polars_time, 3),
                "evalframe_load_s": round(evalframe_time, 3),
                "ratio": round(ratio, 3),
                "target_ratio": 1.5,
                "peak_rss_mb": round(peak_rss_mb(), 1),
                "no_superlinear": growth,
            },
        )
    finally:
        if not args.keep:
            shutil.rmtree(folder.parent, ignore_errors=True)


if __name__ == "__main__":
    main()
