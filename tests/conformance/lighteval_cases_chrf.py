"""How lighteval's chrF fixtures (``chrf.json``, ``chrf_plus.json``) map onto evalframe.

Both are corpus suites: ``docs`` and ``model_responses``, one per document, and one
``expected_output`` for the corpus. lighteval scores them with
``CorpusLevelTranslationMetric("chrf")`` (``sacrebleu.CHRF()``) or ``("chrf++")``
(``sacrebleu.CHRF(word_order=2)``), whose ``compute_corpus`` calls
``metric.corpus_score(hypotheses=preds, references=golds)`` with ``golds = [i.golds for i
in items]``: one list per *document*. sacrebleu reads ``references`` as reference
*streams* (``references[j][i]`` is reference ``j`` of segment ``i``), so the documents'
golds become ``len(docs)`` streams of length 1: there is one segment, whose references are
every document's gold, and ``zip(hypotheses, ...)`` scores only the first hypothesis
against them (the best of them, by sentence f-score).

The mapping reproduces exactly that, which is what the expected outputs hold (e.g.
"CHRF - High Similarity" expects 100.0 although its second hypothesis drops a word: the
first hypothesis equals the first gold): one row, ``prediction`` the first document's
first response, ``gold`` the list of every document's gold, scored by evalframe's ``chrf``
/ ``chrf++`` (corpus metrics, reduced over the one row). Checked against sacrebleu in
``tests/conformance/test_chrf_conformance.py``.
"""

from __future__ import annotations

from collections.abc import Callable

import polars as pl

from tests.conformance.lighteval_cases import Case, Check


def lighteval_corpus_frame(case: Case) -> pl.DataFrame:
    """The one segment lighteval's call scores: the first hypothesis, every gold."""
    docs = case.data["docs"]
    responses = case.data["model_responses"]
    assert len(docs) == len(responses), f"{case.id}: {len(docs)} docs, {len(responses)} responses"
    golds = []
    for doc in docs:
        index = doc.get("gold_index", 0)
        indices = index if isinstance(index, list) else [index]
        golds.append(doc["choices"][indices[0]])
    first = responses[0]["text"][0]
    return pl.DataFrame({"prediction": [first], "gold": [golds]})


def _chrf(case: Case) -> tuple[pl.DataFrame, list[Check]]:
    # lighteval Metrics.chrf: CorpusLevelTranslationMetric("chrf") = sacrebleu.CHRF()
    return lighteval_corpus_frame(case), [Check("chrf", case.data["metric_name"])]


def _chrf_plus(case: Case) -> tuple[pl.DataFrame, list[Check]]:
    # lighteval Metrics.chrf_plus: CorpusLevelTranslationMetric("chrf++") =
    # sacrebleu.CHRF(word_order=2); metric_name "chrf++"
    return lighteval_corpus_frame(case), [Check("chrf++", case.data["metric_name"])]


MAPPED: dict[str, Callable[[Case], tuple[pl.DataFrame, list[Check]]]] = {
    "chrf.json": _chrf,
    "chrf_plus.json": _chrf_plus,
}

#: Single cases of the mapped files that evalframe does not reproduce: none.
SKIPPED_CASES: dict[tuple[str, str], str] = {}
