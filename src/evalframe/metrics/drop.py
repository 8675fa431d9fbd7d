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

Computation, vectorized over the whole table: every span is normalised with
:func:`evalframe.normalize.drop_normalize`; the rows are unrolled to one entry per
scored gold alternative; exact match and the single-span F1 (one predicted span
against a one-span alternative, the common case) are expressions; only the
alternatives with several spans on either side go to a batched kernel that
builds their score matrices with expressions and runs
``scipy.optimize.linear_sum_assignment`` once per such alternative. The row's
score is the maximum over its alternatives.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl
from scipy.optimize import linear_sum_assignment

from evalframe._expr import IntoExpr, RowCheck, describe, guard, parse_into_expr
from evalframe.errors import EvalframeError
from evalframe.metrics.registry import Reference, register
from evalframe.normalize._python_text import whitespace_characters
from evalframe.normalize.drop import _let, drop_is_number, drop_normalize

__all__ = ["drop_em", "drop_f1"]

_REFERENCE = Reference(
    "lm-eval", "0.4.13", "lm_eval/tasks/drop/utils.py: process_results, get_metrics"
)
_DTYPES = {"prediction": ("str", "list[str]"), "gold": ("str", "list[str]", "list[list[str]]")}
_SPANS = pl.List(pl.String)

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


def _as_spans(prediction: pl.Expr) -> pl.Expr:
    """``str`` -> ``[str]``; ``list[str]`` unchanged (a null list stays null)."""
    return pl.concat_list([prediction])


def _as_alternatives(gold: pl.Expr) -> pl.Expr:
    """``str`` -> ``[[str]]``; ``list[str]`` -> ``[[a], [b]]``; ``list[list[str]]`` unchanged."""
    return gold.map_batches(_alternatives_of, return_dtype=pl.List(_SPANS), is_elementwise=True)


def _alternatives_of(gold: pl.Series) -> pl.Series:
    # A dtype dispatch on the whole column (no per-row work): nested input passes through.
    if gold.dtype == pl.List(_SPANS):
        return gold
    if gold.dtype in (pl.String, pl.Null):
        gold = gold.cast(pl.String).to_frame("g").select(pl.concat_list("g")).to_series()
    if gold.dtype == _SPANS:
        return gold.to_frame("g").select(
            pl.col("g").list.eval(pl.concat_list([pl.element()]))
        ).to_series()
    raise EvalframeError(
        f"gold has dtype {gold.dtype}; expected str, list[str] or list[list[str]]"
    )


def _has_null_span(spans: pl.Expr) -> pl.Expr:
    return spans.list.drop_nulls().list.len() != spans.list.len()


def _bag(normalized: pl.Expr) -> pl.Expr:
    """``set(normalized.split())`` of a normalised span (single spaces only) as a list."""
    return normalized.str.split(" ").list.unique().list.filter(pl.element().str.len_bytes() > 0)


def _bag_score(predicted_bag: pl.Expr, gold_bag: pl.Expr) -> pl.Expr:
    """The harness's span score: F1 of two word bags, 0 when the numbers do not match."""
    return _let({"p": predicted_bag, "g": gold_bag}, _bag_score_of)


def _bag_score_of(p: pl.Expr, g: pl.Expr) -> pl.Expr:
    common = p.list.set_intersection(g).list.len()
    precision = pl.when(p.list.len() == 0).then(1.0).otherwise(common / p.list.len())
    recall = pl.when(g.list.len() == 0).then(1.0).otherwise(common / g.list.len())
    f1 = (
        pl.when((precision == 0.0) & (recall == 0.0))
        .then(0.0)
        .otherwise(2.0 * precision * recall / (precision + recall))
    )
    gold_numbers = g.list.filter(drop_is_number(pl.element()))
    predicted_numbers = p.list.filter(drop_is_number(pl.element()))
    numbers_match = (gold_numbers.list.len() == 0) | (
        gold_numbers.list.set_intersection(predicted_numbers).list.len() > 0
    )
    return pl.when(numbers_match).then(f1).otherwise(0.0)


def _hundredths(value: pl.Expr) -> pl.Expr:
    """numpy's ``round(x, 2)`` is ``rint(x * 100) / 100``: this is the ``rint(x * 100)``."""
    return (value * 100.0).round(0, mode="half_to_even").cast(pl.Int64)


def _multi_span_kernel(series: Sequence[pl.Series]) -> pl.Series:
    """Mean aligned F1 of the alternatives with several spans on either side.

    ``series`` are the normalised predicted spans, the normalised gold spans and
    a mask of the entries to score; other entries get null. The score matrices
    are built with expressions over all masked entries at once; the Python loop
    only runs the assignment, one problem per masked entry.
    """
    predicted, gold, mask = series
    out = np.full(len(mask), np.nan)
    wanted = mask.fill_null(False) & predicted.is_not_null() & gold.is_not_null()
    entries = np.flatnonzero(wanted.to_numpy())
    if entries.size:
        frame = pl.DataFrame(
            {"entry": np.arange(entries.size), "p": predicted.gather(entries),
             "g": gold.gather(entries)}
        )
        sizes = frame.select(pl.col("g").list.len(), pl.col("p").list.len())
        n_gold = sizes["g"].to_numpy()
        n_pred = sizes["p"].to_numpy()
        # One row per (entry, gold span, predicted span), in row-major matrix order.
        pairs = (
            frame.filter(pl.col("p").list.len() > 0)
            .explode("g")
            .explode("p")
            .select(_bag_score(_bag(pl.col("p")), _bag(pl.col("g"))).fill_null(0.0))
        ).to_series().to_numpy()
        start = 0
        for position, entry in enumerate(entries):
            rows, columns = int(n_gold[position]), int(n_pred[position])
            aligned = np.zeros(max(rows, columns))
            if columns:
                matrix = pairs[start : start + rows * columns].reshape(rows, columns)
                start += rows * columns
                gold_index, pred_index = linear_sum_assignment(-matrix)
                aligned[gold_index] = matrix[gold_index, pred_index]
            out[entry] = np.mean(aligned)
    values = pl.Series(out, dtype=pl.Float64)
    return values.set(~wanted, None)


def _segment_max(hundredths: pl.Expr, owner: pl.Expr, counts: pl.Expr) -> pl.Expr:
    """Per frame row, the maximum of its run of scores (0 for an empty run), in hundredths.

    ``hundredths`` (0..100) has one entry per unrolled alternative, ``owner`` the
    frame row of each (non-decreasing), ``counts`` the run length per frame row.
    Sorting ``owner * 1000 + hundredths`` puts each run's maximum last.
    """
    ordered = (owner * 1000 + hundredths).sort().append(pl.lit(0, dtype=pl.Int64))
    last = pl.when(counts > 0).then(counts.cum_sum() - 1).otherwise(counts.sum())
    return ordered.gather(last) % 1000


def _normalize_unique(text: pl.Expr) -> pl.Expr:
    """:func:`drop_normalize` of each distinct text once, mapped back onto every row."""
    distinct = text.drop_nulls().unique(maintain_order=True)
    return text.replace_strict(
        distinct, drop_normalize(distinct), default=None, return_dtype=pl.String
    )


def _same_spans(p: pl.Expr, g: pl.Expr) -> pl.Expr:
    return (g.list.len() == p.list.len()) & (g.list.set_symmetric_difference(p).list.len() == 0)


def _em_of(single: pl.Expr, p1: pl.Expr, g1: pl.Expr, p: pl.Expr, g: pl.Expr) -> pl.Expr:
    same_spans = _same_spans(p, g)
    return pl.when(single).then(p1 == g1).otherwise(same_spans).cast(pl.Int64) * 100


def _f1_of(single: pl.Expr, p1: pl.Expr, g1: pl.Expr, p: pl.Expr, g: pl.Expr) -> pl.Expr:
    single_score = _bag_score(_bag(p1), _bag(g1))
    multi_score = pl.map_batches(
        [p, g, ~single], _multi_span_kernel, return_dtype=pl.Float64, is_elementwise=True
    )
    return _hundredths(pl.when(single).then(single_score).otherwise(multi_score))


def _drop_score(prediction: IntoExpr, gold: IntoExpr, metric: str) -> pl.Expr:
    pred_input = parse_into_expr(prediction)
    gold_input = parse_into_expr(gold)
    spans = _as_spans(pred_input)
    alternatives = _as_alternatives(gold_input)

    null_row = (
        spans.is_null()
        | _has_null_span(spans)
        | alternatives.is_null()
        | alternatives.list.eval(
            pl.element().is_null() | _has_null_span(pl.element())
        ).list.any()
    )
    empty_alternative = ~null_row & alternatives.list.eval(pl.element().list.len() == 0).list.any()
    blank = whitespace_characters()
    # Null rows are nulled at the end; empty alternatives are reported by the guard.
    kept = alternatives.list.filter(
        (pl.element().list.len() > 0)
        & (pl.element().list.first().str.strip_chars(blank).str.len_bytes() > 0)
    )
    counts = kept.list.len().fill_null(0)

    # One entry per scored alternative: its frame row, gold spans and predicted spans.
    owner = pl.int_range(pl.len(), dtype=pl.Int64).repeat_by(counts).explode(
        empty_as_null=False, keep_nulls=False
    )
    gold_spans = kept.explode(empty_as_null=False, keep_nulls=False)
    single = ((spans.list.len().gather(owner) == 1) & (gold_spans.list.len() == 1)).fill_null(
        False
    )
    # One span on both sides (most entries): normalise each distinct text once.
    pred_first = _normalize_unique(spans.list.first()).gather(owner)
    gold_first = _normalize_unique(gold_spans.list.first())
    # Several spans on either side: whole span lists, empty elsewhere (which costs nothing).
    none = pl.lit([], dtype=_SPANS)
    pred_multi = (
        pl.when(~single).then(spans.gather(owner)).otherwise(none)
        .list.eval(drop_normalize(pl.element()))
    )
    gold_multi = (
        pl.when(~single).then(gold_spans).otherwise(none).list.eval(drop_normalize(pl.element()))
    )
    per_alternative = _let(
        {"single": single, "p1": pred_first, "g1": gold_first, "p": pred_multi, "g": gold_multi},
        _em_of if metric == "drop_em" else _f1_of,
    )
    best = _segment_max(per_alternative.fill_null(0), owner, counts)
    # Exact quotients (polars divides by a scalar as a multiplication by its inverse).
    exact = best.replace_strict(list(range(101)), [i / 100 for i in range(101)])
    score = pl.when(null_row).then(None).otherwise(exact)
    check = RowCheck(
        invalid=empty_alternative,
        what="a gold alternative with no spans",
        expected=f"every alternative in gold column {describe(gold)} to hold at least one span",
        show=(("gold", gold_input),),
    )
    return guard(metric, score.cast(pl.Float64), [check]).alias(metric)


@register(
    "drop_em",
    roles=("prediction", "gold"),
    reference=_REFERENCE,
    description="DROP exact match: normalised span sets (and counts) equal, max over answers",
    edge_rules=_EDGE_RULES,
    dtypes=_DTYPES,
    divergences=_DIVERGENCES,
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
    :func:`evalframe.normalize.drop_normalize`. Alternatives whose first span is
    blank are skipped; no alternative left scores 0.0. A gold alternative with no
    spans raises :class:`evalframe.EvalframeError`.

    Divergence from lighteval: its ``harness_compatibility/drop.py`` compares
    ``len(gold) == len(gold)``, so ``["4", "4"]`` against ``"4"`` scores 1.0 there;
    here (as in lm-evaluation-harness) it is 0.0, and so is ``["4"]`` against
    ``[["4", "4"]]``.

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


@register(
    "drop_f1",
    roles=("prediction", "gold"),
    reference=_REFERENCE,
    description="DROP F1: bag-of-words F1 of optimally aligned spans with number matching",
    edge_rules=_EDGE_RULES,
    dtypes=_DTYPES,
    divergences=(),
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
    prediction
        Column name or expression: ``str`` (one span) or ``list[str]`` (spans).
    gold
        Column name or expression: ``str`` (one answer), ``list[str]`` (alternative
        answers of one span each) or ``list[list[str]]`` (alternatives x spans).

    Returns
    -------
    pl.Expr
        ``Float64`` per row in [0, 1]; null where an input (or a span in it) is null.

    Notes
    -----
    Reference: lm-eval 0.4.13, ``lm_eval/tasks/drop/utils.py`` (``process_results``,
    ``get_metrics``, ``_align_bags``, ``_compute_f1``, ``_match_numbers_if_present``).
    Numbers match as normalised text: ``"5"`` and ``"5.0"`` both normalise to
    ``"5.0"``, but a word split off inside a token (``"5\\t6"``) is not rewritten.
    Only alternatives with several spans on either side run the assignment kernel;
    the rest is vectorized. Alternatives whose first span is blank are skipped.

    Examples
    --------
    >>> import polars as pl
    >>> from evalframe import metrics as M
    >>> df = pl.DataFrame({
    ...     "pred": [["1,000"], ["4", "4"], ["Al", "Bo"], ["the yard"], None],
    ...     "gold": [[["1000"]], [["4"]], [["al"], ["bo", "Al"]], [["yard line"]],
    ...              [["x"]]],
    ... })
    >>> df.with_columns(M.drop_f1("pred", "gold").alias("drop_f1"))
    shape: (5, 3)
    ┌──────────────┬────────────────────────┬─────────┐
    │ pred         ┆ gold                   ┆ drop_f1 │
    │ ---          ┆ ---                    ┆ ---     │
    │ list[str]    ┆ list[list[str]]        ┆ f64     │
    ╞══════════════╪════════════════════════╪═════════╡
    │ ["1,000"]    ┆ [["1000"]]             ┆ 1.0     │
    │ ["4", "4"]   ┆ [["4"]]                ┆ 0.5     │
    │ ["Al", "Bo"] ┆ [["al"], ["bo", "Al"]] ┆ 1.0     │
    │ ["the yard"] ┆ [["yard line"]]        ┆ 0.67    │
    │ null         ┆ [["x"]]                ┆ null    │
    └──────────────┴────────────────────────┴─────────┘
    """
    return _drop_score(prediction, gold, "drop_f1")
