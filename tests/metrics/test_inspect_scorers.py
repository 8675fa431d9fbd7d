"""Inspect's string scorers as metrics: hand-worked rows, options, nulls and errors."""

from __future__ import annotations

import polars as pl
import pytest

import evalframe as ef
from evalframe import EvalframeError
from evalframe import metrics as M
from evalframe.metrics.registry import resolve


def _scores(expr: pl.Expr, completions, golds, gold_dtype=None) -> list:
    frame = pl.DataFrame(
        {"completion": completions, "target": golds},
        schema={"completion": pl.String, "target": gold_dtype or pl.List(pl.String)},
    )
    return frame.select(expr.alias("score"))["score"].to_list()


def test_match_locations_by_hand():
    # both sides stripped, casefolded, trimmed of ASCII punctuation: "the answer is paris"
    completion, target = ["  The answer is Paris.  "], [["paris"]]
    for location, expected in [("end", 1.0), ("begin", 0.0), ("any", 1.0), ("exact", 0.0)]:
        expr = M.inspect_match("completion", "target", location=location)
        assert _scores(expr, completion, target) == [expected], location
    exact = M.inspect_match("completion", "target", location="exact")
    assert _scores(exact, ["(Paris)!"], [["paris"]]) == [1.0]
    case = M.inspect_match("completion", "target", ignore_case=False)
    assert _scores(case, ["PARIS"], [["paris"]]) == [0.0]
    # casefold, not lower: "ß" folds to "ss"
    assert _scores(M.inspect_match("completion", "target"), ["STRASSE"], [["straße"]]) == [1.0]


def test_numeric_match_by_hand():
    numeric = M.inspect_match("completion", "target", numeric=True)
    # "$1,000." -> "1000": the last number word; "60%" is no number, "60" never equals it
    assert _scores(numeric, ["It costs $1,000."], [["1000"]]) == [1.0]
    assert _scores(numeric, ["60%"], [["60"]]) == [0.0]
    # 25 does not end with 5 as a number (no fall-back to text)
    assert _scores(numeric, ["25"], [["5"]]) == [0.0]
    # "-3.50" and "-3.5" are both -3.5 -> "-3.5"
    assert _scores(numeric, ["= -3.50"], [["-3.5"]]) == [1.0]
    # the last number decides for "end", the first for "begin", any for "any"
    begin = M.inspect_match("completion", "target", numeric=True, location="begin")
    anywhere = M.inspect_match("completion", "target", numeric=True, location="any")
    rows = ["1 then 2 then 3"]
    assert [_scores(e, rows, [["2"]])[0] for e in (numeric, begin, anywhere)] == [0.0, 0.0, 1.0]
    # a target that is no number is compared as text
    assert _scores(numeric, ["the answer is yes"], [["Yes"]]) == [1.0]


def test_several_targets_any_matches_and_empty_list():
    expr = M.inspect_match("completion", "target")
    assert _scores(expr, ["lyon", "nice", "x"], [["paris", "lyon"], ["paris"], []]) == [
        1.0, 0.0, 0.0,
    ]


def test_null_rules():
    expr = M.inspect_includes("completion", "target")
    got = _scores(expr, [None, "abc", "abc", "abc"], [["a"], None, [None], [None, "b"]])
    assert got == [None, None, None, 1.0]


def test_string_gold():
    got = _scores(M.inspect_includes("completion", "target"), ["abc", "abc"], ["B", "d"],
                  gold_dtype=pl.String)
    assert got == [1.0, 0.0]


def test_includes_empty_target_and_case():
    expr = M.inspect_includes("completion", "target", ignore_case=False)
    assert _scores(expr, ["abc", "abc", ""], [[""], ["B"], [""]]) == [1.0, 0.0, 1.0]


def test_pattern_groups_by_hand():
    first = M.inspect_pattern("completion", "target", pattern=r"(a)|(b)")
    every = M.inspect_pattern("completion", "target", pattern=r"(x)(y)?", match_all=True)
    # "b": groups (None, "b"); "b" is a target -> CORRECT
    assert _scores(first, ["b"], [["B"]]) == [1.0]
    # match_all: the group that did not take part is ignored; "x" must be a target
    assert _scores(every, ["x", "xy", "xy"], [["x"], ["x"], ["x", "y"]]) == [1.0, 0.0, 1.0]
    # a matched empty group is falsy for Inspect: INCORRECT even though "" is a target
    empty = M.inspect_pattern("completion", "target", pattern=r"(\d*)")
    assert _scores(empty, ["abc"], [[""]]) == [0.0]


def test_answer_by_hand():
    letter = M.inspect_answer("completion", "target")
    word = M.inspect_answer("completion", "target", pattern="word")
    line = M.inspect_answer("completion", "target", pattern="line")
    assert _scores(letter, ["ANSWER: b", "ANSWER: B ... ANSWER: C", "no answer"],
                   [["B"], ["B"], ["B"]]) == [1.0, 0.0, 0.0]
    assert _scores(word, ["Answer: Yes."], [["yes"]]) == [1.0]
    assert _scores(line, ["ANSWER: New York City  \n"], [["new york city  "]]) == [1.0]


def test_options_through_requests():
    frame = pl.DataFrame({"prediction": ["It is 42.", "ANSWER: A"], "gold": [["42"], ["a"]]})
    scored = ef.score(frame, [
        "inspect_match(numeric=true)", "inspect_answer(pattern=letter)",
        "inspect_pattern(pattern='is ([0-9]+)')",
    ])
    assert scored["inspect_match(numeric=true)"].to_list() == [1.0, 1.0]
    assert scored["inspect_answer(pattern=letter)"].to_list() == [0.0, 1.0]
    assert scored["inspect_pattern(pattern='is ([0-9]+)')"].to_list() == [1.0, 0.0]


def test_specs():
    for name in ("inspect_match", "inspect_includes", "inspect_pattern", "inspect_answer"):
        spec, _ = resolve(name)
        assert spec.reference.package == "inspect_ai"
        assert spec.role_sets == (("prediction", "gold"),)
        assert spec.higher_is_better


def test_errors():
    with pytest.raises(EvalframeError, match="location='middle' is invalid"):
        M.inspect_match("completion", "target", location="middle")
    with pytest.raises(EvalframeError, match="not a valid Python regular expression"):
        M.inspect_pattern("completion", "target", pattern="(")
    with pytest.raises(EvalframeError, match="'sentence' is unknown"):
        M.inspect_answer("completion", "target", pattern="sentence")


def test_extractor_before_match():
    expr = M.inspect_match("completion", "target", extractor="inspect_answer_word")
    assert _scores(expr, ["ANSWER: Paris.", "no"], [["paris"], ["no"]]) == [1.0, None]
