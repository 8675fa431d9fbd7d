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

import numpy as np
import polars as pl
from scipy.optimize import linear_sum_assignment

from evalframe._expr import (
    IntoExpr,
    RowCheck,
    describe,
    guard,
    parse_into_expr,
    shared_kernel,
)
from evalframe.errors import EvalframeError
from evalframe.metrics.registry import Reference, register
from evalframe.normalize._python_text import whitespace_characters
from evalframe.normalize.drop import drop_is_number, drop_normalize

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


def _span_lists(prediction: pl.Series) -> pl.Series:
    """``str`` -> ``[str]``; ``list[str]`` unchanged (a null stays null)."""
    if prediction.dtype in (pl.String, pl.Null):
        return prediction.cast(pl.String).to_frame("p").select(pl.concat_list("p")).to_series()
    if prediction.dtype in (_SPANS, pl.List(pl.Null)):
        return prediction.cast(_SPANS)
    raise EvalframeError(f"prediction has dtype {prediction.dtype}; expected str or list[str]")


def _alternative_lists(gold: pl.Series) -> pl.Series:
    """``str`` -> ``[[str]]``; ``list[str]`` -> ``[[a], [b]]``; ``list[list[str]]`` unchanged."""
    if gold.dtype in (pl.List(_SPANS), pl.List(pl.List(pl.Null))):
        return gold.cast(pl.List(_SPANS))
    if gold.dtype in (pl.String, pl.Null):
        gold = gold.cast(pl.String).to_frame("g").select(pl.concat_list("g")).to_series()
    if gold.dtype in (_SPANS, pl.List(pl.Null)):
        return gold.cast(_SPANS).to_frame("g").select(
            pl.col("g").list.eval(pl.concat_list([pl.element()]))
        ).to_series()
    raise EvalframeError(
        f"gold has dtype {gold.dtype}; expected str, list[str] or list[list[str]]"
    )


def _has_null_span(spans: pl.Expr) -> pl.Expr:
    return spans.list.drop_nulls().list.len() != spans.list.len()


def _lexicon(normalized: pl.Series) -> pl.DataFrame:
    """Per distinct normalised span: its bag of words and the words in it that are numbers.

    The bag is the harness's ``set(span.split())``; a normalised span has single
    spaces only, so splitting on ``" "`` and dropping empty words is the same.
    Whether a word is a number is decided once per distinct word.
    """
    spans = normalized.unique().to_frame("norm")
    bags = spans.with_columns(
        bag=pl.col("norm").str.split(" ").list.filter(pl.element() != "").list.unique()
    )
    words = bags.get_column("bag").explode(empty_as_null=False, keep_nulls=False).unique()
    numbers = words.filter(words.to_frame("w").select(drop_is_number("w")).to_series())
    return bags.with_columns(
        numbers=pl.col("bag").list.set_intersection(pl.lit(numbers.implode()))
    )


def _bag_f1(p: pl.Expr, g: pl.Expr, p_numbers: pl.Expr, g_numbers: pl.Expr) -> pl.Expr:
    """The harness's span score: F1 of two word bags, 0 when the numbers do not match."""
    common = p.list.set_intersection(g).list.len()
    precision = pl.when(p.list.len() == 0).then(1.0).otherwise(common / p.list.len())
    recall = pl.when(g.list.len() == 0).then(1.0).otherwise(common / g.list.len())
    f1 = (
        pl.when((precision == 0.0) & (recall == 0.0))
        .then(0.0)
        .otherwise(2.0 * precision * recall / (precision + recall))
    )
    numbers_match = (g_numbers.list.len() == 0) | (
        g_numbers.list.set_intersection(p_numbers).list.len() > 0
    )
    return pl.when(numbers_match).then(f1).otherwise(0.0)


def _aligned_means(
    scores: np.ndarray, n_gold: np.ndarray, n_pred: np.ndarray
) -> np.ndarray:
    """Mean aligned span F1 per alternative from its row-major pair scores.

    ``scores`` holds each alternative's ``n_gold x n_pred`` matrix, one after the
    other. The assignment (``linear_sum_assignment``) runs once per alternative:
    it is the only step not vectorized, and it only sees alternatives with several
    spans on either side.
    """
    out = np.zeros(n_gold.size)
    start = 0
    for position, (rows, columns) in enumerate(zip(n_gold.tolist(), n_pred.tolist(), strict=True)):
        aligned = np.zeros(max(rows, columns))
        if columns:
            matrix = scores[start : start + rows * columns].reshape(rows, columns)
            start += rows * columns
            gold_index, pred_index = linear_sum_assignment(-matrix)
            aligned[gold_index] = matrix[gold_index, pred_index]
        out[position] = np.mean(aligned)
    return out


def _score_batch(batch: pl.Series) -> pl.Series:
    """DROP em and f1 of a batch of rows (a struct of prediction and gold).

    All spans of the batch are normalised once (each distinct text once), both
    metrics come from the same pass, and every step is a whole-table operation
    but the assignment of multi-span alternatives.
    """
    inputs = batch.struct.unnest()
    rows = pl.DataFrame(
        {
            "p": _span_lists(inputs.get_column("prediction")),
            "g": _alternative_lists(inputs.get_column("gold")),
        }
    ).with_row_index("row")
    status = rows.select(
        null=pl.col("p").is_null()
        | _has_null_span(pl.col("p"))
        | pl.col("g").is_null()
        | pl.col("g").list.eval(pl.element().is_null() | _has_null_span(pl.element())).list.any(),
    ).with_columns(
        invalid=~pl.col("null")
        & rows.select(pl.col("g").list.eval(pl.element().list.len() == 0).list.any()).to_series()
    )
    valid = rows.filter(~(status.get_column("null") | status.get_column("invalid")))

    blank = whitespace_characters()
    # One entry per scored alternative (first span not blank), numbered in row order.
    entries = (
        valid.select("row", "g")
        .explode("g", empty_as_null=False, keep_nulls=False)
        .filter(pl.col("g").list.first().str.strip_chars(blank) != "")
        .with_row_index("entry")
    )
    gold = entries.select(
        "entry", "row", pl.int_ranges(pl.col("g").list.len()).alias("gi"), "g"
    ).explode("gi", "g")
    predicted = valid.select(
        "row", pl.int_ranges(pl.col("p").list.len()).alias("pi"), "p"
    ).explode("pi", "p", empty_as_null=False, keep_nulls=False)

    texts = pl.concat([gold.get_column("g"), predicted.get_column("p")]).unique()
    normalized_texts = texts.to_frame("t").select(drop_normalize("t")).to_series()

    def normalized(column: str) -> pl.Expr:
        return pl.col(column).replace_strict(texts, normalized_texts, return_dtype=pl.String)

    gold = gold.with_columns(normalized("g"))
    predicted = predicted.with_columns(normalized("p"))
    lexicon = _lexicon(pl.concat([gold.get_column("g"), predicted.get_column("p")]))

    n_pred = valid.select("row", n_pred=pl.col("p").list.len())
    entries = entries.select(
        "entry", "row", n_gold=pl.col("g").list.len()
    ).join(n_pred, on="row", how="left", maintain_order="left")
    single = (pl.col("n_gold") == 1) & (pl.col("n_pred") == 1)

    # Every (gold span, predicted span) pair of an alternative, in row-major matrix order.
    pairs = (
        gold.join(predicted, on="row", how="inner")
        .join(lexicon.rename(lambda c: f"g_{c}"), left_on="g", right_on="g_norm", how="left")
        .join(lexicon.rename(lambda c: f"p_{c}"), left_on="p", right_on="p_norm", how="left")
        .sort("entry", "gi", "pi")
        .with_columns(
            f1=_bag_f1(
                pl.col("p_bag"), pl.col("g_bag"), pl.col("p_numbers"), pl.col("g_numbers")
            )
        )
    )
    single_pairs = entries.filter(single).join(
        pairs.select("entry", same=pl.col("p") == pl.col("g"), f1="f1"),
        on="entry",
        how="left",
        maintain_order="left",
    )
    multi = entries.filter(~single)
    multi_pairs = pairs.join(multi.select("entry"), on="entry", how="semi", maintain_order="left")
    multi_f1 = _aligned_means(
        multi_pairs.get_column("f1").to_numpy(),
        multi.get_column("n_gold").to_numpy(),
        multi.get_column("n_pred").to_numpy(),
    )
    # Exact match of several spans: same count and the same set of normalised spans.
    predicted_sets = predicted.group_by("row").agg(p_set=pl.col("p").unique().sort())
    gold_sets = gold.join(multi.select("entry"), on="entry", how="semi").group_by("entry").agg(
        g_set=pl.col("g").unique().sort()
    )
    multi_em = (
        multi.join(predicted_sets, on="row", how="left", maintain_order="left")
        .join(gold_sets, on="entry", how="left", maintain_order="left")
        .select(
            (pl.col("n_gold") == pl.col("n_pred")) & (pl.col("p_set") == pl.col("g_set"))
        )
        .to_series()
        .fill_null(False)
    )

    scored = pl.concat(
        [
            single_pairs.select("row", em=pl.col("same"), f1="f1"),
            multi.select("row").with_columns(em=multi_em, f1=pl.Series(multi_f1)),
        ]
    )
    # numpy's round(x, 2) is rint(x * 100) / 100; the maximum over alternatives is
    # taken on those hundredths, and i / 100 is the exact quotient Python computes.
    best = scored.group_by("row").agg(
        em=pl.col("em").cast(pl.Int64).max() * 100,
        f1=(pl.col("f1") * 100.0).round(0, mode="half_to_even").cast(pl.Int64).max(),
    )
    # Both scores travel packed in one Int64 (em * 128 + f1 in hundredths; -1 for a row
    # with an empty gold alternative): polars shares a kernel between the two metrics
    # only when its output is not a struct.
    packed = np.zeros(len(rows), dtype=np.int64)
    best_scores = best.select(pl.col("em") // 100 * 128 + pl.col("f1")).to_series().to_numpy()
    packed[best.get_column("row").to_numpy()] = best_scores
    return (
        pl.Series(packed)
        .set(status.get_column("invalid"), -1)
        .set(status.get_column("null"), None)
    )


_HUNDREDTHS = [i / 100 for i in range(101)]


def _drop_score(prediction: IntoExpr, gold: IntoExpr, metric: str) -> pl.Expr:
    pred_input = parse_into_expr(prediction)
    gold_input = parse_into_expr(gold)
    # One kernel for both metrics: scoring em and f1 together normalises once.
    packed = shared_kernel(
        pl.struct(pred_input.alias("prediction"), gold_input.alias("gold")), _score_batch, pl.Int64
    )
    check = RowCheck(
        invalid=lambda values: values == -1,
        what="a gold alternative with no spans",
        expected=f"every alternative in gold column {describe(gold)} to hold at least one span",
        show=(("gold", gold_input),),
    )
    checked = guard(metric, packed, [check], dtype=pl.Int64)
    hundredths = checked // 128 * 100 if metric == "drop_em" else checked % 128
    # i / 100 is the exact quotient numpy's round(x, 2) gives (polars would multiply
    # by the inverse of 100 instead of dividing).
    score = hundredths.replace_strict(range(101), _HUNDREDTHS, default=None)
    return score.cast(pl.Float64).alias(metric)


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
