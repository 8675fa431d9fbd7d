"""Single-rule extractors: the last ``\\boxed{}``, GSM8K's ``#### n``, the last number.

- :func:`boxed`: lm-evaluation-harness 0.4.13's ``remove_boxed(last_boxed_only_string(text))``
  (``lm_eval/tasks/minerva_math/utils.py``; ``hendrycks_math/utils.py`` holds the same two
  functions, line for line in behaviour): the content of the last ``\\boxed{...}`` (braces
  balanced), of the ``\\boxed ...`` form, or of a ``\\fbox{...}``.
- :func:`gsm8k_answer`: OpenAI grade-school-math's ``dataset.extract_answer`` (the first
  ``#### <number>``, commas removed, else ``"[invalid]"``), which lighteval copies as
  ``gsm8k_normalizer``.
- :func:`last_number`: the last number, as the last-number branch of Qwen2.5-Math's
  ``evaluation/parser.py`` ``extract_answer``.

Each returns the :data:`evalframe.extract.table.EXTRACTION` struct; all three are in the
extractor table under these names.

>>> import polars as pl
>>> df = pl.DataFrame(
...     {"text": ["so \\\\boxed{\\\\frac{1}{2}}", "#### 1,234", "x = -3.5, y = 7", None]}
... )
>>> df.select(
...     boxed("text").struct.field("extracted").alias("boxed"),
...     gsm8k_answer("text").struct.field("extracted").alias("gsm8k"),
...     last_number("text").struct.field("extracted").alias("last"),
... )
shape: (4, 3)
┌─────────────┬───────────┬──────┐
│ boxed       ┆ gsm8k     ┆ last │
│ ---         ┆ ---       ┆ ---  │
│ str         ┆ str       ┆ str  │
╞═════════════╪═══════════╪══════╡
│ \\frac{1}{2} ┆ [invalid] ┆ 2    │
│ null        ┆ 1234      ┆ 1234 │
│ null        ┆ [invalid] ┆ 7    │
│ null        ┆ null      ┆ null │
└─────────────┴───────────┴──────┘
"""

from __future__ import annotations

import re
from functools import cache

import polars as pl

from evalframe._expr import IntoExpr, parse_into_expr
from evalframe.extract.table import EXTRACTION, EXTRACTORS, extraction

__all__ = ["boxed", "gsm8k_answer", "last_number"]

_BOXED, _FBOX, _BOXED_SPACE = "\\boxed", "\\fbox", "\\boxed "
_BRACES = re.compile(r"[{}]")
_NULL = pl.lit(None, dtype=pl.String)
#: OpenAI grade-school-math's ``ANS_RE`` (``#### (\-?[0-9\.\,]+)``) and ``INVALID_ANS``.
_GSM8K_ANSWER, _GSM8K_INVALID = r"#### (-?[0-9.,]+)", "[invalid]"


def _first_balanced(tail: str) -> str | None:
    """``tail`` up to the ``}`` that brings the brace count back to zero, or None.

    The scan of ``last_boxed_only_string``: ``{`` counts up, ``}`` counts down, and the
    first ``}`` after which the count is zero ends the box (a ``}`` before any ``{``
    makes the count negative, so it never ends one).
    """
    depth = 0
    for match in _BRACES.finditer(tail):
        if match.group() == "{":
            depth += 1
        else:
            depth -= 1
            if depth == 0:
                return tail[: match.end()]
    return None


def _balanced_boxes(tails: pl.Series) -> pl.Series:
    """The box of every tail (``None`` where the braces never balance).

    A box whose braces nest at most three deep is matched by a regex over the whole
    column: after ``\boxed`` (``\fbox``), a ``{`` and the text up to the ``}`` that closes
    it, nested groups balanced (the first ``}`` that brings the count to zero, as the scan
    finds it). The rest (deeper nesting, a tail that does not go on with ``{``, braces that
    never balance) is counted by :func:`_first_balanced`, once per distinct tail.
    """
    fast = tails.str.extract(_FAST_BOX, 1)
    rest = tails.filter(fast.is_null() & tails.is_not_null())
    if rest.is_empty():
        return fast
    distinct = rest.unique()
    found = pl.Series([_first_balanced(tail) for tail in distinct.to_list()], dtype=pl.String)
    slow = tails.replace_strict(distinct, found, default=None, return_dtype=pl.String)
    return fast.fill_null(slow)


_GROUP = r"\{(?:[^{}]|\{(?:[^{}]|\{[^{}]*\})*\})*\}"  # a brace group nested <= 3 deep
_FAST_BOX = rf"^(\\(?:boxed|fbox){_GROUP})"


def _boxed_batch(texts: pl.Series) -> pl.Series:
    """The ``EXTRACTION`` struct of one batch of texts (see :func:`boxed`).

    Only the rows that hold a box are worked on: those with ``\boxed `` by splits, the
    others by their tail from the last box on (see :func:`_balanced_boxes`).
    """
    text = texts.cast(pl.String)
    extracted = pl.Series(texts.name, [None] * len(text), dtype=pl.String)
    rule = pl.when(text.is_null()).then(None).otherwise(pl.lit("none"))
    rules = pl.select(rule.alias(texts.name)).to_series() if len(text) else extracted.clone()
    flags = pl.DataFrame({"text": text}).select(
        pl.col("text").str.contains(r"\\boxed|\\fbox").fill_null(False).alias("box"),
        pl.col("text").str.contains(_BOXED_SPACE, literal=True).fill_null(False).alias("space"),
        pl.col("text").str.contains(_BOXED, literal=True).fill_null(False).alias("boxed"),
    )
    space = flags["space"]
    if space.any():
        rows = space.arg_true()
        after = text.filter(space).str.split(_BOXED_SPACE).list.last()
        extracted = extracted.scatter(rows, after.str.split("$").list.first())
        rules = rules.scatter(rows, "boxed_space")
    tail_rows = flags["box"] & ~space
    if tail_rows.any():
        rows = tail_rows.arg_true()
        subset = text.filter(tail_rows)
        has_boxed = flags["boxed"].filter(tail_rows)
        tails = pl.select(
            pl.when(pl.lit(has_boxed))
            .then(pl.lit(_BOXED) + pl.lit(subset).str.split(_BOXED).list.last())
            .otherwise(pl.lit(_FBOX) + pl.lit(subset).str.split(_FBOX).list.last())
        ).to_series()
        box = _balanced_boxes(tails)
        is_boxed = box.str.starts_with(_BOXED + "{").fill_null(False)
        is_fbox = box.str.starts_with(_FBOX + "{").fill_null(False)
        content = (
            pl.select(
                pl.when(pl.lit(is_boxed)).then(pl.lit(box).str.strip_prefix(_BOXED + "{"))
                .when(pl.lit(is_fbox)).then(pl.lit(box).str.strip_prefix(_FBOX + "{"))
                .otherwise(None)
                .str.strip_suffix("}")
            ).to_series()
        )
        found = pl.select(
            pl.when(pl.lit(is_boxed)).then(pl.lit("boxed"))
            .when(pl.lit(is_fbox)).then(pl.lit("fbox"))
            .otherwise(pl.lit("none"))
        ).to_series()
        extracted = extracted.scatter(rows, content)
        rules = rules.scatter(rows, found)
    return pl.struct(
        extracted.alias("extracted"), rules.alias("rule"), eager=True
    ).alias(texts.name)


@EXTRACTORS.decorator(
    name="boxed",
    reference="lm-eval 0.4.13: tasks/minerva_math/utils.py remove_boxed(last_boxed_only_string(x)) "
    "(hendrycks_math/utils.py: the same)",
    meaning="the content of the last \\boxed{...} (balanced braces), of '\\boxed ...' up to '$', "
    "or of \\fbox{...}; null when there is none",
)
def boxed(text: IntoExpr) -> pl.Expr:
    """The content of the last ``\\boxed{...}``, as lm-evaluation-harness's MATH tasks take it.

    Reproduces ``remove_boxed(last_boxed_only_string(text))`` of lm-evaluation-harness
    0.4.13 (``lm_eval/tasks/minerva_math/utils.py``; ``hendrycks_math/utils.py`` has the same
    functions), in this order:

    1. if the text contains ``"\\boxed "`` (with a space) anywhere: the text after the
       last ``"\\boxed "`` up to the first ``$`` (rule ``"boxed_space"``), whatever other
       boxes there are;
    2. else from the last ``\\boxed`` (or, when there is none, the last ``\\fbox``): the
       text up to the ``}`` that balances the braces opened since, with ``\\boxed{`` and
       the final ``}`` removed (rule ``"boxed"``);
    3. nothing found (no box, or braces that never balance): null, rule ``"none"``.

    Where ``remove_boxed`` raises (its ``assert`` that the box starts with ``\\boxed{``):
    a ``\\fbox{...}`` box gives its content without ``\\fbox{`` and ``}`` (rule ``"fbox"``);
    any other box that does not start with ``\\boxed{`` (``\\boxed\\n{5}``, ``\\boxedx{5}``,
    ``\\boxed}{{5}}``) gives null, rule ``"none"``.

    Parameters
    ----------
    text
        A ``String`` column name or expression.

    Returns
    -------
    pl.Expr
        The :data:`~evalframe.extract.table.EXTRACTION` struct; null ``extracted`` and
        ``rule`` where the text is null.

    Notes
    -----
    One batched kernel per batch, over the rows that hold a box only. The ``\\boxed ``
    form is a pair of splits; the others' text from the last box on goes through one
    regex that matches a box whose braces nest at most three deep, and only what it leaves
    (deeper nesting, braces that never balance, ``\\boxed`` not followed by ``{``) is
    counted in Python, once per distinct string.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"text": ["\\\\boxed{1} then \\\\boxed{x^{2}}", "$\\\\boxed 5$ ok",
    ...                             "\\\\fbox{7}", "\\\\boxed{3", "none", None]})
    >>> df.select(boxed("text").struct.unnest())
    shape: (6, 2)
    ┌───────────┬─────────────┐
    │ extracted ┆ rule        │
    │ ---       ┆ ---         │
    │ str       ┆ str         │
    ╞═══════════╪═════════════╡
    │ x^{2}     ┆ boxed       │
    │ 5         ┆ boxed_space │
    │ 7         ┆ fbox        │
    │ null      ┆ none        │
    │ null      ┆ none        │
    │ null      ┆ null        │
    └───────────┴─────────────┘
    """
    return parse_into_expr(text).map_batches(
        _boxed_batch, return_dtype=EXTRACTION, is_elementwise=True
    )


@EXTRACTORS.decorator(
    name="gsm8k_answer",
    reference="openai/grade-school-math dataset.py: extract_answer (= lighteval gsm8k_normalizer)",
    meaning="the first '#### <number>' answer with its commas removed, or '[invalid]'",
)
def gsm8k_answer(text: IntoExpr) -> pl.Expr:
    """GSM8K's ``#### <number>`` answer: OpenAI grade-school-math's ``extract_answer``.

    ``dataset.py``'s ``extract_answer``: ``re.search`` of ``#### (\\-?[0-9\\.\\,]+)``
    (so the *first* ``#### `` followed by a number), its group with commas removed, or
    ``"[invalid]"`` when the text has none (rule ``"none"``; ``"gsm8k_answer"`` when found).
    lighteval's ``gsm8k_normalizer`` is the same function (the normaliser ``gsm8k``,
    :func:`evalframe.normalize.gsm8k_normalize`); lighteval's ``quasi_exact_match_gsm8k``
    strips both texts first, which changes nothing the pattern finds.

    Edge rules: only ASCII digits count (``#### ٣`` is ``"[invalid]"``); exactly one space
    after ``####``; dots are kept (``"#### 1,000.50"`` -> ``"1000.50"``, ``"#### ."`` ->
    ``"."``); a sign is only ``-`` directly before the number; null text -> null.

    Parameters
    ----------
    text
        A ``String`` column name or expression.

    Returns
    -------
    pl.Expr
        The :data:`~evalframe.extract.table.EXTRACTION` struct.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"text": ["#### 1,000 then #### 2", "####5", None]})
    >>> df.select(gsm8k_answer("text").struct.unnest())
    shape: (3, 2)
    ┌───────────┬──────────────┐
    │ extracted ┆ rule         │
    │ ---       ┆ ---          │
    │ str       ┆ str          │
    ╞═══════════╪══════════════╡
    │ 1000      ┆ gsm8k_answer │
    │ [invalid] ┆ none         │
    │ null      ┆ null         │
    └───────────┴──────────────┘
    """
    return parse_into_expr(text).map_batches(
        _gsm8k_batch, return_dtype=EXTRACTION, is_elementwise=True
    )


def _staged(texts: pl.Series, found: pl.Expr, answer: pl.Expr, rule_name: str) -> pl.Series:
    """The ``EXTRACTION`` struct from ``found`` (a match per text, null where none),
    computed once as a column: ``answer`` reads it as ``pl.col("found")``."""
    frame = pl.DataFrame({"text": texts.cast(pl.String)}).with_columns(found.alias("found"))
    text, hit = pl.col("text"), pl.col("found")
    return frame.select(
        extraction(
            pl.when(text.is_null()).then(_NULL).otherwise(answer),
            pl.when(text.is_null()).then(_NULL)
            .when(hit.is_null()).then(pl.lit("none"))
            .otherwise(pl.lit(rule_name)),
        ).alias(texts.name)
    ).to_series()


def _gsm8k_batch(texts: pl.Series) -> pl.Series:
    found = pl.col("text").str.extract(_GSM8K_ANSWER, 1)
    answer = pl.col("found").str.replace_all(",", "", literal=True).fill_null(_GSM8K_INVALID)
    return _staged(texts, found, answer, "gsm8k_answer")


@cache
def _number_pattern() -> str:
    """``-?\\d*\\.?\\d+`` with Python's ``\\d`` (its Unicode tables, not Rust's)."""
    from evalframe.normalize._python_text import all_characters, as_class

    digit = as_class(re.findall(r"\d", all_characters()))
    return f"-?{digit}*\\.?{digit}+"


@EXTRACTORS.decorator(
    name="last_number",
    reference="Qwen2.5-Math evaluation/parser.py: extract_answer, its last-number branch "
    "(before strip_string)",
    meaning="the last match of -?\\d*\\.?\\d+ once commas are removed, or '' when there is none",
)
def last_number(text: IntoExpr) -> pl.Expr:
    """The last number in the text, as Qwen2.5-Math's ``extract_answer`` falls back to it.

    The last-number branch of ``extract_answer`` in Qwen2.5-Math's
    ``evaluation/parser.py`` (``re.findall(r"-?\\d*\\.?\\d+", text.replace(",", ""))[-1]``,
    or ``""`` when there is no number), on the text as that function sees it: first
    ``"ки"`` (a step tag) removed, then every comma. Rule ``"last_number"``; ``"none"``
    with ``""`` when there is no digit. The clean-up ``extract_answer`` applies after any
    branch (``strip_string``: units, ``\\text{}``, trailing ``.0``...) is not part of it.

    Edge rules: commas are removed before the search, so ``"1,000"`` is ``1000`` and
    ``"(1,2)"`` is ``12``; a sign is a ``-`` directly before the digits (``"+5"`` -> ``"5"``,
    ``"--5"`` -> ``"-5"``); ``"3."`` -> ``"3"``; ``".5"`` -> ``".5"``; ``"1.2.3"`` gives
    ``"1.2"`` then ``".3"`` (so ``".3"``); ``1e5`` is two numbers; digits of any script
    Python's ``\\d`` accepts count (``"٣"``), with the running Python's Unicode tables.

    Parameters
    ----------
    text
        A ``String`` column name or expression.

    Returns
    -------
    pl.Expr
        The :data:`~evalframe.extract.table.EXTRACTION` struct.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"text": ["1,000 apples or 2.5", "x = -.5.", "no digits", None]})
    >>> df.select(last_number("text").struct.unnest())
    shape: (4, 2)
    ┌───────────┬─────────────┐
    │ extracted ┆ rule        │
    │ ---       ┆ ---         │
    │ str       ┆ str         │
    ╞═══════════╪═════════════╡
    │ 2.5       ┆ last_number │
    │ -.5       ┆ last_number │
    │           ┆ none        │
    │ null      ┆ null        │
    └───────────┴─────────────┘
    """
    return parse_into_expr(text).map_batches(
        _last_number_batch, return_dtype=EXTRACTION, is_elementwise=True
    )


def _last_number_batch(texts: pl.Series) -> pl.Series:
    cleaned = pl.col("text").str.replace_all("\u043a\u0438", "", literal=True)
    found = cleaned.str.replace_all(",", "", literal=True).str.extract_all(_number_pattern())
    return _staged(texts, found.list.last(), pl.col("found").fill_null(""), "last_number")
