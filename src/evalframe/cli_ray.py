"""``evalframe score`` and ``evalframe aggregate`` with ``--engine ray``.

The same commands, the same checks and the same output as the default engine: the work
runs on a Ray cluster (:mod:`evalframe.ray`), the table is printed or written on this
machine exactly as one process makes it. Without Ray installed, or with an option that
needs the whole input in one process (``--gold``, ``--group``...), the command is a usage
error (exit code 2), before anything is read.
"""

from __future__ import annotations

import argparse
import io
import json
import logging
import os
import re
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from types import ModuleType
from typing import Any

import polars as pl

from evalframe._version import __version__
from evalframe.errors import EvalframeError
from evalframe.io.formats import READ_FORMATS
from evalframe.io.paths import expand_paths
from evalframe.metrics.request import MetricRequest
from evalframe.scored import CONTRACT_COLUMN
from evalframe.stats.columns import recorded_mapping, recorded_metrics
from evalframe.stats.signature import score_signature

#: Options of ``score`` that need the whole input in one process, with their defaults.
WHOLE_INPUT = {
    "gold": None, "group": None, "select": "", "schema": [], "csv_empty": "string",
    "duplicates": "error",
}
#: Layouts Ray reads: plain tables (a harness dump is read by the default engine).
TABLE_FORMATS = ("auto", "table")
#: ``stderr:clustered(COLUMN)`` in a signature: the column the standard error clustered on.
_CLUSTERED = re.compile(r"\|stderr:clustered\(([^)|]*)\)")


def ray_engine(args: argparse.Namespace) -> ModuleType | None:
    """:mod:`evalframe.ray`, connected to the cluster of ``--address`` (a new local one by
    default), for ``--engine ray``; None for the default engine.

    A usage error: ``--address`` without ``--engine ray``, an address that is not one,
    Ray not installed (with the command that installs it).
    """
    from evalframe.cli import UsageError

    if args.engine != "ray":
        if args.address is not None:
            raise UsageError(f"evalframe {args.command}: --address goes with --engine ray")
        return None
    try:
        import evalframe.ray as efr
    except ImportError as error:
        raise UsageError(f"evalframe {args.command}: --engine ray: {error}") from error
    try:
        efr.check_address(args.address)
    except EvalframeError as error:
        raise UsageError(f"evalframe {args.command}: --address {args.address}: not a Ray "
                         "address; give auto or HOST:PORT") from error
    return efr


@contextmanager
def session(efr: ModuleType, args: argparse.Namespace) -> Iterator[None]:
    """Connected to the cluster while the block runs, Ray's own output kept off the
    command's: its logging silenced, and the messages the cluster sends every driver
    (which Ray prints to ``sys.stdout``, where a table or parquet goes) sent to stderr
    (nowhere with ``--quiet``). Disconnected at the end, before anything is written."""
    import ray
    import ray.data

    for name in ("ray", "ray.data"):
        logging.getLogger(name).setLevel(logging.CRITICAL)
    stdout = sys.stdout
    sys.stdout = open(os.devnull, "w", encoding="utf-8") if args.quiet else sys.stderr  # noqa: SIM115
    try:
        efr.init(args.address, logging_level=logging.ERROR, log_to_driver=False)
        context = ray.data.DataContext.get_current()
        context.enable_progress_bars = False
        context.print_on_execution_start = False
        context.execution_options.preserve_order = True  # rows in the input's order
        yield
    finally:
        ray.shutdown()
        if sys.stdout is not sys.stderr:
            sys.stdout.close()
        sys.stdout = stdout


def check_whole_input(args: argparse.Namespace) -> None:
    """Options that need the whole input in one process: a usage error with Ray."""
    from evalframe.cli import UsageError

    given = [
        "--" + name.replace("_", "-") for name, default in WHOLE_INPUT.items()
        if getattr(args, name, default) != default
    ]
    if getattr(args, "format", "auto") not in TABLE_FORMATS:
        given.append(f"--format {args.format}")
    if given:
        raise UsageError(
            f"evalframe {args.command}: {', '.join(given)} cannot run with --engine ray (it "
            "needs the whole input in one process); run without --engine ray, or prepare the "
            "input first (evalframe score ... -o prepared.parquet)"
        )


def score_on_ray(
    args: argparse.Namespace,
    efr: ModuleType,
    requests: Sequence[MetricRequest],
    mapping: Mapping[str, str],
    show: Callable[[pl.DataFrame], None],
) -> None:
    """``evalframe score --engine ray``: stdout as the default engine writes it, or a
    folder of parquet files for ``-o NAME.parquet``."""
    from evalframe.cli import STDIO, UsageError, progress

    check_whole_input(args)
    output = args.output
    if output is None and not sys.stdout.isatty():
        output = STDIO
    if output not in (None, STDIO) and not output.lower().endswith((".parquet", ".pq")):
        raise UsageError(
            f"evalframe score: -o {output}: --engine ray writes parquet, a folder of files "
            "(-o NAME.parquet), or parquet on standard output (-o -)"
        )
    stdout = sys.stdout.buffer if output == STDIO else None  # a closed one fails here, first
    frame = None
    with progress(f"scoring {len(requests)} metric(s) on Ray", args.quiet), session(efr, args):
        scored = efr.score(args.inputs, args.metrics, columns=mapping, overwrite=args.overwrite)
        if output in (None, STDIO):
            frame = efr.collect(scored)
        else:
            efr.save(scored, output)
    if stdout is not None and frame is not None:
        buffer = io.BytesIO()
        frame.write_parquet(buffer, metadata=_metadata(requests))
        stdout.write(buffer.getvalue())
        sys.stdout.flush()
    elif frame is not None:  # the record of the scoring is for programs, not the terminal
        show(frame.drop(CONTRACT_COLUMN))


def _metadata(requests: Sequence[MetricRequest]) -> dict[str, str]:
    """What ``evalframe score`` records in the parquet it writes."""
    return {
        "evalframe.version": __version__,
        "evalframe.signatures": json.dumps(
            {request.column: score_signature(request) for request in requests},
            ensure_ascii=False,
        ),
    }


def aggregate_on_ray(
    args: argparse.Namespace,
    efr: ModuleType,
    inputs: Sequence[str],
    keys: list[str],
    options: dict[str, Any],
) -> tuple[pl.DataFrame, str | None]:
    """``evalframe aggregate --engine ray``: the table (every group, ``keep_empty``), and
    the column the standard errors were clustered on where some group's rows repeat it."""
    from evalframe.cli import UsageError, progress

    check_whole_input(args)
    if not inputs:
        raise UsageError(
            "evalframe aggregate: --engine ray reads files (parquet or JSON lines), not "
            "standard input"
        )
    local = [path for path in inputs if "://" not in path]
    paths = expand_paths(local, readable=tuple(READ_FORMATS)) if local else []
    recorded = recorded_metrics(paths) if paths else {}
    roles = recorded_mapping(paths) if paths else {}
    names = {name: recorded.get(name) for name in args.metrics} if args.metrics else None
    options = {**options, "columns": {**roles, **options["columns"]}}
    with progress("aggregating on Ray", args.quiet), session(efr, args):
        table = efr.aggregate(list(inputs), by=keys, metrics=names, keep_empty=True, **options)
    repeated = table.filter(pl.col("n_clusters") < pl.col("n"))
    clustered = None
    if repeated.height:
        found = _CLUSTERED.search(repeated["signature"][0] or "")
        clustered = found.group(1) if found else None
    return table, clustered
