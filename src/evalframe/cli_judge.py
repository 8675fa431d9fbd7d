"""The ``evalframe judge`` commands: pairwise and pointwise judging, reports, ratings.

The commands compose :mod:`evalframe.judge`; they compute nothing themselves.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl

from evalframe.errors import EvalframeError
from evalframe.io.load import scan
from evalframe.io.save import save

#: Where each judge command's help comes from.
EXAMPLES = {
    "pairwise": "evalframe judge pairwise pairs.parquet --model gpt-4o --cache judge.sqlite "
    "-o judged.parquet",
    "grade": "evalframe judge grade answers.jsonl --model gpt-4o --format mtbench "
    "-o graded.parquet",
    "classify": "evalframe judge classify gpt-4_pair.jsonl --verdict-ab g1_judgment "
    "--verdict-ba g2_judgment --format mtbench -o outcomes.parquet",
    "report": "evalframe judge report judged.parquet --by model_b --policy mtbench",
    "ratings": "evalframe judge ratings judged.parquet --anchor gpt-4=1000 --bootstrap 1000",
}


def add_judge_parser(commands: Any, parser_class: type[argparse.ArgumentParser]) -> None:
    """Add ``judge`` and its subcommands to the ``evalframe`` command's subparsers."""
    judge = commands.add_parser(
        "judge",
        help="LLM-as-judge: pairwise with position swap, grading, reports, ratings",
        description=(
            "Judge with a model: 'pairwise' asks for every row twice, the two answers in both "
            "orders, and classifies the outcome (A, B, tie, inconsistent, error); 'grade' "
            "asks once per row for a grade; 'classify' reads verdicts already collected; "
            "'report' gives win rates with intervals under a named policy; 'ratings' fits "
            "Bradley-Terry ratings on the Elo scale. Every judgment goes through a durable "
            "SQLite cache (--cache): a rerun asks nothing twice."
        ),
    )
    subcommands = judge.add_subparsers(
        dest="judge_command", metavar="SUBCOMMAND", parser_class=parser_class
    )
    subcommands.required = True
    for name in ("pairwise", "grade"):
        sub = subcommands.add_parser(
            name,
            help="ask the judge about every row twice (both orders) and classify"
            if name == "pairwise" else "ask the judge for a grade of every row",
            epilog=f"Example: {EXAMPLES[name]}",
        )
        sub.add_argument("inputs", nargs="+", metavar="INPUT", help="files or globs")
        _add_judge_model(sub)
        sub.add_argument(
            "--format", default="default" if name == "pairwise" else "mtbench",
            help="pairwise: default (FIRST/SECOND/TIE), mtbench ([[A]]/[[B]]/[[C]]), "
            "arena_hard ([[A>>B]]...); grade: mtbench (Rating: [[7]]), inspect_qa, "
            "inspect_qa_partial, inspect_fact, inspect_fact_partial, numeric",
        )
        sub.add_argument("--rubric", help="the judging instructions (text, or @FILE)")
        sub.add_argument(
            "--template",
            help="a prompt template over columns, e.g. 'Q: {question}\\nA: {answer_a}...' "
            "(text, or @FILE); the format's parser is kept unless --pattern is given",
        )
        if name == "pairwise":
            sub.add_argument(
                "--pattern",
                help="with --template: a verdict regex with named groups first, second, tie",
            )
        else:
            sub.add_argument("--scale", metavar="LOW,HIGH", help="bounds of a numeric grade")
        sub.add_argument(
            "--col", action="append", default=[], metavar="ROLE=COLUMN",
            help="map a role (question, answer_a, answer_b, answer, criterion) to a column",
        )
        sub.add_argument("--cache", metavar="PATH", help="the SQLite judgment cache")
        sub.add_argument("--concurrency", type=int, metavar="N", help="requests in flight")
        sub.add_argument("-o", "--output", required=True, metavar="PATH", help="output file")
        sub.add_argument("--quiet", action="store_true", help="no progress bar")
        sub.add_argument("--debug", action="store_true", help="show tracebacks on errors")

    classify = subcommands.add_parser(
        "classify", help="classify verdicts already collected (no judge is asked)",
        epilog=f"Example: {EXAMPLES['classify']}",
    )
    classify.add_argument("inputs", nargs="+", metavar="INPUT", help="files or globs")
    classify.add_argument("--verdict-ab", default="verdict_ab", metavar="COLUMN")
    classify.add_argument("--verdict-ba", default="verdict_ba", metavar="COLUMN")
    classify.add_argument(
        "--format",
        help="the columns hold raw replies in this format (default: labels A/B/tie/error)",
    )
    classify.add_argument("-o", "--output", metavar="PATH", help="output file")
    classify.add_argument("--debug", action="store_true", help="show tracebacks on errors")

    report = subcommands.add_parser(
        "report", help="win rates, their standard errors and intervals, position bias",
        epilog=f"Example: {EXAMPLES['report']}",
    )
    report.add_argument("inputs", nargs="+", metavar="INPUT", help="judged files or globs")
    report.add_argument("--by", default="", metavar="COLS", help="comma-separated group columns")
    report.add_argument(
        "--policy", default="default",
        help="default, mtbench (inconsistent = tie), arena_hard, alpaca_eval (preferences)",
    )
    report.add_argument("--ci", type=float, default=0.95, metavar="LEVEL")
    report.add_argument("--cluster", metavar="COLUMN", help="cluster the standard error")
    report.add_argument("-o", "--output", metavar="PATH", help="write the table to a file")
    report.add_argument("--debug", action="store_true", help="show tracebacks on errors")

    ratings = subcommands.add_parser(
        "ratings", help="Bradley-Terry ratings on the Elo scale, bootstrap intervals",
        epilog=f"Example: {EXAMPLES['ratings']}",
    )
    ratings.add_argument("inputs", nargs="+", metavar="INPUT", help="judged files or globs")
    ratings.add_argument("--anchor", metavar="MODEL[=RATING]", help="the model fixed at a rating")
    ratings.add_argument("--bootstrap", type=int, default=1000, metavar="B")
    ratings.add_argument("--seed", type=int, default=0)
    ratings.add_argument("--cluster", default="sample_id", metavar="COLUMN",
                         help="resample by this column (questions); 'none' for battles")
    ratings.add_argument("--matrix", action="store_true", help="also show the win-rate matrix")
    ratings.add_argument("-o", "--output", metavar="PATH", help="write the table to a file")
    ratings.add_argument("--debug", action="store_true", help="show tracebacks on errors")


def _add_judge_model(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", required=True, help="the judge model's name on the server")
    parser.add_argument(
        "--base-url", help="an OpenAI-compatible API root (vLLM, TGI, Ollama...); default OpenAI"
    )
    parser.add_argument(
        "--api-key-env", default="OPENAI_API_KEY", metavar="VAR",
        help="the environment variable holding the API key (never logged or stored)",
    )
    parser.add_argument("--temperature", type=float, default=0.0)
    parser.add_argument("--max-tokens", type=int, default=1024)
    parser.add_argument("--seed", type=int)
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per request")
    parser.add_argument("--max-retries", type=int, default=5)


def run_judge(args: argparse.Namespace, show: Callable[[pl.DataFrame], None]) -> int:
    """Run ``evalframe judge SUBCOMMAND``; return the exit code."""
    from evalframe import judge as J

    command = args.judge_command
    if command in ("pairwise", "grade"):
        frame = scan(args.inputs).collect()
        model = J.OpenAIJudge(
            args.model, base_url=args.base_url, api_key_env=args.api_key_env,
            temperature=args.temperature, max_tokens=args.max_tokens, seed=args.seed,
            timeout=args.timeout, max_retries=args.max_retries,
        )
        options: dict[str, Any] = {
            "rubric": _text(args.rubric), "columns": _mapping(args.col), "cache": args.cache,
            "concurrency": args.concurrency, "quiet": args.quiet,
        }
        template = _text(args.template)
        before = _cached_count(args.cache)
        if command == "pairwise":
            if args.pattern:
                if template is None:
                    raise EvalframeError("--pattern needs --template (the prompt it parses)")
                layout: Any = J.custom_format(template, args.pattern)
                template = None
            else:
                layout = args.format
            result = J.pairwise(frame, model, format=layout, template=template, **options)
        else:
            result = J.grade(
                frame, model, format=args.format, template=template,
                scale=_scale(args.scale), **options,
            )
        save(result, args.output)
        if not args.quiet:
            sys.stderr.write(_summary(result, command, before, _cached_count(args.cache)) + "\n")
        return 0
    if command == "classify":
        frame = scan(args.inputs).collect()
        result = J.classify(
            frame, verdict_ab=args.verdict_ab, verdict_ba=args.verdict_ba, format=args.format
        )
        _emit(result, args.output, show)
        return 0
    if command == "report":
        by = [key.strip() for key in args.by.split(",") if key.strip()] or None
        table = J.report(
            scan(args.inputs).collect(), by=by, policy=args.policy, ci=args.ci,
            cluster=args.cluster,
        )
        _emit(table, args.output, show)
        return 0
    battles = scan(args.inputs).collect()
    anchor: Any = None
    if args.anchor:
        name, sep, rating = args.anchor.partition("=")
        anchor = (name, float(rating)) if sep else name
    cluster = None if args.cluster.lower() == "none" else args.cluster
    table = J.ratings(
        battles, anchor=anchor, bootstrap=args.bootstrap, seed=args.seed, cluster=cluster
    )
    _emit(table, args.output, show)
    if args.matrix:
        show(J.win_rate_matrix(battles))
    return 0


def _cached_count(path: str | None) -> int | None:
    """How many judgments the cache at ``path`` holds (None without a cache)."""
    if path is None:
        return None
    from evalframe.judge import JudgmentCache

    if not Path(os.path.expanduser(path)).exists():
        return 0
    with JudgmentCache(os.path.expanduser(path)) as cache:
        return len(cache)


def _summary(result: pl.DataFrame, command: str, before: int | None, after: int | None) -> str:
    """One line: rows judged, replies, new judgments in the cache, rows with an error."""
    columns = ["judgment_ab", "judgment_ba"] if command == "pairwise" else ["judgment"]
    replies = sum(result.height - result.get_column(name).null_count() for name in columns)
    errors = result.filter(pl.col("judge_error").is_not_null()).height
    line = f"judged {result.height} row(s): {replies} replies"
    if before is not None and after is not None:
        line += f", {after - before} new judgment(s) cached (the cache holds {after})"
    return line + f"; {errors} row(s) with an error (see judge_error)"


def _emit(table: pl.DataFrame, output: str | None, show: Callable[[pl.DataFrame], None]) -> None:
    if output:
        save(table, output)
    else:
        show(table)


def _text(value: str | None) -> str | None:
    """A command-line text, or the content of the file named after ``@``."""
    if value is None or not value.startswith("@"):
        return value
    path = Path(os.path.expanduser(value[1:]))
    try:
        return path.read_text(encoding="utf-8")
    except OSError as error:
        raise EvalframeError(f"cannot read {str(path)!r}: {error.strerror or error}") from error


def _mapping(pairs: list[str]) -> dict[str, str] | None:
    mapping = {}
    for pair in pairs:
        role, sep, column = pair.partition("=")
        if not sep or not role or not column:
            raise EvalframeError(f"--col expects ROLE=COLUMN, got {pair!r}")
        mapping[role] = column
    return mapping or None


def _scale(text: str | None) -> tuple[float, float] | None:
    if text is None:
        return None
    low, sep, high = text.partition(",")
    try:
        if not sep:
            raise ValueError(text)
        return float(low), float(high)
    except ValueError as error:
        raise EvalframeError(f"--scale expects LOW,HIGH, got {text!r}") from error
