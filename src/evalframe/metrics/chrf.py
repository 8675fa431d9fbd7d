"""chrF and chrF++ (Popović 2015, 2017), exactly as sacrebleu 2.6.0 computes them.

- :func:`chrf` (corpus ``chrf``; ``chrf++`` is the same with ``word_order=2``): per row
  the segment statistics of ``sacrebleu.metrics.CHRF`` (``_compute_segment_statistics``):
  for every character n-gram order ``1..char_order`` and then every word n-gram order
  ``1..word_order``, the hypothesis n-gram count, the reference n-gram count and the
  clipped matches. The score of a group of rows is ``CHRF._compute_f_score`` of the
  column sums (:func:`chrf_reduction`), so statistics of partitions merge exactly.
- :func:`sentence_chrf` (sample): ``sacrebleu.sentence_chrf``, the f-score of the row's
  own statistics.

What counts (characters, words, several references) is sacrebleu's, as the edge rules
of :func:`chrf` spell out.

How it runs: one batched kernel over whole columns. The texts' UTF-8 buffers are
decoded to code points with numpy, each distinct character (or word) gets an integer
id, and for every (hypothesis, reference) pair all the n-grams at once are packed into
one 64-bit key per position: the pair, the next ``char_order`` symbols (0 past the
end) and the side. After one sort of those keys, the n-grams of every order ``n`` are
runs of keys agreeing on their first ``n`` symbols, and a run's clipped matches are
``min(hypothesis entries, reference entries)``. Runs without both sides cannot hold a
longer match, so their keys are dropped before the next order. When the alphabet is
too large for one key (many distinct CJK characters and a high order), n-gram ids are
built order by order instead, each from the previous order's id and one symbol. A
hash group-by of (pair, n-gram) per order, the expression route, costs about as much
as one sort per order, so chrF's six orders would cost six times as much.

>>> import polars as pl
>>> from evalframe import metrics as M
>>> df = pl.DataFrame({"hyp": ["the cat sat", "a dog", None],
...                    "ref": [["the cat sat down"], ["the dog", "a dog!"], ["x"]]})
>>> df.with_columns(M.sentence_chrf("hyp", "ref").round(4).alias("chrF"))
shape: (3, 3)
┌─────────────┬───────────────────────┬─────────┐
│ hyp         ┆ ref                   ┆ chrF    │
│ ---         ┆ ---                   ┆ ---     │
│ str         ┆ list[str]             ┆ f64     │
╞═════════════╪═══════════════════════╪═════════╡
│ the cat sat ┆ ["the cat sat down"]  ┆ 66.0176 │
│ a dog       ┆ ["the dog", "a dog!"] ┆ 72.5735 │
│ null        ┆ ["x"]                 ┆ null    │
└─────────────┴───────────────────────┴─────────┘
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np
import polars as pl

from evalframe._expr import IntoExpr, RowCheck, describe, guard, parse_into_expr
from evalframe.errors import EvalframeError
from evalframe.metrics._text_rules import TEXT_PAIR, generated
from evalframe.metrics.reduce import Sums
from evalframe.metrics.registry import Reference, register
from evalframe.normalize._python_text import lower, split, whitespace_characters

__all__ = ["chrf", "sentence_chrf"]

#: The sacrebleu release whose chrF this module reproduces.
SACREBLEU_VERSION = "2.6.0"

#: sacrebleu's ``CHRF._PUNCTS`` (``string.punctuation``): what chrF++ splits off words.
PUNCTUATION = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"

CHAR_ORDER, WORD_ORDER, BETA = 6, 0, 2
_EPS = 1e-16


# --------------------------------------------------------------------------------------
# Statistics layout and sacrebleu's signature
# --------------------------------------------------------------------------------------


def statistics_fields(char_order: int = CHAR_ORDER, word_order: int = WORD_ORDER) -> list[str]:
    """The statistics fields, in sacrebleu's order: ``[hyp, ref, match]`` per order.

    Character orders first, then word orders, as ``CHRF._compute_segment_statistics``
    lays out its flat list.

    >>> statistics_fields(2, 1)
    ['char1_hyp', 'char1_ref', 'char1_match', 'char2_hyp', 'char2_ref', 'char2_match', \
'word1_hyp', 'word1_ref', 'word1_match']
    """
    orders = [f"char{n}" for n in range(1, char_order + 1)]
    orders += [f"word{n}" for n in range(1, word_order + 1)]
    return [f"{order}_{kind}" for order in orders for kind in ("hyp", "ref", "match")]


def statistics_dtype(char_order: int = CHAR_ORDER, word_order: int = WORD_ORDER) -> pl.Struct:
    """The per-row statistics struct for the given orders (``Int64`` fields)."""
    return pl.Struct({name: pl.Int64 for name in statistics_fields(char_order, word_order)})


def sacrebleu_signature(
    *,
    nrefs: int | str = 1,
    lowercase: bool = False,
    whitespace: bool = False,
    char_order: int = CHAR_ORDER,
    word_order: int = WORD_ORDER,
    beta: int = BETA,
    eps_smoothing: bool = False,
) -> str:
    """sacrebleu's own signature for ``CHRF`` with these settings.

    What ``sacrebleu.metrics.CHRF(...).get_signature()`` prints after scoring with
    ``nrefs`` references per segment (``"var"`` when the number varies). sacrebleu
    leaves ``beta`` out of it (it is in the score's name, ``chrF2``).

    >>> sacrebleu_signature()
    'nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:2.6.0'
    >>> sacrebleu_signature(nrefs=2, word_order=2, lowercase=True)
    'nrefs:2|case:lc|eff:yes|nc:6|nw:2|space:no|version:2.6.0'
    """
    del beta  # not part of sacrebleu's chrF signature
    return "|".join(
        [
            f"nrefs:{nrefs}",
            f"case:{'lc' if lowercase else 'mixed'}",
            f"eff:{'no' if eps_smoothing else 'yes'}",
            f"nc:{char_order}",
            f"nw:{word_order}",
            f"space:{'yes' if whitespace else 'no'}",
            f"version:{SACREBLEU_VERSION}",
        ]
    )


# --------------------------------------------------------------------------------------
# The f-score (CHRF._compute_f_score), vectorised over a leading axis
# --------------------------------------------------------------------------------------


def f_score(
    n_hyp: np.ndarray,
    n_ref: np.ndarray,
    n_match: np.ndarray,
    *,
    beta: int = BETA,
    eps_smoothing: bool = False,
) -> np.ndarray:
    """``CHRF._compute_f_score`` of ``m`` statistics at once, in its float operations.

    ``n_hyp``, ``n_ref``, ``n_match`` are ``(m, order)``: the summed counts of each
    order (character orders, then word orders). The operations and their order are
    sacrebleu's, so each score is bit-identical to it (counts below 2**53).

    >>> f_score(np.array([[3.0]]), np.array([[4.0]]), np.array([[3.0]]))
    array([78.94736842])
    """
    n_hyp = np.asarray(n_hyp, dtype=np.float64)
    n_ref = np.asarray(n_ref, dtype=np.float64)
    n_match = np.asarray(n_match, dtype=np.float64)
    m, order = n_hyp.shape
    factor = beta**2
    score = np.zeros(m)
    avg_prec, avg_rec = np.zeros(m), np.zeros(m)
    effective = np.zeros(m, dtype=np.int64)
    with np.errstate(divide="ignore", invalid="ignore"):
        for i in range(order):
            hyp, ref, match = n_hyp[:, i], n_ref[:, i], n_match[:, i]
            prec = np.where(hyp > 0, match / hyp, _EPS)
            rec = np.where(ref > 0, match / ref, _EPS)
            denom = factor * prec + rec
            score = score + np.where(denom > 0, (1 + factor) * prec * rec / denom, _EPS)
            both = (hyp > 0) & (ref > 0)
            avg_prec = np.where(both, avg_prec + prec, avg_prec)
            avg_rec = np.where(both, avg_rec + rec, avg_rec)
            effective += both
        if eps_smoothing:
            return 100 * score / order
        avg_prec = np.where(effective == 0, 0.0, avg_prec / effective)
        avg_rec = np.where(effective == 0, 0.0, avg_rec / effective)
        total = (1 + factor) * avg_prec * avg_rec
        total = total / (factor * avg_prec + avg_rec)
        return np.where(avg_prec + avg_rec != 0, 100 * total, 0.0)


def _split_statistics(values: Mapping[str, np.ndarray], fields: Sequence[str]):
    """``(n_hyp, n_ref, n_match)`` arrays of shape ``(m, order)`` from field arrays."""
    stacked = np.stack([np.asarray(values[name], dtype=np.float64) for name in fields], axis=-1)
    stacked = stacked.reshape(stacked.shape[0], -1, 3)
    return stacked[:, :, 0], stacked[:, :, 1], stacked[:, :, 2]


def chrf_reduction(
    *,
    char_order: int = CHAR_ORDER,
    word_order: int = WORD_ORDER,
    beta: int = BETA,
    eps_smoothing: bool = False,
    **_: object,
) -> Sums:
    """The corpus reduction: ``CHRF._compute_f_score`` of the summed statistics (0-100).

    >>> reduce = chrf_reduction(char_order=1)
    >>> reduce.formula({"char1_hyp": np.array([3, 0]), "char1_ref": np.array([4, 2]),
    ...                 "char1_match": np.array([3, 0])})
    array([78.94736842,  0.        ])
    """
    fields = statistics_fields(char_order, word_order)

    def formula(sums: Mapping[str, np.ndarray]) -> np.ndarray:
        hyp, ref, match = _split_statistics(sums, fields)
        return f_score(hyp, ref, match, beta=beta, eps_smoothing=eps_smoothing)

    return Sums("chrf_f_score", formula)


# --------------------------------------------------------------------------------------
# Text to symbols
# --------------------------------------------------------------------------------------


def _string_buffers(series: pl.Series) -> tuple[np.ndarray, np.ndarray]:
    """The UTF-8 bytes of a String Series without nulls, and its row offsets (from 0)."""
    import pyarrow as pa  # on first use

    array = series.to_arrow()
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    if array.type != pa.large_string():
        array = array.cast(pa.large_string())
    _, offset_buffer, data_buffer = array.buffers()
    offsets = np.frombuffer(offset_buffer, dtype=np.int64)[
        array.offset : array.offset + len(array) + 1
    ]
    if data_buffer is None or offsets.size == 0 or offsets[-1] == offsets[0]:
        return np.zeros(0, dtype=np.uint8), np.zeros(len(array) + 1, dtype=np.int64)
    data = np.frombuffer(data_buffer, dtype=np.uint8)[offsets[0] : offsets[-1]]
    return data, offsets - offsets[0]


def _code_points(series: pl.Series) -> tuple[np.ndarray, np.ndarray]:
    """Every row's code points, concatenated (``uint32``), and each row's count of them.

    UTF-8 decoded with numpy: a character starts at every byte that is not a
    continuation byte; only the (few) multi-byte characters are assembled from their
    bytes.
    """
    data, offsets = _string_buffers(series)
    lead = (data & 0xC0) != 0x80
    starts = np.concatenate([[0], np.cumsum(lead, dtype=np.int64)])
    lengths = starts[offsets[1:]] - starts[offsets[:-1]]
    at = np.flatnonzero(lead)
    points = data[at].astype(np.uint32)
    wide = np.flatnonzero(points >= 0x80)
    if wide.size:
        padded = np.concatenate([data, np.zeros(3, dtype=np.uint8)])
        first = at[wide]
        b0 = points[wide]
        b1, b2, b3 = ((padded[first + k] & 0x3F).astype(np.uint32) for k in (1, 2, 3))
        points[wide] = np.where(
            b0 < 0xE0,
            ((b0 & 0x1F) << 6) | b1,
            np.where(
                b0 < 0xF0,
                ((b0 & 0x0F) << 12) | (b1 << 6) | b2,
                ((b0 & 0x07) << 18) | (b1 << 12) | (b2 << 6) | b3,
            ),
        )
    return points, lengths


_WHITESPACE_TABLE: np.ndarray | None = None


def _is_whitespace(points: np.ndarray) -> np.ndarray:
    """Whether each code point is Python whitespace (``str.isspace``)."""
    global _WHITESPACE_TABLE
    if _WHITESPACE_TABLE is None:
        codes = [ord(ch) for ch in whitespace_characters()]
        table = np.zeros(max(codes) + 1, dtype=bool)
        table[codes] = True
        _WHITESPACE_TABLE = table
    top = _WHITESPACE_TABLE.size - 1
    return _WHITESPACE_TABLE[np.minimum(points, top)] & (points <= top)


def _dense_ids(values: np.ndarray) -> tuple[np.ndarray, int]:
    """Ids ``1..V`` for the distinct ``values`` (non-negative integers), and ``V``."""
    if not values.size:
        return values.astype(np.int64), 0
    present = np.zeros(int(values.max()) + 1, dtype=bool)
    present[values] = True
    table = np.cumsum(present, dtype=np.int64)
    return table[values], int(table[-1])


def _char_symbols(texts: pl.Series, whitespace: bool) -> tuple[np.ndarray, np.ndarray]:
    """Characters as code points per text: Python whitespace removed unless ``whitespace``."""
    points, lengths = _code_points(texts)
    if whitespace or not points.size:
        return points, lengths
    keep = ~_is_whitespace(points)
    if keep.all():
        return points, lengths
    rows = np.repeat(np.arange(lengths.size), lengths)
    return points[keep], np.bincount(rows[keep], minlength=lengths.size).astype(np.int64)


def _word_symbols(texts: pl.Series) -> tuple[np.ndarray, np.ndarray]:
    """``CHRF._remove_punctuation`` of every text, as exact integer ids, and counts.

    The ids are a categorical encoding of the tokens (equal strings, equal ids).
    """
    words = (
        pl.DataFrame({"text": texts})
        .with_row_index("text_index")
        .select("text_index", split(pl.col("text")).alias("word"))
        .explode("word", empty_as_null=False)
        .drop_nulls("word")
    )
    word = pl.col("word")
    length = word.str.len_chars()
    last, first = word.str.slice(-1, 1), word.str.slice(0, 1)
    punctuation = pl.Series(list(PUNCTUATION), dtype=pl.String)
    tokens = words.select(
        "text_index",
        pl.when(length == 1)
        .then(pl.concat_list(word))
        .when(last.is_in(punctuation.implode()))
        .then(pl.concat_list(word.str.slice(0, length - 1), last))
        .when(first.is_in(punctuation.implode()))
        .then(pl.concat_list(first, word.str.slice(1)))
        .otherwise(pl.concat_list(word))
        .alias("token"),
    ).explode("token")
    index = tokens["text_index"].to_numpy().astype(np.int64)
    lengths = np.bincount(index, minlength=len(texts)).astype(np.int64)
    ids = tokens["token"].cast(pl.Categorical).to_physical().to_numpy().astype(np.int64)
    return ids, lengths


# --------------------------------------------------------------------------------------
# Clipped n-gram matches of (hypothesis, reference) pairs
# --------------------------------------------------------------------------------------

#: Positions of both sides handled per sort (bounds the kernel's memory).
_CHUNK_POSITIONS = 1 << 22
#: Fewest pairs a packed key must be able to number, else n-gram ids go order by order.
_MIN_PAIR_BITS = 8


def _offsets(lengths: np.ndarray) -> np.ndarray:
    return np.concatenate([[0], np.cumsum(lengths, dtype=np.int64)])


def _gather_segments(
    symbols: np.ndarray, offsets: np.ndarray, segments: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The symbols of ``segments`` (indices into ``offsets``) laid end to end, and lengths."""
    lengths = offsets[segments + 1] - offsets[segments]
    total = int(lengths.sum())
    starts = np.repeat(offsets[segments] - _offsets(lengths)[:-1], lengths)
    return symbols[starts + np.arange(total, dtype=np.int64)], lengths


def _windows(symbols: np.ndarray, lengths: np.ndarray, order: int) -> list[np.ndarray]:
    """For each position, the symbol ``d`` places on (0 past its segment), ``d < order``."""
    total = symbols.size
    ends = np.repeat(_offsets(lengths)[1:], lengths)
    index = np.arange(total, dtype=np.int64)
    out = [symbols]
    for d in range(1, order):
        ahead = index + d
        out.append(np.where(ahead < ends, symbols[np.minimum(ahead, max(total - 1, 0))], 0))
    return out


def _pair_ids(lengths: np.ndarray) -> np.ndarray:
    return np.repeat(np.arange(lengths.size, dtype=np.int64), lengths)


def _count_runs(
    prefix: np.ndarray,
    key: np.ndarray,
    mask: np.uint64 | None,
    pair: int | np.ndarray,
    pairs: int,
) -> tuple[np.ndarray, np.ndarray]:
    """Clipped matches per pair over the runs of sorted ``prefix``, and entries to keep.

    ``prefix`` is the sorted keys' pair and n-gram; the lowest bit of ``key`` is the side
    (1: reference). A run's matches are ``min(hypothesis entries, reference entries)``,
    counted where its last symbol (``prefix & mask``) is not 0 past a segment's end
    (``mask`` None: every run is a whole n-gram). ``pair`` is the shift that leaves the
    pair of a ``prefix``, or each sorted entry's pair. Entries of runs without a match
    cannot match at a higher order: the returned mask drops them.
    """
    new = np.empty(prefix.size, dtype=bool)
    new[:1] = True
    np.not_equal(prefix[1:], prefix[:-1], out=new[1:])
    starts = np.flatnonzero(new)
    lengths = np.diff(np.append(starts, prefix.size))
    before = np.concatenate([[0], np.cumsum((key & np.uint64(1)).view(np.int64))])
    refs = before[starts + lengths] - before[starts]
    head = prefix[starts]
    matched = np.minimum(lengths - refs, refs)
    if mask is not None:
        matched *= (head & mask) != 0
    owner = (head >> np.uint64(pair)).astype(np.int64) if isinstance(pair, int) else pair[starts]
    counts = np.bincount(owner, weights=matched, minlength=pairs)
    return counts.astype(np.int64), np.repeat(matched > 0, lengths)


def _packed_keys(
    symbols: np.ndarray, lengths: np.ndarray, order: int, bits: int, side: int
) -> np.ndarray:
    """One key per position: pair, the next ``order`` symbols (0 past the end), side.

    The segments are laid out with ``order - 1`` zeros after each, so the symbol ``d``
    places on is a shifted view of one array and the windows cost no gathers.
    """
    segments = lengths.size
    gap = order - 1
    padded = np.zeros(symbols.size + segments * gap + gap, dtype=np.uint64)
    real = np.arange(symbols.size, dtype=np.int64) + np.repeat(
        np.arange(segments, dtype=np.int64) * gap, lengths
    )
    padded[real] = symbols
    span = padded.size - gap
    key = padded[:span] << np.uint64((order - 1) * bits + 1)
    for d in range(1, order):
        key |= padded[d : d + span] << np.uint64((order - 1 - d) * bits + 1)
    key = key[real]
    key |= _pair_ids(lengths).astype(np.uint64) << np.uint64(order * bits + 1)
    if side:
        key |= np.uint64(1)
    return key


def _packed_matches(
    hyp: np.ndarray,
    hyp_lengths: np.ndarray,
    ref: np.ndarray,
    ref_lengths: np.ndarray,
    order: int,
    bits: int,
) -> np.ndarray:
    """Matches ``(pairs, order)``: every n-gram of a position in one sorted 64-bit key.

    Key, from the top: the pair, the next ``order`` symbols (``bits`` each, 0 past the
    segment's end), the side (0 hypothesis, 1 reference).
    """
    pairs = hyp_lengths.size
    key = np.concatenate(
        [
            _packed_keys(hyp, hyp_lengths, order, bits, 0),
            _packed_keys(ref, ref_lengths, order, bits, 1),
        ]
    )
    key.sort()
    out = np.zeros((pairs, order), dtype=np.int64)
    mask = np.uint64((1 << bits) - 1)
    for n in range(1, order + 1):
        if not key.size:
            break
        prefix = key >> np.uint64((order - n) * bits + 1)
        out[:, n - 1], keep = _count_runs(prefix, key, mask, n * bits, pairs)
        if n < order:
            key = key[keep]
    return out


def _iterated_matches(
    hyp: np.ndarray,
    hyp_lengths: np.ndarray,
    ref: np.ndarray,
    ref_lengths: np.ndarray,
    order: int,
    bits: int,
) -> np.ndarray:
    """Matches ``(pairs, order)`` for any alphabet: n-gram ids built order by order.

    The id of the n-gram at a position is the rank of (id of the (n-1)-gram there, the
    n-th symbol); the first id is the pair's number. Positions whose (n-1)-gram has no
    match on the other side of its pair are dropped first (it cannot match longer).
    """
    pairs = hyp_lengths.size
    symbols = np.concatenate([hyp, ref]).astype(np.uint64)
    lengths = np.concatenate([hyp_lengths, ref_lengths])
    side = np.repeat(np.array([0, 1], dtype=np.uint64), [hyp.size, ref.size])
    pair = np.concatenate([_pair_ids(hyp_lengths), _pair_ids(ref_lengths)])
    ends = np.repeat(_offsets(lengths)[1:], lengths)
    position = np.arange(symbols.size, dtype=np.int64)
    ident = pair.astype(np.uint64)
    out = np.zeros((pairs, order), dtype=np.int64)
    for n in range(1, order + 1):
        inside = position + (n - 1) < ends
        position, ident, side, pair, ends = (
            position[inside], ident[inside], side[inside], pair[inside], ends[inside]
        )
        if not position.size:
            break
        key = (ident << np.uint64(bits + 1)) | (symbols[position + (n - 1)] << np.uint64(1))
        key |= side
        ordering = np.argsort(key, kind="stable")
        key = key[ordering]
        prefix = key >> np.uint64(1)
        counts, keep_sorted = _count_runs(prefix, key, None, pair[ordering], pairs)
        out[:, n - 1] = counts
        new = np.empty(prefix.size, dtype=bool)
        new[:1] = True
        np.not_equal(prefix[1:], prefix[:-1], out=new[1:])
        ident = np.empty_like(ident)
        ident[ordering] = (np.cumsum(new) - 1).astype(np.uint64)
        keep = np.empty_like(keep_sorted)
        keep[ordering] = keep_sorted
        position, ident, side, pair, ends = (
            position[keep], ident[keep], side[keep], pair[keep], ends[keep]
        )
    return out


def ngram_matches(
    hyp: np.ndarray,
    hyp_lengths: np.ndarray,
    ref: np.ndarray,
    ref_lengths: np.ndarray,
    order: int,
    *,
    packed: bool | None = None,
) -> np.ndarray:
    """Clipped n-gram matches of orders ``1..order`` for each (hypothesis, reference) pair.

    ``hyp`` and ``ref`` are the pairs' symbols (non-negative integers) laid end to end,
    ``hyp_lengths`` and ``ref_lengths`` how many belong to each pair. Returns ``(pairs,
    order)`` ``int64``: ``sum over n-grams g of min(count in hyp, count in ref)``.
    ``packed`` forces the single-sort route (True) or the order-by-order one (False);
    by default the first is used whenever the alphabet fits a 64-bit key.

    >>> ngram_matches(np.array([1, 2, 1, 2]), np.array([4]), np.array([2, 1, 2]),
    ...               np.array([3]), 3)
    array([[3, 2, 1]])
    """
    pairs = hyp_lengths.size
    out = np.zeros((pairs, order), dtype=np.int64)
    if order == 0 or not pairs:
        return out
    ids, size = _dense_ids(np.concatenate([hyp, ref]))
    hyp, ref = ids[: hyp.size], ids[hyp.size :]
    bits = max(int(size).bit_length(), 1)
    pair_bits = 63 - order * bits
    if packed is None:
        packed = pair_bits >= _MIN_PAIR_BITS
    if packed and pair_bits < 1:
        raise ValueError(f"an alphabet of {size} symbols does not fit a 64-bit key")
    hyp_offsets, ref_offsets = _offsets(hyp_lengths), _offsets(ref_lengths)
    per_pair = hyp_lengths + ref_lengths
    budget = _CHUNK_POSITIONS
    limit = (1 << pair_bits) if packed else pairs
    start = 0
    while start < pairs:
        # as many pairs as fit the budget of positions (at least one) and the key's bits
        stop = int(np.searchsorted(np.cumsum(per_pair[start:]), budget, side="right"))
        stop = start + min(max(stop, 1), limit)
        h = hyp[hyp_offsets[start] : hyp_offsets[stop]]
        r = ref[ref_offsets[start] : ref_offsets[stop]]
        hl, rl = hyp_lengths[start:stop], ref_lengths[start:stop]
        route = _packed_matches if packed else _iterated_matches
        out[start:stop] = route(h, hl, r, rl, order, bits)
        start = stop
    return out


# --------------------------------------------------------------------------------------
# Segment statistics
# --------------------------------------------------------------------------------------


def _references(gold: pl.Series) -> tuple[np.ndarray, pl.Series, np.ndarray]:
    """Non-null references, exploded: ``(row of each, texts, rows with none)``."""
    if not isinstance(gold.dtype, pl.List):
        frame = pl.DataFrame({"gold": gold.cast(pl.String)}).with_row_index("row")
    else:
        frame = (
            pl.DataFrame({"gold": gold.cast(pl.List(pl.String))})
            .with_row_index("row")
            .explode("gold", empty_as_null=False)
        )
    frame = frame.drop_nulls("gold")
    rows = frame["row"].to_numpy().astype(np.int64)
    present = np.zeros(len(gold), dtype=bool)
    present[rows] = True
    return rows, frame["gold"], ~present


def _pair_statistics(
    hyp: tuple[np.ndarray, np.ndarray],
    ref: tuple[np.ndarray, np.ndarray],
    pair_row: np.ndarray,
    order: int,
) -> np.ndarray:
    """``(pairs, order, 3)``: per order the hyp count, ref count and matches of each pair."""
    hyp_symbols, hyp_lengths = hyp
    ref_symbols, ref_lengths = ref
    gathered, pair_hyp_lengths = _gather_segments(hyp_symbols, _offsets(hyp_lengths), pair_row)
    matches = ngram_matches(gathered, pair_hyp_lengths, ref_symbols, ref_lengths, order)
    n = np.arange(1, order + 1)
    hyp_count = np.maximum(pair_hyp_lengths[:, None] - n + 1, 0)
    ref_count = np.maximum(ref_lengths[:, None] - n + 1, 0)
    hyp_count = np.where(ref_count > 0, hyp_count, 0)
    return np.stack([hyp_count, ref_count, matches], axis=-1)


def segment_statistics(
    prediction: pl.Series,
    gold: pl.Series,
    *,
    lowercase: bool = False,
    whitespace: bool = False,
    char_order: int = CHAR_ORDER,
    word_order: int = WORD_ORDER,
    beta: int = BETA,
    eps_smoothing: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """sacrebleu's segment statistics of every row: ``(rows, 3 * orders)`` and a mask.

    The mask is True for rows that are scored (prediction not null, at least one
    non-null reference); the other rows' statistics are zeros. Each row's statistics are
    those of its reference with the best sentence-level f-score (the first of equal).
    """
    rows = len(prediction)
    orders = char_order + word_order
    out = np.zeros((rows, 3 * orders), dtype=np.int64)
    ref_row, references, no_reference = _references(gold)
    scored = prediction.is_not_null().to_numpy() & ~no_reference
    pairs = scored[ref_row]
    ref_row, references = ref_row[pairs], references.filter(pl.Series(pairs))
    if not ref_row.size:
        return out, scored
    # the hypotheses of scored rows only, numbered 0..h-1; pairs point at them
    scored_rows = np.flatnonzero(scored)
    hypotheses = prediction.gather(scored_rows)
    number = np.full(rows, -1, dtype=np.int64)
    number[scored_rows] = np.arange(scored_rows.size)
    pair_row = number[ref_row]
    if lowercase:
        hypotheses = pl.select(lower(pl.lit(hypotheses))).to_series()
        references = pl.select(lower(pl.lit(references))).to_series()
    parts = []
    if char_order:
        parts.append(
            _pair_statistics(
                _char_symbols(hypotheses, whitespace),
                _char_symbols(references, whitespace),
                pair_row,
                char_order,
            )
        )
    if word_order:
        # one encoding for both sides, so that equal tokens get equal ids
        ids, lengths = _word_symbols(pl.concat([hypotheses, references]))
        cut, at = len(hypotheses), int(lengths[: len(hypotheses)].sum())
        parts.append(
            _pair_statistics(
                (ids[:at], lengths[:cut]), (ids[at:], lengths[cut:]), pair_row, word_order
            )
        )
    stats = np.concatenate(parts, axis=1)  # (pairs, orders, 3)
    # per row, the first reference with the best f-score (sacrebleu: strict '>')
    scores = f_score(
        stats[:, :, 0], stats[:, :, 1], stats[:, :, 2], beta=beta, eps_smoothing=eps_smoothing
    )
    firsts = np.flatnonzero(np.concatenate([[True], pair_row[1:] != pair_row[:-1]]))
    best = np.maximum.reduceat(scores, firsts)
    is_best = scores == np.repeat(best, np.diff(np.append(firsts, pair_row.size)))
    candidates = np.flatnonzero(is_best)
    first_best = candidates[
        np.concatenate([[True], pair_row[candidates[1:]] != pair_row[candidates[:-1]]])
    ]
    out[scored_rows[pair_row[first_best]]] = stats[first_best].reshape(first_best.size, -1)
    return out, scored


# --------------------------------------------------------------------------------------
# Metric functions
# --------------------------------------------------------------------------------------


def _check_options(
    metric: str, char_order: int, word_order: int, beta: int
) -> None:
    if char_order < 0 or word_order < 0 or char_order + word_order < 1:
        raise EvalframeError(
            f"metric {metric!r}: char_order={char_order} and word_order={word_order}; "
            "expected orders >= 0 with at least one n-gram order in all"
        )
    if beta < 0:
        raise EvalframeError(f"metric {metric!r}: beta={beta}; expected beta >= 0")


def _empty_gold_check(gold: IntoExpr) -> RowCheck:
    golds = pl.concat_list([parse_into_expr(gold)])
    return RowCheck(
        invalid=golds.list.len() == 0,
        what=f"an empty reference list in column {describe(gold)}",
        expected="at least one reference",
    )


def _statistics_expr(
    metric: str, prediction: IntoExpr, gold: IntoExpr, options: dict, sentence: bool
) -> pl.Expr:
    char_order, word_order = options["char_order"], options["word_order"]
    _check_options(metric, char_order, word_order, options["beta"])
    fields = statistics_fields(char_order, word_order)
    dtype = pl.Float64 if sentence else statistics_dtype(char_order, word_order)

    def kernel(series: Sequence[pl.Series]) -> pl.Series:
        prediction_values = series[0].cast(pl.String)
        stats, scored = segment_statistics(prediction_values, series[1], **options)
        mask = pl.Series(scored)
        if sentence:
            orders = stats.reshape(stats.shape[0], len(fields) // 3, 3)  # 0 rows too
            values = f_score(
                orders[:, :, 0], orders[:, :, 1], orders[:, :, 2],
                beta=options["beta"], eps_smoothing=options["eps_smoothing"],
            )
            return pl.Series(values).set(~mask, None)
        frame = pl.DataFrame(
            {name: stats[:, i] for i, name in enumerate(fields)},
            schema={name: pl.Int64 for name in fields},
        )
        return frame.select(pl.when(pl.lit(mask)).then(pl.struct(pl.all()))).to_series()

    inputs = [parse_into_expr(prediction), parse_into_expr(gold)]
    values = pl.map_batches(inputs, kernel, return_dtype=dtype, is_elementwise=True)
    return guard(metric, values, [_empty_gold_check(gold)], dtype=dtype)


#: What every chrF metric registers: roles, dtypes, its 0-100 bounds.
_CHRF = {**TEXT_PAIR, "bounds": (0.0, 100.0)}


def _statistics_of(
    *, char_order: int = CHAR_ORDER, word_order: int = WORD_ORDER, **_: object
) -> pl.Struct:
    """The statistics dtype of a request with these options (its fields follow the orders)."""
    return statistics_dtype(char_order, word_order)


#: What the corpus metrics (chrf, chrf++) register besides: statistics summed, reduced by
#: CHRF._compute_f_score, sacrebleu's signature.
_CORPUS = {
    "level": "corpus",
    "reduce": chrf_reduction,
    "statistics_of": _statistics_of,
    "reference_signature": sacrebleu_signature,
}

_EDGE_RULES = (
    "null prediction or null gold -> null statistics (the row is not summed); null "
    "references inside a gold list are skipped, as sacrebleu drops None references; a "
    "list of only null references -> null; an empty gold list raises EvalframeError",
    "characters are Python code points; every Python whitespace character (str.split()'s, "
    "including U+00A0, U+3000 and \\x1c-\\x1f) is removed before character n-grams unless "
    "whitespace=true; combining marks and emoji parts are characters of their own",
    "words are str.split() pieces; a piece of two or more characters ending in ASCII "
    "punctuation is split before its last character, else one starting with it after its "
    "first ('(hi)' -> '(hi', ')'); Unicode punctuation stays in the word",
    "per order the hypothesis count is 0 when the reference has no n-gram of that order "
    "(an empty reference adds nothing); an empty hypothesis has counts 0",
    "several references: the row keeps the statistics of the reference with the highest "
    "sentence-level f-score, the first of equal ones (sacrebleu's strict '>')",
    "score: CHRF._compute_f_score of the summed statistics, 0-100; without eps_smoothing "
    "precision and recall are averaged over the orders whose summed hypothesis and "
    "reference counts are both positive, 0.0 when there is none",
)

#: The docstring sections of both chrF functions (one signature).
_SECTIONS = {
    "parameters": """
        prediction
            The hypothesis (``str``; name or expression).
        gold
            The reference (``str``), or several references (``list[str]``).
        lowercase
            Lower-case both sides first (Python's ``str.lower``), sacrebleu's ``lowercase``.
        whitespace
            Keep whitespace in character n-grams (sacrebleu's ``whitespace``; default: every
            Python whitespace character is removed before counting).
        char_order
            Character n-gram orders ``1..char_order`` (sacrebleu's ``char_order``, 6).
        word_order
            Word n-gram orders ``1..word_order`` (0; 2 is chrF++).
        beta
            Weight of recall over precision (2).
        eps_smoothing
            sacrebleu's ``eps_smoothing``: average the per-order f-scores with 1e-16 for
            missing ones (chrF++.py, NLTK, Moses) instead of averaging precision and recall
            over the orders that have counts (the default, as sacrebleu).
        """,
    "raises": """
        Raises
        ------
        EvalframeError
            Invalid orders or beta (when built); an empty reference list (when run),
            naming the count of rows and the first one.
        """,
}


def _chrf_metric(
    name: str, *registrations: Callable[[Callable[..., pl.Expr]], object], doc: str
) -> Callable[..., pl.Expr]:
    """The chrF function ``name`` (corpus statistics, or ``sentence_chrf``'s scores),
    documented and registered under each of ``registrations``."""
    sentence = name == "sentence_chrf"

    def metric(
        prediction: IntoExpr,
        gold: IntoExpr,
        *,
        lowercase: bool = False,
        whitespace: bool = False,
        char_order: int = CHAR_ORDER,
        word_order: int = WORD_ORDER,
        beta: int = BETA,
        eps_smoothing: bool = False,
    ) -> pl.Expr:
        options = dict(
            lowercase=lowercase, whitespace=whitespace, char_order=char_order,
            word_order=word_order, beta=beta, eps_smoothing=eps_smoothing,
        )
        metric_name = name if sentence else ("chrf++" if word_order == 2 else "chrf")
        return _statistics_expr(metric_name, prediction, gold, options, sentence=sentence)

    return generated(metric, name, doc, *registrations, **_SECTIONS)


chrf = _chrf_metric(
    "chrf",
    register(
        "chrf",
        **_CHRF,
        **_CORPUS,
        statistics=statistics_dtype(CHAR_ORDER, WORD_ORDER),
        reference=Reference(
            "sacrebleu", SACREBLEU_VERSION,
            "sacrebleu.metrics.CHRF(...).corpus_score (= sacrebleu.corpus_chrf)",
        ),
        description="Corpus chrF (character 6-grams, beta 2), as sacrebleu's corpus_chrf",
        edge_rules=_EDGE_RULES,
    ),
    register(
        "chrf++",
        **_CHRF,
        **_CORPUS,
        options={"word_order": 2},
        statistics=statistics_dtype(CHAR_ORDER, 2),
        reference=Reference(
            "sacrebleu", SACREBLEU_VERSION, "sacrebleu.metrics.CHRF(word_order=2).corpus_score"
        ),
        description="Corpus chrF++ (character 6-grams and word 2-grams), as sacrebleu's",
        edge_rules=_EDGE_RULES,
    ),
    doc="""Corpus chrF statistics per row, as ``sacrebleu.metrics.CHRF`` (2.6.0) computes them.

    The row's segment statistics (``CHRF._compute_segment_statistics``): per character
    order ``1..char_order`` and then per word order ``1..word_order``, the hypothesis
    n-gram count, the reference n-gram count and the clipped matches, against the
    reference with the best sentence f-score. The corpus score of a group of rows is
    :func:`chrf_reduction` of their sums: ``CHRF._compute_f_score`` (0-100), which is
    what ``sacrebleu.corpus_chrf`` reports.

    Parameters
    ----------
    {parameters}

    Returns
    -------
    pl.Expr
        Per row a struct of ``Int64`` fields ``char1_hyp, char1_ref, char1_match, ...,
        word1_hyp, ...`` (see :func:`statistics_fields`); null where the prediction is
        null, the gold is null, or every reference is null.

    {raises}

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"hyp": ["ab c", "", None], "ref": ["abc", "x", "y"]})
    >>> stats = df.select(chrf("hyp", "ref", char_order=2).alias("chrf"))
    >>> stats.unnest("chrf")
    shape: (3, 6)
    ┌───────────┬───────────┬─────────────┬───────────┬───────────┬─────────────┐
    │ char1_hyp ┆ char1_ref ┆ char1_match ┆ char2_hyp ┆ char2_ref ┆ char2_match │
    │ ---       ┆ ---       ┆ ---         ┆ ---       ┆ ---       ┆ ---         │
    │ i64       ┆ i64       ┆ i64         ┆ i64       ┆ i64       ┆ i64         │
    ╞═══════════╪═══════════╪═════════════╪═══════════╪═══════════╪═════════════╡
    │ 3         ┆ 3         ┆ 3           ┆ 2         ┆ 2         ┆ 2           │
    │ 0         ┆ 1         ┆ 0           ┆ 0         ┆ 0         ┆ 0           │
    │ null      ┆ null      ┆ null        ┆ null      ┆ null      ┆ null        │
    └───────────┴───────────┴─────────────┴───────────┴───────────┴─────────────┘
    >>> sums = stats.unnest("chrf").sum()
    >>> chrf_reduction(char_order=2).formula({k: sums[k].to_numpy() for k in sums.columns})
    array([89.74358974])
    """,
)

sentence_chrf = _chrf_metric(
    "sentence_chrf",
    register(
        "sentence_chrf",
        **_CHRF,
        reference=Reference("sacrebleu", SACREBLEU_VERSION, "sacrebleu.sentence_chrf"),
        description="Sentence-level chrF (0-100) per row, as sacrebleu's sentence_chrf",
        edge_rules=(
            *_EDGE_RULES[:-1], "score: CHRF._compute_f_score of the row's own statistics"
        ),
    ),
    doc="""Sentence chrF per row (0-100), ``sacrebleu.sentence_chrf`` with ``CHRF``'s options.

    The f-score (``CHRF._compute_f_score``) of the row's own statistics (those of
    :func:`chrf`: the best reference's). The mean over rows is *not* corpus chrF.
    ``sentence_chrf``'s ``remove_whitespace`` is ``not whitespace``.

    Parameters
    ----------
    {parameters}

    Returns
    -------
    pl.Expr
        ``Float64`` in [0, 100]; null where the prediction or the gold is null, or every
        reference is null.

    {raises}

    Notes
    -----
    An empty hypothesis scores 0.0, against an empty reference too (no order has counts).

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"hyp": ["Hello, world!", "", None], "ref": ["hello world", "", "x"]})
    >>> df.with_columns(sentence_chrf("hyp", "ref").alias("chrF"),
    ...                 sentence_chrf("hyp", "ref", lowercase=True).alias("chrF_lc"))
    shape: (3, 4)
    ┌───────────────┬─────────────┬───────────┬───────────┐
    │ hyp           ┆ ref         ┆ chrF      ┆ chrF_lc   │
    │ ---           ┆ ---         ┆ ---       ┆ ---       │
    │ str           ┆ str         ┆ f64       ┆ f64       │
    ╞═══════════════╪═════════════╪═══════════╪═══════════╡
    │ Hello, world! ┆ hello world ┆ 46.123358 ┆ 56.343009 │
    │               ┆             ┆ 0.0       ┆ 0.0       │
    │ null          ┆ x           ┆ null      ┆ null      │
    └───────────────┴─────────────┴───────────┴───────────┘
    """,
)
