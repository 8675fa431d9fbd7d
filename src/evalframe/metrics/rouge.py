"""ROUGE as Google's rouge-score computes it, vectorized: ``rouge1``, ``rouge2``, ``rougeL``,
``rougeLsum`` and lighteval's ``rouge_t5``.

Each is a sample metric (``Float64`` per row) equal to
``rouge_score.rouge_scorer.RougeScorer([type], use_stemmer=True).score(target,
prediction)`` of rouge-score 0.1.2 (the F-measure by default; ``score="precision"`` or
``"recall"`` for the others), bit for bit: the same tokens
(:mod:`evalframe.normalize.rouge_tokenize`), the same integer counts, and the same float
operations in the same order (``precision = hits / n_prediction``, ``recall = hits /
n_target``, ``fmeasure = 2 * precision * recall / (precision + recall)``).

- ``rouge1`` / ``rouge2``: clipped n-gram overlap ``Σ min(count_target, count_prediction)``
  over the target's n-grams, divided by ``max(number of n-grams, 1)`` of each side.
- ``rougeL``: the longest common subsequence of the two token sequences.
- ``rougeLsum``: rouge-score's summary-level LCS. Both texts are split on ``"\\n"`` (empty
  pieces dropped); for each target sentence the union of its LCS positions with every
  prediction sentence (one particular LCS each: rouge-score's backtrack, which prefers a
  match, then the cell to the left only when it is strictly larger) is taken, and the
  hits are ``Σ_t min(U_t, C_t)`` over tokens ``t``, where ``U_t`` counts the union
  positions holding ``t`` over all target sentences and ``C_t`` the prediction's tokens
  ``t`` (rouge-score's double-counting guard, which decrements both counts, is exactly
  this clipped count). Precision and recall divide by the prediction's and the target's
  token counts.

Several references (a ``list[str]`` gold) are combined by ``aggregation``: ``"max"``,
rouge-score's ``RougeScorer.score_multi`` (the default), or ``"mean"``, lighteval's
``aggregation_function=np.mean``.

How it runs, per batch of rows (never per row in Python): every prediction and reference
is split into sentences and tokens by Polars string expressions, tokens are encoded as
integers (a categorical encoding; the distinct words are stemmed once), and the encoding is
one shared expression, so ``rouge1``, ``rouge2`` and ``rougeL`` requested together tokenise
once. n-gram counts and their clipped overlaps are a group-by and a join; the LCS lengths of
``rougeL`` come from ``rapidfuzz.process.cpdist`` with ``LCSseq.similarity`` over the token
sequences written as strings of one code point per token id (multi-threaded); ``rougeLsum``
runs its own batched dynamic programme (numpy, one row of the table at a time for a whole
bucket of sentence pairs of similar lengths, then a vectorized backtrack) over the
*distinct* (target sentence, prediction sentence) pairs.

>>> import polars as pl
>>> from evalframe import metrics as M
>>> df = pl.DataFrame({
...     "pred": ["The cats sat on the mat.", "a b c", "", None],
...     "gold": [["A cat sat on a mat", "dogs"], ["c b a"], ["x"], ["y"]],
... })
>>> df.select(M.rouge1("pred", "gold").alias("r1"), M.rouge2("pred", "gold").alias("r2"),
...           M.rougeL("pred", "gold").alias("rL"))
shape: (4, 3)
┌──────────┬──────┬──────────┐
│ r1       ┆ r2   ┆ rL       │
│ ---      ┆ ---  ┆ ---      │
│ f64      ┆ f64  ┆ f64      │
╞══════════╪══════╪══════════╡
│ 0.666667 ┆ 0.4  ┆ 0.666667 │
│ 1.0      ┆ 0.0  ┆ 0.333333 │
│ 0.0      ┆ 0.0  ┆ 0.0      │
│ null     ┆ null ┆ null     │
└──────────┴──────┴──────────┘
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import polars as pl

from evalframe._expr import IntoExpr, elementwise, guard, parse_into_expr
from evalframe.errors import EvalframeError
from evalframe.metrics._text_inputs import as_alternatives, empty_gold_check
from evalframe.metrics._text_rules import TEXT_PAIR, documented, generated
from evalframe.metrics._token_f1 import expression_key, shared
from evalframe.metrics.registry import Reference, register
from evalframe.normalize.rouge_tokenize import encode_texts, implode_by_row
from evalframe.normalize.table import TextFunction, resolve_normalizer

__all__ = ["rouge1", "rouge2", "rougeL", "rougeLsum", "rouge_n", "rouge_t5"]

ROUGE_SCORE_VERSION = "0.1.2"
LIGHTEVAL_VERSION = "0.13.0"

Score = Literal["fmeasure", "precision", "recall"]
Aggregation = Literal["max", "mean"]
RougeType = Literal["rouge1", "rouge2", "rougeL", "rougeLsum"]

_SCORES = ("fmeasure", "precision", "recall")
_AGGREGATIONS = ("max", "mean")
_ROUGE_TYPES = ("rouge1", "rouge2", "rougeL", "rougeLsum")

#: Cells of dynamic-programming table held at once by the rougeLsum kernel.
_CELL_BUDGET = 1 << 22
#: The largest code point; token ids past it (with the surrogates skipped) do not fit.
_MAX_CODE_POINT = 0x10FFFF


# --- options -----------------------------------------------------------------------------


def _check_choice(metric: str, option: str, value: object, allowed: Sequence[str]) -> None:
    if value not in allowed:
        raise EvalframeError(
            f"metric {metric!r}: {option}={value!r} is invalid; expected one of "
            f"{', '.join(repr(a) for a in allowed)}"
        )


def _bigbench_normalize(text: pl.Expr) -> pl.Expr:
    """lighteval's ``bigbench_normalizer``: ``text.replace(" . ", ".\\n")``."""
    return text.str.replace_all(" . ", ".\n", literal=True)


# --- the shared encoding -------------------------------------------------------------------

#: The encoding's struct: token ids + 1 per text, with 0 between two sentences.
_ENCODED = pl.Struct({"pred": pl.List(pl.Int64), "gold": pl.List(pl.List(pl.Int64))})


def _encoded(
    prediction: IntoExpr, gold: IntoExpr, *, use_stemmer: bool, normalize: TextFunction | None
) -> pl.Expr:
    """The tokens of prediction and references as one struct column, shared by the metrics.

    Built once per (inputs, stemmer, normaliser): metrics requested together hold the same
    expression object, so polars computes it once.
    """
    pred = parse_into_expr(prediction).cast(pl.String)
    golds = as_alternatives(gold)

    def kernel(series: Sequence[pl.Series]) -> pl.Series:
        return _encode(series[0], series[1], use_stemmer=use_stemmer, normalize=normalize)

    def build() -> pl.Expr:
        return elementwise([pred, golds], kernel, _ENCODED)

    keys = (expression_key(pred), expression_key(golds))
    key = None if None in keys else ("rouge_encode", *keys, use_stemmer, id(normalize))
    return shared(key, build, keep_alive=normalize)


def _encode(
    pred: pl.Series, gold: pl.Series, *, use_stemmer: bool, normalize: TextFunction | None
) -> pl.Series:
    n = len(pred)
    pred = pred.cast(pl.String).rechunk()
    gold = gold.cast(pl.List(pl.String)).rechunk()
    n_alternatives = gold.list.len().fill_null(0).to_numpy().astype(np.int64)
    alternatives = gold.explode(empty_as_null=False, keep_nulls=False)
    texts = pl.concat([pred, alternatives])
    if normalize is not None:
        texts = pl.DataFrame({"text": texts}).select(normalize(pl.col("text")))["text"]
    sentences = texts.str.split("\n")
    n_sentences = sentences.list.len().fill_null(0).to_numpy().astype(np.int64)
    encoded = encode_texts(
        sentences.explode(empty_as_null=False, keep_nulls=False), use_stemmer=use_stemmer
    )
    # every sentence gets its tokens (id + 1) and a trailing 0; the last 0 of each text
    # is then removed, leaving one 0 between two sentences of a text
    sentence_end = np.cumsum(encoded.lengths)
    ids = np.insert(encoded.ids + 1, sentence_end, 0)
    text_length = np.bincount(
        np.repeat(np.arange(len(texts), dtype=np.int64), n_sentences),
        weights=encoded.lengths + 1,
        minlength=len(texts),
    ).astype(np.int64)
    text_end = np.cumsum(text_length)
    has_sentences = n_sentences > 0
    ids = np.delete(ids, text_end[has_sentences] - 1)
    text_length = np.where(has_sentences, text_length - 1, 0)
    values = pl.Series(ids, dtype=pl.Int64)
    lists = implode_by_row(values, text_length, texts.is_null())
    pred_lists = lists.slice(0, n)
    gold_lists = implode_by_row(lists.slice(n), n_alternatives, gold.is_null())
    return pl.DataFrame({"pred": pred_lists, "gold": gold_lists}).to_struct("encoded").cast(
        _ENCODED
    )


# --- decoding a batch ----------------------------------------------------------------------


@dataclass(frozen=True)
class _Docs:
    """Token sequences: ``ids`` (>= 1 for a token, 0 between sentences), ``lengths`` each."""

    ids: np.ndarray
    lengths: np.ndarray

    @property
    def offsets(self) -> np.ndarray:
        offsets = np.zeros(len(self.lengths) + 1, dtype=np.int64)
        np.cumsum(self.lengths, out=offsets[1:])
        return offsets

    @property
    def owner(self) -> np.ndarray:
        return np.repeat(np.arange(len(self.lengths), dtype=np.int64), self.lengths)

    def tokens(self) -> _Docs:
        """The same texts without their sentence breaks."""
        keep = self.ids != 0
        if keep.all():
            return self
        lengths = np.bincount(self.owner[keep], minlength=len(self.lengths)).astype(np.int64)
        return _Docs(self.ids[keep], lengths)


@dataclass(frozen=True)
class _Batch:
    """One batch: ``n`` rows, the predictions (one per row), the scored (row, reference)
    pairs (``pair_row``, ascending) and their references."""

    n: int
    pred: _Docs
    pair_row: np.ndarray
    gold: _Docs


def _decode(encoded: pl.Series, *, first_only: bool) -> _Batch:
    n = len(encoded)
    pred = encoded.struct.field("pred")
    gold = encoded.struct.field("gold")
    pred_null = pred.is_null().to_numpy()
    pred_docs = _Docs(
        pred.explode(empty_as_null=False, keep_nulls=False).to_numpy().astype(np.int64),
        pred.list.len().fill_null(0).to_numpy().astype(np.int64),
    )
    n_alternatives = gold.list.len().fill_null(0).to_numpy().astype(np.int64)
    alternatives = gold.explode(empty_as_null=False, keep_nulls=False)
    alt_row = np.repeat(np.arange(n, dtype=np.int64), n_alternatives)
    ok = ~alternatives.is_null().to_numpy() & ~pred_null[alt_row]
    if first_only:
        first = np.zeros(len(alt_row), dtype=bool)
        starts = np.cumsum(n_alternatives) - n_alternatives
        first[starts[n_alternatives > 0]] = True
        ok &= first
    alt_lengths = alternatives.list.len().fill_null(0).to_numpy().astype(np.int64)
    alt_ids = alternatives.explode(empty_as_null=False, keep_nulls=False).to_numpy()
    keep_token = np.repeat(ok, alt_lengths)
    gold_docs = _Docs(alt_ids.astype(np.int64)[keep_token], alt_lengths[ok])
    return _Batch(n, pred_docs, alt_row[ok], gold_docs)


# --- per-pair statistics -------------------------------------------------------------------


def _fmeasure(precision: np.ndarray, recall: np.ndarray) -> np.ndarray:
    """``scoring.fmeasure``: ``2 * precision * recall / (precision + recall)``, else 0.0."""
    total = precision + recall
    with np.errstate(divide="ignore", invalid="ignore"):
        value = 2 * precision * recall / total
    return np.where(total > 0, value, 0.0)


def _clipped(
    gold_pair: np.ndarray,
    gold_key: np.ndarray,
    pred_row: np.ndarray,
    pred_key: np.ndarray,
    pair_row: np.ndarray,
) -> np.ndarray:
    """``Σ_key min(count in the pair's reference, count in its row's prediction)`` per pair.

    Counts are a sort of packed (owner, key) integers; the two sides meet by (row, key).
    """
    n_pairs = len(pair_row)
    if not len(gold_key) or not len(pred_key):
        return np.zeros(n_pairs, dtype=np.int64)
    width = int(max(gold_key.max(), pred_key.max())) + 1
    owners = max(n_pairs, int(pred_row.max()) + 1)
    if owners * width >= 1 << 62:  # keys too wide to pack with their owner: renumber
        dense = np.unique(np.concatenate([gold_key, pred_key]), return_inverse=True)[1]
        gold_key, pred_key = dense[: len(gold_key)], dense[len(gold_key) :]
        width = int(dense.max()) + 1
    # one packed integer per (owner, key); counts by sorting (np.unique), and each
    # reference count meets its prediction count by a binary search
    gold_packed, in_gold = np.unique(gold_pair * width + gold_key, return_counts=True)
    pred_packed, in_pred = np.unique(pred_row * width + pred_key, return_counts=True)
    pair = gold_packed // width
    at = pair_row[pair] * width + gold_packed % width
    found = np.minimum(np.searchsorted(pred_packed, at), len(pred_packed) - 1)
    hit = pred_packed[found] == at
    common = np.minimum(in_gold[hit], in_pred[found[hit]])
    return np.bincount(pair[hit], weights=common, minlength=n_pairs).astype(np.int64)


def _ngrams(docs: _Docs, n: int) -> tuple[np.ndarray, np.ndarray]:
    """(owner, key) of every n-gram of every doc; equal n-grams get equal integer keys."""
    lengths = docs.lengths
    position = np.arange(len(docs.ids), dtype=np.int64) - np.repeat(docs.offsets[:-1], lengths)
    start = np.flatnonzero(position <= np.repeat(lengths, lengths) - n)
    key = docs.ids[start]
    width = int(docs.ids.max(initial=0)) + 1
    for m in range(1, n):
        if (int(key.max(initial=0)) + 1) * width >= 1 << 62:
            key = np.unique(key, return_inverse=True)[1].astype(np.int64)
        key = key * width + docs.ids[start + m]
    return docs.owner[start], key


def _ngram_statistics(batch: _Batch, n: int) -> tuple[np.ndarray, np.ndarray]:
    """(precision, recall) per pair of ``_score_ngrams`` for n-grams of size ``n``."""
    pred, gold = batch.pred.tokens(), batch.gold.tokens()
    both = _Docs(np.concatenate([pred.ids, gold.ids]), np.concatenate([pred.lengths, gold.lengths]))
    owner, key = _ngrams(both, n)
    is_pred = owner < batch.n
    common = _clipped(
        owner[~is_pred] - batch.n, key[~is_pred], owner[is_pred], key[is_pred], batch.pair_row
    )
    pred_count = np.maximum(pred.lengths[batch.pair_row] - n + 1, 0)
    gold_count = np.maximum(gold.lengths - n + 1, 0)
    precision = common / np.maximum(pred_count, 1)
    recall = common / np.maximum(gold_count, 1)
    return precision, recall


def _as_sequences(docs: _Docs) -> pl.Series:
    """Each doc as a string of one code point per token id (a list of ints if too many ids)."""
    if not len(docs.lengths):
        return pl.Series([], dtype=pl.String)
    top = int(docs.ids.max(initial=0))
    points = np.arange(top + 1, dtype=np.int64)
    points = np.where(points >= 0xD800, points + 0x800, points)  # skip the surrogates
    if points[-1] > _MAX_CODE_POINT:
        values = pl.Series(docs.ids, dtype=pl.Int64)
        return implode_by_row(values, docs.lengths, pl.repeat(False, len(docs.lengths), eager=True))
    table = pl.Series(list(points.astype("<u4").tobytes().decode("utf-32-le")), dtype=pl.String)
    chars = table.gather(docs.ids)
    nulls = pl.repeat(False, len(docs.lengths), eager=True)
    return implode_by_row(chars, docs.lengths, nulls).list.join("")


def _lcs_statistics(batch: _Batch) -> tuple[np.ndarray, np.ndarray]:
    """(precision, recall) per pair of ``_score_lcs``: LCS length over each side's length."""
    from rapidfuzz import process
    from rapidfuzz.distance import LCSseq

    pred, gold = batch.pred.tokens(), batch.gold.tokens()
    n_pairs = len(batch.pair_row)
    pred_length = pred.lengths[batch.pair_row]
    both = _Docs(np.concatenate([pred.ids, gold.ids]), np.concatenate([pred.lengths, gold.lengths]))
    sequences = _as_sequences(both)
    lcs = np.zeros(n_pairs, dtype=np.int64)
    scored = np.flatnonzero((pred_length > 0) & (gold.lengths > 0))
    if len(scored):
        queries = sequences.gather(batch.pair_row[scored]).to_list()
        choices = sequences.gather(batch.n + scored).to_list()
        lcs[scored] = process.cpdist(
            queries, choices, scorer=LCSseq.similarity, workers=-1, dtype=np.int64
        )
    with np.errstate(divide="ignore", invalid="ignore"):
        precision = np.where(lcs > 0, lcs / pred_length, 0.0)
        recall = np.where(lcs > 0, lcs / gold.lengths, 0.0)
    return precision, recall


@dataclass(frozen=True)
class _Sentences:
    """The non-empty sentences of some docs: their tokens, owner doc and first sentence."""

    tokens: _Docs  # one entry per sentence
    doc: np.ndarray  # owner doc of each sentence
    first: np.ndarray  # per doc: index of its first sentence
    count: np.ndarray  # per doc: number of sentences


def _sentences(docs: _Docs) -> _Sentences:
    n_docs = len(docs.lengths)
    is_start = docs.ids == 0
    # a sentence starts at a doc's first position and after every break
    starts = np.zeros(len(docs.ids), dtype=bool)
    starts[docs.offsets[:-1][docs.lengths > 0]] = True
    starts[1:] |= is_start[:-1]
    sentence = np.cumsum(starts) - 1
    token = ~is_start
    sentence, owner, ids = sentence[token], docs.owner[token], docs.ids[token]
    # number the sentences that hold tokens, in order
    new = np.ones(len(sentence), dtype=bool)
    new[1:] = sentence[1:] != sentence[:-1]
    dense = np.cumsum(new) - 1
    n_sentences = int(dense[-1]) + 1 if len(dense) else 0
    lengths = np.bincount(dense, minlength=n_sentences).astype(np.int64)
    doc = owner[new]
    count = np.bincount(doc, minlength=n_docs).astype(np.int64)
    first = np.cumsum(count) - count
    return _Sentences(_Docs(ids, lengths), doc, first, count)


def _lcs_marks(
    refs: _Docs, ref_index: np.ndarray, cands: _Docs, cand_index: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """rouge-score's ``lcs_ind(ref, cand)`` for each pair (ref_index[k], cand_index[k]).

    Returns (pair, position): the positions in the reference sentence of the LCS that
    ``_backtrack_norec`` reads out. Pairs are bucketed by padded lengths; per bucket the
    table is filled a row at a time (``t[i][j] = max(t[i-1][j], t[i][j-1],
    t[i-1][j-1] + 1 if equal)``, which equals rouge-score's recurrence because a match
    is never worse than either neighbour), then all pairs are backtracked together.
    """
    ref_len = refs.lengths[ref_index]
    cand_len = cands.lengths[cand_index]
    ref_offsets, cand_offsets = refs.offsets, cands.offsets
    rows_r = _bucket(ref_len)
    rows_c = _bucket(cand_len)
    order = np.lexsort((rows_c, rows_r))
    out_pair: list[np.ndarray] = []
    out_position: list[np.ndarray] = []
    bucket_key = rows_r[order] * (int(rows_c.max(initial=0)) + 1) + rows_c[order]
    bounds = np.flatnonzero(np.diff(bucket_key, prepend=-1, append=-1))
    for lo, hi in itertools.pairwise(bounds):
        R, C = int(rows_r[order[lo]]), int(rows_c[order[lo]])
        step = max(1, _CELL_BUDGET // ((R + 1) * (C + 1)))
        for start in range(lo, hi, step):
            members = order[start : min(hi, start + step)]
            pair, position = _backtrack_bucket(
                _padded(refs.ids, ref_offsets[ref_index[members]], ref_len[members], R, -1),
                _padded(cands.ids, cand_offsets[cand_index[members]], cand_len[members], C, -2),
                ref_len[members],
                cand_len[members],
            )
            out_pair.append(members[pair])
            out_position.append(position)
    if not out_pair:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty
    return np.concatenate(out_pair), np.concatenate(out_position)


def _bucket(lengths: np.ndarray) -> np.ndarray:
    """Padded length: exact up to 16, then rounded up to a multiple of 1/8 of a power of 2."""
    lengths = np.asarray(lengths, dtype=np.int64)
    scale = np.maximum(np.floor(np.log2(np.maximum(lengths, 1))).astype(np.int64) - 3, 0)
    unit = np.left_shift(np.int64(1), scale)
    rounded = -(-lengths // unit) * unit
    return np.where(lengths <= 16, lengths, rounded)


def _padded(
    ids: np.ndarray, starts: np.ndarray, lengths: np.ndarray, width: int, fill: int
) -> np.ndarray:
    """(pairs, width) matrix of each sequence's ids, padded with ``fill``."""
    column = np.arange(width, dtype=np.int64)
    inside = column[None, :] < lengths[:, None]
    index = np.where(inside, starts[:, None] + column[None, :], 0)
    return np.where(inside, ids[index] if len(ids) else fill, fill)


def _backtrack_bucket(
    ref: np.ndarray, cand: np.ndarray, ref_len: np.ndarray, cand_len: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """LCS table and ``_backtrack_norec`` for a bucket of equally padded pairs."""
    B, R = ref.shape
    C = cand.shape[1]
    dtype = np.int32 if min(R, C) >= 1 << 15 else np.int16
    table = np.zeros((B, R + 1, C + 1), dtype=dtype)
    equal = ref[:, :, None] == cand[:, None, :]
    for i in range(1, R + 1):
        above = table[:, i - 1, :]
        diagonal = np.where(equal[:, i - 1, :], above[:, :-1] + 1, 0).astype(dtype)
        np.maximum.accumulate(np.maximum(above[:, 1:], diagonal), axis=1, out=table[:, i, 1:])
    # backtrack from (len(ref), len(cand)) of every pair at once
    i, j = ref_len.copy(), cand_len.copy()
    alive = np.flatnonzero((i > 0) & (j > 0))
    pairs: list[np.ndarray] = []
    positions: list[np.ndarray] = []
    while len(alive):
        ii, jj = i[alive], j[alive]
        match = equal[alive, ii - 1, jj - 1]
        if match.any():
            pairs.append(alive[match])
            positions.append(ii[match] - 1)
        left = table[alive, ii, jj - 1] > table[alive, ii - 1, jj]
        i[alive] = ii - (match | ~left)
        j[alive] = jj - (match | left)
        alive = alive[(i[alive] > 0) & (j[alive] > 0)]
    if not pairs:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty
    return np.concatenate(pairs), np.concatenate(positions).astype(np.int64)


def _summary_statistics(batch: _Batch) -> tuple[np.ndarray, np.ndarray]:
    """(precision, recall) per pair of ``_summary_level_lcs`` (rougeLsum)."""
    n_pairs = len(batch.pair_row)
    cand = _sentences(batch.pred)
    ref = _sentences(batch.gold)
    pred_tokens = cand.tokens.lengths
    gold_tokens = ref.tokens.lengths
    m = np.bincount(ref.doc, weights=gold_tokens, minlength=n_pairs).astype(np.int64)
    n_cand = np.bincount(cand.doc, weights=pred_tokens, minlength=batch.n).astype(np.int64)
    n = n_cand[batch.pair_row]

    # every (reference sentence, prediction sentence) of a pair, then the distinct ones
    ref_pair = ref.doc
    per_ref = cand.count[batch.pair_row[ref_pair]]
    ref_of = np.repeat(np.arange(len(ref_pair), dtype=np.int64), per_ref)
    rank = np.arange(len(ref_of), dtype=np.int64) - np.repeat(np.cumsum(per_ref) - per_ref, per_ref)
    cand_of = cand.first[batch.pair_row[ref_pair[ref_of]]] + rank
    content = _content_ids(ref.tokens, cand.tokens)
    ref_content, cand_content = content[: len(gold_tokens)], content[len(gold_tokens) :]
    key = ref_content[ref_of] * (int(content.max(initial=0)) + 1) + cand_content[cand_of]
    _, first, distinct = np.unique(key, return_index=True, return_inverse=True)
    mark_pair, mark_position = _lcs_marks(
        ref.tokens, ref_of[first], cand.tokens, cand_of[first]
    )
    # expand each distinct pair's marks to its occurrences: positions in the whole
    # reference token array, then their union
    order = np.argsort(mark_pair, kind="stable")
    mark_pair, mark_position = mark_pair[order], mark_position[order]
    n_marks = np.bincount(mark_pair, minlength=len(first)).astype(np.int64)
    mark_start = np.cumsum(n_marks) - n_marks
    counts = n_marks[distinct]
    total = int(counts.sum())
    within = np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(counts) - counts, counts)
    index = np.repeat(mark_start[distinct], counts) + within
    ref_offsets = ref.tokens.offsets
    union = np.unique(np.repeat(ref_offsets[:-1][ref_of], counts) + mark_position[index])
    token_pair = np.repeat(ref_pair, gold_tokens)
    hits = _clipped(
        token_pair[union],
        ref.tokens.ids[union],
        np.repeat(cand.doc, pred_tokens),
        cand.tokens.ids,
        batch.pair_row,
    )
    with np.errstate(divide="ignore", invalid="ignore"):
        precision = np.where((n > 0) & (m > 0), hits / n, 0.0)
        recall = np.where((n > 0) & (m > 0), hits / m, 0.0)
    return precision, recall


def _content_ids(*groups: _Docs) -> np.ndarray:
    """An integer per token sequence, equal exactly when the sequences are equal."""
    docs = _Docs(
        np.concatenate([g.ids for g in groups]), np.concatenate([g.lengths for g in groups])
    )
    if not len(docs.lengths):
        return np.zeros(0, dtype=np.int64)
    sequences = _as_sequences(docs)
    if sequences.dtype != pl.String:  # too many token ids for code points: decimal ids
        sequences = sequences.cast(pl.List(pl.String)).list.join(" ")
    categories = pl.Categories.random()
    coded = sequences.cast(pl.Categorical(categories))
    return coded.to_physical().to_numpy().astype(np.int64)


_STATISTICS: dict[str, Callable[[_Batch], tuple[np.ndarray, np.ndarray]]] = {
    "rouge1": lambda batch: _ngram_statistics(batch, 1),
    "rouge2": lambda batch: _ngram_statistics(batch, 2),
    "rougeL": _lcs_statistics,
    "rougeLsum": _summary_statistics,
}


def _statistics(rouge_type: str) -> Callable[[_Batch], tuple[np.ndarray, np.ndarray]]:
    if rouge_type in _STATISTICS:
        return _STATISTICS[rouge_type]
    return lambda batch: _ngram_statistics(batch, int(rouge_type[5:]))


def _per_row(
    batch: _Batch,
    precision: np.ndarray,
    recall: np.ndarray,
    *,
    score: str,
    aggregation: str,
) -> pl.Series:
    """One value per row from its pairs: score_multi's best F-measure, or the mean."""
    fmeasure = _fmeasure(precision, recall)
    field = {"precision": precision, "recall": recall, "fmeasure": fmeasure}[score]
    out = np.full(batch.n, np.nan)
    pair_row = batch.pair_row
    if len(pair_row):
        starts = np.flatnonzero(np.diff(pair_row, prepend=-1))
        rows = pair_row[starts]
        counts = np.diff(starts, append=len(pair_row))
        if aggregation == "mean":
            # np.mean's own summation order (pairwise), one matrix per number of references
            for count in np.unique(counts):
                chosen = np.flatnonzero(counts == count)
                block = field[starts[chosen][:, None] + np.arange(count)[None, :]]
                out[rows[chosen]] = np.mean(block, axis=1)
        else:
            best = np.maximum.reduceat(fmeasure, starts)
            segment = np.repeat(np.arange(len(starts)), counts)
            index = np.arange(len(pair_row))
            is_best = fmeasure == best[segment]
            chosen = np.minimum.reduceat(np.where(is_best, index, len(pair_row)), starts)
            out[rows] = field[chosen]
    return pl.Series(out, dtype=pl.Float64).fill_nan(None)


# --- metric expressions --------------------------------------------------------------------


def _rouge(
    metric: str,
    prediction: IntoExpr,
    gold: IntoExpr,
    *,
    rouge_type: str,
    score: str,
    use_stemmer: bool,
    aggregation: str,
    normalize: TextFunction | None,
    first_only: bool = False,
    scale: float | None = None,
) -> pl.Expr:
    _check_choice(metric, "score", score, _SCORES)
    _check_choice(metric, "aggregation", aggregation, _AGGREGATIONS)
    if not isinstance(use_stemmer, bool):
        raise EvalframeError(f"metric {metric!r}: use_stemmer={use_stemmer!r}; expected a bool")
    encoded = _encoded(prediction, gold, use_stemmer=use_stemmer, normalize=normalize)
    statistics = _statistics(rouge_type)

    def kernel(series: Sequence[pl.Series]) -> pl.Series:
        batch = _decode(series[0], first_only=first_only)
        precision, recall = statistics(batch)
        values = _per_row(batch, precision, recall, score=score, aggregation=aggregation)
        return values * scale if scale is not None else values

    values = elementwise([encoded], kernel, pl.Float64)
    return guard(metric, values, [empty_gold_check(gold)])


# --- the metrics ---------------------------------------------------------------------------

_EDGE_RULES = (
    "tokens are rouge-score's: lower-cased text, every run of characters outside [a-z0-9] a "
    "separator; non-ASCII letters (accents, Cyrillic, CJK, combining marks) are deleted, so a "
    "text written in them has no tokens (U+0130 and the Kelvin sign lower-case to 'i'/'k')",
    "use_stemmer=True (default): nltk's PorterStemmer on tokens longer than 3 characters, "
    "each distinct token stemmed once",
    "a side without tokens ('' , whitespace, punctuation, non-ASCII only) scores 0.0, both "
    "sides empty included (rouge-score's rule)",
    "several references: aggregation='max' takes the reference with the highest F-measure "
    "(the first of equals, score_multi) and reports its score field; aggregation='mean' "
    "averages the field over the references (lighteval)",
    "null prediction or null gold -> null; null references inside a list are skipped, a "
    "list of only nulls -> null; an empty gold list raises EvalframeError",
)
_LIGHTEVAL_DIVERGENCE = (
    "lighteval 0.13.0's Metrics.{name} builds RougeScorer without a stemmer and averages the "
    "F-measure over the references (aggregation_function=np.mean); evalframe's default "
    "follows rouge-score with use_stemmer=True and score_multi's maximum; "
    "{name}(use_stemmer=false, aggregation=mean) is lighteval's"
)

#: The docstring sections of the rouge-score metrics (rouge1, rouge2, rougeL, rougeLsum and
#: rouge_n share one signature).
_SECTIONS = {
    "parameters": """
        prediction
            ``String`` column (name or expression): the summary scored.
        gold
            ``String`` or ``List(String)`` column: the reference, or several references.
        score
            ``"fmeasure"`` (default), ``"precision"`` or ``"recall"``.
        use_stemmer
            rouge-score's ``use_stemmer``: Porter-stem tokens longer than 3 characters.
            Default True.
        aggregation
            How several references combine: ``"max"`` (default; rouge-score's
            ``score_multi``: the reference with the best F-measure, the first of equals) or
            ``"mean"`` (lighteval's default: the mean of the field over the references).
        normalizer
            A name from the normaliser table or a function from ``pl.Expr`` to ``pl.Expr``,
            applied to both texts before tokenising. Default ``"none"``.
        """,
    "returns": """
        Returns
        -------
        pl.Expr
            ``Float64`` in [0, 1] per row; null where the prediction or the gold is null.
        """,
}

_DOC = """{summary}

    {details}

    Parameters
    ----------
    {parameters}

    {returns}

    Notes
    -----
    {reference}

    Examples
    --------
    {example}
    """


def _rouge_score(
    rouge_type: str,
    prediction: IntoExpr,
    gold: IntoExpr,
    score: str,
    use_stemmer: bool,
    aggregation: str,
    normalizer: str | TextFunction | None,
) -> pl.Expr:
    """rouge-score's ``rouge_type`` with the user's options (the normaliser by name)."""
    _, normalize = resolve_normalizer(rouge_type, normalizer)
    return _rouge(
        rouge_type, prediction, gold, rouge_type=rouge_type, score=score,
        use_stemmer=use_stemmer, aggregation=aggregation, normalize=normalize,
    )


def _rouge_metric(
    rouge_type: str, *, summary: str, description: str, rules: tuple[str, ...], example: str,
    details: str = "",
) -> Callable[..., pl.Expr]:
    """The rouge-score metric ``rouge_type``, documented and registered."""

    def metric(
        prediction: IntoExpr,
        gold: IntoExpr,
        *,
        score: Score = "fmeasure",
        use_stemmer: bool = True,
        aggregation: Aggregation = "max",
        normalizer: str | TextFunction | None = "none",
    ) -> pl.Expr:
        return _rouge_score(rouge_type, prediction, gold, score, use_stemmer, aggregation,
                            normalizer)

    reference = (
        f"rouge_scorer.RougeScorer(['{rouge_type}'], use_stemmer=True).score(target, prediction)"
    )
    registration = register(
        rouge_type,
        **TEXT_PAIR,
        reference=Reference("rouge-score", ROUGE_SCORE_VERSION, reference),
        description=description,
        edge_rules=(*_EDGE_RULES, *rules),
        divergences=(_LIGHTEVAL_DIVERGENCE.format(name=rouge_type),),
    )
    return generated(
        metric, rouge_type, _DOC, registration, **_SECTIONS, summary=summary,
        details=details, example=example,
        reference=f"``rouge_score.{reference}``\n(target first) of rouge-score "
        f"{ROUGE_SCORE_VERSION}, bit for bit.",
    )


rouge1 = _rouge_metric(
    "rouge1",
    summary="""ROUGE-1: unigram overlap, as ``RougeScorer(["rouge1"], use_stemmer=True).score``.""",
    description="ROUGE-1 F-measure (unigram overlap), rouge-score with the Porter stemmer",
    rules=("clipped unigram counts: precision = overlap / max(prediction tokens, 1)",),
    example="""
        >>> import polars as pl
        >>> df = pl.DataFrame({"pred": ["The cats ran", "Привет", None],
        ...                    "gold": [["a cat runs", "the dog"], ["Привет"], ["x"]]})
        >>> df.with_columns(rouge1("pred", "gold").alias("f"),
        ...                 rouge1("pred", "gold", score="recall", use_stemmer=False).alias("r"))
        shape: (3, 4)
        ┌──────────────┬───────────────────────────┬──────┬──────┐
        │ pred         ┆ gold                      ┆ f    ┆ r    │
        │ ---          ┆ ---                       ┆ ---  ┆ ---  │
        │ str          ┆ list[str]                 ┆ f64  ┆ f64  │
        ╞══════════════╪═══════════════════════════╪══════╪══════╡
        │ The cats ran ┆ ["a cat runs", "the dog"] ┆ 0.4  ┆ 0.5  │
        │ Привет       ┆ ["Привет"]                ┆ 0.0  ┆ 0.0  │
        │ null         ┆ ["x"]                     ┆ null ┆ null │
        └──────────────┴───────────────────────────┴──────┴──────┘
        """,
)

rouge2 = _rouge_metric(
    "rouge2",
    summary="""ROUGE-2: bigram overlap, as ``RougeScorer(["rouge2"], use_stemmer=True).score``.""",
    description="ROUGE-2 F-measure (bigram overlap), rouge-score with the Porter stemmer",
    rules=("a side with fewer than 2 tokens has no bigrams and scores 0.0",),
    example="""
        >>> import polars as pl
        >>> df = pl.DataFrame({"pred": ["the quick brown fox", "fox", None],
        ...                    "gold": ["The quick brown dog", "fox", "x"]})
        >>> df.with_columns(rouge2("pred", "gold").alias("rouge2"))
        shape: (3, 3)
        ┌─────────────────────┬─────────────────────┬──────────┐
        │ pred                ┆ gold                ┆ rouge2   │
        │ ---                 ┆ ---                 ┆ ---      │
        │ str                 ┆ str                 ┆ f64      │
        ╞═════════════════════╪═════════════════════╪══════════╡
        │ the quick brown fox ┆ The quick brown dog ┆ 0.666667 │
        │ fox                 ┆ fox                 ┆ 0.0      │
        │ null                ┆ x                   ┆ null     │
        └─────────────────────┴─────────────────────┴──────────┘
        """,
)

rougeL = _rouge_metric(
    "rougeL",
    summary="""ROUGE-L: longest common subsequence, as ``RougeScorer(["rougeL"], ...).score``.""",
    details="See :func:`rougeLsum` for the summary-level variant.",
    description="ROUGE-L F-measure (longest common subsequence), rouge-score",
    rules=("newlines are ordinary separators (one token sequence per text)",),
    example="""
        >>> import polars as pl
        >>> df = pl.DataFrame({"pred": ["the brown quick fox", "", None],
        ...                    "gold": ["the quick brown fox", "", "x"]})
        >>> df.with_columns(rougeL("pred", "gold").alias("rougeL"))
        shape: (3, 3)
        ┌─────────────────────┬─────────────────────┬────────┐
        │ pred                ┆ gold                ┆ rougeL │
        │ ---                 ┆ ---                 ┆ ---    │
        │ str                 ┆ str                 ┆ f64    │
        ╞═════════════════════╪═════════════════════╪════════╡
        │ the brown quick fox ┆ the quick brown fox ┆ 0.75   │
        │                     ┆                     ┆ 0.0    │
        │ null                ┆ x                   ┆ null   │
        └─────────────────────┴─────────────────────┴────────┘
        """,
)

rougeLsum = _rouge_metric(
    "rougeLsum",
    summary="ROUGE-Lsum: summary-level LCS over newline-separated sentences (rouge-score's).",
    details="""
        Only ``"\\n"`` separates sentences (a ``"\\r"`` is an ordinary separator;
        rouge-score's default ``split_summaries=False``).
        """,
    description="ROUGE-Lsum F-measure (summary-level LCS over newline-separated sentences)",
    rules=(
        "sentences are text.split('\\n') pieces, empty ones dropped; per reference sentence "
        "the union of rouge-score's LCS positions with every prediction sentence; hits "
        "clipped by the token counts of both texts (rouge-score's double-counting guard)",
        "without newlines rougeLsum equals rougeL",
    ),
    example="""
        >>> import polars as pl
        >>> df = pl.DataFrame({"pred": ["the cat sat\\non the mat", "a b", None],
        ...                    "gold": ["on the mat\\nthe cat sat", "a b", "x"]})
        >>> df.with_columns(rougeLsum("pred", "gold").alias("Lsum"),
        ...                 rougeL("pred", "gold").alias("L"))
        shape: (3, 4)
        ┌─────────────┬─────────────┬──────┬──────┐
        │ pred        ┆ gold        ┆ Lsum ┆ L    │
        │ ---         ┆ ---         ┆ ---  ┆ ---  │
        │ str         ┆ str         ┆ f64  ┆ f64  │
        ╞═════════════╪═════════════╪══════╪══════╡
        │ the cat sat ┆ on the mat  ┆ 1.0  ┆ 0.5  │
        │ on the mat  ┆ the cat sat ┆      ┆      │
        │ a b         ┆ a b         ┆ 1.0  ┆ 1.0  │
        │ null        ┆ x           ┆ null ┆ null │
        └─────────────┴─────────────┴──────┴──────┘
        """,
)


@documented(**_SECTIONS)
def rouge_n(
    prediction: IntoExpr,
    gold: IntoExpr,
    *,
    n: int,
    score: Score = "fmeasure",
    use_stemmer: bool = True,
    aggregation: Aggregation = "max",
    normalizer: str | TextFunction | None = "none",
) -> pl.Expr:
    """ROUGE-N for any n-gram size ``n`` in 1..9 (rouge-score's ``rouge{n}``).

    The edge rules are :func:`rouge1`'s.

    Parameters
    ----------
    n
        The n-gram size, 1 to 9.
    {parameters}

    {returns}

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"pred": ["a b c d", None], "gold": ["a b c x", "a"]})
    >>> df.with_columns(rouge_n("pred", "gold", n=3).alias("rouge3"))
    shape: (2, 3)
    ┌─────────┬─────────┬────────┐
    │ pred    ┆ gold    ┆ rouge3 │
    │ ---     ┆ ---     ┆ ---    │
    │ str     ┆ str     ┆ f64    │
    ╞═════════╪═════════╪════════╡
    │ a b c d ┆ a b c x ┆ 0.5    │
    │ null    ┆ a       ┆ null   │
    └─────────┴─────────┴────────┘
    """
    if not isinstance(n, int) or isinstance(n, bool) or not 1 <= n <= 9:
        raise EvalframeError(f"metric 'rouge{n}': n={n!r}; expected an integer from 1 to 9")
    return _rouge_score(f"rouge{n}", prediction, gold, score, use_stemmer, aggregation,
                        normalizer)


@register(
    "rouge_t5",
    **TEXT_PAIR,
    reference=Reference(
        "lighteval", LIGHTEVAL_VERSION,
        "metrics.Metrics.rouge_t5 (ROUGE(bootstrap=True, normalize_*=bigbench_normalizer))",
    ),
    description="Lighteval's T5-style ROUGE (0-100, no stemmer, ' . ' ends a sentence)",
    edge_rules=(
        "both texts: ' . ' replaced by '.\\n' (lighteval's bigbench_normalizer), then "
        "rouge-score without a stemmer; the F-measure times 100",
        "only the first reference counts (lighteval zips the references with the one "
        "prediction); its bootstrap over one pair is the pair's value",
        *_EDGE_RULES[:3],
        "null prediction, null gold or a null first reference -> null; an empty gold list "
        "raises EvalframeError",
    ),
    bounds=(0.0, 100.0),
)
def rouge_t5(
    prediction: IntoExpr, gold: IntoExpr, *, rouge_type: RougeType = "rougeLsum"
) -> pl.Expr:
    """lighteval's ``rouge_t5``: T5-style ROUGE on a 0-100 scale, one type at a time.

    lighteval 0.13.0's ``Metrics.rouge_t5`` is ``ROUGE(["rouge1", "rouge2", "rougeL",
    "rougeLsum"], bootstrap=True, normalize_gold=bigbench_normalizer,
    normalize_pred=bigbench_normalizer)``: both texts get ``" . "`` replaced by
    ``".\\n"`` (so sentences end lines, for rougeLsum), the scorer has **no stemmer**,
    and ``rouge_score.scoring.BootstrapAggregator`` over ``zip(golds, predictions)``
    reports ``mid.fmeasure * 100``. With one prediction the zip holds one pair: the
    **first** reference only, and the bootstrap median of 1000 means of that one value
    is the value itself, so the score is ``100 * fmeasure`` of that pair.

    Parameters
    ----------
    prediction
        ``String`` column.
    gold
        ``String`` or ``List(String)``; only the first reference counts.
    rouge_type
        Which of lighteval's four keys: ``"rouge1"``, ``"rouge2"``, ``"rougeL"`` or
        ``"rougeLsum"`` (default).

    Returns
    -------
    pl.Expr
        ``Float64`` in [0, 100]; null where the prediction, the gold or its first
        reference is null.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"pred": ["The quick brown fox", None],
    ...                    "gold": [["The quick brown fox jumps over the lazy dog"], ["x"]]})
    >>> df.select(rouge_t5("pred", "gold").alias("Lsum"),
    ...           rouge_t5("pred", "gold", rouge_type="rouge2").alias("r2"))
    shape: (2, 2)
    ┌───────────┬───────────┐
    │ Lsum      ┆ r2        │
    │ ---       ┆ ---       │
    │ f64       ┆ f64       │
    ╞═══════════╪═══════════╡
    │ 61.538462 ┆ 54.545455 │
    │ null      ┆ null      │
    └───────────┴───────────┘
    """
    _check_choice("rouge_t5", "rouge_type", rouge_type, _ROUGE_TYPES)
    return _rouge(
        "rouge_t5", prediction, gold, rouge_type=rouge_type, score="fmeasure",
        use_stemmer=False, aggregation="max", normalize=_bigbench_normalize, first_only=True,
        scale=100.0,
    )
