"""Parsers of judge replies, as Polars expressions over a reply column.

A pairwise parser reads one reply and says which *slot* the judge preferred: ``"first"`` (the
answer shown first), ``"second"``, ``"tie"``, or ``"error"`` (no verdict could be read; a null
reply, i.e. a judge call that failed, is an error too). :func:`to_ab` maps a slot back to the
answers: in the call that shows A first, ``first`` is ``"A"``; in the swapped call it is ``"B"``.

A grade parser reads one reply of a pointwise judge and gives a number (null where none can be
read). Every parser is a plain function of an expression (or a column name) returning an
expression, so it runs over a whole column at once.

>>> import polars as pl
>>> replies = pl.DataFrame({"reply": ["second.", " Tie! ", "**first**", None]})
>>> replies.select(parse_default("reply").alias("slot"),
...                to_ab(parse_default("reply"), swapped=True).alias("ab"))
shape: (4, 2)
┌────────┬───────┐
│ slot   ┆ ab    │
│ ---    ┆ ---   │
│ str    ┆ str   │
╞════════╪═══════╡
│ second ┆ A     │
│ tie    ┆ tie   │
│ error  ┆ error │
│ error  ┆ error │
└────────┴───────┘
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

import polars as pl

from evalframe._expr import IntoExpr, parse_into_expr
from evalframe.errors import EvalframeError

__all__ = [
    "ERROR",
    "FIRST",
    "SECOND",
    "SLOTS",
    "TIE",
    "arena_hard_label",
    "arena_hard_strength",
    "parse_arena_hard",
    "parse_default",
    "parse_inspect_grade",
    "parse_mtbench",
    "parse_mtbench_rating",
    "parse_number",
    "parse_regex",
    "to_ab",
]

FIRST, SECOND, TIE, ERROR = "first", "second", "tie", "error"
#: Every value a pairwise parser gives.
SLOTS = (FIRST, SECOND, TIE, ERROR)

#: The words the default format asks for, upper-cased, and the slot each names.
DEFAULT_WORDS = {"FIRST": FIRST, "SECOND": SECOND, "TIE": TIE}


def _slot_of(text: pl.Expr, mapping: Mapping[str, str]) -> pl.Expr:
    """``mapping[text]``, ``"error"`` for any other text and for null."""
    return text.replace_strict(dict(mapping), default=pl.lit(ERROR), return_dtype=pl.String)


def parse_default(reply: IntoExpr) -> pl.Expr:
    """The default format's verdict: the reply's first word, FIRST, SECOND or TIE.

    The first run of non-whitespace characters, with ``.``, ``,`` and ``!`` trimmed from both
    ends, compared case-insensitively. Anything else (markup such as ``**first**``, an empty
    reply, another word) is ``"error"``; so is a null reply.

    >>> import polars as pl
    >>> frame = pl.DataFrame({"r": ["second.", " Tie! ", "FIRST, because", "**first**", "", None]})
    >>> frame.select(parse_default("r")).to_series().to_list()
    ['second', 'tie', 'first', 'error', 'error', 'error']
    """
    word = parse_into_expr(reply).str.extract(r"^\s*(\S+)", 1).str.strip_chars(".,!")
    return _slot_of(word.str.to_uppercase(), DEFAULT_WORDS)


def parse_mtbench(reply: IntoExpr) -> pl.Expr:
    """FastChat MT-bench's pairwise verdict (``output_format`` ``"[[A]]"``).

    As ``fastchat/llm_judge/common.py`` ``run_judge_pair`` reads it: ``"[[A]]" in judgment``
    gives A (the first slot), else ``"[[B]]"`` gives B, else ``"[[C]]"`` a tie, else an error.
    The tags are looked for anywhere in the text, exactly (case matters), and in that order of
    precedence whatever their positions: a judgment holding both ``[[A]]`` and ``[[B]]`` is A.
    FastChat's ``$ERROR$`` (the API call failed) holds no tag and is an error; so is null.

    >>> import polars as pl
    >>> frame = pl.DataFrame({"r": ["Verdict: [[B]]", "[[B]] ... no, [[A]]", "«[[C]]»", "[[a]]",
    ...                             "$ERROR$", None]})
    >>> frame.select(parse_mtbench("r")).to_series().to_list()
    ['second', 'first', 'tie', 'error', 'error', 'error']
    """
    text = parse_into_expr(reply)
    return (
        pl.when(text.str.contains("[[A]]", literal=True))
        .then(pl.lit(FIRST))
        .when(text.str.contains("[[B]]", literal=True))
        .then(pl.lit(SECOND))
        .when(text.str.contains("[[C]]", literal=True))
        .then(pl.lit(TIE))
        .otherwise(pl.lit(ERROR))
    )


#: Arena-Hard-Auto's ``regex_patterns``, tried in order; ``(?s).*`` binds each to its last match.
ARENA_HARD_PATTERNS = (r"\[\[([AB<>=]+)\]\]", r"\[([AB<>=]+)\]")
#: The labels Arena-Hard-Auto's ``show_result.py`` scores, as slot and strength (weight 3).
ARENA_HARD_LABELS = {
    "A>>B": (FIRST, 3),
    "B<<A": (FIRST, 3),
    "A>B": (FIRST, 1),
    "B<A": (FIRST, 1),
    "A=B": (TIE, 1),
    "B=A": (TIE, 1),
    "B>A": (SECOND, 1),
    "A<B": (SECOND, 1),
    "B>>A": (SECOND, 3),
    "A<<B": (SECOND, 3),
}


def arena_hard_label(reply: IntoExpr) -> pl.Expr:
    """The verdict label Arena-Hard-Auto reads from a judgment (null where there is none).

    As ``gen_judgment.py`` ``get_score``: the judgment upper-cased, the patterns
    ``\\[\\[([AB<>=]+)\\]\\]`` then ``\\[([AB<>=]+)\\]`` tried in turn, and the *last* match of the
    first pattern that matches is the label (``[[A>B]] ... [[B>A]]`` is ``B>A``). The label is
    the raw text between the brackets, e.g. ``A>B``, or ``AB`` which no verdict means.

    >>> import polars as pl
    >>> frame = pl.DataFrame({"r": ["x [[a>b]] ... [[B>>A]]", "[A=B]", "[[A>B]] and [B>A]", None]})
    >>> frame.select(arena_hard_label("r")).to_series().to_list()
    ['B>>A', 'A=B', 'A>B', None]
    """
    upper = parse_into_expr(reply).str.to_uppercase()
    found = [upper.str.extract(f"(?s).*{pattern}", 1) for pattern in ARENA_HARD_PATTERNS]
    return pl.coalesce(found)


def parse_arena_hard(reply: IntoExpr) -> pl.Expr:
    """Arena-Hard-Auto's pairwise verdict as a slot: ``A>>B``/``A>B`` first, ``A=B`` tie, ...

    The label of :func:`arena_hard_label` looked up in the table ``show_result.py`` scores
    (``A>B``, ``A>>B``, ``A=B``, ``B>A``, ``B>>A`` and their mirror spellings ``B<A``, ``B<<A``,
    ``B=A``, ``A<B``, ``A<<B``). No label, or a label outside the table (``AB``), is an error:
    Arena-Hard-Auto leaves a game without a label out of its results.

    >>> import polars as pl
    >>> frame = pl.DataFrame({"r": ["[[A>>B]]", "[[B<A]]", "[[A=B]]", "[[B>>A]]", "[[AB]]",
    ...                             "none"]})
    >>> frame.select(parse_arena_hard("r")).to_series().to_list()
    ['first', 'first', 'tie', 'second', 'error', 'error']
    """
    slots = {label: slot for label, (slot, _) in ARENA_HARD_LABELS.items()}
    return _slot_of(arena_hard_label(reply), slots)


def arena_hard_strength(reply: IntoExpr) -> pl.Expr:
    """The weight of an Arena-Hard-Auto verdict: 3 for ``>>``/``<<``, 1 otherwise, null on error.

    ``show_result.py`` counts a strong verdict as ``weight = 3`` battles; a slight win and a
    tie count once.

    >>> import polars as pl
    >>> frame = pl.DataFrame({"r": ["[[A>>B]]", "[[B>A]]", "[[A=B]]", "no verdict"]})
    >>> frame.select(arena_hard_strength("r")).to_series().to_list()
    [3, 1, 1, None]
    """
    weights = {label: weight for label, (_, weight) in ARENA_HARD_LABELS.items()}
    return arena_hard_label(reply).replace_strict(weights, default=None, return_dtype=pl.Int64)


def parse_regex(
    reply: IntoExpr, pattern: str, verdicts: Mapping[str, str] | None = None
) -> pl.Expr:
    """A user's verdict pattern: the slot its first match names.

    Two kinds of pattern are read:

    - named groups ``first``, ``second`` and optionally ``tie``: the verdict is the group that
      took part in the first match (``(?P<first>\\[\\[1\\]\\])|(?P<second>\\[\\[2\\]\\])``);
    - one capture group and ``verdicts``, a mapping from the captured text to ``"first"``,
      ``"second"`` or ``"tie"`` (``r"Winner: (\\w+)"`` with ``{"one": "first", ...}``); captured
      text not in the mapping is an error.

    Patterns use the Rust ``regex`` syntax Polars runs (no look-around or back-references);
    ``(?i)`` makes one case-insensitive, and a leading ``(?s).*`` makes it bind to the last
    match instead of the first. No match, and a null reply, are errors.

    >>> import polars as pl
    >>> frame = pl.DataFrame({"r": ["Winner: one", "winner: TWO", "Winner: both", "?"]})
    >>> mapping = {"one": "first", "two": "second", "both": "tie"}
    >>> frame.select(parse_regex("r", r"(?i)winner:\\s*(\\w+)", mapping)).to_series().to_list()
    ['first', 'error', 'tie', 'error']
    >>> named = r"(?P<first>\\[\\[1\\]\\])|(?P<second>\\[\\[2\\]\\])|(?P<tie>\\[\\[0\\]\\])"
    >>> pl.DataFrame({"r": ["so [[2]]", "[[0]]", "[[3]]"]}).select(
    ...     parse_regex("r", named)).to_series().to_list()
    ['second', 'tie', 'error']
    """
    names, groups = _check_pattern(pattern, verdicts)
    text = parse_into_expr(reply)
    if names:
        took_part = [text.str.extract(pattern, groups[name]).is_not_null() for name in names]
        chosen = pl.when(took_part[0]).then(pl.lit(names[0]))
        for name, part in zip(names[1:], took_part[1:], strict=True):
            chosen = chosen.when(part).then(pl.lit(name))
        return chosen.otherwise(pl.lit(ERROR))
    assert verdicts is not None
    return _slot_of(text.str.extract(pattern, 1), verdicts)


def _check_pattern(
    pattern: str, verdicts: Mapping[str, str] | None
) -> tuple[list[str], dict[str, int]]:
    """The slot-named groups of ``pattern`` in group order (empty: one group and ``verdicts``)."""
    try:
        compiled = re.compile(pattern)
        pl.select(pl.lit("").str.contains(pattern))
    except (re.error, pl.exceptions.PolarsError) as error:
        raise EvalframeError(
            f"the verdict pattern {pattern!r} is not a valid regex: {error}"
        ) from None
    named = {name: index for name, index in compiled.groupindex.items() if name in SLOTS[:3]}
    if named:
        if not {FIRST, SECOND} <= set(named):
            raise EvalframeError(
                f"the verdict pattern {pattern!r} names groups {sorted(named)}; it needs the "
                "groups 'first' and 'second' (and optionally 'tie')"
            )
        if verdicts is not None:
            raise EvalframeError(
                f"the verdict pattern {pattern!r} names its verdicts by group; give no "
                "verdicts= mapping with it"
            )
        return sorted(named, key=named.__getitem__), named
    if compiled.groups != 1 or verdicts is None:
        raise EvalframeError(
            f"the verdict pattern {pattern!r} has {compiled.groups} capture group(s) and "
            f"{'a' if verdicts is not None else 'no'} verdicts= mapping; give either groups "
            "named 'first', 'second' (and 'tie'), or exactly one capture group and verdicts= "
            "mapping its text to 'first', 'second' or 'tie'"
        )
    wrong = sorted({str(v) for v in verdicts.values()} - set(SLOTS[:3]))
    if wrong:
        raise EvalframeError(
            f"verdicts= maps text to {wrong}; each value must be 'first', 'second' or 'tie'"
        )
    return [], {}


def to_ab(slot: IntoExpr, *, swapped: bool) -> pl.Expr:
    """A slot verdict in terms of the answers: ``"A"``, ``"B"``, ``"tie"`` or ``"error"``.

    ``swapped=False`` is the call that showed A first (``first`` -> ``"A"``); ``swapped=True``
    the call that showed B first (``first`` -> ``"B"``). A null slot is an error.

    >>> import polars as pl
    >>> pl.select(to_ab(pl.lit("first"), swapped=False), to_ab(pl.lit("first"), swapped=True)
    ...           .alias("ba")).row(0)
    ('A', 'B')
    """
    first, second = ("B", "A") if swapped else ("A", "B")
    return _slot_of(parse_into_expr(slot), {FIRST: first, SECOND: second, TIE: "tie"})


# ---------------------------------------------------------------- grades

#: FastChat's ``one_score_pattern`` and ``one_score_pattern_backup`` (ASCII digits).
MTBENCH_RATING_PATTERNS = (r"\[\[([0-9]+\.?[0-9]*)\]\]", r"\[([0-9]+\.?[0-9]*)\]")


def parse_mtbench_rating(reply: IntoExpr) -> pl.Expr:
    """FastChat MT-bench's single-answer rating (``output_format`` ``"[[rating]]"``), Float64.

    As ``run_judge_single``: ``re.search`` of ``\\[\\[(\\d+\\.?\\d*)\\]\\]``, failing that of the
    backup ``\\[(\\d+\\.?\\d*)\\]``, and the first match's number. Where FastChat writes ``-1``
    (no match) this gives null. Digits are ASCII ``0-9``; FastChat's ``ast.literal_eval`` of
    the match would raise on a leading zero (``[[07]]``), read here as 7.

    >>> import polars as pl
    >>> frame = pl.DataFrame({"r": ["Rating: [[7]]", "[[8.5]] then [[2]]", "score [9]", "[[x]]"]})
    >>> frame.select(parse_mtbench_rating("r")).to_series().to_list()
    [7.0, 8.5, 9.0, None]
    """
    text = parse_into_expr(reply)
    found = [text.str.extract(pattern, 1) for pattern in MTBENCH_RATING_PATTERNS]
    return pl.coalesce(found).cast(pl.Float64)


#: Inspect's whitespace and zero-width marks around ``GRADE`` ``:`` (``_GRADE_SPACING``).
_INSPECT_SPACING = r"[\s\u200b\u200c\u200d\u200e\u200f\u2060\u2063\ufeff]*"
#: Inspect's permissive grade pattern; ``\b`` stands for its ``(?<!\w)`` / ``(?!\w)``.
INSPECT_GRADE_PATTERN = rf"(?is).*\bGRADE\b{_INSPECT_SPACING}:{_INSPECT_SPACING}(\w*)"
#: Spelled-out grades Inspect accepts for a letter (``_GRADE_WORD_VALUES``).
INSPECT_GRADE_WORDS = {
    "c": "C",
    "correct": "C",
    "i": "I",
    "incorrect": "I",
    "p": "P",
    "partial": "P",
}
#: What Inspect's ``value_to_float`` makes of each grade.
INSPECT_GRADE_VALUES = {"C": 1.0, "P": 0.5, "I": 0.0}


def parse_inspect_grade(reply: IntoExpr, grades: Sequence[str] = ("C", "I")) -> pl.Expr:
    """Inspect's model-graded letter (``GRADE: C``/``P``/``I``), null where none is read.

    As ``inspect_ai.scorer._model`` with its default instructions: the *last* ``GRADE:`` of the
    reply (``GRADE`` a whole word, any case, whitespace or zero-width marks around the colon)
    and the word after it; ``correct``/``partial``/``incorrect`` (any case) stand for their
    letter, a single other character is upper-cased, a longer word (``CI``) is no grade, and a
    grade not among those offered (``grades``: ``C``, ``I``, plus ``P`` with partial credit)
    is no grade either. Map letters to scores with ``INSPECT_GRADE_VALUES`` (C 1, P 0.5, I 0,
    as ``value_to_float``).

    >>> import polars as pl
    >>> frame = pl.DataFrame({"r": ["GRADE: I ... GRADE: C", "grade : partial", "GRADE: P",
    ...                             "GRADE: CI", "downgrade: C", None]})
    >>> frame.select(parse_inspect_grade("r", ("C", "P", "I"))).to_series().to_list()
    ['C', 'P', 'P', None, None, None]
    >>> frame.select(parse_inspect_grade("r")).to_series().to_list()[:3]
    ['C', None, None]
    """
    word = parse_into_expr(reply).str.extract(INSPECT_GRADE_PATTERN, 1)
    spelled = word.str.to_lowercase().replace_strict(
        INSPECT_GRADE_WORDS, default=None, return_dtype=pl.String
    )
    letter = pl.when(word.str.len_chars() == 1).then(word.str.to_uppercase())
    value = pl.coalesce(spelled, letter)
    return pl.when(value.is_in(list(grades))).then(value)


#: A decimal number: optional sign, digits, optional fraction (``7``, ``-2``, ``8.5``, ``.5``).
NUMBER_PATTERN = r"[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)"


def parse_number(reply: IntoExpr, low: float | None = None, high: float | None = None) -> pl.Expr:
    """The first number in the reply, Float64; null where there is none or it is out of range.

    ``low`` and ``high`` bound the scale (inclusive): a number outside them is null (an error),
    not clipped.

    >>> import polars as pl
    >>> frame = pl.DataFrame({"r": ["7", "Score: 4.5/10", "11", "none", None]})
    >>> frame.select(parse_number("r", 1, 10)).to_series().to_list()
    [7.0, 4.5, None, None, None]
    """
    value = parse_into_expr(reply).str.extract(f"({NUMBER_PATTERN})", 1).cast(pl.Float64)
    return bounded(value, low, high)


def bounded(value: pl.Expr, low: float | None, high: float | None) -> pl.Expr:
    """``value`` where it lies in ``[low, high]`` (either bound optional), null elsewhere.

    >>> import polars as pl
    >>> pl.select(bounded(pl.lit(11.0), 1, 10)).item() is None
    True
    """
    keep = pl.lit(True)
    if low is not None:
        keep = keep & (value >= low)
    if high is not None:
        keep = keep & (value <= high)
    return pl.when(keep).then(value)
