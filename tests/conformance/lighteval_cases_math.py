"""How lighteval's math fixtures map onto evalframe (``equivalence='math'``, ``extractive_match``).

lighteval 0.13.0 scores these files' samples with ``MultilingualExtractiveMatchMetric``
(its own copy of the math extraction and comparison) inside a sampling metric:

- ``pass_at_k_math.json``: ``PassAtK(strip_strings=True)`` over the first ``n`` samples,
  golds and predictions extracted as ``[Expr, Latex]``, ``precision=6``; key
  ``pass@k:k={k}&n={n}``;
- ``avg_at_k_math.json``: ``AvgAtN`` (no stripping) over the first ``k`` samples, the same
  scorer; key ``avg@k:k={k}``;
- ``g_pass_at_k_math.json`` / ``g_pass_at_k_latex.json``: ``GPassAtK(strip_strings=True,
  name_prefix="math"/"latex")``, golds extracted as ``Expr`` / ``Latex`` only,
  predictions as ``[Expr, Latex(boxed_match_priority=0)]``, ``precision=5``; keys
  ``{prefix}_g-pass@{k}_{tau}`` and ``m{prefix}_g-pass@{k}``;
- ``expr_gold_metric.json``: the scorer on its own (``Metrics.expr_gold_metric``), key
  ``extractive_match``: evalframe's ``extractive_match`` with its defaults.

The sampling metrics take ``equivalence='math'``: each (sample, gold) pair judged by
math-verify's ``verify(parse(gold), parse(sample))`` with math-verify's default configs.
That is not lighteval's scorer, but on every sample of these files the verdicts are the
same: ``test_math_conformance.test_fixture_samples_agree`` checks, sample by sample, that
lighteval's own scorer, ``extractive_match`` with the file's configuration and
``math_equal`` all agree, so these mappings reproduce lighteval and not by chance.
"""

from __future__ import annotations

from collections.abc import Callable

import polars as pl

from tests.conformance.lighteval_cases import Case, Check, golds, samples

#: lighteval's scorer configuration per file: (gold targets, prediction targets,
#: boxed_match_priority=0 for the prediction, precision), as ``extractive_match`` options.
SCORERS: dict[str, dict[str, object]] = {
    "pass_at_k_math.json": {
        "gold_targets": ["latex", "expr"], "prediction_targets": ["latex", "expr"],
        "boxed_first": False, "precision": 6,
    },
    "avg_at_k_math.json": {
        "gold_targets": ["latex", "expr"], "prediction_targets": ["latex", "expr"],
        "boxed_first": False, "precision": 6,
    },
    "g_pass_at_k_math.json": {
        "gold_targets": ["expr"], "prediction_targets": ["latex", "expr"],
        "boxed_first": True, "precision": 5,
    },
    "g_pass_at_k_latex.json": {
        "gold_targets": ["latex"], "prediction_targets": ["latex", "expr"],
        "boxed_first": True, "precision": 5,
    },
    "expr_gold_metric.json": {
        "gold_targets": ["expr"], "prediction_targets": ["latex", "expr"],
        "boxed_first": True, "precision": 5,
    },
}

#: Whether lighteval strips the samples and golds before scoring them (``strip_strings``).
STRIPPED = {
    "pass_at_k_math.json": True,
    "avg_at_k_math.json": False,
    "g_pass_at_k_math.json": True,
    "g_pass_at_k_latex.json": True,
    "expr_gold_metric.json": False,
}


def _params(case: Case) -> dict:
    return dict(case.data.get("metric_params") or {})


def generations_frame(case: Case, first: int | None) -> pl.DataFrame:
    """One row: the first ``first`` samples as ``prediction``, the golds as ``gold``.

    Only these two columns, so the sampling metrics count correct samples themselves
    (with ``equivalence='math'``) instead of reading ``n``/``c``.
    """
    texts = samples(case)[:first] if first is not None else samples(case)
    return pl.DataFrame({"prediction": [texts], "gold": [golds(case)]})


def _math(strip: bool) -> dict[str, object]:
    return {"equivalence": "math", **({"normalizer": "strip"} if strip else {})}


def _pass_at_k_math(case: Case) -> tuple[pl.DataFrame, list[Check]]:
    params = _params(case)
    k, n = params["k"], params.get("n")
    key = f"pass@k:k={k}&n={n}" if n is not None else f"pass@k:k={k}"
    return generations_frame(case, n), [Check(f"pass@{k}", key, _math(strip=True))]


def _avg_at_k_math(case: Case) -> tuple[pl.DataFrame, list[Check]]:
    k = _params(case)["k"]
    return generations_frame(case, k), [Check(f"avg@{k}", f"avg@k:k={k}", _math(strip=False))]


def _g_pass_at_k(prefix: str) -> Callable[[Case], tuple[pl.DataFrame, list[Check]]]:
    def mapping(case: Case) -> tuple[pl.DataFrame, list[Check]]:
        params = _params(case)
        k, n = params["k"], params.get("n")
        options = _math(strip=bool(params.get("strip_strings", True)))
        checks = [
            Check(f"g-pass@{k}_{tau}", f"{prefix}_g-pass@{k}_{tau}", options)
            for tau in params["thresholds"]
        ]
        checks.append(Check(f"mg-pass@{k}", f"m{prefix}_g-pass@{k}", options))
        return generations_frame(case, n), checks

    return mapping


def _expr_gold_metric(case: Case) -> tuple[pl.DataFrame, list[Check]]:
    texts = samples(case)
    frame = pl.DataFrame(
        {"prediction": [texts[0] if len(texts) == 1 else texts], "gold": [golds(case)]}
    )
    return frame, [Check("extractive_match", "extractive_match")]


MAPPED: dict[str, Callable[[Case], tuple[pl.DataFrame, list[Check]]]] = {
    "pass_at_k_math.json": _pass_at_k_math,
    "avg_at_k_math.json": _avg_at_k_math,
    "g_pass_at_k_math.json": _g_pass_at_k("math"),
    "g_pass_at_k_latex.json": _g_pass_at_k("latex"),
    "expr_gold_metric.json": _expr_gold_metric,
}

#: Single cases of the mapped files that evalframe does not reproduce: none.
SKIPPED_CASES: dict[tuple[str, str], str] = {}
