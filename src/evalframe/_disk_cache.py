"""Small derived tables kept on disk between processes, rebuilt whenever their inputs change.

Some tables cost a noticeable part of a short command to build and depend only on the
installed software: which characters the running Python counts as word characters or
whitespace, where polars' case mapping differs from Python's. They are built once and
written to a JSON file named by a hash of everything they depend on (the caller's key);
a later process reads the file instead. A file that is missing, unreadable, truncated,
edited, or written for other inputs is never used: the table is built again and the file
replaced (atomically), so a stale or broken cache can cost time but never change a
result. A folder that cannot be written is not an error: the table is then built in
every process, as without a cache.

The folder is ``$EVALFRAME_CACHE_DIR`` when set (an empty value turns the disk cache
off), else ``$XDG_CACHE_HOME/evalframe``, else ``~/.cache/evalframe``.

>>> import os, tempfile
>>> os.environ["EVALFRAME_CACHE_DIR"] = tempfile.mkdtemp()
>>> load_or_build("example", "inputs v1", lambda: {"points": [[65, 90]]})
{'points': [[65, 90]]}
>>> load_or_build("example", "inputs v1", lambda: {"points": []})  # read from disk
{'points': [[65, 90]]}
>>> del os.environ["EVALFRAME_CACHE_DIR"]
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["cache_folder", "load_or_build"]

#: The environment variable naming the cache folder ("" turns the disk cache off).
CACHE_DIR_VARIABLE = "EVALFRAME_CACHE_DIR"


def cache_folder() -> Path | None:
    """The folder of evalframe's disk caches, or None when the disk cache is off.

    >>> os.environ["EVALFRAME_CACHE_DIR"] = ""
    >>> cache_folder() is None
    True
    >>> del os.environ["EVALFRAME_CACHE_DIR"]
    """
    chosen = os.environ.get(CACHE_DIR_VARIABLE)
    if chosen is not None:
        return Path(chosen).expanduser() if chosen else None
    base = os.environ.get("XDG_CACHE_HOME") or str(Path("~").expanduser() / ".cache")
    return Path(base) / "evalframe"


def _digest(payload: Any) -> str:
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def load_or_build(name: str, key: str, build: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """The table ``name`` built for ``key``: read from disk, or built and written there.

    Parameters
    ----------
    name
        What the table is (part of the file name).
    key
        Everything the table depends on, as text (versions, source hashes): a file
        written for another key is not used.
    build
        Builds the table: a JSON-serialisable dict.

    Returns
    -------
    dict
        The table, as ``build`` returns it after a round trip through JSON.
    """
    folder = cache_folder()
    if folder is None:
        return json.loads(json.dumps(build()))
    path = folder / f"{name}-{hashlib.sha256(key.encode()).hexdigest()[:20]}.json"
    found = _read(path, key)
    if found is not None:
        return found
    table = json.loads(json.dumps(build()))
    _write(path, {"key": key, "sha256": _digest(table), "table": table})
    return table


def _read(path: Path, key: str) -> dict[str, Any] | None:
    """The table stored at ``path`` for ``key``, or None when it is absent or not sound."""
    try:
        stored = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(stored, dict) or stored.get("key") != key:
        return None
    table = stored.get("table")
    if not isinstance(table, dict) or stored.get("sha256") != _digest(table):
        return None
    return table


def _write(path: Path, stored: dict[str, Any]) -> None:
    """Write ``stored`` to ``path`` atomically; give up quietly when the folder refuses it."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    except OSError:
        return
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            json.dump(stored, out)
        os.replace(temporary, path)
    except OSError:
        Path(temporary).unlink(missing_ok=True)
