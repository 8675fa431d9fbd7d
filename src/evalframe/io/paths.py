"""Input paths: ``~`` expansion, globs only where a name is not a file, each file read once.

The rules, in order, for every item of a source:

1. ``~`` and ``~user`` at the start are expanded (:func:`expand_user_path`).
2. An existing path is that path, whatever characters its name holds: ``"b[1].jsonl"`` is the
   file ``b[1].jsonl``, never ``b1.jsonl``. A directory is every file below it (recursively,
   sorted) whose name has a readable extension, hidden files and folders excepted; a directory
   with none is an error.
3. A name that does not exist and holds a glob character (``*``, ``?``, ``[``) is a glob
   (``**`` recurses); ``glob=True`` makes every item a glob, ``glob=False`` none. A glob that
   matches no file is an error.
4. The same file named twice (twice in a list, by a glob and a name, by two spellings of one
   path or through a link) is read once, at its first position.
5. A folder that is one harness dump (a HELM run folder: ``unit`` says which, from the
   adapter table) is the one file standing for it (``scenario_state.json``), whether the folder
   is named, found below a directory or matched by a glob; its other files and sub-folders are
   not read. A folder holding such dump folders gives only them, with a warning naming what it
   leaves out beside them (a HELM suite's summaries).
"""

from __future__ import annotations

import glob as globbing
import os
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path

from evalframe.errors import EvalframeError

PathLike = str | os.PathLike[str]

GLOB_CHARACTERS = "*?["

#: Given a folder, the one file that stands for it when it is one dump, else ``None``.
Unit = Callable[[Path], Path | None]


def expand_user_path(path: PathLike) -> Path:
    """``path`` as a :class:`~pathlib.Path`, with a leading ``~`` or ``~user`` expanded.

    Shared by reading (``scan``/``load``) and writing (``save``) so both understand the same
    names. Anything but a ``str`` or ``os.PathLike`` is an :class:`EvalframeError`.

    >>> import os
    >>> expand_user_path("~/runs/a.jsonl") == Path(os.path.expanduser("~")) / "runs" / "a.jsonl"
    True
    >>> expand_user_path("runs/a.jsonl")
    PosixPath('runs/a.jsonl')
    """
    if isinstance(path, bytes) or not isinstance(path, str | os.PathLike):
        raise EvalframeError(
            f"a path must be a str or os.PathLike; got a {type(path).__name__}: {path!r}"
        )
    text = os.fspath(path)
    if not isinstance(text, str) or not text:
        raise EvalframeError(f"a path must be a non-empty string; got {text!r}")
    return Path(text).expanduser()


def expand_paths(
    source: PathLike | Sequence[PathLike],
    *,
    glob: bool | None = None,
    readable: Sequence[str] = (),
    unit: Unit | None = None,
) -> list[Path]:
    """The files ``source`` names (a path, a glob or a list of them), each once, in order.

    ``readable`` lists the file name endings a directory's files must have to be read
    (``(".jsonl", ".parquet")``); without it a directory is an error. ``unit`` gives the file
    standing for a folder that is one dump (rule 5 above), or ``None`` for other folders.

    ``glob=None`` (the default) globs only names that are not existing paths; ``True`` globs
    every item, ``False`` none. Matches of one glob are sorted.

    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> for name in ["b1.jsonl", "b[1].jsonl"]:
    ...     _ = (folder / name).write_text('{"a": 1}')
    >>> [p.name for p in expand_paths(folder / "b[1].jsonl")]
    ['b[1].jsonl']
    >>> [p.name for p in expand_paths(str(folder / "b*.jsonl"))]
    ['b1.jsonl', 'b[1].jsonl']
    >>> [p.name for p in expand_paths([folder / "b1.jsonl", str(folder / "b?.jsonl")])]
    ['b1.jsonl']
    >>> runs = folder / "runs"
    >>> for run in ["r1", "r2"]:
    ...     (runs / run).mkdir(parents=True)
    ...     for name in ["main.jsonl", "other.jsonl"]:
    ...         _ = (runs / run / name).write_text('{"a": 1}')
    >>> def unit(path):
    ...     return path / "main.jsonl" if (path / "main.jsonl").is_file() else None
    >>> [str(p.relative_to(runs)) for p in expand_paths(runs, readable=[".jsonl"], unit=unit)]
    ['r1/main.jsonl', 'r2/main.jsonl']
    """
    items = [source] if isinstance(source, str | os.PathLike) else _items(source)
    if not items:
        raise EvalframeError("no input files given")
    found: list[Path] = []
    for item in items:
        found.extend(_expand_one(expand_user_path(item), glob, readable, unit))
    return _once_each(found)


def from_directory(source: PathLike | Sequence[PathLike]) -> bool:
    """Whether any item of ``source`` is an existing directory."""
    items = [source] if isinstance(source, str | os.PathLike) else list(source)
    return any(
        isinstance(item, str | os.PathLike) and expand_user_path(item).is_dir() for item in items
    )


def _items(source: object) -> list[PathLike]:
    if isinstance(source, bytes) or not isinstance(source, Sequence):
        raise EvalframeError(
            f"cannot read a {type(source).__name__}; expected a path, a glob or a list of them"
        )
    items = list(source)
    wrong = [item for item in items if not isinstance(item, str | os.PathLike)]
    if wrong:
        raise EvalframeError(
            f"cannot read a list holding a {type(wrong[0]).__name__} ({wrong[0]!r}); "
            "a list of inputs must hold paths (str or os.PathLike)"
        )
    return items


def _expand_one(
    path: Path, glob: bool | None, readable: Sequence[str], unit: Unit | None
) -> list[Path]:
    text = str(path)
    is_glob = (
        glob
        if glob is not None
        else (not path.exists() and any(ch in text for ch in GLOB_CHARACTERS))
    )
    if is_glob:
        return _glob(text, unit)
    if not path.exists():
        raise EvalframeError(f"file not found: {text!r}")
    if path.is_dir():
        standing = unit(path) if unit is not None else None
        if standing is not None:
            return [standing]
        if not readable:
            raise EvalframeError(
                f"{text!r} is a directory; give files or a glob like '{text}/*.parquet'"
            )
        return _directory_files(path, readable, unit)
    return [path]


def _directory_files(folder: Path, readable: Sequence[str], unit: Unit | None) -> list[Path]:
    """Every readable file below ``folder`` (sorted; hidden files and folders left out), a
    folder that is one dump giving only the file standing for it. A folder holding such dump
    folders (a HELM suite: run folders beside the summaries ``helm-summarize`` writes) gives
    only them, with a warning naming what it leaves out beside them."""
    endings = tuple(ending.lower() for ending in readable)
    found: list[Path] = []
    for root, folders, names in os.walk(folder):
        here = Path(root)
        folders[:] = sorted(name for name in folders if not name.startswith("."))
        files = sorted(
            name
            for name in names
            if not name.startswith(".")
            and name.lower().endswith(endings)
            and (here / name).is_file()
        )
        dumps = {name: unit(here / name) for name in folders} if unit is not None else {}
        standing = [path for path in dumps.values() if path is not None]
        if standing:
            left = files + [f"{name}/" for name, path in dumps.items() if path is None]
            if left:
                warnings.warn(
                    f"read the {len(standing)} dump folder(s) in {str(here)!r} (first "
                    f"{str(standing[0])!r}); left out the {len(left)} other file(s) and "
                    f"folder(s) beside them, first {left[0]!r}: name them to read them",
                    stacklevel=6,
                )
            found.extend(standing)
            folders.clear()
            continue
        found.extend(here / name for name in files)
    files = sorted(found)
    if not files:
        raise EvalframeError(
            f"the directory {str(folder)!r} holds no readable file (names ending in "
            f"{', '.join(sorted(set(endings)))})"
        )
    return files


def _glob(pattern: str, unit: Unit | None = None) -> list[Path]:
    matches = sorted(globbing.glob(pattern, recursive=True))
    files = []
    for match in matches:
        if not os.path.isdir(match):
            files.append(Path(match))
            continue
        standing = unit(Path(match)) if unit is not None else None
        if standing is not None:
            files.append(standing)
    if not files:
        only = f" (only the directories {matches[:3]})" if matches else ""
        raise EvalframeError(f"no files match {pattern!r}{only}")
    return files


def _once_each(paths: list[Path]) -> list[Path]:
    """Drop later mentions of a file already listed (same device and inode)."""
    seen: set[tuple[int, int]] = set()
    kept: list[Path] = []
    for path in paths:
        try:
            status = path.stat()
            identity = (status.st_dev, status.st_ino)
        except OSError:  # reported with the file's name when it is opened
            kept.append(path)
            continue
        if identity not in seen:
            seen.add(identity)
            kept.append(path)
    return kept
