r"""lm-evaluation-harness's response filters, on one response each.

lm-eval 0.4.13 post-processes every generated response with the filters of a task's
``filter_list``. This module reproduces the filters that work on one response at a time;
:mod:`evalframe.extract.lm_eval_pipelines` adds the ones that choose among several
(``take_first``, ``majority_vote``) and the shipped chains.

- :func:`regex` is ``RegexFilter(regex_pattern, group_select, fallback)``
  (``lm_eval/filters/extraction.py``): every non-overlapping match of the pattern
  (``re.findall``); the ``group_select``-th of them (negative counts from the end); for a
  pattern with one group, that group (``""`` when it took no part in the match), with
  several groups, the first non-empty one, with none, the whole match; then
  ``str.strip()``. No match: ``fallback`` (``"[invalid]"``) as it is; a match whose groups
  are all empty: ``fallback.strip()``. A null response is read as ``""``, as lm-eval reads
  anything that is not a string. A ``group_select`` beyond the matches found is an
  :class:`~evalframe.EvalframeError` (lm-eval raises ``IndexError``). Rule: ``"regex"``,
  or ``"none"`` where the fallback is the answer.
- :func:`lowercase`, :func:`uppercase`: ``LowercaseFilter``, ``UppercaseFilter``
  (``lm_eval/filters/transformation.py``): Python's ``str.lower()`` / ``str.upper()``.
- :func:`remove_whitespace`: ``WhitespaceFilter`` (``extraction.py``): ``str.strip()``.
- :func:`map_values`: ``MapFilter(mapping_dict, default_value)``: ``mapping.get(response,
  default)``, a value written as its ``str`` (as lm-eval's samples file writes it).

The last four leave a null response null (lm-eval fails on one).

How a regex runs. The pattern is parsed by Python's own parser and written again for
Polars's Rust ``regex`` when every part means the same there: literals, ``.``, classes
(``\d``, ``\s``, ``\w`` and their negations become the explicit sets of characters Python
gives them, built once per process from Python's ``re``: Rust's Unicode tables are of a
later Unicode version and its ``\s``, ``\w`` differ from Python's), groups, alternation,
greedy and lazy repetition, ``^`` / ``\A`` / ``\Z`` outside multi-line mode, the ``s`` and
``a`` flags. ``re.findall`` is then ``str.extract_all`` and the groups of the chosen match
are read from it again with the pattern anchored on both ends (``^(?:...)$``): of the
ways the pattern matches that exact text, the one of highest priority is the one the
search took, as there is no assertion to depend on the text around it. Where the first
match is wanted (``group_select=0``), ``str.extract_groups`` reads it directly. Anything
else (lookaround, ``\b``, ``$``, back-references, case-insensitive matching, multi-line
anchors, atomic groups), and patterns that can match the empty string when a later match
is wanted (Python and Rust step over an empty match differently), run Python's ``re``
itself over the distinct responses of a batch. A few shipped patterns have an equivalent
written for Rust by hand (see :mod:`evalframe.extract.lm_eval_pipelines`); the
conformance tests run lm-eval's filters on adversarial responses against all of them.

>>> import polars as pl
>>> from evalframe.extract.lm_eval import regex
>>> flexible = regex(r"(-?[$0-9.,]{2,})|(-?[0-9]+)", group_select=-1)
>>> df = pl.DataFrame({"response": ["I have 3 apples and $1,200.", "none here", "", None]})
>>> df.select(flexible("response").alias("x")).unnest("x")
shape: (4, 2)
┌───────────┬───────┐
│ extracted ┆ rule  │
│ ---       ┆ ---   │
│ str       ┆ str   │
╞═══════════╪═══════╡
│ $1,200.   ┆ regex │
│ [invalid] ┆ none  │
│ [invalid] ┆ none  │
│ [invalid] ┆ null  │
└───────────┴───────┘
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from re import _constants as sre
from re import _parser as sre_parse

import polars as pl

from evalframe._expr import IntoExpr, parse_into_expr
from evalframe.errors import EvalframeError
from evalframe.extract.table import EXTRACTION, EXTRACTORS, Extractor, extraction
from evalframe.normalize._python_text import category_runs, code_point_runs, whitespace_characters
from evalframe.normalize._python_text import lower as python_lower
from evalframe.normalize._python_text import upper as python_upper

__all__ = [
    "lowercase", "map_values", "python_whitespace", "regex", "remove_whitespace", "uppercase",
]  # fmt: skip

FALLBACK = "[invalid]"
_REFERENCE = "lm-eval 0.4.13 lm_eval/filters"
_NULL = pl.lit(None, dtype=pl.String)


# ---------------------------------------------------------------- Python's character sets


@cache
def python_whitespace() -> str:
    """The characters Python's ``str.strip()`` removes (``str.isspace()``), in order.

    They include ``"\\x1c"``-``"\\x1f"``, which Rust's ``char::is_whitespace`` does not.

    >>> python_whitespace()[:6] == "\\t\\n\\x0b\\x0c\\r\\x1c"
    True
    """
    return whitespace_characters()


@cache
def _category(escape: str, ascii_only: bool) -> tuple[tuple[int, int], ...]:
    """The code points Python's ``re`` matches with ``escape`` (``\\d``, ``\\s``, ``\\w``)."""
    if not ascii_only:
        return tuple((lo, hi) for lo, hi in category_runs(escape))
    ascii_characters = "".join(map(chr, range(128)))
    return tuple(code_point_runs(map(ord, re.findall(escape, ascii_characters, re.ASCII))))


_CATEGORIES = {
    sre.CATEGORY_DIGIT: (r"\d", False),
    sre.CATEGORY_NOT_DIGIT: (r"\d", True),
    sre.CATEGORY_SPACE: (r"\s", False),
    sre.CATEGORY_NOT_SPACE: (r"\s", True),
    sre.CATEGORY_WORD: (r"\w", False),
    sre.CATEGORY_NOT_WORD: (r"\w", True),
}


def _complement(runs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out, start = [], 0
    for low, high in runs:
        if low > start:
            out.append((start, low - 1))
        start = max(start, high + 1)
    if start <= 0x10FFFF:
        out.append((start, 0x10FFFF))
    return out


def _union(runs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for low, high in sorted(runs):
        if merged and low <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], high))
        else:
            merged.append((low, high))
    return merged


def _without_surrogates(runs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out = []
    for low, high in runs:
        if low < 0xD800:
            out.append((low, min(high, 0xD7FF)))
        if high > 0xDFFF:
            out.append((max(low, 0xE000), high))
    return out


# ---------------------------------------------------------------- Python pattern -> Rust pattern


class _Untranslatable(Exception):
    """The pattern has a part that does not mean the same in Rust ``regex``."""


def _char(code: int) -> str:
    character = chr(code)
    if character.isascii() and character.isalnum():
        return character
    if 0xD800 <= code <= 0xDFFF:
        raise _Untranslatable("a surrogate")
    return f"\\x{{{code:X}}}"


def _class(runs: list[tuple[int, int]]) -> str:
    runs = _without_surrogates(_union(runs))
    if not runs:
        raise _Untranslatable("an empty class")
    body = "".join(
        _char(low) if low == high else f"{_char(low)}-{_char(high)}" for low, high in runs
    )
    return f"[{body}]"


def _set_runs(items: list, ascii_only: bool) -> list[tuple[int, int]]:
    negate, runs = False, []
    for op, value in items:
        if op is sre.NEGATE:
            negate = True
        elif op is sre.LITERAL:
            runs.append((value, value))
        elif op is sre.RANGE:
            runs.append(value)
        elif op is sre.CATEGORY and value in _CATEGORIES:
            escape, negated = _CATEGORIES[value]
            found = list(_category(escape, ascii_only))
            runs.extend(_complement(found) if negated else found)
        else:
            raise _Untranslatable(f"class item {op}")
    runs = _union(runs)
    return _complement(runs) if negate else runs


@dataclass
class _Parts:
    """What the translation met: anchors (text edges) make a match depend on its place."""

    anchored: bool = False


def _emit(items, flags: int, parts: _Parts) -> str:
    out = []
    for op, value in items:
        if op is sre.LITERAL:
            out.append(_char(value))
        elif op is sre.NOT_LITERAL:
            out.append(_class(_complement([(value, value)])))
        elif op is sre.ANY:
            out.append("(?s:.)" if flags & sre.SRE_FLAG_DOTALL else ".")
        elif op is sre.IN:
            out.append(_class(_set_runs(value, bool(flags & sre.SRE_FLAG_ASCII))))
        elif op is sre.BRANCH:
            out.append("(?:" + "|".join(_emit(branch, flags, parts) for branch in value[1]) + ")")
        elif op is sre.SUBPATTERN:
            group, add, remove, inner = value
            if (add | remove) & (sre.SRE_FLAG_IGNORECASE | sre.SRE_FLAG_LOCALE):
                raise _Untranslatable("a scoped case flag")
            body = _emit(inner, (flags | add) & ~remove, parts)
            out.append(f"(?:{body})" if group is None else f"({body})")
        elif op in (sre.MAX_REPEAT, sre.MIN_REPEAT):
            low, high, inner = value
            bound = f"{{{low},}}" if high is sre.MAXREPEAT else f"{{{low},{high}}}"
            lazy = "?" if op is sre.MIN_REPEAT else ""
            out.append(f"(?:{_emit(inner, flags, parts)}){bound}{lazy}")
        elif op is sre.AT and not flags & sre.SRE_FLAG_MULTILINE and value in _ANCHORS:
            parts.anchored = True
            out.append(_ANCHORS[value])
        else:
            raise _Untranslatable(f"{op} {value!r}")
    return "".join(out)


_ANCHORS = {sre.AT_BEGINNING: r"\A", sre.AT_BEGINNING_STRING: r"\A", sre.AT_END_STRING: r"\z"}


@dataclass(frozen=True)
class _Plan:
    """How one Python pattern runs: its Rust form (or None), groups, empty matches, anchors."""

    pattern: str
    compiled: re.Pattern
    rust: str | None
    groups: int
    can_be_empty: bool
    anchored: bool


@cache
def _plan(pattern: str) -> _Plan:
    try:
        compiled = re.compile(pattern)
    except re.error as error:
        raise EvalframeError(f"regex: {pattern!r} is not a valid Python regex: {error}") from None
    parsed = sre_parse.parse(pattern)
    parts = _Parts()
    rust: str | None
    try:
        if parsed.state.flags & (sre.SRE_FLAG_IGNORECASE | sre.SRE_FLAG_LOCALE):
            raise _Untranslatable("case-insensitive")
        rust = _emit(parsed, parsed.state.flags, parts)
        pl.select(pl.lit("").str.contains(rust))  # Rust's own limits (size, repetition)
    except (_Untranslatable, pl.exceptions.PolarsError):
        rust = None
    return _Plan(
        pattern, compiled, rust, compiled.groups, parsed.getwidth()[0] == 0, parts.anchored
    )


# ---------------------------------------------------------------- regex


@dataclass(frozen=True)
class RustForm:
    """A hand-written Rust equivalent of one pattern's chosen match.

    ``pattern``'s group 1 is, on every text, what lm-eval keeps before ``strip()`` (null:
    no match); ``tuple_like``: an empty group 1 means "every group empty" (the fallback);
    ``strip=False`` where group 1 can hold no white space (``strip()`` changes nothing).
    """

    pattern: str
    tuple_like: bool
    strip: bool = True


#: (Python pattern, group_select) -> its hand-written Rust form (filled by the pipelines module).
RUST_FORMS: dict[tuple[str, int], RustForm] = {}


def _strip(text: pl.Expr) -> pl.Expr:
    return text.str.strip_chars(python_whitespace())


def _finish(
    frame: pl.DataFrame, found: pl.Expr, value: pl.Expr, fallback: str, rule: str, strip: bool
) -> pl.Series:
    """lm-eval's last steps: no match -> fallback; all groups empty -> fallback.strip().

    ``frame`` holds the responses (``text``); ``found`` and ``value`` (findall's item before
    ``strip()``, null where every group is empty) are computed once each.
    """
    frame = frame.with_columns(found.alias("found"), value.alias("value"))
    found, value = pl.col("found"), pl.col("value")
    extracted = (
        pl.when(~found).then(pl.lit(fallback))
        .when(value.is_null()).then(pl.lit(fallback.strip()))
        .otherwise(_strip(value) if strip else value)
    )  # fmt: skip
    named = (
        pl.when(pl.col("text").is_null()).then(_NULL)
        .when(found & value.is_not_null()).then(pl.lit(rule))
        .otherwise(pl.lit("none"))
    )  # fmt: skip
    return frame.select(extraction(extracted, named)).to_series()


def _first_non_empty(groups: pl.Expr, names: list[str]) -> pl.Expr:
    fields = [groups.struct.field(name) for name in names]
    return pl.coalesce([pl.when(field != "").then(field) for field in fields])


def _value_of(groups: pl.Expr, first: int, count: int) -> pl.Expr:
    """findall's item from extracted groups ``first..first+count-1`` (null: all empty)."""
    names = [str(index) for index in range(first, first + count)]
    if count == 1:
        return groups.struct.field(names[0]).fill_null("")
    return _first_non_empty(groups, names)


def _batches(text: pl.Expr, run: Callable[[pl.DataFrame], pl.Series]) -> pl.Expr:
    """``run`` over each batch of responses (as the frame's ``text`` column), row-wise.

    Each regex runs once per batch: the later steps read its result from a column.
    """
    return text.map_batches(
        lambda series: run(pl.DataFrame({"text": series})).alias(series.name),
        return_dtype=EXTRACTION,
        is_elementwise=True,
    )


def _rust_regex(text: pl.Expr, plan: _Plan, group_select: int, fallback: str, rule: str) -> pl.Expr:
    rust = plan.rust
    source = pl.col("text").fill_null("")

    def first(frame: pl.DataFrame) -> pl.Series:
        frame = frame.with_columns(source.str.extract_groups(f"({rust})").alias("groups"))
        groups = pl.col("groups")
        value = groups.struct.field("1") if plan.groups == 0 else _value_of(groups, 2, plan.groups)
        return _finish(frame, groups.struct.field("1").is_not_null(), value, fallback, rule, True)

    def chosen(frame: pl.DataFrame) -> pl.Series:
        frame = frame.with_columns(source.str.extract_all(rust).alias("matches"))
        frame = frame.with_columns(
            pl.col("matches").list.get(group_select, null_on_oob=True).alias("chosen"),
            (pl.col("matches").list.len() > 0).alias("any"),
        )
        beyond = frame.select(pl.col("any") & pl.col("chosen").is_null()).to_series()
        if beyond.any():
            raise _beyond_error(
                plan.pattern, group_select, int(beyond.sum()), int(beyond.arg_true()[0])
            )
        value = pl.col("chosen")
        if plan.groups:
            anchored = f"^(?:{rust})$"
            frame = frame.with_columns(value.str.extract_groups(anchored).alias("groups"))
            value = _value_of(pl.col("groups"), 1, plan.groups)
        return _finish(frame, pl.col("any"), value, fallback, rule, True)

    return _batches(text, first if group_select == 0 else chosen)


def _beyond_error(pattern: str, group_select: int, rows: int, first: int) -> EvalframeError:
    return EvalframeError(
        f"regex({pattern!r}, group_select={group_select}): {rows} response(s) have fewer "
        f"matches than group_select asks for (first: row {first} of the batch); lm-eval's "
        "RegexFilter raises IndexError on them"
    )


def _rust_form(text: pl.Expr, form: RustForm, fallback: str, rule: str) -> pl.Expr:
    source = pl.col("text").fill_null("")

    def run(frame: pl.DataFrame) -> pl.Series:
        frame = frame.with_columns(source.str.extract_groups(f"({form.pattern})").alias("groups"))
        groups = pl.col("groups")
        value = groups.struct.field("2")
        value = pl.when(value != "").then(value) if form.tuple_like else value.fill_null("")
        found = groups.struct.field("1").is_not_null()
        return _finish(frame, found, value, fallback, rule, form.strip)

    return _batches(text, run)


class _Beyond(Exception):
    pass


def _python_item(compiled: re.Pattern, group_select: int, fallback: str, text: str):
    """(answer, found) of one response, as RegexFilter keeps it (``text`` a string)."""
    matches = compiled.findall(text)
    if not matches:
        return fallback, False
    try:
        item = matches[group_select]
    except IndexError:
        raise _Beyond from None
    if isinstance(item, tuple):
        item = next((part for part in item if part), None)
        if item is None:
            return fallback.strip(), False
    return item.strip(), True


def _python_regex(
    series: pl.Series, plan: _Plan, group_select: int, fallback: str, rule: str
) -> pl.Series:
    distinct = series.fill_null("").unique().to_list()
    answers, found, beyond = [], [], 0
    for value in distinct:
        try:
            answer, hit = _python_item(plan.compiled, group_select, fallback, value)
        except _Beyond:
            beyond += 1
            answer, hit = None, False
        answers.append(answer)
        found.append(hit)
    if beyond:
        rows = series.fill_null("").is_in(
            [value for value, answer in zip(distinct, answers, strict=True) if answer is None]
        )
        raise _beyond_error(plan.pattern, group_select, int(rows.sum()), int(rows.arg_true()[0]))
    keys = pl.Series(distinct, dtype=pl.String)
    frame = pl.DataFrame({"text": series})
    source = pl.col("text").fill_null("")
    hit = source.replace_strict(keys, pl.Series(found, dtype=pl.Boolean))
    named = pl.when(pl.col("text").is_null()).then(_NULL).when(hit).then(pl.lit(rule))
    answer = source.replace_strict(keys, pl.Series(answers, dtype=pl.String))
    return (
        frame.select(extraction(answer, named.otherwise(pl.lit("none"))))
        .to_series()
        .alias(series.name)
    )


def regex_expr(
    text: IntoExpr, pattern: str, group_select: int = 0, fallback: str = FALLBACK,
    rule: str = "regex",
) -> pl.Expr:  # fmt: skip
    """The :data:`~evalframe.extract.table.EXTRACTION` of ``RegexFilter`` over ``text``.

    See :func:`regex`.

    Parameters
    ----------
    text
        The responses: a ``String`` column name or expression.
    pattern, group_select, fallback
        ``RegexFilter``'s arguments (a Python regex; the match to keep; the answer where
        none is found).
    rule
        The ``rule`` of rows where a match is the answer.

    Returns
    -------
    pl.Expr
        The :data:`~evalframe.extract.table.EXTRACTION` struct per row.

    >>> import polars as pl
    >>> pl.select(regex_expr(pl.lit("#### 1,234."), r"#### (\\-?[0-9\\.\\,]+)")).item()
    {'extracted': '1,234.', 'rule': 'regex'}
    """
    text = parse_into_expr(text)
    form = RUST_FORMS.get((pattern, group_select))
    if form is not None:
        return _rust_form(text, form, fallback, rule)
    plan = _plan(pattern)
    by_rust = plan.rust is not None and (
        group_select == 0 or not (plan.can_be_empty or (plan.groups and plan.anchored))
    )
    if by_rust:
        return _rust_regex(text, plan, group_select, fallback, rule)
    return text.map_batches(
        lambda series: _python_regex(series, plan, group_select, fallback, rule),
        return_dtype=EXTRACTION,
        is_elementwise=True,
    )


def regex(
    pattern: str = r"#### (\-?[0-9\.\,]+)",
    *,
    group_select: int = 0,
    fallback: str = FALLBACK,
    ignore_case: bool = False,
) -> Extractor:
    """lm-eval's ``RegexFilter(regex_pattern=pattern, group_select=..., fallback=...)``.

    Defaults are lm-eval's. ``ignore_case=True`` is the same filter with the pattern
    prefixed by ``(?i)`` (it runs on Python's ``re``: Rust's case folding differs).
    The extractor is named ``regex(pattern=...,group_select=...,fallback=...)``.

    Parameters
    ----------
    pattern
        A Python regex (``re`` syntax), as ``regex_pattern`` in a task's yaml.
    group_select
        Which match of ``re.findall`` to keep (negative: from the end).
    fallback
        The answer where the pattern does not match.
    ignore_case
        Match case-insensitively (``(?i)`` before the pattern).

    Returns
    -------
    Extractor
        For ``extractor=``, :func:`evalframe.extract` and the pipelines.

    >>> import polars as pl
    >>> regex("(a+)", group_select=-1).name
    "regex(pattern='(a+)',group_select=-1,fallback='[invalid]')"
    >>> strict = regex(r"The answer is (\\-?[0-9\\.\\,]+).", group_select=0)
    >>> pl.DataFrame({"r": ["The answer is 1,000.", "The answer is 5"]}).select(
    ...     strict("r").struct.field("extracted")).to_series().to_list()
    ['1,000', '[invalid]']
    """
    if not isinstance(pattern, str) or not isinstance(fallback, str):
        raise EvalframeError(
            f"regex: pattern and fallback must be strings, got {pattern!r} and {fallback!r}"
        )
    if isinstance(group_select, bool) or not isinstance(group_select, int):
        raise EvalframeError(f"regex: group_select must be an integer, got {group_select!r}")
    source = f"(?i){pattern}" if ignore_case else pattern
    _plan(source)  # a bad pattern fails here, not at the first batch

    def function(text: pl.Expr) -> pl.Expr:
        return regex_expr(text, source, group_select, fallback)

    name = f"regex(pattern={source!r},group_select={group_select},fallback={fallback!r})"
    return Extractor(
        name,
        function,
        f"{_REFERENCE}/extraction.py RegexFilter(regex_pattern, group_select, fallback)",
        "the group_select-th match of the pattern (its first non-empty group), stripped; "
        "the fallback where nothing matches",
    )


# ---------------------------------------------------------------- case and white space


def _case(text: pl.Expr, upper: bool) -> pl.Expr:
    """Python's ``str.upper()`` / ``str.lower()`` (polars, except the responses holding a
    character whose mapping the running Python's Unicode tables give otherwise)."""
    changed = python_upper(text) if upper else python_lower(text)
    rule = (
        pl.when(text.is_null()).then(_NULL).otherwise(pl.lit("uppercase" if upper else "lowercase"))
    )
    return extraction(changed, rule)


@EXTRACTORS.decorator(
    name="lowercase",
    reference=f"{_REFERENCE}/transformation.py LowercaseFilter",
    meaning="the response lowercased (Python str.lower())",
)
def lowercase(text: IntoExpr) -> pl.Expr:
    """lm-eval's ``LowercaseFilter`` on one response: Python's ``str.lower()``.

    Polars lowercases, except the responses holding a character whose mapping Python's
    Unicode tables give otherwise, which Python lowercases.

    Parameters
    ----------
    text
        The responses: a ``String`` column name or expression.

    Returns
    -------
    pl.Expr
        The :data:`~evalframe.extract.table.EXTRACTION` struct per row.

    >>> import polars as pl
    >>> pl.DataFrame({"r": ["ΟΔΟΣ Straße", None]}).select(
    ...     lowercase("r").struct.field("extracted")).to_series().to_list()
    ['οδος straße', None]
    """
    return _case(parse_into_expr(text), upper=False)


@EXTRACTORS.decorator(
    name="uppercase",
    reference=f"{_REFERENCE}/transformation.py UppercaseFilter",
    meaning="the response uppercased (Python str.upper())",
)
def uppercase(text: IntoExpr) -> pl.Expr:
    """lm-eval's ``UppercaseFilter`` on one response: Python's ``str.upper()``.

    Parameters
    ----------
    text
        The responses: a ``String`` column name or expression.

    Returns
    -------
    pl.Expr
        The :data:`~evalframe.extract.table.EXTRACTION` struct per row.

    >>> import polars as pl
    >>> pl.DataFrame({"r": ["straße", None]}).select(
    ...     uppercase("r").struct.field("extracted")).to_series().to_list()
    ['STRASSE', None]
    """
    return _case(parse_into_expr(text), upper=True)


@EXTRACTORS.decorator(
    name="remove_whitespace",
    reference=f"{_REFERENCE}/extraction.py WhitespaceFilter",
    meaning="the response without leading and trailing white space (Python str.strip())",
)
def remove_whitespace(text: IntoExpr) -> pl.Expr:
    """lm-eval's ``WhitespaceFilter`` (``remove_whitespace``): Python's ``str.strip()``.

    Parameters
    ----------
    text
        The responses: a ``String`` column name or expression.

    Returns
    -------
    pl.Expr
        The :data:`~evalframe.extract.table.EXTRACTION` struct per row.

    >>> import polars as pl
    >>> pl.DataFrame({"r": ["\\x1c Paris\\u3000\\n", None]}).select(
    ...     remove_whitespace("r").struct.field("extracted")).to_series().to_list()
    ['Paris', None]
    """
    text = parse_into_expr(text)
    rule = pl.when(text.is_null()).then(_NULL).otherwise(pl.lit("remove_whitespace"))
    return extraction(_strip(text), rule)


def map_values(mapping: Mapping[object, object], default: object = None) -> Extractor:
    """lm-eval's ``MapFilter(mapping_dict=mapping, default_value=default)`` on one response.

    ``mapping.get(response, default)``; a value is written as its ``str`` (an ``int`` 1 as
    ``"1"``, as in lm-eval's samples file), ``None`` as null. A null response is looked up
    as ``None``. Rule ``"map"`` where the response is a key, else ``"none"``.

    Parameters
    ----------
    mapping
        ``mapping_dict``: response -> value (keys that are not strings never match).
    default
        ``default_value``: the value of a response that is not a key.

    Returns
    -------
    Extractor
        Named ``map(mapping_dict=...,default_value=...)``.

    >>> import polars as pl
    >>> step = map_values({"A": 0, "B": 1}, default=-1)
    >>> pl.DataFrame({"r": ["A", "B", "C", None]}).select(
    ...     step("r").struct.field("extracted")).to_series().to_list()
    ['0', '1', '-1', '-1']
    """
    if not isinstance(mapping, Mapping):
        raise EvalframeError(f"map_values: mapping must be a dict, got {type(mapping).__name__}")

    def written(value: object) -> str | None:
        return None if value is None else str(value)

    keys = {key: written(value) for key, value in mapping.items() if isinstance(key, str)}
    on_null = written(mapping.get(None, default))
    otherwise = written(default)

    null_rule = "map" if None in mapping else "none"

    def function(text: pl.Expr) -> pl.Expr:
        old = pl.Series(list(keys), dtype=pl.String)
        hit = text.is_in(old.implode())
        mapped = text.replace_strict(
            old,
            pl.Series(list(keys.values()), dtype=pl.String),
            default=pl.lit(otherwise, dtype=pl.String),
            return_dtype=pl.String,
        )
        extracted = pl.when(text.is_null()).then(pl.lit(on_null, dtype=pl.String)).otherwise(mapped)
        rule = (
            pl.when(text.is_null()).then(pl.lit(null_rule))
            .when(hit).then(pl.lit("map"))
            .otherwise(pl.lit("none"))
        )  # fmt: skip
        return extraction(extracted, rule)

    return Extractor(
        f"map(mapping_dict={dict(mapping)!r},default_value={default!r})",
        function,
        f"{_REFERENCE}/transformation.py MapFilter(mapping_dict, default_value)",
        "mapping.get(response, default), written as a string",
    )
