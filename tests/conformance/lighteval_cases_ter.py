"""How lighteval's ``ter.json`` maps onto evalframe's ``ter``.

``ter.json`` is a corpus suite: each case has ``docs`` and ``model_responses`` and one
``expected_output``. lighteval's ``Metrics.ter`` is
``CorpusLevelTranslationMetric("ter")``, whose ``compute_corpus`` calls
``sacrebleu.TER().corpus_score(hypotheses=preds, references=golds)`` with
``golds = [item.golds for item in items]``: one list of golds *per document*, where
sacrebleu expects reference *streams* (one list per reference, as long as the
hypotheses; lighteval transposes for BLEU only). sacrebleu zips the streams, so it scores
a single segment: the **first** hypothesis against every document's gold as its
references (``zip`` stops at the shortest stream, one gold long).

The mapping reproduces that call: one row, the first document's response as
``prediction`` and the golds of all documents as its references (``gold``). Case
"Completely Different" by hand: ``"il pleut beaucoup"`` against references of 5, 6 and 4
words (average 5); the best is the 4-word one, 3 substitutions and 1 insertion, so
``100 * 4 / 5 = 80.0``. The per-document corpus TER of the same data (what evalframe's
``ter`` gives over one row per document) is 100.0 there, and 9.09 for "Minor Edits",
where lighteval expects 0.0: ``test_ter_conformance`` checks that one against
``sacrebleu.corpus_ter`` directly.
"""

from __future__ import annotations

from collections.abc import Callable

import polars as pl

from tests.conformance.lighteval_cases import Case, Check


def documents(case: Case) -> tuple[list[str], list[list[str]]]:
    """Per document: the first response and the golds (``Doc.get_golds()``)."""
    hypotheses, golds = [], []
    for doc, response in zip(case.data["docs"], case.data["model_responses"], strict=True):
        index = doc.get("gold_index", 0)
        indices = index if isinstance(index, list) else [index]
        golds.append([doc["choices"][i] for i in indices])
        hypotheses.append(response["text"][0])
    return hypotheses, golds


def lighteval_frame(case: Case) -> pl.DataFrame:
    """The one segment lighteval's call scores: first hypothesis, all golds as references."""
    hypotheses, golds = documents(case)
    return pl.DataFrame({"prediction": [hypotheses[0]], "gold": [[g[0] for g in golds]]})


def _ter(case: Case) -> tuple[pl.DataFrame, list[Check]]:
    return lighteval_frame(case), [Check("ter", case.data["metric_name"])]


MAPPED: dict[str, Callable[[Case], tuple[pl.DataFrame, list[Check]]]] = {
    "ter.json": _ter,
}

#: Single cases of the mapped files that evalframe does not reproduce: none.
SKIPPED_CASES: dict[tuple[str, str], str] = {}
