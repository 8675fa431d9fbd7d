"""Style features of two answers, for style-controlled ratings (Chatbot Arena's style control).

Chatbot Arena's style control (FastChat ``fastchat/serve/monitor/add_markdown_info.py`` and
``rating_systems.py``, ``preprocess_for_style``; the 2024 "Does style matter?" post) adds, for
every battle, a few features of the two answers to the Bradley-Terry regression, so that a
model's rating no longer pays for being long or heavily formatted. The features, counted in
each answer with Polars string expressions (regular-expression counts, no per-row Python):

``length``
    The answer's length. The references count tokens of a tokenizer (tiktoken's
    ``gpt-3.5-turbo`` in FastChat, ``gpt-4o`` in Arena-Hard-Auto), which evalframe does not
    ship: ``length_unit="words"`` (default) counts runs of non-whitespace characters
    (``\\S+``), ``"characters"`` counts Unicode characters. Precomputed token counts give the
    references' numbers exactly: ``style_columns={"length": ("tokens_a", "tokens_b")}``.
``markdown_headers``
    Lines starting with 1 to 6 ``#`` and a whitespace character (``^#{k}\\s``, h1 to h6,
    each counted once).
``markdown_lists``
    Ordered and unordered list items: a line starting, after optional whitespace, with
    digits and a dot, or with ``-``, ``*`` or ``+``, then a whitespace character.
``bold``
    ``**text**`` and ``__text__`` spans on one line (counted separately and added, as
    FastChat does).

The three markdown counts are taken after fenced code blocks (three backticks, anything but a
backtick, three backticks) are emptied, so a code comment ``# x`` is not a header; the length
is of the whole answer. FastChat empties a block by deleting every occurrence of its content
anywhere in the answer (``str.replace``); evalframe empties only the fenced block itself,
which differs only when a block's exact text also appears outside it.

A battle's feature is a relative difference of the two answers' counts ``a`` and ``b``, then
standardised over the battles (mean 0, standard deviation 1, the population's, as
``numpy.std``):

* ``normalization="chatbot_arena"`` (default, FastChat ``preprocess_for_style`` with its
  defaults ``add_one=True`` and every ratio applied): ``(a - b) / (a + b + 1)`` for every
  feature;
* ``normalization="arena_hard"`` (Arena-Hard-Auto v2 ``show_result.py``): length
  ``(a - b) / (a + b)`` (0 when both are 0); each markdown count first as a density
  ``d = count / (length + 1)``, then ``(d_a - d_b) / (d_a + d_b + 1)``.

The standardisation changes the unit of a style coefficient (per standard deviation of the
feature), never the ratings. A feature that does not vary over the battles cannot be
estimated and is an error naming it.

>>> import polars as pl
>>> answers = pl.DataFrame({
...     "answer_a": ["# Title\\n- one\\n- two **bold**", "short", None],
...     "answer_b": ["plain text here", "```\\n# not a header\\n```\\n1. item", "x"],
... })
>>> answers.select(style_counts(["length", "markdown_headers"]))
shape: (3, 4)
┌──────────┬──────────┬────────────────────┬────────────────────┐
│ length_a ┆ length_b ┆ markdown_headers_a ┆ markdown_headers_b │
│ ---      ┆ ---      ┆ ---                ┆ ---                │
│ f64      ┆ f64      ┆ f64                ┆ f64                │
╞══════════╪══════════╪════════════════════╪════════════════════╡
│ 7.0      ┆ 3.0      ┆ 1.0                ┆ 0.0                │
│ 1.0      ┆ 8.0      ┆ 0.0                ┆ 0.0                │
│ null     ┆ 1.0      ┆ null               ┆ 0.0                │
└──────────┴──────────┴────────────────────┴────────────────────┘
>>> answers.select(style_counts(["markdown_lists", "bold"])).rows()
[(2.0, 0.0, 1.0, 0.0), (0.0, 1.0, 0.0, 0.0), (None, 0.0, None, 0.0)]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl

from evalframe.errors import EvalframeError

__all__ = [
    "LENGTH_UNITS",
    "STYLE_FEATURES",
    "STYLE_NORMALIZATIONS",
    "StyleSpec",
    "check_style",
    "style_counts",
    "style_differences",
]

#: The style features evalframe counts from the answers' text.
STYLE_FEATURES = ("length", "markdown_headers", "markdown_lists", "bold")
#: Units of the ``length`` feature counted from text.
LENGTH_UNITS = ("words", "characters")
#: How two answers' counts become one battle's feature (before standardisation).
STYLE_NORMALIZATIONS = ("chatbot_arena", "arena_hard")

#: A fenced code block, emptied before the markdown counts (its fences are kept).
_CODE_BLOCK = r"```[^`]*```"
#: The patterns whose counts are added up, per markdown feature (FastChat's, one per kind).
_PATTERNS = {
    "markdown_headers": tuple(rf"(?m)^#{{{k}}}\s" for k in range(1, 7)),
    "markdown_lists": (r"(?m)^\s*\d+\.\s", r"(?m)^\s*[-*+]\s"),
    "bold": (r"\*\*[^*\n]+\*\*", r"__[^_\n]+__"),
}


@dataclass(frozen=True)
class StyleSpec:
    """What style control was asked for, checked: the features, in order, and how each is
    read (a pair of precomputed columns, or counted from the answer columns)."""

    features: tuple[str, ...]
    columns: Mapping[str, tuple[str, str]]  # precomputed (column a, column b) per feature
    answers: tuple[str, str]
    length_unit: str
    normalization: str

    def counted(self) -> list[str]:
        """The features whose counts are taken from the text (length too, for the densities
        of ``arena_hard``)."""
        needed = list(self.features)
        if self.normalization == "arena_hard" and "length" not in needed and any(
            name in _PATTERNS for name in needed
        ):
            needed.append("length")
        return [name for name in needed if name not in self.columns]

    def describe(self) -> str:
        """The signature's text: features (a precomputed one with its columns), unit, scheme."""
        names = [
            f"{name}={'/'.join(self.columns[name])}" if name in self.columns else name
            for name in self.features
        ]
        return f"{'+'.join(names)};length={self.length_unit};norm={self.normalization}"


def check_style(
    style: bool | str | Sequence[str] | None,
    *,
    style_columns: Mapping[str, Sequence[str]] | None = None,
    answers: tuple[str, str] = ("answer_a", "answer_b"),
    length_unit: str = "words",
    normalization: str = "chatbot_arena",
) -> StyleSpec | None:
    """The style control asked for, checked (None: none).

    ``style`` is True (the four :data:`STYLE_FEATURES`), a feature name or a list of them;
    a name that is not one of the four must be given as a pair of precomputed columns in
    ``style_columns`` (``{"code_blocks": ("code_a", "code_b")}``).

    >>> check_style(["length", "bold"]).features
    ('length', 'bold')
    >>> check_style("italics")
    Traceback (most recent call last):
    ...
    evalframe.errors.EvalframeError: style feature 'italics' is not one of length, \
markdown_headers, markdown_lists, bold (give a custom feature's two columns in style_columns)
    """
    if style is None or style is False:
        if style_columns:
            raise EvalframeError(
                "style_columns is given but style is not: name the features to control for, "
                f"e.g. style={sorted(style_columns)}"
            )
        return None
    if style is True:
        features: tuple[str, ...] = STYLE_FEATURES
    elif isinstance(style, str):
        features = (style,)
    elif isinstance(style, Sequence) and all(isinstance(name, str) for name in style):
        features = tuple(style)
    else:
        raise EvalframeError(
            f"style={style!r}: expected True, a feature name or a list of them "
            f"({', '.join(STYLE_FEATURES)})"
        )
    if not features:
        raise EvalframeError("style=[]: name at least one feature, or pass style=None")
    repeated = sorted({name for name in features if features.count(name) > 1})
    if repeated:
        raise EvalframeError(f"style names the feature(s) {repeated} more than once")
    columns = _columns(style_columns or {})
    for name in features:
        if name not in STYLE_FEATURES and name not in columns:
            raise EvalframeError(
                f"style feature {name!r} is not one of {', '.join(STYLE_FEATURES)} (give a "
                "custom feature's two columns in style_columns)"
            )
    unused = sorted(set(columns) - set(features))
    if unused:
        raise EvalframeError(
            f"style_columns gives {unused}, which style does not name; style: {list(features)}"
        )
    if length_unit not in LENGTH_UNITS:
        raise EvalframeError(
            f"length_unit={length_unit!r}: expected one of {', '.join(LENGTH_UNITS)} (or "
            "precomputed token counts in style_columns={'length': (column_a, column_b)})"
        )
    if normalization not in STYLE_NORMALIZATIONS:
        raise EvalframeError(
            f"style_normalization={normalization!r}: expected one of "
            f"{', '.join(STYLE_NORMALIZATIONS)}"
        )
    if (
        not isinstance(answers, tuple | list) or len(answers) != 2
        or not all(isinstance(name, str) for name in answers)
    ):
        raise EvalframeError(f"answers={answers!r}: expected two column names")
    return StyleSpec(features, columns, (answers[0], answers[1]), length_unit, normalization)


def _columns(style_columns: Mapping[str, Sequence[str]]) -> dict[str, tuple[str, str]]:
    if not isinstance(style_columns, Mapping):
        raise EvalframeError(
            f"style_columns={style_columns!r}: expected a mapping of feature names to "
            "(column_a, column_b) pairs"
        )
    columns = {}
    for name, pair in style_columns.items():
        if (
            not isinstance(name, str) or isinstance(pair, str)
            or not isinstance(pair, Sequence) or len(pair) != 2
            or not all(isinstance(column, str) for column in pair)
        ):
            raise EvalframeError(
                f"style_columns[{name!r}] = {pair!r}: expected a pair of column names "
                "(column_a, column_b)"
            )
        columns[name] = (pair[0], pair[1])
    return columns


def style_counts(
    features: Sequence[str],
    *,
    answers: tuple[str, str] = ("answer_a", "answer_b"),
    length_unit: str = "words",
) -> list[pl.Expr]:
    """Expressions counting each feature in both answers: ``{feature}_a``, ``{feature}_b``.

    Every count is Float64; a null answer gives a null count. ``features`` are among
    :data:`STYLE_FEATURES`.
    """
    exprs = []
    for name in features:
        if name not in STYLE_FEATURES:
            raise EvalframeError(f"no count for style feature {name!r}; known: {STYLE_FEATURES}")
        for side, column in zip(("a", "b"), answers, strict=True):
            exprs.append(_count(name, pl.col(column), length_unit).alias(f"{name}_{side}"))
    return exprs


def _count(name: str, text: pl.Expr, length_unit: str) -> pl.Expr:
    if name == "length":
        if length_unit == "characters":
            return text.str.len_chars().cast(pl.Float64)
        return text.str.count_matches(r"\S+").cast(pl.Float64)
    body = text.str.replace_all(_CODE_BLOCK, "``````")
    total = pl.sum_horizontal(body.str.count_matches(pattern) for pattern in _PATTERNS[name])
    # sum_horizontal reads a null as 0: keep a null answer's count null
    return pl.when(text.is_not_null()).then(total.cast(pl.Float64))


def style_differences(
    counts: pl.DataFrame, features: Sequence[str], normalization: str
) -> pl.DataFrame:
    """Each battle's relative difference per feature (before standardisation), from the
    counts ``{feature}_a`` / ``{feature}_b`` (``length_a`` / ``length_b`` too for
    ``arena_hard``'s markdown densities).

    >>> counts = pl.DataFrame({"length_a": [10.0, 0.0], "length_b": [30.0, 0.0],
    ...                        "bold_a": [2.0, 0.0], "bold_b": [0.0, 1.0]})
    >>> style_differences(counts, ["length", "bold"], "chatbot_arena")
    shape: (2, 2)
    ┌───────────┬──────────┐
    │ length    ┆ bold     │
    │ ---       ┆ ---      │
    │ f64       ┆ f64      │
    ╞═══════════╪══════════╡
    │ -0.487805 ┆ 0.666667 │
    │ 0.0       ┆ -0.5     │
    └───────────┴──────────┘
    """
    exprs = []
    for name in features:
        a, b = pl.col(f"{name}_a"), pl.col(f"{name}_b")
        if normalization == "chatbot_arena":
            expr = (a - b) / (a + b + 1)
        elif name == "length" or name not in _PATTERNS:  # arena_hard: the length's ratio
            expr = pl.when(a + b == 0).then(0.0).otherwise((a - b) / (a + b))
        else:  # arena_hard: markdown as a density per unit of length
            density_a = a / (pl.col("length_a") + 1)
            density_b = b / (pl.col("length_b") + 1)
            expr = (density_a - density_b) / (density_a + density_b + 1)
        exprs.append(expr.alias(name))
    return counts.select(exprs)


def standardized(differences: pl.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The features standardised over the battles (population standard deviation): the
    matrix (battles x features), the means and the standard deviations."""
    matrix = differences.to_numpy().astype(np.float64, copy=False)
    if matrix.ndim == 1:
        matrix = matrix[:, None]
    mean = matrix.mean(axis=0)
    std = matrix.std(axis=0)
    flat = [
        name for name, centre, spread in zip(differences.columns, mean, std, strict=True)
        if not spread > 1e-12 * max(1.0, abs(centre))
    ]
    if flat:
        raise EvalframeError(
            f"style feature(s) {flat} do not vary over the battles (every battle's relative "
            "difference is the same), so their effect cannot be estimated; leave them out of "
            "style"
        )
    return (matrix - mean) / std, mean, std
