"""Charts are asserted as data: their marks, encodings, the interval fields and the values
they draw, never as pixels."""

from __future__ import annotations

import json

import polars as pl
import pytest

import evalframe as ef
from evalframe import plot

alt = pytest.importorskip("altair")


def _dump(scored_models: dict[str, list[int]], task: str = "t") -> pl.DataFrame:
    rows = []
    for model, correct in scored_models.items():
        for i, value in enumerate(correct):
            rows.append({"model": model, "task": task, "sample_id": f"s{i}",
                         "prediction": "yes" if value else "no", "gold": "yes"})
    return pl.DataFrame(rows)


def _layers(spec: dict) -> list[dict]:
    inner = spec.get("spec", spec)
    return inner["layer"]


def _values(chart) -> list[dict]:
    spec = chart.to_dict()
    datasets = spec.get("datasets")
    if not datasets:
        return spec["data"]["values"]
    return [row for values in datasets.values() for row in values]


def test_scores_draws_each_value_with_its_interval_and_states_n_interval_and_policy():
    # a: 3 of 4 right, b: 1 of 4 right; Wilson 95% intervals; missing answers wrong
    table = ef.aggregate(ef.score(_dump({"a": [1, 1, 1, 0], "b": [1, 0, 0, 0]}),
                                  ["exact_match"]), by="model")
    chart = plot.scores(table)
    spec = chart.to_dict()
    rule, point = _layers(spec)
    assert rule["mark"]["type"] == "rule" and point["mark"]["type"] == "point"
    assert rule["encoding"]["x"]["field"] == "ci_low"
    assert rule["encoding"]["x2"]["field"] == "ci_high"
    assert rule["encoding"]["x"]["scale"]["zero"] is False
    assert point["encoding"]["x"]["field"] == "value"
    assert point["encoding"]["y"]["field"] == "model"
    drawn = {row["model"]: row for row in _values(chart)}
    assert drawn["a"]["value"] == 0.75 and drawn["b"]["value"] == 0.25
    for row in drawn.values():
        assert row["ci_low"] < row["value"] < row["ci_high"]
    assert spec["title"]["subtitle"] == [
        "95% intervals (wilson); missing answers counted as wrong; n = 4"
    ]
    tooltips = {t["field"] for t in point["encoding"]["tooltip"]}
    assert {"n", "n_missing", "interval", "missing", "ci_low", "ci_high"} <= tooltips


def test_scores_facets_tasks_and_gives_each_metric_its_own_axis():
    frame = pl.concat([_dump({"a": [1, 0], "b": [1, 1]}, "t1"),
                       _dump({"a": [0, 0], "b": [1, 0]}, "t2")])
    table = ef.aggregate(ef.score(frame, ["exact_match", "squad_f1"]), by=["model", "task"])
    chart = plot.scores(table)
    spec = chart.to_dict()
    assert spec["facet"]["field"] == "panel" and spec["facet"]["title"] == "task · metric"
    assert spec["resolve"]["scale"]["x"] == "independent"
    panels = {row["panel"] for row in _values(chart)}
    assert panels == {"t1 · exact_match", "t1 · squad_f1", "t2 · exact_match", "t2 · squad_f1"}


def test_only_the_panels_that_occur_are_drawn():
    # pass@k on the code task only, exact match on the quiz task only: two panels, not four
    code = pl.DataFrame({"model": ["a", "b"], "task": ["code"] * 2, "n": [4, 4], "c": [1, 2],
                         "sample_id": ["s0", "s0"], "prediction": [None, None],
                         "gold": [None, None]}, schema_overrides={"prediction": pl.String,
                                                                  "gold": pl.String})
    quiz = _dump({"a": [1, 0], "b": [1, 1]}, "quiz").with_columns(
        n=pl.lit(None, pl.Int64), c=pl.lit(None, pl.Int64))
    frame = pl.concat([code, quiz.select(code.columns)])
    table = ef.aggregate(ef.score(frame, ["exact_match", "pass@1"]), by=["model", "task"])
    table = table.filter(pl.col("n") > pl.col("n_null"))
    panels = {row["panel"] for row in _values(plot.scores(table))}
    assert panels == {"code · pass@1", "quiz · exact_match"}


def test_scores_says_when_the_policies_differ():
    frame = _dump({"a": [1, 0, 1], "b": [1, 1, 0]}).with_columns(
        prediction=pl.when(pl.col("sample_id") == "s0").then(None).otherwise("prediction")
    )
    wrong = ef.aggregate(ef.score(frame, ["exact_match"]), by="model")
    excluded = ef.aggregate(ef.score(frame, ["exact_match"]), by="model", missing="exclude")
    subtitle = plot.scores(pl.concat([wrong, excluded])).to_dict()["title"]["subtitle"][0]
    assert "missing-answer policies differ" in subtitle


def test_a_table_that_is_not_an_aggregate_is_refused_by_name():
    with pytest.raises(ef.EvalframeError, match=r"scores: the table has no column\(s\) 'value'"):
        plot.scores(pl.DataFrame({"model": ["a"], "metric": ["m"]}))


def test_curve_reads_the_family_from_the_signature_so_aliases_join_their_line():
    frame = pl.DataFrame({"model": ["a", "b"] * 2, "n": [10] * 4, "c": [1, 5, 2, 7]})
    scored = ef.score(frame, ["p1=pass@1", "pass@4", "pass@8"])
    chart = plot.curve(ef.aggregate(scored, by="model"))
    spec = chart.to_dict()
    band, _line, _points = _layers(spec)
    assert band["mark"]["type"] == "area"
    assert band["encoding"]["y"]["field"] == "ci_low"
    assert band["encoding"]["y2"]["field"] == "ci_high"
    assert band["encoding"]["x"]["scale"] == {"type": "log", "base": 2, "domain": [1, 8],
                                              "nice": False}  # k from 1 to 8
    families = {(row["metric"], row["family"], row["k"]) for row in _values(chart)}
    assert families == {("p1", "pass@k", 1), ("pass@4", "pass@k", 4), ("pass@8", "pass@k", 8)}


def test_curve_keeps_other_parameters_and_differing_options_apart():
    frame = pl.DataFrame({"model": ["a"] * 2, "n": [10] * 2, "c": [1, 5]})
    scored = ef.score(frame, ["pass@1", "pass@4", "pass@4(equivalence=exact)"])
    families = {row["family"] for row in _values(plot.curve(ef.aggregate(scored, by="model")))}
    assert families == {"pass@k"}  # the same options, written out or not, are one line


def test_curve_without_any_k_is_an_error():
    table = ef.aggregate(ef.score(_dump({"a": [1, 0]}), ["exact_match"]), by="model")
    with pytest.raises(ef.EvalframeError, match="no row has a k"):
        plot.curve(table)


def test_comparison_marks_significance_after_correction_and_leaves_out_empty_rows():
    # b is right on 19 of 20 items where a is wrong on every one: a clear difference;
    # c equals a everywhere: no difference
    n = 20
    frame = _dump({"a": [0] * n, "b": [1] * (n - 1) + [0], "c": [0] * n})
    table = ef.compare(ef.score(frame, ["exact_match"]), baseline="a", correction="holm")
    chart = plot.comparison(table)
    spec = chart.to_dict()
    zero, _bars, points = spec["layer"]
    assert zero["mark"]["type"] == "rule"
    assert points["encoding"]["fill"]["field"] == "significant"
    drawn = {row["versus"]: row for row in _values(chart) if "versus" in row}
    assert drawn["b vs a"]["significant"] == "p_adjusted < 0.05"
    assert drawn["c vs a"]["significant"] == "not significant"
    assert drawn["b vs a"]["diff"] == pytest.approx(0.95)


def test_win_rates_heatmap_from_the_wide_and_the_long_matrix():
    battles = pl.DataFrame({"model_a": ["x", "y", "x", "x"], "model_b": ["y", "z", "z", "y"],
                            "outcome": ["A", "tie", "B", "A"]})
    long = plot.win_rates(ef.judge.win_rate_matrix(battles, long=True))
    wide = plot.win_rates(ef.judge.win_rate_matrix(battles))
    cells = {(row["model"], row["opponent"]): row["win_rate"] for row in _values(long)}
    # x beat y twice: 1.0; y-z tie: 0.5 each; z beat x: x 0.0 against z
    assert cells[("x", "y")] == 1.0 and cells[("y", "z")] == 0.5 and cells[("x", "z")] == 0.0
    assert {(row["model"], row["opponent"]): row["win_rate"] for row in _values(wide)} == cells
    rect, _ = long.to_dict()["layer"]
    assert rect["encoding"]["color"]["scale"]["domain"] == [0, 1]


def test_ratings_sorted_by_rating_with_intervals():
    battles = pl.DataFrame({
        "sample_id": [f"q{i}" for i in range(24)],
        "model_a": ["x", "y", "z"] * 8, "model_b": ["y", "z", "x"] * 8,
        "outcome": ["A", "A", "B", "A", "tie", "A", "B", "A"] * 3,
    })
    table = ef.judge.ratings(battles, bootstrap=50)
    spec = plot.ratings(table).to_dict()
    bars, _ = spec["layer"]
    ordered = table.sort("rating", descending=True)
    assert bars["encoding"]["y"]["sort"] == [
        f"{model}  #{low}" + (f"-{high}" if high != low else "")
        for model, low, high in ordered.select("model", "rank_low", "rank_high").iter_rows()
    ]
    assert bars["encoding"]["x"]["field"] == "ci_low"


def test_judge_bias_rates_per_group():
    # x: AB/BA verdicts (A, A) chose first twice -> inconsistent; (B, A) consistent for B...
    result = pl.DataFrame({"sample_id": ["q1", "q2", "q3", "q4"], "model_a": ["x"] * 4,
                           "model_b": ["y"] * 4, "verdict_ab": ["A", "A", "B", "tie"],
                           "verdict_ba": ["A", "B", "A", "tie"]})
    report = ef.judge.report(result, by="model_a")
    chart = plot.judge_bias(report)
    rates = {row["measure"]: row["rate"] for row in _values(chart)}
    assert rates["inconsistent"] == pytest.approx(
        report["inconsistent"][0] / report["n_valid"][0]
    )
    assert rates["position bias (first chosen)"] == pytest.approx(report["position_bias"][0])


def test_distribution_counts_null_scores_in_the_subtitle():
    scored = ef.score(pl.DataFrame({"model": ["a", "b"] * 2,
                                    "prediction": ["x y", "x", "y", None],
                                    "gold": ["x y", "x z", "y", "z"]}), ["squad_f1"])
    spec = plot.distribution(scored, "squad_f1", by=None).to_dict()
    nulls = scored["squad_f1"].null_count()
    assert spec["title"]["subtitle"] == [
        f"n = {4 - nulls}" + (f"; {nulls} null score(s) not drawn" if nulls else "")
    ]


def test_distribution_of_a_corpus_metric_is_refused():
    scored = ef.score(pl.DataFrame({"prediction": ["a", "b"], "gold": ["a", "a"]}), ["f1"])
    with pytest.raises(ef.EvalframeError, match="not per-sample scores"):
        plot.distribution(scored, "f1")


def test_calibration_bins_and_expected_calibration_error_by_hand():
    # 10 bins; rows 0.95 (right), 0.91 (wrong) in bin 9: confidence 0.93, accuracy 0.5;
    # 0.15 (wrong) in bin 1: confidence 0.15, accuracy 0
    # ECE = (2 * |0.5 - 0.93| + 1 * |0 - 0.15|) / 3 = (0.86 + 0.15) / 3 = 0.336666...
    frame = pl.DataFrame({"p": [0.95, 0.91, 0.15, None], "ok": [True, False, False, True]})
    chart = plot.calibration(frame, confidence="p", correct="ok")
    spec = chart.to_dict()
    assert spec["title"]["subtitle"] == [
        "ECE 0.337; 10 bins; n = 3; 1 row(s) with a null left out"
    ]
    points = {row["bin"]: row for row in _values(chart) if "bin" in row}
    assert points[9]["confidence"] == pytest.approx(0.93)
    assert points[9]["accuracy"] == 0.5 and points[9]["n"] == 2
    assert points[1]["accuracy"] == 0.0


@pytest.mark.parametrize(
    ("frame", "message"),
    [
        (pl.DataFrame({"p": [1.5], "ok": [1]}), r"probabilities in \[0, 1\]; found 1.5"),
        (pl.DataFrame({"p": [0.5], "ok": [2]}), r"must hold 0/1 \(or booleans\); found 2"),
    ],
)
def test_calibration_refuses_impossible_values(frame, message):
    with pytest.raises(ef.EvalframeError, match=message):
        plot.calibration(frame, confidence="p", correct="ok")


def test_every_chart_exports_to_svg_offline():
    vl_convert = pytest.importorskip("vl_convert")
    table = ef.aggregate(ef.score(_dump({"a": [1, 0, 1], "b": [0, 0, 1]}), ["exact_match"]),
                         by=["model", "task"])
    svg = vl_convert.vegalite_to_svg(json.dumps(plot.scores(table).to_dict()))
    assert svg.startswith("<svg")
    # one interval (a rule) and one point per model, drawn
    assert svg.count('aria-roledescription="rule mark"') == 2
    assert svg.count('aria-roledescription="point"') == 2


def _lc_table() -> pl.DataFrame:
    return pl.DataFrame({
        "model": ["gpt4", "NullModel", "alpaca-7b"],
        "wins_a": [1, 1, 1],
        "win_rate": [23.58, 76.92, 2.59], "win_rate_ci_low": [20.7, 74.0, 1.6],
        "win_rate_ci_high": [26.5, 79.8, 3.6],
        "length_controlled_winrate": [38.13, 86.46, 5.88], "lc_ci_low": [35.0, 84.0, 4.0],
        "lc_ci_high": [41.2, 88.9, 7.7], "n_total": [805, 805, 803],
    })


def test_length_controlled_draws_raw_and_lc_per_model_sorted_by_lc():
    chart = plot.length_controlled(_lc_table())
    values = _values(chart)
    drawn = {(row["group"], row["measure"]): (row["value"], row["ci_low"], row["ci_high"])
             for row in values if "measure" in row}
    assert drawn[("gpt4", "raw win rate")] == (23.58, 20.7, 26.5)
    assert drawn[("gpt4", "length-controlled")] == (38.13, 35.0, 41.2)
    assert len(drawn) == 6
    _, bars, _ = chart.to_dict()["layer"]
    assert bars["encoding"]["y"]["sort"] == ["NullModel", "gpt4", "alpaca-7b"]
    assert bars["encoding"]["x"]["scale"]["zero"] is False


def test_length_controlled_refuses_a_report_without_lc_columns():
    with pytest.raises(ef.EvalframeError, match="length_controlled_winrate"):
        plot.length_controlled(_lc_table().drop("length_controlled_winrate"))


def test_ratings_label_each_model_with_its_rank_range():
    table = pl.DataFrame({
        "model": ["b", "a", "c"], "rating": [1010.0, 1050.0, 900.0],
        "ci_low": [980.0, 1020.0, 870.0], "ci_high": [1040.0, 1080.0, 930.0],
        "rank_low": [1, 1, 3], "rank_high": [2, 2, 3],
        "tied_with": [["a"], ["b"], []],
    })
    chart = plot.ratings(table)
    bars, _ = chart.to_dict()["layer"]
    assert bars["encoding"]["y"]["sort"] == ["a  #1-2", "b  #1-2", "c  #3"]
    tied = {row["model"]: row["tied"] for row in _values(chart)}
    assert tied == {"a": "b", "b": "a", "c": ""}


def _audit_table() -> pl.DataFrame:
    return pl.DataFrame({
        "judge": ["gpt-4"] * 4,
        "measure": ["position_bias", "flip_rate", "cohen_kappa", "self_preference"],
        "value": [0.62, 0.18, 0.41, None], "ci_low": [0.58, 0.15, 0.33, None],
        "ci_high": [0.66, 0.21, 0.49, None], "n": [1200, 1500, 300, 0],
    })


def test_audit_draws_each_measure_in_its_panel_with_its_no_bias_line():
    chart = plot.audit(_audit_table())
    spec = chart.to_dict()
    assert spec["facet"]["field"] == "measure"
    assert spec["resolve"]["scale"]["x"] == "independent"
    drawn = {row["measure"]: (row["value"], row["reference"]) for row in _values(chart)}
    # no bias: a judge choosing either slot half the time; no flips; kappa 0 is chance
    assert drawn == {"position_bias": (0.62, 0.5), "flip_rate": (0.18, 0.0),
                     "cohen_kappa": (0.41, 0.0)}
    assert "not computable: self_preference (gpt-4)" in spec["title"]["subtitle"]


def test_audit_refuses_a_table_without_measures():
    with pytest.raises(ef.EvalframeError, match="'measure'"):
        plot.audit(_audit_table().drop("measure"))


def test_the_judge_analytics_charts_export_to_svg_offline():
    vl_convert = pytest.importorskip("vl_convert")
    svg = vl_convert.vegalite_to_svg(json.dumps(plot.length_controlled(_lc_table()).to_dict()))
    # two intervals and two points per model, and the 50% line
    assert svg.count('aria-roledescription="point"') == 6
    assert svg.count('aria-roledescription="rule mark"') == 7
    svg = vl_convert.vegalite_to_svg(json.dumps(plot.audit(_audit_table()).to_dict()))
    assert svg.count('aria-roledescription="point"') == 3


def test_a_style_controlled_table_says_which_features_it_controls_for():
    table = pl.DataFrame({
        "model": ["a", "b"], "rating": [1010.0, 990.0], "ci_low": [980.0, 960.0],
        "ci_high": [1040.0, 1020.0],
        "signature": ["rating:bradley-terry-mle|style:length+bold;length=words;"
                      "norm=chatbot_arena|B:100|ci:percentile-0.95"] * 2,
    })
    subtitle = plot.ratings(table).to_dict()["title"]["subtitle"]
    assert subtitle[0].startswith("Bradley-Terry controlled for style (length, bold)")


def test_audit_names_a_judge_common_to_every_row_once_and_counts_what_it_could_not_compute():
    table = pl.DataFrame({
        "model": ["m1", "m1", "m2", "m2"], "judge": ["gpt-4"] * 4,
        "measure": ["length_bias", "position_bias"] * 2,
        "value": [0.1, None, 0.03, None], "ci_low": [0.05, None, 0.01, None],
        "ci_high": [0.15, None, 0.05, None], "n": [805, 0, 805, 0],
    })
    chart = plot.audit(table)
    subtitle = chart.to_dict()["title"]["subtitle"]
    assert subtitle[0] == "judge: gpt-4"
    assert subtitle[-1] == "not computable: position_bias (2 of 2)"
    assert sorted(row["row"] for row in _values(chart)) == ["m1", "m2"]
