"""TER, the translation edit rate, exactly as sacrebleu 2.6.0 computes it.

``ter`` is a corpus metric (lower is better, 0-100 scale, above 100 when the hypotheses
are longer than the references). Per row it gives sacrebleu's segment statistics, the
struct ``{num_edits: Int64, ref_length: Float64}``: the fewest edits (shifts, insertions,
deletions, substitutions of words) over the row's references, and the *average* length
of its references in words (``TER._compute_segment_statistics``). The score of a group is
``100 * Σ num_edits / Σ ref_length`` (``TER._compute_score_from_stats``).

TER's shift search (Tercom's greedy shifts with a beam edit distance) is intricate and
has corner cases sacrebleu documents as its own, so the segment statistics are computed
by **sacrebleu itself**, an optional dependency (``pip install 'evalframe[ter]'``): one
batched kernel over the batch's *distinct* (hypothesis, references) pairs, each scored
once, with sacrebleu's ``TercomTokenizer`` (its normalisation and lower-casing) and its
reference handling. The sums and the score are evalframe's, so grouping, the bootstrap
and paired tests never call sacrebleu again.

>>> import polars as pl
>>> from evalframe import metrics as M
>>> df = pl.DataFrame({"hyp": ["the cat sat on mat", "a b", None],
...                    "ref": [["the cat sat on the mat"], ["b a", "a c"], ["x"]]})
>>> df.with_columns(M.ter("hyp", "ref").alias("ter"))
shape: (3, 3)
┌────────────────────┬────────────────────────────┬───────────┐
│ hyp                ┆ ref                        ┆ ter       │
│ ---                ┆ ---                        ┆ ---       │
│ str                ┆ list[str]                  ┆ struct[2] │
╞════════════════════╪════════════════════════════╪═══════════╡
│ the cat sat on mat ┆ ["the cat sat on the mat"] ┆ {1,6.0}   │
│ a b                ┆ ["b a", "a c"]             ┆ {1,2.0}   │
│ null               ┆ ["x"]                      ┆ null      │
└────────────────────┴────────────────────────────┴───────────┘
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from functools import cache

import numpy as np
import polars as pl

from evalframe._expr import IntoExpr, guard, parse_into_expr, shared_kernel
from evalframe.errors import EvalframeError
from evalframe.metrics._text_inputs import empty_gold_check
from evalframe.metrics._text_rules import TEXT_PAIR
from evalframe.metrics.reduce import Sums
from evalframe.metrics.registry import Reference, register

__all__ = ["sacrebleu_signature", "ter", "ter_score"]

#: The sacrebleu release whose TER this reproduces (the ``ter`` extra pins it).
SACREBLEU_VERSION = "2.6.0"

#: Per-row statistics: sacrebleu's ``[best_num_edits, avg_ref_len]``.
STATISTICS = pl.Struct({"num_edits": pl.Int64, "ref_length": pl.Float64})


def _sacrebleu_ter():
    try:
        from sacrebleu.metrics import TER
    except ImportError as error:
        raise EvalframeError(
            "metric 'ter' computes its segment statistics with sacrebleu, which is not "
            "installed: pip install 'evalframe[ter]' (sacrebleu==2.6.0)"
        ) from error
    return TER


@cache
def _scorer(normalized: bool, no_punct: bool, asian_support: bool, case_sensitive: bool):
    """One sacrebleu ``TER`` per setting (its tokeniser caches the sentences it has seen)."""
    return _sacrebleu_ter()(
        normalized=normalized, no_punct=no_punct, asian_support=asian_support,
        case_sensitive=case_sensitive,
    )


def _statistics(options: tuple[bool, bool, bool, bool], inputs: pl.Series) -> pl.Series:
    hypothesis = inputs.struct.field("prediction").cast(pl.String)
    gold = inputs.struct.field("gold")
    if not isinstance(gold.dtype, pl.List):
        gold = pl.select(pl.concat_list([pl.lit(gold.cast(pl.String))])).to_series()
    frame = pl.DataFrame(
        {"hyp": hypothesis, "refs": gold.cast(pl.List(pl.String)).list.drop_nulls()}
    ).with_row_index("row")
    scoreable = pl.col("hyp").is_not_null() & (pl.col("refs").list.len() > 0)
    distinct = (
        frame.filter(scoreable).select("hyp", "refs").unique(maintain_order=True)
        .with_row_index("pair")
    )
    num_edits: list[int] = []
    ref_length: list[float] = []
    if distinct.height:
        depth = int(distinct["refs"].list.len().max())
        streams = [
            distinct["refs"].list.get(k, null_on_oob=True).to_list() for k in range(depth)
        ]
        # sacrebleu's own path of corpus_score: references cached (None dropped), each
        # hypothesis pre-processed, then TER._compute_segment_statistics per segment.
        stats = _scorer(*options)._extract_corpus_statistics(
            distinct["hyp"].to_list(), streams
        )
        num_edits = [int(edits) for edits, _ in stats]
        ref_length = [float(length) for _, length in stats]
    values = distinct.select(
        "hyp", "refs",
        pl.Series("num_edits", num_edits, dtype=pl.Int64),
        pl.Series("ref_length", ref_length, dtype=pl.Float64),
    )
    joined = frame.join(values, on=["hyp", "refs"], how="left", nulls_equal=False,
                        maintain_order="left")
    return joined.select(
        pl.when(pl.col("num_edits").is_not_null())
        .then(pl.struct("num_edits", "ref_length"))
        .alias("ter")
    ).to_series()


@cache
def _kernel(*options: bool) -> Callable[[pl.Series], pl.Series]:
    def kernel(inputs: pl.Series) -> pl.Series:
        return _statistics(options, inputs)

    return kernel


def _ter_formula(sums: Mapping[str, np.ndarray]) -> np.ndarray:
    """``TER._compute_score_from_stats`` over a leading axis of tables."""
    edits = np.asarray(sums["num_edits"], dtype=np.float64)
    length = np.asarray(sums["ref_length"], dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = edits / length
    score = np.where(length > 0, ratio, np.where(edits > 0, 1.0, 0.0))
    return 100 * score


#: The reduction: ``100 * Σ num_edits / Σ ref_length`` (sacrebleu's, with its empty cases).
TER_SCORE = Sums("ter", _ter_formula)


def ter_score(num_edits: float, ref_length: float) -> float:
    """The TER score of summed statistics, as sacrebleu's ``_compute_score_from_stats``.

    >>> ter_score(3, 12.0), ter_score(2, 0.0), ter_score(0, 0.0)
    (25.0, 100.0, 0.0)
    """
    value = _ter_formula({"num_edits": np.array([num_edits]), "ref_length": np.array([ref_length])})
    return float(value[0])


def sacrebleu_signature(
    *,
    nrefs: int | str = 1,
    normalized: bool = False,
    no_punct: bool = False,
    asian_support: bool = False,
    case_sensitive: bool = False,
    short: bool = False,
) -> str:
    """sacrebleu's own signature of TER with these settings (``TER.get_signature()``).

    ``nrefs`` is the number of references per segment, or ``"var"`` when rows differ
    (sacrebleu prints ``nrefs:var``). Built without importing sacrebleu; the tests check
    it against ``sacrebleu.metrics.TER(...).get_signature()``.

    >>> sacrebleu_signature()
    'nrefs:1|case:lc|tok:tercom|norm:no|punct:yes|asian:no|version:2.6.0'
    >>> sacrebleu_signature(nrefs=2, case_sensitive=True, short=True)
    '#:2|c:mixed|t:tercom|nr:no|pn:yes|as:no|v:2.6.0'
    """
    if nrefs == -1:
        nrefs = "var"
    if not (nrefs == "var" or (isinstance(nrefs, int) and nrefs >= 1)):
        raise EvalframeError(f"sacrebleu_signature: nrefs must be >= 1 or 'var', got {nrefs!r}")

    def yes(value: bool) -> str:
        return "yes" if value else "no"

    items = [
        ("nrefs", "#", str(nrefs)),
        ("case", "c", "mixed" if case_sensitive else "lc"),
        ("tok", "t", "tercom"),
        ("norm", "nr", yes(normalized)),
        ("punct", "pn", yes(not no_punct)),
        ("asian", "as", yes(asian_support)),
        ("version", "v", SACREBLEU_VERSION),
    ]
    return "|".join(f"{abbr if short else name}:{value}" for name, abbr, value in items)


@register(
    "ter",
    **TEXT_PAIR,
    level="corpus",
    higher_is_better=False,
    bounds=(0.0, math.inf),
    statistics=STATISTICS,
    reduce=TER_SCORE,
    reference_signature=sacrebleu_signature,
    reference=Reference("sacrebleu", SACREBLEU_VERSION, "sacrebleu.metrics.TER.corpus_score"),
    description="Translation edit rate (sacrebleu TER, 0-100, lower is better); segment "
    "statistics by sacrebleu",
    edge_rules=(
        "per row: the fewest edits over the references (shifts count one each) and the "
        "average reference length in words, as TER._compute_segment_statistics; the score "
        "is 100 * sum(num_edits) / sum(ref_length)",
        "a group whose reference lengths sum to 0 scores 100.0 if any edit is needed, else "
        "0.0 (sacrebleu's rule for empty references)",
        "hypothesis and references are right-stripped and tokenised by sacrebleu's "
        "TercomTokenizer (lower-cased unless case_sensitive); '' is a reference of length 0",
        "null references inside a gold list are dropped (sacrebleu drops None); a null "
        "hypothesis, a null gold or a list of only null references gives null statistics "
        "(sacrebleu raises); an empty gold list raises EvalframeError",
        "rows may have different numbers of references (sacrebleu's nrefs:var)",
    ),
)
def ter(
    prediction: IntoExpr,
    gold: IntoExpr,
    *,
    normalized: bool = False,
    no_punct: bool = False,
    asian_support: bool = False,
    case_sensitive: bool = False,
) -> pl.Expr:
    """TER segment statistics (sacrebleu 2.6.0 ``TER``), reduced by :data:`TER_SCORE`.

    Parameters
    ----------
    prediction
        The hypothesis (``str``).
    gold
        The reference (``str``) or several references (``list[str]``).
    normalized
        sacrebleu's ``normalized``: Tercom's normalisation (joins lines, unescapes
        ``&quot;``/``&amp;``/``&lt;``/``&gt;``, separates punctuation).
    no_punct
        sacrebleu's ``no_punct``: remove ``.,?:;!"()``.
    asian_support
        sacrebleu's ``asian_support``: with ``normalized`` split CJK characters, with
        ``no_punct`` also remove CJK and full-width punctuation.
    case_sensitive
        sacrebleu's ``case_sensitive``; by default both sides are lower-cased.

    Returns
    -------
    pl.Expr
        Per row ``{num_edits: Int64, ref_length: Float64}``; null where the hypothesis
        or the gold is null, or every reference of the row is null.

    Raises
    ------
    EvalframeError
        sacrebleu is not installed (when built); an empty reference list (when run).

    Notes
    -----
    The statistics come from sacrebleu (``TER._extract_corpus_statistics`` over the
    distinct pairs of a batch), so they are sacrebleu's by construction; see the module.

    Examples
    --------
    >>> import numpy as np, polars as pl
    >>> df = pl.DataFrame({"hyp": ["Hello World!", "x y z", None],
    ...                    "ref": ["hello world !", "", "x"]})
    >>> stats = df.with_columns(ter("hyp", "ref").alias("ter"))
    >>> stats
    shape: (3, 3)
    ┌──────────────┬───────────────┬───────────┐
    │ hyp          ┆ ref           ┆ ter       │
    │ ---          ┆ ---           ┆ ---       │
    │ str          ┆ str           ┆ struct[2] │
    ╞══════════════╪═══════════════╪═══════════╡
    │ Hello World! ┆ hello world ! ┆ {2,3.0}   │
    │ x y z        ┆               ┆ {3,0.0}   │
    │ null         ┆ x             ┆ null      │
    └──────────────┴───────────────┴───────────┘
    >>> sums = stats["ter"].struct.unnest().sum()
    >>> TER_SCORE.formula({k: sums[k].to_numpy() for k in sums.columns})
    array([166.66666667])
    """
    _sacrebleu_ter()
    pred, ref = parse_into_expr(prediction), parse_into_expr(gold)
    inputs = pl.struct(pred.cast(pl.String).alias("prediction"), ref.alias("gold"))
    kernel = _kernel(bool(normalized), bool(no_punct), bool(asian_support), bool(case_sensitive))
    values = shared_kernel(inputs, kernel, STATISTICS)
    return guard("ter", values, [empty_gold_check(gold)], dtype=STATISTICS)
