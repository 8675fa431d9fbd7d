"""ef.audit_extractors: coverage, accuracy, disagreements, flips (hand-computed)."""

from __future__ import annotations

import polars as pl
import pytest

import evalframe as ef
from evalframe import EvalframeError

# row: boxed / gsm8k_answer / last_number (hand-extracted), gold
#  0 "\boxed{4} so 5":  4 / [invalid] / 5        gold 4
#  1 "#### 5":          null / 5 / 5             gold 5
#  2 "\boxed{6} #### 7" 6 / 7 / 7                gold 7
#  3 "nothing":         null / [invalid] / ""    gold 1
#  4 null:              null / null / null        gold 2
#  5 "#### 8":          null / 8 / 8             gold null
FRAME = pl.DataFrame(
    {
        "task": ["a", "a", "a", "b", "b", "b"],
        "prediction": ["\\boxed{4} so 5", "#### 5", "\\boxed{6} #### 7", "nothing", None,
                       "#### 8"],
        "gold": ["4", "5", "7", "1", "2", None],
    }
)
ALL = ["boxed", "gsm8k_answer", "last_number"]


def test_summary_without_gold():
    summary = ef.audit_extractors(FRAME, ALL).summary
    assert summary.columns == ["extractor", "rows", "answered", "coverage"]
    assert summary["extractor"].to_list() == ALL
    assert summary["rows"].to_list() == [6, 6, 6]
    # boxed: rows 0, 2; gsm8k: 1, 2, 5 (the '[invalid]' fallback has rule none); last: 0-2, 5
    assert summary["answered"].to_list() == [2, 3, 4]
    assert summary["coverage"].to_list() == [2 / 6, 3 / 6, 4 / 6]


def test_summary_with_gold():
    summary = ef.audit_extractors(FRAME, ALL, gold="gold").summary
    assert summary.columns == [
        "extractor", "rows", "answered", "coverage", "n_gold", "correct", "accuracy"
    ]
    assert summary["n_gold"].to_list() == [5, 5, 5]
    # boxed: row 0 right; gsm8k: rows 1, 2; last_number: rows 1, 2
    assert summary["correct"].to_list() == [1, 2, 2]
    assert summary["accuracy"].to_list() == [1 / 5, 2 / 5, 2 / 5]


def test_accuracy_equals_the_aggregated_metric():
    summary = ef.audit_extractors(FRAME, ALL, gold="gold").summary
    for extractor, accuracy in zip(summary["extractor"], summary["accuracy"], strict=True):
        metric = f"exact_match(extractor={extractor})"
        value = ef.aggregate(ef.score(FRAME, [metric]))["value"].item()
        assert value == pytest.approx(accuracy, rel=1e-12), extractor


def test_disagreements():
    table = ef.audit_extractors(FRAME, ALL).disagreements
    assert table.select("extractor_a", "extractor_b").rows() == [
        ("boxed", "gsm8k_answer"), ("boxed", "last_number"), ("gsm8k_answer", "last_number")
    ]
    # boxed/gsm8k: both on row 2 (6 vs 7); boxed/last: rows 0 (4 vs 5), 2 (6 vs 7);
    # gsm8k/last: rows 1, 2, 5, all equal; only: boxed-gsm8k 1/2, boxed-last 0/2, gsm8k-last 0/1
    assert table["both_answered"].to_list() == [1, 2, 3]
    assert table["disagree"].to_list() == [1, 2, 0]
    assert table["disagreement"].to_list() == [1.0, 1.0, 0.0]
    assert table["only_a"].to_list() == [1, 0, 0]
    assert table["only_b"].to_list() == [2, 2, 1]


def test_flips():
    flips = ef.audit_extractors(FRAME, ALL, gold="gold").flips
    assert flips.columns == [
        "row", "prediction", "gold", "extracted_boxed", "correct_boxed",
        "extracted_gsm8k_answer", "correct_gsm8k_answer", "extracted_last_number",
        "correct_last_number",
    ]
    # row 0: boxed right, others wrong; rows 1, 2: boxed wrong, others right; row 3, 4: all
    # wrong; row 5: no gold
    assert flips["row"].to_list() == [0, 1, 2]
    assert flips["correct_boxed"].to_list() == [True, False, False]
    assert flips["correct_last_number"].to_list() == [False, True, True]
    assert ef.audit_extractors(FRAME, ALL).flips.is_empty()


def test_by_groups():
    audit = ef.audit_extractors(FRAME, ["boxed", "last_number"], gold="gold", by="task")
    summary = audit.summary
    assert summary.columns[:2] == ["task", "extractor"]
    assert summary.select("task", "extractor", "rows", "n_gold", "correct").rows() == [
        ("a", "boxed", 3, 3, 1), ("b", "boxed", 3, 2, 0),
        ("a", "last_number", 3, 3, 2), ("b", "last_number", 3, 2, 0),
    ]
    assert audit.disagreements["task"].to_list() == ["a", "b"]
    assert audit.disagreements["both_answered"].to_list() == [2, 0]
    assert audit.disagreements["disagreement"].to_list() == [1.0, None]
    assert audit.flips.columns[:3] == ["row", "task", "prediction"]


def test_gold_alternatives_and_gold_extractor():
    frame = pl.DataFrame(
        {
            "prediction": ["\\boxed{4}", "\\boxed{5}", "\\boxed{6}"],
            "gold": [["3", "4"], [None], []],
            "solution": ["so #### 4", "#### 6", "nothing"],
        }
    )
    summary = ef.audit_extractors(frame, ["boxed"], gold="gold").summary
    # an empty list or a list of only nulls is no gold
    assert summary.select("n_gold", "correct").row(0) == (1, 1)
    extracted = ef.audit_extractors(
        frame, ["boxed"], gold="solution", gold_extractor="gsm8k_answer"
    ).summary
    # golds '4', '6', '[invalid]'
    assert extracted.select("n_gold", "correct").row(0) == (3, 1)


def test_the_text_itself_is_a_baseline():
    frame = pl.DataFrame({"prediction": ["4", "\\boxed{4}"], "gold": ["4", "4"]})
    audit = ef.audit_extractors(frame, ["none", "boxed"], gold="gold")
    assert audit.summary["correct"].to_list() == [1, 1]
    assert audit.flips["row"].to_list() == [0, 1]


def test_generations_are_audited_one_by_one():
    frame = pl.DataFrame(
        {"prediction": [["\\boxed{1}", "1"], [], None], "gold": ["1", "2", "3"]}
    )
    audit = ef.audit_extractors(frame, ["boxed", "last_number"], gold="gold")
    # row 0 gives two generations, row 1 none (an empty list), row 2 a null response
    assert audit.summary["rows"].to_list() == [3, 3]
    assert audit.summary["correct"].to_list() == [1, 2]
    assert audit.flips.select("row", "generation").rows() == [(0, 1)]


def test_lazy_input_and_errors():
    assert ef.audit_extractors(FRAME.lazy(), ALL, gold="gold").summary.equals(
        ef.audit_extractors(FRAME, ALL, gold="gold").summary
    )
    with pytest.raises(EvalframeError, match=r"no column\(s\) \['nope'\]"):
        ef.audit_extractors(FRAME, ALL, gold="nope")
    with pytest.raises(EvalframeError, match=r"no column\(s\) \['model'\]"):
        ef.audit_extractors(FRAME, ALL, by=["model"])
    with pytest.raises(EvalframeError, match="unknown extractor 'x'"):
        ef.audit_extractors(FRAME, ["x"])
    with pytest.raises(EvalframeError, match="gold column 'n' has dtype Int64"):
        ef.audit_extractors(FRAME.with_columns(n=pl.lit(1, dtype=pl.Int64)), ALL, gold="n")
    with pytest.raises(EvalframeError, match="named like the audit's own columns"):
        ef.audit_extractors(FRAME.rename({"task": "row"}), ALL, by="row")


def test_one_extractor_has_no_pairs():
    audit = ef.audit_extractors(FRAME, "boxed", gold="gold")
    assert audit.disagreements.is_empty()
    assert audit.disagreements.columns[:2] == ["extractor_a", "extractor_b"]
    assert audit.flips.is_empty()
