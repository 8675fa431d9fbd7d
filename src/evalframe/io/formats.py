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


#: How each read format is named in messages.
FORMAT_LABELS: dict[str, str] = {
    "parquet": "parquet",
    "ipc": "Arrow IPC",
    "csv": "CSV",
    "ndjson": "JSON lines",
    "ndjson.gz": "gzip-compressed JSON lines",
    "json": "JSON",
    "json.gz": "gzip-compressed JSON",
}

#: Leading bytes of binary formats, and what a file starting with them is.
MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"\x1f\x8b", "gzip-compressed data"),
    (b"PAR1", "a parquet file"),
    (b"ARROW1", "an Arrow IPC file"),
    (b"\xff\xff\xff\xff", "an Arrow IPC stream"),
    (b"FEA1", "a Feather v1 file"),
    (b"PK\x03\x04", "a zip archive (an .xlsx or .zip file?)"),
    (b"SQLite format 3\x00", "an SQLite database"),
    (b"\xff\xfe", "UTF-16 text"),
    (b"\xfe\xff", "UTF-16 text"),
)

TEXT = "UTF-8 text"

#: What the first bytes of a file in each format must look like.
EXPECTED_CONTENT: dict[str, str] = {
    "parquet": "a parquet file",
    "ipc": "an Arrow IPC file",
    "csv": TEXT,
    "ndjson": TEXT,
    "json": TEXT,
    "ndjson.gz": "gzip-compressed data",
    "json.gz": "gzip-compressed data",
}

#: The extension to suggest for a file whose content is another format.
EXTENSION_FOR: dict[str, str] = {
    "gzip-compressed data": ".gz",
    "a parquet file": ".parquet",
    "an Arrow IPC file": ".arrow",
}


def sniff(head: bytes) -> str:
    """What the first bytes of a file say it is (binary formats by magic; else UTF-8 text).

    >>> sniff(b"PAR1...")
    'a parquet file'
    >>> sniff(b'{"a": 1}')
    'UTF-8 text'
    """
    for magic, kind in MAGIC:
        if head.startswith(magic):
            return kind
    return TEXT


def check_content(path: str | Path, kind: str, head: bytes) -> None:
    """Raise when a file's first bytes contradict its extension (a ``.jsonl`` that is gzip).

    >>> check_content("a.jsonl", "ndjson", b'{"a": 1}')
    >>> try:
    ...     check_content("a.jsonl", "ndjson", b"\\x1f\\x8b\\x08")
    ... except EvalframeError as error:
    ...     print(error.args[0].split(": ", 1)[1])
    it is gzip-compressed data, not UTF-8 text (name it '....gz')
    """
    found = sniff(head)
    expected = EXPECTED_CONTENT[kind]
    if found == expected:
        return
    if found == "gzip-compressed data" and expected == TEXT:
        hint = " (name it '....gz')" if kind != "csv" else " (decompress it first)"
    elif found in EXTENSION_FOR and found != expected:
        hint = f" (name it '...{EXTENSION_FOR[found]}')"
    elif found == "UTF-16 text":
        hint = "; save it as UTF-8"
    else:
        hint = f"; it starts with {head[:16]!r}"
    raise EvalframeError(
        f"cannot read {str(path)!r} as {FORMAT_LABELS[kind]}: it is {found}, not {expected}{hint}"
    )
