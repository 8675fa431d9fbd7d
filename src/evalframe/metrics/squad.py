"""SQuAD exact match and token F1, as the official SQuAD 2.0 evaluation script scores them.

Reference: ``transformers.data.metrics.squad_metrics`` (the SQuAD 2.0 official
``evaluate-v2.0.py`` functions): ``get_raw_scores`` takes, for each question, the
maximum of ``compute_exact`` and of ``compute_f1`` over the gold answers that do
not normalise to ``""``, and scores a question left without any (SQuAD 2.0's
unanswerable questions) against the single gold ``""``.

Requesting ``squad_em`` and ``squad_f1`` together in one ``with_columns`` (or one
:func:`evalframe.score`) on a LazyFrame scores each row once: the two expressions
read one shared kernel, which polars' common-subexpression elimination computes once.
The kernel cuts the texts at their spaces, normalises each *distinct* piece once
(:func:`evalframe.normalize.squad.squad_word_ids`), and counts shared words on
integer word ids.

>>> import polars as pl
>>> from evalframe import metrics as M
>>> df = pl.DataFrame({
...     "pred": ["the Eiffel Tower", "Paris France", "", None],
...     "answers": [["Eiffel Tower"], ["Paris", "France"], [], ["x"]],
... })
>>> df.with_columns(M.squad_em("pred", "answers").alias("em"),
...                 M.squad_f1("pred", "answers").alias("f1"))
shape: (4, 4)
┌──────────────────┬─────────────────────┬──────┬──────────┐
│ pred             ┆ answers             ┆ em   ┆ f1       │
│ ---              ┆ ---                 ┆ ---  ┆ ---      │
│ str              ┆ list[str]           ┆ f64  ┆ f64      │
╞══════════════════╪═════════════════════╪══════╪══════════╡
│ the Eiffel Tower ┆ ["Eiffel Tower"]    ┆ 1.0  ┆ 1.0      │
│ Paris France     ┆ ["Paris", "France"] ┆ 0.0  ┆ 0.666667 │
│                  ┆ []                  ┆ 1.0  ┆ 1.0      │
│ null             ┆ ["x"]               ┆ null ┆ null     │
└──────────────────┴─────────────────────┴──────┴──────────┘
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl

from evalframe._expr import IntoExpr, parse_into_expr
from evalframe._slices import byte_slices
from evalframe.metrics._rules import ALTERNATIVES_RULE, COMPUTE_F1_RULE, NULL_ALTERNATIVES_RULE
from evalframe.metrics._text_inputs import DTYPES, as_alternatives
from evalframe.metrics._token_f1 import expression_key, f1_from_counts, overlap_counts, shared
from evalframe.metrics.registry import Reference, register
from evalframe.normalize.squad import may_have_no_words, squad_word_ids

__all__ = ["squad_em", "squad_f1"]

REFERENCE_EM = Reference(
    "transformers", "4.57", "data.metrics.squad_metrics.get_raw_scores (compute_exact)"
)
REFERENCE_F1 = Reference(
    "transformers", "4.57", "data.metrics.squad_metrics.get_raw_scores (compute_f1)"
)

_COMMON_EDGE_RULES = (
    "normalisation is SQuAD's normalize_answer with Python semantics: str.lower (final "
    "sigma), ASCII string.punctuation only, articles a/an/the removed between Python \\b "
    "boundaries (a combining mark is not a word character), str.split() whitespace "
    "(\\x1c-\\x1f, \\x85, \\u3000 split; \\u200b does not)",
    ALTERNATIVES_RULE,
    "gold alternatives that normalise to '' (empty, whitespace, punctuation or articles "
    "only) are dropped; a question left without any, an empty gold list included (SQuAD "
    "2.0's unanswerable question), has the single gold '', matched only by a prediction "
    "that normalises to ''",
    NULL_ALTERNATIVES_RULE,
)


#: The per-row statistics both metrics read, computed once when both are requested:
#: ``[em, f1]`` (an array, not a struct: polars eliminates a common subexpression
#: under ``arr.get`` but not under ``struct.field``).
_SCORES = pl.Array(pl.Float64, 2)


def _scores(prediction: IntoExpr, gold: IntoExpr) -> pl.Expr:
    """``[em, f1]`` per row, one kernel shared by both metrics.

    Built once per (prediction, gold) expression, so that polars' common
    subexpression elimination computes it once when both metrics are requested.
    """
    pred = parse_into_expr(prediction).cast(pl.String)
    golds = as_alternatives(gold)
    pred_key, gold_key = expression_key(pred), expression_key(golds)
    key = None if pred_key is None or gold_key is None else ("squad", pred_key, gold_key)
    return shared(
        key,
        lambda: pl.map_batches(
            [pred, golds], _score_batch, return_dtype=_SCORES, is_elementwise=True
        ),
    )


def _score_batch(series: Sequence[pl.Series]) -> pl.Series:
    """``[em, f1]`` of a batch of rows.

    Polars calls it on slices of a column from several threads at once (the
    expression is elementwise); the work in numpy and polars releases the GIL. The
    batch is scored a few megabytes of text at a time (:mod:`evalframe._slices`).
    """
    pred = series[0].cast(pl.String)
    golds = series[1].cast(pl.List(pl.String))
    row_bytes = _row_bytes(pred, golds)
    parts = [
        _score_rows(pred.slice(offset, length), golds.slice(offset, length))
        for offset, length in byte_slices(row_bytes)
    ]
    if not parts:  # no rows
        em = f1 = np.empty(0, dtype=np.float64)
    elif len(parts) == 1:
        em, f1 = parts[0]
    else:  # slices of bounded text keep the working arrays small
        em = np.concatenate([part[0] for part in parts])
        f1 = np.concatenate([part[1] for part in parts])
    both = np.stack([em, f1], axis=1).ravel()
    return pl.Series(pred.name, both, dtype=pl.Float64, nan_to_null=True).reshape((len(pred), 2))


def _row_bytes(pred: pl.Series, golds: pl.Series) -> np.ndarray:
    """The bytes of text of each row: its prediction and all its gold alternatives."""
    list_len = golds.list.len().fill_null(0).to_numpy().astype(np.int64)
    alternatives = golds.explode(empty_as_null=False, keep_nulls=False)
    alt_bytes = alternatives.str.len_bytes().fill_null(0).to_numpy().astype(np.float64)
    rows = np.repeat(np.arange(len(pred), dtype=np.int64), list_len)
    gold_bytes = np.bincount(rows, weights=alt_bytes, minlength=len(pred)).astype(np.int64)
    return pred.str.len_bytes().fill_null(0).to_numpy().astype(np.int64) + gold_bytes


def _score_rows(pred: pl.Series, golds: pl.Series) -> tuple[np.ndarray, np.ndarray]:
    """``get_raw_scores``' EM and F1 per row (NaN where the result is null).

    A row with an alternative equal to the prediction, character for character,
    scores 1.0 and 1.0 when the prediction has words: its other alternatives are
    never split into words.
    """
    n = len(pred)
    # Few polars calls: each costs a fixed time holding the GIL, which the other
    # threads scoring their batches wait for. Flags come out as UInt8 (viewed as bool)
    # and row numbers from polars' explode: numpy would unpack a Boolean column's bits,
    # or repeat the row numbers, holding the GIL.
    rows = pl.DataFrame({"row": np.arange(n, dtype=np.int64), "p": pred, "g": golds})
    row_flags = rows.select(
        null=(pl.col("p").is_null() | pl.col("g").is_null()).cast(pl.UInt8),
        list_len=pl.col("g").list.len().fill_null(0).cast(pl.Int64),
        may_be_empty=may_have_no_words(pl.col("p")).fill_null(False).cast(pl.UInt8),
    )
    null = _bools(row_flags["null"])
    list_len = row_flags["list_len"].to_numpy()
    pairs = rows.explode("g", empty_as_null=False, keep_nulls=False)
    alternatives = pairs["g"]
    pair_flags = pairs.select(
        alt_row=pl.col("row"),
        alt_null=pl.col("g").is_null().cast(pl.UInt8),
        copy=(pl.col("g") == pl.col("p")).fill_null(False).cast(pl.UInt8),
    )
    del rows, pairs  # the prediction repeated for each alternative: free it now
    alt_row = pair_flags["alt_row"].to_numpy()
    alt_null = _bools(pair_flags["alt_null"])
    valid = np.bincount(alt_row[~alt_null], minlength=n)
    copied = np.zeros(n, dtype=bool)
    copied[alt_row[_bools(pair_flags["copy"])]] = True

    # A copy without words leaves the decision to the other alternatives, so those of
    # a copy that may have no words are split too (in the same call: it has a fixed cost).
    may_be_empty = _bools(row_flags["may_be_empty"])
    split = np.flatnonzero(~(copied & ~may_be_empty)[alt_row])
    counts, words = squad_word_ids(pl.concat([pred, alternatives.gather(split)]))
    starts = np.cumsum(counts) - counts
    pred_len = counts[:n]
    alt_len = np.zeros(alt_row.size, dtype=np.int64)
    alt_len[split] = counts[n:]
    alt_start = np.zeros(alt_row.size, dtype=np.int64)
    alt_start[split] = starts[n:]
    need = np.flatnonzero(~(copied & (pred_len > 0))[alt_row])

    # Gold alternatives with words (the others are dropped, as get_raw_scores does).
    answerable = need[~alt_null[need] & (alt_len[need] > 0)]
    row = alt_row[answerable]
    has_words = pred_len[row] > 0  # an empty prediction scores 0 against them
    scored = answerable[has_words]
    em_alt = np.zeros(answerable.size)
    f1_alt = np.zeros(answerable.size)
    if scored.size:
        scored_row = alt_row[scored]
        same, exact = overlap_counts(
            words, starts[scored_row], pred_len[scored_row], alt_start[scored], alt_len[scored]
        )
        em_alt[has_words] = exact
        f1_alt[has_words] = f1_from_counts(same, pred_len[scored_row], alt_len[scored])
    # Questions without an answerable gold have the single gold "".
    em = (pred_len == 0).astype(np.float64)
    f1 = em.copy()
    if answerable.size:
        first = np.flatnonzero(np.diff(row, prepend=-1))
        em[row[first]] = np.maximum.reduceat(em_alt, first)
        f1[row[first]] = np.maximum.reduceat(f1_alt, first)
    hit = copied & (pred_len > 0)
    em[hit] = 1.0
    f1[hit] = 1.0
    null = null | ((list_len > 0) & (valid == 0))
    em[null] = np.nan
    f1[null] = np.nan
    return em, f1


def _bools(flags: pl.Series) -> np.ndarray:
    """A ``UInt8`` column of 0 and 1 without nulls as a numpy bool array (no copy)."""
    return flags.to_numpy().view(np.bool_)


def _register(name: str, reference: Reference, description: str, *rules: str):
    """Register a SQuAD metric: (prediction, gold) roles, the common rules, then ``rules``."""
    return register(
        name,
        roles=("prediction", "gold"),
        dtypes=DTYPES,
        reference=reference,
        description=description,
        edge_rules=(*_COMMON_EDGE_RULES, *rules),
    )


@_register(
    "squad_em",
    REFERENCE_EM,
    "SQuAD exact match after normalize_answer, best over gold alternatives",
    "an empty prediction scores 1.0 exactly when no gold answer survives normalisation",
)
def squad_em(prediction: IntoExpr, gold: IntoExpr) -> pl.Expr:
    """SQuAD exact match: 1.0 if the normalised prediction equals a normalised gold answer.

    Parameters
    ----------
    prediction
        ``String`` column (name or expression): the model's answer.
    gold
        ``String`` or ``List(String)`` column: the gold answer, or its alternatives.

    Returns
    -------
    pl.Expr
        ``Float64`` per row: 1.0 for a match, else 0.0; null where an input is null.

    Notes
    -----
    Reference: ``get_raw_scores``'s ``max(compute_exact(a, pred) for a in gold_answers)``
    (SQuAD 2.0 official script, ``transformers.data.metrics.squad_metrics``), with
    ``gold_answers`` the alternatives that do not normalise to ``""``, or ``[""]``
    when there are none.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"pred": ["An apple.", "", "x", None],
    ...                    "gold": [["apple"], ["the", "..."], ["", "y"], ["x"]]})
    >>> df.with_columns(squad_em("pred", "gold").alias("squad_em"))
    shape: (4, 3)
    ┌───────────┬────────────────┬──────────┐
    │ pred      ┆ gold           ┆ squad_em │
    │ ---       ┆ ---            ┆ ---      │
    │ str       ┆ list[str]      ┆ f64      │
    ╞═══════════╪════════════════╪══════════╡
    │ An apple. ┆ ["apple"]      ┆ 1.0      │
    │           ┆ ["the", "..."] ┆ 1.0      │
    │ x         ┆ ["", "y"]      ┆ 0.0      │
    │ null      ┆ ["x"]          ┆ null     │
    └───────────┴────────────────┴──────────┘
    """
    return _scores(prediction, gold).arr.get(0)


@_register(
    "squad_f1",
    REFERENCE_F1,
    "SQuAD token F1 (multiset of normalised tokens), best over gold alternatives",
    "tokens are a multiset: a repeated word counts as many times as both answers have it",
    "if the prediction or the gold answer has no tokens, F1 = 1.0 when both have none, "
    "else 0.0",
    COMPUTE_F1_RULE,
)
def squad_f1(prediction: IntoExpr, gold: IntoExpr) -> pl.Expr:
    """SQuAD token F1: the harmonic mean of token precision and recall, best gold answer.

    Parameters
    ----------
    prediction, gold
        As for :func:`squad_em`.

    Returns
    -------
    pl.Expr
        ``Float64`` per row, the best gold answer's F1 in [0, 1]; null where an input
        is null.

    Notes
    -----
    Reference: ``get_raw_scores``'s ``max(compute_f1(a, pred) for a in gold_answers)``
    (SQuAD 2.0 official script, ``transformers.data.metrics.squad_metrics``); every
    value is bit-identical to it. Tokens are the words of the normalised text:
    ``precision = same / len(pred)``, ``recall = same / len(gold)``,
    ``f1 = (2 * precision * recall) / (precision + recall)``, evaluated in that
    order.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"pred": ["the cat sat", "cat cat", "", None],
    ...                    "gold": ["a cat sat down", "cat", "", "x"]})
    >>> df.with_columns(squad_f1("pred", "gold").alias("squad_f1"))
    shape: (4, 3)
    ┌─────────────┬────────────────┬──────────┐
    │ pred        ┆ gold           ┆ squad_f1 │
    │ ---         ┆ ---            ┆ ---      │
    │ str         ┆ str            ┆ f64      │
    ╞═════════════╪════════════════╪══════════╡
    │ the cat sat ┆ a cat sat down ┆ 0.8      │
    │ cat cat     ┆ cat            ┆ 0.666667 │
    │             ┆                ┆ 1.0      │
    │ null        ┆ x              ┆ null     │
    └─────────────┴────────────────┴──────────┘
    """
    return _scores(prediction, gold).arr.get(1)

