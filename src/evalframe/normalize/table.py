"""The one table of text normalisers: name -> function, the reference it reproduces, meaning.

Every metric that normalises text takes ``normalizer=``: a name from this table, or a
function from ``pl.Expr`` to ``pl.Expr``. The name is what signatures record;
``evalframe normalizers`` and the metric reference list the table.

>>> from evalframe.normalize.table import resolve_normalizer
>>> import polars as pl
>>> name, function = resolve_normalizer("exact_match", "squad")
>>> name, pl.select(function(pl.lit("The Cat!"))).item()
('squad', 'cat')
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import polars as pl

from evalframe.errors import EvalframeError
from evalframe.normalize._python_text import whitespace_characters
from evalframe.normalize.drop import drop_normalize
from evalframe.normalize.helm import gsm8k_normalize, helm_normalize
from evalframe.normalize.math import math_normalize
from evalframe.normalize.squad import squad_normalize

__all__ = ["NORMALIZERS", "Normalizer", "list_normalizers", "resolve_normalizer"]

TextFunction = Callable[[pl.Expr], pl.Expr]


@dataclass(frozen=True)
class Normalizer:
    """A named text normaliser: its function (None: the text as it is), reference, meaning."""

    name: str
    function: TextFunction | None
    reference: str
    meaning: str


def _python_strip(text: pl.Expr) -> pl.Expr:
    """Python's ``str.strip()``: leading and trailing Unicode whitespace removed."""
    return text.str.strip_chars(whitespace_characters())


NORMALIZERS: dict[str, Normalizer] = {
    entry.name: entry
    for entry in [
        Normalizer("none", None, "-", "the text as it is"),
        Normalizer(
            "strip", _python_strip, "Python str.strip() (lighteval strip_strings)",
            "leading and trailing whitespace removed, as Python's str.strip()",
        ),
        Normalizer(
            "squad", squad_normalize, "SQuAD v2.0 official script: normalize_answer",
            "lower case, punctuation and the articles a/an/the removed, whitespace collapsed",
        ),
        Normalizer(
            "helm", helm_normalize, "lighteval helm_normalizer",
            "HELM/QuAC: split on spaces and hyphens, lower case, ASCII punctuation and "
            "articles removed, numbers written as Python floats (str(float(token)))",
        ),
        Normalizer(
            "gsm8k", gsm8k_normalize, "lighteval gsm8k_normalizer",
            "the first number after '#### ' (GSM8K answers) with its commas removed, or "
            "'[invalid]'",
        ),
        Normalizer(
            "math", math_normalize, "lighteval math_normalizer",
            "the content of the last \\boxed{} ('' without one) in canonical LaTeX: units, "
            "\\left/\\right, \\% and spaces removed, \\frac12 -> \\frac{1}{2}, "
            "0.5 and a/b -> \\frac",
        ),
        Normalizer(
            "drop", drop_normalize, "lm-evaluation-harness drop/utils.py: _normalize_answer",
            "DROP's answer normalisation: lower case, punctuation and articles removed, "
            "numbers normalised",
        ),
    ]
}


def resolve_normalizer(
    metric: str, normalizer: str | TextFunction | None
) -> tuple[str, TextFunction | None]:
    """The (name, function) of ``normalizer``: a table name, a function, or None (``"none"``).

    A function that is not in the table is named by its ``__name__`` (in signatures:
    ``custom:<name>``). An unknown name is an :class:`evalframe.EvalframeError` that
    lists the table.
    """
    if normalizer is None:
        return "none", None
    if isinstance(normalizer, str):
        entry = NORMALIZERS.get(normalizer)
        if entry is None:
            raise EvalframeError(
                f"metric {metric!r}: normalizer={normalizer!r} is unknown; expected one of "
                f"{', '.join(repr(name) for name in NORMALIZERS)} or a function from pl.Expr "
                "to pl.Expr (see 'evalframe normalizers')"
            )
        return entry.name, entry.function
    if callable(normalizer):
        for entry in NORMALIZERS.values():
            if entry.function is normalizer:
                return entry.name, entry.function
        return f"custom:{getattr(normalizer, '__name__', 'function')}", normalizer
    raise EvalframeError(
        f"metric {metric!r}: normalizer={normalizer!r} is invalid; expected a name "
        f"({', '.join(repr(name) for name in NORMALIZERS)}) or a function"
    )


def list_normalizers() -> pl.DataFrame:
    """The normaliser table as a DataFrame.

    >>> list_normalizers()["name"].to_list()[:3]
    ['none', 'strip', 'squad']
    """
    return pl.DataFrame(
        [
            {"name": entry.name, "reference": entry.reference, "meaning": entry.meaning}
            for entry in NORMALIZERS.values()
        ],
        schema={"name": pl.String, "reference": pl.String, "meaning": pl.String},
    )
