"""The judge audit: each measure by hand and against its reference, the bootstrap, the errors."""

from __future__ import annotations

import gzip
import json
import warnings

import numpy as np
import polars as pl
import pytest

import evalframe as ef
from evalframe import EvalframeError
from evalframe.judge.audit import AUDIT_COLUMNS, MEASURES, audit

LABELS = np.array(["A", "tie", "B"])


def quiet_audit(*args, **kwargs) -> pl.DataFrame:
    """audit, its warnings about measures left null silenced (tested on their own)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return audit(*args, **kwargs)


def row(table: pl.DataFrame, measure: str, **keys) -> dict:
    chosen = table.filter(pl.col("measure") == measure)
    for key, value in keys.items():
        chosen = chosen.filter(pl.col(key) == value)
    assert chosen.height == 1, (measure, keys, chosen)
    return chosen.row(0, named=True)


def verdicts(seed: int = 0, n: int = 300, questions: int = 60) -> pl.DataFrame:
    """Two verdicts per row, the first order favoured, with ties and errors."""
    rng = np.random.default_rng(seed)
    names = np.array(["A", "B", "tie", "error"])
    return pl.DataFrame({
        "sample_id": rng.integers(0, questions, n),
        "model_a": rng.choice(["m1", "m2"], n),
        "model_b": ["m3"] * n,
        "verdict_ab": rng.choice(names, n, p=[0.45, 0.3, 0.2, 0.05]),
        "verdict_ba": rng.choice(names, n, p=[0.3, 0.45, 0.2, 0.05]),
    })


# ---------------------------------------------------------------- position bias and flips


def test_position_bias_and_flip_rate_equal_the_report_per_group():
    frame = verdicts()
    table = quiet_audit(frame, by="model_a", measures=["position_bias", "flip_rate"],
                        bootstrap=0)
    report = ef.judge.report(frame, by="model_a")
    for group in report.iter_rows(named=True):
        bias = row(table, "position_bias", model_a=group["model_a"])
        assert bias["value"] == pytest.approx(group["position_bias"], rel=1e-12)
        assert bias["n"] == group["n_decisive"] and bias["n_excluded"] == 0
        flips = row(table, "flip_rate", model_a=group["model_a"])
        # every row has both verdicts: the pairs are the report's valid rows
        assert flips["n"] == group["n_valid"]
        assert flips["value"] == pytest.approx(group["inconsistent"] / group["n_valid"],
                                               rel=1e-12)
        assert flips["n_excluded"] == group["errors"]


def test_position_bias_counts_only_rows_judged_in_both_orders():
    frame = pl.DataFrame({
        "verdict_ab": ["A", "A", "B", None, "tie"],
        "verdict_ba": ["A", None, "B", "B", "tie"],
    })
    got = row(quiet_audit(frame, measures=["position_bias"], bootstrap=0), "position_bias")
    # swapped rows 0, 2, 4: decisive A/A (first: the A shown first), B/B (first: the B
    # shown first in the second call), tie/tie (none): 2 of 4
    assert (got["value"], got["n"], got["n_excluded"]) == (0.5, 4, 2)
    # the report also counts the one-sided rows 1 and 3, whose order is not known: 4 of 6
    assert ef.judge.report(frame)["position_bias"][0] == pytest.approx(4 / 6)


def test_flip_rate_by_hand():
    frame = pl.DataFrame({
        "verdict_ab": ["A", "A", "A", "tie", "error", "B"],
        "verdict_ba": ["A", "B", "tie", "tie", "A", None],
    })
    got = row(quiet_audit(frame, measures=["flip_rate"], bootstrap=0), "flip_rate")
    # four pairs with two verdicts; A/B and A/tie flip; an error and a missing call excluded
    assert (got["value"], got["n"], got["n_excluded"]) == (0.5, 4, 2)


def test_alpaca_eval_rows_judged_once_have_no_position_measures():
    frame = pl.DataFrame({
        "sample_id": ["q1", "q2"], "verdict_ab": ["A", "B"], "verdict_ba": [None, None],
        "preference": [1.2, 1.9],
    })
    table = quiet_audit(frame, measures=["position_bias", "flip_rate"], bootstrap=0)
    for measure in ("position_bias", "flip_rate"):
        got = row(table, measure)
        assert got["value"] is None and got["n"] == 0 and got["n_excluded"] == 2


# ---------------------------------------------------------------- length bias


def test_length_bias_by_hand():
    frame = pl.DataFrame({"answer_a": ["xx", "x", "x"], "answer_b": ["x", "x", "xx"],
                          "outcome": ["A", "tie", "B"]})
    got = row(quiet_audit(frame, measures=["length_bias"], bootstrap=0), "length_bias")
    # d = 1, 0, -1 (sd 1, so z = d), y = 1, 0.5, 0: slope = S_zy / S_zz = 1 / 2
    assert got["value"] == pytest.approx(0.5, rel=1e-12) and got["n"] == 3


def test_length_bias_is_the_least_squares_slope_on_the_standardised_difference():
    from scipy.stats import linregress

    rng = np.random.default_rng(4)
    n = 400
    len_a, len_b = rng.integers(0, 300, n), rng.integers(0, 300, n)
    pref = np.clip(1.5 - (len_a - len_b) / 600 + rng.normal(0, 0.3, n), 1, 2)
    frame = pl.DataFrame({
        "answer_a": ["a" * k for k in len_a], "answer_b": ["é" * k for k in len_b],
        "preference": pref, "sample_id": np.arange(n),
    })
    got = row(quiet_audit(frame, measures=["length_bias"], bootstrap=200), "length_bias")
    d = (len_a - len_b).astype(float)
    z = (d - d.mean()) / d.std(ddof=1)
    expected = linregress(z, 2 - pref).slope  # y: the preference for A
    assert got["value"] == pytest.approx(expected, rel=1e-12)
    assert got["value"] > 0.1  # longer A answers are preferred, by construction
    assert got["ci_low"] < got["value"] < got["ci_high"]
    # answers and verdicts mirrored (B's answer as A's): the same slope
    mirrored = frame.select(
        pl.col("answer_b").alias("answer_a"), pl.col("answer_a").alias("answer_b"),
        (3 - pl.col("preference")).alias("preference"), "sample_id",
    )
    again = row(quiet_audit(mirrored, measures=["length_bias"], bootstrap=0), "length_bias")
    assert again["value"] == pytest.approx(expected, rel=1e-9)


def test_length_bias_leaves_out_errors_and_is_null_without_spread():
    frame = pl.DataFrame({"answer_a": ["xx", "x", "x", None], "answer_b": ["x", "x", "xx", "y"],
                          "outcome": ["A", "error", "B", "A"]})
    got = row(quiet_audit(frame, measures=["length_bias"], bootstrap=0), "length_bias")
    # rows 0 and 2 used (d = 1, -1; y = 1, 0): slope S_dy / sqrt(S_dd (n - 1)) = 1 / sqrt(2)
    assert got["value"] == pytest.approx(1 / np.sqrt(2), rel=1e-12)
    assert (got["n"], got["n_excluded"]) == (2, 2)
    same = pl.DataFrame({"answer_a": ["x", "y"], "answer_b": ["z", "w"], "outcome": ["A", "B"]})
    flat = row(quiet_audit(same, measures=["length_bias"], bootstrap=0), "length_bias")
    assert flat["value"] is None and flat["n"] == 2


# ---------------------------------------------------------------- self-preference


SELF = pl.DataFrame({
    "sample_id": [1, 2, 3, 4, 5],
    "model_a": ["m1", "m2", "m1", "m2", "m1"],
    "model_b": ["m2", "m1", "m2", "m3", "m2"],
    "judge": ["m1"] * 5,
    "outcome": ["A", "A", "tie", "A", "error"],
    "human": ["A", "B", "A", "B", "A"],
})


def test_self_win_rate_by_hand_and_through_self_models():
    got = row(quiet_audit(SELF, measures=["self_win_rate"], bootstrap=0), "self_win_rate")
    # own model m1 is a party in rows 1, 2, 3, 5: it wins (A, as A), loses (A, as B), ties;
    # row 5 is an error; row 4 (m2 vs m3) is not its business
    assert got["value"] == pytest.approx((1 + 0 + 0.5) / 3)
    assert (got["n"], got["n_excluded"]) == (3, 1)
    renamed = SELF.with_columns(pl.lit("gpt-judge").alias("judge"))
    mapped = quiet_audit(renamed, measures=["self_win_rate"], bootstrap=0,
                         self_models={"gpt-judge": "m1"})
    assert row(mapped, "self_win_rate")["value"] == got["value"]
    assert "self:gpt-judge,m1" in row(mapped, "self_win_rate")["signature"]


def test_self_preference_against_human_labels_by_hand():
    got = row(quiet_audit(SELF, human="human", measures=["self_preference"], bootstrap=0),
              "self_preference")
    # judge / human for m1: row 1: 1 / 1; row 2: 0 / 1 (the human prefers B = m1);
    # row 3: 0.5 / 1; row 5: error (excluded): mean of 0, -1, -0.5
    assert got["value"] == pytest.approx(-0.5)
    assert (got["n"], got["n_excluded"]) == (3, 1)
    assert "reference:human" in got["signature"]


def test_self_preference_against_other_judges_matches_items_shown_in_either_order():
    frame = pl.DataFrame({
        "sample_id": [1, 1, 2, 2],
        "judge": ["m1", "other", "m1", "other"],
        "model_a": ["m1", "m2", "m1", "m2"],
        "model_b": ["m2", "m1", "m2", "m1"],
        "outcome": ["A", "B", "A", "A"],
    })
    table = quiet_audit(frame, measures=["self_preference"], bootstrap=0)
    got = row(table, "self_preference", judge="m1")
    # question 1: both judges prefer m1 (the other saw it as B): 1 - 1; question 2: the
    # other prefers m2: 1 - 0. Mean 0.5 over two rows
    assert (got["value"], got["n"]) == (0.5, 2)
    other = row(table, "self_preference", judge="other")
    assert other["value"] is None and other["n"] == 0  # not a party to any pair


def test_self_preference_without_a_reference_is_null_with_a_warning_or_an_error():
    with pytest.warns(UserWarning, match="self_preference \\(one judge and no human labels"):
        table = audit(SELF, bootstrap=0)
    got = row(table, "self_preference")
    assert got["value"] is None and got["n"] == 0 and got["n_excluded"] is None
    with pytest.raises(EvalframeError, match="cannot compute self_preference: one judge"):
        audit(SELF, measures=["self_preference"], bootstrap=0)


# ---------------------------------------------------------------- agreement and Cohen's kappa


def sklearn_kappa(human, judge, weights=None):
    from sklearn.metrics import cohen_kappa_score

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # UndefinedMetricWarning where kappa is undefined
        labels = ["A", "tie", "B"] if weights else None
        return cohen_kappa_score(human, judge, labels=labels, weights=weights)


KAPPA_CASES = {
    "one label only": (["A"] * 5, ["A"] * 5),
    "all agree": (["A", "B", "tie", "A", "B"], ["A", "B", "tie", "A", "B"]),
    "disagree completely": (["A", "B", "A", "B"], ["B", "A", "B", "A"]),
    "judge says one label": (["A", "B", "tie", "B"], ["A", "A", "A", "A"]),
    "each uses a label the other never does": (["A", "A", "tie"], ["B", "B", "tie"]),
    "three labels": (["A", "B", "tie", "A", "B", "tie", "A", "A"],
                     ["A", "tie", "tie", "B", "B", "A", "A", "tie"]),
    "one row": (["A"], ["B"]),
}


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
@pytest.mark.parametrize("case", list(KAPPA_CASES))
def test_cohen_kappa_equals_scikit_learn_on_adversarial_labels(case, weights):
    pytest.importorskip("sklearn")
    human, judge = KAPPA_CASES[case]
    frame = pl.DataFrame({"human": human, "outcome": judge})
    table = quiet_audit(frame, human="human", measures=["agreement", "cohen_kappa"],
                        bootstrap=0, kappa_weights=weights)
    expected = sklearn_kappa(human, judge, weights)
    got = row(table, "cohen_kappa")["value"]
    if np.isnan(expected):
        assert got is None
    else:
        assert got == pytest.approx(expected, abs=1e-12)
    agreement = row(table, "agreement")
    assert agreement["value"] == pytest.approx(np.mean(np.array(human) == np.array(judge)))
    assert agreement["n"] == len(human)


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_cohen_kappa_equals_scikit_learn_on_random_labels_with_gaps(weights):
    pytest.importorskip("sklearn")
    rng = np.random.default_rng(7)
    n = 500
    human = rng.choice(LABELS, n, p=[0.4, 0.2, 0.4])
    judge = np.where(rng.random(n) < 0.6, human, rng.choice(LABELS, n))
    outcome = np.where(judge == "tie", rng.choice(["tie", "inconsistent"], n), judge)
    outcome = np.where(rng.random(n) < 0.05, "error", outcome)
    labelled = rng.random(n) >= 0.1
    frame = pl.DataFrame({
        "sample_id": np.arange(n) // 2,
        "outcome": outcome,
        "human": pl.Series(np.where(labelled, human, None), dtype=pl.String),
    })
    table = quiet_audit(frame, human="human", measures=["agreement", "cohen_kappa"],
                        bootstrap=300, kappa_weights=weights)
    used = labelled & (outcome != "error")
    as_label = np.where(outcome == "inconsistent", "tie", outcome)  # inconsistent: a tie
    expected = sklearn_kappa(human[used], as_label[used], weights)
    got = row(table, "cohen_kappa")
    assert got["value"] == pytest.approx(expected, abs=1e-12)
    assert (got["n"], got["n_excluded"]) == (used.sum(), n - used.sum())
    assert got["ci_low"] < got["value"] < got["ci_high"]
    agreement = row(table, "agreement")
    assert agreement["value"] == pytest.approx(np.mean(human[used] == as_label[used]),
                                               rel=1e-12)


def test_human_labels_from_a_separate_frame_are_joined_on_the_item_in_either_order(tmp_path):
    frame = pl.DataFrame({
        "sample_id": [1, 2, 3, 4], "model_a": ["x", "x", "x", "x"], "model_b": ["y"] * 4,
        "outcome": ["A", "B", "tie", "A"],
    })
    # the human saw (y, x) for question 2: its label B there means x, as the judge's A
    labels = pl.DataFrame({
        "sample_id": [1, 2, 3, 9], "model_a": ["x", "y", "x", "x"],
        "model_b": ["y", "x", "y", "y"], "label": ["A", "B", "B", "A"],
    })
    path = tmp_path / "labels.csv"
    labels.write_csv(path)
    table = quiet_audit(frame, human=str(path), human_label="label",
                        measures=["agreement", "cohen_kappa"], bootstrap=0)
    got = row(table, "agreement")
    # question 1 agrees, 2 disagrees (the judge: B = y; the human: x), 3 disagrees; question
    # 4 has no label (excluded); question 9 was not judged (not used)
    assert (got["value"], got["n"], got["n_excluded"]) == (pytest.approx(1 / 3), 3, 1)
    column = frame.with_columns(pl.Series("human", ["A", "A", "B", None]))
    same = quiet_audit(column, human="human", measures=["agreement", "cohen_kappa"],
                       bootstrap=0)
    assert same.drop("signature").equals(table.drop("signature"))


def test_human_label_errors():
    frame = pl.DataFrame({"sample_id": [1, 2], "outcome": ["A", "B"],
                          "human": ["A", "better"]})
    with pytest.raises(EvalframeError, match=r"column 'human' \(the human labels\), row 1: "
                       r"'better' is not a label .*'A', 'B', 'tie'"):
        audit(frame, human="human", bootstrap=0)
    with pytest.raises(EvalframeError, match="human='nowhere.csv': neither a column"):
        audit(frame, human="nowhere.csv", bootstrap=0)
    labels = pl.DataFrame({"sample_id": [1, 1], "human": ["A", "B"]})
    with pytest.raises(EvalframeError, match=r"the human labels hold 1 item\(s\) more than "
                       r"once \(first: sample_id=1, 2 rows\)"):
        audit(frame.drop("human"), human=labels, bootstrap=0)
    with pytest.raises(EvalframeError, match=r"human labels: no column\(s\) \['verdict'\]"):
        audit(frame.drop("human"), human=labels, human_label="verdict", bootstrap=0)
    as_text = pl.DataFrame({"sample_id": ["1", "2"], "human": ["A", "B"]})
    with pytest.raises(EvalframeError, match=r"cannot be joined on \['sample_id'\]: "
                       r"'sample_id' is String there, Int64 in the judgments"):
        audit(frame.drop("human"), human=as_text, bootstrap=0)


# ---------------------------------------------------------------- Fleiss' kappa


def several_judges(seed: int = 5, items: int = 80) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    truth = rng.choice(LABELS, items)
    frames = []
    for judge in ("j1", "j2", "j3"):
        said = np.where(rng.random(items) < 0.6, truth, rng.choice(LABELS, items))
        said = np.where(rng.random(items) < 0.04, "error", said)
        frames.append(pl.DataFrame({
            "sample_id": np.arange(items), "model_a": ["x"] * items, "model_b": ["y"] * items,
            "judge": [judge] * items, "outcome": said,
        }))
    return pl.concat(frames)


def test_fleiss_kappa_equals_statsmodels_on_the_items_every_judge_labelled():
    pytest.importorskip("statsmodels")
    from statsmodels.stats.inter_rater import fleiss_kappa

    frame = several_judges()
    table = quiet_audit(frame, measures=["fleiss_kappa"], bootstrap=200)
    wide = frame.pivot(on="judge", index="sample_id", values="outcome")
    complete = wide.filter(~pl.any_horizontal(pl.col("j1", "j2", "j3") == "error"))
    counts = np.array([[list(r).count(label) for label in LABELS]
                       for r in complete.select("j1", "j2", "j3").rows()])
    got = row(table, "fleiss_kappa")
    assert got["judge"] == "j1 + j2 + j3"
    assert got["value"] == pytest.approx(fleiss_kappa(counts), abs=1e-12)
    assert (got["n"], got["n_excluded"]) == (complete.height, wide.height - complete.height)
    assert got["ci_low"] < got["value"] < got["ci_high"]
    # a judge that saw the models the other way round, its verdicts mirrored: the same items
    mirrored = frame.with_columns(
        pl.when(pl.col("judge") == "j2").then(pl.col(c)).otherwise(pl.col(o)).alias(o)
        for c, o in (("model_b", "model_a"), ("model_a", "model_b"))
    ).with_columns(
        pl.when(pl.col("judge") == "j2")
        .then(pl.col("outcome").replace({"A": "B", "B": "A"}))
        .otherwise(pl.col("outcome"))
    )
    again = row(quiet_audit(mirrored, measures=["fleiss_kappa"], bootstrap=0), "fleiss_kappa")
    assert again["value"] == pytest.approx(got["value"], abs=1e-12)


def test_fleiss_kappa_undefined_and_duplicated_items():
    one_label = several_judges().with_columns(pl.lit("A").alias("outcome"))
    got = row(quiet_audit(one_label, measures=["fleiss_kappa"], bootstrap=0), "fleiss_kappa")
    assert got["value"] is None and got["n"] == 80  # every rating one category: P_e = 1
    twice = pl.concat([several_judges(), several_judges().head(1)])
    with pytest.raises(EvalframeError, match=r"a judge judged 1 item\(s\) more than once "
                       r"\(first: sample_id=0, model_a='x', model_b='y', judge='j1', 2 rows\)"):
        audit(twice, measures=["fleiss_kappa"], bootstrap=0)
    with pytest.raises(EvalframeError, match="cannot compute fleiss_kappa: fewer than two"):
        audit(SELF, measures=["fleiss_kappa"], bootstrap=0)


# ---------------------------------------------------------------- the bootstrap


def test_the_bootstrap_resamples_questions_with_seeded_multinomial_weights():
    frame = verdicts(seed=2, n=200, questions=40)
    table = quiet_audit(frame, measures=["flip_rate"], bootstrap=500, seed=11)
    got = row(table, "flip_rate")
    # by hand: per question, the pairs and the flips; the questions drawn with replacement
    valid = frame.filter(pl.col("verdict_ab").is_in(["A", "B", "tie"])
                         & pl.col("verdict_ba").is_in(["A", "B", "tie"]))
    per_question = (
        frame.select("sample_id").unique().sort("sample_id")
        .join(valid.group_by("sample_id").agg(
            pl.len().alias("pairs"),
            (pl.col("verdict_ab") != pl.col("verdict_ba")).sum().alias("flips"),
        ), on="sample_id", how="left").fill_null(0)
    )
    clusters = per_question.height
    weights = np.random.default_rng(11).multinomial(
        clusters, np.full(clusters, 1 / clusters), size=500
    )
    draws = (weights @ per_question["flips"].to_numpy()) / (
        weights @ per_question["pairs"].to_numpy()
    )
    low, high = np.quantile(draws, [0.025, 0.975])
    assert (got["ci_low"], got["ci_high"]) == (pytest.approx(low, abs=1e-12),
                                               pytest.approx(high, abs=1e-12))
    assert "B:500|seed:11|resample:sample_id|ci:percentile-0.95" in got["signature"]


def test_repeated_questions_are_one_cluster():
    frame = verdicts(seed=3, n=120, questions=120)
    tripled = pl.concat([frame, frame, frame])
    measures = ["position_bias", "flip_rate"]
    once = quiet_audit(frame, measures=measures, bootstrap=300)
    clustered = quiet_audit(tripled, measures=measures, bootstrap=300)
    rows_only = quiet_audit(tripled, measures=measures, bootstrap=300, cluster=False)
    for measure in measures:
        a, b, c = (row(t, measure) for t in (once, clustered, rows_only))
        assert b["value"] == pytest.approx(a["value"], rel=1e-12)
        # the copies of a question are drawn together: the same interval as one copy
        assert (b["ci_low"], b["ci_high"]) == (pytest.approx(a["ci_low"], rel=1e-12),
                                               pytest.approx(a["ci_high"], rel=1e-12))
        assert c["ci_high"] - c["ci_low"] < 0.75 * (b["ci_high"] - b["ci_low"])


def test_seed_and_no_bootstrap():
    frame = verdicts()
    first = quiet_audit(frame, measures=["flip_rate"], seed=1, bootstrap=100)
    assert first.equals(quiet_audit(frame, measures=["flip_rate"], seed=1, bootstrap=100))
    other = quiet_audit(frame, measures=["flip_rate"], seed=2, bootstrap=100)
    assert row(other, "flip_rate")["ci_low"] != row(first, "flip_rate")["ci_low"]
    none = row(quiet_audit(frame, measures=["flip_rate"], bootstrap=0), "flip_rate")
    assert none["ci_low"] is None and none["ci_high"] is None
    assert none["value"] == row(first, "flip_rate")["value"]


def test_replicates_where_a_measure_is_undefined_are_left_out_with_a_warning():
    frame = pl.DataFrame({"sample_id": [1, 2], "verdict_ab": ["A", "tie"],
                          "verdict_ba": ["B", "tie"]})
    with pytest.warns(UserWarning, match="left out of its interval: position_bias"):
        table = audit(frame, measures=["position_bias"], bootstrap=50)
    got = row(table, "position_bias")
    # both decisive verdicts picked the slot shown first; a draw of question 2 alone has none
    assert got["value"] == 1.0 and got["ci_low"] == 1.0 and got["ci_high"] == 1.0


# ---------------------------------------------------------------- the table and its inputs


def test_the_table_lists_groups_judges_and_measures_in_order():
    frame = several_judges().with_columns(
        pl.lit("q").alias("answer_a"), pl.lit("qq").alias("answer_b"),
        pl.lit("A").alias("verdict_ab"), pl.lit("B").alias("verdict_ba"),
        (pl.col("sample_id") % 2).alias("half"),
    )
    table = quiet_audit(frame, by="half", bootstrap=0)
    assert table.columns == ["half", *AUDIT_COLUMNS]
    assert table.schema["n"] == pl.UInt32 and table.schema["value"] == pl.Float64
    judges = ["j1", "j2", "j3"]
    expected = [
        (half, judge, measure)
        for half in (0, 1)
        for judge in [*judges, "j1 + j2 + j3"]
        for measure in (MEASURES[:5] if judge in judges else ("fleiss_kappa",))
    ]
    assert table.select("half", "judge", "measure").rows() == expected
    assert quiet_audit(frame.lazy(), by="half", bootstrap=0).equals(table)


def test_absent_columns_leave_default_measures_null_with_a_warning_and_asked_ones_fail():
    frame = pl.DataFrame({"outcome": ["A", "B"]})
    with pytest.warns(UserWarning, match=r"position_bias \(no column \['verdict_ab', "
                      r"'verdict_ba'\].*length_bias \(no column \['answer_a', 'answer_b'\]"):
        table = audit(frame, bootstrap=0)
    assert table["measure"].to_list() == list(MEASURES[:5])
    assert table["value"].null_count() == 5 and table["n_excluded"].null_count() == 5
    assert table["judge"].to_list() == [None] * 5
    with pytest.raises(EvalframeError, match=r"cannot compute length_bias: no column "
                       r"\['answer_a', 'answer_b'\]"):
        audit(frame, measures=["length_bias"])
    with pytest.raises(EvalframeError, match=r"cannot compute agreement: no human labels"):
        audit(frame, measures=["agreement"])
    empty = quiet_audit(pl.DataFrame(schema={"verdict_ab": pl.String, "verdict_ba": pl.String}),
                        bootstrap=0)
    assert empty.height == 0 and empty.columns == list(AUDIT_COLUMNS)


@pytest.mark.parametrize(
    ("frame", "message"),
    [
        ({"verdict_ab": ["A", "B", "C"], "verdict_ba": ["A", "B", "A"]},
         r"column 'verdict_ab' \(a verdict\), row 2: 'C' is not a label \(1 row\(s\) in all\); "
         r"allowed labels: 'A', 'B', 'tie', 'error', or null \(that call was not made\)"),
        ({"outcome": ["A", "win"]}, r"column 'outcome' \(the outcome\), row 1: 'win'"),
        ({"verdict_ab": [1, 2], "verdict_ba": ["A", "B"]},
         r"column 'verdict_ab' \(a verdict\) is Int64; expected the labels"),
        ({"preference": ["1", "2"]}, r"column 'preference' \(the preference\) is String"),
        ({"outcome": ["A"], "answer_a": [1], "answer_b": ["x"]},
         r"column 'answer_a' \(an answer\) is Int64; expected text"),
    ],
)
def test_bad_labels_and_dtypes_name_the_column_and_row(frame, message):
    with pytest.raises(EvalframeError, match=message):
        quiet_audit(pl.DataFrame(frame), bootstrap=0)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"ci": 1.5}, r"ci=1.5 must be a number strictly between 0 and 1"),
        ({"bootstrap": 1}, r"bootstrap=1 gives no spread"),
        ({"bootstrap": -3}, r"bootstrap=-3 must be an integer >= 0"),
        ({"seed": -1}, r"seed=-1 must be a non-negative integer"),
        ({"kappa_weights": "cubic"}, r"kappa_weights='cubic': expected None"),
        ({"measures": ["position_bias", "verbosity"]}, r"unknown measure\(s\) \['verbosity'\]"),
        ({"measures": []}, r"name at least one measure"),
        ({"by": "judge"}, r"'judge' is the judge column, which the table always splits by"),
        ({"by": "absent"}, r"cannot group by \['absent'\]: no such column"),
        ({"judge": "grader"}, r"judge='grader': no such column"),
        ({"cluster": "question_id"}, r"cluster='question_id': no such column"),
        ({"on": ["sample_id", "turn"]}, r"on=\['sample_id', 'turn'\]: no such column\(s\) "
         r"\['turn'\]"),
        ({"self_models": ["m1"]}, r"self_models=\['m1'\]: expected a mapping"),
        ({"self_models": {"gpt-4": "m1"}}, r"self_models names judge\(s\) \['gpt-4'\]"),
    ],
)
def test_option_mistakes(options, message):
    with pytest.raises(EvalframeError, match=message):
        quiet_audit(SELF, **options)


def test_a_group_column_named_like_a_column_of_the_table_is_refused():
    with pytest.raises(EvalframeError, match=r"cannot group by \['measure'\]: the audit table "
                       r"has column\(s\) of that name; rename"):
        audit(SELF.with_columns(pl.lit("m").alias("measure")), by="measure")


def test_a_null_question_id_cannot_be_resampled():
    frame = SELF.with_columns(pl.when(pl.col("sample_id") == 3).then(None)
                              .otherwise(pl.col("sample_id")).alias("sample_id"))
    with pytest.raises(EvalframeError, match=r"cluster column 'sample_id' is null in 1 "
                       r"row\(s\), first row 2"):
        audit(frame, measures=["self_win_rate"])


def test_the_formatted_table_shows_shares_as_percents_and_slopes_signed():
    frame = pl.DataFrame({"sample_id": [1, 2, 3], "answer_a": ["xx", "x", "x"],
                          "answer_b": ["x", "x", "xx"], "verdict_ab": ["A", "tie", "B"],
                          "verdict_ba": ["A", "A", "B"]})
    table = quiet_audit(frame, measures=["flip_rate", "length_bias"], bootstrap=0)
    cells = dict(ef.table(table).frame.select("measure", "value").rows())
    assert cells == {"flip_rate": "33.3%", "length_bias": "+0.500"}


# ---------------------------------------------------------------- real data


def mt_bench(shared_data) -> pl.DataFrame:
    return ef.load(shared_data / "mtbench-fastchat-fork" / "gpt-4_pair.jsonl.gz")


def test_mt_bench_position_bias_and_flips_by_hand(shared_data):
    path = shared_data / "mtbench-fastchat-fork" / "gpt-4_pair.jsonl.gz"
    first = decisive = pairs = flips = 0
    for line in gzip.decompress(path.read_bytes()).decode().splitlines():
        game = json.loads(line)
        g1, g2 = game["g1_winner"], game["g2_winner"]  # g2: model_2 (B) shown first
        decisive += (g1 in ("model_1", "model_2")) + (g2 in ("model_1", "model_2"))
        first += (g1 == "model_1") + (g2 == "model_2")
        if "error" not in (g1, g2):
            pairs += 1
            flips += g1 != g2
    table = quiet_audit(mt_bench(shared_data), by=["model_a", "model_b"], bootstrap=1000)
    bias, flip = row(table, "position_bias"), row(table, "flip_rate")
    assert (bias["n"], flip["n"]) == (decisive, pairs) == (122, 73)
    assert bias["value"] == pytest.approx(first / decisive, rel=1e-12)
    assert flip["value"] == pytest.approx(flips / pairs, rel=1e-12)
    assert flip["n_excluded"] == 2 and flips == 27
    assert bias["ci_low"] > 0.5  # GPT-4 picks the first slot more often than not
    report = ef.judge.report(mt_bench(shared_data))
    assert bias["value"] == pytest.approx(report["position_bias"][0], rel=1e-12)


def test_mt_bench_length_bias_with_the_answers_from_the_judge_prompts(shared_data):
    from scipy.stats import linregress

    pattern = r"(?s)\[The Start of Assistant {0}'s Answer\]\n(.*)\n\[The End of Assistant {0}"
    frame = mt_bench(shared_data).with_columns(
        pl.col("g1_user_prompt").str.extract(pattern.format("A")).alias("answer_a"),
        pl.col("g1_user_prompt").str.extract(pattern.format("B")).alias("answer_b"),
    )
    assert frame["answer_a"].null_count() == 0 and frame["answer_b"].null_count() == 0
    got = row(quiet_audit(frame, measures=["length_bias"], bootstrap=0), "length_bias")
    judged = ef.judge.classify(frame).filter(pl.col("outcome") != "error")
    y = judged["outcome"].replace_strict({"A": 1.0, "B": 0.0, "tie": 0.5,
                                          "inconsistent": 0.5}).to_numpy()
    d = judged.select(pl.col("answer_a", "answer_b").str.len_chars().cast(pl.Int64))
    d = (d["answer_a"] - d["answer_b"]).to_numpy()
    expected = linregress((d - d.mean()) / d.std(ddof=1), y).slope
    assert got["value"] == pytest.approx(expected, rel=1e-12)
    assert got["n"] == judged.height == 73


def test_mt_bench_kappa_between_the_two_orders_of_the_same_judge(shared_data):
    """The judge's verdicts with A first, as labels, against its verdicts with B first."""
    pytest.importorskip("sklearn")
    pytest.importorskip("statsmodels")
    from statsmodels.stats.inter_rater import fleiss_kappa

    frame = mt_bench(shared_data)
    second = frame.select(
        "sample_id", "model_a", "model_b", pl.col("verdict_ba").alias("outcome"),
        pl.when(pl.col("verdict_ab") != "error").then(pl.col("verdict_ab")).alias("human"),
    )
    table = quiet_audit(second, human="human", measures=["agreement", "cohen_kappa"],
                        bootstrap=500)
    both = frame.filter((pl.col("verdict_ab") != "error") & (pl.col("verdict_ba") != "error"))
    expected = sklearn_kappa(both["verdict_ab"].to_list(), both["verdict_ba"].to_list())
    got = row(table, "cohen_kappa")
    assert got["value"] == pytest.approx(expected, abs=1e-12)
    assert (got["n"], got["n_excluded"]) == (73, 2)
    assert got["ci_low"] < got["value"] < got["ci_high"]
    assert row(table, "agreement")["value"] == pytest.approx(46 / 73)  # 27 of 73 flip
    orders = pl.concat([
        frame.select("sample_id", "model_a", "model_b", pl.lit("A first").alias("judge"),
                     pl.col("verdict_ab").alias("outcome")),
        frame.select("sample_id", "model_a", "model_b", pl.lit("B first").alias("judge"),
                     pl.col("verdict_ba").alias("outcome")),
    ])
    fleiss = row(quiet_audit(orders, measures=["fleiss_kappa"], bootstrap=0), "fleiss_kappa")
    counts = np.array([[[a, b].count(label) for label in ("A", "tie", "B")]
                       for a, b in both.select("verdict_ab", "verdict_ba").rows()])
    assert fleiss["value"] == pytest.approx(fleiss_kappa(counts), abs=1e-12)
    assert fleiss["judge"] == "A first + B first" and fleiss["n"] == 73


def test_alpaca_eval_self_win_rate_length_bias_and_no_position_measures(shared_data):
    from scipy.stats import linregress

    path = (shared_data / "alpaca_eval" / "claude-2.1" / "weighted_alpaca_eval_gpt4_turbo"
            / "annotations.json.gz")
    frame = ef.load(path)
    table = quiet_audit(
        frame, bootstrap=200,
        self_models={"weighted_alpaca_eval_gpt4_turbo": "gpt4_1106_preview"},
    )
    report = ef.judge.report(frame, policy="alpaca_eval")
    own = row(table, "self_win_rate")
    # GPT-4 Turbo judging its own answers (the baseline, A) against claude-2.1's
    assert own["value"] == pytest.approx(1 - report["win_rate"][0] / 100, rel=1e-12)
    assert own["n"] == 805
    pref = frame["preference"].to_numpy()
    d = frame.select(pl.col("answer_a", "answer_b").str.len_chars().cast(pl.Int64))
    d = (d["answer_a"] - d["answer_b"]).to_numpy()
    expected = linregress((d - d.mean()) / d.std(ddof=1), 2 - pref).slope
    assert row(table, "length_bias")["value"] == pytest.approx(expected, rel=1e-12)
    for measure in ("position_bias", "flip_rate"):
        got = row(table, measure)
        assert got["value"] is None and got["n"] == 0 and got["n_excluded"] == 805


def test_the_figures_of_the_documented_worked_example(shared_data):
    """docs/judge.md, "Auditing the judge": the seeded intervals it quotes."""
    pattern = r"(?s)\[The Start of Assistant {0}'s Answer\]\n(.*)\n\[The End of Assistant {0}"
    pairs = mt_bench(shared_data).with_columns(
        pl.col("g1_user_prompt").str.extract(pattern.format("A")).alias("answer_a"),
        pl.col("g1_user_prompt").str.extract(pattern.format("B")).alias("answer_b"),
    )
    table = quiet_audit(pairs, by=["model_a", "model_b"])
    shown = {r["measure"]: tuple(None if v is None else round(v, 3)
                                 for v in (r["value"], r["ci_low"], r["ci_high"]))
             for r in table.iter_rows(named=True)}
    assert shown["position_bias"] == (0.648, 0.580, 0.709)
    assert shown["flip_rate"] == (0.370, 0.267, 0.479)
    assert shown["length_bias"] == (0.081, -0.006, 0.176)
    orders = pairs.select(
        "sample_id", "model_a", "model_b", pl.col("verdict_ba").alias("outcome"),
        pl.when(pl.col("verdict_ab") != "error").then(pl.col("verdict_ab")).alias("human"),
    )
    kappa = row(quiet_audit(orders, human="human", measures=["cohen_kappa"]), "cohen_kappa")
    assert (round(kappa["value"], 3), round(kappa["ci_low"], 3),
            round(kappa["ci_high"], 3)) == (0.437, 0.279, 0.587)
