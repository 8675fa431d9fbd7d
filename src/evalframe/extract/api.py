"""``ef.extract``: the answers of a column of responses, as new columns of the frame.

:func:`extract` appends, for each extractor, the answer (``extracted``) and the rule that
found it (``extraction_rule``); :func:`extraction_expr` is the same as one expression (the
:data:`~evalframe.extract.table.EXTRACTION` struct) for ``with_columns`` / ``select``.

>>> import polars as pl, evalframe as ef
>>> df = pl.DataFrame({"prediction": ["so \\\\boxed{42}", "#### 7", None]})
>>> ef.extract(df, ["boxed", "gsm8k_answer"]).columns  # doctest: +NORMALIZE_WHITESPACE
['prediction', 'extracted_boxed', 'extraction_rule_boxed', 'extracted_gsm8k_answer',
 'extraction_rule_gsm8k_answer']
"""

from __future__ import annotations

import functools
import inspect
import sys
import types
from collections.abc import Mapping, Sequence
from typing import TypeVar

import polars as pl

from evalframe._expr import IntoExpr, parse_into_expr
from evalframe.errors import EvalframeError
from evalframe.extract.table import (
    EXTRACTION,
    EXTRACTORS,
    ExtractFunction,
    Extractor,
    extraction,
    resolve_extractor,
)

__all__ = ["extract", "extraction_expr"]

#: One extractor as users give it: a name from the table, an Extractor, or a function.
OneExtractor = str | Extractor | ExtractFunction
#: One extractor, a list of them, or a mapping label -> extractor.
Extractors = OneExtractor | Sequence[OneExtractor] | Mapping[str, OneExtractor]

Frame = TypeVar("Frame", pl.DataFrame, pl.LazyFrame)

_TEXT = (pl.String, pl.Null)


def _identity(text: pl.Expr) -> pl.Expr:
    """The ``"none"`` extractor: the text itself, rule ``"text"`` (null for null text)."""
    rule = pl.when(text.is_null()).then(pl.lit(None, dtype=pl.String)).otherwise(pl.lit("text"))
    return extraction(text, rule)


#: How :func:`resolve` words an extractor name that is not in the table.
UNKNOWN_EXTRACTOR = (
    "{where}unknown {noun} {name}; the extractor table has {quoted} (see "
    "ef.list_extractors() or 'evalframe extractors'), or give an Extractor or a function "
    "from pl.Expr to pl.Expr{hint}"
)


def _table_names() -> str:
    return ", ".join(map(repr, EXTRACTORS))


def resolve(extractor: OneExtractor, where: str = "extract") -> tuple[str, ExtractFunction]:
    """The (name, struct function) of one extractor; ``"none"`` is the text itself.

    An unknown name or an object that is no extractor is an :class:`EvalframeError` that
    lists the table.
    """
    if isinstance(extractor, str) and extractor != "none":
        if extractor not in EXTRACTORS:
            raise EvalframeError(EXTRACTORS.unknown(extractor, where, message=UNKNOWN_EXTRACTOR))
    elif not isinstance(extractor, str | Extractor) and not callable(extractor):
        raise EvalframeError(
            f"{where}: {extractor!r} is not an extractor; expected a name from the extractor "
            f"table ({_table_names()}), an Extractor or a function from pl.Expr to pl.Expr"
        )
    name, function = resolve_extractor(where, extractor)
    return name, function if function is not None else _identity


def resolve_many(
    extractors: Extractors, where: str = "extract"
) -> tuple[list[tuple[str, ExtractFunction]], bool]:
    """``(label, function)`` for each extractor given, and whether one was given alone.

    A list labels each by its name (a function by its ``__name__``), a mapping by its keys.
    """
    if isinstance(extractors, Mapping):
        entries = [(str(label), resolve(value, where)[1]) for label, value in extractors.items()]
        single = False
    elif isinstance(extractors, str | Extractor) or callable(extractors):
        return [resolve(extractors, where)], True
    elif isinstance(extractors, Sequence):
        entries = []
        for value in extractors:
            name, function = resolve(value, where)
            entries.append((name.removeprefix("custom:"), function))
        single = False
    else:
        raise EvalframeError(
            f"{where}: extractors must be a name, an Extractor, a function, a list of them or "
            f"a mapping label -> extractor; got {type(extractors).__name__}"
        )
    if not entries:
        raise EvalframeError(f"{where}: no extractor given; the table has {_table_names()}")
    labels = [label for label, _ in entries]
    repeated = sorted({label for label in labels if labels.count(label) > 1})
    if repeated:
        raise EvalframeError(
            f"{where}: extractor(s) {repeated} given more than once; label them with a "
            "mapping {label: extractor}"
        )
    return entries, single


def over_lists(text: pl.Expr, function: ExtractFunction) -> pl.Expr:
    """``function`` over every element of a ``List(String)`` column: ``List(EXTRACTION)``.

    The ``list.eval`` runs inside one batched kernel, where polars' planner does not see
    it (a ``list.eval`` in a ``with_columns`` turns off common-subexpression elimination
    for the whole call).
    """

    def kernel(series: pl.Series) -> pl.Series:
        return series.cast(pl.List(pl.String)).list.eval(function(pl.element()))

    return text.map_batches(kernel, return_dtype=pl.List(EXTRACTION), is_elementwise=True)


def extraction_expr(
    extractor: OneExtractor, column: IntoExpr = "prediction", *, lists: bool = False
) -> pl.Expr:
    """The extraction of ``column`` as one expression: the ``EXTRACTION`` struct.

    Parameters
    ----------
    extractor
        A name from the extractor table (``"boxed"``, ``"gsm8k_answer"``...; see
        :func:`evalframe.list_extractors`), an :class:`~evalframe.extract.table.Extractor`,
        or a function from ``pl.Expr`` to ``pl.Expr`` (returning the struct or a ``String``
        answer). ``"none"`` is the text itself (rule ``"text"``).
    column
        The responses: a column name or a ``String`` expression.
    lists
        ``True`` when the column is ``List(String)`` (several generations per row): the
        result is then ``List(EXTRACTION)``, one struct per generation.

    Returns
    -------
    pl.Expr
        ``Struct{extracted: String, rule: String}`` per row (``List`` of it with ``lists``),
        named as the column; ``.struct.field("extracted")`` is the answer,
        ``.struct.unnest()`` gives both fields as columns.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"response": ["x \\\\boxed{4}", "no box", None]})
    >>> df.with_columns(extraction_expr("boxed", "response").alias("answer"))
    shape: (3, 2)
    ┌─────────────┬───────────────┐
    │ response    ┆ answer        │
    │ ---         ┆ ---           │
    │ str         ┆ struct[2]     │
    ╞═════════════╪═══════════════╡
    │ x \\boxed{4} ┆ {"4","boxed"} │
    │ no box      ┆ {null,"none"} │
    │ null        ┆ {null,null}   │
    └─────────────┴───────────────┘
    """
    _, function = resolve(extractor, "extraction_expr")
    text = parse_into_expr(column)
    if lists:
        return over_lists(text, function)
    return function(text)


def check_column(schema: pl.Schema, column: str, where: str) -> bool:
    """Whether ``column`` holds lists; an error when it is absent or not text."""
    if not isinstance(column, str):
        raise EvalframeError(f"{where}: column= must be a column name (str), got {column!r}")
    if column not in schema:
        raise EvalframeError(
            f"{where}: no column {column!r} (give the responses' column with column=, CLI: "
            f"--column); available: {', '.join(schema.names())}"
        )
    dtype = schema[column]
    if dtype in _TEXT:
        return False
    if isinstance(dtype, pl.List) and dtype.inner in _TEXT:
        return True
    raise EvalframeError(
        f"{where}: column {column!r} has dtype {dtype}; expected str (one response per row) "
        "or list[str] (several generations)"
    )


def output_names(
    labels: Sequence[str], single: bool, name: str | None
) -> list[tuple[str, str]]:
    """The (answer, rule) column names of each extractor."""
    answer = name if name is not None else "extracted"
    rule = f"{name}_rule" if name is not None else "extraction_rule"
    if single:
        return [(answer, rule)]
    return [(f"{answer}_{label}", f"{rule}_{label}") for label in labels]


def extract(
    frame: Frame,
    extractor: Extractors,
    *,
    column: str = "prediction",
    name: str | None = None,
    timeout: float | None = None,
) -> Frame:
    """The frame with the answers of ``column`` appended: ``extracted``, ``extraction_rule``.

    Parameters
    ----------
    frame
        A ``DataFrame`` or ``LazyFrame``; the result is of the same kind (a LazyFrame
        stays lazy: nothing is computed).
    extractor
        One extractor (a name from the extractor table, an
        :class:`~evalframe.extract.table.Extractor`, or a function from ``pl.Expr`` to
        ``pl.Expr``), a list of them, or a mapping label -> extractor. ``"none"`` is the
        text itself (rule ``"text"``), a baseline for :func:`evalframe.audit_extractors`.
    column
        The responses: ``String``, or ``List(String)`` for several generations per row.
    name
        The answer column's name (default ``"extracted"``); the rule column is then
        ``<name>_rule`` (default ``"extraction_rule"``).
    timeout
        Seconds one response's extraction may take, for the extractors that parse with
        sympy (``lighteval_math``, ``lighteval_latex``, ``lighteval_expr``; default 10 s,
        see :func:`evalframe.extract.lighteval_math.lighteval_math`): a response past it
        is not extracted (answer null, rule ``"timeout"``) and counted in a warning that
        names the rows. The other extractors are regular expressions run by polars and
        take none; naming only such extractors with ``timeout=`` is an error.

    Returns
    -------
    pl.DataFrame or pl.LazyFrame
        Every input column in order, then per extractor the answer (``String``) and the
        rule (``String``): ``extracted`` and ``extraction_rule`` for one extractor;
        suffixed by the extractor's name (or the mapping's label) for several
        (``extracted_boxed``, ``extraction_rule_boxed``). A ``List(String)`` column gives
        ``List(String)`` columns, one element per generation.

    Notes
    -----
    Null semantics: a null response gives a null rule and, unless the extractor says
    otherwise, a null answer; where the extractor finds nothing the answer is the
    reference's own fallback
    (``"[invalid]"`` for ``gsm8k_answer``) or null (``boxed``), and the rule is
    ``"none"``. A null answer is a missing answer (``aggregate`` counts it in
    ``n_missing`` when a metric extracts it with ``extractor=``).

    Raises
    ------
    EvalframeError
        A missing column, a column that is not text, an unknown extractor (the message
        lists the table), a custom extractor that gives no polars expression, output
        columns that already exist, or a ``timeout`` no extractor given takes.

    Examples
    --------
    >>> import polars as pl, evalframe as ef
    >>> df = pl.DataFrame({"prediction": ["The answer: \\\\boxed{12}", "it is 7", None]})
    >>> ef.extract(df, "boxed")
    shape: (3, 3)
    ┌────────────────────────┬───────────┬─────────────────┐
    │ prediction             ┆ extracted ┆ extraction_rule │
    │ ---                    ┆ ---       ┆ ---             │
    │ str                    ┆ str       ┆ str             │
    ╞════════════════════════╪═══════════╪═════════════════╡
    │ The answer: \\boxed{12} ┆ 12        ┆ boxed           │
    │ it is 7                ┆ null      ┆ none            │
    │ null                   ┆ null      ┆ null            │
    └────────────────────────┴───────────┴─────────────────┘
    """
    if not isinstance(frame, pl.DataFrame | pl.LazyFrame):
        raise EvalframeError(
            f"extract: expected a polars DataFrame or LazyFrame, got {type(frame).__name__} "
            "(read files with ef.load first)"
        )
    if name is not None and (not isinstance(name, str) or not name):
        raise EvalframeError(f"extract: name= must be a non-empty column name, got {name!r}")
    entries, single = resolve_many(extractor)
    if timeout is not None:
        entries = _with_timeout(entries, timeout)
    schema = frame.collect_schema()
    lists = check_column(schema, column, "extract")
    names = output_names([label for label, _ in entries], single, name)
    flat = [column_name for pair in names for column_name in pair]
    clashing = [column_name for column_name in flat if column_name in schema]
    if clashing:
        raise EvalframeError(
            f"extract: the frame already has column(s) {clashing}; pass name= to name the "
            "answer columns differently, or drop them first"
        )
    text = pl.col(column) if schema[column] != pl.Null else pl.col(column).cast(pl.String)
    structs = {}
    for index, (_, function) in enumerate(entries):
        key = _unused(schema, f"__evalframe_extraction_{index}")
        structs[key] = over_lists(text, function) if lists else function(text)
    fields = []
    for key, (answer, rule) in zip(structs, names, strict=True):
        for field, output in (("extracted", answer), ("rule", rule)):
            if lists:
                fields.append(
                    pl.col(key).list.eval(pl.element().struct.field(field)).alias(output)
                )
            else:
                fields.append(pl.col(key).struct.field(field).alias(output))
    return frame.with_columns(**structs).with_columns(fields).drop(list(structs))


def _with_timeout(
    entries: list[tuple[str, ExtractFunction]], timeout: float
) -> list[tuple[str, ExtractFunction]]:
    """The extractors that take a ``timeout`` keyword, given ``timeout``; the others as are."""
    from evalframe.extract.lighteval_math import check_timeout

    check_timeout("extract", timeout)
    out, taken = [], False
    for label, function in entries:
        try:
            parameters = inspect.signature(function).parameters
        except (TypeError, ValueError):  # a builtin or C function: no keywords to pass
            parameters = {}
        if "timeout" in parameters:
            function = functools.partial(function, timeout=timeout)
            taken = True
        out.append((label, function))
    if not taken:
        labels = ", ".join(repr(label) for label, _ in entries)
        raise EvalframeError(
            f"extract: timeout={timeout!r} is for the extractors that parse with sympy "
            f"(lighteval_math, lighteval_latex, lighteval_expr); {labels} take(s) none "
            "(regular expressions run by polars need no timeout)"
        )
    return out


def _unused(schema: pl.Schema, base: str) -> str:
    name = base
    while name in schema:
        name += "_"
    return name


class _CallablePackage(types.ModuleType):
    """The :mod:`evalframe.extract` package, callable as :func:`extract`."""

    def __call__(self, *args, **kwargs):
        return extract(*args, **kwargs)

    @property
    def __signature__(self) -> inspect.Signature:
        return inspect.signature(extract)


def make_callable(package: str) -> None:
    """Make the package ``package`` callable as :func:`extract` (``ef.extract(frame, ...)``).

    ``evalframe.extract`` is both the package of extractors and the function: a plain
    function bound to that name would hide the package from ``import
    evalframe.extract.<module> as name``.
    """
    sys.modules[package].__class__ = _CallablePackage
