"""lighteval's answer normalisers (HELM/QuAC quasi-exact match, GSM8K) as expressions.

These reproduce ``lighteval.metrics.normalizations`` exactly, so the lighteval
match metrics in :mod:`evalframe.metrics.lighteval` agree with lighteval bit for bit:

- :func:`helm_normalize` is ``helm_normalizer`` (the normaliser behind lighteval's
  ``quasi_exact_match``, ``prefix_quasi_exact_match`` and ``f1_score_quasi``).
- :func:`gsm8k_normalize` is ``gsm8k_normalizer`` (``quasi_exact_match_gsm8k``,
  ``maj_at_8_gsm8k``): the number after ``#### `` or ``"[invalid]"``.

lighteval's ``math_normalizer`` is *not* reproduced: it finds the last ``\\boxed{...}``
by counting nested braces, rewrites LaTeX through a sequence of look-behind
regexes and Python string surgery (``\\frac12`` -> ``\\frac{1}{2}``, ``a/b`` checked
by ``int()`` round trips, unit lists), and its behaviour has changed between
lighteval releases; lighteval's own math tasks have since moved to the
math-verify based extractive match. None of that is regex-level, so a faithful
expression port is not possible without a per-row Python fallback.

>>> import polars as pl
>>> pl.select(helm_normalize(pl.lit("The Cat-Food, 1.5 kg!"))).item()
'cat food 15.0 kg'
"""

from __future__ import annotations

import string
from functools import cache

import polars as pl

from evalframe._expr import IntoExpr, parse_into_expr
from evalframe.normalize._python_float import float_text
from evalframe.normalize._python_text import (
    as_class,
    lower,
    replace_words,
    split_join,
)
from evalframe.normalize.table import NORMALIZERS

__all__ = ["gsm8k_normalize", "helm_normalize"]

@cache
def _punctuation_class() -> str:
    """``set(string.punctuation)``: the 32 ASCII punctuation characters."""
    return as_class(string.punctuation)


@NORMALIZERS.decorator(
    name="helm",
    reference="lighteval helm_normalizer",
    meaning="HELM/QuAC: split on spaces and hyphens, lower case, ASCII punctuation and "
    "articles removed, numbers written as Python floats (str(float(token)))",
)
def helm_normalize(expr: IntoExpr) -> pl.Expr:
    """lighteval's ``helm_normalizer`` (HELM/QuAC): the text behind quasi exact match.

    Reproduces ``lighteval.metrics.normalizations.helm_normalizer`` exactly: the
    text is split on single spaces and hyphens; each token is lower-cased
    (Python's ``str.lower``), stripped of ASCII punctuation, turned into
    ``str(float(token))`` when Python can read it as a number, stripped of the
    English articles ``a``/``an``/``the`` (``re.sub(r"\\b(a|an|the)\\b", " ", ...)``)
    and whitespace-collapsed; empty tokens are dropped and the rest joined by one space.

    Edge rules: null -> null; ``""`` -> ``""``; text of only punctuation or articles
    -> ``""``. Numbers are compared as Python floats after punctuation removal, so
    ``"1.5"`` becomes ``"15.0"`` (the dot is punctuation), ``"007"`` -> ``"7.0"``,
    ``"1e3"`` -> ``"1000.0"``, ``"Infinity"`` -> ``"inf"``, and digits of any script
    count (``"١٢"`` -> ``"12.0"``). Lower-casing, ``\\b`` and whitespace follow the running
    Python's Unicode tables.

    Parameters
    ----------
    expr
        A string column name or expression.

    Returns
    -------
    pl.Expr
        The normalised text (``String``).

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"text": ["The Eiffel-Tower!", "An answer: 007", None]})
    >>> df.with_columns(helm_normalize("text").alias("helm"))
    shape: (3, 2)
    ┌───────────────────┬──────────────┐
    │ text              ┆ helm         │
    │ ---               ┆ ---          │
    │ str               ┆ str          │
    ╞═══════════════════╪══════════════╡
    │ The Eiffel-Tower! ┆ eiffel tower │
    │ An answer: 007    ┆ answer 7.0   │
    │ null              ┆ null         │
    └───────────────────┴──────────────┘
    """
    text = lower(parse_into_expr(expr))
    text = text.str.replace_all("-", " ", literal=True)
    text = text.str.replace_all(_punctuation_class(), "")
    # homogeneize_numbers on every space-separated token: str(float(token)) if a number.
    text = text.str.split(" ").list.eval(float_text(pl.element())).list.join(" ")
    text = replace_words(text, ("a", "an", "the"))
    return split_join(text)


@NORMALIZERS.decorator(
    name="gsm8k",
    reference="lighteval gsm8k_normalizer",
    meaning="the first number after '#### ' (GSM8K answers) with its commas removed, or "
    "'[invalid]'",
)
def gsm8k_normalize(expr: IntoExpr) -> pl.Expr:
    """lighteval's ``gsm8k_normalizer``: the answer after ``#### ``, commas removed.

    Reproduces ``lighteval.metrics.normalizations.gsm8k_normalizer`` (from OpenAI's
    grade-school-math): the first match of ``#### (\\-?[0-9\\.\\,]+)`` anywhere in the
    text, with its commas removed; ``"[invalid]"`` when there is none.

    Edge rules: null -> null; ``""`` and text without ``#### <number>`` ->
    ``"[invalid]"``; only ASCII digits count; the first ``####`` answer wins; dots are
    kept as they are (``"#### 1,000.50"`` -> ``"1000.50"``, ``"#### ..."`` -> ``"..."``).

    Parameters
    ----------
    expr
        A string column name or expression.

    Returns
    -------
    pl.Expr
        The extracted answer (``String``).

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"text": ["so #### 1,234", "no answer", None]})
    >>> df.with_columns(gsm8k_normalize("text").alias("answer"))
    shape: (3, 2)
    ┌───────────────┬───────────┐
    │ text          ┆ answer    │
    │ ---           ┆ ---       │
    │ str           ┆ str       │
    ╞═══════════════╪═══════════╡
    │ so #### 1,234 ┆ 1234      │
    │ no answer     ┆ [invalid] │
    │ null          ┆ null      │
    └───────────────┴───────────┘
    """
    text = parse_into_expr(expr)
    found = text.str.extract(r"#### (-?[0-9.,]+)", 1).str.replace_all(",", "", literal=True)
    return pl.when(text.is_null()).then(None).otherwise(found.fill_null("[invalid]"))
