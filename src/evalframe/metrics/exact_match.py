"""Generic exact match (lm-evaluation-harness options, lighteval strip/prefix/suffix) and token F1.

``exact_match`` is lm-eval-harness's ``exact_match`` (``exact_match_hf_evaluate``)
per row, with its options, plus lighteval ``ExactMatches``' ``strip_strings`` and
``type_exact_match``. ``token_f1`` is SQuAD's multiset token F1 with a
configurable normaliser (SQuAD's by default) and without SQuAD's dropping of
empty gold answers.

>>> import polars as pl
>>> from evalframe import metrics as M
>>> df = pl.DataFrame({"pred": ["Paris.", "the cat", "4", None],
...                    "gold": [["paris"], ["cat"], ["42", "4"], ["x"]]})
>>> df.with_columns(
...     M.exact_match("pred", "gold", ignore_case=True, ignore_punctuation=True).alias("em"),
...     M.token_f1("pred", "gold").alias("f1"),
... )
shape: (4, 4)
┌─────────┬─────────────┬──────┬──────┐
│ pred    ┆ gold        ┆ em   ┆ f1   │
│ ---     ┆ ---         ┆ ---  ┆ ---  │
│ str     ┆ list[str]   ┆ f64  ┆ f64  │
╞═════════╪═════════════╪══════╪══════╡
│ Paris.  ┆ ["paris"]   ┆ 1.0  ┆ 1.0  │
│ the cat ┆ ["cat"]     ┆ 0.0  ┆ 1.0  │
│ 4       ┆ ["42", "4"] ┆ 1.0  ┆ 1.0  │
│ null    ┆ ["x"]       ┆ null ┆ null │
└─────────┴─────────────┴──────┴──────┘
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal

import numpy as np
import polars as pl

from evalframe._expr import IntoExpr, RowCheck, describe, elementwise, guard, parse_into_expr
from evalframe.errors import EvalframeError
from evalframe.metrics._token_f1 import map_alternatives, token_f1_expr
from evalframe.metrics.registry import Reference, register
from evalframe.normalize._python_text import split_join
from evalframe.normalize.harness import harness_normalize
from evalframe.normalize.harness import strip as strip_whitespace
from evalframe.normalize.squad import squad_normalize
from evalframe.schema import LIST_STR, STR

__all__ = ["exact_match", "token_f1"]

Match = Literal["full", "prefix", "suffix"]

_DTYPES = {"prediction": (STR,), "gold": (STR, LIST_STR)}

_GOLD_EDGE_RULES = (
    "gold may be one string or a list of alternatives; the score is the maximum over them",
    "an empty gold list is an error (EvalframeError with the count of rows and the first)",
    "null prediction or null gold -> null; null alternatives inside a gold list are "
    "skipped; a gold list whose alternatives are all null -> null",
)


def _as_alternatives(gold: IntoExpr) -> pl.Expr:
    """Gold as ``List(String)``, whether the column is one string or a list of them."""
    return pl.concat_list([parse_into_expr(gold)]).cast(pl.List(pl.String))


def _empty_gold_check(gold: IntoExpr) -> RowCheck:
    golds = pl.concat_list([parse_into_expr(gold)])
    return RowCheck(
        invalid=golds.list.len() == 0,
        what=f"an empty gold list in column {describe(gold)}",
        expected="at least one gold alternative",
    )


def _null_rows(prediction: IntoExpr, golds: pl.Expr) -> pl.Expr:
    all_null = golds.list.len() == golds.list.count_matches(None)
    return parse_into_expr(prediction).is_null() | golds.is_null() | all_null


def exact_match(
    prediction: IntoExpr,
    gold: IntoExpr,
    *,
    ignore_case: bool = False,
    ignore_punctuation: bool = False,
    ignore_numbers: bool = False,
    regexes_to_ignore: Sequence[str] = (),
    strip: bool = False,
    match: Match = "full",
) -> pl.Expr:
    """Exact string match, with lm-eval-harness's and lighteval's options.

    Parameters
    ----------
    prediction
        ``String`` column (name or expression).
    gold
        ``String`` or ``List(String)`` column: the reference, or its alternatives.
    ignore_case, ignore_punctuation, ignore_numbers, regexes_to_ignore
        lm-eval-harness's options, see :func:`evalframe.normalize.harness_normalize`.
    strip
        lighteval's ``strip_strings``: Python ``str.strip()`` on both sides, first.
    match
        lighteval's ``type_exact_match``: ``"full"`` (equal), ``"prefix"`` (the
        prediction starts with the gold) or ``"suffix"`` (it ends with the gold).

    Returns
    -------
    pl.Expr
        ``Float64``, 1.0 or 0.0 per row (the best alternative); null where an
        input is null.

    Notes
    -----
    Reference: ``lm_eval.api.metrics.exact_match_hf_evaluate`` (lm-eval 0.4.13), per
    row; ``strip`` and ``match`` as lighteval's ``ExactMatches.compute_one_item``.
    Order of operations, on both sides: strip, regexes, lower case, punctuation,
    digits, then the comparison. Edge rules: ``""`` matches ``""`` (and with
    ``"prefix"``/``"suffix"`` an empty gold matches any prediction); trailing NUL
    characters are ignored, as in the harness's numpy arrays; an empty gold list
    raises :class:`evalframe.EvalframeError`; null prediction or gold gives null;
    null alternatives are skipped, and a list of only null alternatives gives null.
    Divergences: lighteval scores an empty prediction 0 before comparing (here
    ``""`` against ``""`` is 1.0, as in the harness); ``np.char.lower``'s
    truncation of strings that grow when lower-cased (``"İX"``) is not reproduced;
    ``regexes_to_ignore`` use the Rust regex syntax (see
    :func:`evalframe.normalize.harness_normalize`).

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"pred": [" The answer is 42", "B", "", None],
    ...                    "gold": ["42", "b", "", "x"]})
    >>> df.with_columns(
    ...     exact_match("pred", "gold").alias("em"),
    ...     exact_match("pred", "gold", ignore_case=True).alias("em_case"),
    ...     exact_match("pred", "gold", match="suffix").alias("em_suffix"),
    ... )
    shape: (4, 5)
    ┌───────────────────┬──────┬──────┬─────────┬───────────┐
    │ pred              ┆ gold ┆ em   ┆ em_case ┆ em_suffix │
    │ ---               ┆ ---  ┆ ---  ┆ ---     ┆ ---       │
    │ str               ┆ str  ┆ f64  ┆ f64     ┆ f64       │
    ╞═══════════════════╪══════╪══════╪═════════╪═══════════╡
    │  The answer is 42 ┆ 42   ┆ 0.0  ┆ 0.0     ┆ 1.0       │
    │ B                 ┆ b    ┆ 0.0  ┆ 1.0     ┆ 0.0       │
    │                   ┆      ┆ 1.0  ┆ 1.0     ┆ 1.0       │
    │ null              ┆ x    ┆ null ┆ null    ┆ null      │
    └───────────────────┴──────┴──────┴─────────┴───────────┘
    """
    if match not in ("full", "prefix", "suffix"):
        raise EvalframeError(
            f"metric 'exact_match': match={match!r} is invalid; expected 'full', 'prefix' "
            "or 'suffix'"
        )
    if isinstance(regexes_to_ignore, str):
        regexes_to_ignore = (regexes_to_ignore,)
    options = {
        "ignore_case": ignore_case,
        "ignore_punctuation": ignore_punctuation,
        "ignore_numbers": ignore_numbers,
        "regexes_to_ignore": tuple(regexes_to_ignore),
    }

    def normalize(text: pl.Expr) -> pl.Expr:
        if strip:
            text = strip_whitespace(text)
        return harness_normalize(text, **options)

    golds = _as_alternatives(gold)
    pred = normalize(parse_into_expr(prediction).cast(pl.String))
    normalized = map_alternatives(golds, normalize, share=False)
    if match == "full":
        hit = normalized.list.contains(pred)
    else:
        hit = _affix_match(pred, normalized, prefix=match == "prefix")
    values = (
        pl.when(_null_rows(prediction, golds))
        .then(pl.lit(None, dtype=pl.Float64))
        .otherwise(hit.cast(pl.Float64))
    )
    return guard("exact_match", values, [_empty_gold_check(gold)])


def _affix_match(pred: pl.Expr, golds: pl.Expr, *, prefix: bool) -> pl.Expr:
    """Whether the prediction starts (ends) with any alternative: a batched kernel."""

    def kernel(series: Sequence[pl.Series]) -> pl.Series:
        text, alternatives = series[0], series[1]
        n = len(text)
        counts = alternatives.list.len().fill_null(0).to_numpy()
        flat = alternatives.explode(empty_as_null=False, keep_nulls=False)
        row = np.repeat(np.arange(n), counts)
        repeated = text.gather(row)
        found = repeated.str.starts_with(flat) if prefix else repeated.str.ends_with(flat)
        hits = np.bincount(row, weights=found.fill_null(False).to_numpy(), minlength=n)
        return pl.Series(hits > 0)

    return elementwise([pred, golds], kernel, pl.Boolean)


def token_f1(
    prediction: IntoExpr,
    gold: IntoExpr,
    *,
    normalize: Callable[[pl.Expr], pl.Expr] | None = squad_normalize,
) -> pl.Expr:
    """Token F1 over the multiset of words, with a configurable normaliser.

    Parameters
    ----------
    prediction
        ``String`` column (name or expression).
    gold
        ``String`` or ``List(String)`` column: the reference, or its alternatives.
    normalize
        A function from a string expression to a string expression, applied to
        both sides before splitting into words on Python whitespace
        (``str.split()``); ``None`` splits the raw text. Default: SQuAD's
        :func:`evalframe.normalize.squad_normalize`.

    Returns
    -------
    pl.Expr
        ``Float64`` in [0, 1] per row (the best alternative); null where an input
        is null.

    Notes
    -----
    Reference: ``compute_f1`` of the SQuAD 2.0 official script
    (``transformers.data.metrics.squad_metrics``), maximised over the alternatives,
    bit-identical with the default normaliser. Unlike :func:`squad_f1`, gold
    alternatives without words are kept, not dropped. Edge rules: words are a
    multiset; if the prediction or an alternative has no words, that pair scores
    1.0 when both have none and 0.0 otherwise; an empty gold list raises
    :class:`evalframe.EvalframeError`; null prediction or gold gives null; null
    alternatives are skipped, and a list of only null alternatives gives null.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"pred": ["a b c", "", "The Cat", None],
    ...                    "gold": [["c d"], ["x", ""], ["the cat"], ["x"]]})
    >>> df.with_columns(token_f1("pred", "gold").alias("squad_norm"),
    ...                 token_f1("pred", "gold", normalize=None).alias("raw"))
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
    if normalize is None:
        words = split_join
    elif normalize is squad_normalize:  # already joins the words with single spaces
        words = squad_normalize
    else:
        def words(text: pl.Expr) -> pl.Expr:
            return split_join(normalize(text))

    golds = _as_alternatives(gold)
    pred = words(parse_into_expr(prediction).cast(pl.String))
    share = words is squad_normalize or words is split_join  # else a new closure
    values = token_f1_expr(
        pred, map_alternatives(golds, words, share=share), drop_empty_gold=False
    )
    return guard("token_f1", values, [_empty_gold_check(gold)])


register(
    "exact_match",
    roles=("prediction", "gold"),
    dtypes=_DTYPES,
    reference=Reference("lm-eval", "0.4.13", "lm_eval.api.metrics.exact_match_hf_evaluate"),
    description="Exact string match (1.0/0.0), best over gold alternatives",
    edge_rules=(
        *_GOLD_EDGE_RULES,
        "no normalisation: case, whitespace, punctuation and Unicode forms all count",
        "'' matches ''; trailing NUL characters are ignored (numpy string arrays drop them)",
    ),
    divergences=(
        "np.char.lower cuts strings that grow when lower-cased to the array's width "
        "(ignore_case: 'İX' -> 'i̇' in the harness, depending on the other rows); here "
        "nothing is cut ('i̇x')",
        "regexes_to_ignore run on Rust's regex crate: \\s \\S \\w \\W are rewritten to "
        "Python's classes, but \\b keeps Rust's Unicode word definition and look-around "
        "or back-references are refused",
        "with strip/match (lighteval options) an empty prediction is compared like any "
        "other ('' vs '' is 1.0); lighteval's ExactMatches scores an empty prediction 0",
    ),
    function=exact_match,
)

register(
    "token_f1",
    roles=("prediction", "gold"),
    dtypes=_DTYPES,
    reference=Reference(
        "transformers", "4.57", "data.metrics.squad_metrics.compute_f1 (max over golds)"
    ),
    description="Multiset token F1 after SQuAD normalisation, best over gold alternatives",
    edge_rules=(
        *_GOLD_EDGE_RULES,
        "words are a multiset: a repeated word counts as often as both sides have it",
        "a side without words: 1.0 if both have none, else 0.0; gold alternatives without "
        "words are kept (unlike squad_f1)",
        "F1 is bit-identical to compute_f1: precision = same/len(pred), recall = "
        "same/len(gold), f1 = (2*precision*recall)/(precision+recall)",
    ),
    divergences=(
        "compute_f1 scores one gold string; token_f1 takes the maximum over alternatives and, "
        "unlike get_raw_scores, does not drop alternatives that normalise to '' (token_f1('', "
        "['x', '']) = 1.0, squad_f1 gives 0.0)",
    ),
    function=token_f1,
)
