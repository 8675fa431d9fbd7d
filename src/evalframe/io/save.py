"""Write scored frames and aggregate tables to parquet, CSV, JSON lines, JSON or Arrow IPC."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import polars as pl

from evalframe.errors import EvalframeError, without_plan
from evalframe.io.formats import WRITE_FORMATS, format_of


def save(
    frame: pl.DataFrame | pl.LazyFrame,
    path: str | Path,
    *,
    metadata: Mapping[str, str] | None = None,
) -> None:
    """Write ``frame`` to ``path``; the format follows the extension.

    A LazyFrame written to parquet, IPC, CSV or JSON lines is streamed (it need not
    fit in memory). ``metadata`` is stored as key-value metadata in parquet files.

    >>> import polars as pl, tempfile, os
    >>> out = os.path.join(tempfile.mkdtemp(), "s.parquet")
    >>> save(pl.DataFrame({"x": [1.0]}), out)
    >>> pl.read_parquet(out)["x"].to_list()
    [1.0]
    """
    kind = format_of(path, WRITE_FORMATS, "write")
    if kind == "csv":
        _check_flat(frame, path)
    target = Path(path)
    # Written beside the target and moved into place only when complete: a plan that
    # fails half-way (a metric rejecting a row) leaves no partial file behind.
    partial = target.with_name(f".{target.name}.partial")
    try:
        _write(frame, partial, kind, metadata)
        os.replace(partial, target)
    except EvalframeError as error:
        raise EvalframeError(without_plan(error)) from None
    except (pl.exceptions.PolarsError, OSError) as error:
        message = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise EvalframeError(f"cannot write {str(path)!r}: {message}") from error
    finally:
        partial.unlink(missing_ok=True)


def _write(
    frame: pl.DataFrame | pl.LazyFrame, path: Path, kind: str, metadata: Mapping[str, str] | None
) -> None:
    lazy = isinstance(frame, pl.LazyFrame)
    if kind == "parquet":
        if lazy:
            frame.sink_parquet(path, metadata=dict(metadata or {}) or None)
        else:
            frame.write_parquet(path, metadata=dict(metadata or {}) or None)
    elif kind == "ipc":
        frame.sink_ipc(path) if lazy else frame.write_ipc(path)
    elif kind == "ndjson":
        frame.sink_ndjson(path) if lazy else frame.write_ndjson(path)
    elif kind == "csv":
        frame.sink_csv(path) if lazy else frame.write_csv(path)
    else:
        (frame.collect() if lazy else frame).write_json(path)


def _check_flat(frame: pl.DataFrame | pl.LazyFrame, path: str | Path) -> None:
    nested = [
        name
        for name, dtype in frame.collect_schema().items()
        if isinstance(dtype, pl.List | pl.Array | pl.Struct)
    ]
    if nested:
        raise EvalframeError(
            f"cannot write {str(path)!r} as CSV: columns {nested} are nested (lists or structs); "
            "write parquet or JSON lines instead, or drop those columns"
        )
