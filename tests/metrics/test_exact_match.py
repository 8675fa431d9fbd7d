"""exact_match: options, edge rules, nulls, errors (hand-computed values)."""

from __future__ import annotations

import polars as pl
import pytest

import evalframe as ef
from evalframe import EvalframeError
from evalframe import metrics as M


def em(pred, gold, **options):
    frame = pl.DataFrame({"p": pred, "g": gold})
    return frame.select(M.exact_match("p", "g", **options)).to_series().to_list()


def test_default_is_plain_equality():
    assert em(["a", "A", "a ", "", "a\x00"], ["a", "a", "a", "", "a"]) == [
        1.0, 0.0, 0.0, 1.0, 1.0  # trailing NUL ignored, as numpy string arrays do
    ]


def test_options():
    assert em(["The Cat!"], ["the cat"], ignore_case=True, ignore_punctuation=True) == [1.0]
    assert em(["abc123"], ["abc"], ignore_numbers=True) == [1.0]
    assert em(["1,000 USD"], ["1000"], regexes_to_ignore=[",", " USD"]) == [1.0]
    assert em(["\u3000x\x1c"], ["x"], strip=True) == [1.0]  # Python whitespace


def test_prefix_suffix():
    assert em(["answer is 42", "42 is it", "x"], [["42", "zz"], ["42"], [""]],
              match="suffix") == [1.0, 0.0, 1.0]
    assert em(["answer is 42", "42 is it", "x"], [["42"], ["zz", "42"], [""]],
              match="prefix") == [0.0, 1.0, 1.0]
    with pytest.raises(EvalframeError, match="match="):
        M.exact_match("p", "g", match="middle")


def test_nulls_and_alternatives():
    assert em([None, "x", "x", "x"], [["x"], None, [None, "x"], [None]]) == [
        None, None, 1.0, None
    ]


def test_empty_gold_list_is_an_error():
    frame = pl.DataFrame({"p": ["a", "b", "c"], "g": [["a"], [], []]})
    with pytest.raises(EvalframeError, match=r"2 row\(s\).*First offending row: 1"):
        frame.select(M.exact_match("p", "g"))
    with pytest.raises(EvalframeError, match="token_f1"):
        frame.select(M.token_f1("p", "g"))


def test_registered_and_scored():
    frame = pl.DataFrame({"prediction": ["a", "b"], "gold": ["a", "c"]})
    out = ef.score(frame, ["exact_match", "token_f1"])
    assert out["exact_match"].to_list() == [1.0, 0.0]
    assert out["token_f1"].to_list() == [1.0, 0.0]


def test_normalizer_option_is_applied_after_strip():
    # squad: " The Cat! " -> "cat"; gold "cat" -> match; unknown names are errors
    assert em([" The Cat! "], ["cat"], normalizer="squad") == [1.0]
    assert em([" The Cat! "], ["cat"]) == [0.0]
    with pytest.raises(EvalframeError, match="normalizer='nope' is unknown.*'squad'"):
        em(["a"], ["a"], normalizer="nope")
