"""The outcome of a pairwise judgment made twice, the answers shown in both orders.

Each row holds two verdicts in terms of the answers: ``verdict_ab`` from the call that showed
A first, ``verdict_ba`` from the call that showed B first (already mapped back, so ``"A"``
always means answer A won). Each is ``"A"``, ``"B"``, ``"tie"`` or ``"error"``. The row's
``outcome`` is:

- ``A`` and ``A`` -> ``A``; ``B`` and ``B`` -> ``B`` (the same winner both times);
- ``tie`` and ``tie`` -> ``tie``;
- opposite winners, or a winner and a tie -> ``inconsistent``;
- ``error`` in either -> ``error`` (an unparseable reply or a failed call: kept, counted);
- one verdict null -> the other verdict (only one call was made);
- both null -> ``error`` (the row was never judged).

A null verdict means that call was not made, not that it failed: AlpacaEval's annotations,
for instance, hold one judgment per instruction (the order shown drawn at random) and the
adapter leaves ``verdict_ba`` null, so ``classify`` gives AlpacaEval's own discrete outcome.
An ``error`` (an unparseable reply, a failed call) is kept and counted, never dropped.

>>> import polars as pl
>>> frame = pl.DataFrame({"verdict_ab": ["A", "B", "tie", "A", "A", "error", "B"],
...                       "verdict_ba": ["A", "B", "tie", "B", "tie", "A", None]})
>>> classify(frame)["outcome"].to_list()
['A', 'B', 'tie', 'inconsistent', 'inconsistent', 'error', 'B']
"""

from __future__ import annotations

from typing import TypeVar

import polars as pl

from evalframe._expr import IntoExpr, by_distinct, parse_into_expr
from evalframe.errors import EvalframeError
from evalframe.judge import parse as P
from evalframe.judge.formats import Format, resolve_format

__all__ = ["LABELS", "OUTCOMES", "classify", "outcome"]

#: The verdicts a column in A/B terms may hold (and null, for a call not made).
LABELS = ("A", "B", "tie", "error")
#: Every outcome :func:`classify` gives.
OUTCOMES = ("A", "B", "tie", "inconsistent", "error")

Frame = TypeVar("Frame", pl.DataFrame, pl.LazyFrame)


def outcome(verdict_ab: IntoExpr = "verdict_ab", verdict_ba: IntoExpr = "verdict_ba") -> pl.Expr:
    """The outcome of two verdicts in A/B terms, as an expression (see the module's table).

    >>> import polars as pl
    >>> pl.select(outcome(pl.lit("A"), pl.lit("tie"))).item()
    'inconsistent'
    """
    ab, ba = parse_into_expr(verdict_ab), parse_into_expr(verdict_ba)
    return (
        pl.when(ab.is_null() & ba.is_null())
        .then(pl.lit("error"))
        .when(ab.is_null())
        .then(ba)
        .when(ba.is_null())
        .then(ab)
        .when((ab == "error") | (ba == "error"))
        .then(pl.lit("error"))
        .when(ab == ba)
        .then(ab)
        .otherwise(pl.lit("inconsistent"))
        .alias("outcome")
    )


def classify(
    frame: Frame,
    *,
    verdict_ab: str = "verdict_ab",
    verdict_ba: str = "verdict_ba",
    format: str | Format | None = None,
) -> Frame:
    """Add ``outcome`` to a frame of verdicts already collected; no judge is called.

    Parameters
    ----------
    frame
        A ``pl.DataFrame`` or ``pl.LazyFrame``; every column and row is kept, in order.
    verdict_ab, verdict_ba
        The columns of the two calls: A shown first, then B shown first.
    format
        ``None``: the columns hold verdicts in A/B terms, ``"A"``, ``"B"``, ``"tie"``,
        ``"error"`` or null (as the AlpacaEval and MT-bench adapters and
        :func:`evalframe.judge.pairwise` write them); any other value is an error naming it.
        A format name (``"default"``, ``"mtbench"``, ``"arena_hard"``) or a
        :class:`~evalframe.judge.formats.Format`: the columns hold the judge's raw replies,
        which are parsed, the second mapped back (its ``first`` slot is B). The parsed
        verdicts are written to ``verdict_ab`` and ``verdict_ba`` (a raw column of that very
        name is kept as ``judgment_ab`` / ``judgment_ba``), with ``strength_ab`` and
        ``strength_ba`` for a format that grades its verdicts (Arena-Hard: 3 for ``>>``, 1
        otherwise, null on error). A null reply is a failed call: ``"error"``.

    Returns
    -------
    The frame with ``outcome`` added (and, with a format, the parsed verdicts), of the type
    given.

    Examples
    --------
    >>> import polars as pl
    >>> raw = pl.DataFrame({"g1": ["[[A]]", "[[B]]", "[[C]]", "no tag"],
    ...                     "g2": ["[[B]]", "[[B]]", "[[A]]", "[[A]]"]})
    >>> classify(raw, verdict_ab="g1", verdict_ba="g2", format="mtbench").select(
    ...     "verdict_ab", "verdict_ba", "outcome").rows()
    [('A', 'A', 'A'), ('B', 'A', 'inconsistent'), ('tie', 'B', 'inconsistent'), ('error', 'B', 'error')]
    """  # noqa: E501
    if not isinstance(frame, pl.DataFrame | pl.LazyFrame):
        raise EvalframeError(
            f"classify takes a polars DataFrame or LazyFrame, got {type(frame).__name__}"
        )
    schema = frame.collect_schema()
    for role, column in (("verdict_ab", verdict_ab), ("verdict_ba", verdict_ba)):
        if column not in schema:
            raise EvalframeError(
                f"classify: no column {column!r} (the {role} verdicts); the frame has columns "
                f"{list(schema)}; name the column with {role}=..."
            )
        if schema[column] not in (pl.String, pl.Null, pl.Categorical) and not isinstance(
            schema[column], pl.Enum
        ):
            raise EvalframeError(
                f"classify: column {column!r} ({role}) is {schema[column]}; expected text "
                + ("(the verdicts 'A', 'B', 'tie', 'error')" if format is None else "(replies)")
            )
    if format is None:
        _check_labels(frame, verdict_ab, verdict_ba)
        return frame.with_columns(
            outcome(pl.col(verdict_ab).cast(pl.String), pl.col(verdict_ba).cast(pl.String))
        )
    fmt = resolve_format(format)
    frame = _keep_raw(frame, schema, verdict_ab, "verdict_ab", "judgment_ab")
    frame = _keep_raw(frame, schema, verdict_ba, "verdict_ba", "judgment_ba")
    raw_ab = "judgment_ab" if verdict_ab == "verdict_ab" else verdict_ab
    raw_ba = "judgment_ba" if verdict_ba == "verdict_ba" else verdict_ba
    return frame.with_columns(parsed_columns(fmt, raw_ab, raw_ba)).with_columns(outcome())


#: The dtype of a verdict's strength (Arena-Hard's 3 for ``>>``, 1 otherwise).
_STRENGTH = pl.Int64


def parsed_columns(fmt: Format, reply_ab: IntoExpr, reply_ba: IntoExpr) -> list[pl.Expr]:
    """``verdict_ab``, ``verdict_ba`` (and strengths) parsed from two reply columns.

    >>> import polars as pl
    >>> from evalframe.judge.formats import FORMATS
    >>> pl.select(parsed_columns(FORMATS["arena_hard"], pl.lit("[[A>>B]]"), pl.lit("[[A>B]]"))
    ...           ).row(0)
    ('A', 'B', 3, 1)
    """
    ab = parse_into_expr(reply_ab).cast(pl.String)
    ba = parse_into_expr(reply_ba).cast(pl.String)
    # a judge gives few distinct replies over many rows: each is parsed once
    columns = [
        by_distinct(ab, lambda reply: P.to_ab(fmt.parse(reply), swapped=False), pl.String)
        .alias("verdict_ab"),
        by_distinct(ba, lambda reply: P.to_ab(fmt.parse(reply), swapped=True), pl.String)
        .alias("verdict_ba"),
    ]
    if fmt.strength is not None:
        strength = fmt.strength
        columns += [
            by_distinct(ab, strength, _STRENGTH).alias("strength_ab"),
            by_distinct(ba, strength, _STRENGTH).alias("strength_ba"),
        ]
    return columns


def _keep_raw(
    frame: Frame, schema: pl.Schema, column: str, parsed: str, raw: str
) -> Frame:
    """Rename a raw reply column named like its parsed verdict to ``raw`` (kept, not lost)."""
    if column != parsed:
        return frame
    if raw in schema:
        raise EvalframeError(
            f"classify: the replies are in {column!r}, where the parsed verdicts go, and "
            f"{raw!r} (where the replies would be kept) already exists; rename one of them"
        )
    return frame.rename({column: raw})


def _check_labels(frame: pl.DataFrame | pl.LazyFrame, *columns: str) -> None:
    """Every verdict is one of ``LABELS`` or null; else an error naming the first bad one."""
    lazy = frame.lazy()
    for column in columns:
        value = pl.col(column).cast(pl.String)
        bad = value.is_not_null() & ~value.is_in(list(LABELS))
        found = (
            lazy.with_row_index("__row")
            .select(bad.sum().alias("n"), pl.col("__row").filter(bad).first().alias("row"),
                    value.filter(bad).first().alias("value"))
            .collect()
        )
        count = int(found["n"][0])
        if count:
            raise EvalframeError(
                f"classify: {count} row(s) of {column!r} hold a verdict other than 'A', 'B', "
                f"'tie', 'error' or null, first row {found['row'][0]}: {found['value'][0]!r}. "
                "Raw judge replies are parsed with format= (e.g. format='mtbench')"
            )
