"""lighteval's generative match metrics: quasi/prefix exact match and bag-of-words F1.

These reproduce lighteval's ``ExactMatches`` and ``F1_score`` sample metrics
(``lighteval/metrics/metrics_sample.py``) as registered in its ``Metrics`` enum:

- ``quasi_exact_match`` (lighteval ``qem``): ``ExactMatches`` with ``helm_normalizer`` on
  both sides and ``strip_strings=True``;
- ``prefix_exact_match`` (``pem``): ``ExactMatches(strip_strings=True,
  type_exact_match="prefix")``;
- ``prefix_quasi_exact_match`` (``pqem``): ``helm_normalizer`` on both sides,
  ``type_exact_match="prefix"``;
- ``suffix_exact_match`` / ``suffix_quasi_exact_match``: as the prefix variants with
  ``type_exact_match="suffix"`` (no lighteval ``Metrics`` entry uses it);
- ``quasi_exact_match_gsm8k`` (``qem``): ``gsm8k_normalizer`` on both sides,
  ``strip_strings=True``;
- ``f1_score`` (``f1``): ``F1_score()``; ``f1_score_quasi``: ``F1_score`` with
  ``helm_normalizer`` on both sides.

lighteval's plain ``exact_match`` (``em``, ``ExactMatches(strip_strings=True)``) is
:func:`lighteval_exact_match` with ``strip=True``; the registry's ``exact_match`` is the
generic one in :mod:`evalframe.metrics.exact_match`.

``f1_score`` here is lighteval's **set** F1: each text is reduced to the *set* of its
whitespace-separated words (repeats count once, case and punctuation kept unless a
normaliser removes them) and F1 is ``nltk.scores.f_measure`` of the two sets. It is
not SQuAD's ``token_f1``/``squad_f1``, which counts repeated tokens (a multiset,
``collections.Counter``) after SQuAD normalisation: for ``"a a b"`` vs ``"a b"`` the
set F1 is 1.0, the multiset F1 is 0.8.

Multiple golds and predictions: a ``list[str]`` gold holds alternatives and a
``list[str]`` prediction several samples; lighteval scores every (gold, prediction)
pair and keeps the maximum, and so do these metrics.

>>> import polars as pl
>>> from evalframe import metrics as M
>>> df = pl.DataFrame({"pred": ["The Paris!", "Lyon"], "gold": [["paris", "x"], ["Paris"]]})
>>> df.select(M.quasi_exact_match("pred", "gold").alias("qem"))["qem"].to_list()
[1.0, 0.0]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal

import polars as pl

from evalframe._expr import IntoExpr, RowCheck, describe, elementwise, guard, parse_into_expr
from evalframe.errors import EvalframeError
from evalframe.metrics.registry import Reference, register
from evalframe.normalize._python_text import split, whitespace_characters
from evalframe.normalize.helm import gsm8k_normalize, helm_normalize
from evalframe.schema import LIST_STR, STR

__all__ = [
    "f1_score",
    "lighteval_exact_match",
    "prefix_exact_match",
    "prefix_quasi_exact_match",
    "quasi_exact_match",
    "suffix_exact_match",
    "suffix_quasi_exact_match",
]

LIGHTEVAL_VERSION = "main@3fd1526"
Normalizer = Literal["helm", "gsm8k"] | Callable[[pl.Expr], pl.Expr] | None
Match = Literal["full", "prefix", "suffix"]

_NORMALIZERS: dict[str, Callable[[pl.Expr], pl.Expr]] = {
    "helm": helm_normalize,
    "gsm8k": gsm8k_normalize,
}
_TEXT_DTYPES = {"prediction": (STR, LIST_STR), "gold": (STR, LIST_STR)}
_MULTI_RULE = (
    "a list[str] gold holds alternatives and a list[str] prediction several samples; the "
    "score is the maximum over every (gold, prediction) pair, as lighteval's default "
    "aggregation_function=max"
)
_NULL_RULE = (
    "a null prediction or gold (or a null element inside a list) gives a null score; an empty "
    "list raises EvalframeError (lighteval's max() of no pairs fails)"
)


def _normalizer(normalize: Normalizer) -> Callable[[pl.Expr], pl.Expr] | None:
    if normalize is None or callable(normalize):
        return normalize
    try:
        return _NORMALIZERS[normalize]
    except KeyError:
        raise ValueError(
            f"normalize={normalize!r}: expected one of {sorted(_NORMALIZERS)}, a function "
            "from pl.Expr to pl.Expr, or None"
        ) from None


def _strip(expr: pl.Expr) -> pl.Expr:
    """Python's ``str.strip()``: remove leading and trailing Unicode whitespace."""
    return expr.str.strip_chars(whitespace_characters())


#: Kernel results marking a row whose prediction (or gold) is an empty list.
_EMPTY_PREDICTION, _EMPTY_GOLD = -1.0, -2.0


def _as_rows(metric: str, role: str, source: IntoExpr, series: pl.Series) -> pl.DataFrame:
    """One row per (input row, element): a string stays one element, a list is exploded.

    An empty list contributes no element (the caller marks its row).
    """
    frame = pl.DataFrame({"value": series}).with_row_index("row")
    dtype = series.dtype
    if isinstance(dtype, pl.List) and dtype.inner in (pl.String, pl.Null):
        return frame.explode("value", empty_as_null=False)
    if dtype in (pl.String, pl.Null):
        return frame.with_columns(pl.col("value").cast(pl.String))
    raise EvalframeError(
        f"metric {metric!r}: {role} column {describe(source)} has dtype {dtype}; "
        "expected str or list[str]"
    )


def _empty_list(series: pl.Series) -> pl.Series:
    if isinstance(series.dtype, pl.List):
        return (series.list.len() == 0).fill_null(False)
    return pl.repeat(False, len(series), eager=True)


def _max_over_pairs(
    metric: str,
    prediction: IntoExpr,
    gold: IntoExpr,
    prepare_prediction: Callable[[pl.Expr], Sequence[pl.Expr]],
    prepare_gold: Callable[[pl.Expr], Sequence[pl.Expr]],
    pair_score: pl.Expr,
) -> pl.Expr:
    """Score every (prediction, gold) pair of a row and keep the maximum.

    A batched kernel over whole columns: lists are exploded, each side is prepared
    (normalised, tokenised) once per element with expressions, the pairs of a row are
    formed by a join on the row number, and the per-row maximum is taken by a group-by.
    ``prepare_*`` map the element column ``value`` to named columns ``pair_score`` reads.
    A row with an empty list on either side is an error (lighteval's ``max()`` of no
    pairs fails), reported by a guard with the row's number in the input.
    """

    def kernel(series: Sequence[pl.Series]) -> pl.Series:
        predictions = _as_rows(metric, "prediction", prediction, series[0])
        golds = _as_rows(metric, "gold", gold, series[1])
        predictions = predictions.select("row", *prepare_prediction(pl.col("value")))
        golds = golds.select("row", *prepare_gold(pl.col("value")))
        pairs = predictions.join(golds, on="row", how="inner")
        score = pair_score.cast(pl.Float64)
        per_row = pairs.group_by("row").agg(
            pl.when(score.is_null().any()).then(None).otherwise(score.max()).alias("score")
        )
        rows = pl.DataFrame({"row": pl.int_range(len(series[0]), eager=True, dtype=pl.UInt32)})
        joined = rows.join(per_row, on="row", how="left").sort("row")
        return (
            joined["score"]
            .cast(pl.Float64)
            .set(_empty_list(series[1]), _EMPTY_GOLD)
            .set(_empty_list(series[0]), _EMPTY_PREDICTION)
        )

    inputs = [parse_into_expr(prediction), parse_into_expr(gold)]
    checks = [
        RowCheck(
            invalid=lambda values, marker=marker: values == marker,
            what=f"an empty {role} list",
            expected=f"at least one string in {role} column {describe(source)}",
            show=((role, parse_into_expr(source)),),
        )
        for role, source, marker in (
            ("prediction", prediction, _EMPTY_PREDICTION),
            ("gold", gold, _EMPTY_GOLD),
        )
    ]
    return guard(metric, elementwise(inputs, kernel, pl.Float64), checks)


def lighteval_exact_match(
    prediction: IntoExpr,
    gold: IntoExpr,
    *,
    normalize: Normalizer = None,
    strip: bool = False,
    match: Match = "full",
) -> pl.Expr:
    """lighteval's ``ExactMatches``: 1.0 when a prediction matches a gold, else 0.0.

    For each (gold, prediction) pair, exactly as ``ExactMatches.compute_one_item``:
    an empty prediction scores 0 (checked on the raw text, before anything else);
    with ``strip`` both texts lose leading and trailing whitespace (``str.strip()``);
    ``normalize`` is then applied to both; ``match`` compares them: ``"full"``
    equality, ``"prefix"`` (the prediction starts with the gold) or ``"suffix"`` (the
    prediction ends with the gold). The row's score is the maximum over all pairs.

    Parameters
    ----------
    prediction
        The model output: ``str``, or ``list[str]`` for several samples.
    gold
        The reference: ``str``, or ``list[str]`` of alternatives.
    normalize
        ``"helm"`` (:func:`evalframe.normalize.helm_normalize`), ``"gsm8k"``
        (:func:`evalframe.normalize.gsm8k_normalize`), any function from ``pl.Expr``
        to ``pl.Expr``, or ``None``.
    strip
        lighteval's ``strip_strings``.
    match
        lighteval's ``type_exact_match``: ``"full"``, ``"prefix"`` or ``"suffix"``.

    Returns
    -------
    pl.Expr
        ``Float64``, 1.0 or 0.0 per row; null where an input is null.

    Notes
    -----
    Edge rules (all lighteval's): ``""`` as the prediction scores 0.0 even against an
    empty gold, but ``"  "`` with ``strip`` matches an empty gold; with ``"prefix"`` or
    ``"suffix"`` an empty gold (after normalisation) matches every non-empty prediction;
    a prediction that normalises to ``""`` (``"The"`` under ``helm``) is not empty for the
    first rule. Nulls: see the module docstring.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"pred": [" Paris ", "Paris, France", "", None],
    ...                    "gold": ["Paris", "Paris", "", "Paris"]})
    >>> df.with_columns(
    ...     lighteval_exact_match("pred", "gold", strip=True).alias("em"),
    ...     lighteval_exact_match("pred", "gold", match="prefix").alias("pem"),
    ... )
    shape: (4, 4)
    ┌───────────────┬───────┬──────┬──────┐
    │ pred          ┆ gold  ┆ em   ┆ pem  │
    │ ---           ┆ ---   ┆ ---  ┆ ---  │
    │ str           ┆ str   ┆ f64  ┆ f64  │
    ╞═══════════════╪═══════╪══════╪══════╡
    │  Paris        ┆ Paris ┆ 1.0  ┆ 0.0  │
    │ Paris, France ┆ Paris ┆ 0.0  ┆ 1.0  │
    │               ┆       ┆ 0.0  ┆ 0.0  │
    │ null          ┆ Paris ┆ null ┆ null │
    └───────────────┴───────┴──────┴──────┘
    """
    return _exact_match(
        "lighteval_exact_match", prediction, gold, normalize=normalize, strip=strip, match=match
    )


def _exact_match(
    metric: str,
    prediction: IntoExpr,
    gold: IntoExpr,
    *,
    normalize: Normalizer,
    strip: bool,
    match: Match,
) -> pl.Expr:
    if match not in ("full", "prefix", "suffix"):
        raise ValueError(f"match={match!r}: expected 'full', 'prefix' or 'suffix'")
    normalizer = _normalizer(normalize)

    def prepare(value: pl.Expr, name: str) -> pl.Expr:
        text = _strip(value) if strip else value
        return (normalizer(text) if normalizer is not None else text).alias(name)

    def prepare_prediction(value: pl.Expr) -> list[pl.Expr]:
        return [prepare(value, "pred"), (value == "").alias("pred_empty")]

    pred, ref = pl.col("pred"), pl.col("gold")
    if match == "prefix":
        matched = pred.str.starts_with(ref)
    elif match == "suffix":
        matched = pred.str.ends_with(ref)
    else:
        matched = pred == ref
    score = (
        pl.when(pl.col("pred_empty").is_null() | ref.is_null())
        .then(None)
        .when(pl.col("pred_empty"))
        .then(0.0)
        .otherwise(matched.cast(pl.Float64))
    )
    return _max_over_pairs(
        metric,
        prediction,
        gold,
        prepare_prediction,
        lambda value: [prepare(value, "gold")],
        score,
    )


def quasi_exact_match(prediction: IntoExpr, gold: IntoExpr) -> pl.Expr:
    """lighteval's ``quasi_exact_match`` (``qem``): exact match after HELM normalisation.

    ``ExactMatches(normalize_gold=helm_normalizer, normalize_pred=helm_normalizer,
    strip_strings=True)``: both texts are stripped and normalised by
    :func:`evalframe.normalize.helm_normalize` (lower case, no ASCII punctuation, no
    articles, numbers as Python floats, hyphens and whitespace as single spaces),
    then compared for equality; the maximum over (gold, prediction) pairs is kept.

    Parameters
    ----------
    prediction
        ``str``, or ``list[str]`` for several samples.
    gold
        ``str``, or ``list[str]`` of alternatives.

    Returns
    -------
    pl.Expr
        ``Float64`` 1.0/0.0 per row; null where an input is null.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"pred": ["The Eiffel-Tower.", "1.0", None],
    ...                    "gold": [["eiffel tower"], ["10"], ["x"]]})
    >>> df.with_columns(quasi_exact_match("pred", "gold").alias("qem"))
    shape: (3, 3)
    ┌───────────────────┬──────────────────┬──────┐
    │ pred              ┆ gold             ┆ qem  │
    │ ---               ┆ ---              ┆ ---  │
    │ str               ┆ list[str]        ┆ f64  │
    ╞═══════════════════╪══════════════════╪══════╡
    │ The Eiffel-Tower. ┆ ["eiffel tower"] ┆ 1.0  │
    │ 1.0               ┆ ["10"]           ┆ 1.0  │
    │ null              ┆ ["x"]            ┆ null │
    └───────────────────┴──────────────────┴──────┘
    """
    return _exact_match(
        "quasi_exact_match", prediction, gold, normalize="helm", strip=True, match="full"
    )


def prefix_exact_match(prediction: IntoExpr, gold: IntoExpr) -> pl.Expr:
    """lighteval's ``prefix_exact_match`` (``pem``): the stripped prediction starts with a gold.

    ``ExactMatches(strip_strings=True, type_exact_match="prefix")``; case, punctuation
    and inner whitespace count. An empty prediction scores 0.0; an empty (or
    whitespace-only) gold matches every non-empty prediction.

    Parameters
    ----------
    prediction
        ``str``, or ``list[str]`` for several samples.
    gold
        ``str``, or ``list[str]`` of alternatives.

    Returns
    -------
    pl.Expr
        ``Float64`` 1.0/0.0 per row; null where an input is null.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"pred": [" Paris, France", "paris", None], "gold": ["Paris"] * 3})
    >>> df.with_columns(prefix_exact_match("pred", "gold").alias("pem"))
    shape: (3, 3)
    ┌────────────────┬───────┬──────┐
    │ pred           ┆ gold  ┆ pem  │
    │ ---            ┆ ---   ┆ ---  │
    │ str            ┆ str   ┆ f64  │
    ╞════════════════╪═══════╪══════╡
    │  Paris, France ┆ Paris ┆ 1.0  │
    │ paris          ┆ Paris ┆ 0.0  │
    │ null           ┆ Paris ┆ null │
    └────────────────┴───────┴──────┘
    """
    return _exact_match(
        "prefix_exact_match", prediction, gold, normalize=None, strip=True, match="prefix"
    )


def prefix_quasi_exact_match(prediction: IntoExpr, gold: IntoExpr) -> pl.Expr:
    """lighteval's ``prefix_quasi_exact_match`` (``pqem``): prefix match after HELM normalisation.

    ``ExactMatches(normalize_gold=helm_normalizer, normalize_pred=helm_normalizer,
    type_exact_match="prefix")``: the normalised prediction starts with the normalised
    gold (a string prefix, not a word prefix: ``"parisian"`` starts with ``"paris"``).
    A gold that normalises to ``""`` (``"the"``) matches every non-empty prediction.

    Parameters
    ----------
    prediction
        ``str``, or ``list[str]`` for several samples.
    gold
        ``str``, or ``list[str]`` of alternatives.

    Returns
    -------
    pl.Expr
        ``Float64`` 1.0/0.0 per row; null where an input is null.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"pred": ["The Paris metro", "Lyon", None], "gold": ["paris!"] * 3})
    >>> df.with_columns(prefix_quasi_exact_match("pred", "gold").alias("pqem"))
    shape: (3, 3)
    ┌─────────────────┬────────┬──────┐
    │ pred            ┆ gold   ┆ pqem │
    │ ---             ┆ ---    ┆ ---  │
    │ str             ┆ str    ┆ f64  │
    ╞═════════════════╪════════╪══════╡
    │ The Paris metro ┆ paris! ┆ 1.0  │
    │ Lyon            ┆ paris! ┆ 0.0  │
    │ null            ┆ paris! ┆ null │
    └─────────────────┴────────┴──────┘
    """
    return _exact_match(
        "prefix_quasi_exact_match", prediction, gold, normalize="helm", strip=False,
        match="prefix",
    )


def suffix_exact_match(prediction: IntoExpr, gold: IntoExpr) -> pl.Expr:
    """The stripped prediction ends with a stripped gold (lighteval's suffix exact match).

    ``ExactMatches(strip_strings=True, type_exact_match="suffix")``, the suffix
    counterpart of :func:`prefix_exact_match` (lighteval offers the match type but no
    ``Metrics`` entry uses it). An empty prediction scores 0.0; an empty (or
    whitespace-only) gold matches every non-empty prediction.

    Parameters
    ----------
    prediction
        ``str``, or ``list[str]`` for several samples.
    gold
        ``str``, or ``list[str]`` of alternatives.

    Returns
    -------
    pl.Expr
        ``Float64`` 1.0/0.0 per row; null where an input is null.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"pred": ["It is Paris ", "paris", None], "gold": ["Paris"] * 3})
    >>> df.with_columns(suffix_exact_match("pred", "gold").alias("sem"))
    shape: (3, 3)
    ┌──────────────┬───────┬──────┐
    │ pred         ┆ gold  ┆ sem  │
    │ ---          ┆ ---   ┆ ---  │
    │ str          ┆ str   ┆ f64  │
    ╞══════════════╪═══════╪══════╡
    │ It is Paris  ┆ Paris ┆ 1.0  │
    │ paris        ┆ Paris ┆ 0.0  │
    │ null         ┆ Paris ┆ null │
    └──────────────┴───────┴──────┘
    """
    return _exact_match(
        "suffix_exact_match", prediction, gold, normalize=None, strip=True, match="suffix"
    )


def suffix_quasi_exact_match(prediction: IntoExpr, gold: IntoExpr) -> pl.Expr:
    """The HELM-normalised prediction ends with a normalised gold (lighteval suffix match).

    ``ExactMatches(normalize_gold=helm_normalizer, normalize_pred=helm_normalizer,
    type_exact_match="suffix")``, the suffix counterpart of
    :func:`prefix_quasi_exact_match` (a character suffix, not a word suffix). A gold
    that normalises to ``""`` matches every non-empty prediction.

    Parameters
    ----------
    prediction
        ``str``, or ``list[str]`` for several samples.
    gold
        ``str``, or ``list[str]`` of alternatives.

    Returns
    -------
    pl.Expr
        ``Float64`` 1.0/0.0 per row; null where an input is null.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"pred": ["The answer: Paris.", "Lyon", None], "gold": ["paris"] * 3})
    >>> df.with_columns(suffix_quasi_exact_match("pred", "gold").alias("sqem"))
    shape: (3, 3)
    ┌────────────────────┬───────┬──────┐
    │ pred               ┆ gold  ┆ sqem │
    │ ---                ┆ ---   ┆ ---  │
    │ str                ┆ str   ┆ f64  │
    ╞════════════════════╪═══════╪══════╡
    │ The answer: Paris. ┆ paris ┆ 1.0  │
    │ Lyon               ┆ paris ┆ 0.0  │
    │ null               ┆ paris ┆ null │
    └────────────────────┴───────┴──────┘
    """
    return _exact_match(
        "suffix_quasi_exact_match", prediction, gold, normalize="helm", strip=False,
        match="suffix",
    )


def f1_score(prediction: IntoExpr, gold: IntoExpr, *, normalize: Normalizer = None) -> pl.Expr:
    """lighteval's ``f1_score``: F1 between the *sets* of words of prediction and gold.

    ``F1_score().compute_one_item``: optionally normalise both texts, split each on
    whitespace (Python's ``str.split()``), turn the words into sets and return
    ``nltk.scores.f_measure(gold_set, prediction_set)`` = ``1 / (0.5 / P + 0.5 / R)``
    with ``P = |common| / |prediction set|`` and ``R = |common| / |gold set|``; 0.0 when
    either set is empty or nothing is shared. The row's score is the maximum over
    (gold, prediction) pairs.

    This is a **set** F1, unlike SQuAD's multiset ``token_f1``/``squad_f1``: a repeated
    word counts once (``"a a b"`` vs ``"a b"`` scores 1.0 here, 0.8 there), and no
    normalisation happens unless asked for (``"The"`` and ``"the"`` differ).

    Parameters
    ----------
    prediction
        ``str``, or ``list[str]`` for several samples.
    gold
        ``str``, or ``list[str]`` of alternatives.
    normalize
        ``"helm"`` gives lighteval's ``f1_score_quasi``; ``"gsm8k"``, a function from
        ``pl.Expr`` to ``pl.Expr``, or ``None`` (lighteval's ``f1_score``).

    Returns
    -------
    pl.Expr
        ``Float64`` in [0, 1] per row; null where an input is null.

    Notes
    -----
    lighteval's ``F1_score`` accepts ``strip_strings`` but never uses it; stripping
    cannot change a whitespace split anyway. Empty texts: ``""`` vs anything scores 0.0
    (``f_measure`` returns ``None``, which lighteval turns into 0.0), ``""`` vs ``""``
    included.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"pred": ["the cat sat", "cat cat", "", None],
    ...                    "gold": ["the cat", "the cat", "", "cat"]})
    >>> df.with_columns(f1_score("pred", "gold").alias("f1"))
    shape: (4, 3)
    ┌─────────────┬─────────┬──────────┐
    │ pred        ┆ gold    ┆ f1       │
    │ ---         ┆ ---     ┆ ---      │
    │ str         ┆ str     ┆ f64      │
    ╞═════════════╪═════════╪══════════╡
    │ the cat sat ┆ the cat ┆ 0.8      │
    │ cat cat     ┆ the cat ┆ 0.666667 │
    │             ┆         ┆ 0.0      │
    │ null        ┆ cat     ┆ null     │
    └─────────────┴─────────┴──────────┘
    """
    normalizer = _normalizer(normalize)

    def words(name: str) -> Callable[[pl.Expr], list[pl.Expr]]:
        def prepare(value: pl.Expr) -> list[pl.Expr]:
            text = normalizer(value) if normalizer is not None else value
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
    return _max_over_pairs(
        "f1_score", prediction, gold, words("pred_words"), words("gold_words"), score
    )


# --- registry ---------------------------------------------------------------------------

_EM_RULES = (
    "an empty prediction ('') scores 0.0 even against an empty gold (lighteval checks "
    "`if not pred` on the raw text first)",
    _MULTI_RULE,
    _NULL_RULE,
)
_HELM_RULE = (
    "HELM normalisation (evalframe.normalize.helm_normalize): Python str.lower, ASCII "
    "punctuation removed, tokens Python's float() accepts rewritten as str(float(token)) "
    "('1.5' -> '15.0', '007' -> '7.0'), articles a/an/the removed with Python's \\b, "
    "hyphens and whitespace collapsed to one space; Unicode follows the running Python"
)

register(
    "quasi_exact_match",
    roles=("prediction", "gold"),
    dtypes=_TEXT_DTYPES,
    reference=Reference(
        "lighteval", LIGHTEVAL_VERSION,
        "metrics.Metrics.quasi_exact_match (ExactMatches with helm_normalizer, strip_strings)",
    ),
    description="Exact match after HELM/QuAC normalisation of both texts (lighteval qem)",
    edge_rules=(*_EM_RULES, _HELM_RULE),
    function=quasi_exact_match,
)
register(
    "prefix_exact_match",
    roles=("prediction", "gold"),
    dtypes=_TEXT_DTYPES,
    reference=Reference(
        "lighteval", LIGHTEVAL_VERSION,
        "metrics.Metrics.prefix_exact_match (ExactMatches strip_strings, prefix)",
    ),
    description="The stripped prediction starts with the stripped gold (lighteval pem)",
    edge_rules=(
        *_EM_RULES,
        "an empty or whitespace-only gold matches every non-empty prediction (str.startswith)",
        "case, punctuation and Unicode are compared as they are; strip is Python's str.strip",
    ),
    function=prefix_exact_match,
)
register(
    "prefix_quasi_exact_match",
    roles=("prediction", "gold"),
    dtypes=_TEXT_DTYPES,
    reference=Reference(
        "lighteval", LIGHTEVAL_VERSION,
        "metrics.Metrics.prefix_quasi_exact_match (ExactMatches with helm_normalizer, prefix)",
    ),
    description="The HELM-normalised prediction starts with the normalised gold (lighteval pqem)",
    edge_rules=(
        *_EM_RULES,
        _HELM_RULE,
        "a character prefix, not a word prefix ('parisian' starts with 'paris'); a gold that "
        "normalises to '' ('the') matches every non-empty prediction",
    ),
    function=prefix_quasi_exact_match,
)
register(
    "suffix_exact_match",
    roles=("prediction", "gold"),
    dtypes=_TEXT_DTYPES,
    reference=Reference(
        "lighteval", LIGHTEVAL_VERSION,
        "metrics_sample.ExactMatches(strip_strings=True, type_exact_match='suffix') (no "
        "Metrics enum entry)",
    ),
    description="The stripped prediction ends with the stripped gold (lighteval suffix match)",
    edge_rules=(
        *_EM_RULES,
        "an empty or whitespace-only gold matches every non-empty prediction (str.endswith)",
        "case, punctuation and Unicode are compared as they are; strip is Python's str.strip",
    ),
    function=suffix_exact_match,
)
register(
    "suffix_quasi_exact_match",
    roles=("prediction", "gold"),
    dtypes=_TEXT_DTYPES,
    reference=Reference(
        "lighteval", LIGHTEVAL_VERSION,
        "metrics_sample.ExactMatches(helm_normalizer both sides, type_exact_match='suffix') "
        "(no Metrics enum entry)",
    ),
    description="The HELM-normalised prediction ends with the normalised gold (lighteval)",
    edge_rules=(
        *_EM_RULES,
        _HELM_RULE,
        "a character suffix, not a word suffix ('metroparis' ends with 'paris'); a gold that "
        "normalises to '' ('the') matches every non-empty prediction",
    ),
    function=suffix_quasi_exact_match,
)
register(
    "quasi_exact_match_gsm8k",
    roles=("prediction", "gold"),
    dtypes=_TEXT_DTYPES,
    reference=Reference(
        "lighteval", LIGHTEVAL_VERSION,
        "metrics.Metrics.quasi_exact_match_gsm8k (ExactMatches with gsm8k_normalizer, "
        "strip_strings)",
    ),
    description="The '#### <number>' answers of both texts are equal (lighteval qem, GSM8K)",
    edge_rules=(
        *_EM_RULES,
        "both texts reduce to the first '#### <number>' answer with commas removed, or "
        "'[invalid]'; two texts without an answer therefore match each other",
    ),
    options={"normalize": "gsm8k", "strip": True},
    function=lighteval_exact_match,
)
_F1_RULES = (
    "set F1 (nltk.scores.f_measure of word sets, alpha=0.5): repeated words count once; not "
    "SQuAD's multiset token_f1",
    "words are Python str.split() pieces; '' or whitespace-only on either side scores 0.0, "
    "'' vs '' included",
    _MULTI_RULE,
    _NULL_RULE,
)
register(
    "f1_score",
    roles=("prediction", "gold"),
    dtypes=_TEXT_DTYPES,
    reference=Reference("lighteval", LIGHTEVAL_VERSION, "metrics.Metrics.f1_score (F1_score)"),
    description="F1 between the sets of whitespace-separated words, unnormalised (lighteval f1)",
    edge_rules=(*_F1_RULES, "no normalisation: case and punctuation count ('The' != 'the')"),
    function=f1_score,
)
register(
    "f1_score_quasi",
    roles=("prediction", "gold"),
    dtypes=_TEXT_DTYPES,
    reference=Reference(
        "lighteval", LIGHTEVAL_VERSION,
        "metrics.Metrics.f1_score_quasi (F1_score with helm_normalizer)",
    ),
    description="Set-of-words F1 after HELM normalisation (lighteval f1_score_quasi)",
    edge_rules=(*_F1_RULES, _HELM_RULE),
    options={"normalize": "helm"},
    function=f1_score,
)
