"""SQuAD exact match and token F1, as the official SQuAD 2.0 evaluation script scores them.

Reference: ``transformers.data.metrics.squad_metrics`` (the SQuAD 2.0 official
``evaluate-v2.0.py`` functions): ``get_raw_scores`` takes, for each question, the
maximum of ``compute_exact`` and of ``compute_f1`` over the gold answers that do
not normalise to ``""``, and scores a question left without any (SQuAD 2.0's
unanswerable questions) against the single gold ``""``.

Requesting ``squad_em`` and ``squad_f1`` together in one ``with_columns`` (or one
:func:`evalframe.score`) on a LazyFrame normalises each string once: the two
expressions share their normalisation, which polars' common-subexpression
elimination computes once.

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

import polars as pl

from evalframe._expr import IntoExpr, parse_into_expr
from evalframe.metrics._token_f1 import map_alternatives, token_f1_expr
from evalframe.metrics.registry import Reference, register
from evalframe.normalize.squad import squad_normalize
from evalframe.schema import LIST_STR, STR

__all__ = ["squad_em", "squad_f1"]

REFERENCE_EM = Reference(
    "transformers", "4.57", "data.metrics.squad_metrics.get_raw_scores (compute_exact)"
)
REFERENCE_F1 = Reference(
    "transformers", "4.57", "data.metrics.squad_metrics.get_raw_scores (compute_f1)"
)

_DTYPES = {"prediction": (STR,), "gold": (STR, LIST_STR)}

_COMMON_EDGE_RULES = (
    "normalisation is SQuAD's normalize_answer with Python semantics: str.lower (final "
    "sigma), ASCII string.punctuation only, articles a/an/the removed between Python \\b "
    "boundaries (a combining mark is not a word character), str.split() whitespace "
    "(\\x1c-\\x1f, \\x85, \\u3000 split; \\u200b does not)",
    "gold may be one string or a list of alternatives; the score is the maximum over them",
    "gold alternatives that normalise to '' (empty, whitespace, punctuation or articles "
    "only) are dropped; a question left without any, an empty gold list included (SQuAD "
    "2.0's unanswerable question), has the single gold '', matched only by a prediction "
    "that normalises to ''",
    "null prediction or null gold -> null; null alternatives inside a gold list are "
    "skipped; a gold list whose alternatives are all null -> null",
)


def _normalized_inputs(prediction: IntoExpr, gold: IntoExpr) -> tuple[pl.Expr, pl.Expr, pl.Expr]:
    """The normalised prediction, the normalised gold list, and its non-null count.

    Built identically for both metrics so that polars computes them once when both
    metrics are requested together.
    """
    pred = parse_into_expr(prediction).cast(pl.String)
    golds = pl.concat_list([parse_into_expr(gold)]).cast(pl.List(pl.String))
    normalized_pred = squad_normalize(pred)
    normalized_golds = map_alternatives(golds, squad_normalize)
    valid = golds.list.len() - golds.list.count_matches(None)
    return normalized_pred, normalized_golds, valid


def _null_rows(prediction: IntoExpr, gold: IntoExpr, valid: pl.Expr) -> pl.Expr:
    golds = pl.concat_list([parse_into_expr(gold)])
    all_null = (golds.list.len() > 0) & (valid == 0)
    return parse_into_expr(prediction).is_null() | golds.is_null() | all_null


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
        ``Float64``, 1.0 or 0.0 per row; null where an input is null.

    Notes
    -----
    Reference: ``get_raw_scores``'s ``max(compute_exact(a, pred) for a in gold_answers)``
    (SQuAD 2.0 official script, ``transformers.data.metrics.squad_metrics``), with
    ``gold_answers`` the alternatives that do not normalise to ``""``, or ``[""]``
    when there are none. Edge rules: an empty prediction scores 1.0 exactly when no
    gold answer survives normalisation (an unanswerable question, an empty gold
    list, or golds like ``"the"`` or ``"..."``) and 0.0 otherwise; null prediction
    or gold gives null; null alternatives are skipped, and a list of only null
    alternatives gives null.

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
    normalized_pred, normalized_golds, valid = _normalized_inputs(prediction, gold)
    answerable = valid - normalized_golds.list.count_matches("")
    exact = (
        pl.when(normalized_pred == "")
        .then(answerable == 0)
        .otherwise(normalized_golds.list.contains(normalized_pred))
    )
    return (
        pl.when(_null_rows(prediction, gold, valid))
        .then(pl.lit(None, dtype=pl.Float64))
        .otherwise(exact.cast(pl.Float64))
    )


def squad_f1(prediction: IntoExpr, gold: IntoExpr) -> pl.Expr:
    """SQuAD token F1: the harmonic mean of token precision and recall, best gold answer.

    Parameters
    ----------
    prediction
        ``String`` column (name or expression): the model's answer.
    gold
        ``String`` or ``List(String)`` column: the gold answer, or its alternatives.

    Returns
    -------
    pl.Expr
        ``Float64`` in [0, 1] per row; null where an input is null.

    Notes
    -----
    Reference: ``get_raw_scores``'s ``max(compute_f1(a, pred) for a in gold_answers)``
    (SQuAD 2.0 official script, ``transformers.data.metrics.squad_metrics``); every
    value is bit-identical to it. Tokens are the words of the normalised text and
    are counted as a multiset (a word repeated in both answers counts as often as
    it is shared). ``precision = same / len(pred)``, ``recall = same / len(gold)``,
    ``f1 = (2 * precision * recall) / (precision + recall)``, evaluated in that
    order. Edge rules: when the prediction or the gold answer has no tokens, F1 is
    1.0 if both have none and 0.0 otherwise; gold answers without tokens are
    dropped first, as for :func:`squad_em`, and a question left without any has
    the single gold ``""``; null prediction or gold gives null; null alternatives
    are skipped, and a list of only null alternatives gives null.

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
    normalized_pred, normalized_golds, _ = _normalized_inputs(prediction, gold)
    return token_f1_expr(normalized_pred, normalized_golds, drop_empty_gold=True)


register(
    "squad_em",
    roles=("prediction", "gold"),
    dtypes=_DTYPES,
    reference=REFERENCE_EM,
    description="SQuAD exact match after normalize_answer, best over gold alternatives",
    edge_rules=(
        *_COMMON_EDGE_RULES,
        "an empty prediction scores 1.0 exactly when no gold answer survives normalisation",
    ),
    function=squad_em,
)

register(
    "squad_f1",
    roles=("prediction", "gold"),
    dtypes=_DTYPES,
    reference=REFERENCE_F1,
    description="SQuAD token F1 (multiset of normalised tokens), best over gold alternatives",
    edge_rules=(
        *_COMMON_EDGE_RULES,
        "tokens are a multiset: a repeated word counts as many times as both answers have it",
        "if the prediction or the gold answer has no tokens, F1 = 1.0 when both have none, "
        "else 0.0",
        "F1 is bit-identical to compute_f1: precision = same/len(pred), recall = "
        "same/len(gold), f1 = (2*precision*recall)/(precision+recall)",
    ),
    function=squad_f1,
)
