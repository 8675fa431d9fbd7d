"""One kind of plug-in table, used by every kind of plug-in.

Metrics, normalisers, extractors, adapters, judge formats and policies, and the
statistics methods (standard errors, intervals, comparison tests) each live in a
:class:`Registry`: entries are registered beside the function they describe (a decorator,
or :meth:`Registry.add`), looked up by name with suggestions for a near miss, listed as a
DataFrame, and loaded lazily (the modules that register entries are imported the first
time the table is read, so ``import evalframe`` stays cheap).

A value given for a plug-in may be a name, an entry, or a plain function: a function
that is not in the table is the user's own and is named ``custom:<function name>``
(:func:`custom_name`), which is what signatures record.

Every table is in :data:`TABLES`, which the per-table invariant tests walk.

>>> from dataclasses import dataclass
>>> @dataclass(frozen=True)
... class Colour:
...     name: str
...     function: object
...     meaning: str
>>> colours = Registry("colour", make=Colour, columns=("name", "meaning"), listed=False)
>>> @colours.decorator(name="red", meaning="the colour of blood")
... def red(text):
...     return text
>>> colours.resolve("red").meaning
'the colour of blood'
>>> colours.resolve("rde")
Traceback (most recent call last):
...
evalframe.errors.EvalframeError: unknown colour 'rde'; did you mean 'red'? Known colours: red
>>> colours.named(str.upper, where="demo")
('custom:upper', None)
>>> colours.frame().row(0)
('red', 'the colour of blood')
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Generic, TypeVar

import polars as pl

from evalframe.errors import EvalframeError

__all__ = ["TABLES", "Registry", "canonical_name", "custom_name"]

T = TypeVar("T")

#: Every registry, by kind (``"metric"``, ``"extractor"``, ...).
TABLES: dict[str, Registry[Any]] = {}


def canonical_name(name: str) -> str:
    """A name as users may misspell it compared: stripped, lower case, ``-`` as ``_``.

    >>> canonical_name(" Exact-Match ")
    'exact_match'
    """
    return name.strip().lower().replace("-", "_")


def custom_name(function: Callable[..., Any]) -> str:
    """What a user's own function is called in signatures: ``custom:<its __name__>``.

    >>> custom_name(len)
    'custom:len'
    >>> custom_name(lambda text: text)
    'custom:<lambda>'
    """
    return f"custom:{getattr(function, '__name__', 'function')}"


class Registry(Generic[T]):
    """A table of named plug-ins of one kind.

    ``make`` builds an entry from keyword fields (``function=`` included) for
    :meth:`decorator`; ``package`` and ``modules`` name the modules whose import registers
    the built-in entries (imported on the first read); ``columns`` are the entry
    attributes :meth:`frame` lists (all as strings unless ``dtypes`` says otherwise);
    ``sort`` lists entries by name rather than in registration order; ``plural`` is the
    kind's plural in messages. ``listed=False`` keeps a table out of :data:`TABLES` (a
    table built in an example or a test).
    """

    def __init__(
        self,
        kind: str,
        *,
        make: Callable[..., T] | None = None,
        package: str | None = None,
        modules: Sequence[str] = (),
        columns: Sequence[str] = ("name",),
        dtypes: dict[str, pl.DataType] | None = None,
        describe: Callable[[T], dict[str, Any]] | None = None,
        sort: bool = False,
        plural: str | None = None,
        listed: bool = True,
    ) -> None:
        self.kind = kind
        self.plural = plural or f"{kind}s"
        self.make = make
        self.package = package
        self.modules = tuple(modules)
        self.columns = tuple(columns)
        self.dtypes = dict(dtypes or {})
        self.describe = describe
        self.sort = sort
        self._entries: dict[str, T] = {}
        self._loaded = not self.modules
        if listed:
            if kind in TABLES:
                raise ValueError(f"a registry of {self.plural} exists already")
            TABLES[kind] = self

    # --- registering --------------------------------------------------------------------

    def add(self, entry: T) -> T:
        """Register ``entry`` under its ``name`` (a name is registered once)."""
        name = entry.name  # type: ignore[attr-defined]
        if name in self._entries:
            raise ValueError(f"{self.kind} {name!r} is registered twice")
        self._entries[name] = entry
        return entry

    def decorator(self, **fields: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """A decorator that registers the function it decorates, returned unchanged.

        The entry is ``make(function=<the function>, **fields)``.
        """
        if self.make is None:
            raise TypeError(f"the {self.kind} registry registers entries, not functions")
        make = self.make

        def register(function: Callable[..., Any]) -> Callable[..., Any]:
            self.add(make(function=function, **fields))
            return function

        return register

    # --- reading ------------------------------------------------------------------------

    def load(self) -> None:
        """Import the modules that register the built-in entries, once."""
        if self._loaded:
            return
        self._loaded = True  # first: the modules' own reads of the table do not recurse
        try:
            for module in self.modules:
                importlib.import_module(f"{self.package}.{module}" if self.package else module)
        except BaseException:
            self._loaded = False
            raise

    def get(self, name: str, default: T | None = None) -> T | None:
        self.load()
        return self._entries.get(name, default)

    def __contains__(self, name: object) -> bool:
        self.load()
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        self.load()
        return iter(self.names())

    def __len__(self) -> int:
        self.load()
        return len(self._entries)

    def __getitem__(self, name: str) -> T:
        return self.resolve(name)

    def names(self) -> list[str]:
        """Every registered name (sorted when the table sorts)."""
        self.load()
        return sorted(self._entries) if self.sort else list(self._entries)

    def entries(self) -> list[T]:
        """Every entry, in :meth:`names` order."""
        return [self._entries[name] for name in self.names()]

    def suggestions(self, name: str, known: Sequence[str] | None = None) -> list[str]:
        """Known names close to ``name``: the same up to case and ``-``/``_``, else similar."""
        known = list(self.names() if known is None else known)
        wanted = canonical_name(name)
        same = [candidate for candidate in known if canonical_name(candidate) == wanted]
        if same:
            return same
        canonical = {canonical_name(candidate): candidate for candidate in known}
        return [canonical[c] for c in difflib.get_close_matches(wanted, list(canonical), n=3)]

    def unknown(self, name: object, where: str | None = None, extra: Sequence[str] = ()) -> str:
        """The message for a name that is not registered: suggestions, then every name."""
        known = [*extra, *self.names()]
        close = self.suggestions(name, known) if isinstance(name, str) else []
        hint = f"; did you mean {' or '.join(repr(n) for n in close)}?" if close else ""
        prefix = f"{where}: " if where else ""
        return f"{prefix}unknown {self.kind} {name!r}{hint} Known {self.plural}: " + ", ".join(
            known
        )

    def resolve(self, name: str, where: str | None = None) -> T:
        """The entry registered as ``name``; an :class:`EvalframeError` with suggestions."""
        self.load()
        entry = self._entries.get(name) if isinstance(name, str) else None
        if entry is None:
            raise EvalframeError(self.unknown(name, where))
        return entry

    def named(self, value: Any, where: str) -> tuple[str, T | None]:
        """(name, entry) of a name, an entry or a function; a user's own function is
        ``(custom_name(function), None)``."""
        self.load()
        if isinstance(value, str):
            return value, self.resolve(value, where)
        for entry in self._entries.values():
            if entry is value or getattr(entry, "function", None) is value:
                return entry.name, entry  # type: ignore[attr-defined]
        if callable(value):
            return custom_name(value), None
        raise EvalframeError(
            f"{where}: {value!r} is not a {self.kind}; expected a name "
            f"({', '.join(self.names())}) or a function"
        )

    def frame(self) -> pl.DataFrame:
        """The table as a DataFrame: one row per entry, the table's ``columns``."""
        rows = [
            self.describe(entry) if self.describe else
            {column: getattr(entry, column) for column in self.columns}
            for entry in self.entries()
        ]
        schema = {column: self.dtypes.get(column, pl.String) for column in self.columns}
        return pl.DataFrame(rows, schema=schema, orient="row" if not rows else None)
