"""How lighteval's ROUGE fixtures map onto evalframe's ROUGE metrics.

lighteval 0.13.0 defines ``Metrics.rouge1`` / ``rouge2`` / ``rougeL`` / ``rougeLsum`` as
``ROUGE(type)``: ``rouge_scorer.RougeScorer([type], tokenizer=None)``, so **no stemmer**,
and the F-measure averaged over the (prediction, gold) pairs (``aggregation_function=
np.mean``); that is evalframe's ``rouge1(use_stemmer=false, aggregation=mean)``.
``Metrics.rouge_t5`` (keys ``rouge1``, ``rouge2``, ``rougeL``, ``rougeLsum``, 0-100) is
evalframe's ``rouge_t5(rouge_type=...)``, one check per key.

Case "ROUGE T5 - Partial Match" by hand: "The quick brown fox" against the nine-word
reference shares 4 unigrams, P = 4/4, R = 4/9, F = 2 * 4/9 / (13/9) = 8/13 = 61.54.
"""

from __future__ import annotations

from collections.abc import Callable

import polars as pl

from tests.conformance.lighteval_cases import Case, Check, frame

_TYPES = ("rouge1", "rouge2", "rougeL", "rougeLsum")


def _rouge(rouge_type: str) -> Callable[[Case], tuple[pl.DataFrame, list[Check]]]:
    def mapper(case: Case) -> tuple[pl.DataFrame, list[Check]]:
        options = {"use_stemmer": False, "aggregation": "mean"}
        return frame(case), [Check(rouge_type, rouge_type, options)]

    return mapper


def _rouge_t5(case: Case) -> tuple[pl.DataFrame, list[Check]]:
    checks = [Check("rouge_t5", key, {"rouge_type": key}) for key in _TYPES]
    return frame(case), checks


MAPPED: dict[str, Callable[[Case], tuple[pl.DataFrame, list[Check]]]] = {
    **{f"{rouge_type}.json": _rouge(rouge_type) for rouge_type in _TYPES},
    "rouge_t5.json": _rouge_t5,
}

#: Single cases of the mapped files that evalframe does not reproduce: none.
SKIPPED_CASES: dict[tuple[str, str], str] = {}
