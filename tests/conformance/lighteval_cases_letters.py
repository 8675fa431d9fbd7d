"""How lighteval's letter extractive-match fixture cases map onto evalframe.

The fixtures (``gpqa_instruct_metric.json``, ``gpqa_instruct_pass_at_k.json``,
``pass_at_k_letters.json``) give, per case, a ``doc`` (``choices``, ``gold_index``), the
responses (``model_response.text``) and the expected score of lighteval 0.13.0's
``Metrics.gpqa_instruct_metric`` (``MultilingualExtractiveMatchMetric`` with
``IndicesExtractionConfig(prefix_for_extraction="NativeLetters",
try_extract_without_anchor=True)`` for prediction and gold), ``gpqa_instruct_pass_at_k``
(``PassAtK`` over that scorer) or ``pass_at_k_letters`` (``PassAtK`` over the anchored
configuration, ``try_extract_without_anchor=False``).

The one-row frame of a case has the columns ``prediction`` (``str`` for one response,
``list[str]`` for the generations of a pass@k case), ``choices``, ``gold_index`` and
``gold`` (``choices[gold_index]``): ``letter_match`` and ``letter_pass@k`` read the doc
(``prediction``, ``choices``, ``gold_index``: the number of choices decides which letters
exist, so ``pass_at_k_letters``'s one-choice docs accept only ``A``), the generic
``pass@k`` reads ``prediction`` and ``gold`` and extracts with ``lighteval_letters`` (four
choices, A-D), which agrees on the four-choice gpqa cases. lighteval's ``n`` parameter
cuts the generations (``predictions[: n]``); ``strip_strings=True`` maps to ``strip=true``
(``letter_pass@k``) and ``normalizer=strip`` (``pass@k``), applied before extraction as
lighteval's ``SamplingMetric.preprocess``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import polars as pl

from tests.conformance.lighteval_cases import Case, Check


def _params(case: Case) -> dict[str, Any]:
    return dict(case.data.get("metric_params") or {})


def letters_frame(case: Case, *, n: int | None = None, several: bool = False) -> pl.DataFrame:
    """The one-row input: the response(s), the doc's choices and gold index, the gold."""
    doc = case.data["doc"]
    texts = list(case.data["model_response"]["text"])
    if n is not None:
        texts = texts[:n]
    index = doc["gold_index"]
    indices = index if isinstance(index, list) else [index]
    golds = [doc["choices"][i] for i in indices]
    return pl.DataFrame(
        {
            "prediction": [texts if several or len(texts) != 1 else texts[0]],
            "choices": [list(doc["choices"])],
            "gold_index": [index],
            "gold": [golds if len(golds) != 1 else golds[0]],
        },
        schema_overrides={"prediction": pl.List(pl.String)} if several else None,
    )


def _gpqa_instruct_metric(case: Case) -> tuple[pl.DataFrame, list[Check]]:
    # lighteval Metrics.gpqa_instruct_metric, key "extractive_match"
    return letters_frame(case), [Check("letter_match", "extractive_match")]


def _gpqa_instruct_pass_at_k(case: Case) -> tuple[pl.DataFrame, list[Check]]:
    # lighteval Metrics.gpqa_instruct_pass_at_k (PassAtK over the gpqa letter scorer);
    # key "gpqa_pass@k:k={k}&n={n}&strip_strings={strip}" (the case's metric_params in order)
    params = _params(case)
    k, n = params["k"], params.get("n")
    strip = bool(params.get("strip_strings", False))
    key = "gpqa_pass@k:" + "&".join(f"{name}={value}" for name, value in params.items())
    letter_options: dict[str, Any] = {"strip": True} if strip else {}
    generic: dict[str, Any] = {
        "extractor": "lighteval_letters", "gold_extractor": "lighteval_letters",
    }
    if strip:
        generic["normalizer"] = "strip"
    checks = [Check(f"letter_pass@{k}", key, letter_options)]
    if len(case.data["doc"]["choices"]) == 4:  # lighteval_letters is the four-choice config
        checks.append(Check(f"pass@{k}", key, generic))
    return letters_frame(case, n=n, several=True), checks


def _pass_at_k_letters(case: Case) -> tuple[pl.DataFrame, list[Check]]:
    # lighteval Metrics.pass_at_k_letters: PassAtK over IndicesExtractionConfig(
    # prefix_for_extraction="NativeLetters") (no unanchored patterns), key "pass@k:k=..&n=.."
    params = _params(case)
    k, n = params["k"], params.get("n")
    key = "pass@k:" + "&".join(f"{name}={value}" for name, value in params.items())
    check = Check(f"letter_pass@{k}", key, {"try_extract_without_anchor": False})
    return letters_frame(case, n=n, several=True), [check]


MAPPED: dict[str, Callable[[Case], tuple[pl.DataFrame, list[Check]]]] = {
    "gpqa_instruct_metric.json": _gpqa_instruct_metric,
    "gpqa_instruct_pass_at_k.json": _gpqa_instruct_pass_at_k,
    "pass_at_k_letters.json": _pass_at_k_letters,
}
