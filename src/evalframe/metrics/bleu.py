"""BLEU as sacrebleu 2.6.0 computes it, and lighteval's nltk sentence BLEU-1 / BLEU-4.

- :func:`bleu` (corpus): ``sacrebleu.corpus_bleu`` / ``sacrebleu.metrics.BLEU`` with its
  options. Per row, the statistics are exactly sacrebleu's segment statistics
  (``BLEU._extract_corpus_statistics``): hypothesis length, closest reference length,
  clipped n-gram matches and n-gram totals per order; the score of a group of rows is
  ``BLEU.compute_bleu`` of their sums (:func:`compute_bleu`, vectorised over tables).
- :func:`sentence_bleu` (sample): ``sacrebleu.sentence_bleu`` per row (effective order
  on, ``exp`` smoothing), 0-100.
- :func:`bleu_1`, :func:`bleu_4` (sample): lighteval's ``bleu_1`` / ``bleu_4``
  (``metrics_sample.BLEU(n_gram)``): nltk's ``sentence_bleu`` with the one-hot weights
  of that order and no smoothing over ``nltk.word_tokenize`` tokens, 0-1.

How the statistics are counted (one batched kernel over whole columns, no Python per
row): the hypotheses and the exploded references are tokenised together (the sacrebleu
tokenizers are polars expressions, :mod:`evalframe.normalize.sacrebleu_tokenize`), each
token gets an exact integer id (a categorical encoding), and the n-grams of every order
are matched by sorting integer keys ``(row, n-gram, side)``: a run of equal keys is one
side's count of one n-gram in one row, so the clipped count ``min(hyp, max over
references)`` is a run-length computation. An n-gram of order ``n`` is keyed by the ids
of its two ``(n-1)``-grams, and only n-grams whose two ``(n-1)``-grams both occur on the
other side can match, so each order sorts only the survivors of the previous one.

>>> import polars as pl
>>> from evalframe import metrics as M
>>> df = pl.DataFrame({"hyp": ["The cat sat on the mat.", "Hello there", None],
...                    "ref": [["The cat sat on the mat."], ["Hi there", "Hello"], ["x"]]})
>>> df.with_columns(M.sentence_bleu("hyp", "ref").alias("sentence_bleu"))
shape: (3, 3)
┌─────────────────────────┬─────────────────────────────┬───────────────┐
│ hyp                     ┆ ref                         ┆ sentence_bleu │
│ ---                     ┆ ---                         ┆ ---           │
│ str                     ┆ list[str]                   ┆ f64           │
╞═════════════════════════╪═════════════════════════════╪═══════════════╡
│ The cat sat on the mat. ┆ ["The cat sat on the mat."] ┆ 100.0         │
│ Hello there             ┆ ["Hi there", "Hello"]       ┆ 70.710678     │
│ null                    ┆ ["x"]                       ┆ null          │
└─────────────────────────┴─────────────────────────────┴───────────────┘
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Mapping, Sequence
from functools import partial

import numpy as np
import polars as pl

from evalframe._expr import IntoExpr, elementwise, guard, parse_into_expr
from evalframe.errors import EvalframeError
from evalframe.metrics._text_inputs import as_alternatives, empty_gold_check
from evalframe.metrics._text_rules import TEXT_PAIR, generated
from evalframe.metrics.reduce import Sums
from evalframe.metrics.registry import Reference, register
from evalframe.normalize._python_text import lower, split, whitespace_characters
from evalframe.normalize.sacrebleu_tokenize import SacrebleuTokenizer, sacrebleu_tokenizer

__all__ = ["bleu", "bleu_1", "bleu_4", "sentence_bleu"]

SACREBLEU_VERSION = "2.6.0"
LIGHTEVAL_VERSION = "0.13.0"

#: The highest n-gram order the statistics hold (sacrebleu's default ``max_ngram_order``).
ORDERS = 4

#: Per-row statistics: sacrebleu's segment statistics ``[hyp_len, ref_len, correct_1..4,
#: total_1..4]`` under names, then the row's number of (non-null) references.
STATISTICS = pl.Struct(
    {
        "hyp_len": pl.Int64,
        "ref_len": pl.Int64,
        **{f"matches_{n}": pl.Int64 for n in range(1, ORDERS + 1)},
        **{f"totals_{n}": pl.Int64 for n in range(1, ORDERS + 1)},
        "n_refs": pl.Int64,
    }
)

#: sacrebleu's ``BLEU.SMOOTH_DEFAULTS``: the value each smoothing method uses by default.
SMOOTH_DEFAULTS: dict[str, float | None] = {"none": None, "floor": 0.1, "add-k": 1, "exp": None}

#: sacrebleu's ``my_log`` of 0.
_LOG_ZERO = -9999999999.0


# --------------------------------------------------------------------------------------
# Tokens
# --------------------------------------------------------------------------------------


def _sacrebleu_tokens(texts: pl.Series, lowercase: bool, tokenizer: SacrebleuTokenizer):
    """``BLEU._preprocess_segment`` then ``line.split()``: each text's tokens (list[str]).

    ``sent.lower()`` (Python's, when ``lowercase``), ``tokenizer(sent.rstrip())``, and
    the whitespace split of ``extract_all_word_ngrams``.
    """
    text = pl.col("text")
    if lowercase:
        text = lower(text)
    line = tokenizer.function(text.str.strip_chars_end(whitespace_characters()))
    if tokenizer.normalised:  # already " ".join(line.split()): split on single spaces
        tokens = pl.when(line == "").then(pl.lit([], dtype=pl.List(pl.String))).otherwise(
            line.str.split(" ")
        )
    else:
        tokens = split(line)
    return pl.DataFrame({"text": texts}).select(tokens.alias("tokens"))["tokens"]


def _punkt_available() -> bool:
    import nltk

    try:
        nltk.data.find("tokenizers/punkt_tab/english/")
    except LookupError:
        return False
    return True


def _nltk_tokens(texts: pl.Series, sentence_split: bool) -> pl.Series:
    """``nltk.word_tokenize`` of each text, computed once per distinct text.

    nltk's tokenizer (Punkt sentence splitting, then the improved Treebank rules with
    look-around patterns) runs in Python on the distinct strings of the batch only.
    """
    from nltk.tokenize import word_tokenize

    distinct = texts.unique()
    tokens = [word_tokenize(text, preserve_line=not sentence_split) for text in distinct]
    table = pl.DataFrame(
        {"text": distinct, "tokens": pl.Series(tokens, dtype=pl.List(pl.String))}
    )
    joined = pl.DataFrame({"text": texts}).join(
        table, on="text", how="left", maintain_order="left", nulls_equal=True
    )
    return joined["tokens"]


# --------------------------------------------------------------------------------------
# Segment statistics
# --------------------------------------------------------------------------------------


def _clipped_counts(
    candidates: np.ndarray,
    base: np.ndarray,
    side: np.ndarray,
    row: np.ndarray,
    sides: int,
    rows: int,
) -> tuple[np.ndarray, int, np.ndarray, np.ndarray]:
    """Count one order's n-grams: ids, how many, presence on the other side, matches.

    ``candidates`` are token positions whose n-gram is keyed by ``base`` (equal keys:
    the same n-gram in the same row); ``side`` is 0 for the hypothesis and ``k + 1`` for
    the row's ``k``-th reference. Returns the dense id of each candidate's n-gram, the
    number of ids, whether the n-gram occurs on the other side (for a hypothesis n-gram:
    in some reference; for a reference n-gram: in the hypothesis), and per row the sum
    over its hypothesis n-grams of ``min(count, max count in one reference)``.
    """
    if base.size and int(base.max()) >= (2**62) // sides:  # keep key * sides in int64
        base = np.unique(base, return_inverse=True)[1].astype(np.int64)
    side_of = side[candidates]
    full = base * sides + side_of
    order = pl.Series(full, dtype=pl.Int64).arg_sort().to_numpy()
    ordered = full[order]
    size = ordered.size
    change = np.empty(size, dtype=bool)
    change[:1] = True
    np.not_equal(ordered[1:], ordered[:-1], out=change[1:])
    starts = np.flatnonzero(change)
    lengths = np.diff(starts, append=size)
    run_key = ordered[starts] // sides
    run_side = ordered[starts] - run_key * sides
    new_key = np.empty(starts.size, dtype=bool)
    new_key[:1] = True
    np.not_equal(run_key[1:], run_key[:-1], out=new_key[1:])
    firsts = np.flatnonzero(new_key)
    # the hypothesis (side 0) sorts first within an n-gram
    hyp_count = np.where(run_side[firsts] == 0, lengths[firsts], 0)
    ref_count = (
        np.maximum.reduceat(np.where(run_side > 0, lengths, 0), firsts)
        if firsts.size
        else np.zeros(0, dtype=np.int64)
    )
    key_row = row[candidates[order[starts[firsts]]]]
    matches = np.bincount(
        key_row, weights=np.minimum(hyp_count, ref_count), minlength=rows
    ).astype(np.int64)
    run_index = np.cumsum(new_key) - 1
    element_key = np.repeat(run_index, lengths)
    ids = np.empty(size, dtype=np.int64)
    ids[order] = element_key
    present_sorted = np.where(
        side_of[order] == 0, ref_count[element_key] > 0, hyp_count[element_key] > 0
    )
    present = np.empty(size, dtype=bool)
    present[order] = present_sorted
    return ids, int(firsts.size), present, matches


def segment_statistics(
    hyp_tokens: pl.Series, ref_tokens: pl.Series, ref_row: np.ndarray, max_order: int = ORDERS
) -> dict[str, np.ndarray]:
    """sacrebleu's segment statistics of ``n`` hypotheses against their references.

    Parameters
    ----------
    hyp_tokens
        ``List(String)``: each hypothesis's tokens (``n`` rows, none null).
    ref_tokens
        ``List(String)``: the tokens of every reference, grouped by row in row order.
    ref_row
        The row (``0..n-1``) of each reference, non-decreasing; every row has one.
    max_order
        The highest n-gram order counted (1-4); higher orders are left at 0.

    Returns
    -------
    dict
        ``hyp_len``, ``ref_len`` (the closest reference length, ties to the shorter),
        ``matches_k`` and ``totals_k`` for ``k`` in 1..4, ``n_refs``: ``int64`` arrays.
    """
    n = len(hyp_tokens)
    ref_row = np.asarray(ref_row, dtype=np.int64)
    pieces = pl.concat([hyp_tokens, ref_tokens]).cast(pl.List(pl.String))
    lengths = pieces.list.len().to_numpy().astype(np.int64)
    flat = pieces.explode(empty_as_null=False, keep_nulls=False)
    codes = flat.cast(pl.Categorical(pl.Categories.random())).to_physical().to_numpy()
    codes = codes.astype(np.int64)
    vocabulary = int(codes.max()) + 1 if codes.size else 1

    n_refs = np.bincount(ref_row, minlength=n).astype(np.int64)
    ref_starts = np.concatenate([[0], np.cumsum(n_refs)[:-1]])
    ordinal = np.arange(ref_row.size, dtype=np.int64) - ref_starts[ref_row]
    segment_row = np.concatenate([np.arange(n, dtype=np.int64), ref_row])
    segment_side = np.concatenate([np.zeros(n, dtype=np.int64), ordinal + 1])
    sides = int(segment_side.max()) + 1 if segment_side.size else 1

    segment = np.repeat(np.arange(lengths.size, dtype=np.int64), lengths)
    segment_start = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    position = np.arange(codes.size, dtype=np.int64) - segment_start[segment]
    remaining = lengths[segment] - position  # tokens from here to the segment's end
    row = segment_row[segment]
    side = segment_side[segment]

    hyp_len = lengths[:n]
    out: dict[str, np.ndarray] = {"hyp_len": hyp_len}
    ref_len = lengths[n:]
    scale = int(ref_len.max()) + 1 if ref_len.size else 1
    distance = np.abs(hyp_len[ref_row] - ref_len) * scale + ref_len
    closest = np.minimum.reduceat(distance, ref_starts) if n else distance[:0]
    out["ref_len"] = closest % scale

    candidates = np.arange(codes.size, dtype=np.int64)
    base = row * vocabulary + codes
    present_all = np.zeros(codes.size, dtype=bool)
    ids_all = np.zeros(codes.size, dtype=np.int64)
    for order in range(1, ORDERS + 1):
        out[f"totals_{order}"] = np.maximum(hyp_len - order + 1, 0)
        if order > max_order:
            out[f"matches_{order}"] = np.zeros(n, dtype=np.int64)
            continue
        ids, count, present, matches = _clipped_counts(candidates, base, side, row, sides, n)
        out[f"matches_{order}"] = matches
        if order == max_order:
            continue
        present_all[:] = False
        present_all[candidates] = present
        ids_all[candidates] = ids
        # the (order+1)-gram at i: the order-grams at i and i + 1, both on the other side
        ok = remaining >= order + 1
        ok[:-1] &= present_all[:-1] & present_all[1:]
        ok[-1:] = False
        candidates = np.flatnonzero(ok)
        base = ids_all[candidates] * count + ids_all[candidates + 1]
    out = {key: out[key] for key in ("hyp_len", "ref_len")} | {
        f"matches_{k}": out[f"matches_{k}"] for k in range(1, ORDERS + 1)
    } | {f"totals_{k}": out[f"totals_{k}"] for k in range(1, ORDERS + 1)}
    out["n_refs"] = n_refs
    return out


def _statistics_kernel(
    series: Sequence[pl.Series], *, tokens: Callable[[pl.Series], pl.Series], max_order: int
) -> pl.Series:
    """The statistics struct of each row (null where it cannot be scored)."""
    pred = series[0].cast(pl.String)
    gold = series[1].cast(pl.List(pl.String))
    n = len(pred)
    refs = (
        pl.DataFrame({"row": pl.int_range(n, eager=True, dtype=pl.Int64), "ref": gold})
        .explode("ref")
        .filter(pl.col("ref").is_not_null())
    )
    has_ref = np.bincount(refs["row"].to_numpy(), minlength=n) > 0
    valid = pred.is_not_null().to_numpy() & has_ref
    rows = np.flatnonzero(valid)
    compact = np.cumsum(valid) - 1
    refs = refs.filter(pl.Series(valid[refs["row"].to_numpy()]))
    texts = pl.concat([pred.gather(rows).alias("text"), refs["ref"].alias("text")])
    pieces = tokens(texts)
    stats = segment_statistics(
        pieces.slice(0, rows.size), pieces.slice(rows.size), compact[refs["row"].to_numpy()],
        max_order,
    )
    columns = {}
    for name, values in stats.items():
        full = np.zeros(n, dtype=np.int64)
        full[rows] = values
        columns[name] = full
    frame = pl.DataFrame(columns)
    return frame.select(
        pl.when(pl.Series(valid)).then(pl.struct(pl.all())).alias("bleu")
    ).to_series().cast(STATISTICS)


def _statistics(
    metric: str,
    prediction: IntoExpr,
    gold: IntoExpr,
    tokens: Callable[[pl.Series], pl.Series],
    max_order: int,
) -> pl.Expr:
    kernel = partial(_statistics_kernel, tokens=tokens, max_order=max_order)
    inputs = [parse_into_expr(prediction).cast(pl.String), as_alternatives(gold)]
    return guard(metric, elementwise(inputs, kernel, STATISTICS), [empty_gold_check(gold)],
                 dtype=STATISTICS)


# --------------------------------------------------------------------------------------
# Scores from statistics
# --------------------------------------------------------------------------------------

_MATH_EXP = np.frompyfunc(math.exp, 1, 1)
_MATH_LOG = np.frompyfunc(math.log, 1, 1)


def _exp(values: np.ndarray, exact: bool) -> np.ndarray:
    if not exact:
        return np.exp(values)
    return _MATH_EXP(values).astype(np.float64) if values.size else values.copy()


def _log(values: np.ndarray, exact: bool) -> np.ndarray:
    if not exact:
        return np.log(values)
    return _MATH_LOG(values).astype(np.float64) if values.size else values.copy()


def compute_bleu(
    sums: Mapping[str, np.ndarray],
    *,
    smooth_method: str = "exp",
    smooth_value: float | None = None,
    effective_order: bool = False,
    max_ngram_order: int = ORDERS,
    exact: bool = True,
) -> np.ndarray:
    """sacrebleu's ``BLEU.compute_bleu`` for ``m`` tables of summed statistics at once.

    ``sums`` maps each statistics field to an ``(m,)`` array. The operations are
    sacrebleu's, in its order: the brevity penalty ``exp(1 - ref_len / sys_len)`` (0
    for an empty system), 0 when no n-gram matches at all, ``add-k`` adding ``k`` to
    the counts of orders 2 and up, the orders up to the first one without n-grams,
    ``exp`` smoothing doubling at each order without matches (``100 / (2^j * total)``),
    ``floor`` giving ``100 * value / total``, ``my_log`` (``log``, and -9999999999 for a
    precision of 0), and ``bp * exp(sum of logs / order)`` with the logs summed left to
    right. With ``exact`` (the default) ``exp`` and ``log`` are Python's ``math``
    functions, so every score is bit-identical to sacrebleu's; otherwise numpy's, which
    may differ in the last bit.

    Returns
    -------
    np.ndarray
        ``(m,)`` ``float64`` BLEU scores on sacrebleu's 0-100 scale.

    Examples
    --------
    >>> import numpy as np
    >>> sums = {"hyp_len": np.array([6.0]), "ref_len": np.array([7.0]),
    ...         "matches_1": np.array([5.0]), "matches_2": np.array([3.0]),
    ...         "matches_3": np.array([2.0]), "matches_4": np.array([1.0]),
    ...         "totals_1": np.array([6.0]), "totals_2": np.array([5.0]),
    ...         "totals_3": np.array([4.0]), "totals_4": np.array([3.0])}
    >>> compute_bleu(sums).round(6)
    array([45.48019])
    """
    if smooth_method not in SMOOTH_DEFAULTS:
        raise EvalframeError(
            f"smooth_method={smooth_method!r} is unknown; expected one of "
            f"{', '.join(repr(key) for key in SMOOTH_DEFAULTS)}"
        )
    if smooth_value is None:
        smooth_value = SMOOTH_DEFAULTS[smooth_method]
    sys_len = np.asarray(sums["hyp_len"], dtype=np.float64)
    ref_len = np.asarray(sums["ref_len"], dtype=np.float64)
    m = sys_len.shape[0]
    short = (sys_len < ref_len) & (sys_len > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        argument = np.where(short, 1 - ref_len / np.where(short, sys_len, 1.0), 0.0)
    bp = np.where(sys_len < ref_len, np.where(short, _exp(argument, exact), 0.0), 1.0)

    correct = [np.asarray(sums[f"matches_{n}"], dtype=np.float64) for n in range(1, ORDERS + 1)]
    total = [np.asarray(sums[f"totals_{n}"], dtype=np.float64) for n in range(1, ORDERS + 1)]
    no_match = np.all([c == 0 for c in correct[:max_ngram_order]], axis=0)

    precisions = np.zeros((max_ngram_order, m), dtype=np.float64)
    smooth_mteval = np.ones(m, dtype=np.float64)
    eff_order = np.full(m, max_ngram_order, dtype=np.int64)
    alive = np.ones(m, dtype=bool)  # not yet past an order without n-grams ("break")
    with np.errstate(divide="ignore", invalid="ignore"):
        for n in range(1, max_ngram_order + 1):
            c, t = correct[n - 1], total[n - 1]
            if smooth_method == "add-k" and n > 1:
                c, t = c + smooth_value, t + smooth_value
            alive &= t != 0
            if effective_order:
                eff_order = np.where(alive, n, eff_order)
            zero = c == 0
            if smooth_method == "exp":
                smooth_mteval = np.where(alive & zero, smooth_mteval * 2, smooth_mteval)
                smoothed = 100.0 / (smooth_mteval * t)
            elif smooth_method == "floor":
                smoothed = 100.0 * smooth_value / t
            else:
                smoothed = np.zeros(m)
            value = np.where(zero, smoothed, 100.0 * c / t)
            precisions[n - 1] = np.where(alive, value, 0.0)
    logs = np.where(
        precisions == 0.0, _LOG_ZERO, _log(np.where(precisions == 0.0, 1.0, precisions), exact)
    )
    summed = np.zeros(m, dtype=np.float64)
    for n in range(1, max_ngram_order + 1):
        summed = np.where(n <= eff_order, summed + logs[n - 1], summed)
    score = bp * _exp(summed / eff_order, exact)
    return np.where(no_match, 0.0, score)


def _bleu_reduction(
    *,
    smooth_method: str = "exp",
    smooth_value: float | None = None,
    effective_order: bool = False,
    max_ngram_order: int = ORDERS,
    **_: object,
) -> Sums:
    formula = partial(
        compute_bleu,
        smooth_method=smooth_method,
        smooth_value=smooth_value,
        effective_order=effective_order,
        max_ngram_order=max_ngram_order,
    )
    return Sums("bleu", formula)


def _check_options(metric: str, smooth_method: str, max_ngram_order: int) -> None:
    if smooth_method not in SMOOTH_DEFAULTS:
        raise EvalframeError(
            f"metric {metric!r}: smooth_method={smooth_method!r} is unknown; expected one of "
            f"{', '.join(repr(key) for key in SMOOTH_DEFAULTS)} (sacrebleu's)"
        )
    if not 1 <= max_ngram_order <= ORDERS:
        raise EvalframeError(
            f"metric {metric!r}: max_ngram_order={max_ngram_order} is not supported; "
            f"expected 1 to {ORDERS}"
        )


def sacrebleu_signature(
    *,
    nrefs: int | str = 1,
    lowercase: bool = False,
    tokenize: str = "13a",
    smooth_method: str = "exp",
    smooth_value: float | None = None,
    effective_order: bool = False,
    **_: object,
) -> str:
    """sacrebleu's own BLEU signature for these options (``BLEUSignature.format()``).

    ``nrefs`` is the number of references of every row, or ``"var"`` when rows have
    different numbers (sacrebleu's ``num_refs == -1``); the statistics' ``n_refs`` field
    holds each row's count. Other keyword options (``max_ngram_order``) are not part of
    sacrebleu's signature and are ignored.

    >>> sacrebleu_signature()
    'nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0'
    >>> sacrebleu_signature(nrefs="var", lowercase=True, smooth_method="floor",
    ...                     effective_order=True)
    'nrefs:var|case:lc|eff:yes|tok:13a|smooth:floor[0.10]|version:2.6.0'
    """
    tokenizer = sacrebleu_tokenizer("bleu", tokenize)
    if smooth_method not in SMOOTH_DEFAULTS:
        raise EvalframeError(f"smooth_method={smooth_method!r} is unknown")
    smooth = smooth_method
    default = SMOOTH_DEFAULTS[smooth_method]
    if default is not None:
        smooth += f"[{(default if smooth_value is None else smooth_value):.2f}]"
    parts = [
        f"nrefs:{nrefs}",
        f"case:{'lc' if lowercase else 'mixed'}",
        f"eff:{'yes' if effective_order else 'no'}",
        f"tok:{tokenizer.signature}",
        f"smooth:{smooth}",
        f"version:{SACREBLEU_VERSION}",
    ]
    return "|".join(parts)


# --------------------------------------------------------------------------------------
# Metrics
# --------------------------------------------------------------------------------------

_TOKEN_RULE = (
    "each text is lower-cased with Python's str.lower() if lowercase, right-stripped of "
    "Python whitespace, tokenised by the sacrebleu tokenizer (13a by default) and split on "
    "whitespace, as sacrebleu's _preprocess_segment and extract_all_word_ngrams"
)

_REFS_RULE = (
    "several references (a list[str] gold): clipped counts use the largest count of the "
    "n-gram in one reference; the reference length is the closest to the hypothesis "
    "length, the shorter on a tie (BLEU._get_closest_ref_len)"
)

_NULL_RULE = (
    "null prediction or null gold -> null statistics (left out of the corpus); null "
    "references inside a list are left out, as sacrebleu drops None references (rows may "
    "then have different numbers of references: sacrebleu's nrefs:var); a list of only "
    "nulls -> null; an empty gold list raises EvalframeError"
)

_EMPTY_RULE = (
    "an empty or whitespace-only hypothesis has length 0 and no n-grams (brevity penalty "
    "0); an empty reference has length 0 and no n-grams; no match at any order scores 0"
)

_NLTK_RULES = (
    "tokens are nltk.word_tokenize's (Punkt sentences, then the improved Treebank rules), "
    "computed once per distinct text; sentence_split=false tokenises each text as one "
    "sentence (preserve_line=True)",
    "every gold is a reference: clipped counts use the largest count in one reference; the "
    "reference length is the closest, the shorter on a tie (nltk closest_ref_length)",
    "no unigram match -> 0.0 (an empty prediction included); no match at the weighted "
    "order -> bp * sys.float_info.min (nltk method0)",
    "null prediction or null gold -> null; null golds inside a list are left out; an empty "
    "gold list raises EvalframeError",
)

#: What both sacrebleu metrics register with: roles, dtypes, the 0-100 scale.
_SACREBLEU = {
    **TEXT_PAIR,
    "bounds": (0.0, 100.0),
    "divergences": (
        "max_ngram_order is 1 to 4: sacrebleu accepts higher orders, evalframe refuses them "
        "with EvalframeError (its per-row statistics hold orders 1-4)",
    ),
}

#: The docstring sections of the sacrebleu metrics (bleu, sentence_bleu: one signature)
#: and of lighteval's nltk metrics (bleu_1, bleu_4).
_SECTIONS = {
    "sacrebleu_parameters": """
        prediction
            ``String``: the hypothesis (name or expression).
        gold
            ``String`` (one reference) or ``List(String)`` (several references).
        lowercase
            sacrebleu's ``lowercase``: Python's ``str.lower()`` before tokenising.
        tokenize
            sacrebleu's ``tokenize``: ``"13a"`` (default), ``"none"``, ``"intl"``,
            ``"char"``, ``"zh"`` (:mod:`evalframe.normalize.sacrebleu_tokenize`); the
            tokenizers that need an external model (``ja-mecab``, ``ko-mecab``, ``spm``,
            ``flores*``) are refused.
        smooth_method, smooth_value
            sacrebleu's smoothing: ``"exp"`` (default), ``"floor"`` (value 0.1), ``"add-k"``
            (value 1) or ``"none"``; ``smooth_value=None`` takes the method's default.
        effective_order
            sacrebleu's ``effective_order``: leave out the orders past the last one with
            n-grams (off for :func:`bleu`, on for :func:`sentence_bleu`, as sacrebleu's).
        max_ngram_order
            sacrebleu's ``max_ngram_order``, 1 to 4 (the fields of higher orders are 0).
        """,
    "nltk_parameters": """
        prediction
            ``String``: the prediction.
        gold
            ``String`` or ``List(String)``: lighteval's golds, all used as references.
        sentence_split
            ``True`` (lighteval): ``nltk.word_tokenize(text)``, which splits sentences with
            Punkt first and needs nltk's ``punkt_tab`` data; ``False``:
            ``word_tokenize(text, preserve_line=True)``, each text one sentence (the same
            tokens unless a text holds a sentence break: then a period ending an inner
            sentence stays on its word).
        """,
}


def _per_row_scores(
    statistics: pl.Expr, score: Callable[[dict[str, np.ndarray]], np.ndarray]
) -> pl.Expr:
    """A Float64 score per row from the statistics struct (null where it is null)."""

    def kernel(values: pl.Series) -> pl.Series:
        fields = values.struct.unnest()
        valid = values.is_not_null().to_numpy()
        arrays = {name: fields[name].fill_null(0).to_numpy() for name in fields.columns}
        return pl.Series(score(arrays), dtype=pl.Float64).set(pl.Series(~valid), None)

    return statistics.map_batches(kernel, return_dtype=pl.Float64, is_elementwise=True)


def _sacrebleu_metric(
    name: str, *registrations: Callable[[Callable[..., pl.Expr]], object], doc: str
) -> Callable[..., pl.Expr]:
    """sacrebleu's corpus statistics (``bleu``) or sentence scores (``sentence_bleu``),
    documented and registered under each of ``registrations``."""
    sentence = name == "sentence_bleu"

    def metric(
        prediction: IntoExpr,
        gold: IntoExpr,
        *,
        lowercase: bool = False,
        tokenize: str = "13a",
        smooth_method: str = "exp",
        smooth_value: float | None = None,
        effective_order: bool = sentence,  # sacrebleu.sentence_bleu: use_effective_order
        max_ngram_order: int = ORDERS,
    ) -> pl.Expr:
        _check_options(name, smooth_method, max_ngram_order)
        tokenizer = sacrebleu_tokenizer(name, tokenize)
        tokens = partial(_sacrebleu_tokens, lowercase=lowercase, tokenizer=tokenizer)
        statistics = _statistics(name, prediction, gold, tokens, max_order=max_ngram_order)
        if not sentence:
            return statistics
        score = partial(
            compute_bleu,
            smooth_method=smooth_method,
            smooth_value=smooth_value,
            effective_order=effective_order,
            max_ngram_order=max_ngram_order,
            exact=False,
        )
        return _per_row_scores(statistics, score)

    return generated(metric, name, doc, *registrations, **_SECTIONS)


bleu = _sacrebleu_metric(
    "bleu",
    register(
        "bleu",
        **_SACREBLEU,
        level="corpus",
        statistics=STATISTICS,
        reduce=_bleu_reduction,
        reference_signature=sacrebleu_signature,
        reference=Reference(
            "sacrebleu",
            SACREBLEU_VERSION,
            "sacrebleu.corpus_bleu / metrics.BLEU: _extract_corpus_statistics per segment, "
            "compute_bleu of the sums",
        ),
        description="Corpus BLEU (0-100) from summed n-gram statistics, identical to sacrebleu",
        edge_rules=(
            _TOKEN_RULE,
            _REFS_RULE,
            _NULL_RULE,
            _EMPTY_RULE,
            "statistics per row are sacrebleu's segment statistics [hyp_len, ref_len, "
            "correct_1..4, total_1..4] plus n_refs; the score is compute_bleu of their sums "
            "with Python's math.exp/log, bit-identical",
            "tokenize='ja-mecab', 'ko-mecab', 'spm', 'flores101', 'flores200', 'spBLEU-1K' "
            "need an external model and raise EvalframeError",
        ),
    ),
    doc="""Corpus BLEU: sacrebleu 2.6.0's ``corpus_bleu`` per-row statistics.

    Parameters
    ----------
    {sacrebleu_parameters}

    Returns
    -------
    pl.Expr
        Per row the struct ``{hyp_len, ref_len, matches_1..4, totals_1..4, n_refs}``
        (``Int64``), sacrebleu's segment statistics; the score of a group is
        :func:`compute_bleu` of their sums (0-100). Null where the prediction or gold is
        null, or the gold list holds only nulls.

    Raises
    ------
    EvalframeError
        An unknown or refused option (when built); an empty gold list (when run).

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"hyp": ["the cat sat on the mat", "", None],
    ...                    "ref": ["the cat is on the mat", "hello", "x"]})
    >>> df.with_columns(bleu("hyp", "ref").alias("bleu"))
    shape: (3, 3)
    ┌────────────────────────┬───────────────────────┬─────────────────────────┐
    │ hyp                    ┆ ref                   ┆ bleu                    │
    │ ---                    ┆ ---                   ┆ ---                     │
    │ str                    ┆ str                   ┆ struct[11]              │
    ╞════════════════════════╪═══════════════════════╪═════════════════════════╡
    │ the cat sat on the mat ┆ the cat is on the mat ┆ {6,6,5,3,1,0,6,5,4,3,1} │
    │                        ┆ hello                 ┆ {0,1,0,0,0,0,0,0,0,0,1} │
    │ null                   ┆ x                     ┆ null                    │
    └────────────────────────┴───────────────────────┴─────────────────────────┘
    """,
)

sentence_bleu = _sacrebleu_metric(
    "sentence_bleu",
    register(
        "sentence_bleu",
        **_SACREBLEU,
        reference=Reference(
            "sacrebleu", SACREBLEU_VERSION, "sacrebleu.sentence_bleu (use_effective_order=True)"
        ),
        description="Sentence-level BLEU (0-100) per row, as sacrebleu.sentence_bleu",
        edge_rules=(
            _TOKEN_RULE,
            _REFS_RULE,
            "null prediction or null gold -> null; null references inside a list are left "
            "out; a list of only nulls -> null; an empty gold list raises EvalframeError",
            _EMPTY_RULE,
            "effective_order is on and smoothing is 'exp' by default, as "
            "sacrebleu.sentence_bleu",
        ),
    ),
    doc="""Sentence BLEU per row: ``sacrebleu.sentence_bleu`` (0-100).

    ``sacrebleu.sentence_bleu(hyp, refs)`` is ``BLEU(effective_order=True,
    smooth_method="exp").sentence_score``: the row's own statistics (as :func:`bleu`)
    through ``compute_bleu``.

    Parameters
    ----------
    {sacrebleu_parameters}

    Returns
    -------
    pl.Expr
        ``Float64`` in [0, 100] per row; null where the prediction or gold is null.

    Notes
    -----
    The row scores use numpy's ``exp`` and ``log``, which may differ from Python's
    ``math`` in the last bit (differences of about 1e-14); corpus scores use ``math`` and
    are bit-identical.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"hyp": ["the cat sat on the mat", "", None],
    ...                    "ref": ["the cat is on the mat", "hello", "x"]})
    >>> df.with_columns(sentence_bleu("hyp", "ref").alias("sentence_bleu"))
    shape: (3, 3)
    ┌────────────────────────┬───────────────────────┬───────────────┐
    │ hyp                    ┆ ref                   ┆ sentence_bleu │
    │ ---                    ┆ ---                   ┆ ---           │
    │ str                    ┆ str                   ┆ f64           │
    ╞════════════════════════╪═══════════════════════╪═══════════════╡
    │ the cat sat on the mat ┆ the cat is on the mat ┆ 37.991784     │
    │                        ┆ hello                 ┆ 0.0           │
    │ null                   ┆ x                     ┆ null          │
    └────────────────────────┴───────────────────────┴───────────────┘
    """,
)


def nltk_sentence_bleu(stats: Mapping[str, np.ndarray], order: int) -> np.ndarray:
    """nltk 3.10's ``sentence_bleu`` with the weight 1 on ``order`` only, no smoothing.

    From the statistics of :func:`bleu` (nltk's ``modified_precision`` counts the same
    clipped matches, with the denominator ``max(1, total)``; ``closest_ref_length`` is
    the same rule): 0 when no unigram matches; else ``bp * exp(log(p))`` with ``p =
    matches / max(1, total)`` of that order, or ``sys.float_info.min`` when it has no
    match (``method0``), and ``bp`` 1 for a hypothesis longer than the closest reference,
    else ``exp(1 - ref_len / hyp_len)``.

    >>> import numpy as np
    >>> stats = {"hyp_len": np.array([3]), "ref_len": np.array([4]),
    ...          "matches_1": np.array([3]), "totals_1": np.array([3])}
    >>> nltk_sentence_bleu(stats, 1).round(6)
    array([0.716531])
    """
    hyp_len = np.asarray(stats["hyp_len"], dtype=np.float64)
    ref_len = np.asarray(stats["ref_len"], dtype=np.float64)
    matches = np.asarray(stats[f"matches_{order}"], dtype=np.float64)
    totals = np.maximum(np.asarray(stats[f"totals_{order}"], dtype=np.float64), 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        precision = np.where(matches == 0, sys.float_info.min, matches / totals)
        shorter = (hyp_len <= ref_len) & (hyp_len > 0)
        argument = np.where(shorter, 1 - ref_len / np.where(shorter, hyp_len, 1.0), 0.0)
        bp = np.where(hyp_len > ref_len, 1.0, np.where(hyp_len == 0, 0.0, np.exp(argument)))
        score = bp * np.exp(np.log(precision))
    return np.where(np.asarray(stats["matches_1"]) == 0, 0.0, score)


_NLTK_DOC = """{summary}

    {details}

    Parameters
    ----------
    {nltk_parameters}

    Returns
    -------
    pl.Expr
        ``Float64`` in [0, 1] per row; null where the prediction or gold is null.

    Notes
    -----
    nltk's tokenizer runs in Python (Punkt and the Treebank look-around rules are not
    expressions); the counting and the score are vectorised. lighteval averages over
    several samples; here a row holds one prediction.

    Examples
    --------
    {example}
    """


def _nltk_metric(order: int, *, example: str) -> Callable[..., pl.Expr]:
    """lighteval's ``bleu_{order}``, documented and registered."""
    name = f"bleu_{order}"

    def metric(prediction: IntoExpr, gold: IntoExpr, *, sentence_split: bool = True) -> pl.Expr:
        if sentence_split and not _punkt_available():
            raise EvalframeError(
                f"metric {name!r}: lighteval tokenises with nltk.word_tokenize, whose Punkt "
                "sentence splitter needs nltk's 'punkt_tab' data (python -c \"import nltk; "
                "nltk.download('punkt_tab')\"), which is not installed; or pass "
                "sentence_split=false to tokenise each text as one sentence "
                "(word_tokenize(text, preserve_line=True))"
            )
        tokens = partial(_nltk_tokens, sentence_split=sentence_split)
        statistics = _statistics(name, prediction, gold, tokens, max_order=order)
        return _per_row_scores(statistics, partial(nltk_sentence_bleu, order=order))

    weights = tuple(int(n == order) for n in range(1, ORDERS + 1))
    registration = register(
        name,
        **TEXT_PAIR,
        reference=Reference(
            "lighteval",
            LIGHTEVAL_VERSION,
            f"metrics.Metrics.{name} (metrics_sample.BLEU(n_gram={order}): "
            "nltk.translate.bleu_score.sentence_bleu over nltk.word_tokenize)",
        ),
        description=f"Lighteval's {name}: nltk sentence BLEU with all weight on "
        f"{order}-grams (0-1)",
        edge_rules=_NLTK_RULES,
    )
    return generated(
        metric, name, _NLTK_DOC, registration, **_SECTIONS, example=example,
        summary=f"lighteval's ``{name}``: nltk sentence BLEU with weights {weights}, 0-1.",
        details=f"""
            ``lighteval.metrics.metrics_sample.BLEU(n_gram={order})._bleu_score``:
            ``nltk.translate.bleu_score.sentence_bleu([word_tokenize(g) for g in golds],
            word_tokenize(pred), weights={weights})``, no smoothing function
            (:func:`nltk_sentence_bleu`): the brevity penalty times the clipped {order}-gram
            precision.
            """,
    )


bleu_1 = _nltk_metric(
    1,
    example="""
        >>> import polars as pl
        >>> df = pl.DataFrame({"pred": ["Le renard rapide", "Il pleut", None],
        ...                    "gold": ["Le renard brun rapide", "Le soleil", "x"]})
        >>> df.with_columns(bleu_1("pred", "gold", sentence_split=False).alias("bleu_1"))
        shape: (3, 3)
        ┌──────────────────┬───────────────────────┬──────────┐
        │ pred             ┆ gold                  ┆ bleu_1   │
        │ ---              ┆ ---                   ┆ ---      │
        │ str              ┆ str                   ┆ f64      │
        ╞══════════════════╪═══════════════════════╪══════════╡
        │ Le renard rapide ┆ Le renard brun rapide ┆ 0.716531 │
        │ Il pleut         ┆ Le soleil             ┆ 0.0      │
        │ null             ┆ x                     ┆ null     │
        └──────────────────┴───────────────────────┴──────────┘
        """,
)

bleu_4 = _nltk_metric(
    4,
    example="""
        >>> import polars as pl
        >>> df = pl.DataFrame({"pred": ["Le renard brun rapide saute", "Bonjour", None],
        ...                    "gold": ["Le renard brun rapide saute", "Bonjour", "x"]})
        >>> df.with_columns(bleu_4("pred", "gold", sentence_split=False).alias("bleu_4"))
        shape: (3, 3)
        ┌─────────────────────────────┬─────────────────────────────┬─────────────┐
        │ pred                        ┆ gold                        ┆ bleu_4      │
        │ ---                         ┆ ---                         ┆ ---         │
        │ str                         ┆ str                         ┆ f64         │
        ╞═════════════════════════════╪═════════════════════════════╪═════════════╡
        │ Le renard brun rapide saute ┆ Le renard brun rapide saute ┆ 1.0         │
        │ Bonjour                     ┆ Bonjour                     ┆ 2.2251e-308 │
        │ null                        ┆ x                           ┆ null        │
        └─────────────────────────────┴─────────────────────────────┴─────────────┘
        """,
)
