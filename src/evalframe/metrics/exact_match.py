"""The exact-match family: string equality, with the options of the harnesses.

- :func:`exact_match` is lm-evaluation-harness's ``exact_match``
  (``exact_match_hf_evaluate``) per row, with its options (``ignore_case``,
  ``ignore_punctuation``, ``ignore_numbers``, ``regexes_to_ignore``), plus ``strip``,
  ``match`` (prefix/suffix) and a ``normalizer`` from the normaliser table.
- every metric of the family takes ``extractor=`` (applied to the prediction before
  anything else) and ``gold_extractor=`` (applied to the gold): a name from the extractor
  table (``"boxed"``, ``"gsm8k_answer"``...; see :mod:`evalframe.extract`), an
  ``Extractor`` or a function; default ``"none"``.
- :func:`lighteval_exact_match` is lighteval's ``ExactMatches``, and the registered
  variants lighteval ships are it with fixed options (each function's ``preset_of`` and
  ``preset_options``): ``quasi_exact_match`` (``qem``: HELM normaliser, stripped),
  ``prefix_exact_match`` (``pem``), ``prefix_quasi_exact_match`` (``pqem``),
  ``suffix_exact_match``, ``suffix_quasi_exact_match`` and ``quasi_exact_match_gsm8k``.

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

import textwrap
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

import numpy as np
import polars as pl

from evalframe._expr import IntoExpr, elementwise, guard, parse_into_expr
from evalframe.errors import EvalframeError
from evalframe.extract.table import ExtractorLike, answer_of
from evalframe.metrics._pairs import max_over_pairs
from evalframe.metrics._rules import GOLD_EDGE_RULES, MULTI_RULE, NULL_RULE
from evalframe.metrics._text_inputs import DTYPES, TEXT_DTYPES, as_alternatives, empty_gold_check
from evalframe.metrics._token_f1 import map_alternatives
from evalframe.metrics.registry import Reference, register, with_rules
from evalframe.normalize.harness import harness_normalize
from evalframe.normalize.harness import strip as strip_whitespace
from evalframe.normalize.table import TextFunction, resolve_normalizer

__all__ = [
    "exact_match",
    "lighteval_exact_match",
    "prefix_exact_match",
    "prefix_quasi_exact_match",
    "quasi_exact_match",
    "quasi_exact_match_gsm8k",
    "suffix_exact_match",
    "suffix_quasi_exact_match",
]

LIGHTEVAL_VERSION = "main@3fd1526"

Match = Literal["full", "prefix", "suffix"]
EmptyPrediction = Literal["compare", "wrong"]

_EXTRACT_RULE = (
    "extractor= / gold_extractor= (default 'none') extract the answer from the prediction / "
    "the gold before anything else (evalframe.extract's table, by name or function); a null "
    "extracted answer (boxed without a \\boxed{}) scores null: a missing answer for the "
    "prediction (n_missing, wrong by default), a row without a gold for the gold"
)


def _null_rows(prediction: IntoExpr, golds: pl.Expr) -> pl.Expr:
    all_null = golds.list.len() == golds.list.count_matches(None)
    return parse_into_expr(prediction).is_null() | golds.is_null() | all_null


def _check_match(metric: str, match: object) -> None:
    if match not in ("full", "prefix", "suffix"):
        raise EvalframeError(
            f"metric {metric!r}: match={match!r} is invalid; expected 'full', 'prefix' or "
            "'suffix'"
        )


@register(
    "exact_match",
    roles=("prediction", "gold"),
    dtypes=DTYPES,
    reference=Reference("lm-eval", "0.4.13", "lm_eval.api.metrics.exact_match_hf_evaluate"),
    description="Exact string match (1.0/0.0), best over gold alternatives",
    edge_rules=(
        *GOLD_EDGE_RULES,
        "no normalisation by default (normalizer='none'): case, whitespace, punctuation and "
        "Unicode forms all count",
        "'' matches ''; trailing NUL characters are ignored (numpy string arrays drop them)",
        "empty_prediction='wrong': a prediction empty after strip (before the normaliser) "
        "scores 0.0 against any gold, as HELM's exact_match family (if not pred: return 0)",
        _EXTRACT_RULE,
    ),
    divergences=(
        "np.char.lower cuts strings that grow when lower-cased to the array's width "
        "(ignore_case: 'İX' -> 'i̇' in the harness, depending on the other rows); here "
        "nothing is cut ('i̇x')",
        "regexes_to_ignore run on Rust's regex crate: \\s \\S \\w \\W are rewritten to "
        "Python's classes, but \\b keeps Rust's Unicode word definition and look-around "
        "or back-references are refused",
        "with strip/match (lighteval options) an empty prediction is compared like any "
        "other ('' vs '' is 1.0); lighteval's ExactMatches scores an empty prediction 0 "
        "(checked before strip; empty_prediction='wrong' checks after strip, as HELM)",
    ),
)
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
    normalizer: str | TextFunction | None = "none",
    empty_prediction: EmptyPrediction = "compare",
    extractor: ExtractorLike = "none",
    gold_extractor: ExtractorLike = "none",
) -> pl.Expr:
    """Exact string match, with lm-eval-harness's, lighteval's and HELM's options.

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
    normalizer
        A name from the normaliser table (``"squad"``, ``"helm"``, ... see
        :data:`evalframe.normalize.NORMALIZERS`) or a function from ``pl.Expr`` to
        ``pl.Expr``, applied to both sides after ``strip`` and before the other options.
        Default ``"none"``.
    empty_prediction
        ``"compare"`` (the default): an empty prediction is compared like any text (``""``
        matches ``""``), as lm-eval-harness does. ``"wrong"``: a prediction that is empty
        after ``strip`` (before the normaliser) scores 0.0 whatever the gold, as HELM's
        ``exact_match``, ``quasi_exact_match`` and ``prefix_exact_match`` do (``if not
        pred: return 0`` on the stripped completion).
    extractor, gold_extractor
        Answer extraction, applied to the prediction (the gold) before anything else: a
        name from the extractor table (``"boxed"``, ``"gsm8k_answer"``, ``"last_number"``...;
        see :func:`evalframe.list_extractors`), an ``Extractor``, or a function from
        ``pl.Expr`` to ``pl.Expr``. Default ``"none"``.

    Returns
    -------
    pl.Expr
        ``Float64``, 1.0 or 0.0 per row (the best alternative); null where an
        input is null.

    Notes
    -----
    Reference: ``lm_eval.api.metrics.exact_match_hf_evaluate`` (lm-eval 0.4.13), per
    row; ``strip`` and ``match`` as lighteval's ``ExactMatches.compute_one_item``.
    Order of operations, on both sides: strip, normalizer, regexes, lower case, punctuation,
    digits, then the comparison. With ``match="prefix"`` or ``"suffix"`` an empty gold
    matches any prediction.

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
    >>> df.select(exact_match("pred", "gold", strip=True, empty_prediction="wrong")).to_series(
    ... ).to_list()
    [0.0, 0.0, 0.0, None]
    """
    _check_match("exact_match", match)
    if empty_prediction not in ("compare", "wrong"):
        raise EvalframeError(
            f"metric 'exact_match': empty_prediction={empty_prediction!r} is invalid; expected "
            "'compare' or 'wrong'"
        )
    if isinstance(regexes_to_ignore, str):
        regexes_to_ignore = (regexes_to_ignore,)
    options = {
        "ignore_case": ignore_case,
        "ignore_punctuation": ignore_punctuation,
        "ignore_numbers": ignore_numbers,
        "regexes_to_ignore": tuple(regexes_to_ignore),
    }

    _, normalize_text = resolve_normalizer("exact_match", normalizer)
    prediction = answer_of(parse_into_expr(prediction), "exact_match", extractor)
    raw_gold, gold = gold, answer_of(parse_into_expr(gold), "exact_match", gold_extractor)

    def normalize(text: pl.Expr) -> pl.Expr:
        if strip:
            text = strip_whitespace(text)
        if normalize_text is not None:
            text = normalize_text(text)
        return harness_normalize(text, **options)

    golds = as_alternatives(gold)
    text = parse_into_expr(prediction).cast(pl.String)
    pred = normalize(text)
    normalized = map_alternatives(golds, normalize, share=False)
    if match == "full":
        hit = normalized.list.contains(pred)
    else:
        hit = _affix_match(pred, normalized, prefix=match == "prefix")
    if empty_prediction == "wrong":
        hit = hit & ((strip_whitespace(text) if strip else text) != "")
    values = (
        pl.when(_null_rows(prediction, golds))
        .then(pl.lit(None, dtype=pl.Float64))
        .otherwise(hit.cast(pl.Float64))
    )
    return guard("exact_match", values, [empty_gold_check(raw_gold)])


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


# --- lighteval's ExactMatches and the variants it registers ----------------------------------

_EM_RULES = (
    "an empty prediction ('') scores 0.0 even against an empty gold (lighteval checks "
    "`if not pred` on the raw text first)",
    MULTI_RULE,
    NULL_RULE,
    _EXTRACT_RULE,
)
_HELM_RULE = (
    "HELM normalisation (evalframe.normalize.helm_normalize): Python str.lower, ASCII "
    "punctuation removed, tokens Python's float() accepts rewritten as str(float(token)) "
    "('1.5' -> '15.0', '007' -> '7.0'), articles a/an/the removed with Python's \\b, "
    "hyphens and whitespace collapsed to one space; Unicode follows the running Python"
)


def lighteval_exact_match(
    prediction: IntoExpr,
    gold: IntoExpr,
    *,
    normalizer: str | TextFunction | None = "none",
    strip: bool = False,
    match: Match = "full",
    extractor: ExtractorLike = "none",
    gold_extractor: ExtractorLike = "none",
) -> pl.Expr:
    """lighteval's ``ExactMatches``: 1.0 when a prediction matches a gold, else 0.0.

    For each (gold, prediction) pair, exactly as ``ExactMatches.compute_one_item``:
    an empty prediction scores 0 (checked on the raw text, before anything else);
    with ``strip`` both texts lose leading and trailing whitespace (``str.strip()``);
    ``normalizer`` is then applied to both; ``match`` compares them: ``"full"``
    equality, ``"prefix"`` (the prediction starts with the gold) or ``"suffix"`` (the
    prediction ends with the gold). The row's score is the maximum over all pairs.

    Parameters
    ----------
    prediction
        The model output: ``str``, or ``list[str]`` for several samples.
    gold
        The reference: ``str``, or ``list[str]`` of alternatives.
    normalizer
        A name from the normaliser table (``"none"``, ``"helm"``, ``"gsm8k"``, ``"squad"``...,
        see :data:`evalframe.normalize.NORMALIZERS`) or a function from ``pl.Expr`` to
        ``pl.Expr``, applied to both sides after ``strip``.
    strip
        lighteval's ``strip_strings``.
    match
        lighteval's ``type_exact_match``: ``"full"``, ``"prefix"`` or ``"suffix"``.
    extractor, gold_extractor
        Answer extraction before anything else (the empty-prediction rule then reads the
        extracted answer); see :func:`exact_match`.

    Returns
    -------
    pl.Expr
        ``Float64``, 1.0 or 0.0 per row; null where an input is null.

    Notes
    -----
    ``"  "`` with ``strip`` matches an empty gold (only ``""`` is an empty prediction);
    with ``"prefix"`` or ``"suffix"`` an empty gold (after normalisation) matches every
    non-empty prediction; a prediction that normalises to ``""`` (``"The"`` under
    ``helm``) is not empty.

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
        "lighteval_exact_match", prediction, gold, normalizer=normalizer, strip=strip, match=match,
        extractor=extractor, gold_extractor=gold_extractor,
    )


# Not a registered metric itself (its presets below are): its rules are appended here.
lighteval_exact_match.__doc__ = with_rules(lighteval_exact_match.__doc__, _EM_RULES, ())


def _exact_match(
    metric: str,
    prediction: IntoExpr,
    gold: IntoExpr,
    *,
    normalizer: str | TextFunction | None,
    strip: bool,
    match: Match,
    extractor: ExtractorLike = "none",
    gold_extractor: ExtractorLike = "none",
) -> pl.Expr:
    _check_match(metric, match)
    _, normalize = resolve_normalizer(metric, normalizer)
    prediction = answer_of(parse_into_expr(prediction), metric, extractor)
    gold = answer_of(parse_into_expr(gold), metric, gold_extractor)

    def prepare(value: pl.Expr, name: str) -> pl.Expr:
        text = strip_whitespace(value) if strip else value
        return (normalize(text) if normalize is not None else text).alias(name)

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
    return max_over_pairs(
        metric,
        prediction,
        gold,
        prepare_prediction,
        lambda value: [prepare(value, "gold")],
        score,
    )


#: What every preset's docstring says between its summary and its example.
_PRESET_DOC = """
    Parameters
    ----------
    prediction
        ``str``, or ``list[str]`` for several samples.
    gold
        ``str``, or ``list[str]`` of alternatives.
    extractor, gold_extractor
        Answer extraction before anything else (default ``"none"``); see
        :func:`exact_match`.

    Returns
    -------
    pl.Expr
        ``Float64`` per row: 1.0 (a match) or 0.0; null where an input is null.

    Examples
    --------
    >>> import polars as pl
"""
_RAW_RULE = "case, punctuation and Unicode are compared as they are; strip is Python's str.strip"


def _lighteval_call(options: Mapping[str, Any]) -> str:
    """The ``ExactMatches(...)`` lighteval builds for these options, as reST text."""
    arguments = []
    if options["normalizer"] != "none":
        normalizer = f"{options['normalizer']}_normalizer"
        arguments += [f"normalize_gold={normalizer}", f"normalize_pred={normalizer}"]
    if options["strip"]:
        arguments.append("strip_strings=True")
    if options["match"] != "full":
        arguments.append(f'type_exact_match="{options["match"]}"')
    return f"lighteval's ``ExactMatches({', '.join(arguments)})``"


def _lighteval_preset(
    name: str,
    options: Mapping[str, Any],
    summary: str,
    example: str,
    *,
    reference: str,
    description: str,
    edge_rules: Sequence[str],
    more: str = "",
) -> Callable[..., pl.Expr]:
    """A registered metric that is :func:`lighteval_exact_match` with fixed ``options``.

    The function is named ``name`` (its ``__name__``, ``__qualname__`` and code name), has
    the signature ``(prediction, gold, *, extractor, gold_extractor)`` and the docstring
    ``summary``, the lighteval call, ``more``, the shared parameters and ``example`` (the
    doctest lines after ``>>> import polars as pl``); ``preset_of`` and ``preset_options``
    record the function and its fixed options. Registered under ``name``, with
    lighteval's ``ExactMatches`` rules before ``edge_rules``.
    """

    def preset(
        prediction: IntoExpr,
        gold: IntoExpr,
        *,
        extractor: ExtractorLike = "none",
        gold_extractor: ExtractorLike = "none",
    ) -> pl.Expr:
        return _exact_match(
            name, prediction, gold, **options, extractor=extractor, gold_extractor=gold_extractor
        )

    preset.__name__ = preset.__qualname__ = name
    preset.__code__ = preset.__code__.replace(co_name=name, co_qualname=name)
    fixed = ", ".join(f"{key}={value!r}" for key, value in options.items())
    intro = textwrap.fill(
        f"{_lighteval_call(options)}, which is :func:`lighteval_exact_match` with "
        f"``{fixed}``. {more}".strip(),
        width=88, initial_indent="    ", subsequent_indent="    ", break_long_words=False,
    )
    preset.__doc__ = f"{summary}\n\n{intro}\n{_PRESET_DOC}{example}"
    preset.preset_of = lighteval_exact_match  # type: ignore[attr-defined]
    preset.preset_options = dict(options)  # type: ignore[attr-defined]
    return register(
        name,
        roles=("prediction", "gold"),
        dtypes=TEXT_DTYPES,
        reference=Reference("lighteval", LIGHTEVAL_VERSION, reference),
        description=description,
        edge_rules=(*_EM_RULES, *edge_rules),
    )(preset)


quasi_exact_match = _lighteval_preset(
    "quasi_exact_match",
    {"normalizer": "helm", "strip": True, "match": "full"},
    "lighteval's ``quasi_exact_match`` (``qem``): exact match after HELM normalisation.",
    """\
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
    """,
    reference="metrics.Metrics.quasi_exact_match (ExactMatches with helm_normalizer, "
    "strip_strings)",
    description="Exact match after HELM/QuAC normalisation of both texts (lighteval qem)",
    edge_rules=(_HELM_RULE,),
)

prefix_exact_match = _lighteval_preset(
    "prefix_exact_match",
    {"normalizer": "none", "strip": True, "match": "prefix"},
    "lighteval's ``prefix_exact_match`` (``pem``): the stripped prediction starts with a gold.",
    """\
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
    """,
    reference="metrics.Metrics.prefix_exact_match (ExactMatches strip_strings, prefix)",
    description="The stripped prediction starts with the stripped gold (lighteval pem)",
    edge_rules=(
        "an empty or whitespace-only gold matches every non-empty prediction (str.startswith)",
        _RAW_RULE,
    ),
)

prefix_quasi_exact_match = _lighteval_preset(
    "prefix_quasi_exact_match",
    {"normalizer": "helm", "strip": False, "match": "prefix"},
    "lighteval's ``prefix_quasi_exact_match`` (``pqem``): prefix match after HELM normalisation.",
    """\
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
    """,
    reference="metrics.Metrics.prefix_quasi_exact_match (ExactMatches with helm_normalizer, "
    "prefix)",
    description="The HELM-normalised prediction starts with the normalised gold (lighteval pqem)",
    edge_rules=(
        _HELM_RULE,
        "a character prefix, not a word prefix ('parisian' starts with 'paris'); a gold that "
        "normalises to '' ('the') matches every non-empty prediction",
    ),
)

suffix_exact_match = _lighteval_preset(
    "suffix_exact_match",
    {"normalizer": "none", "strip": True, "match": "suffix"},
    "The stripped prediction ends with a stripped gold (lighteval's suffix exact match).",
    """\
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
    """,
    reference="metrics_sample.ExactMatches(strip_strings=True, type_exact_match='suffix') (no "
    "Metrics enum entry)",
    description="The stripped prediction ends with the stripped gold (lighteval suffix match)",
    edge_rules=(
        "an empty or whitespace-only gold matches every non-empty prediction (str.endswith)",
        _RAW_RULE,
    ),
    more="The suffix counterpart of :func:`prefix_exact_match` (lighteval offers the match "
    "type but no ``Metrics`` entry uses it).",
)

suffix_quasi_exact_match = _lighteval_preset(
    "suffix_quasi_exact_match",
    {"normalizer": "helm", "strip": False, "match": "suffix"},
    "The HELM-normalised prediction ends with a normalised gold (lighteval suffix match).",
    """\
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
    """,
    reference="metrics_sample.ExactMatches(helm_normalizer both sides, "
    "type_exact_match='suffix') (no Metrics enum entry)",
    description="The HELM-normalised prediction ends with the normalised gold (lighteval)",
    edge_rules=(
        _HELM_RULE,
        "a character suffix, not a word suffix ('metroparis' ends with 'paris'); a gold that "
        "normalises to '' ('the') matches every non-empty prediction",
    ),
    more="The suffix counterpart of :func:`prefix_quasi_exact_match`.",
)

quasi_exact_match_gsm8k = _lighteval_preset(
    "quasi_exact_match_gsm8k",
    {"normalizer": "gsm8k", "strip": True, "match": "full"},
    "lighteval's ``quasi_exact_match_gsm8k``: the ``#### <number>`` answers are equal.",
    """\
    >>> df = pl.DataFrame({"pred": ["so #### 1,000", "no answer", None],
    ...                    "gold": ["#### 1000", "#### 3", "#### 1"]})
    >>> df.with_columns(quasi_exact_match_gsm8k("pred", "gold").alias("qem"))
    shape: (3, 3)
    ┌───────────────┬───────────┬──────┐
    │ pred          ┆ gold      ┆ qem  │
    │ ---           ┆ ---       ┆ ---  │
    │ str           ┆ str       ┆ f64  │
    ╞═══════════════╪═══════════╪══════╡
    │ so #### 1,000 ┆ #### 1000 ┆ 1.0  │
    │ no answer     ┆ #### 3    ┆ 0.0  │
    │ null          ┆ #### 1    ┆ null │
    └───────────────┴───────────┴──────┘
    """,
    reference="metrics.Metrics.quasi_exact_match_gsm8k (ExactMatches with gsm8k_normalizer, "
    "strip_strings)",
    description="The '#### <number>' answers of both texts are equal (lighteval qem, GSM8K)",
    edge_rules=(
        "both texts reduce to the first '#### <number>' answer with commas removed, or "
        "'[invalid]'; two texts without an answer therefore match each other",
    ),
    more="Both texts are reduced by :func:`evalframe.normalize.gsm8k_normalize`.",
)
