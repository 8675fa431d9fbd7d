"""chrF, chrF++ and sentence chrF against sacrebleu 2.6.0 itself.

References: ``sacrebleu.metrics.CHRF`` with the same options. Per row, evalframe's
statistics must equal sacrebleu's own segment statistics
(``CHRF._extract_corpus_statistics([hyp], [[ref] for ref in refs])``, the best reference's);
corpus scores (``CHRF.corpus_score``, with ``None`` padding the reference streams of
rows with fewer references, as sacrebleu allows) and sentence scores
(``CHRF.sentence_score``) must agree within 1e-9 on the 0-100 scale (they are computed
with the same float operations, so they are in fact equal). Inputs: adversarial texts
(empty, whitespace only, Unicode punctuation and whitespace, CJK, Cyrillic, combining
marks, emoji, very long lines, identical strings, one word, several references with
ties) and thousands of seeded random pairs, under every option.
"""

from __future__ import annotations

import importlib
import random

import numpy as np
import polars as pl
import pytest

import evalframe as ef
from evalframe.metrics.chrf import (
    chrf,
    chrf_reduction,
    ngram_matches,
    sacrebleu_signature,
    segment_statistics,
    sentence_chrf,
    statistics_fields,
)
from evalframe.normalize._python_text import whitespace_characters
from tests.conformance import lighteval_cases as mapping
from tests.conformance import lighteval_cases_chrf as chrf_cases

# the module (evalframe.metrics.chrf is the function once the package re-exports it)
chrf_module = importlib.import_module("evalframe.metrics.chrf")

sacrebleu = pytest.importorskip("sacrebleu", reason="sacrebleu is not installed")
from sacrebleu.metrics import CHRF  # noqa: E402

TOLERANCE = 1e-9

#: sacrebleu keyword options to test, each passed unchanged to CHRF and to evalframe.
OPTIONS = [
    {},
    {"word_order": 2},
    {"lowercase": True},
    {"whitespace": True},
    {"eps_smoothing": True},
    {"eps_smoothing": True, "word_order": 2, "whitespace": True},
    {"char_order": 3, "word_order": 1, "beta": 1},
    {"char_order": 1, "beta": 3},
    {"char_order": 8, "word_order": 3, "lowercase": True},
    {"char_order": 0, "word_order": 2},
    {"beta": 0},
]
OPTION_IDS = ["-".join(f"{k}={v}" for k, v in o.items()) or "defaults" for o in OPTIONS]

DEFAULTS = {
    "lowercase": False, "whitespace": False, "char_order": 6, "word_order": 0, "beta": 2,
    "eps_smoothing": False,
}

WORDS = [
    "the", "The", "THE", "cat", "a", "(hi)", "dog.", "!", "..", "'s", "a,b", "e.g.", "-",
    "é", "É", "naïve", "x̃", "e\u0301", "東京", "日本語", "中文", "Привет", "мир", "ΣΑΣ", "ς",
    "İstanbul", "ß", "🙂", "👩‍🔬", "🇫🇷", "«guillemets»", "“quoted”", "—", "…", "¿qué?",
    "1,000", "3.14", "42%", "$5", "Straße", "ﬁ", "Ⅻ", "١٢", "\u200b", "\u00ad",
]


def sacrebleu_statistics(hyp: str, refs: list[str], options: dict) -> list[int]:
    return CHRF(**options)._extract_corpus_statistics([hyp], [[ref] for ref in refs])[0]


def ours(hyps: list, refs: list, options: dict) -> tuple[np.ndarray, np.ndarray]:
    return segment_statistics(
        pl.Series(hyps, dtype=pl.String), pl.Series(refs, dtype=pl.List(pl.String)),
        **{**DEFAULTS, **options},
    )


def sacrebleu_corpus(hyps: list[str], refs: list[list[str]], options: dict) -> float:
    width = max(len(r) for r in refs)
    streams = [[r[j] if j < len(r) else None for r in refs] for j in range(width)]
    return CHRF(**options).corpus_score(hyps, streams).score


def corpus_score(stats: np.ndarray, options: dict) -> float:
    full = {**DEFAULTS, **options}
    fields = statistics_fields(full["char_order"], full["word_order"])
    sums = {name: np.array([stats[:, i].sum()]) for i, name in enumerate(fields)}
    return float(chrf_reduction(**full).formula(sums)[0])


def adversarial_pairs() -> list[tuple[str, list[str]]]:
    ws = whitespace_characters()
    long_latin = " ".join(f"word{i % 97}," for i in range(3000))
    long_cjk = "".join(chr(0x4E00 + (i * 37) % 3000) for i in range(4000))
    pairs = [
        ("", [""]),
        ("", ["a"]),
        ("a", [""]),
        ("", ["", ""]),
        (" ", [" "]),
        ("   ", ["a b"]),
        (ws, [ws]),
        (ws + "a" + ws, ["a"]),
        ("a\u3000b\u00a0c\x1cd", ["abcd"]),
        ("a\u200bb", ["ab"]),
        ("the cat", ["the cat"]),
        ("The Cat!", ["the cat!"]),
        ("cat", ["cat"]),
        ("cat", ["dog"]),
        ("c", ["c"]),
        ("c", ["cc"]),
        ("!", ["!"]),
        ("(hi)", ["(hi", ")"]),
        ("(hi) there.", ["(hi) there ."]),
        ("«Bonjour», dit-il…", ["« Bonjour » , dit-il ..."]),
        ("¿Qué tal? ¡Bien!", ["¿qué tal? ¡bien!"]),
        ("東京は日本の首都です。", ["東京は日本の首都である。"]),
        ("日本語 中文 한국어", ["日本語中文한국어"]),
        ("Привет, мир!", ["привет мир"]),
        ("ΣΑΣ ΟΔΟΣ", ["σας οδος"]),
        ("İstanbul ß ﬁ", ["i̇stanbul ss fi"]),
        ("e\u0301te\u0301", ["été"]),
        ("x̃x̃x̃", ["x̃"]),
        ("🙂🙂 👩‍🔬 🇫🇷", ["🙂 👩‍🔬🇫🇷"]),
        ("a a a a a a a a", ["a a a"]),
        ("ab ab ab", ["ababab"]),
        (long_latin, [long_latin[: len(long_latin) // 2]]),
        (long_cjk, [long_cjk[::-1]]),
        (long_cjk[:1500], [long_cjk[1000:2500], long_cjk[:1500]]),
        # several references: ties pick the first best one
        ("the cat", ["the dog", "the cow", "the cat", "the cat"]),
        ("abc", ["abd", "abe"]),
        ("abc", ["xyz", "abc", "cab"]),
        ("cat", ["", "cat"]),
        ("cat sat", ["cat", "sat"]),
        ("a b", ["b a", "a b."]),
    ]
    return pairs


@pytest.mark.parametrize("options", OPTIONS, ids=OPTION_IDS)
def test_adversarial_statistics_equal_sacrebleu(options):
    pairs = adversarial_pairs()
    hyps, refs = [h for h, _ in pairs], [r for _, r in pairs]
    stats, scored = ours(hyps, refs, options)
    assert scored.all()
    for row, (hyp, alternatives) in enumerate(pairs):
        expected = sacrebleu_statistics(hyp, alternatives, options)
        assert stats[row].tolist() == expected, (hyp[:40], alternatives[:2])


@pytest.mark.parametrize("options", OPTIONS, ids=OPTION_IDS)
def test_adversarial_scores_equal_sacrebleu(options):
    pairs = adversarial_pairs()
    hyps, refs = [h for h, _ in pairs], [r for _, r in pairs]
    stats, _ = ours(hyps, refs, options)
    assert abs(corpus_score(stats, options) - sacrebleu_corpus(hyps, refs, options)) <= TOLERANCE
    frame = pl.DataFrame({"h": hyps, "r": refs})
    got = frame.select(sentence_chrf("h", "r", **options)).to_series().to_list()
    metric = CHRF(**options)
    expected = [metric.sentence_score(h, r).score for h, r in pairs]
    assert np.max(np.abs(np.array(got) - np.array(expected))) <= TOLERANCE


def random_text(rng: random.Random) -> str:
    ws = list(whitespace_characters())
    parts = []
    for _ in range(rng.randint(0, 14)):
        roll = rng.random()
        if roll < 0.75:
            parts.append(rng.choice(WORDS))
        elif roll < 0.85:
            parts.append(rng.choice(WORDS) + rng.choice("!?.,;:)'\""))
        elif roll < 0.95:
            parts.append(rng.choice("(\"'-") + rng.choice(WORDS))
        else:
            parts.append(rng.choice(ws))
    separators = [" "] * 12 + ["  ", "\n", "\t", "\u00a0"]
    return "".join(part + rng.choice(separators) for part in parts).rstrip(" ")


def random_corpus(seed: int, rows: int) -> tuple[list[str], list[list[str]]]:
    rng = random.Random(seed)
    hyps, refs = [], []
    for _ in range(rows):
        hyp = random_text(rng)
        alternatives = [random_text(rng) for _ in range(rng.choice([1, 1, 1, 2, 3]))]
        if rng.random() < 0.1:  # a reference equal to the hypothesis, or a near copy
            alternatives[rng.randrange(len(alternatives))] = hyp if rng.random() < 0.5 else (
                hyp.replace("a", "o")
            )
        hyps.append(hyp)
        refs.append(alternatives)
    return hyps, refs


@pytest.mark.parametrize("options", OPTIONS, ids=OPTION_IDS)
def test_random_pairs_equal_sacrebleu(options):
    hyps, refs = random_corpus(seed=len(OPTION_IDS[OPTIONS.index(options)]), rows=1500)
    stats, scored = ours(hyps, refs, options)
    assert scored.all()
    metric = CHRF(**options)
    for row in range(len(hyps)):
        expected = metric._extract_corpus_statistics([hyps[row]], [[r] for r in refs[row]])[0]
        assert stats[row].tolist() == expected, (hyps[row], refs[row])
    assert abs(corpus_score(stats, options) - sacrebleu_corpus(hyps, refs, options)) <= TOLERANCE


def test_random_corpus_through_score_and_aggregate():
    hyps, refs = random_corpus(seed=99, rows=3000)
    frame = pl.DataFrame({"prediction": hyps, "gold": refs})
    scored = ef.score(frame, ["chrf", "chrf++", "sentence_chrf"])
    table = ef.aggregate(scored, bootstrap=2)
    value = dict(zip(table["metric"], table["value"], strict=True))
    assert abs(value["chrf"] - sacrebleu_corpus(hyps, refs, {})) <= TOLERANCE
    assert abs(value["chrf++"] - sacrebleu_corpus(hyps, refs, {"word_order": 2})) <= TOLERANCE
    metric = CHRF()
    sentence = np.mean([metric.sentence_score(h, r).score for h, r in zip(hyps, refs, strict=True)])
    assert abs(value["sentence_chrf"] - sentence) <= 1e-9


def test_random_two_reference_streams_through_corpus_chrf():
    # sacrebleu.corpus_chrf with two full reference streams (its usual multi-ref use)
    rng = random.Random(5)
    hyps = [random_text(rng) for _ in range(2000)]
    first = [random_text(rng) for _ in range(2000)]
    second = [h if rng.random() < 0.3 else random_text(rng) for h in hyps]
    frame = pl.DataFrame({"h": hyps, "r": [[a, b] for a, b in zip(first, second, strict=True)]})
    stats = frame.select(chrf("h", "r").alias("s")).unnest("s")
    sums = {name: stats[name].sum() for name in stats.columns}
    got = chrf_reduction().formula({k: np.array([v]) for k, v in sums.items()})[0]
    assert abs(got - sacrebleu.corpus_chrf(hyps, [first, second]).score) <= TOLERANCE


@pytest.mark.parametrize("packed", [True, False])
def test_both_routes_equal_brute_force(packed):
    from collections import Counter

    rng = np.random.default_rng(3)
    for _ in range(300):
        pairs = int(rng.integers(1, 7))
        alphabet = int(rng.integers(1, 8))
        hl, rl = rng.integers(0, 15, pairs), rng.integers(0, 15, pairs)
        h = rng.integers(0, alphabet, hl.sum()) * 7919
        r = rng.integers(0, alphabet, rl.sum()) * 7919
        order = int(rng.integers(1, 8))
        got = ngram_matches(h, hl, r, rl, order, packed=packed)
        ho, ro = np.concatenate([[0], np.cumsum(hl)]), np.concatenate([[0], np.cumsum(rl)])
        for p in range(pairs):
            hs, rs = list(h[ho[p] : ho[p + 1]]), list(r[ro[p] : ro[p + 1]])
            for n in range(1, order + 1):
                ch = Counter(tuple(hs[i : i + n]) for i in range(len(hs) - n + 1))
                cr = Counter(tuple(rs[i : i + n]) for i in range(len(rs) - n + 1))
                assert got[p, n - 1] == sum(min(c, cr[g]) for g, c in ch.items())


def test_many_distinct_characters_take_the_order_by_order_route(monkeypatch):
    # > 1023 distinct characters: six 11-bit symbols leave too few bits for the pairs
    calls = []
    original = chrf_module._iterated_matches

    def spy(*args):
        calls.append(args[4])
        return original(*args)

    monkeypatch.setattr(chrf_module, "_iterated_matches", spy)
    rng = random.Random(11)
    pool = [chr(0x4E00 + i) for i in range(2500)]
    hyps = ["".join(rng.choice(pool) for _ in range(rng.randint(0, 60))) for _ in range(200)]
    refs = [[h[: len(h) // 2] + "".join(rng.choice(pool) for _ in range(20))] for h in hyps]
    stats, _ = ours(hyps, refs, {})
    assert calls, "expected the order-by-order route"
    for row in range(len(hyps)):
        assert stats[row].tolist() == sacrebleu_statistics(hyps[row], refs[row], {})


def test_chunks_of_pairs_equal_one_chunk(monkeypatch):
    hyps, refs = random_corpus(seed=4, rows=400)
    whole, _ = ours(hyps, refs, {"word_order": 2})
    monkeypatch.setattr(chrf_module, "_CHUNK_POSITIONS", 64)
    chunked, _ = ours(hyps, refs, {"word_order": 2})
    assert np.array_equal(whole, chunked)


@pytest.mark.parametrize("options", OPTIONS, ids=OPTION_IDS)
@pytest.mark.parametrize("nrefs", [1, 2, "var"])
def test_signature_is_sacrebleus(options, nrefs):
    metric = CHRF(**options)
    hyps = ["a b", "c d"]
    streams = [["a b", "c"], ["a", None]] if nrefs == "var" else [["a b", "c d"]] * nrefs
    metric.corpus_score(hyps, streams)
    assert sacrebleu_signature(nrefs=nrefs, **{**DEFAULTS, **options}) == str(
        metric.get_signature()
    )


@pytest.mark.parametrize("file", ["chrf.json", "chrf_plus.json"])
def test_lighteval_mapping_is_what_sacrebleu_gives_on_lightevals_call(file):
    if not mapping.FIXTURE_DIR.is_dir():
        pytest.skip(f"{mapping.FIXTURE_DIR} is absent (a fresh clone)")
    word_order = 2 if file == "chrf_plus.json" else 0
    for case in mapping.load_cases(mapping.FIXTURE_DIR / file):
        docs = case.data["docs"]
        golds = [[doc["choices"][doc["gold_index"]]] for doc in docs]
        preds = [response["text"][0] for response in case.data["model_responses"]]
        # lighteval's CorpusLevelTranslationMetric.compute_corpus call, verbatim
        expected = CHRF(word_order=word_order).corpus_score(hypotheses=preds, references=golds)
        frame = chrf_cases.lighteval_corpus_frame(case)
        stats = frame.select(chrf("prediction", "gold", word_order=word_order).alias("s"))
        sums = stats.unnest("s").sum()
        got = chrf_reduction(word_order=word_order).formula(
            {name: sums[name].to_numpy() for name in sums.columns}
        )[0]
        assert abs(got - expected.score) <= TOLERANCE, case.name
