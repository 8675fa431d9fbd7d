"""Classification over labels: accuracy, and scikit-learn's F1, precision, recall and MCC.

``prediction`` and ``gold`` are one label per row, both ``str`` or both ``int``.

- :func:`accuracy` is a sample metric: 1.0 where the labels are equal, else 0.0; its mean
  is scikit-learn's ``accuracy_score``.
- :func:`f1`, :func:`precision`, :func:`recall` and :func:`mcc` are corpus metrics. Per
  row they give their *statistics*, the label pair itself (a struct of ``prediction``
  and ``gold``, both cast to one dtype: ``String`` for text labels, ``Int64`` for
  integers); the score of a group of rows comes from the counts of the distinct pairs (a
  contingency table) through a :class:`~evalframe.metrics.reduce.Table` formula that
  reproduces ``sklearn.metrics.f1_score``, ``precision_score``, ``recall_score`` and
  ``matthews_corrcoef`` (scikit-learn 1.9.1) operation for operation. Pairs are stored
  rather than label indices, so the statistics of two partitions concatenated reduce to
  the score of the whole.

lm-evaluation-harness's ``f1`` and ``mcc`` for multiple-choice tasks (GLUE MRPC, QQP,
CoLA) aggregate ``(gold, prediction)`` index pairs with ``sklearn.metrics.f1_score``
(default options: ``average="binary"``, ``pos_label=1``) and ``matthews_corrcoef``: they
are :func:`f1` (with its defaults) and :func:`mcc` over integer labels.

>>> import polars as pl
>>> from evalframe import metrics as M
>>> from evalframe.metrics.classification import f1_table, label_counts, mcc_table
>>> df = pl.DataFrame({"pred": ["cat", "dog", "dog", None], "gold": ["cat", "cat", "dog", "dog"]})
>>> scored = df.with_columns(
...     M.accuracy("pred", "gold").alias("acc"),
...     M.f1("pred", "gold", average="macro").alias("f1"),
... )
>>> scored
shape: (4, 4)
┌──────┬──────┬──────┬───────────────┐
│ pred ┆ gold ┆ acc  ┆ f1            │
│ ---  ┆ ---  ┆ ---  ┆ ---           │
│ str  ┆ str  ┆ f64  ┆ struct[2]     │
╞══════╪══════╪══════╪═══════════════╡
│ cat  ┆ cat  ┆ 1.0  ┆ {"cat","cat"} │
│ dog  ┆ cat  ┆ 0.0  ┆ {"dog","cat"} │
│ dog  ┆ dog  ┆ 1.0  ┆ {"dog","dog"} │
│ null ┆ dog  ┆ null ┆ null          │
└──────┴──────┴──────┴───────────────┘

The three scoreable rows: cat has 1 true positive, 1 prediction and 2 golds, F1 =
2·1 / (2 + 1) = 2/3; dog has 1, 2 and 1, F1 = 2/3; the macro average is 2/3.

>>> cells, counts = label_counts(scored["f1"])
>>> f1_table(average="macro").formula(cells, counts)
array([0.66666667])
>>> mcc_table().formula(cells, counts)
array([0.5])
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping
from typing import Literal

import numpy as np
import polars as pl

from evalframe._expr import IntoExpr, parse_into_expr
from evalframe.errors import EvalframeError
from evalframe.metrics.reduce import Table
from evalframe.metrics.registry import Reference, register
from evalframe.schema import INT, STR

__all__ = ["accuracy", "f1", "mcc", "precision", "recall"]

#: How per-label scores become one number (scikit-learn's ``average``). ``None`` (one
#: score per label) and ``"samples"`` (multilabel only) give no single score.
Average = Literal["binary", "micro", "macro", "weighted"]
#: The score of a zero division: ``"warn"`` (0.0, as scikit-learn, without its warning),
#: 0.0, 1.0 or NaN (NaN scores are left out of the average).
ZeroDivision = Literal["warn"] | float

AVERAGES: tuple[str, ...] = ("binary", "micro", "macro", "weighted")

#: Accepted kinds of both roles (overrides the roles' text kinds).
DTYPES = {"prediction": (STR, INT), "gold": (STR, INT)}

#: The statistics of the corpus metrics: the label pair (``Int64`` fields for int labels).
STATISTICS = pl.Struct({"prediction": pl.String, "gold": pl.String})

_SKLEARN = "1.9.1"


# --- per-row expressions -------------------------------------------------------------------


def _label_kind(metric: str, role: str, dtype: pl.DataType) -> str | None:
    """``"str"``, ``"int"`` or None (an all-null column) for a label column's dtype."""
    if dtype == pl.Null:
        return None
    if dtype == pl.String or isinstance(dtype, pl.Categorical | pl.Enum):
        return STR
    if dtype.is_integer():
        return INT
    raise EvalframeError(
        f"metric {metric!r}: the {role} input has dtype {dtype}; expected str or int labels"
    )


def _labels(metric: str, prediction: IntoExpr, gold: IntoExpr, build) -> pl.Expr:
    """``build(prediction, gold)`` over both labels cast to one dtype, chosen at plan time.

    Raises :class:`EvalframeError` (when the plan is resolved) if one side holds text and
    the other integers, as scikit-learn refuses a mix of label types.
    """
    inputs = [parse_into_expr(prediction), parse_into_expr(gold)]

    def typed(resolved: list[tuple[pl.Expr, pl.DataType]]) -> pl.Expr:
        (pred, pred_dtype), (true, true_dtype) = resolved
        kinds = {
            _label_kind(metric, "prediction", pred_dtype),
            _label_kind(metric, "gold", true_dtype),
        } - {None}
        if len(kinds) > 1:
            raise EvalframeError(
                f"metric {metric!r}: the prediction labels have dtype {pred_dtype} but the gold "
                f"labels have dtype {true_dtype}; expected both str or both int (scikit-learn "
                "refuses a mix of string and number labels); cast one side, e.g. "
                "pl.col('gold').cast(pl.String)"
            )
        target = pl.Int64 if kinds == {INT} else pl.String
        result = build(pred.cast(target), true.cast(target))
        name = pred.meta.output_name(raise_if_undetermined=False)
        return result if name is None else result.alias(name)  # named as the prediction

    return pl.pipe_with_dtype(inputs, typed)


def label_pairs(metric: str, prediction: IntoExpr, gold: IntoExpr) -> pl.Expr:
    """The statistics of the corpus metrics: ``{prediction, gold}``, null if either is null."""

    def build(pred: pl.Expr, true: pl.Expr) -> pl.Expr:
        scoreable = pred.is_not_null() & true.is_not_null()
        return pl.when(scoreable).then(pl.struct(pred.alias("prediction"), true.alias("gold")))

    return _labels(metric, prediction, gold, build)


# --- options -------------------------------------------------------------------------------


def check_options(metric: str, average: object, pos_label: object, zero_division: object) -> float:
    """Validate the options of f1/precision/recall; return the zero-division score."""
    if not isinstance(average, str) or average not in AVERAGES:
        raise EvalframeError(
            f"metric {metric!r}: average={average!r} is invalid; expected one of "
            f"{', '.join(repr(a) for a in AVERAGES)} (scikit-learn's average=None and "
            "'samples' give no single score)"
        )
    if isinstance(pos_label, bool) or not isinstance(pos_label, str | int | np.integer):
        raise EvalframeError(
            f"metric {metric!r}: pos_label={pos_label!r} is invalid; expected a label, a str "
            "or an int"
        )
    if isinstance(zero_division, str):
        if zero_division == "warn":
            return 0.0
    elif isinstance(zero_division, int | float) and not isinstance(zero_division, bool):
        if math.isnan(zero_division):
            return math.nan
        if zero_division in (0, 1):
            return float(zero_division)
    raise EvalframeError(
        f"metric {metric!r}: zero_division={zero_division!r} is invalid; expected one of "
        "'warn', 0.0, 1.0, nan"
    )


# --- reductions ----------------------------------------------------------------------------


def label_counts(statistics: pl.Series) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """The table of a statistics column: distinct label pairs and their counts, ``(1, C)``.

    Null rows are not counted. This is how one table is read off a column; grouping and
    the bootstrap build ``counts`` with more rows (one per table) the same way.
    """
    table = statistics.rename("pair").to_frame().drop_nulls().group_by("pair").len().unnest("pair")
    cells = {field: table[field].to_numpy() for field in ("prediction", "gold")}
    return cells, table["len"].to_numpy()[np.newaxis, :]


class _Tallies:
    """Per-label counts of ``m`` tables of label pairs, as float64 ``(m, L)`` arrays.

    ``labels`` are the sorted union of both sides' labels over all cells (a label may be
    absent from some tables: ``present`` is False there); ``tp``, ``predicted`` and
    ``true`` count the true positives, predictions and golds of each label; ``n`` is each
    table's size. Counts are exact integers below 2**53.
    """

    def __init__(self, cells: Mapping[str, np.ndarray], counts: np.ndarray) -> None:
        pred, true = np.asarray(cells["prediction"]), np.asarray(cells["gold"])
        counts = np.asarray(counts, dtype=np.float64)
        if counts.ndim == 1:
            counts = counts[np.newaxis, :]
        if counts.shape[1] != pred.shape[0] or pred.shape != true.shape:
            raise ValueError(
                f"counts of shape {counts.shape} do not fit {pred.shape[0]} prediction and "
                f"{true.shape[0]} gold cells"
            )
        known = _not_null(pred) & _not_null(true)
        if not known.all():  # a null pair is not a scoreable row
            pred, true, counts = pred[known], true[known], counts[:, known]
        if pred.dtype.kind == "f" or true.dtype.kind == "f":  # int labels read with nulls
            pred, true = pred.astype(np.int64), true.astype(np.int64)
        self.labels, codes = np.unique(np.concatenate([pred, true]), return_inverse=True)
        codes = codes.reshape(-1)
        size = self.labels.shape[0]
        pred_codes, true_codes = codes[: pred.shape[0]], codes[pred.shape[0] :]
        same = pred_codes == true_codes
        self.predicted = _sum_by(pred_codes, counts, size)
        self.true = _sum_by(true_codes, counts, size)
        self.tp = _sum_by(pred_codes[same], counts[:, same], size)
        self.n = counts.sum(axis=1)
        self.present = (self.true + self.predicted) > 0


def _not_null(values: np.ndarray) -> np.ndarray:
    if values.dtype.kind == "O":
        return ~np.equal(values, None).astype(bool)
    if values.dtype.kind == "f":
        return ~np.isnan(values)
    return np.ones(values.shape, dtype=bool)


def _sum_by(codes: np.ndarray, counts: np.ndarray, size: int) -> np.ndarray:
    """``out[i, l]`` = the sum of ``counts[i, c]`` over the cells ``c`` with ``codes[c] == l``."""
    out = np.zeros((counts.shape[0], size))
    if codes.shape[0]:
        order = np.argsort(codes, kind="stable")
        ordered = codes[order]
        starts = np.flatnonzero(np.concatenate(([True], ordered[1:] != ordered[:-1])))
        out[:, ordered[starts]] = np.add.reduceat(counts[:, order], starts, axis=1)
    return out


def _kept(keep: np.ndarray) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """For the rows with the same number ``k`` of kept entries: (rows, their ``(r, k)`` columns).

    The columns of each row are its kept entries in order. Gathering them packs each
    table's per-label values exactly as scikit-learn's arrays hold them (only the labels
    present, sorted), so numpy sums them in the same order and rounds them the same way.
    The loop runs once per distinct ``k`` (at most the number of labels + 1), never per
    table or row.
    """
    sizes = keep.sum(axis=1)
    order = np.argsort(~keep, axis=1, kind="stable")
    for size in np.unique(sizes):
        rows = np.flatnonzero(sizes == size)
        yield rows, order[rows, :size]


def _packed_sum(values: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """Per row, the sum of the kept entries, summed as numpy sums the packed 1-d array."""
    out = np.zeros(values.shape[0])
    for rows, columns in _kept(keep):
        out[rows] = np.take_along_axis(values[rows], columns, axis=1).sum(axis=1)
    return out


def _divide(numerator: np.ndarray, denominator: np.ndarray, zero: float) -> np.ndarray:
    """``numerator / denominator``, ``zero`` where the denominator is 0 (``_prf_divide``)."""
    out = np.full(np.broadcast_shapes(numerator.shape, denominator.shape), zero)
    np.divide(numerator, denominator, out=out, where=denominator != 0)
    return out


def _labels_text(labels: np.ndarray) -> str:
    return repr([label.item() if isinstance(label, np.generic) else label for label in labels])


def _binary_column(metric: str, tallies: _Tallies, pos_label: str | int) -> np.ndarray:
    """Per table, a mask of the label scored with ``average="binary"`` (or none).

    scikit-learn 1.9.1 (``_check_set_wise_labels``): more than two labels raise; two
    labels without ``pos_label`` raise; one label that is not ``pos_label`` leaves every
    count 0. With one label, numpy's promotion makes scikit-learn compare ``pos_label``
    with it as text (``pos_label=1`` finds ``"1"``, ``"7"`` finds ``7``).
    """
    labels, present = tallies.labels, tallies.present
    live = tallies.n > 0
    count = present.sum(axis=1)
    multiclass = np.flatnonzero(live & (count > 2))
    if multiclass.shape[0]:
        found = labels[present[multiclass[0]]]
        raise EvalframeError(
            f"metric {metric!r}: average='binary' needs at most two labels, but the data has "
            f"{found.shape[0]}: {_labels_text(found)}; choose average='macro', 'micro' or "
            "'weighted' (scikit-learn: \"Target is multiclass but average='binary'\")"
        )
    if labels.dtype.kind in "iu":
        strict = (
            labels == pos_label
            if isinstance(pos_label, int | np.integer)
            else np.zeros(labels.shape, dtype=bool)
        )
    else:
        strict = np.array([isinstance(x, str) and x == pos_label for x in labels], dtype=bool)
    has_strict = (present & strict).any(axis=1)
    invalid = np.flatnonzero(live & (count == 2) & ~has_strict)
    if invalid.shape[0]:
        found = labels[present[invalid[0]]]
        raise EvalframeError(
            f"metric {metric!r}: pos_label={pos_label!r} is not one of the labels "
            f"{_labels_text(found)}; with average='binary' pass pos_label= one of them "
            "(a str for string labels), or choose another average"
        )
    loose = labels.astype(str) == str(pos_label)
    single = (count == 1) & ~has_strict
    return present & (strict[np.newaxis, :] | (loose[np.newaxis, :] & single[:, np.newaxis]))


def _average(values: np.ndarray, present: np.ndarray, weights: np.ndarray | None) -> np.ndarray:
    """scikit-learn's ``_nanaverage`` of each row's per-label values over its present labels.

    Unweighted: ``np.nanmean`` (NaN summed as 0 in place, divided by the count of the
    others); weighted: ``np.average`` over the non-NaN labels, unweighted if their weights
    sum to 0; NaN if every value is NaN.
    """
    nan = np.isnan(values)
    zeroed = np.where(nan, 0.0, values)
    kept = present & ~nan
    count = kept.sum(axis=1).astype(np.float64)
    if weights is None:
        return _divide(_packed_sum(zeroed, present), count, math.nan)
    plain = _divide(_packed_sum(zeroed, kept), count, math.nan)
    scale = _packed_sum(weights, kept)
    weighted = _divide(_packed_sum(zeroed * weights, kept), scale, math.nan)
    return np.where(scale != 0, weighted, plain)


def _prf_formula(
    which: str, average: str, pos_label: str | int, zero: float
) -> Callable[[Mapping[str, np.ndarray], np.ndarray], np.ndarray]:
    def formula(cells: Mapping[str, np.ndarray], counts: np.ndarray) -> np.ndarray:
        tallies = _Tallies(cells, counts)
        tp, predicted, true = tallies.tp, tallies.predicted, tallies.true
        present = tallies.present
        if average == "micro":
            tp, predicted, true = (x.sum(axis=1, keepdims=True) for x in (tp, predicted, true))
            present = np.ones(tp.shape, dtype=bool)
        elif average == "binary":
            column = _binary_column(which, tallies, pos_label)
            tp, predicted, true = (
                np.where(column, x, 0.0).sum(axis=1, keepdims=True) for x in (tp, predicted, true)
            )
            present = np.ones(tp.shape, dtype=bool)
        if which == "precision":
            values = _divide(tp, predicted, zero)
        elif which == "recall":
            values = _divide(tp, true, zero)
        else:  # scikit-learn: (1 + beta²) tp / (beta² true + predicted), beta = 1
            values = _divide(2.0 * tp, true + predicted, zero)
        scores = _average(values, present, true if average == "weighted" else None)
        return np.where(tallies.n > 0, scores, math.nan)

    return formula


def _table(which: str, average: Average, pos_label: str | int, zero_division: ZeroDivision):
    zero = check_options(which, average, pos_label, zero_division)
    if isinstance(pos_label, np.integer):
        pos_label = int(pos_label)
    name = f"{which}(average={average!r}, pos_label={pos_label!r}, zero_division={zero_division!r})"
    return Table(name, _prf_formula(which, average, pos_label, zero))


def f1_table(
    *, average: Average = "binary", pos_label: str | int = 1, zero_division: ZeroDivision = "warn"
) -> Table:
    """The reduction of :func:`f1`: scikit-learn's ``f1_score`` of each table of label pairs.

    ``formula(cells, counts)`` returns, for each row of ``counts`` (a table), exactly what
    ``sklearn.metrics.f1_score(gold, prediction, average=..., pos_label=...,
    zero_division=...)`` returns on that table's rows, computed with the same operations
    in the same order (bit-identical; with more than 7 labels and tables that lack some of
    them, sums whose rows differ in their number of labels are packed per size, so still
    identical). Cells counted 0 times are absent. An empty table gives NaN.
    """
    return _table("f1", average, pos_label, zero_division)


def precision_table(
    *, average: Average = "binary", pos_label: str | int = 1, zero_division: ZeroDivision = "warn"
) -> Table:
    """The reduction of :func:`precision`: scikit-learn's ``precision_score`` per table."""
    return _table("precision", average, pos_label, zero_division)


def recall_table(
    *, average: Average = "binary", pos_label: str | int = 1, zero_division: ZeroDivision = "warn"
) -> Table:
    """The reduction of :func:`recall`: scikit-learn's ``recall_score`` per table."""
    return _table("recall", average, pos_label, zero_division)


def _mcc_formula(cells: Mapping[str, np.ndarray], counts: np.ndarray) -> np.ndarray:
    tallies = _Tallies(cells, counts)
    out = np.full(tallies.n.shape, math.nan)
    for rows, columns in _kept(tallies.present):
        # scikit-learn's arrays over the labels present, and its operations, in order
        t_sum = np.take_along_axis(tallies.true[rows], columns, axis=1)
        p_sum = np.take_along_axis(tallies.predicted[rows], columns, axis=1)
        n_correct = np.take_along_axis(tallies.tp[rows], columns, axis=1).sum(axis=1)
        n_samples = p_sum.sum(axis=1)
        # a batched matmul of 1 x L by L x 1 is numpy's dot (BLAS ddot) for each table
        t_dot_p = np.matmul(t_sum[:, np.newaxis, :], p_sum[:, :, np.newaxis])[:, 0, 0]
        p_dot_p = np.matmul(p_sum[:, np.newaxis, :], p_sum[:, :, np.newaxis])[:, 0, 0]
        t_dot_t = np.matmul(t_sum[:, np.newaxis, :], t_sum[:, :, np.newaxis])[:, 0, 0]
        cov_ytyp = n_correct * n_samples - t_dot_p
        cov_ypyp = n_samples**2 - p_dot_p
        cov_ytyt = n_samples**2 - t_dot_t
        cov_ypyp_ytyt = cov_ypyp * cov_ytyt
        with np.errstate(invalid="ignore"):
            root = np.sqrt(cov_ypyp_ytyt)
        out[rows] = _divide(cov_ytyp, root, 0.0)
        out[rows[cov_ypyp_ytyt == 0]] = 0.0
    out[tallies.n == 0] = math.nan
    return out


def mcc_table() -> Table:
    """The reduction of :func:`mcc`: scikit-learn's ``matthews_corrcoef`` per table.

    Bit-identical to scikit-learn on every table (the products and sums are exact
    integers below 2**53, about 9.5e7 rows; beyond, the same dot products in the same
    order). 0.0 where the denominator is 0; NaN for an empty table.
    """
    return Table("matthews_corrcoef", _mcc_formula)


# --- the metrics -------------------------------------------------------------------------

_NULLS = (
    "a null prediction or gold gives a null statistics row, which is not counted; an empty "
    "table (no scoreable row) gives NaN"
)
_TYPES = (
    "prediction and gold must be both str or both int (any width; stored as String or "
    "Int64); a mix raises EvalframeError, as scikit-learn refuses it"
)
_LABEL_SET = (
    "the labels are the sorted union of both sides' labels present in the table; a pair "
    "counted 0 times (a bootstrap replicate that did not draw it) is absent"
)
_OPTIONS = (
    "average: 'binary' (default, scikit-learn's: the score of pos_label), 'micro', 'macro', "
    "'weighted'; pos_label (str or int) is used with 'binary' only; zero_division: 'warn' "
    "(0.0), 0.0, 1.0 or nan (left out of the average)"
)
_BINARY = (
    "average='binary' raises EvalframeError with more than two labels, or two labels "
    "without pos_label; one label that is not pos_label scores zero_division (as "
    "scikit-learn; there pos_label matches that one label as text: 1 finds '1')"
)
_DIVERGENCES = (
    "scikit-learn raises on empty input; evalframe gives NaN for a table with no scoreable row",
    "zero_division='warn' scores 0.0 as scikit-learn, without its UndefinedMetricWarning",
)


@register(
    "accuracy",
    roles=("prediction", "gold"),
    dtypes=DTYPES,
    reference=Reference("scikit-learn", _SKLEARN, "sklearn.metrics.accuracy_score"),
    description="Label accuracy: 1.0 where the predicted label equals the gold label, else 0.0",
    edge_rules=(
        "labels compare exactly (no normalisation); the empty string is a label",
        "a null prediction or gold gives a null score",
        _TYPES,
    ),
)
def accuracy(prediction: IntoExpr, gold: IntoExpr) -> pl.Expr:
    """Accuracy: 1.0 where the predicted label equals the gold label, else 0.0.

    The mean over rows is scikit-learn 1.9.1's ``sklearn.metrics.accuracy_score`` (with
    ``normalize=True`` and no sample weights).

    Parameters
    ----------
    prediction, gold
        Label columns (names or expressions): both ``str`` or both ``int`` (any width).

    Returns
    -------
    pl.Expr
        ``Float64``, 1.0 or 0.0 per row; null where the prediction or the gold is null.

    Raises
    ------
    EvalframeError
        When the plan is resolved, if one side is text and the other integers, or a side
        is neither (scikit-learn: "Mix of label input types").

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"pred": [1, 0, 2, None], "gold": [1, 1, 2, 0]})
    >>> df.with_columns(accuracy("pred", "gold").alias("accuracy"))
    shape: (4, 3)
    ┌──────┬──────┬──────────┐
    │ pred ┆ gold ┆ accuracy │
    │ ---  ┆ ---  ┆ ---      │
    │ i64  ┆ i64  ┆ f64      │
    ╞══════╪══════╪══════════╡
    │ 1    ┆ 1    ┆ 1.0      │
    │ 0    ┆ 1    ┆ 0.0      │
    │ 2    ┆ 2    ┆ 1.0      │
    │ null ┆ 0    ┆ null     │
    └──────┴──────┴──────────┘
    """
    return _labels("accuracy", prediction, gold, lambda pred, true: (pred == true).cast(pl.Float64))


#: What f1, precision and recall say between their summary and their example.
_LABEL_METRIC_DOC = """
    Parameters
    ----------
    prediction, gold
        Label columns (names or expressions): both ``str`` or both ``int``.
    average
        ``"binary"`` (scikit-learn's default: the score of ``pos_label``; the data must have
        at most two labels), ``"micro"`` (from the total true positives, which for one
        label per row is the accuracy), ``"macro"`` (unweighted mean over labels) or
        ``"weighted"`` (mean weighted by each label's number of golds).
    pos_label
        The positive label for ``average="binary"`` (a string for string labels); ignored
        otherwise.
    zero_division
        The score where a denominator is zero: ``"warn"`` (0.0; scikit-learn also warns),
        0.0, 1.0, or NaN (left out of the average; NaN if nothing is left).

    Returns
    -------
    pl.Expr
        Per row, the struct ``{prediction, gold}`` (``String`` or ``Int64`` fields); null
        where the prediction or the gold is null, and such rows are not counted.

    Raises
    ------
    EvalframeError
        An ``average``, ``pos_label`` or ``zero_division`` that is not valid (when the
        expression is built); a mix of string and integer labels (when the plan is
        resolved); with ``average="binary"``, when reduced: more than two labels, or two
        labels neither of which is ``pos_label`` (scikit-learn raises the same).
"""


def _label_metric(
    which: str,
    table: Callable[..., Table],
    formula: str,
    summary: str,
    example: str,
    notes: str,
) -> Callable[..., pl.Expr]:
    """scikit-learn's ``<which>_score`` as a registered corpus metric over label pairs.

    The function is named ``which`` (its ``__name__``, ``__qualname__`` and code name),
    takes ``(prediction, gold, *, average, pos_label, zero_division)`` and returns the
    label pairs; ``table`` (:func:`f1_table`...) is its reduction. Its docstring is
    ``summary``, the shared parameters, ``notes`` and ``example`` (the doctest lines after
    ``>>> import polars as pl``).
    """

    def metric(
        prediction: IntoExpr,
        gold: IntoExpr,
        *,
        average: Average = "binary",
        pos_label: str | int = 1,
        zero_division: ZeroDivision = "warn",
    ) -> pl.Expr:
        check_options(which, average, pos_label, zero_division)
        return label_pairs(which, prediction, gold)

    metric.__name__ = metric.__qualname__ = which
    metric.__code__ = metric.__code__.replace(co_name=which, co_qualname=which)
    metric.__doc__ = (
        f"{summary.rstrip()}\n{_LABEL_METRIC_DOC}\n    Notes\n    -----\n{notes.rstrip()}\n\n"
        f"    Examples\n    --------\n    >>> import polars as pl\n{example}"
    )
    return register(
        which,
        roles=("prediction", "gold"),
        dtypes=DTYPES,
        level="corpus",
        statistics=STATISTICS,
        reduce=table,
        reference=Reference("scikit-learn", _SKLEARN, f"sklearn.metrics.{which}_score"),
        description=f"{which.capitalize()} of the label pairs as scikit-learn's {which}_score: "
        f"{formula}, averaged as asked",
        edge_rules=(_OPTIONS, _LABEL_SET, _BINARY, _NULLS, _TYPES),
        divergences=_DIVERGENCES,
    )(metric)


f1 = _label_metric(
    "f1",
    f1_table,
    "2 tp / (2 tp + fp + fn) per label",
    """F1 over labels, as scikit-learn 1.9.1's ``sklearn.metrics.f1_score``.

    The per-row statistics are the label pair; the score of a table of pairs is
    ``2 tp / (2 tp + fp + fn)`` per label (computed as scikit-learn does,
    ``2 tp / (true + predicted)``), averaged by ``average`` over the labels present (the
    sorted union of both sides). See :func:`f1_table` for the formula.
    """,
    """\
    >>> from evalframe.metrics.classification import f1_table, label_counts
    >>> df = pl.DataFrame({"pred": ["pos", "pos", "neg", None],
    ...                    "gold": ["pos", "neg", "neg", "pos"]})
    >>> scored = df.with_columns(f1("pred", "gold", pos_label="pos").alias("f1"))
    >>> scored
    shape: (4, 3)
    ┌──────┬──────┬───────────────┐
    │ pred ┆ gold ┆ f1            │
    │ ---  ┆ ---  ┆ ---           │
    │ str  ┆ str  ┆ struct[2]     │
    ╞══════╪══════╪═══════════════╡
    │ pos  ┆ pos  ┆ {"pos","pos"} │
    │ pos  ┆ neg  ┆ {"pos","neg"} │
    │ neg  ┆ neg  ┆ {"neg","neg"} │
    │ null ┆ pos  ┆ null          │
    └──────┴──────┴───────────────┘

    ``pos``: 1 true positive, 2 predicted, 1 gold: F1 = 2·1 / (1 + 2) = 2/3.

    >>> f1_table(pos_label="pos").formula(*label_counts(scored["f1"]))
    array([0.66666667])
    """,
    notes="""\
    One class only, predicted right everywhere, has F1 1.0 for the averages other than
    ``"binary"``.
    """,
)

precision = _label_metric(
    "precision",
    precision_table,
    "tp / (tp + fp) per label",
    """Precision over labels, as scikit-learn 1.9.1's ``sklearn.metrics.precision_score``.

    Per label ``tp / predicted``; ``zero_division`` where a label is never predicted (a
    label only in the gold).
    """,
    """\
    >>> from evalframe.metrics.classification import label_counts, precision_table
    >>> df = pl.DataFrame({"pred": ["a", "a", "a", None], "gold": ["a", "b", "c", "a"]})
    >>> scored = df.with_columns(precision("pred", "gold", average="macro").alias("p"))
    >>> scored
    shape: (4, 3)
    ┌──────┬──────┬───────────┐
    │ pred ┆ gold ┆ p         │
    │ ---  ┆ ---  ┆ ---       │
    │ str  ┆ str  ┆ struct[2] │
    ╞══════╪══════╪═══════════╡
    │ a    ┆ a    ┆ {"a","a"} │
    │ a    ┆ b    ┆ {"a","b"} │
    │ a    ┆ c    ┆ {"a","c"} │
    │ null ┆ a    ┆ null      │
    └──────┴──────┴───────────┘

    ``a``: 1/3; ``b`` and ``c`` are never predicted: 0.0 (``"warn"``) or left out (NaN).

    >>> cells, counts = label_counts(scored["p"])
    >>> precision_table(average="macro").formula(cells, counts)  # (1/3 + 0 + 0) / 3
    array([0.11111111])
    >>> precision_table(average="macro", zero_division=float("nan")).formula(cells, counts)
    array([0.33333333])
    """,
    notes="""\
    With ``zero_division=nan`` and ``average="weighted"``, the labels left are weighted by
    their golds; if their weights sum to 0 (only labels never in the gold are left) the
    mean is unweighted, as in scikit-learn.
    """,
)

recall = _label_metric(
    "recall",
    recall_table,
    "tp / (tp + fn) per label",
    """Recall over labels, as scikit-learn 1.9.1's ``sklearn.metrics.recall_score``.

    Per label ``tp / gold``; ``zero_division`` where a label never is the gold (a label
    only predicted).
    """,
    """\
    >>> from evalframe.metrics.classification import label_counts, recall_table
    >>> df = pl.DataFrame({"pred": [1, 0, 0, 1], "gold": [1, 1, 0, None]})
    >>> scored = df.with_columns(recall("pred", "gold").alias("r"))
    >>> scored
    shape: (4, 3)
    ┌──────┬──────┬───────────┐
    │ pred ┆ gold ┆ r         │
    │ ---  ┆ ---  ┆ ---       │
    │ i64  ┆ i64  ┆ struct[2] │
    ╞══════╪══════╪═══════════╡
    │ 1    ┆ 1    ┆ {1,1}     │
    │ 0    ┆ 1    ┆ {0,1}     │
    │ 0    ┆ 0    ┆ {0,0}     │
    │ 1    ┆ null ┆ null      │
    └──────┴──────┴───────────┘

    Label 1 is the gold twice and found once: 1/2.

    >>> recall_table().formula(*label_counts(scored["r"]))
    array([0.5])
    """,
    notes="""\
    ``average="micro"`` and ``"weighted"`` recall both equal the accuracy for one label
    per row.
    """,
)


@register(
    "mcc",
    roles=("prediction", "gold"),
    dtypes=DTYPES,
    level="corpus",
    statistics=STATISTICS,
    reduce=mcc_table(),
    bounds=(-1.0, 1.0),
    reference=Reference("scikit-learn", _SKLEARN, "sklearn.metrics.matthews_corrcoef"),
    description="Matthews correlation coefficient (multiclass R_K) of the label pairs.",
    edge_rules=(
        "0.0 where undefined (one label only on either side), as scikit-learn",
        _LABEL_SET,
        _NULLS,
        _TYPES,
    ),
    divergences=_DIVERGENCES[:1],
)
def mcc(prediction: IntoExpr, gold: IntoExpr) -> pl.Expr:
    """Matthews correlation coefficient, as scikit-learn 1.9.1's ``matthews_corrcoef``.

    The multiclass form (Gorodkin's R_K) over the confusion matrix of the labels present:
    ``(c·s - t·p) / sqrt((s² - p·p)(s² - t·t))`` with ``c`` the correct count, ``s`` the
    total, ``t`` and ``p`` the per-label gold and predicted counts. See :func:`mcc_table`.

    Parameters
    ----------
    prediction, gold
        Label columns (names or expressions): both ``str`` or both ``int``.

    Returns
    -------
    pl.Expr
        Per row, the label pair, as :func:`f1`.

    Raises
    ------
    EvalframeError
        A mix of string and integer labels (when the plan is resolved).

    Examples
    --------
    >>> import polars as pl
    >>> from evalframe.metrics.classification import label_counts, mcc_table
    >>> df = pl.DataFrame({"pred": [1, -1, 1, 1, None], "gold": [1, 1, 1, -1, 1]})
    >>> scored = df.with_columns(mcc("pred", "gold").alias("mcc"))
    >>> scored
    shape: (5, 3)
    ┌──────┬──────┬───────────┐
    │ pred ┆ gold ┆ mcc       │
    │ ---  ┆ ---  ┆ ---       │
    │ i64  ┆ i64  ┆ struct[2] │
    ╞══════╪══════╪═══════════╡
    │ 1    ┆ 1    ┆ {1,1}     │
    │ -1   ┆ 1    ┆ {-1,1}    │
    │ 1    ┆ 1    ┆ {1,1}     │
    │ 1    ┆ -1   ┆ {1,-1}    │
    │ null ┆ 1    ┆ null      │
    └──────┴──────┴───────────┘

    scikit-learn's own example: ``c = 2, s = 4, t = (1, 3), p = (1, 3)``:
    ``(8 - 10) / sqrt((16 - 10)(16 - 10)) = -1/3``.

    >>> mcc_table().formula(*label_counts(scored["mcc"]))
    array([-0.33333333])
    """
    return label_pairs("mcc", prediction, gold)
