"""Checks every metric passes: a module, function or spec left out of the registry fails here.

Each check is a function that returns the problems it finds (an empty list when all is
well), run once on the real package and once on a made-up case that it must catch, so
that no check passes by looking at nothing.
"""

from __future__ import annotations

import doctest
import importlib
import inspect
import sys
import textwrap
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import evalframe.metrics as M
from evalframe._registry import Registry
from evalframe.metrics import registry
from evalframe.metrics.registry import FAMILIES, MetricSpec, Reference, all_metrics

PACKAGE = "evalframe.metrics"
PACKAGE_DIR = Path(M.__file__).parent

#: Modules of the package that hold no metrics: the registry and what builds on it.
INFRASTRUCTURE = frozenset(
    {"__init__", "registry", "request", "reduce", "reference_doc", "answers"}
)
#: Public functions of a family that return an expression but are not metrics, and why.
NOT_METRICS = {
    "treebank_tokenize": "a tokenizer: the tokens of each row (list[str]), not a score",
    "rouge_n": "ROUGE-N for any n-gram size; the sizes with a name are rouge1 and rouge2",
}
#: What the package exports besides the families' names.
REGISTRY_EXPORTS = ("MetricSpec", "Reference", "all_metrics", "list_metrics", "register",
                    "resolve")


# --- the checks ------------------------------------------------------------------------------


def family_of(function: Callable[..., Any], package: str = PACKAGE) -> str | None:
    """The family module a function is defined in (None outside the package)."""
    module = getattr(function, "__module__", "") or ""
    prefix = f"{package}."
    return module[len(prefix):] if module.startswith(prefix) else None


def metric_modules(package_dir: Path) -> set[str]:
    """The modules of the package that must be families: neither private nor infrastructure."""
    return {
        path.stem
        for path in package_dir.glob("*.py")
        if not path.stem.startswith("_") and path.stem not in INFRASTRUCTURE
    }


def unlisted_modules(package_dir: Path, families: Sequence[str]) -> list[str]:
    """Metric modules missing from ``families`` (their metrics would never be loaded)."""
    return sorted(metric_modules(package_dir) - set(families))


def missing_families(package_dir: Path, families: Sequence[str]) -> list[str]:
    """Names in ``families`` that are no module of the package."""
    return [name for name in families if not (package_dir / f"{name}.py").is_file()]


def silent_families(
    families: Sequence[str], specs: Iterable[MetricSpec], package: str = PACKAGE
) -> list[str]:
    """Families none of whose functions is registered."""
    registering = {family_of(spec.function, package) for spec in specs}
    return [name for name in families if name not in registering]


def unexported_specs(specs: Iterable[MetricSpec], namespace: Mapping[str, Any]) -> list[str]:
    """Specs whose function is not exported under its own name, nor a preset of one that is."""
    problems = []
    for spec in specs:
        function = spec.function
        base = getattr(function, "preset_of", None)
        exported = namespace.get(function.__name__) is function or (
            base is not None and namespace.get(base.__name__) is base
        )
        if not exported:
            problems.append(f"{spec.name}: {function.__name__} is not exported")
    return problems


def returns_expression(function: Callable[..., Any]) -> bool:
    annotation = inspect.signature(function).return_annotation
    return annotation is pl.Expr or annotation == "pl.Expr"


def metric_functions(
    namespace: Mapping[str, Any], names: Iterable[str], families: Sequence[str],
    package: str = PACKAGE,
) -> dict[str, Callable[..., Any]]:
    """The exported functions that are metrics: they live in a family and return an Expr."""
    return {
        name: namespace[name]
        for name in names
        if inspect.isfunction(namespace[name])
        and family_of(namespace[name], package) in families
        and returns_expression(namespace[name])
        and name not in NOT_METRICS
    }


def unregistered_functions(
    functions: Mapping[str, Callable[..., Any]], specs: Iterable[MetricSpec]
) -> list[str]:
    """Metric functions no spec registers, directly or through a preset of it."""
    registered = set()
    for spec in specs:
        registered.add(spec.function)
        registered.add(getattr(spec.function, "preset_of", None))
    return sorted(name for name, function in functions.items() if function not in registered)


def spec_problems(spec: MetricSpec) -> list[str]:
    """What a spec lacks: a reference, a description, sane bounds, roles its function takes."""
    problems = []
    reference = spec.reference
    if not (isinstance(reference, Reference) and reference.package and reference.version
            and reference.function):
        problems.append("no reference (package, version and function)")
    if not spec.description:
        problems.append("no description")
    low, high = spec.bounds
    if not low < high:
        problems.append(f"bounds {spec.bounds} are not low < high")
    if not spec.role_sets or not all(spec.role_sets):
        problems.append("no roles")
    parameters = inspect.signature(spec.function).parameters
    for role in spec.roles():
        if role not in parameters:
            problems.append(f"role {role!r} is no parameter of {spec.function.__name__}")
    return problems


def doctest_problems(function: Callable[..., Any]) -> list[str]:
    """Whether the function's docstring has an example that its module's doctests run
    (pytest --doctest-modules collects it) and that passes."""
    doc = function.__doc__ or ""
    if ">>>" not in doc:
        return ["no example (>>>) in the docstring"]
    module = sys.modules[function.__module__]
    found = [test for test in doctest.DocTestFinder().find(module) if test.docstring == doc]
    if not found:
        return ["the example is not found among its module's doctests"]
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    report: list[str] = []
    for test in found:
        runner.run(test, out=report.append)
    failed = runner.summarize(verbose=False).failed
    return [f"{failed} example(s) fail:\n" + "".join(report)] if failed else []


def export_problems(exported: Sequence[str], families: Mapping[str, Sequence[str]]) -> list[str]:
    """Differences between the package's ``__all__`` and its families' names."""
    expected = [*REGISTRY_EXPORTS, *(name for names in families.values() for name in names)]
    missing = sorted(set(expected) - set(exported))
    extra = sorted(set(exported) - set(expected))
    repeated = sorted({name for name in exported if list(exported).count(name) > 1})
    return [f"{what}: {names}" for what, names in
            (("missing", missing), ("extra", extra), ("repeated", repeated)) if names]


def preset_problems(function: Callable[..., Any], frame: pl.DataFrame) -> list[str]:
    """A preset must score as the function it presets, called with its fixed options."""
    base, options = function.preset_of, function.preset_options
    got = frame.select(function("prediction", "gold").alias("score"))
    expected = frame.select(base("prediction", "gold", **options).alias("score"))
    return [] if got.equals(expected) else [f"{function.__name__} differs from {base.__name__}"]


# --- the package passes them -----------------------------------------------------------------

SPECS = all_metrics()
FUNCTIONS = list({id(spec.function): spec.function for spec in SPECS}.values())
FAMILY_NAMES = {name: importlib.import_module(f"{PACKAGE}.{name}").__all__ for name in FAMILIES}


def test_every_metric_module_is_a_family():
    assert unlisted_modules(PACKAGE_DIR, FAMILIES) == []


def test_every_family_is_a_module():
    assert missing_families(PACKAGE_DIR, FAMILIES) == []


def test_every_family_registers_a_metric():
    assert silent_families(FAMILIES, SPECS) == []


def test_every_registered_function_is_exported():
    assert unexported_specs(SPECS, vars(M)) == []


def test_every_exported_metric_is_registered():
    functions = metric_functions(vars(M), M.__all__, FAMILIES)
    assert {"exact_match", "lighteval_exact_match", "pass_at_k"} <= set(functions)
    assert unregistered_functions(functions, SPECS) == []


def test_the_exceptions_are_exported():
    assert set(NOT_METRICS) <= set(M.__all__)


def test_the_package_exports_every_family_name():
    assert export_problems(M.__all__, FAMILY_NAMES) == []


@pytest.mark.parametrize("spec", SPECS, ids=lambda spec: spec.name)
def test_every_spec_is_complete(spec: MetricSpec):
    assert spec_problems(spec) == []


@pytest.mark.parametrize("function", FUNCTIONS, ids=lambda function: function.__name__)
def test_every_registered_function_has_a_passing_example(function):
    assert doctest_problems(function) == []


PRESETS = [function for function in FUNCTIONS if hasattr(function, "preset_of")]
TEXTS = pl.DataFrame({
    "prediction": [" Paris ", "Paris, France", "", "The answer: paris.", "so #### 1,000", None],
    "gold": ["Paris", "paris", "", "paris!", "#### 1000", "x"],
})


def test_there_are_presets():
    assert {function.__name__ for function in PRESETS} >= {"quasi_exact_match",
                                                           "prefix_exact_match"}


@pytest.mark.parametrize("function", PRESETS, ids=lambda function: function.__name__)
def test_every_preset_scores_as_its_function(function):
    assert preset_problems(function, TEXTS) == []
    assert inspect.signature(function).parameters.keys() == {
        "prediction", "gold", "extractor", "gold_extractor"
    }
    assert function.__qualname__ == function.__name__
    assert function.__module__ == function.preset_of.__module__


# --- and each check catches what it is for ---------------------------------------------------


@pytest.fixture()
def fake_package(tmp_path, monkeypatch):
    """A package of three families in a throwaway registry: ``loud`` registers ``shout``,
    ``quiet`` defines the metric ``whisper`` without registering it, ``empty`` registers
    nothing; plus the private ``_shared`` and the infrastructure ``registry``."""
    name = f"fake_metrics_{tmp_path.name}".replace("-", "_")
    root = tmp_path / name
    root.mkdir()
    (root / "__init__.py").write_text("")
    (root / "_shared.py").write_text("")
    (root / "registry.py").write_text("")
    (root / "loud.py").write_text(textwrap.dedent('''
        import polars as pl
        from evalframe.metrics.registry import Reference, register

        @register("shout", roles=("prediction",), reference=Reference("x", "1", "shout"),
                  description="Shout", edge_rules=("none",))
        def shout(prediction) -> pl.Expr:
            """Shout.

            >>> 1 + 1
            2
            """
            return pl.lit(1.0)
    '''))
    (root / "quiet.py").write_text(textwrap.dedent('''
        import polars as pl

        def whisper(prediction) -> pl.Expr:
            """Whisper."""
            return pl.lit(0.0)
    '''))
    (root / "empty.py").write_text("")
    table = Registry("metric", listed=False)
    monkeypatch.setattr(registry, "METRICS", table)
    monkeypatch.syspath_prepend(str(tmp_path))
    modules = {family: importlib.import_module(f"{name}.{family}")
               for family in ("loud", "quiet", "empty")}
    yield name, root, table, modules
    for module in [*modules, ""]:
        sys.modules.pop(f"{name}.{module}".rstrip("."), None)


def test_a_module_missing_from_the_families_is_caught(fake_package):
    _, root, _, _ = fake_package
    assert unlisted_modules(root, ("loud", "quiet")) == ["empty"]


def test_a_family_that_is_no_module_is_caught(fake_package):
    _, root, _, _ = fake_package
    assert missing_families(root, ("loud", "gone")) == ["gone"]


def test_a_family_that_registers_nothing_is_caught(fake_package):
    name, _, table, _ = fake_package
    assert table.names() == ["shout"]
    assert silent_families(("loud", "quiet", "empty"), table.entries(), name) == [
        "quiet", "empty"
    ]


def test_a_metric_left_unregistered_is_caught(fake_package):
    name, _, table, modules = fake_package
    namespace = {"shout": modules["loud"].shout, "whisper": modules["quiet"].whisper,
                 "builtin": len}
    functions = metric_functions(namespace, namespace, ("loud", "quiet"), name)
    assert set(functions) == {"shout", "whisper"}
    assert unregistered_functions(functions, table.entries()) == ["whisper"]


def test_a_preset_counts_as_its_function_registered():
    def base(prediction) -> pl.Expr:
        return pl.lit(1.0)

    def preset(prediction) -> pl.Expr:
        return base(prediction)

    preset.preset_of = base
    spec = MetricSpec("preset", preset, "sample", True, (("prediction",),),
                      Reference("x", "1", "preset"), "Preset")
    assert unregistered_functions({"base": base, "other": len}, [spec]) == ["other"]
    assert unexported_specs([spec], {"base": base}) == []


def test_a_registered_function_that_is_not_exported_is_caught(fake_package):
    _, _, table, modules = fake_package
    assert unexported_specs(table.entries(), {"shout": modules["loud"].shout}) == []
    assert unexported_specs(table.entries(), {}) == ["shout: shout is not exported"]


def test_an_incomplete_spec_is_caught():
    def metric(prediction) -> pl.Expr:
        return pl.lit(1.0)

    spec = MetricSpec("bad", metric, "sample", True, (("prediction", "gold"),),
                      Reference("", "1", "f"), "", bounds=(1.0, 1.0))
    assert spec_problems(spec) == [
        "no reference (package, version and function)",
        "no description",
        "bounds (1.0, 1.0) are not low < high",
        "role 'gold' is no parameter of metric",
    ]
    assert spec_problems(MetricSpec("none", metric, "sample", True, (),
                                    Reference("x", "1", "f"), "None")) == ["no roles"]


def test_a_missing_or_failing_example_is_caught(fake_package):
    _, _, _, modules = fake_package
    shout, whisper = modules["loud"].shout, modules["quiet"].whisper
    assert doctest_problems(shout) == []
    assert doctest_problems(whisper) == ["no example (>>>) in the docstring"]
    shout.__doc__ = shout.__doc__.replace("2", "3")
    assert doctest_problems(shout)[0].startswith("1 example(s) fail")

    def elsewhere() -> pl.Expr:
        """>>> 1
        1
        """

    elsewhere.__module__ = modules["loud"].__name__  # documented, but not in the module
    assert doctest_problems(elsewhere) == [
        "the example is not found among its module's doctests"
    ]


def test_an_export_list_that_drifts_is_caught():
    families = {"a": ["one", "two"]}
    assert export_problems([*REGISTRY_EXPORTS, "one", "two"], families) == []
    assert export_problems([*REGISTRY_EXPORTS, "one", "one", "three"], families) == [
        "missing: ['two']", "extra: ['three']", "repeated: ['one']"
    ]


def test_a_preset_that_scores_otherwise_is_caught():
    def base(prediction, gold, *, strip=False) -> pl.Expr:
        text = pl.col(prediction).str.strip_chars() if strip else pl.col(prediction)
        return (text == pl.col(gold)).cast(pl.Float64)

    def preset(prediction, gold) -> pl.Expr:
        return base(prediction, gold)

    preset.preset_of, preset.preset_options = base, {"strip": True}
    assert preset_problems(preset, TEXTS) == ["preset differs from base"]
    preset.preset_options = {"strip": False}
    assert preset_problems(preset, TEXTS) == []
