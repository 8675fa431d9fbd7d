"""lighteval's extractive match for answer letters: ``letter_match`` and ``letter_pass@k``.

lighteval 0.13.0 scores instruction-following multiple choice (GPQA) by extracting the
answer letter from the response *and* from the gold (``doc.choices[gold_index]``,
``Doc.get_golds()``), then comparing the two with ``compare_gold_target``
(``MultilingualExtractiveMatchMetric`` with ``IndicesExtractionConfig`` on both sides, in
``lighteval/metrics/dynamic_metrics.py``; the extraction is
:mod:`evalframe.extract.lighteval_indices`). Each metric's edge rules spell out the
comparison and its two role sets (lighteval's doc, or a gold label with ``n_choices``).

Metrics:

- ``letter_match``: ``Metrics.gpqa_instruct_metric`` (key ``extractive_match``): 1.0 or 0.0;
- ``letter_pass@{k}``: ``Metrics.gpqa_instruct_pass_at_k`` and, with
  ``try_extract_without_anchor=false``, ``Metrics.pass_at_k_letters``: lighteval's
  ``PassAtK`` over the per-generation letter matches, ``1 - C(n-c, k) / C(n, k)``.

The extraction runs as Polars regex over the flattened predictions and golds, once per
distinct number of choices in a batch.

>>> import polars as pl
>>> df = pl.DataFrame({
...     "prediction": ["Reasoning...\\nAnswer: B", "The answer is (C).", "I think E", None],
...     "choices": [["A", "B", "C", "D"]] * 4,
...     "gold_index": [1, 1, 2, 0],
... })
>>> df.select(letter_match("prediction", choices="choices", gold_index="gold_index"))
shape: (4, 1)
┌────────────┐
│ prediction │
│ ---        │
│ f64        │
╞════════════╡
│ 1.0        │
│ 0.0        │
│ 0.0        │
│ null       │
└────────────┘
"""

from __future__ import annotations

import polars as pl

from evalframe._expr import IntoExpr, RowCheck, elementwise, guard, parse_into_expr
from evalframe.errors import EvalframeError
from evalframe.extract.lighteval_indices import (
    ENGLISH,
    ChoicePrefix,
    extract_index,
    index_labels,
    index_patterns,
)
from evalframe.metrics.pass_at_k import estimate
from evalframe.metrics.registry import Reference, positive_int, register
from evalframe.metrics.sampling import check_k, count_checks
from evalframe.normalize._python_text import whitespace_characters
from evalframe.schema import INT, LIST_INT, LIST_STR, STR

__all__ = ["letter_match", "letter_pass_at_k"]

LIGHTEVAL = ("lighteval", "0.13.0")
_PREFIXES = ("NativeLetters", "Letters", "Numbers")


# --------------------------------------------------------------------------------------
# The batched kernel: labels per distinct number of choices, matches counted per row
# --------------------------------------------------------------------------------------


def _labels(
    frame: pl.DataFrame, prefix: ChoicePrefix, try_extract_without_anchor: bool
) -> pl.Series:
    """The extracted label of ``frame["text"]`` with ``frame["n"]`` choices per row."""
    most = len(index_labels(prefix, 1 << 30, ENGLISH))
    indexed = frame.with_row_index("__i").with_columns(
        pl.col("n").clip(upper_bound=most).alias("n")
    )
    parts = [indexed.filter(pl.col("n").is_null() | (pl.col("n") < 1)).select(
        "__i", pl.lit(None, dtype=pl.String).alias("label")
    )]
    for count in indexed["n"].drop_nulls().unique().sort().to_list():
        if count < 1:
            continue
        patterns = index_patterns(prefix, count, try_extract_without_anchor, ENGLISH)
        part = indexed.filter(pl.col("n") == count)
        parts.append(part.select(
            "__i", extract_index(pl.col("text"), patterns).struct.field("extracted").alias("label")
        ))
    return pl.concat(parts).sort("__i")["label"]


def _match_counts(
    predictions: pl.Series,
    golds: pl.Series,
    counts: pl.Series,
    prefix: ChoicePrefix,
    try_extract_without_anchor: bool,
    strip: bool,
) -> pl.Series:
    """Per row, how many predictions' labels match a gold (lighteval's comparison)."""
    whitespace = whitespace_characters()
    if counts.len() == 1 and predictions.len() != 1:  # the n_choices option: one value
        counts = counts.extend_constant(counts[0], predictions.len() - 1)
    frame = pl.DataFrame({"pred": predictions, "gold": golds, "n": counts}).with_row_index(
        "__row"
    )
    preds = frame.select("__row", "pred", "n").explode(
        "pred", keep_nulls=False, empty_as_null=False
    ).rename({"pred": "text"})
    refs = frame.select("__row", "gold", "n").explode(
        "gold", keep_nulls=False, empty_as_null=False
    ).rename({"gold": "text"})
    if strip:  # lighteval's SamplingMetric.preprocess (strip_strings), before extraction
        preds = preds.with_columns(pl.col("text").str.strip_chars(whitespace))
        refs = refs.with_columns(pl.col("text").str.strip_chars(whitespace))
    preds = preds.with_columns(_labels(preds, prefix, try_extract_without_anchor).alias("label"))
    refs = refs.with_columns(_labels(refs, prefix, try_extract_without_anchor).alias("label"))
    # any gold of the row without a label: every gold of the row is compared as it is
    refs = refs.with_columns(pl.col("label").is_null().any().over("__row").alias("__raw"))
    refs = refs.select(
        "__row",
        pl.when(pl.col("__raw")).then(pl.col("text").str.strip_chars(whitespace))
        .otherwise(pl.col("label")).alias("label"),
    ).filter(pl.col("label").is_not_null() & (pl.col("label") != "")).unique()
    hits = (
        preds.filter(pl.col("label").is_not_null())
        .join(refs, on=["__row", "label"], how="semi")
        .group_by("__row")
        .len(name="hits")
    )
    back = frame.select("__row").join(hits, on="__row", how="left", maintain_order="left")
    return back["hits"].fill_null(0).cast(pl.Int64).alias("hits")


# --------------------------------------------------------------------------------------
# Roles
# --------------------------------------------------------------------------------------


def _as_list(value: pl.Expr) -> pl.Expr:
    """A ``str`` (``int``) or ``list`` expression as a list (a scalar becomes one item)."""
    return pl.concat_list([value])


def _has_null(values: pl.Expr) -> pl.Expr:
    return values.list.eval(pl.element().is_null()).list.any()


def _check_options(
    metric: str, prefix: object, try_extract_without_anchor: object, n_choices: object
) -> None:
    if prefix not in _PREFIXES:
        raise EvalframeError(
            f"metric {metric!r}: prefix={prefix!r} is invalid; expected 'NativeLetters', "
            "'Letters' or 'Numbers'"
        )
    if not isinstance(try_extract_without_anchor, bool):
        raise EvalframeError(
            f"metric {metric!r}: try_extract_without_anchor={try_extract_without_anchor!r} is "
            "invalid; expected true or false"
        )
    if isinstance(n_choices, bool) or not isinstance(n_choices, int) or n_choices < 1:
        raise EvalframeError(
            f"metric {metric!r}: n_choices={n_choices!r} is invalid; expected an integer >= 1"
        )


def _golds(
    metric: str,
    gold: IntoExpr | None,
    choices: IntoExpr | None,
    gold_index: IntoExpr | None,
    n_choices: int,
) -> tuple[pl.Expr, pl.Expr, pl.Expr, list[RowCheck]]:
    """``(golds list[str], number of choices, usable, checks)`` from either role set."""
    doc = choices is not None or gold_index is not None
    if doc and gold is not None:
        raise EvalframeError(
            f"metric {metric!r}: pass gold, or choices and gold_index, not both"
        )
    if not doc:
        if gold is None:
            raise EvalframeError(
                f"metric {metric!r}: pass gold, or choices and gold_index (lighteval's doc)"
            )
        golds = _as_list(parse_into_expr(gold))
        empty = RowCheck(golds.list.len() == 0, "an empty gold list",
                         "at least one gold per row (a null gold gives a null score)")
        return golds, pl.lit(n_choices, dtype=pl.Int64), ~_has_null(golds), [empty]
    if choices is None or gold_index is None:
        raise EvalframeError(f"metric {metric!r}: choices and gold_index must be given together")
    options = parse_into_expr(choices)
    indices = _as_list(parse_into_expr(gold_index)).cast(pl.List(pl.Int64))
    count = options.list.len().cast(pl.Int64)
    outside = (indices.list.min() < 0) | (indices.list.max() >= count)
    golds = options.list.gather(
        pl.when(outside).then(pl.lit([], dtype=pl.List(pl.Int64))).otherwise(indices)
    )
    usable = options.is_not_null() & ~_has_null(options) & ~_has_null(indices)
    shown = (("gold_index", parse_into_expr(gold_index)), ("choices", count))
    checks = [
        RowCheck(usable & (indices.list.len() == 0), "an empty gold_index list",
                 "at least one gold index per row", shown),
        RowCheck(usable & outside.fill_null(False), "a gold index out of range",
                 "0 <= gold index < the number of choices", shown),
    ]
    return golds, count, usable, checks


def _hits(
    metric: str,
    predictions: pl.Expr,
    gold: IntoExpr | None,
    choices: IntoExpr | None,
    gold_index: IntoExpr | None,
    *,
    prefix: ChoicePrefix,
    try_extract_without_anchor: bool,
    n_choices: int,
    strip: bool = False,
) -> tuple[pl.Expr, pl.Expr, list[RowCheck]]:
    """``(hits, usable, checks)``: matching predictions per row."""
    _check_options(metric, prefix, try_extract_without_anchor, n_choices)
    golds, count, gold_usable, checks = _golds(metric, gold, choices, gold_index, n_choices)
    usable = predictions.is_not_null() & ~_has_null(predictions) & gold_usable

    def kernel(series: list[pl.Series]) -> pl.Series:
        return _match_counts(
            series[0], series[1], series[2], prefix, try_extract_without_anchor, strip
        )

    hits = elementwise([predictions, golds, count], kernel, pl.Int64)
    return hits, usable.fill_null(False), checks


# --------------------------------------------------------------------------------------
# Metrics
# --------------------------------------------------------------------------------------

_ROLES = (("prediction", "choices", "gold_index"), ("prediction", "gold"))
_COMPARISON = (
    "the answer label is extracted from the prediction and from each gold by lighteval's "
    "index cascade (evalframe.extract.lighteval_indices; labels of len(choices) choices, or "
    "n_choices with a gold role); when any gold yields no label every gold is compared as "
    "it is (stripped); correct when the prediction's label equals a gold (non-empty); no "
    "label found: wrong"
)
_ROLE_RULE = (
    "roles: prediction with choices and gold_index (lighteval's doc: gold = "
    "choices[gold_index]), or prediction with gold (a label string, or list[str] "
    "alternatives) and the n_choices option"
)
_NULL_RULE = (
    "a null prediction, gold, choices or gold_index (or a null inside one of their lists) "
    "gives null; an empty gold list or a gold index outside [0, len(choices)) raises"
)
_LETTER_DTYPES = {"prediction": (STR, LIST_STR), "gold": (STR, LIST_STR),
                  "gold_index": (INT, LIST_INT)}


@register(
    "letter_match",
    roles=_ROLES,
    dtypes=_LETTER_DTYPES,
    reference=Reference(*LIGHTEVAL, "lighteval.metrics.metrics.Metrics.gpqa_instruct_metric "
                        "(MultilingualExtractiveMatchMetric, IndicesExtractionConfig)"),
    description="The answer letter extracted from the response equals the gold's "
    "(lighteval gpqa_instruct extractive_match).",
    edge_rules=(
        _ROLE_RULE,
        _COMPARISON,
        "several predictions (list[str]): 1.0 when any matches (aggregation_function=max); "
        "an empty list raises",
        _NULL_RULE,
    ),
    divergences=(
        "lighteval fails on an empty prediction list (max of nothing), scores an empty gold "
        "list 0.0 and indexes a negative gold_index from the end; evalframe raises",
    ),
)
def letter_match(
    prediction: IntoExpr,
    gold: IntoExpr | None = None,
    *,
    choices: IntoExpr | None = None,
    gold_index: IntoExpr | None = None,
    prefix: ChoicePrefix = "NativeLetters",
    try_extract_without_anchor: bool = True,
    n_choices: int = 4,
) -> pl.Expr:
    """1.0 when the answer letter of the response is the gold's (lighteval gpqa_instruct).

    Matches lighteval 0.13.0's ``Metrics.gpqa_instruct_metric``:
    ``MultilingualExtractiveMatchMetric`` with
    ``IndicesExtractionConfig(prefix_for_extraction="NativeLetters",
    try_extract_without_anchor=True)`` for the prediction and the gold.

    Parameters
    ----------
    prediction
        ``str`` column: the response (or ``list[str]``: several, the best counts).
    gold
        ``str`` column (the gold label, ``"B"``) or ``list[str]`` (alternatives); with
        ``n_choices``. Alternatively ``choices`` and ``gold_index``.
    choices, gold_index
        lighteval's doc: ``list[str]`` choices and the ``int`` (or ``list[int]``) index of
        the correct one(s); the gold is ``choices[gold_index]`` and the labels those of
        ``len(choices)`` choices.
    prefix
        lighteval's ``prefix_for_extraction``: ``"NativeLetters"`` (A-Z in English,
        default), ``"Letters"`` or ``"Numbers"`` (1-26).
    try_extract_without_anchor
        Also the unanchored patterns (a label anywhere); True as in gpqa_instruct.
    n_choices
        With ``gold``: the number of choices (the labels that exist), default 4.

    Returns
    -------
    pl.Expr
        ``Float64``: 1.0 or 0.0 per row.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"response": ["**Answer: (B)**", "Answer: b", "final answer is (C)"],
    ...                    "gold": ["B", "B", "C"]})
    >>> df.select(letter_match("response", "gold"))["response"].to_list()
    [1.0, 0.0, 1.0]
    """
    metric = "letter_match"
    predictions = _as_list(parse_into_expr(prediction))
    hits, usable, checks = _hits(
        metric, predictions, gold, choices, gold_index, prefix=prefix,
        try_extract_without_anchor=try_extract_without_anchor, n_choices=n_choices,
    )
    checks = [
        RowCheck(usable & (predictions.list.len() == 0), "an empty prediction list",
                 "at least one prediction per row (a null prediction gives a null score)"),
        *checks,
    ]
    value = pl.when(usable).then((hits > 0).cast(pl.Float64))
    return guard(metric, value, checks)


@register(
    "letter_pass@{k}",
    roles=_ROLES,
    dtypes=_LETTER_DTYPES | {"prediction": (LIST_STR,)},
    parameters={"k": positive_int},
    reference=Reference(*LIGHTEVAL, "lighteval.metrics.metrics.Metrics.gpqa_instruct_pass_at_k "
                        "/ pass_at_k_letters (PassAtK over the letter extractive match)"),
    description="Pass@k of generations judged by their extracted answer letter "
    "(lighteval gpqa_instruct_pass_at_k, pass_at_k_letters).",
    edge_rules=(
        _ROLE_RULE,
        _COMPARISON,
        "n = number of generations, c = number whose letter matches; 1 - C(n-c, k) / C(n, k)",
        "strip=true strips generations and choices before extraction (strip_strings)",
        "k > n raises EvalframeError",
        _NULL_RULE,
    ),
    divergences=(
        "lighteval's PassAtK returns 1.0 when k > n; evalframe raises EvalframeError",
    ),
)
def letter_pass_at_k(
    prediction: IntoExpr,
    gold: IntoExpr | None = None,
    *,
    k: int,
    choices: IntoExpr | None = None,
    gold_index: IntoExpr | None = None,
    prefix: ChoicePrefix = "NativeLetters",
    try_extract_without_anchor: bool = True,
    n_choices: int = 4,
    strip: bool = False,
) -> pl.Expr:
    """pass@k over generations judged by their answer letter (lighteval gpqa pass@k).

    Matches lighteval 0.13.0's ``Metrics.gpqa_instruct_pass_at_k`` and, with
    ``try_extract_without_anchor=False``, ``Metrics.pass_at_k_letters``: ``PassAtK`` whose
    sample scoring is :func:`letter_match`; ``c`` is the number of the ``n`` generations
    whose letter matches, and the score ``1 - C(n-c, k) / C(n, k)``.

    Parameters
    ----------
    prediction
        ``list[str]`` column: the generations.
    gold, choices, gold_index, prefix, try_extract_without_anchor, n_choices
        As for :func:`letter_match`.
    k
        Generations per attempt.
    strip
        lighteval's ``strip_strings``: strip the generations and the choices before
        extraction (``SamplingMetric.preprocess``).

    Returns
    -------
    pl.Expr
        ``Float64`` in [0, 1].

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"gens": [["B", "A", "Answer: B", "C"]], "gold": ["B"]})
    >>> df.select(letter_pass_at_k("gens", "gold", k=2))["gens"].round(6).to_list()
    [0.833333]
    """
    metric = f"letter_pass@{k}"
    k = check_k(metric, k)
    if not isinstance(strip, bool):
        raise EvalframeError(
            f"metric {metric!r}: strip={strip!r} is invalid; expected true or false"
        )
    predictions = parse_into_expr(prediction)
    hits, usable, checks = _hits(
        metric, predictions, gold, choices, gold_index, prefix=prefix,
        try_extract_without_anchor=try_extract_without_anchor, n_choices=n_choices,
        strip=strip,
    )
    n = predictions.list.len().cast(pl.Int64)
    value = pl.when(usable).then(estimate(n, hits, k))
    return guard(metric, value, [*count_checks(n, hits, k), *checks])
