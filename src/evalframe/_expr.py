"""Helpers shared by metric functions: turning inputs into expressions and row guards."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import polars as pl

from evalframe._kernel_cache import KernelCache
from evalframe.errors import EvalframeError, RowError, register_locator

IntoExpr = str | pl.Expr


def parse_into_expr(value: IntoExpr) -> pl.Expr:
    """Return ``value`` as an expression: a string names a column.

    >>> parse_into_expr("pred").meta.output_name()
    'pred'
    """
    if isinstance(value, pl.Expr):
        return value
    if isinstance(value, str):
        return pl.col(value)
    raise TypeError(f"expected a column name or a polars expression, got {type(value).__name__}")


def describe(value: IntoExpr) -> str:
    """A short, human-readable name for a column or expression (for error messages)."""
    if isinstance(value, str):
        return repr(value)
    try:
        return repr(value.meta.output_name())
    except Exception:  # an expression with no single root column
        return str(value)


@dataclass(frozen=True)
class RowCheck:
    """A rule that rows must satisfy: ``invalid`` is True where a row breaks it.

    ``invalid`` is an expression, or a function of the guarded values (a Series) for
    a rule read off the values themselves, which then are computed only once.
    ``what`` says what was found (``"c > n"``), ``expected`` what is required.
    ``show`` are the expressions whose values are printed for the first bad row.
    """

    invalid: pl.Expr | Callable[[pl.Series], pl.Series]
    what: str
    expected: str
    show: tuple[tuple[str, pl.Expr], ...] = ()


@dataclass(frozen=True)
class PlanContext:
    """What the engine tells the guards of the plan it is building (one context variable).

    ``row_numbers``: the column that numbers the input's rows (else None);
    ``locate``: how an error found in a batch is located in the whole input;
    ``diagnosis``: while a failed plan is diagnosed, where guards record their checks.
    """

    row_numbers: str | None = None
    locate: Callable[[], EvalframeError] | None = None
    diagnosis: list[GuardRecord] | None = None


_NO_PLAN = PlanContext()
_PLAN: ContextVar[PlanContext | None] = ContextVar("evalframe_plan", default=None)


def _current_plan() -> PlanContext:
    return _PLAN.get() or _NO_PLAN


@contextmanager
def _plan(**changes: Any) -> Iterator[PlanContext]:
    context = replace(_current_plan(), **changes)
    token = _PLAN.set(context)
    try:
        yield context
    finally:
        _PLAN.reset(token)


@dataclass(frozen=True)
class GuardRecord:
    """A guard seen while diagnosing: its metric, checks, and a per-row failure bitmask.

    ``failures`` is an ``Int64`` expression whose bit ``j`` is set on rows that break
    ``checks[j]``.
    """

    metric: str
    checks: tuple[RowCheck, ...]
    failures: pl.Expr


@contextmanager
def numbered_rows(column: str) -> Iterator[None]:
    """Within the block, guards read row numbers from ``column`` (an input row index).

    The engine adds the index to the frame (a streaming-friendly counter) and
    builds its metric expressions inside this block. Expressions built outside
    number rows with ``pl.int_range(pl.len())``, which is also right but makes the
    streaming engine hold more of the input.
    """
    with _plan(row_numbers=column):
        yield


@contextmanager
def locating(locate: Callable[[], EvalframeError]) -> Iterator[None]:
    """Within the block, guards attach ``locate`` to the errors they raise."""
    with _plan(locate=locate):
        yield


@contextmanager
def diagnosing() -> Iterator[list[GuardRecord]]:
    """Within the block, guards never raise: they record their checks and failure masks."""
    with _plan(diagnosis=[]) as context:
        yield context.diagnosis


def _row_numbers() -> pl.Expr:
    column = _current_plan().row_numbers
    return pl.col(column) if column else pl.int_range(pl.len(), dtype=pl.Int64)


def guard(
    metric: str, values: pl.Expr, checks: Sequence[RowCheck], dtype: pl.DataType = pl.Float64
) -> pl.Expr:
    """Return ``values``, raising :class:`~evalframe.errors.RowError` when a row breaks a check.

    The checks run as vectorized expressions inside the same plan as the metric,
    so they hold at the expression level, lazily and in streaming mode alike.
    The message names the first offending row of the rows checked together (one
    batch), by its number in the input (see :func:`numbered_rows`). Plans built by
    the engine attach a locator to the error, which finds the first offending row
    of the whole input across every check (:func:`evalframe.errors.located`).
    """
    if not checks:
        return values
    checks = tuple(checks)
    shown = [expr for check in checks for _, expr in check.show]
    masks = [check.invalid for check in checks if isinstance(check.invalid, pl.Expr)]
    inputs = [values, _row_numbers(), *(mask.fill_null(False) for mask in masks), *shown]
    context = _current_plan()
    diagnosis = context.diagnosis
    if diagnosis is not None:
        diagnosis.append(GuardRecord(metric, checks, _failure_bits(checks, inputs, len(masks))))
        return values
    locate = context.locate

    def run(series: Sequence[pl.Series]) -> pl.Series:
        result, rows = series[0], series[1]
        found = _check_masks(checks, result, series[2 : 2 + len(masks)])
        offset = 2 + len(masks)
        firsts = [int(np.flatnonzero(mask)[0]) if mask.any() else None for mask in found]
        failing = [i for i, first in enumerate(firsts) if first is not None]
        if failing:
            index = min(failing, key=lambda i: firsts[i])
            start = offset + sum(len(check.show) for check in checks[:index])
            check = checks[index]
            message = _row_error(
                metric, check, found[index], rows, series[start : start + len(check.show)]
            )
            if locate is not None:
                register_locator(message, locate)
            raise RowError(message)
        return result

    return pl.map_batches(inputs, run, return_dtype=dtype, is_elementwise=True)


def _check_masks(
    checks: Sequence[RowCheck], result: pl.Series, given: Sequence[pl.Series]
) -> list[np.ndarray]:
    """One boolean numpy mask per check: True where the row breaks it."""
    masks = iter(given)
    found = []
    for check in checks:
        if isinstance(check.invalid, pl.Expr):
            found.append(next(masks).to_numpy())
        else:
            found.append(check.invalid(result).fill_null(False).to_numpy())
    return found


def _failure_bits(checks: Sequence[RowCheck], inputs: Sequence[pl.Expr], n_masks: int) -> pl.Expr:
    """An ``Int64`` per row: bit ``j`` set where the row breaks ``checks[j]``."""

    def run(series: Sequence[pl.Series]) -> pl.Series:
        found = _check_masks(checks, series[0], series[2 : 2 + n_masks])
        bits = np.zeros(len(series[0]), dtype=np.int64)
        for j, mask in enumerate(found):
            bits |= mask.astype(np.int64) << j
        return pl.Series(bits)

    return pl.map_batches(list(inputs), run, return_dtype=pl.Int64, is_elementwise=True)


def _row_error(
    metric: str, check: RowCheck, mask: np.ndarray, rows: pl.Series, shown: Sequence[pl.Series]
) -> str:
    first = int(np.flatnonzero(mask)[0])
    numbers = rows.to_numpy()
    # slice().to_list() gives Python values (a list, not a Series repr).
    found = ", ".join(
        f"{label}={series.slice(first, 1).to_list()[0]!r}"
        for (label, _), series in zip(check.show, shown, strict=True)
    )
    return (
        f"metric {metric!r}: {int(np.count_nonzero(mask))} row(s) have {check.what} "
        f"(counted in rows {numbers[0]}-{numbers[-1]}); expected {check.expected}. "
        f"First offending row: {numbers[first]}" + (f" ({found})" if found else "")
    )


def let(bindings: dict[str, pl.Expr], body: Callable[..., pl.Expr]) -> pl.Expr:
    """Evaluate ``body`` with each binding computed once, however often it is used.

    A polars expression tree repeats a sub-expression at every use; packing the
    values into a one-element list of structs and evaluating ``body`` inside
    ``list.eval`` refers to them by field instead. ``body`` must be row-wise.

    >>> pl.select(let({"x": pl.lit(3)}, lambda x: x * x + x)).item()
    12
    """
    fields = {name: pl.element().struct.field(name) for name in bindings}
    return pl.concat_list([pl.struct(**bindings)]).list.eval(body(**fields)).list.first()


def elementwise(
    inputs: Sequence[pl.Expr], kernel: Callable[[Sequence[pl.Series]], pl.Series], dtype
) -> pl.Expr:
    """A batched kernel over whole columns: ``kernel`` sees Series, never single rows."""
    return pl.map_batches(list(inputs), kernel, return_dtype=dtype, is_elementwise=True)


def by_distinct(
    expr: pl.Expr, build: Callable[[pl.Expr], pl.Expr], dtype: pl.DataType
) -> pl.Expr:
    r"""``build(expr)``, evaluated once per distinct value of ``expr`` (null included) in
    each batch and mapped back to the rows: for a costly expression (regular expressions
    over long replies) on a column with few distinct values.

    >>> frame = pl.DataFrame({"reply": ["[[A]]", "[[B]]", "[[A]]", None]})
    >>> frame.select(by_distinct(pl.col("reply"), lambda e: e.str.extract(r"\[\[(.)\]\]"),
    ...                          pl.String))["reply"].to_list()
    ['A', 'B', 'A', None]
    """

    def kernel(series: pl.Series) -> pl.Series:
        rows = pl.DataFrame({"value": series})
        distinct = rows.unique(maintain_order=True).with_columns(
            build(pl.col("value")).cast(dtype).alias("__result")
        )
        joined = rows.join(distinct, on="value", how="left", nulls_equal=True,
                           maintain_order="left")
        return joined["__result"].alias(series.name)

    return expr.map_batches(kernel, return_dtype=dtype, is_elementwise=True)


#: Bytes of cache keys (serialised input expressions) :func:`shared_kernel` keeps, at most.
SHARED_KERNEL_BYTES = 4 * 2**20
#: Bytes counted per kept expression besides its key (the expression and its node).
_ENTRY_OVERHEAD = 1024
#: A serialised input longer than this is not kept (an expression holding data).
_LONGEST_KEY = 64 * 2**10


def _key_bytes(key: tuple[Callable, str]) -> int:
    """What a kept expression counts against :data:`SHARED_KERNEL_BYTES`: its key's bytes."""
    return len(key[1]) + _ENTRY_OVERHEAD


#: Batched kernels already applied, by (kernel, serialised input expression).
_SHARED_KERNELS: KernelCache[tuple[Callable, str], pl.Expr] = KernelCache(
    "shared expressions", SHARED_KERNEL_BYTES, _key_bytes
)


def shared_kernel(
    expr: pl.Expr, kernel: Callable[[pl.Series], pl.Series], dtype: pl.DataType
) -> pl.Expr:
    """``expr.map_batches(kernel)``, the same expression object for the same input.

    Polars' common-subexpression elimination compares Python functions by identity,
    so returning one object per (kernel, input) lets metrics requested together
    share the kernel's work (a normalisation, say) instead of repeating it.

    The expressions are kept in a cache bounded by bytes (:data:`SHARED_KERNEL_BYTES` of
    keys, least recently used dropped first), whatever the data: an expression that
    reads no column (a literal, as a kernel evaluating a batch's rows eagerly builds)
    has nothing to share with and is built afresh, never serialised into a key nor kept
    (each batch's literal would be); nor is an input whose serialised form is longer than
    64 KiB (one that embeds data).

    >>> doubled = lambda s: s * 2
    >>> first = shared_kernel(pl.col("x"), doubled, pl.Int64)
    >>> shared_kernel(pl.col("x"), doubled, pl.Int64) is first
    True
    """
    if not expr.meta.root_names():
        return expr.map_batches(kernel, return_dtype=dtype, is_elementwise=True)
    try:
        serialised = expr.meta.serialize(format="json")
    except Exception:  # an expression polars cannot serialise: build it afresh
        return expr.map_batches(kernel, return_dtype=dtype, is_elementwise=True)
    if len(serialised) > _LONGEST_KEY:
        return expr.map_batches(kernel, return_dtype=dtype, is_elementwise=True)
    return _SHARED_KERNELS.get_or_build(
        (kernel, serialised),
        lambda: expr.map_batches(kernel, return_dtype=dtype, is_elementwise=True),
    )
