"""Formatted tables: cells, notes and exports, with values computed by hand."""

from __future__ import annotations

import polars as pl
import pytest

import evalframe as ef


def _scored() -> pl.DataFrame:
    # a: 1 of 2 right on t1, 2 of 2 on t2; b: 2 of 2 on t1, 0 of 2 on t2
    frame = pl.DataFrame({
        "model": ["a", "a", "b", "b"] * 2,
        "task": ["t1"] * 4 + ["t2"] * 4,
        "sample_id": ["1", "2"] * 4,
        "prediction": ["x", "y", "x", "x", "x", "x", "y", "y"],
        "gold": ["x"] * 8,
    })
    return ef.score(frame, ["exact_match"])


def test_a_rate_is_a_percent_with_its_interval_and_the_counts_stay_in_view():
    table = ef.table(ef.aggregate(_scored(), by=["model", "task"]))
    assert table.frame.columns == ["model", "task", "metric", "score", "n", "missing"]
    first = table.frame.row(0, named=True)
    # 1 of 2: 50.0%; Wilson 95% with z = 1.959964: (0.5 + z^2/4 -+ z sqrt(0.25/2 + z^2/16))
    # / (1 + z^2/2) = (1.460 -+ 1.150) / 2.921 -> [0.0945, 0.9055]
    assert first["score"] == "50.0% [9.5, 90.5]"
    assert (first["n"], first["missing"]) == ("2", "0")
    assert table.notes == ("95% intervals (wilson); missing answers counted as wrong",)


def test_a_metric_that_is_not_a_rate_keeps_its_units():
    # word perplexity = exp(-(sum of log-likelihoods) / (sum of words)) = exp(4 / 2) = 7.389
    frame = pl.DataFrame({"loglikelihood": [-1.0, -3.0], "n_words": [1, 1]})
    cell = ef.table(ef.aggregate(ef.score(frame, ["word_perplexity"]))).frame["score"][0]
    assert cell.startswith("7.389")
    assert "%" not in cell


def test_missing_answers_are_shown_and_unknown_ones_said():
    frame = pl.DataFrame({"model": ["a"] * 3, "prediction": ["x", None, "y"], "gold": ["x"] * 3})
    table = ef.table(ef.aggregate(ef.score(frame, ["exact_match"]), by="model"))
    # the null prediction is a missing answer counted wrong: 1 of 3
    assert table.frame.row(0, named=True)["missing"] == "1"
    assert table.frame.row(0, named=True)["score"].startswith("33.3% [")


def test_wide_is_model_by_task():
    wide = ef.table(ef.aggregate(_scored(), by=["model", "task"]), wide=True)
    assert wide.frame.columns == ["model", "t1 · exact_match", "t2 · exact_match"]
    cells = {row["model"]: row for row in wide.frame.iter_rows(named=True)}
    assert cells["a"]["t2 · exact_match"].startswith("100.0% [")
    assert cells["b"]["t2 · exact_match"].startswith("0.0% [0.0, ")
    assert "n = 2" in wide.notes


def test_wide_refuses_two_rows_for_one_cell():
    table = ef.aggregate(_scored(), by=["model", "task"])
    with pytest.raises(ef.EvalframeError, match="two rows for task="):
        ef.table(table.drop("model"), wide=True)


def test_compare_shows_signed_differences_in_points_and_p_values():
    table = ef.compare(_scored(), baseline="a", by="task")
    formatted = ef.table(table)
    rows = {row["task"]: row for row in formatted.frame.iter_rows(named=True)}
    # t1: b 100% - a 50% = +50 points; t2: 0% - 100% = -100 points
    assert rows["t1"]["difference"].startswith("+50.0 pts [")
    assert rows["t2"]["difference"].startswith("-100.0 pts [")
    assert rows["t1"]["model"] == "b vs a"
    assert formatted.frame.columns[-2:] == ["pairs", "test"]


def test_markdown_escapes_pipes_and_csv_round_trips(tmp_path):
    frame = pl.DataFrame({"model": ["a|b"], "prediction": ["x"], "gold": ["x"]})
    formatted = ef.table(ef.aggregate(ef.score(frame, ["exact_match"]), by="model"))
    assert "| a\\|b |" in formatted.to_markdown()
    path = formatted.save(tmp_path / "t.csv")
    assert pl.read_csv(path, infer_schema=False).equals(formatted.frame)


@pytest.mark.parametrize("suffix", [".html", ".tex", ".md"])
def test_saved_files_hold_the_cells(tmp_path, suffix):
    pytest.importorskip("great_tables")
    formatted = ef.table(ef.aggregate(_scored(), by=["model", "task"]))
    text = formatted.save(tmp_path / f"t{suffix}").read_text(encoding="utf-8")
    assert "50.0" in text and "90.5" in text
    if suffix == ".html":
        assert "<table" in text and "<style" in text  # styled, nothing to fetch


def test_an_unknown_suffix_and_an_unknown_table_are_refused(tmp_path):
    formatted = ef.table(ef.aggregate(_scored(), by="model"))
    with pytest.raises(ef.EvalframeError, match=r"\.md, \.tex, \.html or \.csv"):
        formatted.save(tmp_path / "t.xlsx")
    with pytest.raises(ef.EvalframeError, match="expected a table of evalframe.aggregate"):
        ef.table(pl.DataFrame({"x": [1]}))


def test_judge_report_and_ratings():
    result = pl.DataFrame({"sample_id": ["q1", "q2", "q3", "q4"], "model_a": ["x"] * 4,
                           "model_b": ["y"] * 4, "outcome": ["A", "A", "B", "tie"]})
    report = ef.table(ef.judge.report(result, by="model_a"))
    row = report.frame.row(0, named=True)
    # wins 2, losses 1, tie 1 (half): (2 + 0.5) / 4 = 62.5%
    assert row["win rate (A)"].startswith("62.5% [")
    assert row["A / B / tie"] == "2 / 1 / 1"


def test_an_alpaca_eval_report_shows_the_length_controlled_win_rate_beside_the_raw():
    report = pl.DataFrame({
        "model": ["m"], "wins_a": [1], "wins_b": [3], "ties": [0], "inconsistent": [0],
        "errors": [0], "n_valid": [4], "win_rate_a": [0.25], "stderr": [0.2],
        "ci_low": [0.05], "ci_high": [0.7], "n_clusters": [None], "position_bias": [None],
        "n_decisive": [0], "win_rate": [75.0], "standard_error": [20.0],
        "win_rate_ci_low": [30.0], "win_rate_ci_high": [95.0], "n_wins": [3],
        "n_wins_base": [1], "n_draws": [0], "n_total": [4], "discrete_win_rate": [75.0],
        "length_controlled_winrate": [62.24], "lc_standard_error": [4.0],
        "lc_ci_low": [54.41], "lc_ci_high": [70.09], "signature": ["policy:alpaca_eval"],
    })
    row = ef.table(report).frame.row(0, named=True)
    assert row["win rate (B)"] == "75.0% [30.0, 95.0]"
    assert row["LC win rate (B)"] == "62.2% [54.4, 70.1]"


def test_the_wide_view_names_the_cells_with_missing_answers():
    frame = pl.DataFrame({"model": ["m", "n"] * 3, "task": ["t"] * 6,
                          "sample_id": [str(i // 2) for i in range(6)],
                          "prediction": ["a", None, "b", "b", "a", "a"], "gold": ["a"] * 6})
    wide = ef.table(ef.aggregate(ef.score(frame, ["exact_match"]), by=["model", "task"]),
                    wide=True)
    # n answered 1 of 3 (one missing answer, counted wrong): 33.3%
    assert wide.frame.row(1, named=True)["t · exact_match"].startswith("33.3% [")
    assert "missing answers: n · t · exact_match: 1" in wide.notes


def test_render_by_name_and_an_unknown_form_refused():
    formatted = ef.table(ef.aggregate(_scored(), by="model"))
    assert formatted.render("markdown") == formatted.to_markdown() + "\n"
    assert formatted.render("csv") == formatted.to_csv()
    with pytest.raises(ef.EvalframeError, match="rendered as markdown, latex, html, csv"):
        formatted.render("xlsx")
