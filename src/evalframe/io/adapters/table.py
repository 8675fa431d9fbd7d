"""The table of harness layouts: detection, ``format=`` names, and the list users see.

Each layout lives in its own module of :mod:`evalframe.io.adapters`, which registers its
:class:`~evalframe.io.adapters.Adapter` s in :data:`LAYOUTS` with :func:`register` (and
exports them as ``ADAPTERS``). Modules are imported the first time the table is read, so
``import evalframe`` stays fast.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from pathlib import Path

import polars as pl

from evalframe._registry import Registry, canonical_name
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


#: Every layout, by name, in detection order (the order of :data:`MODULES`).
LAYOUTS: Registry[Adapter] = Registry(
    "adapter",
    noun="format",
    package="evalframe.io.adapters",
    modules=MODULES,
    by_module=True,
    columns=("format", "harness", "files", "level", "expects", "doc"),
    describe=lambda adapter: {
        "format": adapter.name, "harness": adapter.harness, "files": adapter.files,
        "level": adapter.level, "expects": adapter.expects, "doc": adapter.doc,
    },
)


def register(module: str, *adapters: Adapter) -> tuple[Adapter, ...]:
    """Add the layouts of the adapter module ``module`` to :data:`LAYOUTS`; returns them."""
    return tuple(LAYOUTS.add(adapter, module=module) for adapter in adapters)


def adapters() -> tuple[Adapter, ...]:
    """Every adapter, in detection order.

    >>> all(isinstance(adapter, Adapter) for adapter in adapters())
    True
    """
    return tuple(LAYOUTS.entries())


def format_names() -> list[str]:
    """Every value ``format=`` takes.

    >>> format_names()[:2]
    ['auto', 'table']
    """
    return [AUTO, TABLE, *LAYOUTS.names()]


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
    cleaned = canonical_name(name)
    if cleaned in (AUTO, TABLE) or cleaned in LAYOUTS:
        return cleaned
    raise EvalframeError(LAYOUTS.unknown(name, extra=(AUTO, TABLE)))


def adapter_named(name: str) -> Adapter:
    """The adapter called ``name`` (a resolved format that is not auto or table)."""
    return LAYOUTS.resolve(name)


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
    return LAYOUTS.frame()
