"""Unit tests of the BLEU family; expected numbers are sacrebleu 2.6.0's and nltk 3.10's.

The values below were computed with ``sacrebleu.corpus_bleu`` / ``sentence_bleu`` and
``BLEU()._extract_corpus_statistics`` on the same texts (see
``tests/conformance/test_bleu_conformance.py`` for the live comparisons).
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

import evalframe as ef
from evalframe.errors import EvalframeError
from evalframe.metrics.bleu import (
    STATISTICS,
    bleu,
    bleu_4,
    compute_bleu,
    sacrebleu_signature,
    sentence_bleu,
)
from evalframe.metrics.registry import resolve
from evalframe.normalize.sacrebleu_tokenize import sacrebleu_tokenizer

HYPS = [
    "the cat sat on the mat",
    "It is a guide to action which ensures that the military always obeys the commands of "
    "the party.",
    "",
    "Hello there",
]
REFS = [
    "the cat is on the mat",
    "It is a guide to action that ensures that the military will forever heed Party commands.",
    "hello",
    "Hi there",
]
#: BLEU()._extract_corpus_statistics(HYPS, [REFS])
SEGMENT_STATISTICS = [
    [6, 6, 5, 3, 1, 0, 6, 5, 4, 3],
    [19, 17, 12, 8, 6, 4, 19, 18, 17, 16],
    [0, 1, 0, 0, 0, 0, 0, 0, 0, 0],
    [2, 2, 1, 0, 0, 0, 2, 1, 0, 0],
]
CORPUS_BLEU = 38.26650777146075  # sacrebleu.corpus_bleu(HYPS, [REFS]).score
FIRST_TWO_BLEU = 38.8677789717819  # sacrebleu.corpus_bleu(HYPS[:2], [REFS[:2]]).score
INTL_LC_FLOOR = 38.78726023340742  # lowercase=True, tokenize="intl", smooth_method="floor"
SENTENCE = [37.99178428257963, 39.67088290836578, 0.0, 49.99999999999999]

FIELDS = [f.name for f in STATISTICS.fields if f.name != "n_refs"]


def _frame() -> pl.DataFrame:
    return pl.DataFrame({"prediction": HYPS, "gold": REFS})


def test_statistics_are_sacrebleus_segment_statistics():
    stats = _frame().select(bleu("prediction", "gold").alias("s"))["s"].struct.unnest()
    assert [list(row) for row in stats.select(FIELDS).rows()] == SEGMENT_STATISTICS
    assert stats["n_refs"].to_list() == [1, 1, 1, 1]


def test_score_and_aggregate_give_corpus_bleu():
    scored = ef.score(_frame(), ["bleu"])
    table = ef.aggregate(scored, metrics=["bleu"])
    assert table["value"].item() == CORPUS_BLEU
    assert table["n"].item() == 4
    options = "bleu(lowercase=true, tokenize='intl', smooth_method=floor)"
    scored = ef.score(_frame(), {"b": options})
    assert ef.aggregate(scored, metrics={"b": options})["value"].item() == INTL_LC_FLOOR


def test_grouped_aggregate_reduces_each_group():
    frame = _frame().with_columns(task=pl.Series(["x", "x", "y", "y"]))
    table = ef.aggregate(ef.score(frame, ["bleu"]), by=["task"], metrics=["bleu"])
    assert table.filter(pl.col("task") == "x")["value"].item() == FIRST_TWO_BLEU


def test_halves_sum_to_the_whole():
    stats = _frame().select(bleu("prediction", "gold").alias("s"))["s"].struct.unnest()
    first, second = stats.slice(0, 2), stats.slice(2)
    sums = {name: np.array([float(first[name].sum() + second[name].sum())]) for name in FIELDS}
    assert compute_bleu(sums)[0] == CORPUS_BLEU


def test_compute_bleu_is_vectorised_over_tables():
    rows = np.array(SEGMENT_STATISTICS, dtype=np.float64)
    whole = rows.sum(axis=0)
    first = rows[:2].sum(axis=0)
    sums = {name: np.array([whole[i], first[i]]) for i, name in enumerate(FIELDS)}
    assert compute_bleu(sums).tolist() == [CORPUS_BLEU, FIRST_TWO_BLEU]


def test_sentence_bleu_per_row():
    scores = _frame().select(sentence_bleu("prediction", "gold").alias("s"))["s"].to_list()
    assert scores == pytest.approx(SENTENCE, abs=1e-12)


def test_several_references_closest_length_ties_to_the_shorter():
    # sacrebleu: corpus_bleu(["a b c"], [["a b c d"], ["a b"]]) -> stats [3, 2, 3, 2, 1, 0, ...]
    frame = pl.DataFrame({"prediction": ["a b c"], "gold": [["a b c d", "a b"]]})
    stats = frame.select(bleu("prediction", "gold").alias("s"))["s"].struct.unnest()
    assert list(stats.select(FIELDS).row(0)) == [3, 2, 3, 2, 1, 0, 3, 2, 1, 0]
    assert stats["n_refs"].item() == 2


def test_nulls_give_null_statistics_and_null_references_are_left_out():
    frame = pl.DataFrame(
        {
            "prediction": ["a b", None, "a b", "a b"],
            "gold": [["a b", None], ["a"], None, [None, None]],
        }
    )
    stats = frame.select(bleu("prediction", "gold").alias("s"))["s"]
    assert stats.is_null().to_list() == [False, True, True, True]
    assert stats.struct.field("n_refs")[0] == 1
    scores = frame.select(sentence_bleu("prediction", "gold").alias("s"))["s"]
    assert scores.is_null().to_list() == [False, True, True, True]


def test_empty_gold_list_raises_naming_the_row():
    frame = pl.DataFrame({"prediction": ["a", "b"], "gold": [["a"], []]},
                         schema={"prediction": pl.String, "gold": pl.List(pl.String)})
    with pytest.raises(EvalframeError, match=r"'bleu'.*empty gold list.*First offending row: 1"):
        frame.select(bleu("prediction", "gold"))


def test_refused_and_unknown_options():
    with pytest.raises(EvalframeError, match="ja-mecab.*MeCab"):
        bleu("p", "g", tokenize="ja-mecab")
    with pytest.raises(EvalframeError, match="flores200.*SentencePiece"):
        sacrebleu_tokenizer("bleu", "flores200")
    with pytest.raises(EvalframeError, match="unknown"):
        bleu("p", "g", tokenize="14a")
    with pytest.raises(EvalframeError, match="smooth_method"):
        bleu("p", "g", smooth_method="laplace")
    with pytest.raises(EvalframeError, match="max_ngram_order"):
        bleu("p", "g", max_ngram_order=5)
    with pytest.raises(EvalframeError, match="tokenize"):
        ef.score(_frame(), ["bleu(tokenize='spm')"])


def test_signature_strings():
    # sacrebleu BLEU(...).get_signature() after corpus_score with one reference stream
    assert sacrebleu_signature() == "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0"
    assert (
        sacrebleu_signature(nrefs=2, lowercase=True, tokenize="zh", smooth_method="add-k",
                            effective_order=True)
        == "nrefs:2|case:lc|eff:yes|tok:zh|smooth:add-k[1.00]|version:2.6.0"
    )


def test_spec():
    spec, _ = resolve("bleu")
    assert spec.level == "corpus" and spec.bounds == (0.0, 100.0)
    assert spec.statistics == STATISTICS
    assert spec.reference.package == "sacrebleu" and spec.reference.version == "2.6.0"
    assert resolve("sentence_bleu")[0].level == "sample"
    assert resolve("bleu_4")[0].bounds == (0.0, 1.0)


def test_bleu_4_of_one_word_is_bp_times_the_smallest_float():
    # nltk sentence_bleu([["Bonjour"]], ["Bonjour"], weights=(0, 0, 0, 1)) = 2.2250738585072626e-308
    frame = pl.DataFrame({"p": ["Bonjour", "Il pleut"], "g": ["Bonjour", "Le soleil"]})
    scores = frame.select(bleu_4("p", "g", sentence_split=False).alias("s"))["s"].to_list()
    assert scores[0] == pytest.approx(2.2250738585072626e-308, rel=1e-12)
    assert scores[1] == 0.0
