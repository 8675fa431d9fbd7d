"""The ``evalframe extract`` command.

``extract`` appends the answers extractors find in a column of responses
(:func:`evalframe.extract`), or, with ``--audit``, compares the extractors
(:func:`evalframe.audit_extractors`); ``evalframe extractors`` lists the extractor table.
The command composes :mod:`evalframe.extract`; it computes nothing itself.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

import polars as pl

EXAMPLE = (
    "evalframe extract samples_gsm8k.jsonl -x gsm8k_answer -x last_number --column response "
    "-o extracted.parquet\n  evalframe extract math.jsonl --audit -x boxed -x last_number "
    "--gold answer"
)


def add_extract_parsers(
    commands: Any,
    add_common: Callable[[argparse.ArgumentParser], None],
    add_reading: Callable[[argparse.ArgumentParser], None],
) -> None:
    """Add ``extract`` to the ``evalframe`` command's subparsers."""
    extract = commands.add_parser(
        "extract",
        help="extract answers from responses (\\boxed{}, '#### n', the last number...), or "
        "audit extractors against each other",
        description=(
            "Run answer extractors over a column of responses. The output keeps every input "
            "row and column and adds, per extractor, the answer and the rule that found it: "
            "'extracted' and 'extraction_rule' for one extractor, suffixed by the "
            "extractor's name for several (extracted_boxed, extraction_rule_boxed). A "
            "list[str] column (several generations) gives list columns. With --audit, "
            "print instead how much each extractor finds (and, with --gold, its accuracy "
            "by exact match), how often two extractors both answer yet disagree, and the "
            "rows whose verdict flips between extractors. Without -o the result is written "
            "to standard output as parquet when it is piped, or shown as a table on a "
            "terminal."
        ),
        epilog=f"Examples:\n  {EXAMPLE}\n\nExtractors: see 'evalframe extractors'.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    extract.add_argument(
        "inputs", nargs="+", metavar="INPUT",
        help="files or globs: .parquet, .jsonl/.ndjson(.gz), .json(.gz), .csv, .arrow/.ipc, "
        "harness dumps",
    )
    extract.add_argument(
        "-x", "--extractor", action="append", required=True, dest="extractors",
        metavar="NAME", help="an extractor from 'evalframe extractors' (repeatable)",
    )
    extract.add_argument(
        "--column", default="prediction", metavar="COLUMN",
        help="the column of responses (default: prediction)",
    )
    extract.add_argument(
        "--name", metavar="NAME",
        help="name the answer column(s) NAME (and NAME_rule) instead of extracted "
        "(and extraction_rule)",
    )
    extract.add_argument(
        "--format", default="auto", metavar="LAYOUT",
        help="input layout: auto (default), table, or a layout from 'evalframe formats'",
    )
    extract.add_argument(
        "-o", "--output", metavar="PATH",
        help="output file (.parquet, .jsonl, .csv, .arrow, .json); '-' for parquet on "
        "stdout; with --audit, the summary table",
    )
    audit = extract.add_argument_group("audit")
    audit.add_argument(
        "--audit", action="store_true",
        help="compare the extractors instead of writing the answers",
    )
    audit.add_argument("--gold", metavar="COLUMN", help="the gold column (accuracy, flips)")
    audit.add_argument(
        "--gold-extractor", metavar="NAME",
        help="extract the gold with this extractor first (e.g. gsm8k_answer)",
    )
    audit.add_argument("--by", default="", metavar="COLS", help="comma-separated group columns")
    audit.add_argument(
        "--show", type=int, default=10, metavar="N", help="flipped rows to show (default 10)"
    )
    add_reading(extract)
    add_common(extract)


def run_extract(args: argparse.Namespace) -> int:
    """``evalframe extract``: the answers, or the audit of the extractors."""
    from evalframe import cli
    from evalframe.extract.api import resolve
    from evalframe.io.load import scan

    for name in args.extractors:  # checked before any input is read: a usage error
        cli._usage(resolve, name)
    repeated = sorted({name for name in args.extractors if args.extractors.count(name) > 1})
    if repeated:
        raise cli.UsageError(f"evalframe extract: -x {', '.join(repeated)} given more than once")
    if args.gold_extractor:
        cli._usage(resolve, args.gold_extractor)
    if not args.audit:
        extras = [
            option for option, given in (
                ("--gold", args.gold), ("--gold-extractor", args.gold_extractor),
                ("--by", args.by),
            ) if given
        ]
        if extras:
            raise cli.UsageError(f"evalframe extract: {', '.join(extras)} go with --audit")
    if args.format not in _format_names():
        cli._usage(_check_format, args.format)
    frame = scan(args.inputs, format=args.format, **cli._reading(args))
    if args.audit:
        return _run_audit(args, frame)
    return _run_answers(args, frame)


def _format_names() -> tuple[str, ...]:
    from evalframe.io.adapters import format_names

    return tuple(format_names())


def _check_format(name: str) -> None:
    from evalframe.io.adapters import resolve_format

    resolve_format(name)


def _extractors(names: list[str]) -> str | list[str]:
    return names[0] if len(names) == 1 else names


def _run_answers(args: argparse.Namespace, frame: pl.LazyFrame) -> int:
    from evalframe import cli
    from evalframe.extract.api import extract, output_names, resolve_many
    from evalframe.io.save import save

    chosen = _extractors(args.extractors)
    extracted = extract(frame, chosen, column=args.column, name=args.name)
    output = args.output
    if output is None and not sys.stdout.isatty():
        output = cli.STDIO
    stdout = sys.stdout.buffer if output == cli.STDIO else None  # a closed one fails first
    with cli.progress(f"extracting with {len(args.extractors)} extractor(s)", args.quiet):
        result = extracted.collect()
        if stdout is not None:
            import io

            buffer = io.BytesIO()
            result.write_parquet(buffer)
            stdout.write(buffer.getvalue())
            sys.stdout.flush()
        elif output is None:
            cli._show(result)
        else:
            save(result, output)
    if not args.quiet:
        entries, single = resolve_many(chosen)
        labels = [label for label, _ in entries]
        for label, (answer, rule) in zip(
            labels, output_names(labels, single, args.name), strict=True
        ):
            found, rows = _answered(result, answer, rule)
            share = f" ({found / rows:.1%})" if rows else ""
            sys.stderr.write(f"{label}: an answer in {found} of {rows} response(s){share}\n")
    return 0


def _answered(result: pl.DataFrame, answer: str, rule: str) -> tuple[int, int]:
    """(responses with an answer, responses): generations count one each."""
    pair = result.select(answer, rule)
    if isinstance(pair.schema[answer], pl.List):
        pair = pair.explode([answer, rule], empty_as_null=False)
    found = pair.select(
        (pl.col(answer).is_not_null() & (pl.col(rule) != "none")).fill_null(False).sum()
    ).item()
    return int(found), pair.height


def _run_audit(args: argparse.Namespace, frame: pl.LazyFrame) -> int:
    from evalframe import cli
    from evalframe.extract.audit import audit_extractors
    from evalframe.io.save import save

    if args.show < 0:
        raise cli.UsageError(f"evalframe extract: --show {args.show} must be >= 0")
    by = [key.strip() for key in args.by.split(",") if key.strip()] or None
    labels = list(args.extractors)
    with cli.progress(f"auditing {len(labels)} extractor(s)", args.quiet):
        found = audit_extractors(
            frame, labels, column=args.column, gold=args.gold, by=by,
            gold_extractor=args.gold_extractor,
        )
    print("extractors:")
    cli._show(found.summary)
    if len(labels) > 1:
        print("disagreements (both answered, different answers):")
        cli._show(found.disagreements)
    if args.gold is not None:
        shown = min(args.show, found.flips.height)
        print(f"verdict flips: {found.flips.height} row(s); the first {shown}:")
        if shown:
            cli._show(found.flips.head(shown))
    elif not args.quiet:
        import warnings

        warnings.warn("no --gold: accuracy and verdict flips need the gold column", stacklevel=1)
    if args.output:
        save(found.summary, args.output)
    return 0
