"""HELM's exact_match, quasi_exact_match, prefix matches and f1_score as evalframe requests.

HELM (crfm-helm) is not a test dependency, so its definitions
(``helm.benchmark.metrics.evaluate_reference_metrics``) are restated here in plain Python and
the requests ``docs/harnesses/helm.md`` gives are checked against them, value for value, on
adversarial texts (empty and blank answers, articles, hyphens, ASCII and non-ASCII punctuation,
Unicode case mappings, non-breaking spaces) and seeded random ones:

- the prediction is the completion stripped (``str.strip``); HELM scores it against each
  correct reference and keeps the maximum;
- ``exact_match``: 0 for an empty prediction, else ``gold.strip() == prediction``;
- ``normalize_text``: ``str.lower``, every character of ``string.punctuation`` removed, the
  words a/an/the replaced by a space (``\\b`` of Python's ``re``), whitespace collapsed;
- ``quasi_exact_match``: 0 for an empty prediction, else the normalised texts are equal;
- ``prefix_exact_match`` / ``quasi_prefix_exact_match``: the (normalised) prediction starts
  with the (normalised) gold, 0 for an empty prediction;
- ``f1_score``: the sets of normalised words, ``P = |common| / |prediction words|``,
  ``R = |common| / |gold words|``, nltk's ``f_measure`` ``1 / (0.5 / P + 0.5 / R)``; 0 when a
  set is empty or nothing is shared.
"""

from __future__ import annotations

import random
import re
import string

import polars as pl
import pytest

import evalframe as ef

REQUESTS = {
    "exact_match": "exact_match(strip=true, empty_prediction=wrong)",
    "qem": "exact_match(strip=true, normalizer=squad, empty_prediction=wrong)",
    "pem": "exact_match(strip=true, match=prefix, empty_prediction=wrong)",
    "qpem": "exact_match(strip=true, normalizer=squad, match=prefix, empty_prediction=wrong)",
    "f1_score": "word_set_f1(normalizer=squad)",
}

TEXTS = [
    "", " ", "\t\n", "\u3000", "\xa0", "The", "the", "a", "An", "an apple", "Apple", "apple.",
    "Victor Hugo", "Victor Hugo.", " victor  hugo ", "Victor-Marie Hugo", "Mont-Blanc",
    "Mont Blanc", "le mont Blanc", "U.S.A.", "usa", "U S A", "1,000", "1000", "1.5", "15",
    "don't", "dont", "it's the end", "naïve café", "Naïve Café!", "東京", "東京です。", "Tokyo",
    "İstanbul", "istanbul", "ΣΑΣ", "σας", "Straße", "STRASSE", "a\xa0b", "a b", "x\u200by",
    "«quoted»", "quoted", "the the the", "théa", "thé a", "a-the-b", "Paris, France", "Paris",
    "two", "Two", "2", "three", "½", "١٢", "12",
]


def normalize_text(text: str) -> str:
    """HELM's normalize_text, restated."""
    lowered = text.lower()
    without_punctuation = "".join(ch for ch in lowered if ch not in string.punctuation)
    without_articles = re.sub(r"\b(a|an|the)\b", " ", without_punctuation)
    return " ".join(without_articles.split())


def helm_scores(completion: str, golds: list[str]) -> dict[str, float]:
    """The five HELM stats of one completion against its correct references."""
    pred = completion.strip()

    def exact(gold: str) -> float:
        return float(bool(pred) and gold.strip() == pred)

    def quasi(gold: str) -> float:
        return float(bool(pred) and normalize_text(gold) == normalize_text(pred))

    def prefix(gold: str) -> float:
        return float(bool(pred) and pred.startswith(gold.strip()))

    def quasi_prefix(gold: str) -> float:
        return float(bool(pred) and normalize_text(pred).startswith(normalize_text(gold)))

    def f1(gold: str) -> float:
        gold_words = set(normalize_text(gold).split())
        pred_words = set(normalize_text(pred).split())
        common = len(gold_words & pred_words)
        if not gold_words or not pred_words or not common:
            return 0.0
        precision, recall = common / len(pred_words), common / len(gold_words)
        return 1.0 / (0.5 / precision + 0.5 / recall)

    return {
        name: max(score(gold) for gold in golds)
        for name, score in [
            ("exact_match", exact), ("qem", quasi), ("pem", prefix), ("qpem", quasi_prefix),
            ("f1_score", f1),
        ]
    }


def random_texts(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    words = [text for text in TEXTS if text.strip()] + ["A", "THE", "x", "-", "...", "'"]
    separators = [" ", "  ", "-", "\t", ", ", "\xa0", ""]
    texts = []
    for _ in range(count):
        pieces = rng.choices(words, k=rng.randint(0, 4))
        text = ""
        for piece in pieces:
            text += rng.choice(separators) + piece
        texts.append(rng.choice(["", " "]) + text + rng.choice(["", " ", "."]))
    return texts


def cases() -> tuple[list[str], list[list[str]]]:
    completions, golds = [], []
    for completion in TEXTS:
        for gold in TEXTS:
            completions.append(completion)
            golds.append([gold])
    rng = random.Random(7)
    pool = random_texts(400, seed=11)
    for completion in random_texts(600, seed=13):
        completions.append(completion)
        golds.append(rng.sample(pool, rng.randint(1, 3)))
    return completions, golds


@pytest.mark.parametrize("metric", list(REQUESTS))
def test_requests_reproduce_helms_definitions(metric):
    completions, golds = cases()
    scored = ef.score(
        pl.DataFrame({"prediction": completions, "gold": golds}), {metric: REQUESTS[metric]}
    )
    expected = [helm_scores(c, g)[metric] for c, g in zip(completions, golds, strict=True)]
    got = scored[metric].to_list()
    wrong = [
        (completions[i], golds[i], got[i], expected[i])
        for i in range(len(got))
        if got[i] != expected[i]
    ]
    assert not wrong, f"{len(wrong)} rows differ, first {wrong[:3]}"
