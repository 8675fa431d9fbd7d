"""BLEU against sacrebleu 2.6.0 and lighteval's nltk BLEU, on adversarial and random input.

- the tokenizers (``none``, ``13a``, ``intl``, ``char``, ``zh``) against sacrebleu's own
  tokenizer objects on seeded random Unicode text, and ``zh``'s character table against
  ``TokenizerZh._is_chinese_char`` over every code point;
- ``bleu``: per-row statistics identical to ``BLEU._extract_corpus_statistics``, the
  corpus score equal to ``BLEU.corpus_score`` (asserted within 1e-9 on the 0-100 scale;
  it is bit-identical), for every option, one to three references, references missing
  in some rows (sacrebleu's ``None``), and the statistics of two halves summing to the
  whole; sacrebleu's signature string;
- ``sentence_bleu`` against ``sacrebleu.sentence_bleu`` (within 1e-9);
- ``bleu_1`` / ``bleu_4`` against nltk's ``sentence_bleu`` over ``word_tokenize`` tokens,
  as lighteval's ``BLEU._bleu_score`` calls it.
"""

from __future__ import annotations

import random
import sys

import numpy as np
import polars as pl
import pytest

import evalframe as ef
from evalframe.errors import EvalframeError
from evalframe.metrics.bleu import (
    STATISTICS,
    _punkt_available,
    bleu,
    bleu_1,
    bleu_4,
    compute_bleu,
    sacrebleu_signature,
    sentence_bleu,
)
from evalframe.normalize.sacrebleu_tokenize import SACREBLEU_TOKENIZERS, zh_characters

sacrebleu = pytest.importorskip("sacrebleu", reason="sacrebleu is not installed")
from sacrebleu.metrics import BLEU  # noqa: E402
from sacrebleu.metrics.bleu import _get_tokenizer  # noqa: E402

TOLERANCE = 1e-9
FIELDS = [f.name for f in STATISTICS.fields if f.name != "n_refs"]

#: Pieces of text that stress tokenisation: punctuation of every script, entities, CJK,
#: Cyrillic, combining marks, Python-only whitespace, digits of other scripts, symbols.
PIECES = [
    "the", "The", "a", "cat", "sat", "mat", ".", ",", "!", "?", ";", ":", "'", '"', "(", ")",
    "[", "]", "{", "}", "<", ">", "&", "/", "\\", "@", "#", "$", "%", "^", "*", "_", "+", "=",
    "|", "~", "`", "-", "--", "...", "1,000", "3.5", "2024.", "1-2", "x.", ".x", "&amp;",
    "&quot;", "&lt;", "&gt;", "<skipped>", "-\n", "\n", "\t", "\r", "\x1c", "\x1f", "\x85",
    "\xa0", "\u2000", "\u2001", "\u2009", "\u3000", "\u200b", "\ufeff", "我", "爱", "北京",
    "。", "，", "、", "：", "“", "”", "‘", "’", "«", "»", "—", "–", "…", "€", "£", "¥",
    "½", "²", "١٢", "५", "Ⅻ", "Привет", "мир", "Ёж", "é", "e\u0301", "ñ", "n\u0303", "Å",
    "ß", "İ", "Σ", "ΑΣ", "ﬁ", "😀", "👩‍🔬", "\U00020000", "\U0002a6d6", "\u2a6d", "\u2a6e",
    "\u2f81", "\u2fa1", "\u2fa2", "\u0378", "\U000e0001", "ǅ", "ǈ", "x̃",
]


def random_text(rng: random.Random, words: int = 14) -> str:
    separators = [" ", " ", " ", " ", "", "  ", "\t", "\n", "\u3000"]
    return "".join(
        rng.choice(PIECES) + rng.choice(separators) for _ in range(rng.randint(0, words))
    )


def adversarial_pairs() -> list[tuple[str, list[str]]]:
    long_line = " ".join(["word", "another", "word,", "3.5", "—", "«x»"] * 400)
    return [
        ("", ["a reference"]),
        ("a hypothesis", [""]),
        ("", [""]),
        ("   ", ["  \t "]),
        (" \u3000\x1c", ["x"]),
        ("the cat sat on the mat", ["the cat sat on the mat"]),
        ("word", ["word"]),
        ("word", ["other"]),
        ("«Hello», world!", ["„Hello“ — world…"]),
        ("他说：“我爱北京。”", ["他说：“我爱北京天安门。”"]),
        ("Привет, мир! Как дела?", ["Привет мир, как дела?"]),
        ("e\u0301te\u0301 naïve café", ["été naïve café"]),
        (long_line, [long_line[: len(long_line) // 2]]),
        (long_line, [long_line]),
        ("short", ["a much longer reference that makes the brevity penalty bite hard"]),
        ("the the the the the the", ["the cat", "the the mat"]),
        ("a b c d", ["a b", "a b c d e f", "x y z w"]),
        ("a b c", ["a b c d", "a b", "z"]),  # closest lengths 4 and 2: the shorter
        ("&amp; &quot;x&quot; &lt;y&gt; <skipped>", ["& \"x\" <y>"]),
        ("1,000.5 - 3-4 x.y", ["1,000.5-3 - 4 x . y"]),
        ("ΑΣ ΣΑ İi", ["ας σα i̇i"]),
        ("😀 👩‍🔬 😀", ["😀"]),
        ("line one\nline two-\nthree", ["line one line twothree"]),
    ]


OPTIONS = [
    {},
    {"lowercase": True},
    {"tokenize": "none"},
    {"tokenize": "intl"},
    {"tokenize": "char"},
    {"tokenize": "zh"},
    {"smooth_method": "floor"},
    {"smooth_method": "floor", "smooth_value": 0.37},
    {"smooth_method": "add-k"},
    {"smooth_method": "add-k", "smooth_value": 2.5, "effective_order": True},
    {"smooth_method": "none"},
    {"smooth_method": "none", "effective_order": True},
    {"effective_order": True, "lowercase": True, "tokenize": "intl"},
    {"max_ngram_order": 1},
    {"max_ngram_order": 2, "smooth_method": "floor"},
    {"max_ngram_order": 3, "effective_order": True},
]


def _frame(pairs: list[tuple[str, list[str]]]) -> pl.DataFrame:
    return pl.DataFrame(
        {"hyp": [h for h, _ in pairs], "refs": [list(r) for _, r in pairs]},
        schema={"hyp": pl.String, "refs": pl.List(pl.String)},
    )


def _streams(pairs: list[tuple[str, list[str]]]) -> list[list[str | None]]:
    """sacrebleu's reference streams; rows with fewer references are padded with None."""
    width = max(len(refs) for _, refs in pairs)
    return [[refs[j] if j < len(refs) else None for _, refs in pairs] for j in range(width)]


def _ours(frame: pl.DataFrame, options: dict) -> pl.DataFrame:
    return frame.select(bleu("hyp", "refs", **options).alias("s"))["s"].struct.unnest()


def _check_corpus(pairs: list[tuple[str, list[str]]], options: dict) -> None:
    metric = BLEU(**options)
    expected_stats = metric._extract_corpus_statistics([h for h, _ in pairs], _streams(pairs))
    expected = metric._aggregate_and_compute(expected_stats).score
    order = options.get("max_ngram_order", 4)
    stats = _ours(_frame(pairs), options)
    columns = ["hyp_len", "ref_len", *[f"matches_{n}" for n in range(1, order + 1)],
               *[f"totals_{n}" for n in range(1, order + 1)]]
    assert [list(row) for row in stats.select(columns).rows()] == expected_stats
    assert stats["n_refs"].to_list() == [len(refs) for _, refs in pairs]
    sums = {name: np.array([float(stats[name].sum())]) for name in stats.columns}
    reduce_options = {
        key: value for key, value in options.items() if key not in ("lowercase", "tokenize")
    }
    score = compute_bleu(sums, **reduce_options)[0]
    assert abs(score - expected) <= TOLERANCE
    assert score == expected  # bit-identical: math.exp/log in sacrebleu's order
    # the statistics of two halves, summed, reduce to the score of the whole
    half = len(pairs) // 2
    first, second = stats.slice(0, half), stats.slice(half)
    halves = {name: np.array([float(first[name].sum() + second[name].sum())]) for name in FIELDS}
    assert compute_bleu(halves, **reduce_options)[0] == expected


# --------------------------------------------------------------------------------------
# tokenizers
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(SACREBLEU_TOKENIZERS))
def test_tokenizers_equal_sacrebleus_on_random_unicode(name):
    rng = random.Random(20240512)
    lines = [random_text(rng, 30) for _ in range(5000)]
    # any code point at all, a few at a time
    points = [rng.randrange(0x20, 0x110000) for _ in range(40000)]
    chars = [chr(p) for p in points if not 0xD800 <= p <= 0xDFFF]
    lines += ["".join(chars[i : i + 8]) for i in range(0, len(chars), 8)]
    lines += [line for line, _ in adversarial_pairs()]
    tokenizer = _get_tokenizer(name)()
    ours = pl.select(
        SACREBLEU_TOKENIZERS[name].function(pl.lit(pl.Series(lines, dtype=pl.String)))
    ).to_series()
    expected = [tokenizer(line) for line in lines]
    bad = [(line, want, got) for line, want, got in zip(lines, expected, ours, strict=True)
           if want != got]
    assert not bad, bad[:5]
    assert tokenizer.signature() == SACREBLEU_TOKENIZERS[name].signature


def test_zh_characters_are_sacrebleus_over_every_code_point():
    from sacrebleu.tokenizers.tokenizer_zh import TokenizerZh

    accepted = {
        point for point in range(sys.maxunicode + 1)
        if not 0xD800 <= point <= 0xDFFF and TokenizerZh._is_chinese_char(chr(point))
    }
    assert {ord(ch) for ch in zh_characters()} == accepted


# --------------------------------------------------------------------------------------
# corpus BLEU
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("options", OPTIONS, ids=[str(o) or "defaults" for o in OPTIONS])
def test_adversarial_corpus_equals_sacrebleu(options):
    _check_corpus(adversarial_pairs(), options)


@pytest.mark.parametrize("references", [1, 2, 3])
@pytest.mark.parametrize("options", OPTIONS, ids=[str(o) or "defaults" for o in OPTIONS])
def test_random_corpus_equals_sacrebleu(options, references):
    rng = random.Random(7 * references + len(str(options)))
    pairs = [
        (random_text(rng), [random_text(rng) for _ in range(references)]) for _ in range(1500)
    ]
    _check_corpus(pairs, options)


def test_random_corpus_with_related_sentences_equals_sacrebleu():
    """Hypotheses edited from their references, so matches reach order 4."""
    rng = random.Random(3)
    words = [p for p in PIECES if p.strip()] * 2
    pairs = []
    for _ in range(4000):
        ref = [rng.choice(words) for _ in range(rng.randint(1, 30))]
        hyp = [w if rng.random() > 0.2 else rng.choice(words) for w in ref if rng.random() > 0.1]
        pairs.append((" ".join(hyp), [" ".join(ref), " ".join(ref[::-1])]))
    for options in ({}, {"tokenize": "intl", "lowercase": True}, {"effective_order": True}):
        _check_corpus(pairs, options)


def test_variable_number_of_references_equals_sacrebleus_none_padding():
    rng = random.Random(11)
    pairs = [
        (random_text(rng), [random_text(rng) for _ in range(rng.randint(1, 4))])
        for _ in range(2000)
    ]
    _check_corpus(pairs, {})
    # a null reference inside a list is sacrebleu's None: left out
    frame = pl.DataFrame({"hyp": ["a b c", "a b"], "refs": [["a b c", None], [None, "a"]]})
    stats = _ours(frame, {})
    expected = BLEU()._extract_corpus_statistics(["a b c", "a b"], [["a b c", None], [None, "a"]])
    assert [list(row) for row in stats.select(FIELDS).rows()] == expected
    assert stats["n_refs"].to_list() == [1, 1]


def test_score_and_aggregate_equal_corpus_bleu():
    rng = random.Random(5)
    pairs = [(random_text(rng), [random_text(rng)]) for _ in range(3000)]
    frame = pl.DataFrame({"prediction": [h for h, _ in pairs], "gold": [r[0] for _, r in pairs]})
    for request, options in (("bleu", {}), ("bleu(tokenize='intl', lowercase=true)",
                                              {"tokenize": "intl", "lowercase": True})):
        scored = ef.score(frame, {"b": request})
        value = ef.aggregate(scored, metrics={"b": request}, bootstrap=10)["value"].item()
        expected = sacrebleu.corpus_bleu(frame["prediction"].to_list(),
                                         [frame["gold"].to_list()], **options).score
        assert abs(value - expected) <= TOLERANCE


SIGNATURE_OPTIONS = [
    {},
    {"lowercase": True, "tokenize": "intl"},
    {"tokenize": "zh", "effective_order": True},
    {"tokenize": "char", "smooth_method": "floor"},
    {"tokenize": "none", "smooth_method": "floor", "smooth_value": 0.25},
    {"smooth_method": "add-k"},
    {"smooth_method": "add-k", "smooth_value": 3},
    {"smooth_method": "none"},
]


@pytest.mark.parametrize("options", SIGNATURE_OPTIONS, ids=str)
@pytest.mark.parametrize("references", [1, 2, "var"])
def test_sacrebleu_signature_equals_sacrebleus(options, references):
    metric = BLEU(**options)
    if references == "var":
        metric.corpus_score(["a b", "c"], [["a b", "c"], ["a", None]])
    else:
        metric.corpus_score(["a b"], [["a b"]] * references)
    assert sacrebleu_signature(nrefs=references, **options) == str(metric.get_signature())


# --------------------------------------------------------------------------------------
# sentence BLEU
# --------------------------------------------------------------------------------------

SENTENCE_OPTIONS = [
    {},
    {"lowercase": True, "tokenize": "intl"},
    {"tokenize": "zh", "smooth_method": "floor"},
    {"tokenize": "char", "smooth_method": "add-k"},
    {"tokenize": "none", "smooth_method": "none"},
    {"effective_order": False},
]


@pytest.mark.parametrize("options", SENTENCE_OPTIONS, ids=[str(o) for o in SENTENCE_OPTIONS])
def test_sentence_bleu_equals_sacrebleu(options):
    rng = random.Random(9)
    pairs = adversarial_pairs() + [
        (random_text(rng), [random_text(rng) for _ in range(rng.randint(1, 3))])
        for _ in range(1500)
    ]
    ours = _frame(pairs).select(sentence_bleu("hyp", "refs", **options).alias("s"))["s"]
    reference_options = dict(options)
    if "effective_order" in reference_options:
        reference_options["use_effective_order"] = reference_options.pop("effective_order")
    expected = [sacrebleu.sentence_bleu(h, refs, **reference_options).score for h, refs in pairs]
    assert np.max(np.abs(ours.to_numpy() - np.array(expected))) <= TOLERANCE


# --------------------------------------------------------------------------------------
# lighteval's bleu_1 / bleu_4 (nltk)
# --------------------------------------------------------------------------------------


def _nltk_scores(pairs, order: int, preserve_line: bool) -> list[float]:
    """lighteval's ``BLEU(n_gram)._bleu_score(golds, pred)`` for each pair."""
    import warnings

    from nltk.tokenize import word_tokenize
    from nltk.translate.bleu_score import sentence_bleu as nltk_sentence_bleu

    weights = [1 if ix == order else 0 for ix in range(1, 5)]
    scores = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # nltk warns about orders without overlap
        for hyp, golds in pairs:
            references = [word_tokenize(g, preserve_line=preserve_line) for g in golds]
            hypothesis = word_tokenize(hyp, preserve_line=preserve_line)
            scores.append(float(nltk_sentence_bleu(references, hypothesis, weights=weights)))
    return scores


def _nltk_pairs() -> list[tuple[str, list[str]]]:
    rng = random.Random(13)
    words = ["The", "cat", "sat", "on", "the", "mat", "can't", "won't", "\"quoted\"", "(x)",
             "Mr.", "end.", "3.5", "1,000", "naïve", "Привет", "--", "a", "b", "c", "?", "!",
             "''", "``", "it's", "gonna", "[y]", "$5", "50%", "e-mail", "…", "«ok»"]
    pairs = []
    for _ in range(1500):
        ref = [rng.choice(words) for _ in range(rng.randint(1, 15))]
        hyp = [w if rng.random() > 0.3 else rng.choice(words) for w in ref if rng.random() > 0.1]
        refs = [" ".join(ref)] + [
            " ".join(rng.choice(words) for _ in range(rng.randint(0, 8)))
            for _ in range(rng.randint(0, 2))
        ]
        pairs.append((" ".join(hyp), refs))
    return [*pairs, ("", ["x"]), ("x", [""]), ("Bonjour", ["Bonjour"]), ("a b c d", ["a b c d"])]


@pytest.mark.parametrize("order, metric", [(1, bleu_1), (4, bleu_4)])
def test_lighteval_bleu_n_equals_nltk_as_one_sentence(order, metric):
    pytest.importorskip("nltk", reason="nltk is not installed")
    pairs = _nltk_pairs()
    ours = _frame(pairs).select(metric("hyp", "refs", sentence_split=False).alias("s"))["s"]
    expected = np.array(_nltk_scores(pairs, order, preserve_line=True))
    np.testing.assert_allclose(ours.to_numpy(), expected, rtol=1e-12, atol=1e-300)


@pytest.mark.skipif(
    not _punkt_available(),
    reason="nltk's punkt_tab data is absent (nltk.download fetches it; no network here)",
)
@pytest.mark.parametrize("order, metric", [(1, bleu_1), (4, bleu_4)])
def test_lighteval_bleu_n_equals_nltk_with_punkt(order, metric):
    pairs = [*_nltk_pairs(), ("Hi there. Bye now.", ["Hi there. Bye now!"])]
    ours = _frame(pairs).select(metric("hyp", "refs").alias("s"))["s"]
    expected = np.array(_nltk_scores(pairs, order, preserve_line=False))
    np.testing.assert_allclose(ours.to_numpy(), expected, rtol=1e-12, atol=1e-300)


@pytest.mark.skipif(_punkt_available(), reason="nltk's punkt_tab data is installed")
def test_lighteval_bleu_n_without_punkt_says_what_is_missing():
    with pytest.raises(EvalframeError, match="punkt_tab.*sentence_split=false"):
        bleu_1("hyp", "refs")
