r"""lighteval's ``math_normalizer``: a MATH answer in the last ``\boxed{}``, in canonical LaTeX.

lighteval 0.13.0 ``metrics/normalizations.py`` ``math_normalizer`` (the answer
normalisation of Hendrycks et al.'s MATH ``math_equivalence.py``), step by step:

1. the last ``\boxed`` (else the last ``\fbox``) up to the ``}`` that balances its
   braces; its content when it is ``\boxed{...}`` (or all after ``"\boxed "``), else
   ``""`` -- so a text without a box, or with an ``\fbox``, normalises to ``""``;
2. line breaks, ``\!``, ``\left``, ``\right``, ``^{\circ}``, ``^\circ`` and ``\$``
   removed, ``\\`` -> ``\``, ``tfrac``/``dfrac`` -> ``frac``;
3. everything from the first ``"\text{ "`` on removed (units), then trailing whitespace;
4. ``\%`` removed; ``" ."`` -> ``" 0."``, ``"{."`` -> ``"{0."``, a leading ``.`` gets a
   ``0``;
5. ``k = v`` with a left side of at most two characters -> ``v``;
6. ``\sqrt3`` -> ``\sqrt{3}``; spaces removed; ``\frac12`` -> ``\frac{1}{2}``,
   ``\frac1{2}`` -> ``\frac{1}{2}`` (a ``\frac`` followed by a single character leaves
   the whole text as it was before this step);
7. ``0.5`` -> ``\frac{1}{2}``; ``a/b`` of two integers written canonically -> ``\frac{a}{b}``.

The string steps are polars expressions over the column; the box and ``\frac`` steps
(Python string semantics) run once per distinct string of the batch. Where lighteval
raises (``IndexError``: a text that ends in ``\sqrt`` or ``\frac`` after step 5, or has
``\sqrt\sqrt`` / ``\frac\frac``), the result is null (a missing answer).

>>> import polars as pl
>>> df = pl.DataFrame({"t": ["so \\boxed{\\dfrac12}", "\\boxed{ .5 }", "\\boxed{x = 2/3}",
...                          "\\boxed{10\\text{ cm}}", "no box", None]})
>>> df.select(math_normalize(pl.col("t")))["t"].to_list()
['\\frac{1}{2}', '\\frac{1}{2}', '\\frac{2}{3}', '10', '', None]
"""

from __future__ import annotations

import polars as pl

from evalframe.normalize._python_text import whitespace_characters
from evalframe.normalize.table import NORMALIZERS

__all__ = ["math_normalize"]

_BOXED, _FBOX = "\\boxed", "\\fbox"
_FAILED = "\x00failed"  # a Python step raised where lighteval raises


def _last_box(text: str) -> str:
    """Steps 1: the content of the last box, or ``""`` (lighteval's two helpers)."""
    start = text.rfind(_BOXED)
    if start < 0:
        start = text.rfind(_FBOX)
        if start < 0:
            return ""
    depth, end = 0, None
    for index in range(start, len(text)):
        char = text[index]
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                end = index
                break
    if end is None:
        return ""
    box = text[start : end + 1]
    if "\\boxed " in box:
        return box[len("\\boxed ") :] if box.startswith("\\boxed ") else ""
    if box.startswith("\\boxed{") and box.endswith("}"):
        return box[len("\\boxed{") : -1]
    return ""


def _fix_fracs(text: str) -> str:
    r"""Step 6: ``\frac`` arguments given as single characters get braces."""
    pieces = text.split("\\frac")
    out = [pieces[0]]
    for piece in pieces[1:]:
        out.append("\\frac")
        if not piece:
            return _FAILED  # lighteval: IndexError on piece[0]
        if piece[0] == "{":
            out.append(piece)
            continue
        if len(piece) < 2:
            return text
        first, second, rest = piece[0], piece[1], piece[2:]
        if second != "{":
            out.append("{" + first + "}{" + second + "}" + rest)
        else:
            out.append("{" + first + "}" + second + rest)
    return "".join(out)


def _distinct(series: pl.Series, function) -> pl.Series:
    """``function`` once per distinct non-null string, mapped back to the rows."""
    distinct = series.drop_nulls().unique()
    if distinct.is_empty():
        return pl.Series(series.name, [None] * len(series), dtype=pl.String)
    done = pl.Series([function(text) for text in distinct.to_list()], dtype=pl.String)
    return series.replace_strict(distinct, done, default=None, return_dtype=pl.String)


def _replace(text: pl.Expr, pairs: list[tuple[str, str]]) -> pl.Expr:
    for old, new in pairs:
        text = text.str.replace_all(old, new, literal=True)
    return text


@NORMALIZERS.decorator(
    name="math",
    reference="lighteval math_normalizer",
    meaning="the content of the last \\boxed{} ('' without one) in canonical LaTeX: units, "
    "\\left/\\right, \\% and spaces removed, \\frac12 -> \\frac{1}{2}, "
    "0.5 and a/b -> \\frac",
)
def math_normalize(text: pl.Expr) -> pl.Expr:
    r"""lighteval's ``math_normalizer`` over a ``String`` column (null stays null).

    Parameters
    ----------
    text
        A ``String`` expression.

    Returns
    -------
    pl.Expr
        ``String``: the normalised answer, ``""`` where the text has no ``\boxed{}``,
        null where lighteval raises (see the module docstring).

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"t": ["\\boxed{\\left( 3, \\sqrt2 \\right)}", "\\fbox{4}", ""]})
    >>> df.select(math_normalize(pl.col("t")))["t"].to_list()
    ['(3,\\sqrt{2})', '', '']
    """
    boxed = text.cast(pl.String).map_batches(
        lambda s: _distinct(s, _last_box), return_dtype=pl.String, is_elementwise=True
    )
    value = _replace(
        boxed,
        [
            ("\n", ""), ("\\!", ""), ("\\\\", "\\"), ("tfrac", "frac"), ("dfrac", "frac"),
            ("\\left", ""), ("\\right", ""), ("^{\\circ}", ""), ("^\\circ", ""), ("\\$", ""),
        ],
    )
    units = "\\text{ "
    value = (
        pl.when(value.str.contains(units, literal=True))
        .then(value.str.split(units).list.first().str.strip_chars_end(whitespace_characters()))
        .otherwise(value)
    )
    value = _replace(value, [("\\%", ""), (" .", " 0."), ("{.", "{0.")])
    value = pl.when(value.str.starts_with(".")).then(pl.lit("0") + value).otherwise(value)
    parts = value.str.split("=")
    value = (
        pl.when((parts.list.len() == 2) & (parts.list.first().str.len_chars() <= 2))
        .then(parts.list.last())
        .otherwise(value)
    )
    sqrt_fails = value.str.ends_with("\\sqrt") | value.str.contains("\\sqrt\\sqrt", literal=True)
    value = value.str.replace_all(r"\\sqrt([^{])", r"\sqrt{${1}}")
    value = value.str.replace_all(" ", "", literal=True)
    value = value.map_batches(
        lambda s: _distinct(s, _fix_fracs), return_dtype=pl.String, is_elementwise=True
    )
    value = pl.when(value == "0.5").then(pl.lit("\\frac{1}{2}")).otherwise(value)
    integer = r"(?:0|-?[1-9][0-9]*)"
    value = value.str.replace(rf"^({integer})/({integer})$", r"\frac{${1}}{${2}}")
    failed = sqrt_fails | (value == _FAILED)
    result = pl.when(failed).then(pl.lit(None, dtype=pl.String)).otherwise(value)
    name = text.meta.output_name(raise_if_undetermined=False)
    return result.alias(name) if name else result
