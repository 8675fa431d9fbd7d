"""The one table of answer extractors: name -> function, the reference it reproduces, meaning.

An extractor turns a raw response (a ``String`` expression) into the answer a harness
would score, as a ``Struct`` of two fields (:data:`EXTRACTION`):

- ``extracted`` (``String``): the answer, exactly as the reference extracts it. Where
  nothing is found it is the reference's own fallback (lm-evaluation-harness's
  ``"[invalid]"``), or null where the reference gives nothing (MMLU-Pro's ``pred``);
  a null answer is a missing answer, which ``aggregate`` counts (``n_missing``);
- ``rule`` (``String``): which rule of the extractor fired (``"answer_is"``,
  ``"boxed"``, ``"strict-match"``...), ``"none"`` where nothing was found, ``"timeout"``
  where an extractor that parses ran out of time on the response (its answer is null),
  null where the response is null.

Every metric that extracts takes ``extractor=``: a name from this table, an
:class:`Extractor`, or a function from ``pl.Expr`` to ``pl.Expr`` (returning the
struct, or a plain ``String`` answer). The name is what signatures record;
``evalframe extractors`` and the metric reference list the table. Each extractor is
registered beside its function; the modules that register them (:data:`EXTRACTOR_MODULES`)
are imported the first time the table is read.

>>> import polars as pl
>>> from evalframe.extract.table import EXTRACTION, Extractor, register_extractor
>>> EXTRACTION
Struct({'extracted': String, 'rule': String})
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import polars as pl

from evalframe._kernel_cache import KernelCache
from evalframe._registry import UNKNOWN_OPTION, Registry
from evalframe.errors import EvalframeError

__all__ = [
    "EXTRACTION",
    "EXTRACTORS",
    "ExtractFunction",
    "Extractor",
    "ExtractorLike",
    "answer_of",
    "extraction",
    "list_extractors",
    "register_extractor",
    "resolve_extractor",
]

#: What every extractor returns per row.
EXTRACTION = pl.Struct({"extracted": pl.String, "rule": pl.String})

ExtractFunction = Callable[[pl.Expr], pl.Expr]


@dataclass(frozen=True)
class Extractor:
    """A named answer extractor.

    ``function`` maps a ``String`` expression to an :data:`EXTRACTION` struct
    expression, row-wise (it must keep the row count and order).
    """

    name: str
    function: ExtractFunction
    reference: str
    meaning: str

    def __call__(self, text: pl.Expr | str) -> pl.Expr:
        expr = pl.col(text) if isinstance(text, str) else text
        return self.function(expr)


#: What an ``extractor=`` option takes: a table name, an Extractor, a function, or None.
ExtractorLike = str | Extractor | ExtractFunction | None

#: The modules of :mod:`evalframe.extract` that register extractors, imported the first
#: time the table is read (``import evalframe`` stays cheap).
EXTRACTOR_MODULES = (
    "simple", "mmlu_pro", "lighteval_indices", "lighteval_math", "lm_eval",
    "lm_eval_pipelines", "inspect_answer",
)

#: Every extractor, by name (listed sorted: the order extractors register in depends on
#: which module a program imports first, and the list must not).
EXTRACTORS: Registry[Extractor] = Registry(
    "extractor", make=Extractor, package="evalframe.extract", modules=EXTRACTOR_MODULES,
    sort=True, columns=("name", "reference", "meaning"), message=UNKNOWN_OPTION,
)


def register_extractor(extractor: Extractor) -> Extractor:
    """Add ``extractor`` to the table (a name may be registered once)."""
    return EXTRACTORS.add(extractor)


def extraction(extracted: pl.Expr, rule: pl.Expr) -> pl.Expr:
    """The :data:`EXTRACTION` struct from its two fields (both cast to ``String``)."""
    return pl.struct(
        extracted.cast(pl.String).alias("extracted"), rule.cast(pl.String).alias("rule")
    )


def _as_struct(function: ExtractFunction) -> ExtractFunction:
    """A user function returning a plain answer, wrapped to return the struct."""

    def run(text: pl.Expr) -> pl.Expr:
        answer = function(text)
        rule = (
            pl.when(text.is_null()).then(pl.lit(None, dtype=pl.String))
            .when(answer.is_null()).then(pl.lit("none"))
            .otherwise(pl.lit("custom"))
        )
        return extraction(answer, rule)

    return run


def resolve_extractor(
    metric: str, extractor: ExtractorLike
) -> tuple[str, ExtractFunction | None]:
    """The (name, struct function) of ``extractor``; ``None`` / ``"none"``: no extraction.

    A function that is not in the table is named by its ``__name__`` (in signatures:
    ``custom:<name>``); it may return the :data:`EXTRACTION` struct or a ``String``
    answer (the struct is then built around it; on a ``String`` result the ``rule``
    is ``"custom"``). An unknown name is an :class:`evalframe.EvalframeError` that
    lists the table.
    """
    if extractor is None or extractor == "none":
        return "none", None
    if isinstance(extractor, Extractor):
        if EXTRACTORS.get(extractor.name) is not extractor:  # the user's own
            _check_returns_an_expression(metric, extractor.name, extractor.function)
        return extractor.name, extractor.function
    if not isinstance(extractor, str) and not callable(extractor):
        raise EvalframeError(
            f"metric {metric!r}: extractor={extractor!r} is invalid; expected a name "
            f"({', '.join(map(repr, EXTRACTORS))}), an Extractor or a function"
        )
    name, entry = EXTRACTORS.named(extractor, f"metric {metric!r}")
    if entry is not None:
        return entry.name, entry.function
    _check_returns_an_expression(metric, name, extractor)
    return name, _struct_or_wrap(extractor)


_API = ("extract", "extraction_expr", "audit_extractors")


def _check_returns_an_expression(metric: str, name: str, function: ExtractFunction) -> None:
    """An :class:`EvalframeError` naming the extractor when ``function`` gives no expression.

    The function is called once on ``pl.col("text")`` (it builds an expression; no data is
    read): one that raises there, or returns anything but a ``pl.Expr`` (a function
    returning ``None``, or one written for a single string), is reported now rather than
    as a traceback from inside a polars plan.

    >>> try:
    ...     _check_returns_an_expression("extract", "custom:f", lambda text: None)
    ... except ValueError as error:
    ...     print(str(error)[:72])
    extract: extractor 'custom:f' returned None, not a polars expression; an
    """
    where = metric if metric in _API else f"metric {metric!r}"
    hint = (
        "an extractor is a function from pl.Expr to pl.Expr, called once to build the "
        "extraction (not per row): return the answer as a String expression (e.g. "
        r'text.str.extract(r"(\d+)")) or the EXTRACTION struct'
    )
    try:
        result = function(pl.col("text"))
    except Exception as error:
        raise EvalframeError(
            f"{where}: extractor {name!r} failed when given a polars expression "
            f"({type(error).__name__}: {error}); {hint}"
        ) from error
    if not isinstance(result, pl.Expr):
        shown = "None" if result is None else f"{type(result).__name__} {result!r:.60}"
        raise EvalframeError(
            f"{where}: extractor {name!r} returned {shown}, not a polars expression; {hint}"
        )


def _struct_or_wrap(function: ExtractFunction) -> ExtractFunction:
    """Use ``function``'s struct as it is, or wrap a ``String`` result (decided on a probe)."""
    probe = pl.DataFrame({"text": pl.Series([], dtype=pl.String)}).lazy()
    try:
        dtype = probe.select(function(pl.col("text"))).collect_schema().dtypes()[0]
    except Exception:  # let the real call report the error, with the real data
        return function
    if isinstance(dtype, pl.Struct):
        return function
    return _as_struct(function)


def answer_of(
    text: pl.Expr, metric: str, extractor: ExtractorLike
) -> pl.Expr:
    """``text`` with ``extractor`` applied: the ``extracted`` field (``text`` when none).

    ``text`` may be ``String`` or ``List(String)`` (each element extracted). Use it
    in a metric before its comparison.
    """
    _, function = resolve_extractor(metric, extractor)
    if function is None:
        return text
    return extracted_text(text, function)


def extracted_text(text: pl.Expr, function: ExtractFunction) -> pl.Expr:
    """The ``extracted`` field of ``function`` over a ``String`` or ``List(String)`` column.

    A list column is extracted element by element in one flat pass (explode, extract,
    implode per row), never per row in Python. One kernel object serves each function, so
    polars' common-subexpression elimination (which compares Python functions by identity)
    runs an extraction once however many metrics of a request read it.
    """
    kernel = _KERNELS.get_or_build(function, lambda: _extracted_kernel(function))
    return text.map_batches(kernel, is_elementwise=True)


#: The batched kernel of each extract function (see :func:`extracted_text`).
_KERNELS: KernelCache[ExtractFunction, Callable[[pl.Series], pl.Series]] = KernelCache(
    "extractors", 256
)


def _extracted_kernel(function: ExtractFunction) -> Callable[[pl.Series], pl.Series]:
    def run(series: pl.Series) -> pl.Series:
        if series.dtype == pl.Null:  # an all-null column read from JSON has no type
            series = series.cast(pl.String)
        elif isinstance(series.dtype, pl.List) and series.dtype.inner == pl.Null:
            series = series.cast(pl.List(pl.String))
        if isinstance(series.dtype, pl.List):
            frame = pl.DataFrame({"values": series})
            flat = frame.with_row_index("__row").explode(
                "values", keep_nulls=False, empty_as_null=False
            )
            done = flat.select(
                pl.col("__row"),
                function(pl.col("values")).struct.field("extracted").alias("values"),
            )
            lists = done.group_by("__row", maintain_order=True).agg(pl.col("values"))
            back = (
                frame.with_row_index("__row")
                .select("__row", pl.col("values").is_null().alias("__null"))
                .join(lists, on="__row", how="left", maintain_order="left")
                .select(
                    pl.when(pl.col("__null")).then(None)
                    .otherwise(pl.col("values").fill_null(pl.lit([], dtype=pl.List(pl.String))))
                    .alias("values")
                )
            )
            return back.to_series().alias(series.name)
        frame = pl.DataFrame({"values": series})
        return frame.select(function(pl.col("values")).struct.field("extracted")).to_series().alias(
            series.name
        )

    return run


def list_extractors() -> pl.DataFrame:
    """The extractor table as a DataFrame (name, reference, meaning), sorted by name."""
    return EXTRACTORS.frame()
