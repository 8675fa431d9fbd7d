"""File formats evalframe reads and writes, chosen by file extension."""

from __future__ import annotations

from pathlib import Path

from evalframe.errors import EvalframeError

READ_FORMATS: dict[str, str] = {
    ".parquet": "parquet",
    ".pq": "parquet",
    ".jsonl": "ndjson",
    ".ndjson": "ndjson",
    ".jsonl.gz": "ndjson.gz",
    ".ndjson.gz": "ndjson.gz",
    ".json": "json",
    ".json.gz": "json.gz",
    ".csv": "csv",
    ".arrow": "ipc",
    ".ipc": "ipc",
    ".feather": "ipc",
}

WRITE_FORMATS: dict[str, str] = {
    ".parquet": "parquet",
    ".pq": "parquet",
    ".jsonl": "ndjson",
    ".ndjson": "ndjson",
    ".json": "json",
    ".csv": "csv",
    ".arrow": "ipc",
    ".ipc": "ipc",
    ".feather": "ipc",
}


def format_of(path: str | Path, table: dict[str, str], action: str) -> str:
    """The format for ``path`` from its extension, or a clear error listing what is known.

    >>> format_of("runs/a.jsonl", READ_FORMATS, "read")
    'ndjson'
    """
    name = Path(path).name.lower()
    for extension in sorted(table, key=len, reverse=True):
        if name.endswith(extension):
            return table[extension]
    known = ", ".join(sorted(table))
    raise EvalframeError(
        f"cannot {action} {str(path)!r}: unknown file extension; expected one of {known}"
    )
