"""DROP exact match and F1, as lm-evaluation-harness scores them.

Reference: ``lm_eval/tasks/drop/utils.py`` of lm-eval 0.4.13, ``process_results``
and ``get_metrics`` with their helpers. How the roles map onto what the harness
receives:

- ``prediction``: the harness calls ``process_results(doc, results)`` with
  ``results`` the list of generated strings, and passes that list as the
  predicted spans. A ``str`` prediction is one span (``[prediction]``, the usual
  single generation); a ``list[str]`` prediction is the list of spans.
- ``gold``: the harness's ``doc["answers"]`` is a list of alternatives, each a
  tuple of spans. A ``str`` gold is one alternative of one span (``[(gold,)]``); a
  ``list[str]`` gold is alternatives of one span each (``[(g,) for g in gold]``);
  a ``list[list[str]]`` gold is alternatives x spans (``[tuple(a) for a in gold]``).

Computation: one batched kernel (:mod:`evalframe.metrics._drop_scoring`) scores
both metrics at once, so requesting ``drop_em`` and ``drop_f1`` together costs one
pass. Within a batch, every distinct token is normalised once with
:func:`evalframe.normalize.drop_normalize`, spans and pairs of spans are scored
as whole arrays, and only alternatives with several spans on both sides run
``scipy.optimize.linear_sum_assignment``, one call each. The row's score is the
maximum over its alternatives.
"""

from __future__ import annotations

import polars as pl

from evalframe._expr import IntoExpr, RowCheck, describe, guard, parse_into_expr, shared_kernel
from evalframe.metrics._drop_scoring import INVALID, score_batch, unpack_em, unpack_f1
from evalframe.metrics.registry import Reference, register

__all__ = ["drop_em", "drop_f1"]

_REFERENCE = Reference(
    "lm-eval", "0.4.13", "lm_eval/tasks/drop/utils.py: process_results, get_metrics"
)
_DTYPES = {"prediction": ("str", "list[str]"), "gold": ("str", "list[str]", "list[list[str]]")}

_EDGE_RULES = (
    "A str prediction is one span; a list[str] prediction is several spans (the harness's "
    "`results` list). A str gold is one alternative of one span; list[str] is alternatives of "
    "one span each; list[list[str]] is alternatives x spans (the harness's doc['answers']).",
    "Normalisation is the harness's `_normalize`: Python str.lower, tokens cut on ' ' and '-' "
    "only, ASCII punctuation removed from non-numbers, numbers rewritten as str(float(token)) "
    "('1,000', '1000', '1_000', '1e3', '١٠٠٠' -> '1000.0'; 'Infinity' -> 'inf'; "
    "'NaN' -> 'nan'; '0.00001' -> '1e-05'), a/an/the removed, whitespace collapsed.",
    "A number is whatever Python's float() accepts: surrounding whitespace (but not "
    "\\x1c-\\x1f), one underscore between digits, any Unicode decimal digits, exponents, "
    "inf/infinity/nan in any case; '-' never occurs inside a token since it separates tokens.",
    "Exact match per alternative: the normalised predicted and gold spans form the same set "
    "and have the same count (['4', '4'] vs '4': 0.0; ['4'] vs [['4', '4']]: 0.0).",
    "F1 per alternative: spans are bags (sets) of words; each gold span is aligned one-to-one "
    "with a predicted span by optimal assignment (scipy linear_sum_assignment) of span F1, "
    "scored 0 unless the gold span has no number or shares a number (as text, after "
    "normalisation) with the predicted span; the mean over max(#gold, #predicted) spans, "
    "unaligned spans counting 0, rounded to 2 decimals as numpy rounds (x*100 rounded half "
    "to even, /100; so 0.125 -> 0.12).",
    "An empty bag has precision (or recall) 1.0, so an empty predicted span against an "
    "empty gold span has F1 1.0; a prediction with no spans scores 0.0.",
    "Gold alternatives whose first span is blank (empty or only whitespace, str.strip()) "
    "are skipped; the row's score is the maximum over the other alternatives, 0.0 when none "
    "is left (or gold is an empty list).",
    "A null prediction or gold, or a null span or alternative inside them, gives a null score.",
    "A gold alternative with no spans ([]) is invalid (the harness fails with IndexError): "
    "EvalframeError.",
)

_DIVERGENCES = (
    "lighteval's harness_compatibility/drop.py tests the span counts as len(gold) == len(gold) "
    "(always true), so it scores ['4', '4'] against '4' as em 1.0; evalframe follows "
    "lm-evaluation-harness (set equal and len(pred) == len(gold)): em 0.0, f1 0.5; likewise "
    "['4'] against [['4', '4']]: em 0.0 (lighteval 1.0).",
)


_HUNDREDTHS = [i / 100 for i in range(101)]


def _drop_score(prediction: IntoExpr, gold: IntoExpr, metric: str) -> pl.Expr:
    pred_input = parse_into_expr(prediction)
    gold_input = parse_into_expr(gold)
    # One kernel run for both metrics when they are requested together.
    packed = shared_kernel(
        pl.struct(pred_input.alias("prediction"), gold_input.alias("gold")), score_batch, pl.Int64
    )
    check = RowCheck(
        invalid=lambda values: values == INVALID,
        what="a gold alternative with no spans",
        expected=f"every alternative in gold column {describe(gold)} to hold at least one span",
        show=(("gold", gold_input),),
    )
    checked = guard(metric, packed, [check], dtype=pl.Int64)
    hundredths = unpack_em(checked) if metric == "drop_em" else unpack_f1(checked)
    # i / 100 is the exact quotient numpy's round(x, 2) gives (polars would multiply
    # by the inverse of 100 instead of dividing).
    score = hundredths.replace_strict(range(101), _HUNDREDTHS, default=None)
    return score.cast(pl.Float64).alias(metric)


def _register(name: str, description: str, divergences: tuple[str, ...] = ()):
    """Register a DROP metric: the harness's roles, reference and edge rules."""
    return register(
        name,
        roles=("prediction", "gold"),
        reference=_REFERENCE,
        description=description,
        edge_rules=_EDGE_RULES,
        dtypes=_DTYPES,
        divergences=divergences,
    )


@_register(
    "drop_em",
    "DROP exact match: normalised span sets (and counts) equal, max over answers",
    _DIVERGENCES,
)
def drop_em(prediction: IntoExpr, gold: IntoExpr) -> pl.Expr:
    """DROP exact match, as lm-evaluation-harness's ``process_results`` scores ``em``.

    1.0 when, for some gold alternative (one not skipped for a blank first span),
    the normalised predicted spans and gold spans form the same set and have the
    same count: ``set(pred) == set(gold) and len(pred) == len(gold)``.

    Parameters
    ----------
    prediction
        Column name or expression: ``str`` (one span) or ``list[str]`` (spans).
    gold
        Column name or expression: ``str`` (one answer), ``list[str]`` (alternative
        answers of one span each) or ``list[list[str]]`` (alternatives x spans).

    Returns
    -------
    pl.Expr
        ``Float64`` per row: 1.0 or 0.0; null where an input (or a span in it) is null.

    Notes
    -----
    Reference: lm-eval 0.4.13, ``lm_eval/tasks/drop/utils.py`` (``process_results``,
    ``get_metrics``, ``_answer_to_bags``, ``_normalize``). Normalisation is
    :func:`evalframe.normalize.drop_normalize`.

    Examples
    --------
    >>> import polars as pl
    >>> from evalframe import metrics as M
    >>> df = pl.DataFrame({
    ...     "pred": [["1,000"], ["4", "4"], ["Al", "Bo"], ["the yard"], None],
    ...     "gold": [[["1000"]], [["4"]], [["al"], ["bo", "Al"]], [["yard line"]],
    ...              [["x"]]],
    ... })
    >>> df.with_columns(M.drop_em("pred", "gold").alias("drop_em"))
    shape: (5, 3)
    ┌──────────────┬────────────────────────┬─────────┐
    │ pred         ┆ gold                   ┆ drop_em │
    │ ---          ┆ ---                    ┆ ---     │
    │ list[str]    ┆ list[list[str]]        ┆ f64     │
    ╞══════════════╪════════════════════════╪═════════╡
    │ ["1,000"]    ┆ [["1000"]]             ┆ 1.0     │
    │ ["4", "4"]   ┆ [["4"]]                ┆ 0.0     │
    │ ["Al", "Bo"] ┆ [["al"], ["bo", "Al"]] ┆ 1.0     │
    │ ["the yard"] ┆ [["yard line"]]        ┆ 0.0     │
    │ null         ┆ [["x"]]                ┆ null    │
    └──────────────┴────────────────────────┴─────────┘
    """
    return _drop_score(prediction, gold, "drop_em")


@_register(
    "drop_f1", "DROP F1: bag-of-words F1 of optimally aligned spans with number matching"
)
def drop_f1(prediction: IntoExpr, gold: IntoExpr) -> pl.Expr:
    """DROP F1, as lm-evaluation-harness's ``process_results`` scores ``f1``.

    Each span is a bag (set) of normalised words. For each gold alternative, the
    gold spans are aligned one-to-one with the predicted spans by an optimal
    assignment (``scipy.optimize.linear_sum_assignment``) of span F1, where a pair
    scores 0 unless the gold span has no number or shares a number with the
    predicted span. The alternative's F1 is the mean over ``max(#gold, #predicted)``
    spans (unaligned ones count 0), rounded to 2 decimals as numpy rounds
    (``rint(x * 100) / 100``); the row's F1 is the maximum over alternatives.

    Parameters
    ----------
    prediction, gold
        As for :func:`drop_em`.

    Returns
    -------
    pl.Expr
        ``Float64`` per row, a multiple of 0.01 in [0, 1]; null where an input (or a
        span in it) is null.

    Notes
    -----
    Reference: lm-eval 0.4.13, ``lm_eval/tasks/drop/utils.py`` (``process_results``,
    ``get_metrics``, ``_align_bags``, ``_compute_f1``, ``_match_numbers_if_present``).
    Numbers match as normalised text: ``"5"`` and ``"5.0"`` both normalise to
    ``"5.0"``, but a word split off inside a token (``"5\\t6"``) is not rewritten.
    Only alternatives with several spans on both sides run the assignment; with
    one span on either side the best pair is taken, which is what the assignment
    picks.

    Examples
    --------
    >>> import polars as pl
    >>> from evalframe import metrics as M
    >>> df = pl.DataFrame({
    ...     "pred": [["5 yards"], ["4", "4"], ["Al", "Bo"], ["the yard", "x"], None],
    ...     "gold": [[["5.0"]], [["4"]], [["bo", "Al"]], [["yard line"]], [["x"]]],
    ... })
    >>> df.with_columns(M.drop_f1("pred", "gold").alias("drop_f1"))
    shape: (5, 3)
    ┌───────────────────┬─────────────────┬─────────┐
    │ pred              ┆ gold            ┆ drop_f1 │
    │ ---               ┆ ---             ┆ ---     │
    │ list[str]         ┆ list[list[str]] ┆ f64     │
    ╞═══════════════════╪═════════════════╪═════════╡
    │ ["5 yards"]       ┆ [["5.0"]]       ┆ 0.67    │
    │ ["4", "4"]        ┆ [["4"]]         ┆ 0.5     │
    │ ["Al", "Bo"]      ┆ [["bo", "Al"]]  ┆ 1.0     │
    │ ["the yard", "x"] ┆ [["yard line"]] ┆ 0.33    │
    │ null              ┆ [["x"]]         ┆ null    │
    └───────────────────┴─────────────────┴─────────┘

    (``"5"`` and ``"5.0"`` are the same number; the unaligned ``"x"`` counts 0.)
    """
    return _drop_score(prediction, gold, "drop_f1")
