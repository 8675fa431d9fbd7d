r"""Inspect AI's string scorers as metrics: ``match``, ``includes``, ``pattern``, ``answer``.

Each metric gives, per row, the value Inspect's scorer (``inspect_ai`` 0.3.285,
``inspect_ai/scorer/_match.py``, ``_pattern.py``, ``_answer.py``, ``_common.py``) gives
that completion and target, through ``value_to_float``: ``CORRECT`` 1.0, ``INCORRECT``
0.0. The gold is Inspect's ``Target``: one string, or a list of them, any of which may
match (``match``/``includes`` try each in turn; ``pattern``/``answer`` look an extracted
answer up among them).

- :func:`inspect_match` (``match(location, ignore_case, numeric)``): both sides
  ``str.strip()``-ed, case-folded (``ignore_case``), trimmed of ASCII punctuation and
  whitespace, then compared at the ``location`` (``"end"``: the completion ends with the
  target; ``"begin"``, ``"exact"``, ``"any"``: contains). With ``numeric=True`` and a
  target that reads as a number (after ``$ , £ € * _`` and a ``.`` before no digit are
  removed), the completion's words are read as numbers instead (the first for
  ``"begin"``, the last for ``"end"``, any for ``"any"``, the whole text for
  ``"exact"``) and compared as ``format(value, ".5g")``.
- :func:`inspect_includes` (``includes(ignore_case)``): the target (case-folded) is a
  substring of the completion.
- :func:`inspect_pattern` (``pattern(pattern, ignore_case, match_all)``): a Python regex;
  its first group (of several: the first that equals a target, lower-cased with
  ``ignore_case``) must equal a target; ``match_all``: every group that took part must.
- :func:`inspect_answer` (``answer(pattern)``): ``pattern`` with Inspect's ``ANSWER:``
  patterns, ``"letter"``, ``"word"`` or ``"line"``.

The answers Inspect records (``Score.answer``) are the extractors
``inspect_answer_letter`` / ``_word`` / ``_line`` and
:func:`evalframe.extract.inspect_pattern_extractor` (see ``evalframe extractors``); for
``match``/``includes`` it is the stripped completion itself.

>>> import polars as pl
>>> from evalframe import metrics as M
>>> df = pl.DataFrame({
...     "completion": ["The answer is $1,000.", "ANSWER: b", "It is Paris", "", None],
...     "target": [["1000"], ["B"], ["paris", "lyon"], ["."], ["x"]],
... })
>>> df.with_columns(
...     numeric=M.inspect_match("completion", "target", numeric=True),
...     letter=M.inspect_answer("completion", "target", pattern="letter"),
...     includes=M.inspect_includes("completion", "target"),
... ).drop("target")
shape: (5, 4)
┌───────────────────────┬─────────┬────────┬──────────┐
│ completion            ┆ numeric ┆ letter ┆ includes │
│ ---                   ┆ ---     ┆ ---    ┆ ---      │
│ str                   ┆ f64     ┆ f64    ┆ f64      │
╞═══════════════════════╪═════════╪════════╪══════════╡
│ The answer is $1,000. ┆ 1.0     ┆ 0.0    ┆ 0.0      │
│ ANSWER: b             ┆ 1.0     ┆ 1.0    ┆ 1.0      │
│ It is Paris           ┆ 1.0     ┆ 0.0    ┆ 1.0      │
│                       ┆ 1.0     ┆ 0.0    ┆ 0.0      │
│ null                  ┆ null    ┆ null   ┆ null     │
└───────────────────────┴─────────┴────────┴──────────┘
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable, Sequence
from functools import cache
from typing import Literal

import polars as pl

from evalframe._expr import IntoExpr, elementwise, parse_into_expr
from evalframe.errors import EvalframeError
from evalframe.extract.inspect_answer import AnswerType, answer_text, pattern_groups
from evalframe.extract.table import ExtractorLike, answer_of
from evalframe.metrics._inspect_numbers import could_be_number, normalize_number, parse_number
from evalframe.metrics._text_rules import TEXT_PAIR, documented
from evalframe.metrics.registry import Reference, register
from evalframe.normalize._python_text import (
    all_characters,
    as_class,
    has_multibyte,
    lower,
    whitespace_characters,
)

__all__ = ["inspect_answer", "inspect_includes", "inspect_match", "inspect_pattern"]

PACKAGE, VERSION = "inspect_ai", "0.3.285"
Location = Literal["begin", "end", "any", "exact"]
_LOCATIONS = ("begin", "end", "any", "exact")
#: What Inspect's ``strip_punctuation`` strips from both ends.
_PUNCTUATION = string.whitespace + string.punctuation

_EDGE_RULES = (
    "gold is Inspect's Target: one string or a list of alternatives, any of which may match",
    "an empty gold list is a Target with no string: 0.0 (Inspect's INCORRECT)",
    "null prediction or null gold -> null; null alternatives are skipped; a gold list of "
    "only nulls -> null",
)


def _scorer(name: str) -> dict[str, object]:
    """The registration keywords every Inspect scorer shares: roles, dtypes, reference."""
    reference = Reference(PACKAGE, VERSION, f"inspect_ai.scorer.{name} (value_to_float)")
    return {**TEXT_PAIR, "reference": reference}


#: The docstring sections of every Inspect scorer.
_SECTIONS = {
    "roles": """
        prediction
            ``String``: the completion (Inspect's ``state.output.completion``).
        gold
            ``String`` or ``List(String)``: the target(s).
        """,
    "returns": """
        Returns
        -------
        pl.Expr
            ``Float64``, 1.0 (CORRECT) or 0.0 (INCORRECT); null for a null input.
        """,
    "extractor": """
        extractor
            Applied to the completion first (default ``"none"``: Inspect's scorer reads the
            whole completion); a null extracted answer scores null.
        """,
}


# ---- Python's text semantics over a batch -----------------------------------------------

def _casefold(series: pl.Series) -> pl.Series:
    """``str.casefold()``: ASCII rows in Polars, the others once per distinct value."""
    lowered = series.str.to_lowercase()
    wide = has_multibyte(series)
    if not wide.any():
        return lowered
    distinct = series.filter(wide).unique()
    folded = pl.Series([value.casefold() for value in distinct.to_list()], dtype=pl.String)
    frame = pl.DataFrame({"value": series, "lowered": lowered, "wide": wide})
    return frame.select(
        pl.when(pl.col("wide"))
        .then(pl.col("value").replace_strict(distinct, folded, default=None))
        .otherwise(pl.col("lowered"))
    ).to_series()


def _python_strip(series: pl.Series) -> pl.Series:
    """``str.strip()``: Python's whitespace (``str.isspace``) off both ends."""
    return series.str.strip_chars(whitespace_characters())


@cache
def _classes() -> dict[str, str]:
    everything = all_characters()
    return {
        "non_space": as_class(whitespace_characters(), negate=True),
        "non_digit": as_class(re.findall(r"\d", everything), negate=True),
        "numeric": as_class(could_be_number()),
    }


def _strip_numeric_punctuation(text: pl.Expr) -> pl.Expr:
    r"""Inspect's ``strip_numeric_punctuation``: ``\$`` -> ``$`` (and ``\,``, ``\£``, ``\€``,
    ``\*``, ``\_``); ``$ , £ € * _`` removed; a ``.`` removed unless a digit follows.

    The last rule's lookahead is said without it: in a run of dots every dot but the last
    is followed by a dot, so a run is one dot, which goes unless a digit (Python's ``\d``)
    follows.
    """
    return (
        text.str.replace_all(r"\\([$,£€*_])", "${1}")
        .str.replace_all(r"[$,£€*_]", "")
        .str.replace_all(r"\.+", ".")
        .str.replace_all(rf"\.({_classes()['non_digit']}|\z)", "${1}")
    )


def _on(series: pl.Series, function: Callable[[pl.Expr], pl.Expr]) -> pl.Series:
    """An expression function applied to a Series."""
    return pl.DataFrame({"value": series}).select(function(pl.col("value"))).to_series()


def _numbers_by_distinct(values: pl.Series, *, trim_punctuation: bool) -> pl.Series:
    """``normalize_number`` of each value that is a number, else null; Python runs once per
    distinct value that holds a numeric character (no other value can be a number)."""
    candidates = values.filter(values.str.contains(_classes()["numeric"]).fill_null(False))
    distinct = candidates.unique()
    texts = [
        normalize_number(value, trim_punctuation=trim_punctuation)
        if parse_number(value, trim_punctuation=trim_punctuation) is not None
        else None
        for value in distinct.to_list()
    ]
    return values.replace_strict(
        distinct, pl.Series(texts, dtype=pl.String), default=None, return_dtype=pl.String
    )


# ---- the rows and their targets --------------------------------------------------------

def _targets(gold: pl.Series) -> pl.DataFrame:
    """``row``, ``target``: one row per non-null target string."""
    frame = pl.DataFrame({"target": gold}).with_row_index("row")
    if isinstance(gold.dtype, pl.List):
        frame = frame.explode("target", keep_nulls=False, empty_as_null=False)
    return frame.filter(pl.col("target").is_not_null()).with_columns(
        pl.col("target").cast(pl.String)
    )


def _finish(prediction: pl.Series, gold: pl.Series, hits: pl.DataFrame) -> pl.Series:
    """Per row: 1.0 where ``hits`` (``row``, ``hit``) says so, 0.0 else; null rows."""
    n = len(prediction)
    if isinstance(gold.dtype, pl.List):
        counts = gold.list.len()
        no_target = gold.is_null() | ((counts > 0) & (gold.list.count_matches(None) == counts))
    else:
        no_target = gold.is_null()
    frame = pl.DataFrame({
        "row": pl.int_range(n, eager=True, dtype=pl.UInt32),
        "null": prediction.is_null() | no_target,
    })
    per_row = hits.group_by("row").agg(pl.col("hit").any())
    joined = frame.join(per_row, on="row", how="left", maintain_order="left")
    return joined.select(
        pl.when(pl.col("null")).then(None).otherwise(pl.col("hit").fill_null(False))
        .cast(pl.Float64)
    ).to_series()


def _kernel(prediction: IntoExpr, gold: IntoExpr, score: Callable) -> pl.Expr:
    def run(series: Sequence[pl.Series]) -> pl.Series:
        predicted, golds = series[0].cast(pl.String), series[1]
        return _finish(predicted, golds, score(predicted, golds))

    return elementwise([parse_into_expr(prediction), parse_into_expr(gold)], run, pl.Float64)


# ---- match / includes ------------------------------------------------------------------

def _plain_hit(value: pl.Expr, target: pl.Expr, location: str) -> pl.Expr:
    if location == "begin":
        return value.str.starts_with(target)
    if location == "end":
        return value.str.ends_with(target)
    if location == "exact":
        return value == target
    return value.str.contains(target, literal=True)


def _numbers_of(text: pl.Series) -> pl.DataFrame:
    """Per row of ``text``: the words that are numbers, normalised, in order (``numbers``)."""
    words = pl.DataFrame({"words": text.str.extract_all(_classes()["non_space"] + "+")})
    flat = words.with_row_index("row").explode("words", keep_nulls=False, empty_as_null=False)
    numbers = _numbers_by_distinct(flat["words"], trim_punctuation=True)
    found = flat.with_columns(numbers.alias("number")).filter(pl.col("number").is_not_null())
    return found.group_by("row", maintain_order=True).agg(pl.col("number").alias("numbers"))


def _match_hits(location: str, ignore_case: bool, numeric: bool):
    def score(prediction: pl.Series, gold: pl.Series) -> pl.DataFrame:
        value = _python_strip(prediction)
        if ignore_case:
            value = _casefold(value)
        rows = pl.DataFrame({"value": value}).with_row_index("row")
        targets = _targets(gold)
        target = _python_strip(targets["target"])
        if ignore_case:
            target = _casefold(target)
        number = pl.lit(None, dtype=pl.String)
        if numeric:
            target = _on(target, _strip_numeric_punctuation)
            number = _numbers_by_distinct(target, trim_punctuation=True)
        targets = targets.with_columns(target.alias("t"), number.alias("t_number"))
        rows = rows.with_columns(pl.col("value").str.strip_chars(_PUNCTUATION).alias("v"))
        if numeric:
            digits = _on(rows["value"], _strip_numeric_punctuation)
            if location == "exact":
                rows = rows.with_columns(
                    _numbers_by_distinct(digits, trim_punctuation=False).alias("v_number")
                )
            else:
                rows = rows.join(_numbers_of(digits), on="row", how="left")
        pairs = targets.join(rows, on="row", how="inner")
        plain = _plain_hit(pl.col("v"), pl.col("t").str.strip_chars(_PUNCTUATION), location)
        if numeric:
            wanted = pl.col("t_number")
            if location == "exact":
                as_number = pl.col("v_number") == wanted
            elif location == "any":
                as_number = pl.col("numbers").list.contains(wanted)
            else:
                numbers = pl.col("numbers")
                end = numbers.list.first() if location == "begin" else numbers.list.last()
                as_number = end == wanted
            hit = pl.when(wanted.is_not_null()).then(as_number.fill_null(False)).otherwise(plain)
        else:
            hit = plain
        return pairs.select("row", hit.fill_null(False).alias("hit"))

    return score


def _check_location(location: str) -> None:
    if location not in _LOCATIONS:
        raise EvalframeError(
            f"metric 'inspect_match': location={location!r} is invalid; expected one of "
            f"{', '.join(repr(name) for name in _LOCATIONS)}"
        )


@register(
    "inspect_match",
    **_scorer("match"),
    description="Inspect's match(): the completion ends (begins, equals, contains) the "
    "target, optionally as numbers",
    edge_rules=(
        *_EDGE_RULES,
        "both sides are str.strip()-ed and trimmed of ASCII punctuation; '' ends with ''",
        "numeric=True: a target that is no number is matched as text; '60%' is no number",
    ),
    divergences=(
        "a Chinese numeral too large for a float (over 309 digits) is no number here; "
        "Inspect raises OverflowError",
    ),
)
@documented(**_SECTIONS)
def inspect_match(
    prediction: IntoExpr,
    gold: IntoExpr,
    *,
    location: Location = "end",
    ignore_case: bool = True,
    numeric: bool = False,
    extractor: ExtractorLike = "none",
) -> pl.Expr:
    """Inspect's ``match()`` scorer: 1.0 where the completion matches a target.

    Parameters
    ----------
    {roles}
    location
        ``"end"`` (default), ``"begin"``, ``"exact"`` or ``"any"``.
    ignore_case
        Compare ``str.casefold()``-ed text (default True, as Inspect).
    numeric
        Compare numbers when the target is one (see the module docstring).
    {extractor}

    {returns}

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"completion": ["So: 42.", "42 apples", "-3.50", None],
    ...                    "target": ["42", "42", "-3.5", "1"]})
    >>> df.with_columns(
    ...     end=inspect_match("completion", "target"),
    ...     begin=inspect_match("completion", "target", location="begin", numeric=True),
    ...     numeric=inspect_match("completion", "target", numeric=True),
    ... )
    shape: (4, 5)
    ┌────────────┬────────┬──────┬───────┬─────────┐
    │ completion ┆ target ┆ end  ┆ begin ┆ numeric │
    │ ---        ┆ ---    ┆ ---  ┆ ---   ┆ ---     │
    │ str        ┆ str    ┆ f64  ┆ f64   ┆ f64     │
    ╞════════════╪════════╪══════╪═══════╪═════════╡
    │ So: 42.    ┆ 42     ┆ 1.0  ┆ 1.0   ┆ 1.0     │
    │ 42 apples  ┆ 42     ┆ 0.0  ┆ 1.0   ┆ 1.0     │
    │ -3.50      ┆ -3.5   ┆ 0.0  ┆ 1.0   ┆ 1.0     │
    │ null       ┆ 1      ┆ null ┆ null  ┆ null    │
    └────────────┴────────┴──────┴───────┴─────────┘
    """
    _check_location(location)
    prediction = answer_of(parse_into_expr(prediction), "inspect_match", extractor)
    return _kernel(prediction, gold, _match_hits(location, ignore_case, numeric))


def _includes_hits(ignore_case: bool):
    def score(prediction: pl.Series, gold: pl.Series) -> pl.DataFrame:
        value = _casefold(prediction) if ignore_case else prediction
        rows = pl.DataFrame({"value": value}).with_row_index("row")
        targets = _targets(gold)
        target = _casefold(targets["target"]) if ignore_case else targets["target"]
        pairs = targets.with_columns(target.alias("t")).join(rows, on="row", how="inner")
        hit = pl.col("value").str.contains(pl.col("t"), literal=True)
        return pairs.select("row", hit.fill_null(False).alias("hit"))

    return score


@register(
    "inspect_includes",
    **_scorer("includes"),
    description="Inspect's includes(): a target is a substring of the completion",
    edge_rules=(*_EDGE_RULES, "no stripping: an empty target is included in any completion"),
)
@documented(**_SECTIONS)
def inspect_includes(
    prediction: IntoExpr,
    gold: IntoExpr,
    *,
    ignore_case: bool = True,
    extractor: ExtractorLike = "none",
) -> pl.Expr:
    """Inspect's ``includes()`` scorer: 1.0 where a target occurs in the completion.

    Parameters
    ----------
    {roles}
    ignore_case
        Compare ``str.casefold()``-ed text (default True).
    {extractor}

    {returns}

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"completion": ["STRASSE", "Paris", None], "target": ["straße", "", "x"]})
    >>> df.with_columns(includes=inspect_includes("completion", "target"))
    shape: (3, 3)
    ┌────────────┬────────┬──────────┐
    │ completion ┆ target ┆ includes │
    │ ---        ┆ ---    ┆ ---      │
    │ str        ┆ str    ┆ f64      │
    ╞════════════╪════════╪══════════╡
    │ STRASSE    ┆ straße ┆ 1.0      │
    │ Paris      ┆        ┆ 1.0      │
    │ null       ┆ x      ┆ null     │
    └────────────┴────────┴──────────┘
    """
    prediction = answer_of(parse_into_expr(prediction), "inspect_includes", extractor)
    return _kernel(prediction, gold, _includes_hits(ignore_case))


# ---- pattern / answer ------------------------------------------------------------------

def _lowered(values: pl.Series, ignore_case: bool) -> pl.Series:
    if not ignore_case:
        return values
    return _on(values, lower)


def _group_hits(ignore_case: bool, match_all: bool):
    """Score ``groups`` (``List(String)``, null: no match) against the row's targets."""

    def score(groups: pl.Series, gold: pl.Series) -> pl.DataFrame:
        targets = _targets(gold)
        targets = targets.with_columns(_lowered(targets["target"], ignore_case).alias("key"))
        flat = (
            pl.DataFrame({"group": groups}).with_row_index("row")
            .explode("group", keep_nulls=False, empty_as_null=False)
            .with_row_index("order")
            .filter(pl.col("group").is_not_null())
        )
        flat = flat.with_columns(_lowered(flat["group"], ignore_case).alias("key"))
        keys = targets.select("row", "key").unique().with_columns(pl.lit(True).alias("in"))
        found = flat.join(keys, on=["row", "key"], how="left", maintain_order="left")
        found = found.with_columns(pl.col("in").fill_null(False))
        if match_all:
            texts = targets.group_by("row").agg(pl.col("target").str.join("").alias("text"))
            per_row = found.group_by("row").agg(pl.col("in").all().alias("all"))
            hits = per_row.join(texts, on="row", how="inner").select(
                "row", (pl.col("all") & (pl.col("text") != "")).alias("hit")
            )
        else:
            first = found.filter("in").group_by("row").agg(
                pl.col("group").sort_by("order").first()
            )
            hits = first.select("row", (pl.col("group") != "").alias("hit"))
        return hits

    return score


def _groups_kernel(groups: pl.Expr, prediction: IntoExpr, gold: IntoExpr, score) -> pl.Expr:
    def run(series: Sequence[pl.Series]) -> pl.Series:
        found, predicted, golds = series
        return _finish(predicted.cast(pl.String), golds, score(found, golds))

    inputs = [groups, parse_into_expr(prediction), parse_into_expr(gold)]
    return elementwise(inputs, run, pl.Float64)


@register(
    "inspect_pattern",
    **_scorer("pattern"),
    description="Inspect's pattern(): a regex group of the completion equals a target",
    edge_rules=(
        *_EDGE_RULES,
        "no match -> 0.0; several groups: the first equal to a target decides, and an "
        "empty one scores 0.0; match_all: every group that took part must equal a target "
        "and the targets joined must not be empty",
    ),
)
@documented(**_SECTIONS)
def inspect_pattern(
    prediction: IntoExpr,
    gold: IntoExpr,
    *,
    pattern: str,
    ignore_case: bool = True,
    match_all: bool = False,
) -> pl.Expr:
    """Inspect's ``pattern()`` scorer: ``re.search(pattern, completion)``, then the groups
    against the targets.

    Parameters
    ----------
    {roles}
    pattern
        A Python regular expression (run with Python ``re`` once per distinct completion).
    ignore_case
        ``re.IGNORECASE``, and groups and targets compared ``str.lower()``-ed (default True).
    match_all
        Every group that took part must equal a target (default False: the first that
        does decides).

    {returns}

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"completion": ["Final: 42", "final: 7", "none", None],
    ...                    "target": ["42", "42", "42", "42"]})
    >>> df.with_columns(score=inspect_pattern("completion", "target", pattern=r"final: (\\d+)"))
    shape: (4, 3)
    ┌────────────┬────────┬───────┐
    │ completion ┆ target ┆ score │
    │ ---        ┆ ---    ┆ ---   │
    │ str        ┆ str    ┆ f64   │
    ╞════════════╪════════╪═══════╡
    │ Final: 42  ┆ 42     ┆ 1.0   │
    │ final: 7   ┆ 42     ┆ 0.0   │
    │ none       ┆ 42     ┆ 0.0   │
    │ null       ┆ 42     ┆ null  │
    └────────────┴────────┴───────┘
    """
    groups = pattern_groups(parse_into_expr(prediction), pattern, ignore_case=ignore_case)
    return _groups_kernel(groups, prediction, gold, _group_hits(ignore_case, match_all))


@register(
    "inspect_answer",
    **_scorer("answer"),
    description="Inspect's answer(): the letter, word or line after 'ANSWER:' equals a "
    "target (case-insensitive)",
    edge_rules=(*_EDGE_RULES, "no 'ANSWER:' answer found -> 0.0"),
    divergences=("Inspect has no default pattern; evalframe's is 'letter'",),
)
@documented(**_SECTIONS)
def inspect_answer(
    prediction: IntoExpr,
    gold: IntoExpr,
    *,
    pattern: AnswerType = "letter",
) -> pl.Expr:
    """Inspect's ``answer()`` scorer: the answer after ``ANSWER:`` against the targets.

    Parameters
    ----------
    {roles}
    pattern
        ``"letter"`` (default here; Inspect requires it), ``"word"`` or ``"line"``: see
        :mod:`evalframe.extract.inspect_answer` (the extractors ``inspect_answer_letter``,
        ``inspect_answer_word``, ``inspect_answer_line`` give the answer itself).

    {returns}

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"completion": ["ANSWER: c", "ANSWER: C, no: ANSWER: D", None],
    ...                    "target": ["C", "C", "C"]})
    >>> df.with_columns(score=inspect_answer("completion", "target"))
    shape: (3, 3)
    ┌──────────────────────────┬────────┬───────┐
    │ completion               ┆ target ┆ score │
    │ ---                      ┆ ---    ┆ ---   │
    │ str                      ┆ str    ┆ f64   │
    ╞══════════════════════════╪════════╪═══════╡
    │ ANSWER: c                ┆ C      ┆ 1.0   │
    │ ANSWER: C, no: ANSWER: D ┆ C      ┆ 0.0   │
    │ null                     ┆ C      ┆ null  │
    └──────────────────────────┴────────┴───────┘
    """
    answer = answer_text(parse_into_expr(prediction), pattern)
    groups = (
        pl.when(answer.is_null()).then(pl.lit(None, dtype=pl.List(pl.String)))
        .otherwise(pl.concat_list([answer]))
    )
    return _groups_kernel(groups, prediction, gold, _group_hits(True, False))
