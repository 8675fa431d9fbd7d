"""Word-overlap metrics: F1 between the words of the prediction and the gold.

- :func:`token_f1`: SQuAD's F1 over the *multiset* of words (``collections.Counter``),
  after a normaliser (SQuAD's by default), best over gold alternatives.
- :func:`word_set_f1`: lighteval's ``f1_score``: F1 between the *sets* of words
  (``nltk.scores.f_measure``), best over (prediction, gold) pairs; with
  ``normalizer="helm"`` it is lighteval's ``f1_score_quasi``.

For ``"a a b"`` against ``"a b"`` the set F1 is 1.0 and the multiset F1 0.8.

>>> import polars as pl
>>> from evalframe import metrics as M
>>> df = pl.DataFrame({"pred": ["a a b", None], "gold": ["a b", "x"]})
>>> df.select(M.token_f1("pred", "gold", normalizer="none").alias("multiset"),
...           M.word_set_f1("pred", "gold").alias("set"))
shape: (2, 2)
┌──────────┬──────┐
│ multiset ┆ set  │
│ ---      ┆ ---  │
│ f64      ┆ f64  │
╞══════════╪══════╡
│ 0.8      ┆ 1.0  │
│ null     ┆ null │
└──────────┴──────┘
"""

from __future__ import annotations

from collections.abc import Callable

import polars as pl

from evalframe._expr import IntoExpr, guard, parse_into_expr
from evalframe.metrics._pairs import max_over_pairs
from evalframe.metrics._rules import COMPUTE_F1_RULE, GOLD_EDGE_RULES, MULTI_RULE, NULL_RULE
from evalframe.metrics._text_inputs import DTYPES, TEXT_DTYPES, as_alternatives, empty_gold_check
from evalframe.metrics._token_f1 import map_alternatives, token_f1_expr
from evalframe.metrics.exact_match import LIGHTEVAL_VERSION
from evalframe.metrics.registry import Reference, register
from evalframe.normalize._python_text import split, split_join
from evalframe.normalize.squad import squad_normalize
from evalframe.normalize.table import TextFunction, resolve_normalizer

__all__ = ["token_f1", "word_set_f1"]

@register(
    "token_f1",
    roles=("prediction", "gold"),
    dtypes=DTYPES,
    reference=Reference(
        "transformers", "4.57", "data.metrics.squad_metrics.compute_f1 (max over golds)"
    ),
    description="Multiset token F1 after SQuAD normalisation, best over gold alternatives",
    edge_rules=(
        *GOLD_EDGE_RULES,
        "words are a multiset: a repeated word counts as often as both sides have it",
        "a side without words: 1.0 if both have none, else 0.0; gold alternatives without "
        "words are kept (unlike squad_f1)",
        COMPUTE_F1_RULE,
    ),
    divergences=(
        "compute_f1 scores one gold string; token_f1 takes the maximum over alternatives and, "
        "unlike get_raw_scores, does not drop alternatives that normalise to '' (token_f1('', "
        "['x', '']) = 1.0, squad_f1 gives 0.0)",
    ),
)
def token_f1(
    prediction: IntoExpr,
    gold: IntoExpr,
    *,
    normalizer: str | TextFunction | None = "squad",
) -> pl.Expr:
    """Token F1 over the multiset of words, with a configurable normaliser.

    Parameters
    ----------
    prediction, gold
        ``String`` columns (names or expressions); ``gold`` may also be a
        ``List(String)`` column of alternatives.
    normalizer
        A name from the normaliser table (see :data:`evalframe.normalize.NORMALIZERS`)
        or a function from ``pl.Expr`` to ``pl.Expr``, applied to both sides before
        splitting into words on Python whitespace (``str.split()``); ``"none"`` splits
        the raw text. Default: ``"squad"`` (:func:`evalframe.normalize.squad_normalize`).

    Returns
    -------
    pl.Expr
        ``Float64`` in [0, 1] per row (the best alternative); null where an input
        is null.

    Notes
    -----
    Reference: ``compute_f1`` of the SQuAD 2.0 official script
    (``transformers.data.metrics.squad_metrics``), maximised over the alternatives,
    bit-identical with the default normaliser.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"pred": ["a b c", "", "The Cat", None],
    ...                    "gold": [["c d"], ["x", ""], ["the cat"], ["x"]]})
    >>> df.with_columns(token_f1("pred", "gold").alias("squad_norm"),
    ...                 token_f1("pred", "gold", normalizer="none").alias("raw"))
    shape: (4, 4)
    ┌─────────┬─────────────┬────────────┬──────┐
    │ pred    ┆ gold        ┆ squad_norm ┆ raw  │
    │ ---     ┆ ---         ┆ ---        ┆ ---  │
    │ str     ┆ list[str]   ┆ f64        ┆ f64  │
    ╞═════════╪═════════════╪════════════╪══════╡
    │ a b c   ┆ ["c d"]     ┆ 0.5        ┆ 0.4  │
    │         ┆ ["x", ""]   ┆ 1.0        ┆ 1.0  │
    │ The Cat ┆ ["the cat"] ┆ 1.0        ┆ 0.0  │
    │ null    ┆ ["x"]       ┆ null       ┆ null │
    └─────────┴─────────────┴────────────┴──────┘
    """
    _, normalize = resolve_normalizer("token_f1", normalizer)
    if normalize is None:
        words = split_join
    elif normalize is squad_normalize:  # already joins the words with single spaces
        words = squad_normalize
    else:
        def words(text: pl.Expr) -> pl.Expr:
            return split_join(normalize(text))

    golds = as_alternatives(gold)
    pred = words(parse_into_expr(prediction).cast(pl.String))
    share = words is squad_normalize or words is split_join  # else a new closure
    values = token_f1_expr(
        pred, map_alternatives(golds, words, share=share), drop_empty_gold=False
    )
    return guard("token_f1", values, [empty_gold_check(gold)])


@register(
    "word_set_f1",
    roles=("prediction", "gold"),
    dtypes=TEXT_DTYPES,
    reference=Reference("lighteval", LIGHTEVAL_VERSION, "metrics.Metrics.f1_score (F1_score)"),
    description="F1 between the sets of whitespace-separated words (lighteval f1_score)",
    edge_rules=(
        "set F1 (nltk.scores.f_measure of word sets, alpha=0.5): repeated words count once; "
        "not SQuAD's multiset token_f1",
        "words are Python str.split() pieces; '' or whitespace-only on either side scores "
        "0.0, '' vs '' included",
        MULTI_RULE,
        NULL_RULE,
        "normalizer='none' by default: case and punctuation count ('The' != 'the'); "
        "normalizer='helm' is lighteval's f1_score_quasi",
    ),
)
def word_set_f1(
    prediction: IntoExpr, gold: IntoExpr, *, normalizer: str | TextFunction | None = "none"
) -> pl.Expr:
    """F1 between the *sets* of words of prediction and gold (lighteval's ``f1_score``).

    ``F1_score().compute_one_item``: optionally normalise both texts, split each on
    whitespace (Python's ``str.split()``), turn the words into sets and return
    ``nltk.scores.f_measure(gold_set, prediction_set)`` = ``1 / (0.5 / P + 0.5 / R)``
    with ``P = |common| / |prediction set|`` and ``R = |common| / |gold set|``; 0.0 when
    either set is empty or nothing is shared.

    Parameters
    ----------
    prediction, gold
        ``str`` columns, or ``list[str]``: several samples (prediction), alternatives (gold).
    normalizer
        A name from the normaliser table or a function from ``pl.Expr`` to ``pl.Expr``:
        ``"none"`` (the default) is lighteval's ``f1_score``, ``"helm"`` its
        ``f1_score_quasi``.

    Returns
    -------
    pl.Expr
        ``Float64`` per row, the best pair's F1 in [0, 1]; null where an input is null.

    Notes
    -----
    lighteval's ``F1_score`` accepts ``strip_strings`` but never uses it; stripping
    cannot change a whitespace split anyway. ``f_measure`` returns ``None`` for an empty
    set, which lighteval turns into 0.0.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"pred": ["the cat sat", "Cat cat", "", None],
    ...                    "gold": ["the cat", "the cat", "", "cat"]})
    >>> df.with_columns(word_set_f1("pred", "gold").alias("f1"))
    shape: (4, 3)
    ┌─────────────┬─────────┬──────┐
    │ pred        ┆ gold    ┆ f1   │
    │ ---         ┆ ---     ┆ ---  │
    │ str         ┆ str     ┆ f64  │
    ╞═════════════╪═════════╪══════╡
    │ the cat sat ┆ the cat ┆ 0.8  │
    │ Cat cat     ┆ the cat ┆ 0.5  │
    │             ┆         ┆ 0.0  │
    │ null        ┆ cat     ┆ null │
    └─────────────┴─────────┴──────┘
    """
    _, normalize = resolve_normalizer("word_set_f1", normalizer)

    def words(name: str) -> Callable[[pl.Expr], list[pl.Expr]]:
        def prepare(value: pl.Expr) -> list[pl.Expr]:
            text = normalize(value) if normalize is not None else value
            return [split(text).list.unique().alias(name)]

        return prepare

    pred, ref = pl.col("pred_words"), pl.col("gold_words")
    common = pred.list.set_intersection(ref).list.len().cast(pl.Float64)
    precision = common / pred.list.len().cast(pl.Float64)
    recall = common / ref.list.len().cast(pl.Float64)
    score = (
        pl.when(pred.is_null() | ref.is_null())
        .then(None)
        .when((pred.list.len() == 0) | (ref.list.len() == 0) | (common == 0))
        .then(0.0)
        .otherwise(1.0 / (0.5 / precision + 0.5 / recall))
    )
    return max_over_pairs(
        "word_set_f1", prediction, gold, words("pred_words"), words("gold_words"), score
    )

