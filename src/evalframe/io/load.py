"""Load evaluation dumps into polars frames: files, globs, lists, frames and Arrow tables."""

from __future__ import annotations

import glob as globbing
import gzip
from collections.abc import Sequence
from pathlib import Path

import polars as pl
import pyarrow as pa

from evalframe.errors import EvalframeError
from evalframe.io.formats import READ_FORMATS, format_of

Source = str | Path | Sequence[str | Path] | pl.DataFrame | pl.LazyFrame | pa.Table

#: Rows read to infer the schema of JSON lines and CSV files.
INFER_SCHEMA_ROWS = 10_000


def expand_paths(source: str | Path | Sequence[str | Path]) -> list[Path]:
    """Expand a path, a glob or a list of them into existing files, in a stable order."""
    items = [source] if isinstance(source, str | Path) else list(source)
    if not items:
        raise EvalframeError("no input files given")
    paths: list[Path] = []
    for item in items:
        text = str(item)
        if any(ch in text for ch in "*?["):
            matches = sorted(globbing.glob(text, recursive=True))
            if not matches:
                raise EvalframeError(f"no files match {text!r}")
            paths.extend(Path(match) for match in matches)
        else:
            path = Path(text)
            if not path.exists():
                raise EvalframeError(f"file not found: {text!r}")
            if path.is_dir():
                raise EvalframeError(
                    f"{text!r} is a directory; give files or a glob like '{text}/*.parquet'"
                )
            paths.append(path)
    return paths


def _scan_one(path: Path) -> pl.LazyFrame:
    kind = format_of(path, READ_FORMATS, "read")
    try:
        if kind == "parquet":
            return pl.scan_parquet(path)
        if kind == "ipc":
            return pl.scan_ipc(path)
        if kind == "csv":
            return pl.scan_csv(path, infer_schema_length=INFER_SCHEMA_ROWS)
        if kind == "ndjson":
            return pl.scan_ndjson(path, infer_schema_length=INFER_SCHEMA_ROWS)
        if kind == "ndjson.gz":
            return pl.read_ndjson(
                gzip.decompress(path.read_bytes()), infer_schema_length=INFER_SCHEMA_ROWS
            ).lazy()
        if kind == "json":
            return pl.read_json(path.read_bytes(), infer_schema_length=INFER_SCHEMA_ROWS).lazy()
        return pl.read_json(
            gzip.decompress(path.read_bytes()), infer_schema_length=INFER_SCHEMA_ROWS
        ).lazy()
    except (OSError, pl.exceptions.PolarsError, gzip.BadGzipFile) as error:
        message = f"cannot read {str(path)!r} as {kind}: {_first_line(error)}"
        raise EvalframeError(message) from error


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def scan(source: Source) -> pl.LazyFrame:
    """A lazy scan of ``source``; several files are stacked (missing columns become null).

    >>> import polars as pl
    >>> scan(pl.DataFrame({"a": [1]})).collect().shape
    (1, 1)
    """
    if isinstance(source, pl.LazyFrame):
        return source
    if isinstance(source, pl.DataFrame):
        return source.lazy()
    if isinstance(source, pa.Table):
        return pl.from_arrow(source).lazy()
    if not isinstance(source, str | Path | Sequence) or isinstance(source, bytes):
        raise EvalframeError(
            f"cannot load a {type(source).__name__}; expected a path, a glob, a list of paths, "
            "a polars DataFrame or LazyFrame, or a pyarrow Table"
        )
    paths = expand_paths(source)
    frames = [_scan_one(path) for path in paths]
    for path, frame in zip(paths, frames, strict=True):
        try:
            frame.collect_schema()
        except pl.exceptions.PolarsError as error:
            raise EvalframeError(f"cannot read {str(path)!r}: {_first_line(error)}") from error
    if len(frames) == 1:
        return frames[0]
    _check_compatible(paths, frames)
    return pl.concat(frames, how="diagonal")


def _check_compatible(paths: list[Path], frames: list[pl.LazyFrame]) -> None:
    seen: dict[str, tuple[pl.DataType, Path]] = {}
    for path, frame in zip(paths, frames, strict=True):
        for name, dtype in frame.collect_schema().items():
            if name in seen and seen[name][0] != dtype:
                first_dtype, first_path = seen[name]
                raise EvalframeError(
                    f"column {name!r} is {first_dtype} in {str(first_path)!r} but {dtype} in "
                    f"{str(path)!r}; files read together must agree on column dtypes"
                )
            seen.setdefault(name, (dtype, path))


def load(source: Source) -> pl.DataFrame | pl.LazyFrame:
    """Load ``source`` as ``score`` does: a LazyFrame stays lazy, anything else is read eagerly.

    >>> import polars as pl
    >>> load(pl.DataFrame({"pred": ["x"]})).columns
    ['pred']
    """
    frame = scan(source)
    if isinstance(source, pl.LazyFrame):
        return frame
    try:
        return frame.collect()
    except pl.exceptions.PolarsError as error:
        raise EvalframeError(f"cannot read input: {_first_line(error)}") from error
