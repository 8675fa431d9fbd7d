"""``evalframe extract`` and ``evalframe extractors``, run as a user runs them: in a subprocess."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

GSM8K = Path("lm-eval-olot-fixture") / "samples_gsm8k_2025-04-30T18-24-41.082644.jsonl"


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "evalframe", *args],
        capture_output=True, text=False, timeout=300, check=False,
    )


def err(done: subprocess.CompletedProcess) -> str:
    return done.stderr.decode()


@pytest.fixture
def dump(tmp_path) -> Path:
    path = tmp_path / "dump.jsonl"
    pl.DataFrame(
        {
            "response": ["so \\boxed{4}", "#### 1,000", "it is 7", None],
            "answer": ["4", "1000", "7", "2"],
            "solution": ["#### 4", "#### 1000", "#### 8", "#### 2"],
        }
    ).write_ndjson(path)
    return path


@pytest.mark.subprocess
def test_extractors_lists_the_table(tmp_path):
    done = run("extractors")
    assert done.returncode == 0, err(done)
    out = done.stdout.decode()
    for name in ("boxed", "gsm8k_answer", "last_number"):
        assert name in out
    table = tmp_path / "table.csv"
    done = run("extractors", "-o", str(table))
    assert done.returncode == 0, err(done)
    import evalframe as ef

    assert pl.read_csv(table).equals(ef.list_extractors())


@pytest.mark.subprocess
@pytest.mark.parametrize("suffix", [".parquet", ".jsonl", ".csv"])
def test_extract_writes_the_answers(tmp_path, dump, suffix):
    output = tmp_path / f"out{suffix}"
    done = run("extract", str(dump), "-x", "boxed", "-x", "gsm8k_answer", "--column",
               "response", "-o", str(output))
    assert done.returncode == 0, err(done)
    reader = {
        ".parquet": pl.read_parquet, ".jsonl": pl.read_ndjson,
        ".csv": lambda path: pl.read_csv(path, infer_schema=False),  # every column as text
    }[suffix]
    frame = reader(output)
    assert frame.columns == [
        "response", "answer", "solution", "extracted_boxed", "extraction_rule_boxed",
        "extracted_gsm8k_answer", "extraction_rule_gsm8k_answer",
    ]
    assert frame["extracted_boxed"].to_list() == ["4", None, None, None]
    assert frame["extracted_gsm8k_answer"].to_list() == ["[invalid]", "1000", "[invalid]", None]
    # one line per extractor on stderr: how many responses had an answer
    assert "boxed: an answer in 1 of 4 response(s) (25.0%)" in err(done)
    assert "gsm8k_answer: an answer in 1 of 4 response(s) (25.0%)" in err(done)


@pytest.mark.subprocess
def test_extract_one_extractor_name_and_stdout(dump):
    done = run("extract", str(dump), "-x", "last_number", "--column", "response", "--name",
               "answer_found", "--quiet")
    assert done.returncode == 0, err(done)
    assert err(done) == ""
    frame = pl.read_parquet(io.BytesIO(done.stdout))  # piped: parquet on stdout
    assert frame["answer_found"].to_list() == ["4", "1000", "7", None]
    assert frame["answer_found_rule"].to_list() == ["last_number"] * 3 + [None]


@pytest.mark.subprocess
def test_audit_prints_the_tables_and_writes_the_summary(tmp_path, dump):
    summary = tmp_path / "summary.json"
    done = run("extract", str(dump), "--audit", "-x", "boxed", "-x", "last_number",
               "--column", "response", "--gold", "answer", "-o", str(summary))
    assert done.returncode == 0, err(done)
    out = done.stdout.decode()
    assert "disagreements" in out and "verdict flips: 2 row(s)" in out
    rows = json.loads(summary.read_text())
    # boxed: row 0 right (1 of 4); last_number: rows 0-2 right (3 of 4)
    assert [(r["extractor"], r["correct"], r["n_gold"]) for r in rows] == [
        ("boxed", 1, 4), ("last_number", 3, 4)
    ]


@pytest.mark.subprocess
def test_audit_with_a_gold_extractor(dump):
    done = run("extract", str(dump), "--audit", "-x", "last_number", "--column", "response",
               "--gold", "solution", "--gold-extractor", "gsm8k_answer", "--show", "0")
    assert done.returncode == 0, err(done)
    # golds 4, 1000, 8, 2: last_number gets rows 0 and 1
    assert "verdict flips: 0 row(s)" in done.stdout.decode()
    assert " 2       ┆ 0.5 " in done.stdout.decode()


@pytest.mark.subprocess
def test_audit_without_gold_warns(dump):
    done = run("extract", str(dump), "--audit", "-x", "boxed", "--column", "response")
    assert done.returncode == 0, err(done)
    assert "evalframe: warning: no --gold" in err(done)


@pytest.mark.subprocess
def test_errors_and_exit_codes(dump):
    unknown = run("extract", str(dump), "-x", "boxd", "--column", "response")
    assert unknown.returncode == 2
    assert "unknown extractor 'boxd'" in err(unknown) and "'boxed'" in err(unknown)
    repeated = run("extract", str(dump), "-x", "boxed", "-x", "boxed", "--column", "response")
    assert repeated.returncode == 2
    missing = run("extract", str(dump), "-x", "boxed")  # no 'prediction' column
    assert missing.returncode == 1
    assert err(missing).startswith("evalframe: error: extract: no column 'prediction'")
    audit_only = run("extract", str(dump), "-x", "boxed", "--gold", "answer")
    assert audit_only.returncode == 2 and "go with --audit" in err(audit_only)
    no_extractor = run("extract", str(dump))
    assert no_extractor.returncode == 2


@pytest.mark.subprocess
def test_lists_cannot_go_to_csv(tmp_path):
    path = tmp_path / "gens.jsonl"
    pl.DataFrame({"prediction": [["\\boxed{1}", "2"]]}).write_ndjson(path)
    done = run("extract", str(path), "-x", "boxed", "-o", str(tmp_path / "out.csv"))
    assert done.returncode == 1
    parquet = tmp_path / "out.parquet"
    done = run("extract", str(path), "-x", "boxed", "-o", str(parquet))
    assert done.returncode == 0, err(done)
    assert pl.read_parquet(parquet)["extracted"].to_list() == [["1", None]]


@pytest.mark.subprocess
def test_a_real_lm_eval_dump_and_its_format(shared_data, tmp_path):
    path = shared_data / GSM8K
    output = tmp_path / "out.parquet"
    # read as the lm_eval layout: the gold column holds the GSM8K solutions
    done = run("extract", str(path), "-x", "gsm8k_answer", "--column", "gold", "-o", str(output))
    assert done.returncode == 0, err(done)
    assert pl.read_parquet(output)["extracted"].to_list() == ["18", "3", "70000"]
    # read as a plain table: lm-eval's own 'target' field
    done = run("extract", str(path), "--format", "table", "-x", "gsm8k_answer", "--column",
               "target", "-o", str(output))
    assert done.returncode == 0, err(done)
    assert pl.read_parquet(output)["extracted"].to_list() == ["18", "3", "70000"]


@pytest.mark.subprocess
def test_score_with_an_extractor_on_the_command_line(tmp_path, dump):
    scored = tmp_path / "scored.parquet"
    done = run("score", str(dump), "-m", "exact_match(extractor='gsm8k_answer')",
               "--col", "prediction=response", "--col", "gold=answer", "-o", str(scored))
    assert done.returncode == 0, err(done)
    column = "exact_match(extractor='gsm8k_answer')"
    # the null response is a missing answer: scored wrong in the file, and flagged
    assert pl.read_parquet(scored)[column].to_list() == [0.0, 1.0, 0.0, 0.0]
    assert pl.read_parquet(scored)[f"{column}:missing"].to_list() == [False, False, False, True]
    signatures = json.loads(pl.read_parquet_metadata(scored)["evalframe.signatures"])
    assert "|norm:none|extract:gsm8k_answer|reduce:mean|" in signatures[column]
    summary = tmp_path / "summary.csv"
    done = run("aggregate", str(scored), "-o", str(summary))
    assert done.returncode == 0, err(done)
    row = pl.read_csv(summary).row(0, named=True)
    # the null response is a missing answer, wrong by default: 1 of 4
    assert (row["n"], row["n_missing"], row["value"]) == (4, 1, 0.25)
    assert "extract:gsm8k_answer" in row["signature"]
