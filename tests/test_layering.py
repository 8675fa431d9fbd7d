"""The package's joints: no module reaches into another's private names.

A name with a leading underscore belongs to its module. What several modules share lives
in a module of its own (``metrics/_text_inputs.py``, ``metrics/_rules.py``,
``normalize/_python_text.py``...) under a name without the underscore.
"""

from __future__ import annotations

import ast
from pathlib import Path

SOURCE = Path(__file__).resolve().parents[1] / "src" / "evalframe"


def _private_imports(path: Path, root: Path = SOURCE) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("evalframe"):
            for alias in node.names:
                if alias.name.startswith("_") and not alias.name.startswith("__"):
                    where = path.relative_to(root)
                    found.append(f"{where}: from {node.module} import {alias.name}")
    return found


def test_no_module_imports_another_modules_private_names():
    found = [hit for path in sorted(SOURCE.rglob("*.py")) for hit in _private_imports(path)]
    assert found == []


def test_the_check_sees_a_private_import(tmp_path):
    module = tmp_path / "m.py"
    module.write_text(
        "from evalframe.metrics.exact_match import _secret, public\n"
        "from evalframe.metrics import __version__\n"
        "from os import _exit\n"
    )
    assert _private_imports(module, tmp_path) == [
        "m.py: from evalframe.metrics.exact_match import _secret"
    ]
