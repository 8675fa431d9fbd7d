"""The table of harness layouts: detection, ``format=`` names, and the list users see.

Each layout lives in its own module of :mod:`evalframe.io.adapters` and exports ``ADAPTERS``,
a tuple of :class:`~evalframe.io.adapters.Adapter`. Modules are imported on first use, so
``import evalframe`` stays fast.
"""

from __future__ import annotations

import importlib
import zlib
from functools import cache
from pathlib import Path

import polars as pl

from evalframe.errors import EvalframeError
from evalframe.io.adapters._adapter import Adapter
from evalframe.io.adapters._probe import Probe

#: Adapter modules, in detection order (the most specific layouts first).
MODULES: tuple[str, ...] = (
    "lm_eval",
    "lm_eval_results",
    "lighteval",
    "inspect",
    "squad",
    "alpaca_eval",
    "mtbench",
    "helm",
    "helm_stats",
    "every_eval_ever",
)

#: ``format=`` values that are not adapters.
AUTO = "auto"
TABLE = "table"


@cache
def adapters() -> tuple[Adapter, ...]:
    """Every adapter, in detection order.

    >>> all(isinstance(adapter, Adapter) for adapter in adapters())
    True
    """
    found: list[Adapter] = []
    for module in MODULES:
        found.extend(importlib.import_module(f"evalframe.io.adapters.{module}").ADAPTERS)
    names = [adapter.name for adapter in found]
    duplicated = sorted({name for name in names if names.count(name) > 1})
    if duplicated:
        raise RuntimeError(f"adapter names used twice: {duplicated}")
    return tuple(found)


def format_names() -> list[str]:
    """Every value ``format=`` takes.

    >>> format_names()[:2]
    ['auto', 'table']
    """
    return [AUTO, TABLE, *(adapter.name for adapter in adapters())]


def resolve_format(name: str | None) -> str:
    """``name`` checked against the known formats (``None`` is ``"auto"``).

    >>> resolve_format(None)
    'auto'
    >>> resolve_format("tabel")
    Traceback (most recent call last):
    ...
    evalframe.errors.EvalframeError: unknown format 'tabel'; did you mean 'table'? ...
    """
    if name is None:
        return AUTO
    if not isinstance(name, str):
        raise EvalframeError(f"format={name!r} must be a string; known: {format_names()}")
    known = format_names()
    cleaned = name.strip().lower().replace("-", "_")
    if cleaned in known:
        return cleaned
    import difflib

    close = difflib.get_close_matches(cleaned, known, n=1)
    hint = f"did you mean {close[0]!r}? " if close else ""
    raise EvalframeError(f"unknown format {name!r}; {hint}known formats: {', '.join(known)}")


def adapter_named(name: str) -> Adapter:
    """The adapter called ``name`` (a resolved format that is not auto or table)."""
    for adapter in adapters():
        if adapter.name == name:
            return adapter
    raise EvalframeError(f"unknown format {name!r}; known formats: {', '.join(format_names())}")


def by_extension(path: Path) -> Adapter | None:
    """The adapter that alone reads files with ``path``'s extension, if any (``.eval``)."""
    name = path.name.lower()
    for adapter in adapters():
        if any(name.endswith(extension) for extension in adapter.extensions):
            return adapter
    return None


def detect(probe: Probe) -> Adapter | None:
    """The first adapter whose layout ``probe``'s file is in, or ``None`` (a plain table)."""
    for adapter in adapters():
        try:
            if adapter.detect(probe):
                return adapter
        except (OSError, EOFError, ValueError, zlib.error, pl.exceptions.PolarsError):
            continue
    return None


def tried() -> str:
    """The layouts detection tried and what each expects, for an error message."""
    return "; ".join(
        f"{adapter.name} ({adapter.files}: {adapter.expects})" for adapter in adapters()
    )


def list_formats() -> pl.DataFrame:
    """The layouts evalframe reads: name, harness, files, level, what each expects, docs.

    >>> list_formats().columns
    ['format', 'harness', 'files', 'level', 'expects', 'doc']
    """
    rows = [
        (adapter.name, adapter.harness, adapter.files, adapter.level, adapter.expects, adapter.doc)
        for adapter in adapters()
    ]
    return pl.DataFrame(
        rows,
        schema=["format", "harness", "files", "level", "expects", "doc"],
        orient="row",
    )
