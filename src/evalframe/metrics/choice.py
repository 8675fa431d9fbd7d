"""Multiple-choice metrics over the log-probabilities of the choices.

A row is one question: ``choice_logprobs`` holds the summed log-probability of each
choice's continuation, ``gold_index`` the correct choice (an ``int``) or the correct
choices (a ``list[int]``, any of which counts). The normalised variants also read the
choice texts (``choices``), their token counts (``choice_token_counts``) or the
log-probabilities of the choices without the question (``unconditioned_logprobs``).

========================  ==========================================================
metric                    per row
========================  ==========================================================
``acc``                   argmax of the log-probabilities is a gold index
``acc_norm``              ... of logprob / number of characters of the choice
``acc_bytes``             ... of logprob / number of UTF-8 bytes of the choice
``acc_token``             ... of logprob / number of tokens of the choice
``acc_pmi``               ... of logprob - unconditioned logprob (mutual information)
``prob``                  ``exp(logprob)`` of the most likely gold (no other choice)
``prob_norm``             softmax over the choices: probability mass of the best gold
``mrr``                   1 / (1 + number of choices scored above the best gold)
``recall@{k}``            a gold is among the ``k`` best choices
``brier_score``           ``sum((softmax - one_hot(gold))**2)`` (lower is better)
``mc1``, ``mc2``          TruthfulQA: MC1 accuracy, MC2 mass of the true answers
========================  ==========================================================

References: lm-evaluation-harness 0.4.13 (``ConfigurableTask.process_results``,
``output_type: multiple_choice``: ``acc``, ``acc_norm``, ``acc_bytes``,
``acc_mutual_info``, ``brier_score``; ``lm_eval/tasks/truthfulqa/utils.py``) and
lighteval 0.13.0 (``metrics_sample.py``: ``LoglikelihoodAcc`` with
``normalizations.py``'s ``LogProbCharNorm``/``LogProbTokenNorm``/``LogProbPMINorm``,
``Probability``, ``NormalizedMultiChoiceProbability``, ``MRR``, ``Recall``;
``harness_compatibility/truthful_qa.py``: ``TruthfulqaMCMetrics``).

Arithmetic is the references' float64 arithmetic, in numpy, on whole blocks of rows
with the same number of choices (one batched kernel per metric over the Arrow
buffers; no Python runs per row):

- the argmax is ``numpy.argmax``'s (a NaN wins: the first NaN; a NaN arises only from
  ``0 / 0``, an empty choice of log-probability 0 under a length normalisation).
  Polars' ``list.arg_max`` differs (it skips NaN: ``[1, NaN, 2]`` gives 2, numpy 1),
  which is why it is not used here;
- a normalised score is the same float64 division or subtraction the reference does;
- probabilities are computed shifted by the row maximum (log-sum-exp).

Inputs no reference can score (an empty choice list, a gold index out of range, a
log-probability no probability has: see :mod:`evalframe.metrics._logprob`) raise
:class:`evalframe.EvalframeError` naming the metric, the column, the number of rows and
the first one; each metric lists its edge rules.

>>> import polars as pl
>>> df = pl.DataFrame({
...     "choice_logprobs": [[-1.0, -2.0, -3.0], [-4.0, -1.5], None],
...     "gold_index": [0, 0, 1],
... })
>>> df.with_columns(acc("choice_logprobs", "gold_index").alias("acc"),
...                 mrr("choice_logprobs", "gold_index").alias("mrr"))
shape: (3, 4)
┌────────────────────┬────────────┬──────┬──────┐
│ choice_logprobs    ┆ gold_index ┆ acc  ┆ mrr  │
│ ---                ┆ ---        ┆ ---  ┆ ---  │
│ list[f64]          ┆ i64        ┆ f64  ┆ f64  │
╞════════════════════╪════════════╪══════╪══════╡
│ [-1.0, -2.0, -3.0] ┆ 0          ┆ 1.0  ┆ 1.0  │
│ [-4.0, -1.5]       ┆ 0          ┆ 0.0  ┆ 0.5  │
│ null               ┆ 1          ┆ null ┆ null │
└────────────────────┴────────────┴──────┴──────┘
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from typing import Literal

import numpy as np
import polars as pl

from evalframe._expr import IntoExpr, RowCheck, describe, elementwise, guard, parse_into_expr
from evalframe.errors import EvalframeError
from evalframe.metrics._logprob import EXPECTED, invalid_values
from evalframe.metrics.registry import Reference, positive_int, register
from evalframe.metrics.sampling import check_k

__all__ = [
    "acc",
    "acc_bytes",
    "acc_norm",
    "acc_pmi",
    "acc_token",
    "brier_score",
    "mc1",
    "mc2",
    "mrr",
    "prob",
    "prob_norm",
    "recall_at_k",
]

LM_EVAL = ("lm-eval", "0.4.13")
LIGHTEVAL = ("lighteval", "0.13.0")
_PROCESS_RESULTS = "lm_eval.api.task.ConfigurableTask.process_results (multiple_choice)"

#: How the log-probabilities are normalised before they are compared or exponentiated.
Normalization = Literal["char", "token", "pmi"]

# --- the batched kernel ------------------------------------------------------------------

# A row that cannot be scored carries minus one of these codes (no score is negative)
# until the guard turns it into an EvalframeError. The first problem found in a row wins.
_EMPTY = 1
_UNEQUAL = 2
_NO_GOLD = 3
_GOLD_RANGE = 4
_NEGATIVE_COUNT = 5
_SPLIT = 6
_MANY_GOLDS = 7
_BAD_LOGPROB = 8
_BAD_UNCONDITIONED = 9


@dataclass(frozen=True)
class _Plan:
    """What one metric's kernel computes: its kind and inputs (see :func:`_kernel`)."""

    kind: Literal["argmax", "prob", "softmax", "rank", "brier", "mc1", "mc2"]
    gold: bool = True
    extra: Literal["divide", "subtract"] | None = None
    counts: bool = False  # the extra list holds token counts, which must be at least 1
    split: bool = False  # a len_mc1 column follows
    k: int | None = None  # rank: recall@k (first index wins ties); None: MRR


@dataclass(frozen=True)
class _Rows:
    """A column as flat numpy buffers: row ``i`` is ``values[offsets[i]:offsets[i + 1]]``.

    ``present`` is False for a null row and for a list holding a null. A scalar column
    is a list column of one value per row (``scalar``).
    """

    offsets: np.ndarray
    values: np.ndarray
    present: np.ndarray
    lengths: np.ndarray
    scalar: bool = False

    def flat(self) -> np.ndarray:
        """Every row's values, one row after the other (a view)."""
        return self.values[self.offsets[0] : self.offsets[-1]]

    def take(self, chosen: np.ndarray, lengths: np.ndarray | None) -> np.ndarray:
        """The flat values of the ``chosen`` rows (of ``lengths``; a view if all are)."""
        if len(chosen) == len(self.present):
            return self.flat()
        if self.scalar:
            return self.values[chosen]
        return self.values[_positions(self.offsets[chosen], lengths)]


def _rows(series: pl.Series, dtype: type) -> _Rows:
    import pyarrow as pa  # on first use

    count = len(series)
    if series.dtype == pl.Null:
        none = np.zeros(count, bool)
        return _Rows(np.zeros(count + 1, np.int64), np.zeros(0, dtype), none,
                     np.zeros(count, np.int64))
    if not isinstance(series.dtype, pl.List | pl.Array):
        values = series.fill_null(0).to_numpy().astype(dtype, copy=False)
        return _Rows(np.arange(count + 1, dtype=np.int64), values,
                     series.is_not_null().to_numpy(), np.ones(count, np.int64), scalar=True)
    array = series.to_arrow()
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    if not pa.types.is_large_list(array.type):
        array = array.cast(pa.large_list(array.type.value_type))
    offsets = array.offsets.to_numpy().astype(np.int64, copy=False)
    child = array.values
    present = array.is_valid().to_numpy(zero_copy_only=False)
    if child.null_count:
        nulls = np.concatenate(([0], np.cumsum(child.is_null().to_numpy(zero_copy_only=False))))
        present &= nulls[offsets[1:]] == nulls[offsets[:-1]]
        import pyarrow.compute as pc  # on first use: a slow import

        child = pc.fill_null(child, 0)
    values = child.to_numpy(zero_copy_only=False).astype(dtype, copy=False)
    return _Rows(offsets, values, present, np.diff(offsets))


def _positions(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The flat positions of rows that start at ``starts``, one after the other."""
    if len(lengths) == 0:
        return np.zeros(0, np.int64)
    if (lengths == lengths[0]).all():
        return (starts[:, None] + np.arange(lengths[0])).ravel()
    ends = np.cumsum(lengths)
    return np.repeat(starts - (ends - lengths), lengths) + np.arange(ends[-1])


def _row_any(flags: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Per row, whether any of its flat entries is True."""
    if not flags.any():
        return np.zeros(len(offsets) - 1, bool)
    counts = np.concatenate(([0], np.cumsum(flags)))
    base = offsets - offsets[0]
    return counts[base[1:]] > counts[base[:-1]]


def _kernel(plan: _Plan, series: Sequence[pl.Series]) -> pl.Series:
    """Score every row of a batch; rows that break a rule carry minus an error code."""
    import pyarrow as pa  # on first use

    inputs = iter(series)
    logprobs = _rows(next(inputs), np.float64)
    gold = _rows(next(inputs), np.int64) if plan.gold else None
    extra = _rows(next(inputs), np.float64) if plan.extra else None
    split = _rows(next(inputs), np.int64) if plan.split else None
    count = len(logprobs.present)
    n = logprobs.lengths
    present = logprobs.present
    problems = np.zeros(count, np.int8)

    def flag(mask: np.ndarray, code: int) -> None:
        if mask.any():
            problems[mask & (problems == 0)] = code

    flag(present & (n == 0), _EMPTY)
    flag(present & _row_any(invalid_values(logprobs.flat(), minus_inf=True), logprobs.offsets),
         _BAD_LOGPROB)
    scoreable = present.copy()
    if extra is not None:
        flag(present & extra.present & (extra.lengths != n), _UNEQUAL)
        if plan.counts:
            flag(extra.present & _row_any(extra.flat() < 1, extra.offsets), _NEGATIVE_COUNT)
        if plan.extra == "subtract":  # PMI: the unconditioned log-probabilities
            bad = invalid_values(extra.flat(), minus_inf=False)
            flag(extra.present & _row_any(bad, extra.offsets), _BAD_UNCONDITIONED)
        scoreable &= extra.present
    if gold is not None:
        given = gold.flat()
        if gold.scalar:
            outside = (given < 0) | (given >= n)
        else:
            flag(gold.present & (gold.lengths == 0), _NO_GOLD)
            outside = _row_any((given < 0) | (given >= np.repeat(n, gold.lengths)),
                               gold.offsets)
            if plan.kind == "brier":
                flag(gold.present & (gold.lengths > 1), _MANY_GOLDS)
        flag(present & gold.present & outside, _GOLD_RANGE)
        scoreable &= gold.present
    if split is not None:
        at = split.values
        low, high = (1, n) if plan.kind == "mc1" else (0, n - 1)
        flag(present & split.present & ((at < low) | (at > high)), _SPLIT)
        scoreable &= split.present
    scoreable &= problems == 0

    every = bool(scoreable.all())
    chosen = np.arange(count) if every else np.flatnonzero(scoreable)
    out = np.zeros(count)
    if len(chosen):
        with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
            scores = _score_rows(plan, chosen, n if every else n[chosen], logprobs, gold, extra,
                                 split)
        if every:
            out = scores
        else:
            out[chosen] = scores
    bad = problems != 0
    if bad.any():
        out[bad] = -problems[bad].astype(np.float64)
    missing = ~scoreable & ~bad
    if missing.any():
        return pl.Series(pa.array(out, mask=missing), dtype=pl.Float64)
    return pl.Series(out, dtype=pl.Float64)


def _score_rows(
    plan: _Plan,
    chosen: np.ndarray,
    lengths: np.ndarray,
    logprobs: _Rows,
    gold: _Rows | None,
    extra: _Rows | None,
    split: _Rows | None,
) -> np.ndarray:
    """The scores of the ``chosen`` rows, one block of rows per number of choices."""
    values = logprobs.take(chosen, lengths)
    if extra is not None:
        other = extra.take(chosen, lengths)
        values = values / other if plan.extra == "divide" else values - other
    counts = None  # one gold per row
    if gold is None:  # MC1: the correct answer is the first choice
        index = np.zeros(len(chosen), np.int64)
    elif gold.scalar:
        index = gold.take(chosen, None)
    else:
        counts = gold.lengths[chosen]
        index = gold.take(chosen, counts)
    if split is not None:
        at = split.take(chosen, None)
    else:  # no len_mc1: every choice is MC1's (mc1) or MC2's (mc2)
        at = lengths if plan.kind == "mc1" else np.zeros(len(chosen), np.int64)
    if lengths.min() == lengths.max():
        return _score(plan, values.reshape(-1, lengths[0]), index, counts, at)
    scores = np.empty(len(chosen))
    starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))
    gold_starts = np.concatenate(([0], np.cumsum(counts)[:-1])) if counts is not None else None
    for width in np.unique(lengths):
        group = np.flatnonzero(lengths == width)
        matrix = values[_positions(starts[group], lengths[group])].reshape(-1, width)
        if counts is None:
            group_index, group_counts = index[group], None
        else:
            group_counts = counts[group]
            group_index = index[_positions(gold_starts[group], group_counts)]
        scores[group] = _score(plan, matrix, group_index, group_counts, at[group])
    return scores


def _score(
    plan: _Plan,
    matrix: np.ndarray,
    gold: np.ndarray,
    counts: np.ndarray | None,
    split: np.ndarray,
) -> np.ndarray:
    """One block of rows with the same number of choices: ``matrix`` is (rows, choices).

    ``gold`` holds each row's gold index, or with ``counts`` (golds per row) every row's
    gold indices one row after the other; ``split`` is ``len_mc1`` per row.
    """
    rows, width = matrix.shape
    columns = np.arange(width)
    if counts is None:
        owner, firsts = np.arange(rows), None
    else:
        owner = np.repeat(np.arange(rows), counts)
        firsts = np.concatenate(([0], np.cumsum(counts)[:-1]))

    def per_row(values: np.ndarray, reduce: np.ufunc) -> np.ndarray:
        return values if firsts is None else reduce.reduceat(values, firsts)

    if plan.kind == "mc1":
        matrix = np.where(columns < split[:, None], matrix, -np.inf)
    if plan.kind in ("argmax", "mc1"):
        best = np.argmax(matrix, axis=1)
        hit = best == gold if firsts is None else best[owner] == gold
        return per_row(hit, np.logical_or).astype(np.float64)
    if plan.kind == "prob":
        return per_row(np.exp(matrix[owner, gold]), np.maximum)
    if plan.kind == "rank":
        row = matrix if firsts is None else matrix[owner]
        value = matrix[owner, gold][:, None]
        row_nan, value_nan = np.isnan(row), np.isnan(value)
        beats = (row > value) | (row_nan & ~value_nan)
        if plan.k is not None:  # a tie goes to the first index, as numpy.argmax
            tied = (row == value) | (row_nan & value_nan)
            beats |= tied & (columns < gold[:, None])
        rank = per_row(beats.sum(axis=1), np.minimum)
        if plan.k is None:
            return 1.0 / (rank + 1.0)
        return (rank < plan.k).astype(np.float64)
    if plan.kind == "mc2":
        block = columns >= split[:, None]
        matrix = np.where(block, matrix, -np.inf)
    top = matrix.max(axis=1)
    if plan.kind == "brier":  # lm_eval.utils.softmax, exactly
        exps = np.exp(matrix - top[:, None])
        probabilities = exps / exps.sum(axis=1)[:, None]
        probabilities[owner, gold] -= 1.0
        return (probabilities**2).sum(axis=1)
    # A finite maximum is subtracted; an infinite or NaN one is not (the reference's values).
    exps = np.exp(matrix - np.where(np.isfinite(top), top, 0.0)[:, None])
    totals = exps.sum(axis=1)
    if plan.kind == "softmax":  # lighteval's safe_divide: 0.0 where the total is 0
        total = totals[owner]
        return per_row(np.where(total != 0, exps[owner, gold] / total, 0.0), np.maximum)
    truth = np.zeros(matrix.shape, bool)
    truth[owner, gold] = True
    return np.where(truth & block, exps / totals[:, None], 0.0).sum(axis=1)


# --- building the expressions ------------------------------------------------------------


def _check(code: int, what: str, expected: str, show: tuple) -> RowCheck:
    return RowCheck(invalid=lambda values: values == -code, what=what, expected=expected,
                    show=show)


def _metric(
    metric: str,
    plan: _Plan,
    choice_logprobs: IntoExpr,
    gold_index: IntoExpr | None,
    *,
    extra: pl.Expr | None = None,
    extra_role: str | None = None,
    extra_source: IntoExpr | None = None,
    len_mc1: IntoExpr | None = None,
) -> pl.Expr:
    """The guarded kernel expression for one metric over the given role columns."""
    logprobs = parse_into_expr(choice_logprobs)
    inputs = [logprobs]
    show: list[tuple[str, pl.Expr]] = [("choice_logprobs", logprobs)]
    if gold_index is not None:
        inputs.append(parse_into_expr(gold_index))
        show.append(("gold_index", parse_into_expr(gold_index)))
    if extra is not None:
        inputs.append(extra)
        show.append((extra_role, parse_into_expr(extra_source)))
    if len_mc1 is not None:
        inputs.append(parse_into_expr(len_mc1))
        show.append(("len_mc1", parse_into_expr(len_mc1)))
    shown = tuple(show)
    lp = describe(choice_logprobs)
    checks = [
        _check(_EMPTY, f"an empty choice list in {lp}", "at least one choice", shown),
        _check(_BAD_LOGPROB, f"a log-probability in {lp} that is NaN or above 0 (+inf "
               "included)", f"{EXPECTED}; -inf (probability 0) is allowed", shown),
    ]
    if extra is not None:
        source = describe(extra_source)
        checks.append(_check(
            _UNEQUAL, f"a different number of entries in {lp} and {source}",
            f"one entry of {source} per choice", shown))
        if plan.counts:
            checks.append(_check(_NEGATIVE_COUNT, f"a token count below 1 in {source}",
                                 "token counts >= 1 (the log-probability is divided by them)",
                                 shown))
        if plan.extra == "subtract":
            checks.append(_check(
                _BAD_UNCONDITIONED, f"a log-probability in {source} that is NaN, infinite or "
                "above 0", f"finite log-probabilities in {source}, {EXPECTED} (PMI subtracts "
                "them: -inf would give +inf or NaN)", shown))
    if gold_index is not None:
        gold = describe(gold_index)
        checks.append(_check(_NO_GOLD, f"an empty gold list in {gold}",
                             "at least one gold index", shown))
        checks.append(_check(
            _GOLD_RANGE, f"a gold index in {gold} out of range",
            f"0 <= gold index < the number of choices in {lp}", shown))
        if plan.kind == "brier":
            checks.append(_check(_MANY_GOLDS, f"several gold indices in {gold}",
                                 "exactly one gold index per row", shown))
    if len_mc1 is not None:
        bounds = "1 <= len_mc1 <= " if plan.kind == "mc1" else "0 <= len_mc1 < "
        checks.append(_check(
            _SPLIT, f"len_mc1 in {describe(len_mc1)} outside the choices",
            f"{bounds}the number of choices in {lp}", shown))
    values = elementwise(inputs, partial(_kernel, plan), pl.Float64)
    return guard(metric, values, checks)


def _char_lengths(
    choices: IntoExpr, *, count_delimiter: bool, ignore_first_space: bool
) -> pl.Expr:
    """Per choice, the number of characters (code points) lighteval or lm-eval divide by."""
    text = pl.element()
    length = text.str.len_chars().cast(pl.Int64)
    if count_delimiter:
        length = length + 1
    if ignore_first_space:
        starts = pl.lit(True) if count_delimiter else text.str.starts_with(" ")
        length = length - starts.cast(pl.Int64)
    return parse_into_expr(choices).list.eval(length)


def _byte_lengths(choices: IntoExpr) -> pl.Expr:
    return parse_into_expr(choices).list.eval(pl.element().str.len_bytes())


def _normalized(
    metric: str,
    normalization: str | None,
    *,
    choices: IntoExpr | None,
    choice_token_counts: IntoExpr | None,
    unconditioned_logprobs: IntoExpr | None,
    count_delimiter: bool = False,
    ignore_first_space: bool = False,
) -> dict:
    """The kernel's extra input for a normalisation, or an error naming the missing role."""
    needs = {"char": ("choices", choices), "token": ("choice_token_counts", choice_token_counts),
             "pmi": ("unconditioned_logprobs", unconditioned_logprobs)}
    if normalization is None:
        return {}
    if normalization not in needs:
        raise EvalframeError(
            f"metric {metric!r}: normalization={normalization!r} is invalid; expected None, "
            "'char', 'token' or 'pmi'"
        )
    role, source = needs[normalization]
    if source is None:
        raise EvalframeError(
            f"metric {metric!r}: normalization={normalization!r} needs the {role!r} role; "
            f"add a column {role!r} or map one with columns={{{role!r}: ...}}"
        )
    if normalization == "char":
        extra = _char_lengths(source, count_delimiter=count_delimiter,
                              ignore_first_space=ignore_first_space)
    else:
        extra = parse_into_expr(source)
    return {"extra": extra, "extra_role": role, "extra_source": source}


def _extra_plan(kind: str, normalization: str | None, **fields) -> _Plan:
    if normalization is None:
        return _Plan(kind, **fields)
    return _Plan(kind, extra="subtract" if normalization == "pmi" else "divide",
                 counts=normalization == "token", **fields)


# --- the rules the metrics share ---------------------------------------------------------

_ROLES = ("choice_logprobs", "gold_index")
_EDGE_ARGMAX = (
    "argmax as numpy.argmax: ties go to the first index, -inf (probability 0) loses to "
    "every finite value",
)
_EDGE_ERRORS = (
    "an empty choice list, choice_* lists of unequal length in a row, an empty gold list "
    "and a gold index < 0 or >= the number of choices raise EvalframeError naming the "
    "count of rows and the first one (lm-eval scores them 0, lighteval 0 or crashes)",
    "a log-probability that is NaN, +inf or above 1e-6 (a probability above 1) raises "
    "EvalframeError, counted over the whole input; values in (0, 1e-6] are rounding, "
    "scored as given; -inf is allowed",
    "a null input, or a null inside a list, gives a null score",
)
_EDGE_DIVIDE = (
    "the float64 division of the reference: exact ratios that round alike tie; an empty "
    "choice (length 0) gives logprob / 0 (-inf, or NaN for 0/0, which wins) as in numpy",
)
_VALUE_DIVERGENCE = (
    "lm-eval and lighteval score any float: a NaN or +inf log-probability wins "
    "numpy.argmax (acc of [-1, nan] with gold 1 is 1.0), a positive one is a probability "
    "above 1; evalframe raises EvalframeError"
)


def _lighteval(function: str) -> Reference:
    return Reference(*LIGHTEVAL, f"lighteval.metrics.metrics_sample.{function}")


# --- accuracy ----------------------------------------------------------------------------


@register(
    "acc",
    roles=_ROLES,
    reference=Reference(*LM_EVAL, f"{_PROCESS_RESULTS}: acc"),
    description="Argmax of the choice log-probabilities is a gold index (= lighteval "
    "LoglikelihoodAcc).",
    edge_rules=(*_EDGE_ARGMAX, *_EDGE_ERRORS),
    divergences=(_VALUE_DIVERGENCE,),
)
def acc(choice_logprobs: IntoExpr, gold_index: IntoExpr) -> pl.Expr:
    """Accuracy: whether the choice of highest log-probability is a gold choice.

    Reference: lm-eval 0.4.13 ``ConfigurableTask.process_results`` (multiple-choice
    ``acc``: ``pred = np.argmax(lls)``, ``pred == gold`` or ``pred in gold``) and lighteval
    0.13.0 ``LoglikelihoodAcc(logprob_normalization=None)``; the same value in both.

    Parameters
    ----------
    choice_logprobs
        ``list[f64]`` column (name or expression): the log-probability of each choice.
    gold_index
        ``int`` or ``list[int]`` column: the correct choice, or every correct choice.

    Returns
    -------
    pl.Expr
        ``Float64``: 1.0 or 0.0; null where an input (or an entry of a list) is null.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({
    ...     "choice_logprobs": [[-1.0, -1.0, -3.0], [-2.0, -0.5], [-4.0, None], None],
    ...     "gold_index": [[1], [0, 1], [0], [0]],
    ... })
    >>> df.with_columns(acc("choice_logprobs", "gold_index").alias("acc"))
    shape: (4, 3)
    ┌────────────────────┬────────────┬──────┐
    │ choice_logprobs    ┆ gold_index ┆ acc  │
    │ ---                ┆ ---        ┆ ---  │
    │ list[f64]          ┆ list[i64]  ┆ f64  │
    ╞════════════════════╪════════════╪══════╡
    │ [-1.0, -1.0, -3.0] ┆ [1]        ┆ 0.0  │
    │ [-2.0, -0.5]       ┆ [0, 1]     ┆ 1.0  │
    │ [-4.0, null]       ┆ [0]        ┆ null │
    │ null               ┆ [0]        ┆ null │
    └────────────────────┴────────────┴──────┘
    """
    return _metric("acc", _Plan("argmax"), choice_logprobs, gold_index)


@register(
    "acc_norm",
    roles=(*_ROLES, "choices"),
    reference=Reference(*LM_EVAL, f"{_PROCESS_RESULTS}: acc_norm"),
    description="Argmax of log-probability / len(choice) (code points) is a gold index.",
    edge_rules=(
        "len is Python's len of the choice as given (code points; lm-eval's choices have "
        "no target delimiter); count_delimiter=True adds the leading space lighteval's "
        "choices carry (its LogProbCharNorm), ignore_first_space=True drops a leading space "
        "(LogProbCharNorm(ignore_first_space=True))",
        *_EDGE_DIVIDE, *_EDGE_ARGMAX, *_EDGE_ERRORS,
    ),
    divergences=(
        "lighteval raises ZeroDivisionError for an empty choice (IndexError with "
        "ignore_first_space); evalframe divides as numpy does, as lm-eval",
        _VALUE_DIVERGENCE,
    ),
)
def acc_norm(
    choice_logprobs: IntoExpr,
    gold_index: IntoExpr,
    choices: IntoExpr,
    *,
    count_delimiter: bool = False,
    ignore_first_space: bool = False,
) -> pl.Expr:
    """Accuracy of the log-probability per character: argmax of ``logprob / len(choice)``.

    Reference: lm-eval 0.4.13 ``ConfigurableTask.process_results`` (``acc_norm``:
    ``np.argmax(lls / completion_len)`` with ``completion_len = float(len(choice))``, the
    choice as ``doc_to_choice`` gives it, without the target delimiter), and lighteval
    0.13.0 ``LoglikelihoodAcc(LogProbCharNorm(ignore_first_space))``.

    The two harnesses give different numbers for the same model: lighteval's choices
    carry the leading space of the continuation (``" Paris"``: 6 characters, lm-eval's
    ``"Paris"``: 5); ``ignore_first_space=True`` on lighteval-style choices gives
    lm-eval's number.

    Parameters
    ----------
    choice_logprobs, gold_index
        As for :func:`acc`.
    choices
        ``list[str]`` column: the choice texts, one per log-probability.
    count_delimiter
        Count one space before each choice (the target delimiter lighteval keeps:
        lighteval's ``LogProbCharNorm()`` on lm-eval-style choices).
    ignore_first_space
        Do not count a leading space (applied after ``count_delimiter``).

    Returns
    -------
    pl.Expr
        ``Float64``, null as for :func:`acc`: 1.0 where the choice of highest log-
        probability per character is a gold choice, else 0.0.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({
    ...     "choice_logprobs": [[-6.0, -4.0], [-6.0, -4.0], None],
    ...     "gold_index": [0, 0, 0],
    ...     "choices": [["Lisbon", "Rome"], ["Lisbon", "Rôme"], ["a", "b"]],
    ... })
    >>> df.with_columns(
    ...     acc_norm("choice_logprobs", "gold_index", "choices").alias("lm_eval"),
    ...     acc_norm("choice_logprobs", "gold_index", "choices", count_delimiter=True)
    ...     .alias("lighteval"),
    ... )
    shape: (3, 5)
    ┌─────────────────┬────────────┬────────────────────┬─────────┬───────────┐
    │ choice_logprobs ┆ gold_index ┆ choices            ┆ lm_eval ┆ lighteval │
    │ ---             ┆ ---        ┆ ---                ┆ ---     ┆ ---       │
    │ list[f64]       ┆ i64        ┆ list[str]          ┆ f64     ┆ f64       │
    ╞═════════════════╪════════════╪════════════════════╪═════════╪═══════════╡
    │ [-6.0, -4.0]    ┆ 0          ┆ ["Lisbon", "Rome"] ┆ 1.0     ┆ 0.0       │
    │ [-6.0, -4.0]    ┆ 0          ┆ ["Lisbon", "Rôme"] ┆ 1.0     ┆ 0.0       │
    │ null            ┆ 0          ┆ ["a", "b"]         ┆ null    ┆ null      │
    └─────────────────┴────────────┴────────────────────┴─────────┴───────────┘

    (``-6/6 = -1.0`` ties ``-4/4 = -1.0``: the first choice wins; with the delimiter
    counted, ``-6/7 > -4/5`` is false and the second wins.)
    """
    extra = _char_lengths(choices, count_delimiter=count_delimiter,
                          ignore_first_space=ignore_first_space)
    return _metric("acc_norm", _Plan("argmax", extra="divide"), choice_logprobs, gold_index,
                   extra=extra, extra_role="choices", extra_source=choices)


@register(
    "acc_bytes",
    roles=(*_ROLES, "choices"),
    reference=Reference(*LM_EVAL, f"{_PROCESS_RESULTS}: acc_bytes"),
    description="Argmax of log-probability / UTF-8 byte length of the choice is a gold index.",
    edge_rules=(*_EDGE_DIVIDE, *_EDGE_ARGMAX, *_EDGE_ERRORS),
    divergences=(_VALUE_DIVERGENCE,),
)
def acc_bytes(choice_logprobs: IntoExpr, gold_index: IntoExpr, choices: IntoExpr) -> pl.Expr:
    """Accuracy of the log-probability per byte: argmax of ``logprob / len(choice.encode())``.

    Reference: lm-eval 0.4.13 ``ConfigurableTask.process_results`` (``acc_bytes``:
    ``np.argmax(lls / byte_length)``, ``byte_length = float(len(choice.encode("utf-8")))``).

    Parameters
    ----------
    choice_logprobs, gold_index
        As for :func:`acc`.
    choices
        ``list[str]`` column: the choice texts (their UTF-8 length is used).

    Returns
    -------
    pl.Expr
        ``Float64``, null as for :func:`acc`: 1.0 where the choice of highest log-
        probability per byte is a gold choice, else 0.0.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({
    ...     "choice_logprobs": [[-6.0, -5.0], None],
    ...     "gold_index": [0, 1],
    ...     "choices": [["東京", "Paris"], ["x", "y"]],
    ... })
    >>> df.with_columns(acc_bytes("choice_logprobs", "gold_index", "choices").alias("acc_bytes"))
    shape: (2, 4)
    ┌─────────────────┬────────────┬───────────────────┬───────────┐
    │ choice_logprobs ┆ gold_index ┆ choices           ┆ acc_bytes │
    │ ---             ┆ ---        ┆ ---               ┆ ---       │
    │ list[f64]       ┆ i64        ┆ list[str]         ┆ f64       │
    ╞═════════════════╪════════════╪═══════════════════╪═══════════╡
    │ [-6.0, -5.0]    ┆ 0          ┆ ["東京", "Paris"] ┆ 1.0       │
    │ null            ┆ 1          ┆ ["x", "y"]        ┆ null      │
    └─────────────────┴────────────┴───────────────────┴───────────┘

    (``"東京"`` is 2 characters but 6 bytes: ``-6/6`` ties ``-5/5``, and the first wins.)
    """
    return _metric("acc_bytes", _Plan("argmax", extra="divide"), choice_logprobs, gold_index,
                   extra=_byte_lengths(choices), extra_role="choices", extra_source=choices)


@register(
    "acc_token",
    roles=(*_ROLES, "choice_token_counts"),
    reference=_lighteval("LoglikelihoodAcc(LogProbTokenNorm())"),
    description="Argmax of log-probability / token count of the choice is a gold index.",
    edge_rules=("the float64 division of the reference: exact ratios that round alike tie",
                "a token count below 1 raises EvalframeError (lighteval: ZeroDivisionError "
                "for 0)", *_EDGE_ARGMAX, *_EDGE_ERRORS),
    divergences=(_VALUE_DIVERGENCE,),
)
def acc_token(
    choice_logprobs: IntoExpr, gold_index: IntoExpr, choice_token_counts: IntoExpr
) -> pl.Expr:
    """Accuracy of the log-probability per token: argmax of ``logprob / n_tokens``.

    Reference: lighteval 0.13.0 ``LoglikelihoodAcc(LogProbTokenNorm())`` (its
    ``acc_norm_token``: ``choices_logprob[i] / len(choices_tokens[i])``).

    Parameters
    ----------
    choice_logprobs, gold_index
        As for :func:`acc`.
    choice_token_counts
        ``list[int]`` column: the number of tokens of each choice's continuation.

    Returns
    -------
    pl.Expr
        ``Float64``, null as for :func:`acc`: 1.0 where the choice of highest log-
        probability per token is a gold choice, else 0.0.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({
    ...     "choice_logprobs": [[-6.0, -4.0], [-6.0, None]],
    ...     "gold_index": [0, 0],
    ...     "choice_token_counts": [[3, 1], [3, 1]],
    ... })
    >>> df.with_columns(acc_token("choice_logprobs", "gold_index", "choice_token_counts")
    ...                 .alias("acc_token"))
    shape: (2, 4)
    ┌─────────────────┬────────────┬─────────────────────┬───────────┐
    │ choice_logprobs ┆ gold_index ┆ choice_token_counts ┆ acc_token │
    │ ---             ┆ ---        ┆ ---                 ┆ ---       │
    │ list[f64]       ┆ i64        ┆ list[i64]           ┆ f64       │
    ╞═════════════════╪════════════╪═════════════════════╪═══════════╡
    │ [-6.0, -4.0]    ┆ 0          ┆ [3, 1]              ┆ 1.0       │
    │ [-6.0, null]    ┆ 0          ┆ [3, 1]              ┆ null      │
    └─────────────────┴────────────┴─────────────────────┴───────────┘
    """
    return _metric("acc_token", _Plan("argmax", extra="divide", counts=True), choice_logprobs,
                   gold_index, extra=parse_into_expr(choice_token_counts),
                   extra_role="choice_token_counts", extra_source=choice_token_counts)


@register(
    "acc_pmi",
    roles=(*_ROLES, "unconditioned_logprobs"),
    reference=Reference(*LM_EVAL, f"{_PROCESS_RESULTS}: acc_mutual_info"),
    description="Argmax of log-probability - unconditioned log-probability (PMI) is a gold "
    "index (= lighteval LogProbPMINorm).",
    edge_rules=(
        "unconditioned log-probabilities must be finite and <= 0 (up to 1e-6 of rounding): "
        "PMI subtracts them, and -inf would give +inf (or NaN against -inf, which wins "
        "numpy.argmax); NaN, +inf, -inf or positive ones raise EvalframeError",
        *_EDGE_ARGMAX, *_EDGE_ERRORS,
    ),
    divergences=(
        "lm-eval's acc_mutual_info compares np.argmax(...) == gold even for a list of "
        "golds: with two or more, `1.0 if array else 0.0` raises ValueError (a one-element "
        "list works); evalframe counts any gold, as acc does",
        _VALUE_DIVERGENCE,
    ),
)
def acc_pmi(
    choice_logprobs: IntoExpr, gold_index: IntoExpr, unconditioned_logprobs: IntoExpr
) -> pl.Expr:
    """Accuracy of the pointwise mutual information: argmax of ``logprob - unconditioned``.

    Reference: lm-eval 0.4.13 ``ConfigurableTask.process_results`` (``acc_mutual_info``:
    ``np.argmax([ll_c - ll_u ...]) == gold``) and lighteval 0.13.0
    ``LoglikelihoodAcc(LogProbPMINorm())`` (its ``acc_norm_pmi``).

    Parameters
    ----------
    choice_logprobs, gold_index
        As for :func:`acc`.
    unconditioned_logprobs
        ``list[f64]`` column: each choice's log-probability without the question.

    Returns
    -------
    pl.Expr
        ``Float64``, null as for :func:`acc`: 1.0 where the choice of highest pointwise
        mutual information is a gold choice, else 0.0.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({
    ...     "choice_logprobs": [[-3.0, -5.0], [-3.0, -5.0], None],
    ...     "gold_index": [[1], [0, 1], [0]],
    ...     "unconditioned_logprobs": [[-1.0, -6.0], [-1.0, -6.0], [-1.0, -6.0]],
    ... })
    >>> df.with_columns(acc_pmi("choice_logprobs", "gold_index", "unconditioned_logprobs")
    ...                 .alias("acc_pmi"))
    shape: (3, 4)
    ┌─────────────────┬────────────┬────────────────────────┬─────────┐
    │ choice_logprobs ┆ gold_index ┆ unconditioned_logprobs ┆ acc_pmi │
    │ ---             ┆ ---        ┆ ---                    ┆ ---     │
    │ list[f64]       ┆ list[i64]  ┆ list[f64]              ┆ f64     │
    ╞═════════════════╪════════════╪════════════════════════╪═════════╡
    │ [-3.0, -5.0]    ┆ [1]        ┆ [-1.0, -6.0]           ┆ 1.0     │
    │ [-3.0, -5.0]    ┆ [0, 1]     ┆ [-1.0, -6.0]           ┆ 1.0     │
    │ null            ┆ [0]        ┆ [-1.0, -6.0]           ┆ null    │
    └─────────────────┴────────────┴────────────────────────┴─────────┘
    """
    return _metric("acc_pmi", _Plan("argmax", extra="subtract"), choice_logprobs, gold_index,
                   extra=parse_into_expr(unconditioned_logprobs),
                   extra_role="unconditioned_logprobs", extra_source=unconditioned_logprobs)


# --- probabilities -----------------------------------------------------------------------


@register(
    "prob",
    roles=((*_ROLES, "choice_token_counts"), _ROLES),
    reference=_lighteval("Probability"),
    description="Probability exp(log-probability) of the most likely gold choice, unnormalised",
    edge_rules=(
        "normalization='token' divides by the token count first (lighteval prob_norm_token); "
        "a token count below 1 raises EvalframeError",
        "at most exp(1e-6) for a log-probability within the rounding tolerance", *_EDGE_ERRORS,
    ),
    divergences=(_VALUE_DIVERGENCE,),
)
def prob(
    choice_logprobs: IntoExpr,
    gold_index: IntoExpr,
    choice_token_counts: IntoExpr | None = None,
    *,
    normalization: Literal["token"] | None = None,
) -> pl.Expr:
    """Probability of the most likely gold choice, ignoring the other choices.

    ``max over gold g of exp(logprob[g])`` (or ``exp(logprob[g] / n_tokens[g])`` with
    ``normalization="token"``). Reference: lighteval 0.13.0 ``Probability`` (its ``prob``
    and ``prob_norm_token`` metrics), given the gold choices' log-probabilities: that is
    what lighteval's ``model_response.logprobs`` holds for the tasks using it.

    Parameters
    ----------
    choice_logprobs, gold_index
        As for :func:`acc`.
    choice_token_counts
        ``list[int]`` column, for ``normalization="token"``.
    normalization
        None (default) or ``"token"`` (lighteval's ``LogProbTokenNorm``).

    Returns
    -------
    pl.Expr
        ``Float64``, a probability; null where an input (or an entry of a list) is null.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({
    ...     "choice_logprobs": [[-0.5, -2.0, -0.1], [-3.0], None],
    ...     "gold_index": [[0, 1], [0], [0]],
    ... })
    >>> df.with_columns(prob("choice_logprobs", "gold_index").alias("prob"))
    shape: (3, 3)
    ┌────────────────────┬────────────┬──────────┐
    │ choice_logprobs    ┆ gold_index ┆ prob     │
    │ ---                ┆ ---        ┆ ---      │
    │ list[f64]          ┆ list[i64]  ┆ f64      │
    ╞════════════════════╪════════════╪══════════╡
    │ [-0.5, -2.0, -0.1] ┆ [0, 1]     ┆ 0.606531 │
    │ [-3.0]             ┆ [0]        ┆ 0.049787 │
    │ null               ┆ [0]        ┆ null     │
    └────────────────────┴────────────┴──────────┘
    """
    if normalization not in (None, "token"):
        raise EvalframeError(
            f"metric 'prob': normalization={normalization!r} is invalid; expected None or "
            "'token'"
        )
    extra = _normalized("prob", normalization, choices=None,
                        choice_token_counts=choice_token_counts, unconditioned_logprobs=None)
    return _metric("prob", _extra_plan("prob", normalization), choice_logprobs, gold_index,
                   **extra)


@register(
    "prob_norm",
    roles=tuple(
        (*_ROLES, *optional)
        for size in (3, 2, 1, 0)
        for optional in itertools.combinations(
            ("choices", "choice_token_counts", "unconditioned_logprobs"), size
        )
    ),
    reference=_lighteval("NormalizedMultiChoiceProbability"),
    description="Softmax over the choices (optionally of normalised log-probabilities): mass "
    "of the most likely gold.",
    edge_rules=(
        "normalization: None, char (as acc_norm, with count_delimiter and "
        "ignore_first_space), token or pmi; the column it needs must be present",
        "softmax shifted by the row maximum; 0.0 where all scores are -inf (as lighteval); "
        "NaN where a normalised score is NaN (char: an empty choice of log-probability 0)",
        "token: a token count below 1 raises; pmi: unconditioned log-probabilities must be "
        "finite (as acc_pmi)", *_EDGE_ERRORS,
    ),
    divergences=(
        "lighteval computes exp(s) unshifted: every score below about -745 underflows and it "
        "returns 0.0 (e.g. [-1000, -1001], gold 0: lighteval 0.0, evalframe 0.731059); "
        "scores below -708 lose digits",
        _VALUE_DIVERGENCE,
    ),
)
def prob_norm(
    choice_logprobs: IntoExpr,
    gold_index: IntoExpr,
    choices: IntoExpr | None = None,
    choice_token_counts: IntoExpr | None = None,
    unconditioned_logprobs: IntoExpr | None = None,
    *,
    normalization: Normalization | None = None,
    count_delimiter: bool = False,
    ignore_first_space: bool = False,
) -> pl.Expr:
    """Softmax over the choices: the probability mass of the most likely gold choice.

    ``max over gold g of exp(s[g]) / sum_j exp(s[j])`` where ``s`` are the
    log-probabilities, optionally normalised (``"char"``: divided by the choice length,
    with :func:`acc_norm`'s ``count_delimiter``/``ignore_first_space``; ``"token"``:
    by the token count; ``"pmi"``: minus the unconditioned log-probability).
    Reference: lighteval 0.13.0 ``NormalizedMultiChoiceProbability`` (its
    ``normalized_mc_prob`` metrics), aggregation ``np.max``.

    Parameters
    ----------
    choice_logprobs, gold_index
        As for :func:`acc`.
    choices, choice_token_counts, unconditioned_logprobs
        The column the chosen ``normalization`` needs (the others are not read).
    normalization
        None (default: the log-probabilities as they are), ``"char"``, ``"token"`` or
        ``"pmi"``.
    count_delimiter, ignore_first_space
        For ``"char"``: as in :func:`acc_norm`.

    Returns
    -------
    pl.Expr
        ``Float64`` in [0, 1] (or NaN); null where an input (or an entry of a list) is
        null.

    Notes
    -----
    Computed as ``exp(s - max(s))`` over its sum, which is exact where lighteval's
    ``exp(s)`` is not; where a score is above 709.78 lighteval's probabilities overflow
    too, and it returns NaN (or 0.0 for the other choices).

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({
    ...     "choice_logprobs": [[-1.0, -1.0, -2.0], [-1000.0, -1001.0], None],
    ...     "gold_index": [0, 0, 0],
    ... })
    >>> df.with_columns(prob_norm("choice_logprobs", "gold_index").alias("prob_norm"))
    shape: (3, 3)
    ┌────────────────────┬────────────┬───────────┐
    │ choice_logprobs    ┆ gold_index ┆ prob_norm │
    │ ---                ┆ ---        ┆ ---       │
    │ list[f64]          ┆ i64        ┆ f64       │
    ╞════════════════════╪════════════╪═══════════╡
    │ [-1.0, -1.0, -2.0] ┆ 0          ┆ 0.422319  │
    │ [-1000.0, -1001.0] ┆ 0          ┆ 0.731059  │
    │ null               ┆ 0          ┆ null      │
    └────────────────────┴────────────┴───────────┘

    (lighteval gives 0.0 for the second row: ``exp(-1000)`` is 0 in float64.)
    """
    extra = _normalized("prob_norm", normalization, choices=choices,
                        choice_token_counts=choice_token_counts,
                        unconditioned_logprobs=unconditioned_logprobs,
                        count_delimiter=count_delimiter, ignore_first_space=ignore_first_space)
    return _metric("prob_norm", _extra_plan("softmax", normalization), choice_logprobs,
                   gold_index, **extra)


@register(
    "brier_score",
    roles=_ROLES,
    reference=Reference(*LM_EVAL, "lm_eval.api.metrics.brier_score (per row: "
                        f"{_PROCESS_RESULTS}: brier_score)"),
    description="Sum of squared differences between the softmax over the choices and the "
    "one-hot gold.",
    higher_is_better=False,
    bounds=(0.0, 2.0),
    edge_rules=(
        "softmax as lm_eval.utils.softmax (exp(x - max) / sum): NaN where every "
        "log-probability is -inf (no probability mass; aggregate and compare refuse it)",
        "exactly one gold index per row; several raise EvalframeError", *_EDGE_ERRORS,
    ),
    divergences=(
        "lm-eval's aggregation stacks the rows (np.array(predictions).shape) and crashes "
        "when rows have different numbers of choices; evalframe scores each row",
        "lm-eval builds a wrongly shaped one-hot for a list of several golds; evalframe "
        "raises",
        _VALUE_DIVERGENCE,
    ),
)
def brier_score(choice_logprobs: IntoExpr, gold_index: IntoExpr) -> pl.Expr:
    """Brier score of the softmax over the choices: ``sum_j (p_j - [j == gold])**2``.

    Reference: lm-eval 0.4.13 ``ConfigurableTask.process_results`` (``brier_score``:
    ``(gold, utils.softmax(lls))``) and its aggregation ``lm_eval.api.metrics.brier_score``
    (``np.sum((predictions - gold_one_hot) ** 2, axis=1)``, then the mean, as
    :func:`evalframe.aggregate` takes it). Lower is better: 0 for all the mass on the
    gold, 2 for all of it on another choice.

    Parameters
    ----------
    choice_logprobs, gold_index
        As for :func:`acc`; exactly one gold index per row (an ``int`` or a one-element
        list).

    Returns
    -------
    pl.Expr
        ``Float64`` in [0, 2] (or NaN); null where an input is null.

    Notes
    -----
    The softmax is lm-eval's ``exp(x - max(x)) / sum``, so values agree to the last bit
    or two.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({
    ...     "choice_logprobs": [[0.0, 0.0], [-0.1, -10.0, -10.0], None],
    ...     "gold_index": [0, 2, 0],
    ... })
    >>> df.with_columns(brier_score("choice_logprobs", "gold_index").alias("brier_score"))
    shape: (3, 3)
    ┌──────────────────────┬────────────┬─────────────┐
    │ choice_logprobs      ┆ gold_index ┆ brier_score │
    │ ---                  ┆ ---        ┆ ---         │
    │ list[f64]            ┆ i64        ┆ f64         │
    ╞══════════════════════╪════════════╪═════════════╡
    │ [0.0, 0.0]           ┆ 0          ┆ 0.5         │
    │ [-0.1, -10.0, -10.0] ┆ 2          ┆ 1.999699    │
    │ null                 ┆ 0          ┆ null        │
    └──────────────────────┴────────────┴─────────────┘

    (Row 1: ``p = [0.5, 0.5]``, ``(0.5 - 1)**2 + 0.5**2 = 0.5``.)
    """
    return _metric("brier_score", _Plan("brier"), choice_logprobs, gold_index)


# --- rankings ----------------------------------------------------------------------------


@register(
    "mrr",
    roles=((*_ROLES, "choices"), _ROLES),
    reference=_lighteval("MRR"),
    description="Reciprocal rank of the best-ranked gold choice by log-probability.",
    edge_rules=(
        "rank = number of choices with a strictly higher score: ties share the best rank",
        "length_normalization=True divides by len(choice) (code points, as given)",
        "a NaN score (length_normalization: an empty choice of log-probability 0, 0/0) ranks "
        "above every number and ties with NaN", *_EDGE_ERRORS,
    ),
    divergences=(
        "lighteval sorts with Python's sorted, whose order with NaN depends on the input "
        "order; evalframe ranks NaN first",
        _VALUE_DIVERGENCE,
    ),
)
def mrr(
    choice_logprobs: IntoExpr,
    gold_index: IntoExpr,
    choices: IntoExpr | None = None,
    *,
    length_normalization: bool = False,
) -> pl.Expr:
    """Reciprocal rank of the best-ranked gold choice: ``1 / (1 + choices scored above it)``.

    Reference: lighteval 0.13.0 ``MRR(length_normalization)``:
    ``1.0 / (min(sorted(lls, reverse=True).index(lls[g]) for g in golds) + 1)``.

    Parameters
    ----------
    choice_logprobs, gold_index
        As for :func:`acc`.
    choices
        ``list[str]`` column, for ``length_normalization``.
    length_normalization
        Divide each log-probability by its choice's length in characters first, the
        choice as given (lighteval's choices carry their leading space).

    Returns
    -------
    pl.Expr
        ``Float64`` in (0, 1]; null where an input (or an entry of a list) is null.

    Notes
    -----
    A gold tied with the top choice scores 1.0, although :func:`acc` gives the first of
    them the win.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({
    ...     "choice_logprobs": [[-1.0, -1.0, -3.0], [-1.0, -2.0, -3.0], None],
    ...     "gold_index": [1, 2, 0],
    ... })
    >>> df.with_columns(mrr("choice_logprobs", "gold_index").alias("mrr"))
    shape: (3, 3)
    ┌────────────────────┬────────────┬──────────┐
    │ choice_logprobs    ┆ gold_index ┆ mrr      │
    │ ---                ┆ ---        ┆ ---      │
    │ list[f64]          ┆ i64        ┆ f64      │
    ╞════════════════════╪════════════╪══════════╡
    │ [-1.0, -1.0, -3.0] ┆ 1          ┆ 1.0      │
    │ [-1.0, -2.0, -3.0] ┆ 2          ┆ 0.333333 │
    │ null               ┆ 0          ┆ null     │
    └────────────────────┴────────────┴──────────┘
    """
    extra = {}
    plan = _Plan("rank")
    if length_normalization:
        extra = _normalized("mrr", "char", choices=choices, choice_token_counts=None,
                            unconditioned_logprobs=None)
        plan = _Plan("rank", extra="divide")
    return _metric("mrr", plan, choice_logprobs, gold_index, **extra)


@register(
    "recall@{k}",
    roles=_ROLES,
    parameters={"k": positive_int},
    reference=_lighteval("Recall"),
    description="A gold choice is among the k choices of highest log-probability.",
    edge_rules=(
        "ranked by log-probability, ties to the first index: recall@1 = acc",
        "k < 1 raises when the metric is built; k >= the number of choices gives 1.0",
        *_EDGE_ERRORS,
    ),
    divergences=(
        "for k > 1 lighteval takes argsort()[::-1][:k], the last of tied choices first: "
        "[0, 0, 0], gold 0, k=2 gives 0.0 in lighteval (whose recall@1 is 1.0), 1.0 here",
        _VALUE_DIVERGENCE,
    ),
)
def recall_at_k(choice_logprobs: IntoExpr, gold_index: IntoExpr, *, k: int) -> pl.Expr:
    """Recall at ``k``: whether a gold choice is among the ``k`` most likely choices.

    Reference: lighteval 0.13.0 ``Recall(k)`` (its ``recall`` metric, key
    ``recall:k={k}``): for ``k = 1`` ``np.argmax(lls) in golds``, else the golds against
    ``np.array(lls).argsort()[::-1][:k]``.

    Parameters
    ----------
    choice_logprobs, gold_index
        As for :func:`acc`.
    k
        How many of the best choices count (an integer >= 1).

    Returns
    -------
    pl.Expr
        ``Float64``, null as for :func:`acc`: 1.0 where a gold choice is among the ``k``
        best, else 0.0.

    Notes
    -----
    Recall never falls as ``k`` grows. Without ties lighteval agrees.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({
    ...     "choice_logprobs": [[-1.0, -2.0, -3.0], [-1.0, -2.0, -3.0], None],
    ...     "gold_index": [1, 2, 0],
    ... })
    >>> df.with_columns(recall_at_k("choice_logprobs", "gold_index", k=2).alias("recall@2"))
    shape: (3, 3)
    ┌────────────────────┬────────────┬──────────┐
    │ choice_logprobs    ┆ gold_index ┆ recall@2 │
    │ ---                ┆ ---        ┆ ---      │
    │ list[f64]          ┆ i64        ┆ f64      │
    ╞════════════════════╪════════════╪══════════╡
    │ [-1.0, -2.0, -3.0] ┆ 1          ┆ 1.0      │
    │ [-1.0, -2.0, -3.0] ┆ 2          ┆ 0.0      │
    │ null               ┆ 0          ┆ null     │
    └────────────────────┴────────────┴──────────┘
    """
    metric = f"recall@{k}"
    k = check_k(metric, k)
    return _metric(metric, _Plan("rank", k=k), choice_logprobs, gold_index)


# --- TruthfulQA --------------------------------------------------------------------------


@register(
    "mc1",
    roles=(("choice_logprobs", "len_mc1"), ("choice_logprobs",)),
    reference=Reference(*LIGHTEVAL, "lighteval.metrics.harness_compatibility.truthful_qa."
                        "TruthfulqaMCMetrics (truthfulqa_mc1)"),
    description="TruthfulQA MC1: the first choice (the correct one) is the most likely of the "
    "first len_mc1.",
    edge_rules=(
        "without len_mc1 every choice is an MC1 target (lm-eval truthfulqa_mc1: gold 0)",
        "len_mc1 < 1 or > the number of choices raises EvalframeError",
        *_EDGE_ARGMAX, *_EDGE_ERRORS,
    ),
    divergences=(_VALUE_DIVERGENCE,),
)
def mc1(choice_logprobs: IntoExpr, len_mc1: IntoExpr | None = None) -> pl.Expr:
    """TruthfulQA MC1: whether the first choice, the correct one, is the most likely.

    With ``len_mc1``, only the first ``len_mc1`` choices (the MC1 targets) compete,
    lighteval's layout: ``choices`` are the MC1 targets then the MC2 targets. Without it
    every choice of the row is an MC1 target (lm-eval's ``truthfulqa_mc1`` task, whose
    gold is always 0). Reference: lighteval 0.13.0 ``TruthfulqaMCMetrics.mc1``
    (``np.argmax(lls[:len_mc1]) == 0``); lm-eval 0.4.13 ``truthfulqa_mc1`` (``acc``).

    Parameters
    ----------
    choice_logprobs
        ``list[f64]`` column: the log-probability of each choice.
    len_mc1
        ``int`` column: how many leading choices are MC1 targets (1 to the number of
        choices); absent: all of them.

    Returns
    -------
    pl.Expr
        ``Float64``, null as for :func:`acc`: 1.0 where the first choice is the most
        likely MC1 target, else 0.0.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({
    ...     "choice_logprobs": [[-1.0, -2.0, -0.5], [-1.0, -0.5, -2.0], None],
    ...     "len_mc1": [2, 2, 2],
    ... })
    >>> df.with_columns(mc1("choice_logprobs", "len_mc1").alias("mc1"))
    shape: (3, 3)
    ┌────────────────────┬─────────┬──────┐
    │ choice_logprobs    ┆ len_mc1 ┆ mc1  │
    │ ---                ┆ ---     ┆ ---  │
    │ list[f64]          ┆ i64     ┆ f64  │
    ╞════════════════════╪═════════╪══════╡
    │ [-1.0, -2.0, -0.5] ┆ 2       ┆ 1.0  │
    │ [-1.0, -0.5, -2.0] ┆ 2       ┆ 0.0  │
    │ null               ┆ 2       ┆ null │
    └────────────────────┴─────────┴──────┘
    """
    return _metric("mc1", _Plan("mc1", gold=False, split=len_mc1 is not None),
                   choice_logprobs, None, len_mc1=len_mc1)


@register(
    "mc2",
    roles=((*_ROLES, "len_mc1"), _ROLES),
    reference=Reference(*LIGHTEVAL, "lighteval.metrics.harness_compatibility.truthful_qa."
                        "TruthfulqaMCMetrics (truthfulqa_mc2)"),
    description="TruthfulQA MC2: softmax mass of the true answers among the MC2 targets "
    "(choices from len_mc1 on).",
    edge_rules=(
        "true answers are the gold indices >= len_mc1 (lm-eval process_results_mc2: "
        "labels == 1); none gives 0.0; without len_mc1 all choices are MC2 targets",
        "len_mc1 < 0 or >= the number of choices raises EvalframeError",
        "softmax shifted by the maximum; NaN where every MC2 log-probability is -inf (as "
        "lm-eval; aggregate and compare refuse it)", *_EDGE_ERRORS,
    ),
    divergences=(
        "lighteval counts as true only the consecutive run of golds from the second one: "
        "golds [0, 5, 6, 8], len_mc1=5 treat choice 8 as false; a gold inside the MC1 block "
        "gives a negative split (lighteval's fixture 'Multiple Gold Indices': 0.0, here 1.0); "
        "one gold raises IndexError. evalframe takes every MC2 gold, as lm-eval does",
        "lm-eval and lighteval compute exp(ll) unshifted: NaN when every log-probability is "
        "below about -745",
        _VALUE_DIVERGENCE,
    ),
)
def mc2(
    choice_logprobs: IntoExpr, gold_index: IntoExpr, len_mc1: IntoExpr | None = None
) -> pl.Expr:
    """TruthfulQA MC2: the normalised probability mass of the true MC2 answers.

    Over the MC2 targets (the choices from ``len_mc1`` on; all of them without
    ``len_mc1``): ``sum over true t of p[t]``, ``p`` the softmax of their
    log-probabilities; the true answers are the gold indices among them.
    Reference: lighteval 0.13.0 ``TruthfulqaMCMetrics.mc2`` and lm-eval 0.4.13
    ``lm_eval/tasks/truthfulqa/utils.py:process_results_mc2``.

    Parameters
    ----------
    choice_logprobs
        ``list[f64]`` column: the log-probability of each choice.
    gold_index
        ``list[int]`` (or ``int``) column: the true answers (lighteval's layout:
        ``[0]`` for MC1 then the MC2 true answers, offset by ``len_mc1``); indices below
        ``len_mc1`` are MC1's and ignored here.
    len_mc1
        ``int`` column: how many leading choices are MC1 targets (0 to the number of
        choices - 1); absent: none.

    Returns
    -------
    pl.Expr
        ``Float64`` in [0, 1] (or NaN); null where an input (or an entry of a list) is
        null.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({
    ...     "choice_logprobs": [[-1.0, -3.0, -1.0, -1.0, -2.0], [-1.0, -2.0, -1.0], None],
    ...     "gold_index": [[0, 2, 3], [0, 2], [0, 2]],
    ...     "len_mc1": [2, 1, 1],
    ... })
    >>> df.with_columns(mc2("choice_logprobs", "gold_index", "len_mc1").alias("mc2"))
    shape: (3, 4)
    ┌──────────────────────┬────────────┬─────────┬──────────┐
    │ choice_logprobs      ┆ gold_index ┆ len_mc1 ┆ mc2      │
    │ ---                  ┆ ---        ┆ ---     ┆ ---      │
    │ list[f64]            ┆ list[i64]  ┆ i64     ┆ f64      │
    ╞══════════════════════╪════════════╪═════════╪══════════╡
    │ [-1.0, -3.0, … -2.0] ┆ [0, 2, 3]  ┆ 2       ┆ 0.844638 │
    │ [-1.0, -2.0, -1.0]   ┆ [0, 2]     ┆ 1       ┆ 0.731059 │
    │ null                 ┆ [0, 2]     ┆ 1       ┆ null     │
    └──────────────────────┴────────────┴─────────┴──────────┘

    (Row 1: the MC2 targets are choices 2-4, ``[-1, -1, -2]``, choices 2 and 3 true:
    ``2e⁻¹ / (2e⁻¹ + e⁻²) = 2 / (2 + e⁻¹) = 0.844638``.)
    """
    return _metric("mc2", _Plan("mc2", split=len_mc1 is not None), choice_logprobs,
                   gold_index, len_mc1=len_mc1)
