"""lighteval's BLEU fixtures (``bleu.json``, ``bleu_1.json``, ``bleu_4.json``) in evalframe.

``bleu.json`` is a corpus suite: ``docs`` and ``model_responses``, one per document, and
one ``expected_output``. lighteval scores it with ``CorpusLevelTranslationMetric("bleu")``
(``sacrebleu.BLEU(trg_lang="")``: the ``13a`` tokenizer, ``exp`` smoothing), whose
``compute_corpus`` keeps each document's first response and, for BLEU only, rewrites the
golds as one reference stream of every document's *first* gold (``golds = [[gold[0] for
gold in golds]]``): one segment per document with one reference. The mapping builds that
frame (one row per document) and scores evalframe's corpus ``bleu``.

``bleu_1.json`` and ``bleu_4.json`` are sample suites: lighteval's
``metrics_sample.BLEU(n_gram)`` scores the doc's golds against the response's text with
nltk's ``sentence_bleu`` over ``nltk.word_tokenize`` tokens. ``word_tokenize`` splits
sentences with Punkt first, whose model (nltk's ``punkt_tab`` data) is a download that is
not installed here; every fixture text is one sentence without a period, for which the
Punkt split changes nothing, so the checks use ``sentence_split=false`` (the text as one
sentence, ``word_tokenize(text, preserve_line=True)``) and hold with or without the data.
"""

from __future__ import annotations

from collections.abc import Callable

import polars as pl

from tests.conformance.lighteval_cases import Case, Check, frame


def lighteval_bleu_frame(case: Case) -> pl.DataFrame:
    """One row per document: its first response and its first gold."""
    docs = case.data["docs"]
    responses = case.data["model_responses"]
    assert len(docs) == len(responses), f"{case.id}: {len(docs)} docs, {len(responses)} responses"
    golds = []
    for doc in docs:
        index = doc.get("gold_index", 0)
        indices = index if isinstance(index, list) else [index]
        golds.append(doc["choices"][indices[0]])
    predictions = [response["text"][0] for response in responses]
    return pl.DataFrame({"prediction": predictions, "gold": golds})


def _bleu(case: Case) -> tuple[pl.DataFrame, list[Check]]:
    # lighteval Metrics.bleu: CorpusLevelTranslationMetric("bleu") = sacrebleu.BLEU()
    return lighteval_bleu_frame(case), [Check("bleu", case.data["metric_name"])]


def _sentence(metric: str) -> Callable[[Case], tuple[pl.DataFrame, list[Check]]]:
    def mapper(case: Case) -> tuple[pl.DataFrame, list[Check]]:
        # lighteval Metrics.bleu_1 / bleu_4: BLEU(n_gram=1 / 4), key "bleu_1" / "bleu_4"
        return frame(case), [Check(metric, metric, {"sentence_split": False})]

    return mapper


MAPPED: dict[str, Callable[[Case], tuple[pl.DataFrame, list[Check]]]] = {
    "bleu.json": _bleu,
    "bleu_1.json": _sentence("bleu_1"),
    "bleu_4.json": _sentence("bleu_4"),
}

#: Single cases of the mapped files that evalframe does not reproduce: none.
SKIPPED_CASES: dict[tuple[str, str], str] = {}
