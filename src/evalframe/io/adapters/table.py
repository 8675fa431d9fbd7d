"""The table of harness layouts: detection, ``format=`` names, and the list users see.

Each layout lives in its own module of :mod:`evalframe.io.adapters` and exports ``ADAPTERS``,
a tuple of :class:`~evalframe.io.adapters.Adapter`. Modules are imported on first use, so
``import evalframe`` stays fast.
"""

from __future__ import annotations

import importlib
import zlib
from collections.abc import Sequence
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
    "arena_hard",
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
    """Every layout and what each expects (the long list ``evalframe formats`` prints)."""
    return "; ".join(
        f"{adapter.name} ({adapter.files}: {adapter.expects})" for adapter in adapters()
    )


def closest(keys: Sequence[str]) -> tuple[Adapter, list[str]] | None:
    """The layout whose record (or object) ``keys`` come nearest to, and the fields of it they
    lack; ``None`` when they share no field with any layout.

    >>> adapter, lacking = closest(["results", "versions"])
    >>> adapter.name, lacking
    ('lm_eval_results', ['configs', 'n-shot'])
    >>> closest(["lr", "layers"]) is None
    True
    """
    present = set(keys)
    best: tuple[float, Adapter] | None = None
    for adapter in adapters():
        fields = set(adapter.fields)
        if not fields or not present & fields:
            continue
        fit = len(present & fields) / len(fields)
        if best is None or fit > best[0]:
            best = (fit, adapter)
    if best is None:
        return None
    adapter = best[1]
    return adapter, [field for field in adapter.fields if field not in present]


def describe(adapter: Adapter) -> str:
    """A layout as one short phrase: ``"lm_eval (lm-evaluation-harness samples_...)"``.

    >>> describe(adapter_named("squad_predictions"))
    'squad_predictions (SQuAD predictions JSON {question_id: answer})'
    """
    return f"{adapter.name} ({adapter.harness} {adapter.files})"


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
