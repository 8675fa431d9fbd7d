"""The pointwise harness: one judge call per row, the reply read as a grade.

:func:`grade` renders one prompt per row (a grading format's template, see
:data:`~evalframe.judge.formats.GRADE_FORMATS`), asks each distinct prompt once through
:func:`evalframe.judge.run.ask`, and reads the grade; :func:`regrade` reads grades from replies
already collected (a judgment dump re-scored offline, no judge called). Both add:

- ``judgment``: the raw reply (:func:`grade` only; null where the call failed or was not made);
- ``grade``: the grade as read (``"7"``, ``"8.5"``, ``"C"``), or ``"error"``;
- ``score``: Float64, the grade's value (MT-bench's rating; Inspect's C 1, P 0.5, I 0; the
  number on a numeric scale), null on error;
- ``judge_error``: why the grade is an error (null otherwise): a null field (not asked), a
  failed call, a reply with no grade, a number outside the scale;
- ``judge_model``, ``judge_format``, ``judge_signature`` (:func:`grade`), ``judge_format``
  (:func:`regrade`).

An error is kept with the reply, never dropped: ``score`` is null there, so
``ef.aggregate(graded, metrics=["score"])`` averages the graded rows, as FastChat's
``show_result.py`` leaves out its ``-1`` ratings.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import polars as pl

from evalframe.errors import EvalframeError
from evalframe.judge.formats import GradeFormat, render, resolve_grade_format, template_fields
from evalframe.judge.pairwise import ask_column, collect_pairs, judge_columns, null_fields_expr
from evalframe.judge.run import judge_identity

__all__ = ["GRADE_COLUMNS", "grade", "grade_prompt", "regrade"]

#: The columns :func:`grade` adds, in order.
GRADE_COLUMNS = (
    "judgment",
    "grade",
    "score",
    "judge_error",
    "judge_model",
    "judge_format",
    "judge_signature",
)

#: Default columns for fields the frame lacks: evalframe's role names.
FALLBACK_COLUMNS = {"answer": "prediction", "criterion": "gold"}


def grade(
    frame: pl.DataFrame | pl.LazyFrame,
    judge: Any,
    *,
    format: str | GradeFormat = "mtbench",
    template: str | None = None,
    scale: tuple[float, float] | None = None,
    rubric: str | None = None,
    columns: Mapping[str, str] | None = None,
    cache: str | Path | Any | None = None,
    concurrency: int | None = None,
    quiet: bool = False,
) -> pl.DataFrame:
    """Grade every row with one judge call; the grade read from the reply.

    Parameters
    ----------
    frame
        One row per answer to grade, with the columns the template names: ``question`` and
        ``answer`` (``prediction`` is used where there is no ``answer`` column), and for
        Inspect's formats ``criterion`` (or ``gold``). Rename with ``columns``.
    judge
        A callable ``judge(prompt) -> str`` (sync or async), or an ``OpenAIJudge``.
    format
        A name of :data:`~evalframe.judge.formats.GRADE_FORMATS`: ``"mtbench"`` (FastChat
        ``single-v1``, ``Rating: [[n]]``), ``"inspect_qa"``, ``"inspect_fact"`` (``GRADE: C``
        or ``I``), ``"inspect_qa_partial"``, ``"inspect_fact_partial"`` (and ``P``, 0.5),
        ``"numeric"`` (the reply's first number); or a ``GradeFormat``.
    template
        A template replacing the format's (its instructions and grade reader are kept).
    scale
        ``(low, high)``: a score outside is an error (``"numeric"`` defaults to 1-10 and
        writes the bounds into its prompt; ``"mtbench"`` is unbounded by default, as
        FastChat). Inspect's letter grades take no scale.
    rubric
        The instructions, for a template with a ``{rubric}`` field (``"numeric"``).
    columns
        Field -> column name, e.g. ``{"answer": "output", "criterion": "target"}``.
    cache, concurrency, quiet
        As :func:`evalframe.judge.pairwise`.

    Returns
    -------
    The input (collected, every row in order) with the columns of the module's list.

    Examples
    --------
    >>> import polars as pl
    >>> frame = pl.DataFrame({"question": ["2+2?", "2+2?", None], "answer": ["4", "5", "4"]})
    >>> def judge(prompt):
    ...     return "Correct. Rating: [[10]]" if "\\n4\\n" in prompt else "Wrong. [[2]]"
    >>> grade(frame, judge, quiet=True).select("grade", "score", "judge_error").rows()
    [('10', 10.0, None), ('2', 2.0, None), ('error', None, 'not asked: null question')]
    """
    data = collect_pairs(frame)
    fmt, bounds, body, literals, bindings = grade_prompt(
        format=format, template=template, scale=scale, rubric=rubric, columns=columns
    )
    fields = template_fields(body)
    bound = {}
    for name in fields:
        if name in literals:
            continue
        column = bindings.get(name, name)
        if column not in data.columns and name not in bindings and name in FALLBACK_COLUMNS:
            fallback = FALLBACK_COLUMNS[name]
            column = fallback if fallback in data.columns else column
        bound[name] = column
    prompts = data.select(
        render(body, data.schema, bound, literals, fmt.prefix()),
        null_fields_expr(bound).alias("null_fields"),
    )
    replies = ask_column(
        prompts["prompt"], judge, cache=cache, concurrency=concurrency, quiet=quiet
    )
    asked = pl.DataFrame(
        {
            "judgment": replies["text"],
            "failed": replies["error"],
            "null_fields": prompts["null_fields"],
        }
    )
    read = asked.with_columns(_read(fmt, bounds, pl.col("judgment"))).with_columns(
        pl.when(pl.col("judge_error").is_null())
        .then(None)
        .when(pl.col("null_fields").is_not_null())
        .then(pl.lit("not asked: null ") + pl.col("null_fields"))
        .when(pl.col("judgment").is_null())
        .then(pl.lit("judge failed: ") + pl.col("failed").fill_null("no reply"))
        .otherwise(pl.col("judge_error"))
        .alias("judge_error")
    )
    identity = judge_identity(judge)
    fingerprint = fmt.fingerprint(body, literals.get("rubric"))
    meta = judge_columns(identity, fmt.name, _scaled(fingerprint, bounds))
    kept = data.drop([c for c in GRADE_COLUMNS if c in data.columns])
    return pl.concat(
        [kept, read.with_columns(**meta).select(GRADE_COLUMNS)], how="horizontal"
    )


def grade_prompt(
    *,
    format: str | GradeFormat = "mtbench",
    template: str | None = None,
    scale: tuple[float, float] | None = None,
    rubric: str | None = None,
    columns: Mapping[str, str] | None = None,
) -> tuple[GradeFormat, tuple[float, float] | None, str, dict[str, str], dict[str, str]]:
    """The format, scale, template, literal fields and column bindings :func:`grade` renders.

    Every check of these options, none of the data: a command line is checked with it
    before any input is read or any judge asked.

    >>> fmt, bounds, body, literals, bindings = grade_prompt(format="numeric", scale=(0, 5))
    >>> fmt.name, bounds, literals["low"], literals["high"]
    ('numeric', (0.0, 5.0), '0', '5')
    >>> grade_prompt(format="numeric", scale=(0, float("inf")))
    Traceback (most recent call last):
    ...
    evalframe.errors.EvalframeError: scale= must be two finite numbers low < high, got (0, inf)
    """
    fmt = resolve_grade_format(format)
    bounds = _scale(fmt, scale)
    body = fmt.template if template is None else template
    fields = template_fields(body)
    literals = dict(fmt.literals)
    if "rubric" in fields:
        text = rubric if rubric is not None else fmt.rubric
        if text is None:
            raise EvalframeError(
                f"the template has a {{rubric}} field and the {fmt.name!r} format has no "
                "rubric of its own; pass rubric='...'"
            )
        literals["rubric"] = text
    elif rubric is not None:
        raise EvalframeError(
            f"rubric= was given but the {fmt.name!r} template has no {{rubric}} field (its "
            "instructions are fixed); pass template= with a {rubric} field, or no rubric"
        )
    if bounds is not None:
        literals.setdefault("low", _number(bounds[0]))
        literals.setdefault("high", _number(bounds[1]))
    bindings = dict(columns or {})
    unknown = sorted(set(bindings) - set(fields))
    if unknown:
        raise EvalframeError(
            f"columns= maps {unknown}, which the template does not use; its fields are {fields}"
        )
    return fmt, bounds, body, literals, bindings


def regrade(
    frame: pl.DataFrame | pl.LazyFrame,
    judgment: str = "judgment",
    *,
    format: str | GradeFormat = "mtbench",
    scale: tuple[float, float] | None = None,
) -> pl.DataFrame | pl.LazyFrame:
    """Read grades from judge replies already collected; no judge is called.

    Adds ``grade``, ``score``, ``judge_error`` and ``judge_format`` as :func:`grade` does
    (replacing columns of those names: FastChat's ``score`` in an MT-bench single-grade
    frame is replaced by the same rating, re-read, where ``-1`` stood a null ``score`` and an
    ``error`` grade). A null reply is an error (``"no reply"``). A LazyFrame stays lazy.

    >>> import polars as pl
    >>> dump = pl.DataFrame({"judgment": ["Good. Rating: [[8]]", "Rating: 7", None]})
    >>> regrade(dump).select("grade", "score", "judge_error").rows()
    [('8', 8.0, None), ('error', None, 'no grade in the reply'), ('error', None, 'no reply')]
    """
    if not isinstance(frame, pl.DataFrame | pl.LazyFrame):
        raise EvalframeError(
            f"regrade takes a polars DataFrame or LazyFrame, got {type(frame).__name__}"
        )
    fmt = resolve_grade_format(format)
    bounds = _scale(fmt, scale)
    schema = frame.collect_schema()
    if judgment not in schema:
        raise EvalframeError(
            f"regrade: no column {judgment!r} (the judge's replies); the frame has columns "
            f"{list(schema)}; name it with judgment=..."
        )
    if schema[judgment] not in (pl.String, pl.Null):
        raise EvalframeError(
            f"regrade: column {judgment!r} is {schema[judgment]}; expected the replies as text"
        )
    reply = pl.col(judgment).cast(pl.String)
    return frame.with_columns(_read(fmt, bounds, reply)).with_columns(
        pl.when(reply.is_null())
        .then(pl.lit("no reply"))
        .otherwise(pl.col("judge_error"))
        .alias("judge_error"),
        pl.lit(fmt.name, dtype=pl.String).alias("judge_format"),
    )


def _read(fmt: GradeFormat, bounds: tuple[float, float] | None, reply: pl.Expr) -> list[pl.Expr]:
    """``grade``, ``score`` and ``judge_error`` from a reply expression."""
    grade_text, score = fmt.read(reply, bounds)
    unbounded_text, unbounded = fmt.read(reply, None)
    error = (
        pl.when(score.is_not_null())
        .then(None)
        .when(unbounded.is_not_null())
        .then(
            pl.format(
                "{} is outside the scale [{}, {}]",
                unbounded_text,
                pl.lit(_number(bounds[0]) if bounds else ""),
                pl.lit(_number(bounds[1]) if bounds else ""),
            )
        )
        .otherwise(pl.lit("no grade in the reply"))
    )
    return [
        pl.when(score.is_not_null()).then(grade_text).otherwise(pl.lit("error")).alias("grade"),
        score.alias("score"),
        error.cast(pl.String).alias("judge_error"),
    ]


def _scale(
    fmt: GradeFormat, scale: tuple[float, float] | None
) -> tuple[float, float] | None:
    if scale is None:
        return fmt.scale
    if not fmt.scaled:
        raise EvalframeError(
            f"the {fmt.name!r} format grades with letters and takes no scale= (got {scale!r})"
        )
    try:
        low, high = (float(v) for v in scale)
    except (TypeError, ValueError):
        raise EvalframeError(
            f"scale= must be a pair (low, high) of numbers, got {scale!r}"
        ) from None
    if not (math.isfinite(low) and math.isfinite(high) and low < high):
        raise EvalframeError(f"scale= must be two finite numbers low < high, got {scale!r}")
    return (low, high)


def _number(value: float) -> str:
    """``1.0`` as ``"1"``, ``2.5`` as ``"2.5"``."""
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def _scaled(fingerprint: str, bounds: tuple[float, float] | None) -> str:
    if bounds is None:
        return fingerprint
    return f"{fingerprint},scale={_number(bounds[0])}-{_number(bounds[1])}"
