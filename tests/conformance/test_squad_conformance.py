"""squad_em / squad_f1 / token_f1 against the SQuAD 2.0 official functions.

The reference is ``transformers.data.metrics.squad_metrics`` (normalize_answer,
compute_exact, compute_f1 and get_raw_scores' gold filtering). Every comparison is
exact: EM and F1 values must be equal as floats, bit for bit.
"""

from __future__ import annotations

import json
import random
import re
import string
import struct
import sys
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

from evalframe import metrics as M

squad_metrics = pytest.importorskip("transformers.data.metrics.squad_metrics")

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "squad-explorer"


def reference_row(prediction: str, answers: list[str]) -> tuple[float, float]:
    """get_raw_scores for one question: filter golds, then max over them."""
    golds = [a for a in answers if squad_metrics.normalize_answer(a)] or [""]
    em = max(squad_metrics.compute_exact(a, prediction) for a in golds)
    f1 = max(squad_metrics.compute_f1(a, prediction) for a in golds)
    return float(em), float(f1)


def score(predictions: list[str], answers: list[list[str]]) -> pl.DataFrame:
    frame = pl.DataFrame(
        {"pred": predictions, "gold": answers},
        schema={"pred": pl.String, "gold": pl.List(pl.String)},
    )
    return frame.lazy().with_columns(
        M.squad_em("pred", "gold").alias("em"), M.squad_f1("pred", "gold").alias("f1")
    ).collect()


def bits(value: float) -> bytes:
    return struct.pack("<d", value)


def assert_matches_reference(predictions: list[str], answers: list[list[str]]) -> None:
    out = score(predictions, answers)
    mismatches = []
    for i, (p, a, em, f1) in enumerate(
        zip(predictions, answers, out["em"].to_list(), out["f1"].to_list(), strict=True)
    ):
        ref_em, ref_f1 = reference_row(p, a)
        if em != ref_em or bits(f1) != bits(ref_f1):
            mismatches.append((i, p, a, (em, f1), (ref_em, ref_f1)))
    assert not mismatches, f"{len(mismatches)} mismatches, first: {mismatches[:3]}"


# Adversarial texts: each is used as a prediction and as a gold answer.
ADVERSARIAL = [
    "", " ", "   ", "\t\n", "\u3000", "\x1c", "\x1d\x1e\x1f", "\x85", "\xa0", "\u200b",
    "a", "an", "the", "The", "THE", "a an the", "the the", "A.", "the.", "(the)", "an-the",
    "!", "...", "?!", "'", '"', "$", "-", "—", "–", "«the»", "“a”", "¿the?", "the–end",
    "x–the–y", "the\u2014end", "Paris", "paris", "PARIS.", "the Paris", "Paris, France",
    "Paris France", "France Paris", "paris paris", "paris paris paris", "cat cat dog",
    "dog cat cat", "a b c", "c d", "1973", "October 1973", "$12", "nearly $12", "12",
    "a\u0301", "the\u0301", "e\u0301", "é", "café", "cafe\u0301", "a²", "the²", "²", "½",
    "ΑΣ", "ΟΔΟΣ ΟΔΟΣ", "οδος", "οδοσ", "ς", "Σ", "İstanbul", "istanbul", "i̇stanbul",
    "ß", "SS", "ǅ", "ﬁ", "Straße", "naïve", "NAÏVE", "x\x1cthe\x1dy", "the\x00", "a\x00b",
    "_the_", "the_", "a_b", "x_y", "٣", "the٣", "中文", "中 文", "the中", "a\u3000the\u3000b",
    "a\u2028b", "the\u2029x", "\ufeffthe", "the\u200bend", "Ⅻ the", "the ⅻ",
    "\U00010d50x", "\ua7cbΣ", "tab\there", "new\nline", "  lead", "trail  ", "mid  dle",
]


def test_adversarial_pairs_single_gold():
    predictions, answers = [], []
    for p in ADVERSARIAL:
        for g in ADVERSARIAL:
            predictions.append(p)
            answers.append([g])
    assert_matches_reference(predictions, answers)


def test_adversarial_multiple_golds_and_unanswerable():
    rng = random.Random(7)
    predictions, answers = [], []
    for _ in range(3000):
        predictions.append(rng.choice(ADVERSARIAL))
        answers.append([rng.choice(ADVERSARIAL) for _ in range(rng.randint(0, 4))])
    # SQuAD 2.0 unanswerable questions: an empty list of gold answers.
    predictions += ["", "x", "the", " ", "..."]
    answers += [[], [], [], [], []]
    assert_matches_reference(predictions, answers)


WORDS = [
    "the", "a", "an", "The", "cat", "Cat", "cat.", "dog", "1973", "$12", "Paris", "é",
    "e\u0301", "ΟΔΟΣ", "ς", "naïve", "x–y", "“q”", "a²", "_", "İ", "b", "c", "d",
]
SEPARATORS = [" ", " ", " ", "  ", "\t", "\u3000", "\x1c", ", ", "-", ".", ""]


def random_text(rng: random.Random) -> str:
    parts = []
    for _ in range(rng.randint(0, 7)):
        parts.append(rng.choice(WORDS))
        parts.append(rng.choice(SEPARATORS))
    return "".join(parts)


def test_random_rows():
    rng = random.Random(2024)
    predictions, answers = [], []
    for _ in range(5000):
        p = random_text(rng)
        golds = [random_text(rng) for _ in range(rng.randint(0, 3))]
        if golds and rng.random() < 0.2:
            golds[0] = p  # exact copies exercise the shortcut
        predictions.append(p)
        answers.append(golds)
    assert_matches_reference(predictions, answers)


def test_gold_as_one_string_matches_list_of_one():
    rng = random.Random(3)
    predictions = [random_text(rng) for _ in range(500)]
    golds = [random_text(rng) for _ in range(500)]
    frame = pl.DataFrame({"pred": predictions, "gold": golds})
    out = frame.select(
        M.squad_em("pred", "gold").alias("em"), M.squad_f1("pred", "gold").alias("f1")
    )
    for p, g, em, f1 in zip(predictions, golds, out["em"], out["f1"], strict=True):
        assert (em, f1) == reference_row(p, [g])


def test_token_f1_matches_compute_f1_without_gold_filtering():
    rng = random.Random(11)
    predictions = [random_text(rng) for _ in range(2000)]
    answers = [[random_text(rng) for _ in range(rng.randint(1, 3))] for _ in range(2000)]
    frame = pl.DataFrame({"pred": predictions, "gold": answers})
    out = frame.select(M.token_f1("pred", "gold"))["pred"].to_list()
    for p, golds, f1 in zip(predictions, answers, out, strict=True):
        expected = max(float(squad_metrics.compute_f1(a, p)) for a in golds)
        assert bits(f1) == bits(expected), (p, golds)


def _load_answers(path: Path) -> dict[str, list[str]]:
    with path.open(encoding="utf-8") as handle:
        return {row["id"]: row["answers"] for row in map(json.loads, handle)}


@pytest.mark.parametrize("version", ["v1.1", "v2.0"])
def test_real_leaderboard_predictions(version):
    if not SHARED.is_dir():
        pytest.skip("../shared/data/squad-explorer is absent: real-data test skipped")
    answers = _load_answers(SHARED / f"dev-{version}-answers.jsonl")
    files = sorted((SHARED / f"predictions-{version}").glob("*.json"))
    assert files
    for path in files:
        predictions = json.loads(path.read_text(encoding="utf-8"))
        ids = [qid for qid in answers if qid in predictions]  # join on id
        assert len(ids) > 10_000
        assert_matches_reference([predictions[q] for q in ids], [answers[q] for q in ids])


# Pieces between spaces are normalised one distinct piece at a time; these facts
# about the running Python make that equal to normalising the whole text.
WHITESPACE = [chr(c) for c in range(sys.maxunicode + 1) if chr(c).isspace()]


def test_whitespace_is_a_boundary_for_every_step_of_normalize_answer():
    for w in WHITESPACE:
        assert w.lower() == w and w not in string.punctuation
        assert not re.match(r"\w", w)
        # str.lower's final-sigma rule stops at whitespace as at the end of the text:
        # whitespace is neither cased nor case-ignorable.
        assert f"AΣ{w}B".lower() == f"aς{w}b"
        assert f"A{w}ΣB".lower() == f"a{w}σb"
        assert f"A{w}Σ".lower() == f"a{w}σ"


def test_lower_creates_no_whitespace():
    text = "".join(
        chr(c) for c in range(sys.maxunicode + 1)
        if not chr(c).isspace() and not 0xD800 <= c <= 0xDFFF
    )
    lowered = text.lower()
    assert not any(ch.isspace() for ch in set(lowered))


#: Texts that stress the piece-by-piece normalisation: combining marks, numerics,
#: zero-width and Unicode whitespace, final sigma, Python vs Rust word characters,
#: articles glued to non-ASCII neighbours, pieces that lose all their characters.
NASTY = [
    "the", "a", "an", "The", "(the)", "“the”", "‘a’", "«an»", "the’s", "l’the", "x’a’y",
    "a\u0301", "the\u0301", "\u0301the", "e\u0301", "cafe\u0301", "é", "éthe", "theé",
    "ªthe", "the²", "²the", "a²", "½", "٣the", "the٣", "Ⅻthe", "the\u00b7", "a\u2010b",
    "the\u200b", "\u200bthe", "\u200cthe\u200d", "\ufeffthe", "the\u2060", "\u00ad", "a\u00ada",
    "ΑΣ", "ΑΣ'", "ΑΣ'Β", "Σ", "ΑΣ\u00ad", "ΟΔΟΣ.", "ς", "İ", "İthe", "theİ", "ǅthe", "ﬁ",
    "Straße", "SS", "...", "!!", "-", "—", "–", "'", "\"", "$", "_", "_the_", "a_b", "the_",
    "x\x1cthe", "the\x1f", "\x85the", "the\xa0a", "a\u3000the", "the\u2028x", "\tthe\n",
    "中the", "the中", "中", "\U0001f600the", "the\U0001f600", "\ua7cbΣ", "\U00010d50", "é–the",
    "über-the", "naïve", "NAÏVE", "élan", "1,000", "Paris,", "Tower.", "(b)", "x", "y", "",
]
NASTY_SEPARATORS = [
    " ", " ", " ", "  ", "\xa0", "\t", "\u3000", "\x1c", "\x1d\x1e", "\x1f", "\u200b",
    "\u2028", "\x85", "\u2009", "\u202f", "", "-", "’", " \u0301",
]


def nasty_text(rng: random.Random) -> str:
    parts = [rng.choice(NASTY_SEPARATORS) if rng.random() < 0.2 else ""]
    for _ in range(rng.randint(0, 6)):
        parts.append(rng.choice(NASTY))
        parts.append(rng.choice(NASTY_SEPARATORS))
    return "".join(parts[:-1] if rng.random() < 0.5 else parts)


def test_normalize_answer_is_the_join_of_its_space_separated_pieces():
    rng = random.Random(5)
    for _ in range(20_000):
        text = nasty_text(rng)
        pieces = [squad_metrics.normalize_answer(piece) for piece in text.split(" ")]
        assert squad_metrics.normalize_answer(text) == " ".join(p for p in pieces if p)


def test_nasty_unicode_rows():
    rng = random.Random(99)
    predictions, answers = [], []
    for _ in range(20_000):
        p = nasty_text(rng)
        golds = [nasty_text(rng) for _ in range(rng.randint(0, 4))]
        if golds and rng.random() < 0.2:
            golds[rng.randrange(len(golds))] = p
        predictions.append(p)
        answers.append(golds)
    assert_matches_reference(predictions, answers)


def test_nasty_unicode_pairs():
    predictions = [p for p in NASTY for _ in NASTY]
    answers = [[g] for _ in NASTY for g in NASTY]
    assert_matches_reference(predictions, answers)
    # Every piece glued to every other one, and separated by each separator.
    rng = random.Random(1)
    glued = [a + sep + b for a in NASTY for b in NASTY for sep in [rng.choice(NASTY_SEPARATORS)]]
    assert_matches_reference(glued, [[rng.choice(glued)] for _ in glued])
    assert_matches_reference(glued, [[g] for g in glued])


def test_long_texts_counted_by_sorting():
    # More than 32 words: the multiset overlap is counted by sorting, not pairwise.
    rng = random.Random(8)
    words = ["the", "Cat", "cat", "a", "é", "e\u0301", "x", "y", "ΑΣ", "(z)"]
    predictions, answers = [], []
    for _ in range(2000):
        p = " ".join(rng.choice(words) for _ in range(rng.randint(0, 90)))
        golds = [" ".join(rng.choice(words) for _ in range(rng.randint(0, 90)))
                 for _ in range(rng.randint(1, 3))]
        if rng.random() < 0.2:
            golds.append(p.upper())
        predictions.append(p)
        answers.append(golds)
    assert_matches_reference(predictions, answers)


def test_one_batch_in_many_slices_scores_alike():
    rng = random.Random(4)
    predictions = [nasty_text(rng) for _ in range(3000)]
    answers = [[nasty_text(rng) for _ in range(rng.randint(0, 3))] for _ in range(3000)]
    whole = score(predictions, answers)
    frame = pl.DataFrame({"pred": predictions, "gold": answers},
                         schema={"pred": pl.String, "gold": pl.List(pl.String)})
    parts = pl.concat([frame[i : i + 7] for i in range(0, 3000, 7)], rechunk=False)
    sliced = parts.lazy().with_columns(
        M.squad_em("pred", "gold").alias("em"), M.squad_f1("pred", "gold").alias("f1")
    ).collect()
    assert whole.equals(sliced)


# Property tests.
text = st.lists(
    st.sampled_from([*"abc ABC.,-'\t", "the", "an", "é", "ς", "\u3000", "²", "a "]),
    max_size=12,
).map("".join)


@given(st.lists(st.tuples(text, text), min_size=1, max_size=30))
def test_f1_is_symmetric_with_one_gold(pairs):
    frame = pl.DataFrame({"x": [p for p, _ in pairs], "y": [g for _, g in pairs]})
    out = frame.select(
        M.squad_f1("x", "y").alias("xy"), M.squad_f1("y", "x").alias("yx"),
        M.token_f1("x", "y").alias("txy"), M.token_f1("y", "x").alias("tyx"),
    )
    assert out["xy"].to_list() == out["yx"].to_list()
    assert out["txy"].to_list() == out["tyx"].to_list()


@given(st.lists(st.tuples(text, st.lists(text, max_size=3)), min_size=1, max_size=30))
def test_em_at_most_f1_and_both_in_unit_interval(rows):
    out = score([p for p, _ in rows], [g for _, g in rows])
    for em, f1 in zip(out["em"], out["f1"], strict=True):
        assert 0.0 <= em <= f1 <= 1.0
        assert em in (0.0, 1.0)


def test_every_text_without_words_is_a_candidate_for_it():
    # squad_em splits the other alternatives of a copied prediction only when
    # may_have_no_words says the copy may normalise to "": it must say so for every
    # text the reference normalises to "". One code point at a time, and each after
    # an article (the steps act within words, so these cover every character).
    from evalframe.normalize.squad import may_have_no_words

    texts = [chr(c) for c in range(sys.maxunicode + 1) if not 0xD800 <= c <= 0xDFFF]
    texts += ["the" + t for t in texts]
    flags = pl.select(may_have_no_words(pl.lit(pl.Series(texts, dtype=pl.String)))).to_series()
    missed = [
        t for t, flag in zip(texts, flags.to_list(), strict=True)
        if not flag and squad_metrics.normalize_answer(t) == ""
    ]
    assert not missed, [hex(ord(t[-1])) for t in missed[:10]]


def test_a_wordless_copy_leaves_the_decision_to_the_other_alternatives():
    predictions = ["the", "...", "a  an", " ", "tea", "The!", "thé", "an", ""]
    answers = [
        ["the", "cat"], ["...", ""], ["x", "a  an"], [" ", "\u3000"], ["tea", "t e a"],
        ["The!", "", "the"], ["thé", "the"], ["an", "an apple", "a"], ["", "x"],
    ]
    assert_matches_reference(predictions, answers)
