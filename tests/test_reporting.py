"""The one-file report: its sections, its self-containment, and (slow) a real browser
rendering it offline."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import polars as pl
import pytest

import evalframe as ef

pytest.importorskip("altair")
pytest.importorskip("vl_convert")

EXAMPLE = Path(__file__).resolve().parents[1] / "data" / "example_dump.jsonl"


@pytest.fixture(scope="module")
def scored() -> pl.DataFrame:
    frame = ef.load(EXAMPLE)
    return ef.score(frame, ["squad_em", "squad_f1", "pass@1", "pass@10"],
                    columns={"cluster": "question_id"})


@pytest.fixture(scope="module")
def saved(scored, tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("report")
    ef.report(scored, by="task", baseline="base-7b").save(folder / "report.html",
                                                           svg=folder / "svg")
    return folder


def test_sections_follow_the_data(scored):
    result = ef.report(scored, by="task", baseline="base-7b")
    titles = [section.title for section in result.sections]
    assert titles == ["Scores", "Scores by model", "Scores with their intervals",
                      "Scores over k", "Paired differences against base-7b", "Counts",
                      "Signatures"]
    # the summary holds every group that has scores: 3 models x (2 squad tasks x 2 metrics
    # + the code task x 2 pass@k metrics) = 18 rows
    assert result.sections[0].table.frame.height == 18
    without = ef.report(scored.filter(pl.col("task") != "code"), by="task")
    assert "Scores over k" not in [section.title for section in without.sections]
    assert not any(section.title.startswith("Paired") for section in without.sections)


def test_the_file_holds_its_scripts_and_specs_and_fetches_nothing(saved):
    text = (saved / "report.html").read_text(encoding="utf-8")
    assert text.count('class="chart"') == 3
    assert "vegaEmbed(" in text
    # nothing is loaded from elsewhere: no external script, stylesheet, image or frame
    assert not re.search(r"""<(script|link|img|iframe)[^>]+(src|href)=["']?https?:""", text)
    assert not re.search(r"""@import|url\(\s*['"]?https?:""", text)
    # every number is there with its signature
    assert "metric:squad_em|opts:-|reduce:mean|missing:wrong" in text
    assert (saved / "report.html").stat().st_size < 2 * 2**20


def test_svg_files_are_written_for_every_chart(saved):
    files = sorted(path.name for path in (saved / "svg").iterdir())
    assert files == ["01-scores-with-their-intervals.svg", "02-scores-over-k.svg",
                     "03-paired-differences-against-base-7b.svg"]
    assert all((saved / "svg" / name).read_text().startswith("<svg") for name in files)


def test_counts_show_repeated_samples_and_missing_answers(scored):
    doubled = pl.concat([scored, scored.head(3)])
    counts = ef.report(doubled, by="task").sections[-2].table
    assert counts["rows_repeating_a_sample"].max() == 6  # 3 rows, each now twice


def test_bad_arguments_are_named(scored, tmp_path):
    with pytest.raises(ef.EvalframeError, match=r"by=\['tsk'\]: no such column"):
        ef.report(scored, by="tsk")
    with pytest.raises(ef.EvalframeError, match=r"a report is an HTML file"):
        ef.report(scored).save(tmp_path / "report.pdf")


def _chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.slow
@pytest.mark.subprocess
def test_a_real_browser_renders_every_chart_offline(saved, tmp_path):
    browser = _chromium()
    if browser is None:
        pytest.skip("chromium is not installed (.ci/run installs it)")
    run = subprocess.run(
        [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
         f"--user-data-dir={tmp_path / 'profile'}",
         # no network: every host resolves nowhere, every proxy connection fails
         "--host-resolver-rules=MAP * ~NOTFOUND", "--proxy-server=127.0.0.1:9",
         "--enable-logging=stderr", "--v=0", "--virtual-time-budget=15000",
         "--dump-dom", (saved / "report.html").as_uri()],
        capture_output=True, text=True, timeout=120,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    dom = run.stdout
    # vega-embed draws each chart as an <svg class="marks"> inside its container
    drawn = re.findall(r'<div class="chart[^"]*" id="chart-\d+"[^>]*>.*?<svg[^>]*class="marks"',
                       dom, flags=re.S)
    assert len(drawn) == 3, dom[:3000]
    assert 'class="chart failed"' not in dom
    console = [line for line in run.stderr.splitlines() if "CONSOLE" in line]
    assert not [line for line in console if "error" in line.lower()], console
    assert "ERR_NAME_NOT_RESOLVED" not in run.stderr and "ERR_PROXY" not in run.stderr


def test_a_report_of_nothing_is_refused():
    empty = pl.DataFrame(schema={"model": pl.String, "prediction": pl.String,
                                 "gold": pl.String})
    with pytest.raises(ef.EvalframeError, match="nothing to report: no metric has a score"):
        ef.report(ef.score(empty, ["exact_match"]))
