r"""Math answers compared by value: math-verify's equivalence and lighteval's extractive match.

- :func:`math_equal` is math-verify 0.9.0's documented check,
  ``verify(parse(gold), parse(prediction))``: both texts are parsed (LaTeX and plain
  expressions by default; ``\\boxed{}``, ``$...$``, ``answer:`` anchors...), then compared
  by value: ``\\frac12`` = ``0.5`` = ``1/2``, ``50%`` = ``0.5``, units dropped
  (``5\\text{ m}`` = ``5``), intervals, sets (in any order), matrices, equations
  (``x = 3`` = ``3``), symbolic simplification.
- :func:`extractive_match` is lighteval 0.13.0's ``extractive_match``
  (``Metrics.expr_gold_metric``, ``MultilingualExtractiveMatchMetric``), which runs
  lighteval's *own copy* of the extraction and comparison (not math-verify's): the
  copies differ (``docs/extraction.md``, "Math equivalence"), and this metric follows
  lighteval's. Its options reproduce lighteval's other math metrics' sample scoring:
  ``gold_targets=['latex', 'expr'], boxed_first=false, precision=6`` is the scorer of
  ``pass_at_k_math`` / ``avg_at_n_math``; ``gold_targets='latex'`` that of
  ``g_pass_at_k_latex``.

How the pairs are shared out to worker processes and timed is
:mod:`evalframe.metrics._math_equal`'s. Requires the ``math`` extra
(``pip install 'evalframe[math]'``).

>>> import polars as pl
>>> from evalframe import metrics as M
>>> df = pl.DataFrame({"pred": ["so $\\frac{1}{2}$", "\\boxed{50\\%}", "x = 3", "", None],
...                    "gold": ["0.5", "0.5", "3", "1", "2"]})
>>> df.with_columns(M.math_equal("pred", "gold").alias("math_equal"))
shape: (5, 3)
┌──────────────────┬──────┬────────────┐
│ pred             ┆ gold ┆ math_equal │
│ ---              ┆ ---  ┆ ---        │
│ str              ┆ str  ┆ f64        │
╞══════════════════╪══════╪════════════╡
│ so $\frac{1}{2}$ ┆ 0.5  ┆ 1.0        │
│ \boxed{50\%}     ┆ 0.5  ┆ 1.0        │
│ x = 3            ┆ 3    ┆ 1.0        │
│                  ┆ 1    ┆ 0.0        │
│ null             ┆ 2    ┆ null       │
└──────────────────┴──────┴────────────┘
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Literal

import polars as pl

from evalframe._expr import IntoExpr
from evalframe.metrics._math_equal import (
    check_options,
    check_workers,
    equivalent_series,
    require_math_verify,
)
from evalframe.metrics._pairs import max_over_pairs
from evalframe.metrics._text_rules import TEXT_SAMPLES, documented
from evalframe.metrics.registry import Reference, register

__all__ = ["extractive_match", "math_equal"]

Target = Literal["latex", "expr"]

LIGHTEVAL = "0.13.0"
MATH_VERIFY = "0.9.0"

_TARGET_RULE = (
    "gold_targets / prediction_targets: 'latex' (LaTeX environments: $...$, $$...$$, \\[...\\], "
    "\\(...\\), \\boxed{}, \\frac{a}{b}), 'expr' (numbers with thousands separators, "
    "percentages, currencies, and arithmetic like 3/4), or both"
)
_COMMON_RULES = (
    "prediction: one string or a list of samples; gold: one string or a list of alternatives; "
    "the score is the best (prediction, gold) pair",
    "a null prediction or gold (or a null element of a list) gives null; an empty list is an "
    "EvalframeError",
    "a text with nothing to parse (empty, garbage, no number) scores 0.0; "
    "evalframe.metrics._math_equal.math_equal_stats() counts such rows",
    "each parse and each comparison has `timeout` seconds (signal.alarm); a pair that times "
    "out scores 0.0 and is counted (a MathTimeoutWarning with the count and the first pair, "
    "and math_equal_stats()['timeouts']); worker processes also stop a pair at 6*timeout+5 s",
    "work is done once per distinct (prediction, gold) pair (bounded in-process caches), "
    "in one worker process per core above 256 distinct pairs",
    _TARGET_RULE,
)

#: The docstring sections both metrics share.
_SECTIONS = {
    "roles": """
        prediction
            ``str`` (a response or an answer), or ``list[str]`` for several samples.
        gold
            ``str``, or ``list[str]`` of alternatives.
        """,
    "workers": """
        workers
            Worker processes for large inputs (None: one per core; 0: none).
        """,
    "returns": """
        Returns
        -------
        pl.Expr
            ``Float64`` 1.0/0.0 per row.
        """,
}


def _best_pair(
    metric: str,
    prediction: IntoExpr,
    gold: IntoExpr,
    judge: Callable[[pl.DataFrame], pl.Series],
) -> pl.Expr:
    """1.0 when some (prediction, gold) pair of the row is judged equal, else 0.0.

    One kernel per batch: both sides are exploded, the pairs of each row formed by a
    join on the row, and ``judge`` (a frame ``row, pred, gold`` -> ``Boolean``) called
    once on all of them, so the distinct pairs of the whole batch are compared together.
    """
    return max_over_pairs(
        metric, prediction, gold,
        lambda value: [value.alias("pred")], lambda value: [value.alias("gold")],
        judge,
    )


@register(
    "math_equal",
    **TEXT_SAMPLES,
    reference=Reference(
        "math-verify", MATH_VERIFY,
        "math_verify.verify(parse(gold), parse(prediction), float_rounding=precision)",
    ),
    description="The prediction equals the gold by value (math-verify: fractions, "
    "percentages, units, intervals, sets, matrices, equations)",
    edge_rules=(
        *_COMMON_RULES,
        "verify is not symmetric: the gold is parsed and passed as the gold (an equation "
        "gold 'x = 3' keeps its right side only when the prediction is no equation)",
    ),
)
@documented(**_SECTIONS)
def math_equal(
    prediction: IntoExpr,
    gold: IntoExpr,
    *,
    gold_targets: Sequence[Target] = ("latex", "expr"),
    prediction_targets: Sequence[Target] = ("latex", "expr"),
    precision: int = 6,
    timeout: int | None = 5,
    workers: int | None = None,
) -> pl.Expr:
    """1.0 when the prediction equals the gold by value (math-verify), else 0.0.

    ``math_verify.verify(math_verify.parse(gold), math_verify.parse(prediction))`` per
    (prediction, gold) pair, the best pair kept.

    Parameters
    ----------
    {roles}
    gold_targets, prediction_targets
        What ``parse`` extracts: ``"latex"`` (``LatexExtractionConfig()``), ``"expr"``
        (``ExprExtractionConfig()``) or both (the default, math-verify's).
    precision
        Decimal places floats are rounded to (``verify``'s ``float_rounding``, 6).
    timeout
        Seconds per parse and per comparison (math-verify's ``parsing_timeout`` and
        ``timeout_seconds``, 5). A pair that times out scores 0.0 and is counted: a
        ``MathTimeoutWarning`` gives the number and the first pair.
    {workers}

    {returns}

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"pred": ["$[1, 2)$", "$\\\\{3, 1\\\\}$", "1,000 m", None],
    ...                    "gold": [["$x \\\\in [1,2)$"], ["$\\\\{1,3\\\\}$"], ["7", "1000"],
    ...                             ["2"]]})
    >>> df.with_columns(math_equal("pred", "gold").alias("eq"))["eq"].to_list()
    [1.0, 1.0, 1.0, None]
    """
    require_math_verify("math_equal")
    options = check_options(
        "math_equal", gold_targets=gold_targets, prediction_targets=prediction_targets,
        precision=precision, timeout=timeout,
    )
    check_workers("math_equal", workers)

    def judge(pairs: pl.DataFrame) -> pl.Series:
        return equivalent_series(
            pairs["pred"], pairs["gold"], options, workers=workers, metric="math_equal"
        )

    return _best_pair("math_equal", prediction, gold, judge)


@register(
    "extractive_match",
    **TEXT_SAMPLES,
    reference=Reference(
        "lighteval", LIGHTEVAL,
        "metrics.Metrics.expr_gold_metric (MultilingualExtractiveMatchMetric, with "
        "metrics/utils/extractive_match_utils.py and math_comparison.py)",
    ),
    description="Math extractive match as lighteval's: answers extracted (LaTeX / expressions) "
    "and compared by value, lighteval's own copy of the rules",
    edge_rules=(
        *_COMMON_RULES,
        "a gold nothing can be extracted from is compared as its stripped text with the "
        "prediction's extracted text; when any gold of a row is such, all its golds are",
    ),
    divergences=(
        "lighteval 0.13.0 pins latex2sympy2_extended 1.0.6 while math-verify 0.9.0 (the math "
        "extra) needs 1.11.0: the LaTeX normalisation and parsing are 1.11.0's; the "
        "conformance tests run lighteval's code on 1.11.0",
        "an exception inside lighteval's LaTeX normalisation ends lighteval's run; here that "
        "text counts as having nothing to extract",
        "lighteval's signal timeouts fail outside the main thread (every parse then fails); "
        "here such batches go to worker processes, where they work",
    ),
)
@documented(**_SECTIONS)
def extractive_match(
    prediction: IntoExpr,
    gold: IntoExpr,
    *,
    gold_targets: Sequence[Target] = ("expr",),
    prediction_targets: Sequence[Target] = ("latex", "expr"),
    boxed_first: bool = True,
    precision: int = 5,
    timeout: int | None = 5,
    workers: int | None = None,
) -> pl.Expr:
    """lighteval's math ``extractive_match``: 1.0 when an extracted prediction equals a gold.

    lighteval 0.13.0 ``MultilingualExtractiveMatchMetric.compute`` (English,
    ``fallback_mode="first_match"``, ``extraction_mode="any_match"``,
    ``aggregation_function=max``), with lighteval's own extraction and comparison
    (:mod:`evalframe.extract.lighteval_math`). The defaults are ``Metrics.expr_gold_metric``:
    golds extracted as plain expressions, predictions as expressions and LaTeX with a
    ``\\boxed{}`` first, floats compared to 5 decimal places.

    Parameters
    ----------
    {roles}
    gold_targets, prediction_targets
        ``"latex"`` (``LatexExtractionConfig``), ``"expr"`` (``ExprExtractionConfig``) or
        both.
    boxed_first
        The prediction's LaTeX config matches ``\\boxed{}`` first
        (``boxed_match_priority=0``); false: lighteval's default priority 55 (after
        ``final answer is``). The gold's LaTeX config always has the default.
    precision
        Decimal places floats are compared to (5 in ``expr_gold_metric``, 6 in
        ``pass_at_k_math``).
    timeout
        Seconds per parse and per comparison (lighteval's ``timeout_seconds``, 5); a pair
        that times out scores 0.0 and is counted (``MathTimeoutWarning``).
    {workers}

    {returns}

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"pred": ["The answer is \\\\boxed{12}", "I think 3/4", "$\\\\pi$", "",
    ...                             None],
    ...                    "gold": ["12", "0.75", "3.14159", "1", "2"]})
    >>> df.with_columns(extractive_match("pred", "gold").alias("em"))["em"].to_list()
    [1.0, 1.0, 0.0, 0.0, None]
    """
    require_math_verify("extractive_match")
    options = check_options(
        "extractive_match", gold_targets=gold_targets, prediction_targets=prediction_targets,
        precision=precision, timeout=timeout, flavour="lighteval", boxed_first=boxed_first,
    )
    check_workers("extractive_match", workers)
    as_text = replace(options, gold_as_text=True)

    def judge(pairs: pl.DataFrame) -> pl.Series:
        from evalframe.extract.lighteval_math import gold_found

        # lighteval: when a gold of the row yields nothing, every gold is compared as text
        flags = pairs.select(
            (~gold_found(pl.col("gold"), options.gold_targets)).any().over("row").alias("t")
        )["t"].fill_null(False)
        gold_parsed = pairs["gold"].set(flags, None)
        gold_text = pairs["gold"].set(~flags, None)
        parsed = equivalent_series(
            pairs["pred"], gold_parsed, options, workers=workers, metric="extractive_match"
        )
        text = equivalent_series(
            pairs["pred"], gold_text, as_text, workers=workers, metric="extractive_match"
        )
        return parsed.fill_null(text)

    return _best_pair("extractive_match", prediction, gold, judge)
