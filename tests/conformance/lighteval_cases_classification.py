"""lighteval's corpus classification fixtures mapped onto evalframe's ``f1`` and ``mcc``.

The lead merges these tables into :mod:`tests.conformance.lighteval_cases`. Every fixture
here is a *corpus* suite: ``docs`` and ``model_responses`` lists (one frame row per doc)
and one ``expected_output`` number for the suite's ``metric_name``, except
``loglikelihood_f1.json``, whose cases are single docs (a one-row corpus) with an
``expected_output`` dict. A check's ``key`` is the ``metric_name`` for a corpus suite and
the ``expected_output`` key otherwise; ``Check.options`` are evalframe metric options.

How lighteval builds the label pairs (``lighteval.metrics.sample_preparator``):

- ``GenerativePreparator`` (``f1_score_macro``, ``f1_score_micro``): gold = the doc's gold
  choice text(s), prediction = the model's text(s). With one of each per doc,
  scikit-learn squeezes the column vectors to one string label per doc.
- ``LoglikelihoodPreparator`` (``mcc``, ``loglikelihood_f1``): gold = the gold index(es),
  prediction = ``np.argmax`` of the choice log-probabilities (the first on ties).

Then ``CorpusLevelF1Score(average).compute_corpus`` calls ``sklearn.metrics.f1_score(golds,
preds, average=average)`` and takes ``np.max``, and ``MatthewsCorrCoef`` calls
``sklearn.metrics.matthews_corrcoef(golds, preds)``.

``multi_f1_numeric.json`` does not map (the reason is in ``SKIPPED_FILES``): lighteval's
``multi_f1_numeric`` is the mean over the classes 0, 1, 2 of the micro F1 of one-vs-rest
booleans, ``(1 + 2 * accuracy) / 3``, which is no scikit-learn average.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import polars as pl

from tests.conformance.lighteval_cases import Case, Check


def _docs(case: Case) -> tuple[list[Mapping[str, Any]], list[Mapping[str, Any]]]:
    """The docs and model responses of a case (a single-doc case is a one-row corpus)."""
    if "docs" in case.data:
        return list(case.data["docs"]), list(case.data["model_responses"])
    return [case.data["doc"]], [case.data["model_response"]]


def _key(case: Case) -> str:
    expected = case.data["expected_output"]
    if isinstance(expected, Mapping):
        (key,) = expected
        return key
    return case.data["metric_name"]


def _gold_indices(doc: Mapping[str, Any]) -> list[int]:
    index = doc.get("gold_index", 0)
    return list(index) if isinstance(index, Sequence) else [index]


def _one(values: Sequence[Any], what: str, case: Case) -> Any:
    if len(values) != 1:
        raise ValueError(
            f"{case.id}: {len(values)} {what} in one doc; scikit-learn would read a 2-d "
            "(multilabel or multioutput) target, not one label per doc"
        )
    return values[0]


def generative_frame(case: Case) -> pl.DataFrame:
    """``GenerativePreparator``: one gold choice text and one model text per doc."""
    docs, responses = _docs(case)
    golds = [_one([doc["choices"][i] for i in _gold_indices(doc)], "golds", case) for doc in docs]
    predictions = [_one(list(response["text"]), "model texts", case) for response in responses]
    return pl.DataFrame({"prediction": predictions, "gold": golds})


def loglikelihood_frame(case: Case) -> pl.DataFrame:
    """``LoglikelihoodPreparator``: the gold index and the argmax of the log-probabilities."""
    docs, responses = _docs(case)
    golds = [_one(_gold_indices(doc), "gold indices", case) for doc in docs]
    predictions = [int(np.argmax(response["logprobs"])) for response in responses]
    return pl.DataFrame({"prediction": predictions, "gold": golds})


def _f1_macro(case: Case) -> tuple[pl.DataFrame, list[Check]]:
    # lighteval Metrics.f1_score_macro = CorpusLevelF1Score(average="macro") over
    # GenerativePreparator pairs; np.max of a number is the number
    return generative_frame(case), [Check("f1", _key(case), {"average": "macro"})]


def _f1_micro(case: Case) -> tuple[pl.DataFrame, list[Check]]:
    # lighteval Metrics.f1_score_micro = CorpusLevelF1Score(average="micro")
    return generative_frame(case), [Check("f1", _key(case), {"average": "micro"})]


def _mcc(case: Case) -> tuple[pl.DataFrame, list[Check]]:
    # lighteval Metrics.mcc = MatthewsCorrCoef() over LoglikelihoodPreparator pairs
    return loglikelihood_frame(case), [Check("mcc", _key(case))]


def _loglikelihood_f1(case: Case) -> tuple[pl.DataFrame, list[Check]]:
    # lighteval Metrics.loglikelihood_f1 = CorpusLevelF1Score(None): f1_score(average=None),
    # one F1 per label, then np.max over the labels, which is no scikit-learn average. The
    # cases are one-doc corpora, where it equals macro F1: a right prediction leaves one
    # label with F1 [1.0], a wrong one two labels with [0.0, 0.0]. (lighteval's own tester
    # never aggregates these single-doc cases: it only checks that compute_sample returns a
    # CorpusMetricInput, so expected_output is the one-doc corpus score.)
    return loglikelihood_frame(case), [Check("f1", _key(case), {"average": "macro"})]


MAPPED: dict[str, Callable[[Case], tuple[pl.DataFrame, list[Check]]]] = {
    "f1_score_macro.json": _f1_macro,
    "f1_score_micro.json": _f1_micro,
    "mcc.json": _mcc,
    "loglikelihood_f1.json": _loglikelihood_f1,
}

_SEVERAL_GOLDS = (
    "two gold indices: lighteval's LoglikelihoodPreparator keeps both ([[0, 1]]), which "
    "scikit-learn reads as a multilabel-indicator target and refuses next to the one-label "
    "prediction (\"Classification metrics can't handle a mix of multilabel-indicator and "
    "binary targets\"); evalframe's classification gold is one label per row"
)

#: Single cases of the mapped files that evalframe does not reproduce.
SKIPPED_CASES: dict[tuple[str, str], str] = {
    ("loglikelihood_f1.json", "Loglikelihood F1 - Multiple Gold Indices"): _SEVERAL_GOLDS,
    ("loglikelihood_f1.json", "Loglikelihood F1 - Multiple Gold Indices Wrong"): _SEVERAL_GOLDS,
}

