"""The batch kernel behind ``drop_em`` and ``drop_f1``: both scores in one pass.

The kernel receives a batch of rows (a struct of ``prediction`` and ``gold``)
and returns both scores packed in one Int64 per row, so that the two metrics,
requested together, share one run (polars shares a Python kernel between
expressions only when its output is not a struct).

Every step is a whole-table operation:

1. rows are unrolled to one entry per scored gold alternative, and spans to one
   row per (alternative, gold span) and per (row, predicted span);
2. each distinct token is normalised once (the harness normalises token by
   token), each distinct normalised span gets an id, its bag of word ids and the
   word ids in it that are numbers;
3. every (gold span, predicted span) pair of an alternative is scored from the
   bags (equal spans score 1.0 without further work);
4. an alternative with one span on both sides takes its pair's score; one with a
   single span on one side takes the best pair over the other side (what the
   assignment picks); only alternatives with several spans on both sides run
   ``scipy.optimize.linear_sum_assignment``, one call each.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

from evalframe.errors import EvalframeError
from evalframe.normalize._python_text import whitespace_characters
from evalframe.normalize.drop import drop_is_number, normalize_spans

__all__ = ["INVALID", "score_batch", "unpack_em", "unpack_f1"]

_SPANS = pl.List(pl.String)
#: Packed value of a row with a gold alternative that has no spans.
INVALID = -1
_EM_UNIT = 128


def unpack_em(packed: pl.Expr) -> pl.Expr:
    """Exact match in hundredths (0 or 100) from the packed scores."""
    return packed // _EM_UNIT * 100


def unpack_f1(packed: pl.Expr) -> pl.Expr:
    """F1 in hundredths (0..100) from the packed scores."""
    return packed % _EM_UNIT


def _span_lists(prediction: pl.Series) -> pl.Series:
    """``str`` -> ``[str]``; ``list[str]`` unchanged (a null stays null)."""
    if prediction.dtype in (pl.String, pl.Null):
        return prediction.cast(pl.String).to_frame("p").select(pl.concat_list("p")).to_series()
    if prediction.dtype in (_SPANS, pl.List(pl.Null)):
        return prediction.cast(_SPANS)
    raise EvalframeError(
        f"drop_em/drop_f1: the prediction input has dtype {prediction.dtype}; "
        "expected str or list[str]"
    )


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
        f"drop_em/drop_f1: the gold input has dtype {gold.dtype}; expected str, list[str] or "
        "list[list[str]]"
    )


def _flat(lists: pl.Series) -> pl.Series:
    """The elements of all lists, in order (null and empty lists contribute none)."""
    return lists.explode(empty_as_null=False, keep_nulls=False)


def _any_per_list(lists: pl.Series, flags: pl.Series) -> np.ndarray:
    """Per list, whether any of its elements is flagged (``flags`` runs over :func:`_flat`)."""
    lengths = lists.list.len().fill_null(0).to_numpy()
    counts = np.concatenate([[0], np.cumsum(flags.to_numpy(), dtype=np.int64)])
    ends = np.cumsum(lengths)
    return counts[ends] > counts[ends - lengths]


def _row_status(rows: pl.DataFrame) -> pl.DataFrame:
    """Per row: ``null`` (an input, span or alternative is null), ``invalid`` (an
    alternative with no spans, in a row that is not null)."""
    predicted = rows.get_column("p")
    gold = rows.get_column("g")
    alternatives = _flat(gold)
    null_alternative = alternatives.is_null().to_numpy() | _any_per_list(
        alternatives, _flat(alternatives).is_null()
    )
    null = (
        predicted.is_null().to_numpy()
        | _any_per_list(predicted, _flat(predicted).is_null())
        | gold.is_null().to_numpy()
        | _any_per_list(gold, pl.Series(null_alternative))
    )
    empty = _any_per_list(gold, (alternatives.list.len() == 0).fill_null(False))
    return pl.DataFrame({"null": null, "invalid": ~null & empty})


@dataclass(frozen=True)
class _Bags:
    """The bags of words of distinct normalised spans, as flat arrays (CSR layout).

    Span ``i``'s words (ids, each once) are ``words[offsets[i] : offsets[i + 1]]``;
    ``is_number[w]`` tells whether word ``w`` is a number (``float()`` accepts it).
    """

    offsets: np.ndarray
    words: np.ndarray
    is_number: np.ndarray

    @classmethod
    def of(cls, normalized: pl.Series) -> _Bags:
        """Bags of normalised spans: the harness's ``set(span.split())``.

        A normalised span has single spaces only, so splitting on ``" "`` and
        dropping empty words is the same split. Whether a word is a number is
        decided once per distinct word.
        """
        bags = normalized.str.split(" ").list.filter(pl.element() != "").list.unique()
        flat = _flat(bags)
        vocabulary = flat.unique()
        words = flat.replace_strict(
            vocabulary, pl.Series(np.arange(len(vocabulary), dtype=np.int64))
        ).to_numpy()
        is_number = vocabulary.to_frame("w").select(drop_is_number("w")).to_series()
        lengths = bags.list.len().to_numpy().astype(np.int64)
        return cls(
            offsets=np.concatenate([[0], np.cumsum(lengths)]),
            words=words,
            is_number=is_number.to_numpy(),
        )

    def expand(self, spans: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For each span id in ``spans``, its words: (position in ``spans``, word id)."""
        lengths = self.offsets[spans + 1] - self.offsets[spans]
        owner = np.repeat(np.arange(spans.size), lengths)
        starts = np.repeat(self.offsets[spans] - (np.cumsum(lengths) - lengths), lengths)
        return owner, self.words[np.arange(owner.size) + starts]

    def size(self, spans: np.ndarray) -> np.ndarray:
        return self.offsets[spans + 1] - self.offsets[spans]


def _pair_scores(predicted: np.ndarray, gold: np.ndarray, bags: _Bags) -> np.ndarray:
    """The harness's span score of each (predicted span id, gold span id) pair.

    F1 of the two word bags (an empty bag has precision, or recall, 1.0), 0 when the
    gold bag has numbers and shares none with the predicted bag. Equal normalised
    spans score 1.0 directly (equal bags: precision = recall = 1, every gold number
    shared). The arithmetic is the harness's, operation for operation.
    """
    scores = np.ones(predicted.size)
    differ = np.flatnonzero(predicted != gold)
    if not differ.size:
        return scores
    p, g = predicted[differ], gold[differ]
    vocabulary = bags.is_number.size
    p_owner, p_words = bags.expand(p)
    g_owner, g_words = bags.expand(g)
    # Word ids keyed by pair: a gold word is shared when its key is among the predicted.
    g_keys = pl.Series(g_owner * vocabulary + g_words)
    shared = g_keys.is_in(pl.Series(p_owner * vocabulary + p_words)).to_numpy()
    common = np.bincount(g_owner, weights=shared, minlength=differ.size)
    g_number = bags.is_number[g_words]
    gold_numbers = np.bincount(g_owner, weights=g_number, minlength=differ.size)
    shared_numbers = np.bincount(g_owner, weights=shared & g_number, minlength=differ.size)
    p_size = bags.size(p).astype(np.float64)
    g_size = bags.size(g).astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        precision = np.where(p_size == 0, 1.0, common / p_size)
        recall = np.where(g_size == 0, 1.0, common / g_size)
        f1 = np.where(
            (precision == 0.0) & (recall == 0.0),
            0.0,
            2.0 * precision * recall / (precision + recall),
        )
    numbers_match = (gold_numbers == 0) | (shared_numbers > 0)
    scores[differ] = np.where(numbers_match, f1, 0.0)
    return scores


def _aligned_means(scores: np.ndarray, n_gold: np.ndarray, n_pred: np.ndarray) -> np.ndarray:
    """The harness's ``np.mean(_align_bags(...))`` per alternative with several spans.

    ``scores`` holds each alternative's ``n_gold x n_pred`` matrix, row-major, one
    after the other. With one span on either side the assignment takes that
    span's best pair, and the mean of ``[best, 0, ..., 0]`` is ``best / n`` exactly
    (adding zeros is exact); otherwise ``linear_sum_assignment`` runs on the matrix,
    and the aligned scores of equally wide alternatives are averaged together
    (``np.add.reduce`` along contiguous rows sums exactly as ``np.mean`` does on
    each). No predicted span (an empty matrix) scores 0.
    """
    out = np.zeros(n_gold.size)
    sizes = n_gold * n_pred
    starts = np.cumsum(sizes) - sizes
    widths = np.maximum(n_gold, n_pred)
    line = ((n_gold == 1) | (n_pred == 1)) & (sizes > 0)
    if line.any():
        out[line] = _segment_max(scores, starts[line], sizes[line]) / widths[line]
    square = np.flatnonzero(~line & (sizes > 0))
    if not square.size:
        return out
    # imported here: scipy.optimize costs ~0.2 s at start-up, and most rows never get here
    from scipy.optimize import linear_sum_assignment

    aligned = np.zeros((square.size, int(widths[square].max())))
    for k, (start, rows, columns) in enumerate(
        zip(starts[square].tolist(), n_gold[square].tolist(), n_pred[square].tolist(), strict=True)
    ):
        matrix = scores[start : start + rows * columns].reshape(rows, columns)
        gold_index, pred_index = linear_sum_assignment(-matrix)
        aligned[k, gold_index] = matrix[gold_index, pred_index]
    for width in np.unique(widths[square]).tolist():
        same = widths[square] == width
        block = np.ascontiguousarray(aligned[same, :width])
        out[square[same]] = np.add.reduce(block, axis=1) / width
    return out


def _segment_max(values: np.ndarray, starts: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """Maximum of each non-empty segment ``values[start : start + size]``."""
    packed_starts = np.cumsum(sizes) - sizes
    positions = np.arange(int(sizes.sum())) + np.repeat(starts - packed_starts, sizes)
    return np.maximum.reduceat(values[positions], packed_starts)


def score_batch(batch: pl.Series) -> pl.Series:
    """DROP em and f1 of a batch of rows, packed: ``em * 128 + f1`` in hundredths.

    ``batch`` is a struct of ``prediction`` and ``gold``. A null row (an input,
    span or alternative is null) is null; a row with a gold alternative that has
    no spans is :data:`INVALID`.
    """
    inputs = batch.struct.unnest()
    rows = pl.DataFrame(
        {
            "p": _span_lists(inputs.get_column("prediction")),
            "g": _alternative_lists(inputs.get_column("gold")),
        }
    )
    status = _row_status(rows)
    valid = rows.with_row_index("row").filter(
        ~(status.get_column("null") | status.get_column("invalid"))
    )
    # One entry per scored alternative: those whose first span is not blank.
    entries = (
        valid.select("row", "g", n_pred=pl.col("p").list.len())
        .explode("g", empty_as_null=False, keep_nulls=False)
        .filter(pl.col("g").list.first().str.strip_chars(whitespace_characters()) != "")
        .with_row_index("entry")
    )
    gold = entries.select(
        "entry", "row", gi=pl.int_ranges(pl.col("g").list.len()), g="g"
    ).explode("gi", "g")
    predicted = valid.select("row", pi=pl.int_ranges(pl.col("p").list.len()), p="p").explode(
        "pi", "p", empty_as_null=False, keep_nulls=False
    )

    # Spans -> ids of their distinct normalised texts (each distinct token normalised once).
    texts = pl.concat([gold.get_column("g"), predicted.get_column("p")]).unique()
    normalized = normalize_spans(texts)
    distinct = normalized.unique()
    text_ids = normalized.replace_strict(
        distinct, pl.Series(np.arange(len(distinct), dtype=np.uint32)), return_dtype=pl.UInt32
    )
    gold = gold.with_columns(pl.col("g").replace_strict(texts, text_ids))
    predicted = predicted.with_columns(pl.col("p").replace_strict(texts, text_ids))
    bags = _Bags.of(distinct)

    entries = entries.select("entry", "row", "n_pred", n_gold=pl.col("g").list.len())
    # Every (gold span, predicted span) pair of an alternative, in row-major matrix order.
    pairs = gold.join(predicted, on="row", how="inner", maintain_order="left_right")
    pair_predicted = pairs.get_column("p").to_numpy().astype(np.int64)
    pair_gold = pairs.get_column("g").to_numpy().astype(np.int64)
    pair_f1 = _pair_scores(pair_predicted, pair_gold, bags)
    single = (
        (entries.get_column("n_gold") == 1) & (entries.get_column("n_pred") == 1)
    ).to_numpy()

    n_gold = entries.get_column("n_gold").to_numpy().astype(np.int64)
    n_pred = entries.get_column("n_pred").to_numpy().astype(np.int64)
    f1 = np.zeros(len(entries))
    em = np.zeros(len(entries), dtype=bool)
    pair_entry = pairs.get_column("entry").to_numpy()
    single_pairs = single[pair_entry]
    f1[single] = pair_f1[single_pairs]
    em[single] = (pair_predicted == pair_gold)[single_pairs]
    multi = ~single
    if multi.any():
        f1[multi] = _aligned_means(pair_f1[~single_pairs], n_gold[multi], n_pred[multi])
        em[multi] = _same_span_sets(entries.filter(multi), gold, predicted)

    # numpy's round(x, 2) is rint(x * 100) / 100: the maximum over alternatives is
    # taken on those hundredths.
    best = (
        pl.DataFrame(
            {
                "row": entries.get_column("row"),
                "em": em.astype(np.int64),
                "f1": np.rint(f1 * 100.0).astype(np.int64),
            }
        )
        .group_by("row")
        .agg(pl.col("em").max(), pl.col("f1").max())
    )
    packed = np.zeros(len(rows), dtype=np.int64)
    packed[best.get_column("row").to_numpy()] = (
        best.get_column("em").to_numpy() * _EM_UNIT + best.get_column("f1").to_numpy()
    )
    return (
        pl.Series(packed)
        .set(status.get_column("invalid"), INVALID)
        .set(status.get_column("null"), None)
    )


def _same_span_sets(
    entries: pl.DataFrame, gold: pl.DataFrame, predicted: pl.DataFrame
) -> np.ndarray:
    """The harness's exact match: same set of normalised spans and the same count."""
    gold_sets = gold.join(entries.select("entry"), on="entry", how="semi").group_by("entry").agg(
        g_set=pl.col("g").unique().sort()
    )
    predicted_sets = predicted.join(
        entries.select("row").unique(), on="row", how="semi"
    ).group_by("row").agg(p_set=pl.col("p").unique().sort())
    return (
        entries.join(gold_sets, on="entry", how="left", maintain_order="left")
        .join(predicted_sets, on="row", how="left", maintain_order="left")
        .select(
            (pl.col("n_gold") == pl.col("n_pred")) & (pl.col("g_set") == pl.col("p_set"))
        )
        .to_series()
        .fill_null(False)
        .to_numpy()
    )
