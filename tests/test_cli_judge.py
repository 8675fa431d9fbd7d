"""The ``evalframe judge`` commands, run as a user runs them: in a subprocess."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from collections import Counter

import polars as pl
import pytest


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "evalframe", *args],
        capture_output=True, text=True, timeout=300, check=False,
    )


def pair_file(shared_data):
    return shared_data / "mtbench-fastchat-fork" / "gpt-4_pair.jsonl.gz"


def expected_outcomes(path) -> Counter:
    """FastChat's g1/g2 winners (g2 already mapped back to model names), classified by hand."""
    counts: Counter = Counter()
    for line in gzip.decompress(path.read_bytes()).decode().splitlines():
        row = json.loads(line)
        g1, g2 = row["g1_winner"], row["g2_winner"]
        if "error" in (g1, g2):
            counts["error"] += 1
        elif g1 == g2:
            counts[{"model_1": "A", "model_2": "B", "tie": "tie"}[g1]] += 1
        else:
            counts["inconsistent"] += 1
    return counts


def test_classify_report_and_the_win_rate_metric_on_mt_bench(shared_data, tmp_path):
    judged = tmp_path / "judged.parquet"
    done = run("judge", "classify", str(pair_file(shared_data)), "-o", str(judged))
    assert done.returncode == 0, done.stderr
    outcomes = pl.read_parquet(judged)["outcome"].to_list()
    expected = expected_outcomes(pair_file(shared_data))
    assert Counter(outcomes) == expected
    report = tmp_path / "report.json"
    done = run("judge", "report", str(judged), "--policy", "mtbench", "--by", "model_a",
               "-o", str(report))
    assert done.returncode == 0, done.stderr
    (row,) = json.loads(report.read_text())
    valid = sum(expected.values()) - expected["error"]
    # win_rate_a by the formula, errors out of the denominator
    win_rate = (expected["A"] + 0.5 * (expected["tie"] + expected["inconsistent"])) / valid
    assert row["n_valid"] == valid
    assert row["win_rate_a"] == pytest.approx(win_rate, rel=1e-12)
    # FastChat show_result: inconsistent counts as a tie
    assert (row["win"], row["loss"], row["tie"]) == (
        expected["A"], expected["B"], expected["tie"] + expected["inconsistent"]
    )
    scored = tmp_path / "scored.parquet"
    done = run("score", str(judged), "-m", "win_rate", "-o", str(scored), "--quiet")
    assert done.returncode == 0, done.stderr
    summary = tmp_path / "summary.json"
    done = run("aggregate", str(scored), "-o", str(summary), "--quiet")
    assert done.returncode == 0, done.stderr
    (metric,) = json.loads(summary.read_text())
    assert metric["n"] == valid and metric["n_null"] == expected["error"]
    assert metric["value"] == pytest.approx(win_rate, rel=1e-12)


def test_ratings_and_matrix_on_alpaca_eval(shared_data, tmp_path):
    folder = shared_data / "alpaca_eval"
    files = [
        str(folder / model / "weighted_alpaca_eval_gpt4_turbo" / "annotations.json.gz")
        for model in ("alpaca-7b", "claude-2.1", "gpt-3.5-turbo-1106")
    ]
    judged = tmp_path / "judged.parquet"
    assert run("judge", "classify", *files, "-o", str(judged)).returncode == 0
    out = tmp_path / "ratings.csv"
    done = run("judge", "ratings", str(judged), "--anchor", "gpt4_1106_preview=1000",
               "--bootstrap", "50", "-o", str(out), "--matrix")
    assert done.returncode == 0, done.stderr
    table = pl.read_csv(out)
    ratings = dict(table.select("model", "rating").rows())
    assert ratings["gpt4_1106_preview"] == 1000.0
    # every model loses to the baseline more often than it wins: rated below it, in order
    assert ratings["alpaca-7b"] < ratings["gpt-3.5-turbo-1106"] < ratings["claude-2.1"] < 1000
    assert "gpt4_1106_preview" in done.stdout  # the matrix


def test_judge_usage_errors(tmp_path):
    done = run("judge")
    assert done.returncode == 2
    path = tmp_path / "p.jsonl"
    path.write_text('{"question": "q", "answer_a": "a", "answer_b": "b"}\n')
    done = run("judge", "pairwise", str(path), "--model", "m", "--pattern", "x", "-o",
               str(tmp_path / "o.parquet"))
    assert done.returncode == 1
    assert "--pattern needs --template" in done.stderr
    done = run("judge", "grade", str(path), "--model", "m", "--scale", "7", "-o",
               str(tmp_path / "o.parquet"))
    assert done.returncode == 1
    assert "--scale expects LOW,HIGH" in done.stderr


@pytest.mark.parametrize("sub", ["pairwise", "grade", "classify", "report", "ratings"])
def test_help(sub):
    done = run("judge", sub, "--help")
    assert done.returncode == 0
    assert "usage: evalframe judge" in done.stdout


def test_pairwise_through_an_openai_compatible_server_then_a_cached_rerun(tmp_path):
    pytest.importorskip("openai", reason="openai is not installed")
    from tests.judge.fake_server import FakeServer

    def prefers_42(prompt: str) -> str:
        first = prompt.split("[The Start of the FIRST Answer]\n")[1].split("\n")[0]
        second = prompt.split("[The Start of the SECOND Answer]\n")[1].split("\n")[0]
        if ("42" in first) == ("42" in second):
            return "TIE"
        return "FIRST" if "42" in first else "SECOND"

    pairs = tmp_path / "pairs.jsonl"
    rows = [
        {"question": "6 x 7?", "answer_a": "42", "answer_b": "41", "model_b": "m"},
        {"question": "6 x 7?", "answer_a": "40", "answer_b": "42", "model_b": "m"},
        {"question": "Say hi", "answer_a": "hi", "answer_b": "hello {x}", "model_b": "m"},
    ]
    pairs.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    out, cache = tmp_path / "judged.parquet", tmp_path / "judge.sqlite"
    command = ["judge", "pairwise", str(pairs), "--model", "fake", "--cache", str(cache),
               "-o", str(out), "--quiet"]
    with FakeServer(responder=prefers_42, api_key="sk-test") as server:

        def env_run() -> subprocess.CompletedProcess:
            return subprocess.run(
                [sys.executable, "-m", "evalframe", *command, "--base-url", server.url,
                 "--api-key-env", "FAKE_KEY"],
                capture_output=True, text=True, timeout=120, check=False,
                env={**os.environ, "FAKE_KEY": "sk-test"},
            )

        command.remove("--quiet")
        done = env_run()
        assert done.returncode == 0, done.stderr
        assert server.requests == 6  # every row asked twice
        assert "judged 3 row(s): 6 replies, 6 new judgment(s) cached" in done.stderr
        judged = pl.read_parquet(out)
        assert judged["outcome"].to_list() == ["A", "B", "tie"]
        assert "sk-test" not in judged.write_csv() and "sk-test" not in done.stderr
        again = env_run()
        assert again.returncode == 0, again.stderr
        assert server.requests == 6  # a rerun with everything cached asks nothing
        assert "6 replies, 0 new judgment(s) cached (the cache holds 6)" in again.stderr
    report = run("judge", "report", str(out), "-o", str(tmp_path / "r.json"))
    assert report.returncode == 0, report.stderr
    (row,) = json.loads((tmp_path / "r.json").read_text())
    assert (row["wins_a"], row["wins_b"], row["ties"], row["win_rate_a"]) == (1, 1, 1, 0.5)
