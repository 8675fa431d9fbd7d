"""squad_normalize / squad_tokens against the SQuAD script's normalize_answer / get_tokens."""

from __future__ import annotations

import random

import polars as pl
import pytest

from evalframe.normalize.squad import squad_normalize, squad_tokens, squad_word_ids

squad_metrics = pytest.importorskip("transformers.data.metrics.squad_metrics")

CASES = [
    "", " ", "The Cat", "a an the", "the\u3000end", "x\x1cthe\x1fy", "The.", "the–end",
    "a\u0301b", "the\u0301", "a² b", "ΟΔΟΣ ΟΔΟΣ.", "İstanbul", "\ua7cbX", "Straße", "“the”",
    "an-the", "a_the", "it's the cat's", "\u200bthe", "the\x85end", "tab\tthe\nnew",
]


def test_cases_match_reference():
    frame = pl.DataFrame({"text": CASES})
    out = frame.select(
        squad_normalize("text").alias("norm"), squad_tokens("text").alias("tokens")
    )
    assert out["norm"].to_list() == [squad_metrics.normalize_answer(t) for t in CASES]
    assert out["tokens"].to_list() == [squad_metrics.get_tokens(t) for t in CASES]


def test_random_unicode_matches_reference():
    # Mixed ASCII and non-ASCII rows in one batch exercise both paths of the kernel.
    rng = random.Random(1)
    pieces = ["the", "a", "an", " ", "  ", "\t", ".", "-", "é", "\u0301", "Σ", "²", "\u3000",
              "\x1d", "x", "Y", "_", "–", "İ", "中", "\U00010d50"]
    texts = ["".join(rng.choice(pieces) for _ in range(rng.randint(0, 10))) for _ in range(3000)]
    texts += ["".join(chr(rng.randint(32, 0x3000)) for _ in range(8)) for _ in range(2000)]
    out = pl.DataFrame({"t": texts}).select(squad_normalize("t"))["t"].to_list()
    assert out == [squad_metrics.normalize_answer(t) for t in texts]


def test_null_gives_null_and_empty_gives_empty_list():
    frame = pl.DataFrame({"t": [None, "", "the"]}, schema={"t": pl.String})
    out = frame.select(squad_normalize("t").alias("n"), squad_tokens("t").alias("k"))
    assert out["n"].to_list() == [None, "", ""]
    assert out["k"].to_list() == [None, [], []]


def test_same_input_gives_the_same_expression_for_sharing():
    # polars' common-subexpression elimination compares Python functions by identity.
    assert squad_normalize("pred") is squad_normalize(pl.col("pred"))


def test_word_ids_are_the_reference_tokens():
    rng = random.Random(3)
    pieces = ["the", "A", "an", " ", "  ", "\t", "\xa0", ".", "(", "é", "\u0301", "Σ", "²", "x",
              "\u3000", "\x1d", "’", "Y", "_", "İ", "cat", "Cat", "a’a"]
    texts = ["".join(rng.choice(pieces) for _ in range(rng.randint(0, 12))) for _ in range(5000)]
    texts.append(None)
    counts, words = squad_word_ids(pl.Series(texts, dtype=pl.String))
    expected = [squad_metrics.get_tokens(t or "") for t in texts]
    assert counts.tolist() == [len(tokens) for tokens in expected]
    flat = [token for tokens in expected for token in tokens]
    assert len(words) == len(flat)
    # Equal ids exactly for equal words: the id -> word map is a bijection.
    pairs = set(zip(words.tolist(), flat, strict=True))
    assert len(pairs) == len({w for w, _ in pairs}) == len({t for _, t in pairs})


def test_word_ids_of_nothing():
    counts, words = squad_word_ids(pl.Series([], dtype=pl.String))
    assert counts.size == 0 and words.size == 0
    counts, words = squad_word_ids(pl.Series(["", " ", "the ..."]))
    assert counts.tolist() == [0, 0, 0] and words.size == 0
