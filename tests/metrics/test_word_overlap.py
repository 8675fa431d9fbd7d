"""token_f1 (multiset) and word_set_f1 (sets): hand-computed values, options, errors."""

from __future__ import annotations

import polars as pl
import pytest

import evalframe as ef
from evalframe import EvalframeError
from evalframe import metrics as M


def _score(metric: str, prediction, gold) -> list[float | None]:
    frame = pl.DataFrame({"prediction": prediction, "gold": gold})
    return ef.score(frame, {"out": metric})["out"].to_list()


def test_token_f1():
    frame = pl.DataFrame({"p": ["a b c", "", "x y", "x", None],
                          "g": [["c d"], ["x", ""], ["y y x"], ["", "z"], ["x"]]})
    out = frame.select(M.token_f1("p", "g")).to_series().to_list()
    # "b c" vs "c d": p = r = 1/2 -> 0.5; "" vs "" -> 1 (kept, unlike squad_f1)
    # "x y" vs "y y x": same 2, p = 1, r = 2/3 -> 0.8; "x" vs ""/"z" -> 0
    assert out == [0.5, 1.0, (2 * 1.0 * (2 / 3)) / (1.0 + 2 / 3), 0.0, None]
    raw = frame.select(M.token_f1("p", "g", normalizer="none")).to_series().to_list()
    assert raw[0] == (2 * (1 / 3) * 0.5) / (1 / 3 + 0.5)  # "a b c" vs "c d": same 1
    upper = frame.select(
        M.token_f1("p", "g", normalizer=lambda e: e.str.to_uppercase())
    ).to_series().to_list()
    assert upper[0] == raw[0]


@pytest.mark.parametrize(
    ("prediction", "gold", "expected"),
    [
        # sets {the,cat,sat} vs {the,cat}: P=2/3 R=1 -> 1/(0.5/(2/3)+0.5/1) = 0.8
        ("the cat sat", "the cat", 1 / (0.5 / (2 / 3) + 0.5 / 1)),
        # repeats count once: {a,b} vs {a,b} -> 1.0 (SQuAD's multiset F1 would be 0.8)
        ("a a b", "a b", 1.0),
        # no normalisation: "The" != "the"; {The} vs {the}: nothing shared -> 0
        ("The", "the", 0.0),
        # empty sets -> f_measure None -> 0.0
        ("", "", 0.0),
        (" \t", "x", 0.0),
    ],
)
def test_word_set_f1(prediction, gold, expected):
    assert _score("word_set_f1", [prediction], [gold]) == [expected]


def test_word_set_f1_helm_normalises_first():
    # helm: "The Cat!" -> "cat", "a cat" -> "cat" -> F1 1.0; "Cats" vs "cat" -> 0
    scores = _score("word_set_f1(normalizer=helm)", ["The Cat!", "Cats"], ["a cat", "cat"])
    assert scores == [1.0, 0.0]



def test_set_f1_takes_the_best_pair():
    # pairs: {"a","b"} vs {"a"} = 2/3; {"a","b"} vs {"a","b","c"} = 0.8 -> max 0.8
    assert _score("word_set_f1", [["a b"]], [["a", "a b c"]]) == [pytest.approx(0.8, abs=1e-15)]


def test_word_set_f1_errors_name_metric_column_count_and_row():
    frame = pl.DataFrame({"prediction": ["a", "b", "c"], "gold": [["a"], [], []]})
    with pytest.raises(
        EvalframeError, match=r"'word_set_f1': [12] row\(s\) have an empty gold list.*column 'gold'"
    ):
        ef.score(frame, ["word_set_f1"])
    with pytest.raises(EvalframeError, match=r"First offending row: 1 \(gold=\[\]\)"):
        pl.DataFrame({"p": ["a", "b"], "g": [["a"], []]}).select(M.word_set_f1("p", "g"))
    with pytest.raises(EvalframeError, match=r"empty prediction list.*row: 0 \(prediction=\[\]\)"):
        pl.DataFrame({"p": [[], ["b"]], "g": [[], ["b"]]}).select(M.word_set_f1("p", "g"))
    with pytest.raises(EvalframeError, match="normalizer='nope'"):
        M.word_set_f1("p", "g", normalizer="nope")


def test_lighteval_names_point_to_evalframe_names():
    with pytest.raises(EvalframeError, match="word_set_f1"):
        ef.score(pl.DataFrame({"prediction": ["a"], "gold": ["a"]}), ["f1_score"])
