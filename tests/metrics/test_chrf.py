"""chrF: hand-computed statistics, edge rules, registry entries, options and merging."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest

import evalframe as ef
from evalframe import EvalframeError
from evalframe import metrics as M
from evalframe.metrics.chrf import (
    chrf_reduction,
    f_score,
    sacrebleu_signature,
    statistics_dtype,
    statistics_fields,
)
from evalframe.metrics.registry import resolve


def stats(frame: pl.DataFrame, **options) -> pl.DataFrame:
    return frame.select(M.chrf("h", "r", **options).alias("s")).unnest("s")


def test_hand_computed_character_statistics():
    # "ab c" without whitespace is "abc": unigrams a b c, bigrams ab bc; the reference
    # "abd" shares a, b and ab
    frame = pl.DataFrame({"h": ["ab c"], "r": ["abd"]})
    assert stats(frame, char_order=2).row(0) == (3, 3, 2, 2, 2, 1)


def test_hand_computed_word_statistics_split_punctuation():
    # "(hi) there." -> "(hi", ")", "there", "." (only the end of "(hi)" is split);
    # "(hi ) there ." -> "(", "hi", ")", "there", "." ("(hi" ends in a letter)
    frame = pl.DataFrame({"h": ["(hi) there."], "r": ["(hi ) there ."]})
    row = stats(frame, char_order=1, word_order=2).row(0, named=True)
    assert (row["word1_hyp"], row["word1_ref"], row["word1_match"]) == (4, 5, 3)
    # bigrams: ") there", "there ." are shared; "(hi )" is not
    assert (row["word2_hyp"], row["word2_ref"], row["word2_match"]) == (3, 4, 2)


def test_hypothesis_counts_are_zero_without_reference_ngrams():
    frame = pl.DataFrame({"h": ["abc", "abc"], "r": ["", "a"]})
    assert stats(frame, char_order=2).rows() == [(0, 0, 0, 0, 0, 0), (3, 1, 1, 0, 0, 0)]


def test_f_score_by_hand():
    # one order: precision 3/3, recall 3/4, beta 2: 5 * 1 * 0.75 / (4 * 1 + 0.75)
    got = f_score(np.array([[3]]), np.array([[4]]), np.array([[3]]))
    assert got[0] == 100 * (5 * 1.0 * 0.75) / (4 * 1.0 + 0.75)
    # no order with counts: 0.0; eps smoothing averages eps-scores over the orders
    assert f_score(np.zeros((1, 2)), np.zeros((1, 2)), np.zeros((1, 2)))[0] == 0.0
    eps = f_score(np.zeros((1, 2)), np.zeros((1, 2)), np.zeros((1, 2)), eps_smoothing=True)
    assert eps[0] == 100 * (1e-16 + 1e-16) / 2


def test_best_reference_first_of_equal():
    frame = pl.DataFrame({"h": ["abc"], "r": [["abx", "aby", "abc", "abc"]]})
    # equal f-scores for abx and aby: the first; abc beats both
    assert stats(frame, char_order=1).row(0) == (3, 3, 3)
    tie = pl.DataFrame({"h": ["ab"], "r": [["abx", "aby"]]})
    assert stats(tie, char_order=1).row(0) == (2, 3, 2)


def test_nulls_and_empty_lists():
    frame = pl.DataFrame(
        {"h": ["a", None, "a", "a"], "r": [["a", None], ["a"], [None, None], None]},
        schema={"h": pl.String, "r": pl.List(pl.String)},
    )
    out = frame.select(M.chrf("h", "r").alias("s"))["s"]
    assert out.is_null().to_list() == [False, True, True, True]
    empty = pl.DataFrame({"h": ["a", "b"], "r": [["a"], []]},
                         schema={"h": pl.String, "r": pl.List(pl.String)})
    with pytest.raises(EvalframeError, match="1 row.*empty reference list.*First offending row: 1"):
        empty.select(M.chrf("h", "r"))
    sentence = frame.select(M.sentence_chrf("h", "r"))["h"]
    assert sentence.is_null().to_list() == [False, True, True, True]


def test_registry_entries():
    for name in ("chrf", "chrf++", "sentence_chrf"):
        spec, params = resolve(name)
        assert spec.name == name and params == {}
        assert spec.reference.package == "sacrebleu" and spec.reference.version == "2.6.0"
        assert spec.bounds == (0.0, 100.0)
    assert resolve("chrf")[0].statistics == statistics_dtype(6, 0)
    assert resolve("chrf++")[0].statistics == statistics_dtype(6, 2)
    assert resolve("chrf++")[0].options == {"word_order": 2}
    assert resolve("sentence_chrf")[0].level == "sample"
    with pytest.raises(EvalframeError, match="fixed to 2"):
        ef.score(pl.DataFrame({"prediction": ["a"], "gold": ["a"]}), ["chrf++(word_order=1)"])


def test_statistics_fields_layout():
    assert statistics_fields(1, 1) == [
        "char1_hyp", "char1_ref", "char1_match", "word1_hyp", "word1_ref", "word1_match"
    ]
    assert len(statistics_fields()) == 18 and len(statistics_fields(6, 2)) == 24


@pytest.mark.parametrize(
    "options",
    [{"char_order": 0, "word_order": 0}, {"char_order": -1}, {"word_order": -2}, {"beta": -1}],
)
def test_invalid_options_raise(options):
    with pytest.raises(EvalframeError, match="metric 'chrf"):
        M.chrf("h", "r", **options)


def test_partitions_merge_exactly():
    frame = pl.DataFrame(
        {"prediction": ["the cat sat", "a dog", "", "über alles"] * 5,
         "gold": ["the cat sat down", "the dog", "x", "uber alles"] * 5}
    )
    whole = ef.aggregate(ef.score(frame, ["chrf"]), bootstrap=2)["value"].item()
    halves = pl.concat([ef.score(frame.slice(0, 7), ["chrf"]), ef.score(frame.slice(7), ["chrf"])])
    assert ef.aggregate(halves, bootstrap=2)["value"].item() == whole
    sums = ef.score(frame, ["chrf"])["chrf"].struct.unnest().sum()
    formula = chrf_reduction().formula({k: sums[k].to_numpy() for k in sums.columns})
    assert formula[0] == whole and 0 < whole < 100


def test_sentence_chrf_is_the_formula_of_its_row():
    frame = pl.DataFrame({"h": ["the cat", "a"], "r": ["the hat", "a"]})
    rows = stats(frame).to_numpy().reshape(2, -1, 3)
    expected = f_score(rows[:, :, 0], rows[:, :, 1], rows[:, :, 2])
    got = frame.select(M.sentence_chrf("h", "r")).to_series().to_numpy()
    assert np.array_equal(got, expected) and not math.isnan(got[0])


def test_sacrebleu_signature_defaults_and_options():
    assert sacrebleu_signature() == "nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:2.6.0"
    assert sacrebleu_signature(nrefs="var", eps_smoothing=True, whitespace=True, word_order=2) == (
        "nrefs:var|case:mixed|eff:no|nc:6|nw:2|space:yes|version:2.6.0"
    )


def test_aggregate_reduces_non_default_orders_as_sacrebleu():
    sacrebleu = pytest.importorskip("sacrebleu", reason="sacrebleu is not installed")
    frame = pl.DataFrame({
        "prediction": ["the cat sat on the mat.", "a dög ran, fast", ""],
        "gold": ["the cat sat down on a mat", "a dog ran fast!", "nothing"],
    })
    scored = ef.score(frame, ["chrf(char_order=4, word_order=1)"])
    (row,) = ef.aggregate(scored).rows(named=True)
    expected = sacrebleu.corpus_chrf(
        frame["prediction"].to_list(), [frame["gold"].to_list()], char_order=4, word_order=1
    ).score
    assert row["value"] == pytest.approx(expected, abs=1e-9)


def test_aggregate_writes_sacrebleus_signature_beside_evalframes():
    sacrebleu = pytest.importorskip("sacrebleu", reason="sacrebleu is not installed")
    frame = pl.DataFrame({
        "model": ["a", "a", "b", "b"],
        "prediction": ["the cat sat", "a dog", "x", "y z"],
        "gold": [["the cat sat down", "r"], ["a dog ran", "q"], ["x"], ["y", "w"]],
    })
    table = ef.aggregate(ef.score(frame, ["chrf++", "exact_match"]), by="model")
    signatures = dict(
        table.filter(pl.col("metric") == "chrf++").select("model", "reference_signature").rows()
    )
    reference = sacrebleu.metrics.CHRF(word_order=2)
    reference.corpus_score(["the cat sat", "a dog"], [["the cat sat down", "a dog ran"],
                                                       ["r", "q"]])
    assert signatures["a"] == reference.get_signature().format()
    # model b has one reference on one row and two on the other: sacrebleu's "var"
    assert signatures["b"].startswith("nrefs:var|")
    assert table.filter(pl.col("metric") == "exact_match")["reference_signature"].is_null().all()
