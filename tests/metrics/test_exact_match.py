"""exact_match and token_f1: options, edge rules, nulls, errors (hand-computed values)."""

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


def test_token_f1():
    frame = pl.DataFrame({"p": ["a b c", "", "x y", "x", None],
                          "g": [["c d"], ["x", ""], ["y y x"], ["", "z"], ["x"]]})
    out = frame.select(M.token_f1("p", "g")).to_series().to_list()
    # "b c" vs "c d": p = r = 1/2 -> 0.5; "" vs "" -> 1 (kept, unlike squad_f1)
    # "x y" vs "y y x": same 2, p = 1, r = 2/3 -> 0.8; "x" vs ""/"z" -> 0
    assert out == [0.5, 1.0, (2 * 1.0 * (2 / 3)) / (1.0 + 2 / 3), 0.0, None]
    raw = frame.select(M.token_f1("p", "g", normalize=None)).to_series().to_list()
    assert raw[0] == (2 * (1 / 3) * 0.5) / (1 / 3 + 0.5)  # "a b c" vs "c d": same 1
    upper = frame.select(
        M.token_f1("p", "g", normalize=lambda e: e.str.to_uppercase())
    ).to_series().to_list()
    assert upper[0] == raw[0]


def test_registered_and_scored():
    frame = pl.DataFrame({"prediction": ["a", "b"], "gold": ["a", "c"]})
    out = ef.score(frame, ["exact_match", "token_f1"])
    assert out["exact_match"].to_list() == [1.0, 0.0]
    assert out["token_f1"].to_list() == [1.0, 0.0]
