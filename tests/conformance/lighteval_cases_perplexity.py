"""How lighteval's perplexity fixtures map onto evalframe's perplexity family.

Only ``word_perplexity.json`` carries scores that lighteval checks. It is a corpus suite
(``"corpus_level": true``): each case has ``docs`` and ``model_responses``, one per
document, and one ``expected_output`` number, which lighteval's ``AutomatedMetricTester``
compares with ``aggregation(compute_sample(doc, response) for each document)``. The
sample step is ``PerplexityPreparator(units_type="words")``: the document's
log-likelihood is ``np.sum(model_response.logprobs)`` and its length is
``len(re.split(r"\\s+", query))`` of the doc's query; the aggregation is
``CorpusLevelPerplexityMetric("weighted_perplexity")``: ``exp(-sum(ll) / sum(words))``,
lm-eval's ``weighted_perplexity``, which is evalframe's ``word_perplexity`` over the
roles ``loglikelihood`` and ``text``.

Case "Low Perplexity" by hand: the log-likelihoods are -0.7, -0.6 and -0.4 (sum -1.7),
the queries have 4, 5 and 2 words (11), so ``exp(1.7 / 11) = 1.16713`` as expected.
(Counting ``doc.original_query`` instead, were it ``""``, would give 1 word per document
and ``exp(1.7 / 3) = 1.763``: the fixture counts the query.)

The other perplexity fixtures are sample suites whose ``expected_output`` lighteval never
compares: see ``SKIPPED_FILES`` in :mod:`tests.conformance.lighteval_cases`.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import polars as pl

from tests.conformance.lighteval_cases import Case, Check


def corpus_frame(case: Case) -> pl.DataFrame:
    """One row per document: ``loglikelihood`` (sum of its logprobs) and ``text`` (query)."""
    docs = case.data["docs"]
    responses = case.data["model_responses"]
    assert len(docs) == len(responses), f"{case.id}: {len(docs)} docs, {len(responses)} responses"
    return pl.DataFrame(
        {
            # lighteval: np.sum(model_response.logprobs); math.fsum is the exact sum, and
            # the sums here are of a few short decimals, far inside the tolerance.
            "loglikelihood": [math.fsum(r.get("logprobs", [])) for r in responses],
            "text": [doc.get("query", "") for doc in docs],
        },
        schema={"loglikelihood": pl.Float64, "text": pl.String},
    )


def _word_perplexity(case: Case) -> tuple[pl.DataFrame, list[Check]]:
    # lighteval Metrics.word_perplexity = CorpusLevelMetric("word_perplexity",
    # PerplexityPreparator("words"), CorpusLevelPerplexityMetric("weighted_perplexity"));
    # expected_output is the corpus score itself (a number, keyed by metric_name).
    return corpus_frame(case), [Check("word_perplexity", case.data["metric_name"])]


MAPPED: dict[str, Callable[[Case], tuple[pl.DataFrame, list[Check]]]] = {
    "word_perplexity.json": _word_perplexity,
}

#: Single cases of the mapped files that evalframe does not reproduce: none.
SKIPPED_CASES: dict[tuple[str, str], str] = {}
