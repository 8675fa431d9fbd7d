"""lighteval's modules and classes, loaded without torch.

Importing ``lighteval.metrics`` runs its ``__init__``, which imports torch (not a
dependency of the conformance tests). Two ways around it:

- :func:`import_lighteval` pre-seeds ``sys.modules`` with empty package modules for
  ``lighteval.metrics`` and ``lighteval.metrics.utils`` whose ``__path__`` points at the
  installed folders, then imports the wanted submodule (for the modules that themselves
  import no torch: ``lighteval.metrics.utils.extractive_match_utils``,
  ``lighteval.metrics.utils.math_comparison``, ``lighteval.metrics.normalizations``);
- :func:`lighteval_classes` executes chosen top-level classes of a lighteval source file
  (read from the installed package, not copied) in a namespace the caller fills with
  what they use, for modules that import torch at top level (``metrics_sample.py``,
  ``dynamic_metrics.py``, ``models/model_output.py``).

Both return ``None`` when lighteval is not installed; callers skip with a reason that
says "lighteval is not installed".
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import sys
import types
from pathlib import Path
from typing import Any

#: The packages whose ``__init__`` imports torch, pre-seeded as empty packages.
_EMPTY_PACKAGES = ("lighteval.metrics", "lighteval.metrics.utils")


def lighteval_root() -> Path | None:
    """The installed ``lighteval`` package folder, or ``None``."""
    spec = importlib.util.find_spec("lighteval")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def import_lighteval(module: str) -> types.ModuleType | None:
    """``importlib.import_module(module)`` with the torch-importing packages pre-seeded."""
    root = lighteval_root()
    if root is None:
        return None
    for name in _EMPTY_PACKAGES:
        if name in sys.modules:
            continue
        package = types.ModuleType(name)
        package.__path__ = [str(root.joinpath(*name.split(".")[1:]))]
        sys.modules[name] = package
    return importlib.import_module(module)


def lighteval_classes(
    relative_path: str, names: set[str], namespace: dict[str, Any]
) -> dict[str, Any] | None:
    """The classes ``names`` of ``lighteval/<relative_path>``, executed in ``namespace``.

    ``namespace`` provides every global the classes use; the source is the installed
    file's own text, so the classes are lighteval's code, unchanged.
    """
    root = lighteval_root()
    if root is None:
        return None
    path = root / relative_path
    tree = ast.parse(path.read_text(encoding="utf-8"))
    body = [node for node in tree.body if isinstance(node, ast.ClassDef) and node.name in names]
    found = {node.name for node in body}
    if found != names:
        raise AssertionError(f"{path}: classes {sorted(names - found)} not found")
    # A module of its own, registered, so that dataclasses can look their module up.
    module = types.ModuleType(f"_lighteval_classes.{relative_path.removesuffix('.py')}")
    module.__dict__.update(namespace)
    sys.modules[module.__name__] = module
    exec(compile(ast.Module(body=body, type_ignores=[]), str(path), "exec"), module.__dict__)
    return {name: module.__dict__[name] for name in names}


def model_response_class() -> type | None:
    """lighteval's ``ModelResponse`` dataclass (its module imports torch for ``Batch`` only)."""
    from dataclasses import dataclass, field

    classes = lighteval_classes(
        "models/model_output.py", {"ModelResponse"}, {"dataclass": dataclass, "field": field}
    )
    return None if classes is None else classes["ModelResponse"]
