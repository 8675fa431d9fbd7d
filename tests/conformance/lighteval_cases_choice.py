"""How lighteval's multiple-choice fixture cases map onto evalframe's choice metrics.

The fixtures (``loglikelihood_acc.json``, ``mrr.json``, ``recall_at_k.json``,
``truthfulqa_mc_metrics.json``) give, per case, a ``doc`` (``choices``, ``gold_index``,
for TruthfulQA ``specific.len_mc1``) and a ``model_response`` whose ``logprobs`` hold
one log-probability per choice. The one-row frame built for a case has the role
columns ``choice_logprobs``, ``gold_index`` (an ``int`` or a ``list[int]``, as the doc
has it), ``choices`` and, for TruthfulQA, ``len_mc1``.

``acc_golds_likelihood.json`` stays in ``lighteval_cases.SKIPPED_FILES``: it scores
per-gold greedy-decoding flags (``argmax_logits_eq_gold``), not choice log-probabilities.

Most cases give *probabilities* as ``logprobs`` (``[0.1, 0.8, 0.1]``), which lighteval
takes as they are. evalframe refuses a log-probability above 0 (a probability above 1),
so such a case gets their logarithms (``log 0 = -inf``): the logarithm is increasing, so
every argmax and ranking lighteval computes (acc, mrr, recall, mc1) is the same. MC2, a
softmax, is not order-only; the two TruthfulQA cases whose MC2 targets have probability
0 (``log 0 = -inf`` for both: no probability mass, NaN) are skipped for that reason.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import polars as pl

from tests.conformance.lighteval_cases import Case, Check

#: Log-probabilities up to this much above 0 are rounding (evalframe.metrics._logprob).
TOLERANCE = 1e-6


def log_probabilities(values: list[float]) -> list[float]:
    """The case's ``logprobs``, or their logarithms where they are probabilities (some above 0).

    >>> log_probabilities([-2.0, -0.5]), log_probabilities([0.5, 0.0])
    ([-2.0, -0.5], [-0.6931471805599453, -inf])
    """
    if all(value <= TOLERANCE for value in values):
        return values
    return [math.log(value) if value > 0 else -math.inf for value in values]


def choice_frame(case: Case) -> pl.DataFrame:
    """The one-row evalframe input for a log-probability case."""
    doc = case.data["doc"]
    gold = doc.get("gold_index", 0)
    values = [float(value) for value in case.data["model_response"]["logprobs"]]
    data = {
        "choice_logprobs": [log_probabilities(values)],
        "gold_index": [gold],
        "choices": [list(doc["choices"])],
    }
    schema = {
        "choice_logprobs": pl.List(pl.Float64),
        "gold_index": pl.List(pl.Int64) if isinstance(gold, list) else pl.Int64,
        "choices": pl.List(pl.String),
    }
    specific = doc.get("specific") or {}
    if "len_mc1" in specific:
        data["len_mc1"] = [specific["len_mc1"]]
        schema["len_mc1"] = pl.Int64
    return pl.DataFrame(data, schema=schema)


def _loglikelihood_acc(case: Case) -> tuple[pl.DataFrame, list[Check]]:
    # lighteval Metrics.loglikelihood_acc = LoglikelihoodAcc(logprob_normalization=None),
    # key "acc": np.argmax(logprobs) in gold_index
    return choice_frame(case), [Check("acc", "acc")]


def _mrr(case: Case) -> tuple[pl.DataFrame, list[Check]]:
    # lighteval Metrics.mrr = MRR(), key "mrr"
    return choice_frame(case), [Check("mrr", "mrr")]


def _recall_at_k(case: Case) -> tuple[pl.DataFrame, list[Check]]:
    # lighteval Recall(k), key "recall:k={k}" (metric_params k; the Metrics enum uses k=1)
    k = int((case.data.get("metric_params") or {}).get("k", 1))
    return choice_frame(case), [Check(f"recall@{k}", f"recall:k={k}")]


def _truthfulqa(case: Case) -> tuple[pl.DataFrame, list[Check]]:
    # lighteval Metrics.truthfulqa_mc_metrics = TruthfulqaMCMetrics(): keys truthfulqa_mc1
    # (argmax of the first len_mc1 log-probabilities is 0) and truthfulqa_mc2 (softmax mass of
    # the true MC2 answers); len_mc1 from doc.specific
    return choice_frame(case), [Check("mc1", "truthfulqa_mc1"), Check("mc2", "truthfulqa_mc2")]


MAPPED: dict[str, Callable[[Case], tuple[pl.DataFrame, list[Check]]]] = {
    "loglikelihood_acc.json": _loglikelihood_acc,
    "mrr.json": _mrr,
    "recall_at_k.json": _recall_at_k,
    "truthfulqa_mc_metrics.json": _truthfulqa,
}

#: Single cases of the mapped files that evalframe deliberately does not reproduce.
SKIPPED_CASES: dict[tuple[str, str], str] = {
    ("truthfulqa_mc_metrics.json", "TruthfulQA MC Metrics - Multiple Gold Indices"): (
        "lighteval's MC2 takes as true only the consecutive run of gold indices that starts "
        "at the second one (last_harness_gold; its comment calls this broken): golds "
        "[0, 1, 3, 4, 5] with len_mc1=4 give the run [1], a split of 1 - 4 + 1 = -2 and "
        "lls[4:][:-2] = [] true answers, so mc2 = 0.0; evalframe takes every gold in the MC2 "
        "block (choices 4 and 5, both true, as lm-eval's labels == 1 would) and gives 1.0. "
        "mc1 agrees (0.0: choice 1 is the most likely of the first four)"
    ),
    **{
        ("truthfulqa_mc_metrics.json", name): (
            "the case gives probabilities as log-probabilities ([0.8, 0.1, 0.1, 0.0, 0.0] "
            "style), which evalframe refuses (a log-probability above 0); their logarithms "
            "keep mc1 (an argmax) but make the MC2 targets [0.0, 0.0] log-probabilities -inf, "
            "no probability mass: mc2 is NaN, where lighteval's softmax of the raw numbers "
            "gives 1.0. mc1 agrees"
        )
        for name in ("TruthfulQA MC Metrics - Correct Answer",
                     "TruthfulQA MC Metrics - Wrong Answer")
    },
}
