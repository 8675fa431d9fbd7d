"""``evalframe gate``: its exit codes, outputs and errors, in process and as a user runs it.

The real-data test gates two SQuAD v1.1 leaderboard models article by article; its expected
p-values come from scipy's binomial test and statsmodels' Holm adjustment of the per-article
discordant counts (independent of the gate's code).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

import evalframe as ef
from evalframe.cli import main


def _write(tmp_path: Path, name: str, right: int, total: int, **extra) -> str:
    frame = pl.DataFrame({
        "sample_id": range(total),
        "task": ["a", "b"] * (total // 2),
        "prediction": ["a"] * right + ["b"] * (total - right),
        "gold": ["a"] * total,
        **extra,
    })
    path = tmp_path / f"{name}.parquet"
    ef.save(ef.score(frame, ["exact_match"]), path)
    return str(path)


@pytest.fixture
def dumps(tmp_path):
    return {
        "worse": _write(tmp_path, "worse", 250, 400),
        "base": _write(tmp_path, "base", 300, 400),
        "small": _write(tmp_path, "small", 8, 10),
    }


def test_a_regression_exits_1_with_a_summary(dumps, capsys):
    assert main(["gate", dumps["worse"], dumps["base"], "--mde", "0.05"]) == 1
    out = capsys.readouterr().out
    assert out.startswith("evalframe gate: REGRESSED (exit 1)")
    assert "exact_match" in out and "-0.1250" in out


def test_the_same_dump_passes_or_is_underpowered(dumps, capsys):
    # 400 identical pairs: at least mde = 0.05 discordant pairs are planned; one-sided exact
    # McNemar at 0.05 detects 0.05 with power > 0.8 on 400 pairs
    assert main(["gate", dumps["base"], dumps["base"], "--mde", "0.05"]) == 0
    assert "PASSED" in capsys.readouterr().out
    # too small to tell: 10 items cannot detect a regression of 0.01
    assert main(["gate", dumps["small"], dumps["small"], "--mde", "0.01"]) == 3
    assert "UNDERPOWERED" in capsys.readouterr().out


def test_json_and_markdown_for_ci_systems(dumps, tmp_path, capsys):
    summary = tmp_path / "summary.md"
    code = main(["gate", dumps["worse"], dumps["base"], "--mde", "0.05", "--by", "task",
                 "--format", "json", "--markdown", str(summary), "--quiet"])
    assert code == 1
    captured = capsys.readouterr()
    document = json.loads(captured.out)
    assert (document["status"], document["exit_code"]) == ("regressed", 1)
    assert [row["task"] for row in document["rows"]] == ["a", "b"]
    assert captured.err == ""
    assert summary.read_text().startswith("**evalframe gate: REGRESSED")


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--mde", "0"], "--mde 0.0 expected a number > 0"),
        (["--mde", "0.1", "--alpha", "2"], "--alpha"),
        (["--mde", "0.1", "--by", "tsk"], "--by tsk: the candidate's dump has no such column"),
        (["--mde", "0.1", "--method", "nope"], "invalid choice"),
        (["--mde", "0.1", "--cluster", "task", "--no-cluster"], "not both"),
        (["--mde", "0.1", "--higher-is-better", "x", "--lower-is-better", "x"],
         "cannot be both"),
    ],
)
def test_usage_errors_exit_2(dumps, capsys, arguments, message):
    assert main(["gate", dumps["base"], dumps["base"], *arguments]) == 2
    assert message in capsys.readouterr().err


def test_a_data_error_exits_1_and_says_what(dumps, tmp_path, capsys):
    missing = str(tmp_path / "nope.parquet")
    assert main(["gate", missing, dumps["base"], "--mde", "0.1"]) == 1
    assert "nope.parquet" in capsys.readouterr().err
    assert main(["gate", dumps["small"], dumps["base"], "--mde", "0.1"]) == 1
    err = capsys.readouterr().err
    assert "candidate's dump lacks 390 item(s)" in err
    assert main(["gate", dumps["small"], dumps["base"], "--mde", "0.1",
                 "--allow-unmatched"]) == 3


SQUAD = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "squad-explorer"


@pytest.mark.subprocess
def test_two_squad_leaderboard_models_gated_article_by_article(tmp_path):
    from scipy.stats import binomtest
    from statsmodels.stats.multitest import multipletests

    names = {"candidate": "r-netplus_ensemble_Microsoft_Research_Asia.json",
             "baseline": "BERT_ensemble_Google_AI_Language.json"}
    if not all((SQUAD / "predictions-v1.1" / name).is_file() for name in names.values()):
        pytest.skip("../shared/data/squad-explorer is absent: real-data test skipped")
    scored = {}
    for side, name in names.items():
        scored[side] = tmp_path / f"{side}.parquet"
        done = subprocess.run(
            [sys.executable, "-m", "evalframe", "score", str(SQUAD / "predictions-v1.1" / name),
             "--gold", str(SQUAD / "dev-v1.1-answers.jsonl"), "--on", "id", "-m", "squad_em",
             "-o", str(scored[side]), "--quiet"],
            capture_output=True, timeout=300, check=False,
        )
        assert done.returncode == 0, done.stderr.decode()
    report = tmp_path / "gate.json"
    done = subprocess.run(
        [sys.executable, "-m", "evalframe", "gate", str(scored["candidate"]),
         str(scored["baseline"]), "--mde", "0.02", "--by", "title", "--on", "id",
         "--json", str(report)],
        capture_output=True, timeout=300, check=False,
    )
    document = json.loads(report.read_text())
    assert done.returncode == document["exit_code"]
    assert done.stdout.decode().startswith(f"evalframe gate: {document['status'].upper()}")
    # the expected decision, article by article, from the per-question scores
    pairs = (
        pl.read_parquet(scored["candidate"]).select("id", "title", c="squad_em")
        .join(pl.read_parquet(scored["baseline"]).select("id", b="squad_em"), on="id")
        .group_by("title").agg(
            wins=((pl.col("c") == 1) & (pl.col("b") == 0)).sum(),
            losses=((pl.col("c") == 0) & (pl.col("b") == 1)).sum(),
            n=pl.len(),
        ).sort("title")
    )
    assert pairs.height == 48
    expected = [
        binomtest(w, w + lost, 0.5, alternative="less").pvalue if w + lost else 1.0
        for w, lost in zip(pairs["wins"], pairs["losses"], strict=True)
    ]
    adjusted = multipletests(expected, method="holm")[1]
    rows = sorted(document["rows"], key=lambda row: row["title"])
    assert [row["title"] for row in rows] == pairs["title"].to_list()
    assert [row["n_pairs"] for row in rows] == pairs["n"].to_list()
    for row, p, q in zip(rows, expected, adjusted, strict=True):
        assert row["p_value"] == pytest.approx(p, rel=1e-9, abs=1e-15)
        assert row["p_adjusted"] == pytest.approx(q, rel=1e-9, abs=1e-15)
    regressed = [row["title"] for row in rows if row["status"] == "regressed"]
    assert regressed == [t for t, q in zip(pairs["title"], adjusted, strict=True) if q < 0.05]
    assert document["status"] in ("regressed", "underpowered")  # ~220 questions an article
