"""lighteval's letter extractive match, called itself, against evalframe on every row.

References (lighteval 0.13.0, installed without torch, see ``_lighteval_import``):

- ``extractive_match_utils.extract_target_from_pred`` with ``get_extraction_regexes``
  (``lazy_indices_regex``) for an ``IndicesExtractionConfig``: the extractors
  ``lighteval_letters``, ``lighteval_letters_anchored`` and ``indices_extraction(...)``;
- ``dynamic_metrics.MultilingualExtractiveMatchMetric.compute`` with the gpqa_instruct
  configuration: ``letter_match``;
- ``metrics_sample.PassAtK``, ``AvgAtN``, ``GPassAtK`` and ``MajAtN`` over that scorer:
  ``letter_pass@k`` and the ``extractor=`` options of pass@k, avg@k, g-pass@k, maj@k;
- lm-evaluation-harness 0.4.13's ``MajorityVoteFilter`` (``majority_vote``): maj@k's
  ``vote="answer"``.

The classes of ``metrics_sample.py`` and ``dynamic_metrics.py`` are lighteval's source,
executed with the names they use (their modules import torch). Only
``LatexExtractionConfig``, which lighteval evaluates for the unused default of
``pred_extraction_target`` and which refuses the installed latex2sympy2_extended, is a
stand-in: every scorer here passes both targets explicitly.
"""

from __future__ import annotations

import inspect
import logging
import random
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from typing import Literal, Union

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import evalframe as ef
from evalframe.extract.lighteval_indices import IndexLiterals, indices_extraction
from evalframe.metrics import avg_at_k, g_pass_at_k, maj_at_k, mg_pass_at_k, pass_at_k
from evalframe.metrics.letters import letter_match, letter_pass_at_k
from tests.conformance._lighteval_import import (
    import_lighteval,
    lighteval_classes,
    model_response_class,
)


def _load() -> dict | None:
    try:
        emu = import_lighteval("lighteval.metrics.utils.extractive_match_utils")
    except ImportError:
        return None
    if emu is None:
        return None
    from lighteval.metrics.utils.math_comparison import compare_gold_target
    from lighteval.tasks.requests import Doc
    from lighteval.tasks.templates.utils.translation_literals import TRANSLATION_LITERALS
    from lighteval.utils.language import Language
    from lighteval.utils.timeout import timeout
    from lighteval.utils.utils import as_list
    from scipy.stats import hypergeom

    response = model_response_class()
    quiet = logging.getLogger("lighteval.conformance")
    quiet.disabled = True
    sampling = lighteval_classes(
        "metrics/metrics_sample.py",
        {"SampleLevelComputation", "SamplingMetric", "PassAtK", "AvgAtN", "MajAtN", "GPassAtK"},
        {
            "ABC": ABC, "abstractmethod": abstractmethod, "inspect": inspect, "np": np,
            "Callable": Callable, "Literal": Literal, "Union": Union, "Doc": Doc,
            "ModelResponse": response, "logger": quiet, "as_list": as_list,
            "hypergeom": hypergeom,
        },
    )
    dynamic = lighteval_classes(
        "metrics/dynamic_metrics.py",
        {"MultilingualExtractiveMatchMetric"},
        {
            "SampleLevelComputation": sampling["SampleLevelComputation"],
            "Language": Language, "Sequence": Sequence, "Callable": Callable,
            "Literal": Literal, "ExtractionTarget": emu.ExtractionTarget,
            "ExprExtractionConfig": emu.ExprExtractionConfig,
            # only the default of pred_extraction_target, never used here (see above)
            "LatexExtractionConfig": type("UnusedLatexExtractionConfig", (), {}),
            "get_extraction_regexes": emu.get_extraction_regexes,
            "extract_target_from_pred": emu.extract_target_from_pred,
            "compare_gold_target": compare_gold_target, "timeout": timeout, "Doc": Doc,
            "ModelResponse": response, "logger": quiet,
        },
    )
    return {
        "emu": emu, "Doc": Doc, "Language": Language, "ModelResponse": response,
        "literals": TRANSLATION_LITERALS, **sampling, **dynamic,
    }


REF = _load()
pytestmark = pytest.mark.skipif(REF is None, reason="lighteval is not installed")


# --------------------------------------------------------------------------------------
# The reference, called
# --------------------------------------------------------------------------------------


def reference_labels(
    texts: list[str | None],
    prefix: str = "NativeLetters",
    n_choices: int = 4,
    anchorless: bool = True,
    language: str = "ENGLISH",
) -> list[str | None]:
    """``extract_target_from_pred`` per text: the first extraction, None when nothing."""
    emu, lang = REF["emu"], getattr(REF["Language"], language)
    config = emu.IndicesExtractionConfig(
        prefix_for_extraction=prefix, try_extract_without_anchor=anchorless
    )
    doc = REF["Doc"](query="", choices=["x"] * n_choices, gold_index=0)
    regexes = emu.get_extraction_regexes(doc, [config], lang)
    out: list[str | None] = []
    for text in texts:
        if text is None:
            out.append(None)
            continue
        found = emu.extract_target_from_pred(text, regexes, "first_match", "any_match", 5)
        out.append(str(found[0]) if found else None)
    return out


def ours(extractor, texts: list[str | None]) -> list[str | None]:
    frame = pl.DataFrame({"text": pl.Series(texts, dtype=pl.String)})
    return frame.select(extractor("text").struct.field("extracted"))["extracted"].to_list()


def gpqa_scorer(anchorless: bool = True):
    """lighteval's gpqa_instruct scorer (``pass_at_k_letters``'s with ``anchorless=False``)."""
    config = REF["emu"].IndicesExtractionConfig(
        prefix_for_extraction="NativeLetters", try_extract_without_anchor=anchorless
    )
    return REF["MultilingualExtractiveMatchMetric"](
        language=REF["Language"].ENGLISH, gold_extraction_target=[config],
        pred_extraction_target=[config], precision=6,
    )


# --------------------------------------------------------------------------------------
# Extraction
# --------------------------------------------------------------------------------------

ADVERSARIAL = [
    # the gpqa format and its variants
    "Let me think.\n\nAnswer: B", "Answer: B", "answer: c", "ANSWER:D", "Answer : (A)",
    "Answer:B.", "**Answer: C**", "**Answer**: **D**", "Answer: **(B)**", "The answer is B",
    "the answer is (D).", "Answer: A, B or C", "Answer: E", "Answer: e", "answer answer A",
    "Answer: B\nAnswer: C", "Answer: (C)\n\nFinal: A", "The answer is D.\nAnswer: (A)",
    # final answer patterns (English only)
    "The final answer is C. I hope it is correct.", "final answer is (B) I hope",
    "Final answer is A.I hope", "The final answer to the question is D", "FINAL ANSWER IS: B",
    "final answer: the final answer is (C)", "final answer" + "x" * 120 + " is A",
    "final answer" + "x" * 90 + " is B",
    # several letters, positions
    "A", "(B)", "**C**", "D.", "B, then C", "A\nB", "A. foo\nB.", " A. foo\nB.", "x B\n",
    "B\n", "(A) or (B)?", "**A** and **B**", "I choose B and then C.", "C:", "C :", "C\x1c:",
    "letters inside words: BAD CAB", "ABCD", "Bob", "a b c d", "The option (E) is wrong",
    # Unicode, whitespace, case folding
    "İs the answer B", "fınal answer is C", "final answer ıs B", "Answer\x1c:\x1cB",
    "Answer\x1c: B", "x\u00a0B", "Answer:\u3000B", "Ａnswer: B", "answer：B", "Answer: Ｂ",
    "Answer\u2028B", "CRLF\r\nB\r\n", "Answer: B\r\n", "\n\nC", "\tD.", "ſ answer: A",
    # none, empty, null
    "", " ", "\n", "no letters here", "answer", "Answer:", None,
]

CONFIGS = [
    ("NativeLetters", 4, True), ("NativeLetters", 4, False), ("Letters", 1, False),
    ("Letters", 26, True), ("Numbers", 12, True), ("Numbers", 26, False),
    ("NativeLetters", 2, True),
]


@pytest.mark.parametrize("prefix, n_choices, anchorless", CONFIGS)
def test_adversarial_responses_agree_on_every_row(prefix, n_choices, anchorless):
    texts = ADVERSARIAL + [f"Answer: {i}" for i in (1, 2, 10, 12, 13, 26)] + ["(10)", "1. 2"]
    extractor = indices_extraction(prefix, n_choices, anchorless)
    assert ours(extractor, texts) == reference_labels(texts, prefix, n_choices, anchorless)


def test_registered_extractors_are_the_gpqa_configs():
    texts = ADVERSARIAL
    assert ours(ef.extract.EXTRACTORS["lighteval_letters"], texts) == reference_labels(texts)
    anchored = ef.extract.EXTRACTORS["lighteval_letters_anchored"]
    assert ours(anchored, texts) == reference_labels(texts, anchorless=False)


ATOMS = [
    "A", "B", "C", "D", "E", "a", "b", "(", ")", "*", "**", " ", "  ", "\n", ":", ".", ",",
    "answer", "Answer", "ANSWER", "final answer is", "Final answer", " is ", "I hope", "x",
    "İ", "ı", "\x1c", "\u00a0", "\r\n", "is", "\t", "word", "Bd", "(B)", "**C**", "1", "10",
    "Answer: ", "answer is ", "\u3000", "：",
]


@settings(max_examples=60, deadline=None)
@given(
    texts=st.lists(
        st.lists(st.sampled_from(ATOMS) | st.text(max_size=2), max_size=30).map("".join),
        min_size=1, max_size=40,
    ),
    config=st.sampled_from(CONFIGS),
)
def test_random_text_agrees(texts, config):
    prefix, n_choices, anchorless = config
    extractor = indices_extraction(prefix, n_choices, anchorless)
    assert ours(extractor, texts) == reference_labels(texts, prefix, n_choices, anchorless)


def test_many_seeded_random_texts_agree():
    rng = random.Random(20240611)
    texts = [
        "".join(rng.choice(ATOMS) for _ in range(rng.randint(0, 40))) for _ in range(4000)
    ]
    for prefix, n_choices, anchorless in CONFIGS[:3]:
        extractor = indices_extraction(prefix, n_choices, anchorless)
        assert ours(extractor, texts) == reference_labels(texts, prefix, n_choices, anchorless)


def _literals(language: str) -> IndexLiterals:
    found = REF["literals"][getattr(REF["Language"], language)]
    return IndexLiterals(
        language=found.language.value, answer=found.answer, full_stop=found.full_stop,
        comma=found.comma, colon=found.colon, sentence_space=found.sentence_space,
        indices=tuple(found.indices), final_answer=language == "ENGLISH",
    )


@pytest.mark.parametrize(
    "language", ["CHINESE", "ARABIC", "RUSSIAN", "VIETNAMESE", "HINDI", "FRENCH", "THAI"]
)
def test_other_languages_agree(language):
    literals = _literals(language)
    words = [literals.answer, literals.answer.upper(), literals.colon, literals.full_stop,
             literals.comma, literals.sentence_space, *literals.indices[:5], " ", "\n", "(",
             ")", "**", "A", "x", "final answer is "]
    rng = random.Random(7)
    texts = ["".join(rng.choice(words) for _ in range(rng.randint(0, 12))) for _ in range(1500)]
    texts += [f"{literals.answer}{literals.colon} {label}" for label in literals.indices[:6]]
    for n_choices, anchorless in ((4, True), (3, False)):
        extractor = indices_extraction("NativeLetters", n_choices, anchorless, literals)
        expected = reference_labels(texts, "NativeLetters", n_choices, anchorless, language)
        assert ours(extractor, texts) == expected


# --------------------------------------------------------------------------------------
# letter_match and letter_pass@k against the scorer and PassAtK
# --------------------------------------------------------------------------------------

RESPONSES = [
    "Answer: B", "answer: (C)", "The final answer is D", "A", "(B)", "b", "E", "Answer: E",
    "I think it's **C**.", "", " B ", "The answer is A.\nAnswer: D", "Final answer is (A)",
    "nothing", "B\n",
]
CHOICES = [["A", "B", "C", "D"], ["A", "B"], ["A", "B", "C", "D", "E", "F"], ["B"],
           ["(A)", " B", "c", "Answer: D"], ["x", "y", "z"], ["A"]]


def _docs(rng: random.Random, count: int) -> list[tuple[list[str], int, list[str]]]:
    docs = []
    for _ in range(count):
        choices = rng.choice(CHOICES)
        docs.append((choices, rng.randrange(len(choices)),
                     [rng.choice(RESPONSES) for _ in range(rng.randint(1, 6))]))
    return docs


def test_letter_match_agrees_with_the_gpqa_scorer():
    docs = _docs(random.Random(1), 400)
    scorer = gpqa_scorer()
    expected = [
        scorer.compute(REF["Doc"](query="", choices=choices, gold_index=index),
                       REF["ModelResponse"](text=texts))
        for choices, index, texts in docs
    ]
    frame = pl.DataFrame(
        {"prediction": [texts for _, _, texts in docs],
         "choices": [choices for choices, _, _ in docs],
         "gold_index": [index for _, index, _ in docs]}
    )
    got = frame.select(letter_match("prediction", choices="choices", gold_index="gold_index"))
    assert got.to_series().to_list() == expected
    # one response per row (a str column), through the engine
    single = frame.with_columns(pl.col("prediction").list.first())
    expected_single = [
        scorer.compute(REF["Doc"](query="", choices=choices, gold_index=index),
                       REF["ModelResponse"](text=texts[:1]))
        for choices, index, texts in docs
    ]
    assert ef.score(single, ["letter_match"])["letter_match"].to_list() == expected_single


def test_letter_match_with_several_gold_indices():
    scorer = gpqa_scorer()
    cases = [(["A", "B", "C", "D"], [0, 2], ["C"]), (["A", "x", "C"], [0, 1], ["A"]),
             (["A", "x", "C"], [0, 1], ["x"]), (["A", "B"], [1, 1], ["Answer: B"])]
    expected = [
        scorer.compute(REF["Doc"](query="", choices=choices, gold_index=index),
                       REF["ModelResponse"](text=texts))
        for choices, index, texts in cases
    ]
    frame = pl.DataFrame({"prediction": [t for *_, t in cases], "choices": [c for c, *_ in cases],
                          "gold_index": [i for _, i, _ in cases]})
    got = frame.select(letter_match("prediction", choices="choices", gold_index="gold_index"))
    # rows 1 and 2: gold "x" has no label, so both golds ("A", "x") are compared as they
    # are: the response "A" gives the label A, equal to the raw gold "A"; the response "x"
    # gives no label (x is not one of A-C) and fails
    assert got.to_series().to_list() == expected == [1.0, 1.0, 0.0, 1.0]


@pytest.mark.parametrize("anchorless", [True, False])
@pytest.mark.parametrize("strip", [False, True])
def test_letter_pass_at_k_agrees_with_pass_at_k(anchorless, strip):
    docs = [doc for doc in _docs(random.Random(2), 300) if len(doc[2]) >= 2]
    expected = []
    for choices, index, texts in docs:
        metric = REF["PassAtK"](k=2, n=len(texts), strip_strings=strip,
                                sample_scoring_function=gpqa_scorer(anchorless))
        expected.append(metric.compute(
            REF["Doc"](query="", choices=choices, gold_index=index),
            REF["ModelResponse"](text=texts),
        ))
    frame = pl.DataFrame(
        {"prediction": [texts for _, _, texts in docs],
         "choices": [choices for choices, _, _ in docs],
         "gold_index": [index for _, index, _ in docs]}
    )
    got = frame.select(letter_pass_at_k(
        "prediction", choices="choices", gold_index="gold_index", k=2, strip=strip,
        try_extract_without_anchor=anchorless,
    )).to_series().to_list()
    assert got == pytest.approx(expected, abs=1e-12)


# --------------------------------------------------------------------------------------
# extractor= on the sampling metrics against lighteval's sampling classes
# --------------------------------------------------------------------------------------


def _four_choice_docs(seed: int, count: int) -> list[tuple[list[str], int, list[str]]]:
    rng = random.Random(seed)
    docs = []
    for _ in range(count):
        choices = rng.choice([["A", "B", "C", "D"], ["(A)", " B", "c", "Answer: D"]])
        docs.append((choices, rng.randrange(4), [rng.choice(RESPONSES) for _ in range(6)]))
    return docs


def _frame(docs) -> pl.DataFrame:
    return pl.DataFrame({"prediction": [texts for _, _, texts in docs],
                         "gold": [choices[index] for choices, index, _ in docs]})


def _doc(choices, index):
    return REF["Doc"](query="", choices=choices, gold_index=index)


LETTERS = {"extractor": "lighteval_letters", "gold_extractor": "lighteval_letters"}


@pytest.mark.parametrize("strip", [False, True])
def test_pass_at_k_with_letter_extraction_agrees(strip):
    docs = _four_choice_docs(3, 300)
    normalizer = "strip" if strip else "none"
    for k in (1, 3):
        expected = [
            REF["PassAtK"](k=k, n=6, strip_strings=strip, sample_scoring_function=gpqa_scorer())
            .compute(_doc(choices, index), REF["ModelResponse"](text=texts))
            for choices, index, texts in docs
        ]
        got = _frame(docs).select(pass_at_k(
            prediction="prediction", gold="gold", k=k, normalizer=normalizer, **LETTERS
        )).to_series().to_list()
        assert got == pytest.approx(expected, abs=1e-12)


def test_avg_at_k_with_letter_extraction_agrees():
    # lighteval's AvgAtN scores the raw texts (it ignores strip_strings)
    docs = _four_choice_docs(4, 300)
    expected = [
        REF["AvgAtN"](n=4, sample_scoring_function=gpqa_scorer())
        .compute(_doc(choices, index), REF["ModelResponse"](text=texts))
        for choices, index, texts in docs
    ]
    got = _frame(docs).select(avg_at_k("prediction", "gold", k=4, **LETTERS))
    assert got.to_series().to_list() == pytest.approx(expected, abs=1e-12)


def test_g_pass_at_k_with_letter_extraction_agrees():
    docs = _four_choice_docs(5, 200)
    frame = _frame(docs)
    results = [
        REF["GPassAtK"](k=4, n=6, thresholds=[0.25, 0.5, 1.0], strip_strings=True,
                        sample_scoring_function=gpqa_scorer())
        .compute(_doc(choices, index), REF["ModelResponse"](text=texts))
        for choices, index, texts in docs
    ]
    for tau in (0.25, 0.5, 1.0):
        got = frame.select(g_pass_at_k(
            prediction="prediction", gold="gold", k=4, tau=tau, normalizer="strip", **LETTERS
        )).to_series().to_list()
        assert got == pytest.approx([r[f"g-pass@4_{tau}"] for r in results], abs=1e-12)
    got = frame.select(mg_pass_at_k(
        prediction="prediction", gold="gold", k=4, normalizer="strip", **LETTERS
    )).to_series().to_list()
    assert got == pytest.approx([r["mg-pass@4"] for r in results], abs=1e-12)


def test_maj_at_k_vote_text_is_lighteval_maj_at_n():
    """lighteval's MajAtN votes over the preprocessed texts, then scores the winner.

    Its compute builds ``Doc(choices=golds, gold_index=doc.gold_index)``, a one-choice
    doc (only ``A`` is a label, and a gold index above 0 is an IndexError), so the
    scorer is handed the row's four-choice doc by this wrapper; the vote is MajAtN's own.
    """
    docs = _four_choice_docs(6, 300)
    scorer = gpqa_scorer()
    expected = []
    for choices, index, texts in docs:
        def score(doc, response, choices=choices, index=index):
            return scorer.compute(_doc(choices, index), response)

        metric = REF["MajAtN"](n=5, strip_strings=True, sample_scoring_function=score)
        expected.append(
            metric.compute(_doc([choices[index]], 0), REF["ModelResponse"](text=texts))
        )
    got = _frame(docs).select(maj_at_k(
        "prediction", "gold", k=5, normalizer="strip", **LETTERS
    )).to_series().to_list()
    assert got == expected


def test_maj_at_k_vote_answer_is_lm_eval_majority_vote():
    selection = pytest.importorskip("lm_eval.filters.selection",
                                    reason="lm-eval is not installed")
    docs = _four_choice_docs(7, 300)
    frame = _frame(docs)
    extracted = [reference_labels(texts[:5]) for _, _, texts in docs]
    golds = reference_labels([choices[index] for choices, index, _ in docs])
    golds = [gold if gold is not None else choices[index]
             for gold, (choices, index, _) in zip(golds, docs, strict=True)]
    votes = [vote[0] for vote in selection.MajorityVoteFilter().apply(extracted, None)]
    expected = [float(vote is not None and vote == gold)
                for vote, gold in zip(votes, golds, strict=True)]
    got = frame.select(maj_at_k("prediction", "gold", k=5, vote="answer", **LETTERS))
    assert got.to_series().to_list() == expected


# --------------------------------------------------------------------------------------
# Real responses: MMLU-Pro's GPT-4o chains of thought (ten options, A-J)
# --------------------------------------------------------------------------------------


def test_gpt4o_mmlu_pro_responses_agree_on_every_row(shared_data):
    import gzip
    import json

    files = sorted((shared_data / "mmlu-pro" / "gpt4o").glob("*_result.json.gz"))
    texts = [row["response"] for path in files for row in json.loads(gzip.decompress(
        path.read_bytes()))]
    assert len(texts) == 12_032
    for anchorless in (True, False):
        extractor = indices_extraction("Letters", 10, anchorless)
        frame = pl.DataFrame({"text": texts})
        got = frame.select(extractor("text").struct.unnest())
        assert got["extracted"].to_list() == reference_labels(texts, "Letters", 10, anchorless)
        # rule "none" exactly where nothing was extracted
        assert got["rule"].eq("none").to_list() == got["extracted"].is_null().to_list()
