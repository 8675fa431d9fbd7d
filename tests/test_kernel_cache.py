"""The one kernel-cache mechanism: least recently used dropped first, within a budget, and
every module-level kernel cache is one."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from evalframe._kernel_cache import KernelCache

SOURCE = Path(__file__).resolve().parents[1] / "src" / "evalframe"


def test_least_recently_used_is_dropped_first():
    cache = KernelCache("test lru", budget=2, listed=False)
    a = cache.get_or_build("a", object)
    cache.get_or_build("b", object)
    assert cache.get("a") is a  # a is now the most recent
    cache.get_or_build("c", object)  # drops b, not a
    assert "a" in cache and "b" not in cache and "c" in cache


def test_a_cost_budget_counts_each_entry():
    cache = KernelCache("test bytes", budget=10, cost=len, listed=False)
    cache.put("aaaa", 1)
    cache.put("bbbb", 2)
    assert cache.used == 8
    cache.put("cccc", 3)  # 12 > 10: the oldest goes
    assert "aaaa" not in cache and cache.used == 8
    assert cache.put("x" * 11, 4) == 4 and "x" * 11 not in cache  # too big to keep


def test_a_name_is_listed_once():
    KernelCache("test once", budget=1)
    with pytest.raises(ValueError, match="exists already"):
        KernelCache("test once", budget=1)


def _module_level_dict_caches(root: Path = SOURCE) -> list[str]:
    found = []
    for path in root.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:
            if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                name, value = node.target.id, node.value
            elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(
                node.targets[0], ast.Name
            ):
                name, value = node.targets[0].id, node.value
            else:
                continue
            if any(word in name for word in ("KERNEL", "BUILT")) and isinstance(
                value, ast.Dict
            ):
                found.append(f"{path.relative_to(root)}:{name}")
    return found


def test_every_kernel_cache_is_a_kernel_cache():
    assert _module_level_dict_caches() == []


def test_the_check_finds_a_dict_kept_as_a_kernel_cache(tmp_path):
    (tmp_path / "module.py").write_text("_KERNELS: dict[str, object] = {}\n_OTHER = {}\n")
    assert _module_level_dict_caches(tmp_path) == ["module.py:_KERNELS"]
