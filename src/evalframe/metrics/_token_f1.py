"""The multiset token F1 kernel shared by ``squad_f1`` and ``token_f1``.

One batched kernel over whole columns (never per row): every prediction and every
gold alternative of the batch is split into words once, the words get exact
integer ids (a categorical encoding: hashing with an equality check, so two
different words never share an id), and the multiset intersections are counted on
those ids (:func:`overlap_counts`: every pair of words compared for short texts,
a sort of integer keys for long ones). The F1 arithmetic then runs in numpy with
the same float operations, in the same order, as the SQuAD script's
``compute_f1``, so every score is bit-identical to it.

>>> import polars as pl
>>> pred = pl.Series(["a b b", "", "x", None])
>>> gold = pl.Series([["b b c", "a"], [""], ["y", None], ["x"]])
>>> multiset_f1(pred, gold).to_list()
[0.6666666666666666, 1.0, 0.0, None]
"""

from __future__ import annotations

from collections.abc import Callable, Hashable

import numpy as np
import polars as pl

from evalframe._expr import elementwise
from evalframe._kernel_cache import KernelCache

__all__: list[str] = []

Normalizer = Callable[[pl.Expr], pl.Expr]

#: Expressions built once per key. Polars' common-subexpression elimination compares
#: Python functions by identity, so two metrics share a batched kernel's result only
#: when both hold the very same expression object (and polars never eliminates
#: common ``list.eval`` expressions at all, which is why lists are mapped by kernels).
_BUILT: KernelCache[Hashable, tuple[pl.Expr, object]] = KernelCache(
    "token expressions", 4 << 20, lambda key: len(repr(key))
)


def expression_key(expr: pl.Expr) -> str | None:
    """The serialised expression, or None for one that reads no column (a literal).

    A literal (as a kernel evaluating a batch eagerly builds) has nothing to share
    and would make a key as large as its data.
    """
    if not expr.meta.root_names():
        return None
    try:
        return expr.meta.serialize(format="json")
    except Exception:  # not serialisable: build afresh, without sharing
        return None


def shared(key: Hashable | None, build: Callable[[], pl.Expr], keep_alive: object = None):
    """``build()``, or the expression an earlier call with the same ``key`` built.

    ``keep_alive`` (e.g. a normaliser whose ``id`` is part of the key) is held with
    the expression, so the ``id`` cannot be reused by another object. The cache
    holds at most 4 MiB of keys (least recently used dropped first).
    """
    if key is None:
        return build()
    return _BUILT.get_or_build(key, lambda: (build(), keep_alive))[0]


def map_alternatives(golds: pl.Expr, normalize: Normalizer, *, share: bool = True) -> pl.Expr:
    """Apply ``normalize`` to every alternative of a ``List(String)`` column.

    A batched kernel over the flattened alternatives (``list.eval`` inside it, where
    polars cannot see it: a ``list.eval`` anywhere in a ``with_columns`` turns off
    common-subexpression elimination for all of its expressions). With ``share``
    it is built once per (input, normaliser), so metrics requested together share it.
    """

    def kernel(series: pl.Series) -> pl.Series:
        return series.list.eval(normalize(pl.element()))

    def build() -> pl.Expr:
        return golds.map_batches(kernel, return_dtype=pl.List(pl.String), is_elementwise=True)

    key = expression_key(golds) if share else None
    return shared(
        None if key is None else ("map_alternatives", key, id(normalize)),
        build,
        keep_alive=normalize,
    )


def token_f1_expr(prediction: pl.Expr, gold: pl.Expr, *, drop_empty_gold: bool) -> pl.Expr:
    """:func:`multiset_f1` as an expression over a text column and a list[str] column."""

    def kernel(series):
        return multiset_f1(series[0], series[1], drop_empty_gold=drop_empty_gold)

    return elementwise([prediction, gold], kernel, pl.Float64)


def multiset_f1(pred: pl.Series, gold: pl.Series, *, drop_empty_gold: bool = False) -> pl.Series:
    """Token F1 of each prediction against its best gold alternative.

    Parameters
    ----------
    pred
        ``String``: words separated by exactly one space, no space at either end
        (``""`` is an answer without words).
    gold
        ``List(String)``: the alternatives of each row, written as ``pred``.
    drop_empty_gold
        SQuAD's ``get_raw_scores`` rule: alternatives without words are dropped,
        and a row left with none (an empty list included) is scored against the
        single alternative ``""``.

    Returns
    -------
    pl.Series
        ``Float64``: ``max`` over the row's alternatives of ``compute_f1``. Null
        where the prediction or the gold list is null, and where the gold list has
        no non-null alternative (null alternatives are skipped; an empty list is
        null too unless ``drop_empty_gold``).

    Notes
    -----
    Rows are settled without looking at words where possible: a prediction equal
    to an alternative scores 1.0 (``compute_f1`` of two equal token lists is
    exactly 1.0); a prediction without words scores 1.0 against an alternative
    without words and 0.0 otherwise. Only the remaining rows are split into words.
    """
    pred = pred.cast(pl.String).rechunk()
    gold = gold.cast(pl.List(pl.String)).rechunk()
    pred_null = pred.is_null().to_numpy()
    gold_null = gold.is_null().to_numpy()
    list_len = gold.list.len().fill_null(0).to_numpy()
    valid = list_len - gold.list.count_matches(None).fill_null(0).to_numpy()
    empty = gold.list.count_matches("").fill_null(0).to_numpy()
    worded = valid - empty  # non-null alternatives with at least one word
    pred_empty = (pred == "").fill_null(False).to_numpy()
    exact = gold.list.contains(pred).fill_null(False).to_numpy() & ~pred_empty

    defined = ~pred_null & ~gold_null & (valid > 0)
    if drop_empty_gold:
        defined |= ~pred_null & ~gold_null & (list_len == 0)
        empty_pred_score = worded == 0  # only the gold "" is left
    else:
        empty_pred_score = empty > 0
    scores = np.where(pred_empty, empty_pred_score, exact).astype(np.float64)
    todo = defined & ~pred_empty & ~exact & (worded > 0)
    if todo.any():
        rows = np.flatnonzero(todo)
        scores[rows] = _best_f1(pred.gather(rows), gold.gather(rows))
    scores[~defined] = np.nan
    return pl.Series(pred.name, scores, dtype=pl.Float64, nan_to_null=True)


def _best_f1(pred: pl.Series, gold: pl.Series) -> np.ndarray:
    """Best F1 per row, for non-empty predictions against lists with a worded alternative."""
    n = len(pred)
    list_len = gold.list.len().to_numpy()
    alternatives = gold.explode(empty_as_null=False, keep_nulls=False)
    keep = (alternatives != "").fill_null(False).to_numpy()
    alt_row = np.repeat(np.arange(n, dtype=np.int64), list_len)[keep]
    alternatives = alternatives.filter(pl.Series(keep))

    pieces = pl.concat([pred, alternatives]).str.split(" ")
    n_words = pieces.list.len().to_numpy().astype(np.int64)
    codes = (
        pieces.explode(empty_as_null=False)
        .cast(pl.Categorical(pl.Categories.random()))
        .to_physical()
        .to_numpy()
        .astype(np.int64)
    )
    starts = np.cumsum(n_words) - n_words
    same, _ = overlap_counts(codes, starts[:n][alt_row], n_words[:n][alt_row],
                             starts[n:], n_words[n:])
    f1 = f1_from_counts(same, n_words[:n][alt_row], n_words[n:])
    segment = np.flatnonzero(np.diff(alt_row, prepend=-1))
    return np.maximum.reduceat(f1, segment)


def f1_from_counts(same: np.ndarray, pred_words: np.ndarray, gold_words: np.ndarray) -> np.ndarray:
    """``compute_f1`` on counts of words, with its float operations in its order.

    ``precision = 1.0 * same / len(pred)``, ``recall = 1.0 * same / len(gold)``,
    ``f1 = (2 * precision * recall) / (precision + recall)``; 0 when nothing is shared.
    Both counts of words are at least one here.
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        precision = 1.0 * same / pred_words
        recall = 1.0 * same / gold_words
        f1 = (2 * precision * recall) / (precision + recall)
    return np.where(same == 0, 0.0, f1)


#: Alternatives longer than this many words (or against a longer prediction) are
#: counted by sorting; shorter ones by comparing every pair of words.
_PAIRWISE_MAX_WORDS = 32

#: Texts of up to this many words are grouped by their exact length (no padding);
#: longer ones by the power of two their length rounds up to.
_EXACT_MAX_WORDS = 2

#: Elements of one pairwise comparison block (bounds its memory, ~4 MB).
_BLOCK_ELEMENTS = 1 << 22


def overlap_counts(
    words: np.ndarray,
    pred_start: np.ndarray,
    pred_len: np.ndarray,
    alt_start: np.ndarray,
    alt_len: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Shared words (as multisets) and sequence equality of prediction/alternative pairs.

    Parameters
    ----------
    words
        Word ids (non-negative) of every text, text after text (equal ids for equal
        words).
    pred_start, pred_len, alt_start, alt_len
        For each pair, where its prediction's and its alternative's words are in
        ``words`` and how many there are.

    Returns
    -------
    same : np.ndarray
        ``int64`` per pair: ``sum((Counter(pred) & Counter(alt)).values())``.
    exact : np.ndarray
        ``bool`` per pair: the two word sequences are equal.

    Notes
    -----
    Pairs are grouped by the lengths of their texts: exact lengths up to
    ``_EXACT_MAX_WORDS`` words, widths 4, 8, 16 and 32 (padded) beyond, and a sort
    of integer keys for texts longer than ``_PAIRWISE_MAX_WORDS``. Within a group
    every word of the alternative is compared with every word of the prediction
    and with the alternative's earlier words, one word position at a time over all
    the group's pairs (contiguous arrays of one word per pair).

    Examples
    --------
    >>> words = np.array([1, 2, 2, 2, 3, 1, 2])
    >>> same, exact = overlap_counts(words, np.array([0, 0]), np.array([3, 3]),
    ...                              np.array([3, 5]), np.array([2, 2]))
    >>> same.tolist(), exact.tolist()
    ([1, 2], [False, False])
    """
    n = pred_len.size
    same = np.zeros(n, dtype=np.int64)
    exact = np.zeros(n, dtype=bool)
    if n == 0:
        return same, exact
    pred_class, alt_class = _length_class(pred_len), _length_class(alt_len)
    group = pred_class * 16 + alt_class
    order = np.argsort(group.astype(np.uint8), kind="stable")
    bounds = np.flatnonzero(np.diff(group[order], prepend=-1, append=-2))
    ids = np.concatenate([words.astype(np.int32), np.full(_PAIRWISE_MAX_WORDS, -1, np.int32)])
    for lo, hi in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True):
        pairs = order[lo:hi]
        code = int(group[pairs[0]])
        width_p, width_a = _CLASS_WIDTH[code // 16], _CLASS_WIDTH[code % 16]
        if not width_p or not width_a:
            same[pairs], exact[pairs] = _overlap_sorted(
                words, pred_start[pairs], pred_len[pairs], alt_start[pairs], alt_len[pairs]
            )
            continue
        step = max(1, _BLOCK_ELEMENTS // (width_p + width_a))
        for first in range(0, pairs.size, step):
            block = pairs[first : first + step]
            same[block], exact[block] = _overlap_pairwise(
                _columns(ids, pred_start[block], pred_len[block], width_p, -1),
                _columns(ids, alt_start[block], alt_len[block], width_a, -2),
            )
    return same, exact


def _columns(ids: np.ndarray, start: np.ndarray, length: np.ndarray, width: int, pad: int):
    """Word ``i`` of every text, for ``i < width``; ``pad`` past a text's length."""
    columns = [ids[start + i] for i in range(width)]
    if width > _EXACT_MAX_WORDS:  # a padded class: texts of width // 2 + 1 to width words
        for i in range(width // 2 + 1, width):
            columns[i][length <= i] = pad
    return columns


#: The width of each length class: 1 and 2 words exactly, then 4, 8, 16 and 32
#: (padded); 0 for "sort instead".
_CLASS_WIDTH = [0, 1, 2, 4, 8, 16, 32, 0]
_CLASS_BOUNDS = np.array([1, 2, 4, 8, 16, _PAIRWISE_MAX_WORDS])


def _length_class(length: np.ndarray) -> np.ndarray:
    """The index in ``_CLASS_WIDTH`` of the narrowest width that holds ``length`` words.

    Few classes keep the number of numpy calls per batch small: each group of pairs
    costs a few dozen calls, whatever its size. Texts without words, and texts longer
    than ``_PAIRWISE_MAX_WORDS``, are in the last class (sorted).

    >>> _length_class(np.array([1, 2, 3, 4, 5, 8, 9, 32, 33, 0])).tolist()
    [1, 2, 3, 3, 4, 4, 5, 6, 7, 7]
    """
    size = np.searchsorted(_CLASS_BOUNDS, length, side="left") + 1
    size[length == 0] = len(_CLASS_WIDTH) - 1
    return size


def _overlap_pairwise(pred: list[np.ndarray], alt: list[np.ndarray]):
    """Multiset overlap of texts given as columns of word ids, comparing every pair of words.

    An alternative's word ``j`` is shared when its rank among the equal words
    before it (itself included) is at most the prediction's count of that word.
    Padding differs between ``pred`` (-1) and ``alt`` (-2): it matches nothing
    on the other side, so the texts are equal when every column is.
    """
    m = alt[0].size
    same = np.zeros(m, dtype=np.int64)
    count = np.empty(m, dtype=np.int8)
    rank = np.empty(m, dtype=np.int8)
    for j, word in enumerate(alt):
        np.equal(word, pred[0], out=count.view(bool))
        for other in pred[1:]:
            count += word == other
        rank.fill(1)
        for earlier in alt[:j]:
            rank += word == earlier
        same += rank <= count
    exact = np.ones(m, dtype=bool) if len(pred) == len(alt) else np.zeros(m, dtype=bool)
    if len(pred) == len(alt):
        for p, a in zip(pred, alt, strict=True):
            exact &= (p == a) | ((p == -1) & (a == -2))
    return same, exact


def _overlap_sorted(words, pred_start, pred_len, alt_start, alt_len):
    """Multiset overlap by sorting (pair, word) keys, for long texts."""
    n = pred_len.size
    lengths = np.concatenate([pred_len, alt_len])
    starts = np.concatenate([pred_start, alt_start])
    total = int(lengths.sum())
    offsets = np.repeat(starts - (np.cumsum(lengths) - lengths), lengths)
    codes = words[offsets + np.arange(total)]
    pair = np.repeat(np.concatenate([np.arange(n), np.arange(n)]), lengths)
    is_alt = np.repeat(np.arange(2 * n) >= n, lengths)
    key = pair * (int(codes.max()) + 1) + codes
    order = np.lexsort((is_alt, key))
    key, is_alt, pair = key[order], is_alt[order], pair[order]
    new = np.empty(key.size, dtype=bool)
    new[0] = True
    np.not_equal(key[1:], key[:-1], out=new[1:])
    run = np.cumsum(new) - 1
    in_pred = np.bincount(run, weights=~is_alt, minlength=run[-1] + 1)
    in_alt = np.bincount(run, weights=is_alt, minlength=run[-1] + 1)
    same = np.bincount(pair[new], weights=np.minimum(in_pred, in_alt), minlength=n)
    # Equal sequences: equal lengths and no position where the words differ.
    exact = pred_len == alt_len
    candidates = np.flatnonzero(exact)
    length = pred_len[candidates]
    within = np.arange(int(length.sum())) - np.repeat(np.cumsum(length) - length, length)
    differ = words[np.repeat(pred_start[candidates], length) + within] != words[
        np.repeat(alt_start[candidates], length) + within
    ]
    owner = np.repeat(np.arange(candidates.size), length)
    exact[candidates] = np.bincount(owner[differ], minlength=candidates.size) == 0
    return same.astype(np.int64), exact
