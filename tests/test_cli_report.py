"""`evalframe report` and the formatted outputs of `aggregate` and `compare` (in process)."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from evalframe.cli import EXIT_OK, EXIT_USAGE, main

pytest.importorskip("altair")
EXAMPLE = Path(__file__).resolve().parents[1] / "data" / "example_dump.jsonl"


@pytest.fixture(scope="module")
def scored(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("scored") / "scored.parquet"
    assert main(["score", str(EXAMPLE), "-m", "squad_em", "-m", "pass@1", "-m", "pass@10",
                 "--col", "cluster=question_id", "-o", str(path), "--quiet"]) == EXIT_OK
    return path


def test_report_writes_html_and_svgs(scored, tmp_path, capsys):
    out = tmp_path / "report.html"
    assert main(["report", str(scored), "--by", "task", "--baseline", "base-7b", "-o",
                 str(out), "--svg", str(tmp_path / "svg")]) == EXIT_OK
    assert "wrote" in capsys.readouterr().err
    text = out.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>") and text.count('class="chart"') == 3
    assert len(list((tmp_path / "svg").glob("*.svg"))) == 3


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["-o", "r.pdf"], "a report is an HTML file"),
        (["--by", "tsk", "-o", "r.html"], "--by tsk: no such column(s)"),
        (["--baseline", "x", "--model-column", "mdl", "-o", "r.html"],
         "--model-column mdl: no such column"),
        (["--ci", "1.5", "-o", "r.html"], "--ci 1.5 must be strictly between 0 and 1"),
    ],
)
def test_report_usage_mistakes_exit_2(scored, tmp_path, capsys, monkeypatch, options, message):
    monkeypatch.chdir(tmp_path)
    assert main(["report", str(scored), *options]) == EXIT_USAGE
    assert message in capsys.readouterr().err
    assert not (tmp_path / "r.html").exists()


def test_aggregate_prints_markdown_with_intervals(scored, capsys):
    assert main(["aggregate", str(scored), "--by", "model,task", "--format", "markdown",
                 "--quiet"]) == EXIT_OK
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "| model | task | metric | score | n | missing |"
    # base-7b on capitals: 35 of 60 squad_em right (58.3%), Wilson interval [44.9, 70.6]
    assert "| base-7b | capitals | squad_em | 58.3% [44.9, 70.6] | 60 | 0 |" in "\n".join(lines)


def test_aggregate_wide_markdown_is_model_by_task(scored, capsys):
    assert main(["aggregate", str(scored), "--by", "model,task", "--wide", "--format",
                 "markdown", "--quiet"]) == EXIT_OK
    header = capsys.readouterr().out.splitlines()[0]
    assert header.startswith("| model | capitals · squad_em |")


def test_formatted_outputs_by_suffix(scored, tmp_path):
    for suffix in (".md", ".tex", ".html"):
        out = tmp_path / f"table{suffix}"
        assert main(["aggregate", str(scored), "--by", "model", "-o", str(out),
                     "--quiet"]) == EXIT_OK
        assert "50.5" in out.read_text()  # base-7b: 53 of 105 squad_em right (50.5%)
    data = tmp_path / "table.parquet"
    assert main(["aggregate", str(scored), "--by", "model", "-o", str(data), "--quiet"]) == 0
    assert "value" in pl.read_parquet(data).columns


def test_compare_prints_latex(scored, capsys):
    assert main(["compare", str(scored), "--baseline", "base-7b", "--by", "task",
                 "--format", "latex", "--quiet"]) == EXIT_OK
    out = capsys.readouterr().out
    assert "\\begin{table}" in out and "pts" in out


def test_the_terminal_table_prints_signatures_below_it(capsys):
    from evalframe.cli import _show

    _show(pl.DataFrame({"metric": ["a", "b"], "value": [0.5, 0.25],
                        "signature": ["metric:a|version:1", "metric:b|version:1"]}))
    out = capsys.readouterr().out
    table, _, rest = out.partition("└")
    assert "signature" not in table  # not a column cut in every row
    assert rest.splitlines()[1:] == ["signature: metric:a|version:1",
                                     "signature: metric:b|version:1"]


def test_judge_report_prints_markdown(tmp_path, capsys):
    judged = tmp_path / "judged.parquet"
    pl.DataFrame({"sample_id": ["q1", "q2", "q3", "q4"], "model_a": ["x"] * 4,
                  "model_b": ["y"] * 4, "outcome": ["A", "A", "B", "tie"]}).write_parquet(judged)
    assert main(["judge", "report", str(judged), "--by", "model_a", "--format",
                 "markdown"]) == EXIT_OK
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("| model_a | win rate (A) | A / B / tie |")
    # 2 wins, 1 loss, 1 tie counted half: (2 + 0.5) / 4 = 62.5%
    assert lines[2].startswith("| x | 62.5% [")
