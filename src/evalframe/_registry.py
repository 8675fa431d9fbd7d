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

Every table is in :data:`TABLES`, which the per-table invariant tests walk. A table reads
as a mapping of names to entries (``in``, ``[]``, ``get``, iteration, ``keys`` / ``values`` /
``items``); ``table[name]`` of an unknown name is an :class:`UnknownName`, which is an
``EvalframeError`` and a ``KeyError``.

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
>>> colours.module_of("red") == red.__module__
True

A table may word its message for an unknown name (``message=``, fields as in
:data:`UNKNOWN`) and call its entries otherwise than its kind (``noun=``):

>>> shades = Registry("shade", noun="hue", message=UNKNOWN_OPTION, listed=False)
>>> shades.unknown("gren", where="metric 'm'", extra=["green"])
"metric 'm': hue='gren' is unknown; expected one of 'green' or a function from pl.Expr to \
pl.Expr (see 'evalframe hues'); did you mean 'green'?"
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Generic, TypeVar

import polars as pl

from evalframe.errors import EvalframeError

__all__ = [
    "TABLES",
    "UNKNOWN",
    "UNKNOWN_OPTION",
    "Registry",
    "UnknownName",
    "canonical_name",
    "custom_name",
]

T = TypeVar("T")

#: Every registry, by kind (``"metric"``, ``"extractor"``, ...).
TABLES: dict[str, Registry[Any]] = {}

#: How :meth:`Registry.unknown` words a name that is not registered. The fields: ``where``
#: (the place, followed by ``": "``, or empty), ``noun`` and ``plural`` (what the table's
#: entries are called), ``name`` (the name given, quoted), ``hint`` (``"; did you mean
#: 'x'?"``, or empty), ``names`` (every known name), ``quoted`` (the same, each quoted) and
#: ``sorted`` (the same, sorted, as a Python list).
UNKNOWN = "{where}unknown {noun} {name}{hint} Known {plural}: {names}"

#: The wording for a keyword option of a metric that takes a name from the table or a
#: function (``normalizer=``, ``extractor=``).
UNKNOWN_OPTION = (
    "{where}{noun}={name} is unknown; expected one of {quoted} or a function from pl.Expr "
    "to pl.Expr (see 'evalframe {plural}'){hint}"
)


class UnknownName(EvalframeError, KeyError):
    """A name that a table does not register: an :class:`EvalframeError`, and a ``KeyError``
    as a mapping's missing key is (its message is not quoted as a ``KeyError``'s is)."""

    __str__ = EvalframeError.__str__


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
    attributes :meth:`frame` lists (all as strings unless ``dtypes`` says otherwise), or
    the keys of the rows ``describe`` makes of the entries; ``sort`` lists entries by name
    rather than in registration order, ``by_module`` in the order of ``modules`` (a
    module's entries in the order it registers them), whatever order the modules were
    imported in. ``noun`` is what messages call an entry (the kind by default), ``plural``
    its plural, ``message`` the wording of :meth:`unknown` (:data:`UNKNOWN` by default).
    ``listed=False`` keeps a table out of :data:`TABLES` (a table built in an example or a
    test).
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
        by_module: bool = False,
        noun: str | None = None,
        plural: str | None = None,
        message: str = UNKNOWN,
        listed: bool = True,
    ) -> None:
        self.kind = kind
        self.noun = noun or kind
        self.plural = plural or f"{self.noun}s"
        self.message = message
        self.make = make
        self.package = package
        self.modules = tuple(modules)
        self.columns = tuple(columns)
        self.dtypes = dict(dtypes or {})
        self.describe = describe
        self.sort = sort
        self.by_module = by_module
        self._entries: dict[str, T] = {}
        self._modules: dict[str, str | None] = {}
        self._loaded = not self.modules
        if listed:
            if kind in TABLES:
                raise ValueError(f"a registry of {self.plural} exists already")
            TABLES[kind] = self

    # --- registering --------------------------------------------------------------------

    def add(self, entry: T, module: str | None = None) -> T:
        """Register ``entry`` under its ``name`` (a name is registered once).

        ``module`` is the module that registers it (:meth:`module_of`); by default the
        module of the entry's ``function``, where it has one.
        """
        name = entry.name  # type: ignore[attr-defined]
        if name in self._entries:
            raise ValueError(f"{self.kind} {name!r} is registered twice")
        self._entries[name] = entry
        function = getattr(entry, "function", None)
        self._modules[name] = module or getattr(function, "__module__", None)
        return entry

    def decorator(self, **fields: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """A decorator that registers the function it decorates, returned unchanged.

        The entry is ``make(function=<the function>, **fields)``.
        """
        if self.make is None:
            raise TypeError(f"the {self.kind} registry registers entries, not functions")
        make = self.make

        def register(function: Callable[..., Any]) -> Callable[..., Any]:
            self.add(make(function=function, **fields), module=function.__module__)
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
        """The entry registered as ``name``; an :class:`UnknownName` (a ``KeyError`` too)."""
        try:
            return self.resolve(name)
        except EvalframeError as error:
            raise UnknownName(str(error)) from None

    def keys(self) -> list[str]:
        """Every registered name, as :meth:`names` (a table reads as a mapping)."""
        return self.names()

    def values(self) -> list[T]:
        """Every entry, as :meth:`entries`."""
        return self.entries()

    def items(self) -> list[tuple[str, T]]:
        """``(name, entry)`` pairs, in :meth:`names` order."""
        return [(name, self._entries[name]) for name in self.names()]

    def names(self) -> list[str]:
        """Every registered name: sorted when the table sorts, in the order of its modules
        when it orders by module, else in registration order."""
        self.load()
        if self.sort:
            return sorted(self._entries)
        if self.by_module:
            rank = {f"{self.package}.{module}": i for i, module in enumerate(self.modules)}
            last = len(rank)
            return sorted(self._entries, key=lambda name: rank.get(self._modules[name], last))
        return list(self._entries)

    def entries(self) -> list[T]:
        """Every entry, in :meth:`names` order."""
        return [self._entries[name] for name in self.names()]

    def module_of(self, name: str) -> str | None:
        """The module that registered ``name`` (None where that is not known)."""
        self.load()
        return self._modules.get(name)

    def suggestions(self, name: str, known: Sequence[str] | None = None) -> list[str]:
        """Known names close to ``name``: the same up to case and ``-``/``_``, else similar."""
        known = list(self.names() if known is None else known)
        wanted = canonical_name(name)
        same = [candidate for candidate in known if canonical_name(candidate) == wanted]
        if same:
            return same
        canonical = {canonical_name(candidate): candidate for candidate in known}
        return [canonical[c] for c in difflib.get_close_matches(wanted, list(canonical), n=3)]

    def unknown(
        self,
        name: object,
        where: str | None = None,
        extra: Sequence[str] = (),
        message: str | None = None,
    ) -> str:
        """The message for a name that is not registered: suggestions, then every name
        (``extra`` names first), worded as ``message`` (the table's by default)."""
        known = [*extra, *self.names()]
        close = self.suggestions(name, known) if isinstance(name, str) else []
        return (message or self.message).format(
            where=f"{where}: " if where else "",
            noun=self.noun,
            plural=self.plural,
            name=repr(name),
            hint=f"; did you mean {' or '.join(repr(n) for n in close)}?" if close else "",
            names=", ".join(known),
            quoted=", ".join(repr(n) for n in known),
            sorted=sorted(known),
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
            f"{where}: {value!r} is not a {self.noun}; expected a name "
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
