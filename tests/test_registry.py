"""Invariants every plug-in table keeps, checked table by table (as scikit-learn's test_common).

Every table in :data:`evalframe._registry.TABLES` (metrics, normalisers, extractors, adapters,
judge formats and policies, and any table added later), once every module of evalframe is
imported and every table loaded, is checked both ways:

- every entry resolves by its own name, and the names its listing (``frame()``) shows are
  exactly its names;
- every entry's function is a public attribute of the table's package;
- every module the table loads registers at least one entry, every module of the package
  that defines plug-ins of the kind is one the table loads, and every such plug-in is
  registered (what a plug-in of each kind looks like: :data:`SHAPES`);
- a near miss of a name is an error that suggests the name; a user's own function is named
  ``custom:<its name>``.

The last tests run the checks on a small package made for the purpose, to show that each
of them fails where it should.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import sys
import textwrap
from collections.abc import Callable, Iterator
from typing import Any

import polars as pl
import pytest

import evalframe
from evalframe import EvalframeError
from evalframe._registry import TABLES, Registry
from evalframe.extract.table import EXTRACTION, Extractor
from evalframe.io.adapters import Adapter
from evalframe.judge.policies import Policy

#: The kinds of plug-in evalframe has; each must have its table.
EXPECTED = (
    "metric", "normalizer", "extractor", "adapter", "judge format", "judge grading format",
    "judge policy",
)


def _load_every_table() -> dict[str, Registry[Any]]:
    """Import every module of evalframe (a table is defined where its kind lives), then load
    every table (each imports the modules that register its entries)."""
    for info in pkgutil.walk_packages(evalframe.__path__, "evalframe."):
        if info.name != "evalframe.__main__":
            importlib.import_module(info.name)
    for table in TABLES.values():
        table.load()
    return dict(TABLES)


LOADED = _load_every_table()
KINDS = sorted(LOADED)


# ------------------------------------------------------------------ what a plug-in looks like


def _normalizer_shaped(value: object) -> bool:
    """A normaliser is a function named ``<reference>_normalize``."""
    return inspect.isfunction(value) and value.__name__.endswith("_normalize")


def _extractor_shaped(value: object) -> bool:
    """An extractor is an :class:`Extractor`, or a function of one expression that gives the
    :data:`EXTRACTION` struct of a ``String`` column."""
    if isinstance(value, Extractor):
        return True
    if not inspect.isfunction(value):
        return False
    required = [
        parameter for parameter in inspect.signature(value).parameters.values()
        if parameter.default is parameter.empty
        and parameter.kind in (parameter.POSITIONAL_ONLY, parameter.POSITIONAL_OR_KEYWORD)
    ]
    if len(required) != 1 or "Expr" not in str(required[0].annotation):
        return False
    try:
        built = value(pl.col("text"))
        if not isinstance(built, pl.Expr):
            return False
        probe = pl.LazyFrame({"text": pl.Series([], dtype=pl.String)})
        return probe.select(built).collect_schema().dtypes()[0] == EXTRACTION
    except Exception:
        return False


def _adapter_shaped(value: object) -> bool:
    return isinstance(value, Adapter)


def _policy_shaped(value: object) -> bool:
    return inspect.isclass(value) and issubclass(value, Policy)


#: What a plug-in of a kind looks like, for the kinds whose modules are scanned for plug-ins
#: that are not registered.
SHAPES: dict[str, Callable[[object], bool]] = {
    "normalizer": _normalizer_shaped,
    "extractor": _extractor_shaped,
    "adapter": _adapter_shaped,
    "judge policy": _policy_shaped,
}

#: Public names that have a plug-in's shape but are not entries, and why.
NOT_ENTRIES = {
    "evalframe.normalize.harness.harness_normalize": (
        "lm-evaluation-harness's exact_match text options; the exact_match metric takes them "
        "as its own options"
    ),
}


# ------------------------------------------------------------------ the checks


def _package_modules(table: Registry[Any]) -> list[str]:
    """The modules of the table's package whose names are not private."""
    package = importlib.import_module(table.package)
    return [
        f"{table.package}.{info.name}"
        for info in pkgutil.iter_modules(package.__path__)
        if not info.name.startswith("_")
    ]


def _public_values(module_name: str) -> Iterator[tuple[str, object]]:
    """The public values a module defines (the members of a public tuple one by one)."""
    module = importlib.import_module(module_name)
    names = getattr(module, "__all__", None)
    if names is None:
        names = [name for name in vars(module) if not name.startswith("_")]
    for name in names:
        value = getattr(module, name)
        if (inspect.isfunction(value) or inspect.isclass(value)) and (
            value.__module__ != module_name
        ):
            continue  # imported from elsewhere
        if isinstance(value, tuple):
            for position, item in enumerate(value):
                yield f"{module_name}.{name}[{position}]", item
        else:
            yield f"{module_name}.{name}", value


def _is_registered(table: Registry[Any], value: object) -> bool:
    return any(
        entry is value or getattr(entry, "function", None) is value or type(entry) is value
        for entry in table.values()
    )


def _silent_modules(table: Registry[Any]) -> list[str]:
    """The modules the table loads that register no entry."""
    registering = {table.module_of(name) for name in table.names()}
    wanted = [f"{table.package}.{module}" for module in table.modules]
    return [module for module in wanted if module not in registering]


def _unlisted_modules(table: Registry[Any], shape: Callable[[object], bool]) -> list[str]:
    """The modules of the package that define plug-ins but that the table does not load."""
    loaded = {f"{table.package}.{module}" for module in table.modules}
    return [
        module for module in _package_modules(table)
        if module not in loaded
        and any(
            shape(value) and where not in NOT_ENTRIES for where, value in _public_values(module)
        )
    ]


def _unregistered(table: Registry[Any], shape: Callable[[object], bool]) -> list[str]:
    """The public plug-ins of the package's modules that the table does not register."""
    return sorted({
        where
        for module in _package_modules(table)
        for where, value in _public_values(module)
        if shape(value) and where not in NOT_ENTRIES and not _is_registered(table, value)
    })


def _unreachable_functions(table: Registry[Any]) -> list[str]:
    """Entries whose function is not a public attribute of the table's package (for a
    table without one, of the package of the function's module).

    Where the package's module of the same name shadows a function (``lighteval_math``),
    the function is that module's attribute. A function a factory makes for one
    configuration (lm-eval's shipped regex pipelines, lighteval's letter extractions) is
    reached through the table.
    """

    def reachable(function: Callable[..., Any]) -> bool:
        if "<locals>" in function.__qualname__:
            return True
        package = importlib.import_module(
            table.package or function.__module__.rpartition(".")[0] or function.__module__
        )
        names = [name for name in dir(package) if not name.startswith("_")]
        if any(getattr(package, name, None) is function for name in names):
            return True
        shadow = getattr(package, function.__name__, None)
        return inspect.ismodule(shadow) and getattr(shadow, function.__name__, None) is function

    return [
        entry.name for entry in table.values()
        if callable(function := getattr(entry, "function", None)) and not reachable(function)
    ]


def _name_column(frame: pl.DataFrame) -> str:
    return "name" if "name" in frame.columns else frame.columns[0]


def _near_misses(name: str) -> list[str]:
    """Misspellings of ``name``: another case and ``-`` for ``_``; one letter left out."""
    shouted = name.upper().replace("_", "-")
    dropped = name[:-2] + name[-1] if len(name) > 4 else name + name[-1]
    return [shouted, dropped]


# ------------------------------------------------------------------ every table


def test_every_kind_has_its_table():
    assert set(EXPECTED) <= set(TABLES), sorted(set(EXPECTED) - set(TABLES))
    for kind, table in TABLES.items():
        assert table.kind == kind


def test_every_shape_names_a_table():
    assert set(SHAPES) <= set(TABLES)


@pytest.mark.parametrize("kind", KINDS)
def test_every_entry_resolves_by_its_own_name(kind):
    table = LOADED[kind]
    assert len(table) == len(table.names()) > 0
    for name in table.names():
        entry = table.resolve(name)
        assert entry.name == name
        assert name in table and table[name] is entry and table.get(name) is entry
    assert list(table) == table.names() == list(table.keys())
    assert table.values() == table.entries() == [table[name] for name in table]


@pytest.mark.parametrize("kind", KINDS)
def test_the_listing_shows_exactly_the_names(kind):
    table = LOADED[kind]
    frame = table.frame()
    listed = frame[_name_column(frame)].to_list()
    assert listed == table.names()
    assert frame.columns == list(table.columns)


#: Tables whose entries users choose by name only (``aggregate(interval="wilson")``,
#: ``compare(method="mcnemar")``): their functions are the kernels ``aggregate`` and
#: ``compare`` call on their own arrays, not a public surface.
CHOSEN_BY_NAME = {"stderr", "interval", "comparison test", "correction", "power test"}


@pytest.mark.parametrize("kind", [kind for kind in KINDS if kind not in CHOSEN_BY_NAME])
def test_every_function_is_public_in_its_package(kind):
    assert _unreachable_functions(LOADED[kind]) == []


@pytest.mark.parametrize("kind", [kind for kind in KINDS if LOADED[kind].modules])
def test_every_module_the_table_loads_registers_an_entry(kind):
    assert _silent_modules(LOADED[kind]) == []


@pytest.mark.parametrize("kind", [kind for kind in KINDS if kind in SHAPES])
def test_every_plug_in_of_the_package_is_registered(kind):
    table = LOADED[kind]
    if table.package is None:  # the entries live beside the table, in its own module
        module = next(iter(table.values())).__class__.__module__
        unregistered = [
            where for where, value in _public_values(module)
            if SHAPES[kind](value) and not _is_registered(table, value)
        ]
        assert unregistered == []
        return
    assert _unlisted_modules(table, SHAPES[kind]) == []
    assert _unregistered(table, SHAPES[kind]) == []


@pytest.mark.parametrize("kind", KINDS)
def test_a_near_miss_suggests_the_name(kind):
    table = LOADED[kind]
    for name in table.names():
        if "{" in name:  # a parameterised metric name: its pattern is not a name to type
            continue
        for wrong in _near_misses(name):
            if wrong in table:
                continue
            with pytest.raises(EvalframeError, match="did you mean") as raised:
                table.resolve(wrong, where="here")
            assert repr(name) in str(raised.value), (wrong, str(raised.value))
            assert str(raised.value).startswith("here: ")


@pytest.mark.parametrize("kind", KINDS)
def test_a_users_function_is_custom_and_an_entry_is_itself(kind):
    table = LOADED[kind]

    def my_own_function(text):
        return text

    assert table.named(my_own_function, where="here") == ("custom:my_own_function", None)
    for entry in table.values():
        assert table.named(entry.name, where="here") == (entry.name, entry)
        function = getattr(entry, "function", None)
        if callable(function):
            _, found = table.named(function, where="here")
            assert found is not None and found.function is function


@pytest.mark.parametrize("kind", KINDS)
def test_an_unknown_name_is_a_key_error_too(kind):
    table = LOADED[kind]
    with pytest.raises(KeyError):
        table["no such entry anywhere"]
    with pytest.raises(EvalframeError):
        table["no such entry anywhere"]
    assert table.get("no such entry anywhere") is None
    assert "no such entry anywhere" not in table


# ------------------------------------------------------------------ the checks can fail


DEMO_TABLE = '''
from dataclasses import dataclass

from evalframe._registry import Registry


@dataclass(frozen=True)
class Demo:
    name: str
    function: object


DEMO = Registry(
    "demo", make=Demo, package="{package}", modules=("good", "silent"), listed=False
)
'''

DEMO_MODULES = {
    "good": '''
from {package}.table import DEMO


@DEMO.decorator(name="good")
def good_normalize(text):
    return text


@DEMO.decorator(name="hidden")
def hidden_normalize(text):
    return text


def stray_normalize(text):
    return text


__all__ = ["good_normalize", "stray_normalize"]
''',
    "silent": '''
from {package}.table import DEMO

__all__ = []
''',
    "other": '''
def other_normalize(text):
    return text
''',
}


@pytest.fixture
def demo(tmp_path, monkeypatch) -> Iterator[Registry[Any]]:
    """A package with a table of two modules: one registers an entry, one registers
    nothing; a third module defines a plug-in the table does not load."""
    package = "evalframe_registry_demo"
    folder = tmp_path / package
    folder.mkdir()
    (folder / "__init__.py").write_text("")
    (folder / "table.py").write_text(textwrap.dedent(DEMO_TABLE).format(package=package))
    for module, text in DEMO_MODULES.items():
        (folder / f"{module}.py").write_text(text.format(package=package))
    monkeypatch.syspath_prepend(str(tmp_path))
    table = importlib.import_module(f"{package}.table").DEMO
    table.load()
    yield table
    for name in [name for name in sys.modules if name.split(".")[0] == package]:
        del sys.modules[name]


def test_the_checks_catch_a_module_that_registers_nothing(demo):
    assert _silent_modules(demo) == ["evalframe_registry_demo.silent"]


def test_the_checks_catch_an_unregistered_plug_in(demo):
    assert _unregistered(demo, _normalizer_shaped) == [
        "evalframe_registry_demo.good.stray_normalize",
        "evalframe_registry_demo.other.other_normalize",
    ]
    assert _unlisted_modules(demo, _normalizer_shaped) == ["evalframe_registry_demo.other"]


def test_the_checks_catch_a_function_the_package_does_not_show(demo):
    assert _unreachable_functions(demo) == ["good", "hidden"]
    package = importlib.import_module("evalframe_registry_demo")
    package.good_normalize = importlib.import_module("evalframe_registry_demo.good").good_normalize
    assert _unreachable_functions(demo) == ["hidden"]


def test_the_checks_see_the_shapes():
    assert _extractor_shaped(evalframe.extract.boxed)
    assert not _extractor_shaped(evalframe.extract.register_extractor)
    assert not _extractor_shaped(evalframe.normalize.squad_normalize)
    assert _normalizer_shaped(evalframe.normalize.squad_normalize)
    assert _policy_shaped(Policy) and not _policy_shaped(Policy())
