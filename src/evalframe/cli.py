"""The ``evalframe`` command: score dumps, aggregate scores, extract answers, list metrics.

Exit codes: 0 success, 1 a data error, 2 a usage error (a command line that cannot be run
as given: an option's value, an output file of an unknown type...; checked before any
input is read), 130 an interrupt (Ctrl-C). An error is one line on stderr, at most
:data:`MESSAGE_LIMIT` characters, leading with what went wrong; ``--debug`` shows the
traceback and the whole message.

An input ``-`` reads parquet from standard input, in every command that reads files
(``evalframe extract ... | evalframe score - -m ...``), as ``aggregate`` reads it.

>>> main(["metrics", "--names"])  # doctest: +ELLIPSIS
acc
...
0
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import io
import json
import math
import os
import shutil
import sys
import tempfile
import threading
import time
import traceback
import warnings
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, NamedTuple

import polars as pl

from evalframe._registry import Registry
from evalframe._version import __version__
from evalframe.cli_extract import add_extract_parsers, run_extract
from evalframe.cli_gate import add_gate_parser, run_gate
from evalframe.cli_judge import add_judge_parser, run_judge
from evalframe.cli_ray import aggregate_on_ray, ray_engine, score_on_ray
from evalframe.engine import collect, prepare_input, score_plan
from evalframe.errors import EvalframeError, OptionError, without_plan
from evalframe.extract.table import EXTRACTORS
from evalframe.io._atomic import resolve_target
from evalframe.io._cast import DTYPE_NAMES, parse_dtype
from evalframe.io.adapters import LAYOUTS, format_names
from evalframe.io.formats import READ_FORMATS, WRITE_FORMATS, format_of
from evalframe.io.join import join_metadata, key_columns
from evalframe.io.load import expand_paths, scan
from evalframe.io.save import save
from evalframe.metrics.registry import all_metrics, list_metrics
from evalframe.metrics.request import describe_options, parse_requests
from evalframe.normalize.table import NORMALIZERS
from evalframe.schema import ROLES
from evalframe.scored import CONTRACT_COLUMN
from evalframe.stats.aggregate import aggregate, cluster_column, widen
from evalframe.stats.aggregate import check_options as check_aggregate_options
from evalframe.stats.columns import (
    ROLES_KEY,
    decode_metadata,
    find_columns,
    recorded_mapping,
    recorded_metrics,
)
from evalframe.stats.compare import check_options as check_compare_options
from evalframe.stats.compare import compare
from evalframe.stats.groups import group_tasks
from evalframe.stats.methods import (
    COMPARISON_TESTS,
    CORRECTION_METHODS,
    INTERVAL_METHODS,
    STDERR_METHODS,
)
from evalframe.stats.missing import MISSING_POLICIES
from evalframe.stats.options import check_level, check_seed
from evalframe.stats.power import mde, paired_variance, power, sample_size
from evalframe.stats.signature import score_signature

EXIT_OK, EXIT_DATA, EXIT_USAGE = 0, 1, 2
#: 128 + the signal's number, as shells report a process ended by SIGINT / SIGPIPE.
EXIT_INTERRUPTED, EXIT_BROKEN_PIPE = 130, 141
STDIO = "-"
#: The longest error or warning line shown without ``--debug``.
MESSAGE_LIMIT = 300
#: The commands whose ``-o -`` writes parquet to standard output.
STDOUT_COMMANDS = ("score", "extract")


class UsageError(Exception):
    """A command line that cannot be run as given (exit code 2)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # argparse exits 2 on usage errors too
        raise UsageError(f"{self.prog}: {message}")


def _metric_help() -> str:
    return ", ".join(spec.name for spec in all_metrics())


def _methods_help(table) -> str:
    """Every method of a statistics table with its description, for an option's help."""
    return "; ".join(f"{entry.name}: {entry.description}" for entry in table.entries())


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``evalframe`` command."""
    parser = _Parser(
        prog="evalframe",
        description="Vectorized batch scoring of language-model evaluation dumps.",
        epilog="Run 'evalframe COMMAND --help' for each command's options.",
    )
    parser.add_argument("--version", action="version", version=f"evalframe {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    commands.required = True

    score = commands.add_parser(
        "score",
        help="score dumps with metrics; write the input plus one column per metric",
        description=(
            "Score every row of the input files with the given metrics. The output keeps every "
            "input row and column in order and adds one column per metric, named as requested: "
            "a Float64 score for a sample-level metric, the row's statistics (a struct) for a "
            "corpus-level metric, which 'evalframe aggregate' reduces to the score. Metric "
            "options: -m 'name(key=value, ...)'; name the column with -m 'alias=name(...)'. "
            "Without -o the result is written to standard output as parquet when it is "
            "piped (for 'evalframe aggregate'), or shown as a table on a terminal."
        ),
        epilog=(
            "Example: evalframe score runs/*.jsonl -m squad_em -m 'em_ci=exact_match(ignore_case="
            "true)' --col gold=answers -o scored.parquet\n\nMetrics: " + _metric_help()
        ),
    )
    score.add_argument(
        "inputs", nargs="+", metavar="INPUT",
        help="files or globs: .parquet, .jsonl/.ndjson(.gz), .json(.gz), .csv, .arrow/.ipc",
    )
    score.add_argument(
        "-m", "--metric", action="append", required=True, dest="metrics", metavar="METRIC",
        help="a metric (repeatable): a name such as squad_f1 or pass@10, with options as "
        "'name(key=value, ...)' and an optional 'alias=' for the column; see 'evalframe metrics'",
    )
    score.add_argument(
        "--col", action="append", default=[], metavar="ROLE=COLUMN",
        help=f"map a role to a column (repeatable). Roles: {', '.join(ROLES)}",
    )
    score.add_argument(
        "-o", "--output", metavar="PATH",
        help="output file (.parquet, .jsonl, .csv, .arrow, .json); '-' for parquet on stdout",
    )
    score.add_argument(
        "--overwrite", action="store_true",
        help="replace input columns that are named like a requested metric",
    )
    _add_input_shaping(score)
    _add_reading(score)
    _add_engine(score, "score each block of the input in a Ray worker; -o NAME.parquet "
                "writes a folder of parquet files there")
    _add_common(score)

    rescoring = commands.add_parser(
        "rescore",
        help="score a harness dump and compare, row by row, with the harness's own values",
        description=(
            "Score a dump with evalframe's metrics and compare each metric column with the "
            "per-sample value the harness stored (harness.<metric>, as the adapters keep "
            "it): per metric, how many rows agree, and the first rows that differ. A "
            "request with options compares with the harness's own metric "
            "(-m 'exact_match(ignore_case=true)' with harness.exact_match); name a "
            "metric as the harness does with an alias (-m 'em=drop_em') or map it with "
            "--against. The summary says which harness column each metric was compared "
            "with. Exit code 0 when every row agrees, 1 when some differ."
        ),
        epilog="Example: evalframe rescore samples_drop_*.jsonl -m 'em=drop_em' -m 'f1=drop_f1'",
    )
    rescoring.add_argument("inputs", nargs="+", metavar="INPUT", help="dump files or globs")
    rescoring.add_argument(
        "-m", "--metric", action="append", required=True, dest="metrics", metavar="METRIC",
        help="a metric (repeatable), as for 'evalframe score'",
    )
    rescoring.add_argument(
        "--against", action="append", default=[], metavar="COLUMN=HARNESS_COLUMN",
        help="compare a metric column with this column instead of harness.<column>",
    )
    rescoring.add_argument(
        "--tolerance", type=float, default=0.0, metavar="T",
        help="largest absolute difference that still agrees (default 0: bit for bit)",
    )
    rescoring.add_argument(
        "--show", type=int, default=10, metavar="N", help="differing rows to show (default 10)"
    )
    rescoring.add_argument(
        "--col", action="append", default=[], metavar="ROLE=COLUMN",
        help="map a role to a column (repeatable)",
    )
    rescoring.add_argument(
        "-o", "--output", metavar="PATH", help="write the differing rows to a file"
    )
    _add_input_shaping(rescoring)
    _add_reading(rescoring)
    _add_common(rescoring)

    agg = commands.add_parser(
        "aggregate",
        help="aggregate scored files per group: mean, standard error, confidence interval",
        description=(
            "Aggregate the metric columns of scored files: one row per group and metric with "
            "n, n_missing, n_null, value, stderr, ci_low, ci_high, n_clusters and a signature "
            "of what determines the numbers. Sample-level metrics: the mean, the standard "
            "error of the mean (clustered when rows repeat a question) and an interval inside "
            "the metric's bounds (Wilson for 0/1 scores, Student-t otherwise). Corpus-level "
            "metrics (f1, mcc, perplexity...): the metric's formula over the group's "
            "statistics, a seeded bootstrap standard error and percentile interval. A missing "
            "answer (null prediction) counts as wrong by default (--missing); a row without a "
            "gold is left out and counted in n_null. Groups in which a metric has no score at "
            "all are left out (use --keep-empty to keep them)."
        ),
        epilog="Example: evalframe aggregate scored.parquet --by model,task -o summary.csv",
    )
    agg.add_argument(
        "inputs", nargs="*", metavar="INPUT",
        help="scored files or globs; none or '-' reads parquet from standard input",
    )
    agg.add_argument(
        "--by", default="", metavar="COLS", help="comma-separated grouping columns, e.g. model,task"
    )
    agg.add_argument(
        "-m", "--metric", action="append", dest="metrics", metavar="METRIC",
        help="metric column to aggregate (repeatable); default: every metric column",
    )
    agg.add_argument(
        "--ci", type=float, default=0.95, metavar="LEVEL",
        help="confidence level of the interval (default 0.95)",
    )
    agg.add_argument(
        "--bootstrap", type=int, default=1000, metavar="B",
        help="bootstrap replicates for the standard error of corpus metrics (default 1000)",
    )
    agg.add_argument(
        "--seed", type=int, default=0, metavar="SEED",
        help="seed of the bootstrap (default 0; results are reproducible)",
    )
    agg.add_argument("--keep-empty", action="store_true", help="keep groups with no scores")
    agg.add_argument(
        "--missing", choices=MISSING_POLICIES, default="wrong",
        help="what a missing answer (a null prediction) counts as: wrong (default: the "
        "metric's worst score), exclude (left out), or an error; counted in n_missing",
    )
    agg.add_argument(
        "--interval", choices=INTERVAL_METHODS.names(), default="auto",
        help="interval method (default auto): " + _methods_help(INTERVAL_METHODS),
    )
    agg.add_argument(
        "--cluster", metavar="COLUMN",
        help="cluster the standard error on this column (question ids); default: the "
        "'cluster' column, else 'sample_id' where it repeats within a group",
    )
    agg.add_argument("--no-cluster", action="store_true", help="never cluster")
    agg.add_argument(
        "--stderr", choices=STDERR_METHODS.names(), default="auto",
        help="standard-error method (default auto): " + _methods_help(STDERR_METHODS),
    )
    agg.add_argument(
        "--col", action="append", default=[], metavar="ROLE=COLUMN",
        help="the role mapping used to score (to tell missing answers from rows without a "
        "gold); files written by 'evalframe score' record it",
    )
    agg.add_argument(
        "--wide", action="store_true", help="one row per group, metrics as columns",
    )
    agg.add_argument(
        "--groups", metavar="FILE",
        help="a JSON file mapping group names to lists of tasks (e.g. {\"mmlu\": [...]}); "
        "adds a row per group (needs 'task' in --by)",
    )
    agg.add_argument(
        "--group-method", default="weighted", metavar="METHODS",
        help="comma-separated: mean (unweighted, SE sqrt(sum se^2)/K), weighted (by size), "
        "pooled (lm-evaluation-harness's); default weighted",
    )
    agg.add_argument(
        "--join", metavar="FILE",
        help="attach model metadata (parameters, family...) from a csv/parquet/json file, "
        "matched on --on; keys without a match are reported",
    )
    agg.add_argument(
        "--on", default="model", metavar="COLS",
        help="key column(s) of --join (default model)",
    )
    _add_reading(agg)
    _add_engine(agg, "reduce each block of the input to its statistics in a Ray worker and "
                "merge them: the same table")
    agg.add_argument(
        "-o", "--output", metavar="PATH",
        help="write the table to a file instead of the terminal: data (.parquet, .csv, .json, "
        ".jsonl) or formatted, values with their intervals (.md, .tex, .html)",
    )
    _add_format(agg)
    _add_common(agg)

    comparison = commands.add_parser(
        "compare",
        help="paired comparison of models with a baseline on the same items",
        description=(
            "Compare every model with a baseline on the items both answered: per group, "
            "model and metric the mean difference (model minus baseline), its paired "
            "standard error (clustered with --cluster), interval, p-value (McNemar's exact "
            "test for 0/1 scores; a paired bootstrap for corpus metrics), the correlation "
            "of the two models' scores and the number of matched items. Items present for "
            "one model only are counted in n_unmatched_model / n_unmatched_baseline."
        ),
        epilog="Example: evalframe compare scored.parquet --baseline gpt-x --by task",
    )
    comparison.add_argument("inputs", nargs="+", metavar="INPUT", help="scored files or globs")
    comparison.add_argument("--baseline", required=True, help="the baseline model's name")
    comparison.add_argument("--model-column", default="model", metavar="COLUMN",
                            help="the column naming the models (default: model)")
    comparison.add_argument("--by", default="", metavar="COLS",
                            help="comma-separated grouping columns, e.g. task")
    comparison.add_argument("--on", default="sample_id", metavar="COLS",
                            help="comma-separated columns that identify an item (default: "
                            "sample_id)")
    comparison.add_argument("-m", "--metric", action="append", dest="metrics",
                            metavar="METRIC", help="metric column to compare (repeatable)")
    comparison.add_argument("--cluster", metavar="COLUMN",
                            help="cluster the paired test on this column (default: the "
                            "'cluster' column, else sample_id where it repeats, as aggregate)")
    comparison.add_argument("--no-cluster", action="store_true",
                            help="never cluster: every pair is independent")
    comparison.add_argument("--method", default="auto", choices=COMPARISON_TESTS.names(),
                            help="the paired test (default auto): "
                            + _methods_help(COMPARISON_TESTS))
    comparison.add_argument("--correction", choices=CORRECTION_METHODS.names(),
                            help="adjust p-values for multiple comparisons (per metric): "
                            + _methods_help(CORRECTION_METHODS))
    comparison.add_argument(
        "--missing", choices=MISSING_POLICIES, default="wrong",
        help="what a missing answer counts as (as in aggregate; default wrong)",
    )
    comparison.add_argument("--ci", type=float, default=0.95, metavar="LEVEL")
    comparison.add_argument("--bootstrap", type=int, default=1000, metavar="B")
    comparison.add_argument("--seed", type=int, default=0, metavar="SEED")
    comparison.add_argument(
        "-o", "--output", metavar="PATH",
        help="write the table to a file: data (.parquet, .csv, .json, .jsonl) or formatted "
        "(.md, .tex, .html)",
    )
    _add_format(comparison)
    _add_common(comparison)

    reporting = commands.add_parser(
        "report",
        help="one self-contained HTML report: tables, charts, comparisons, signatures",
        description=(
            "Aggregate scored results and write one HTML file that opens offline: the "
            "scores with their intervals (a table, a model x task table, a chart), pass@k "
            "over k, the paired differences against --baseline (Holm-corrected), the "
            "counts of missing answers, null rows and repeated samples, and the signature "
            "of every number. Needs the plot extra (pip install \"evalframe[plot]\")."
        ),
        epilog="Example: evalframe score dump.jsonl -m exact_match | evalframe report - "
        "--by task --baseline gpt-x -o report.html",
    )
    reporting.add_argument("inputs", nargs="+", metavar="INPUT",
                           help="scored files or globs, or '-' for parquet on standard input")
    reporting.add_argument("-o", "--output", required=True, metavar="PATH",
                           help="the report to write (.html)")
    reporting.add_argument("--by", default="", metavar="COLS",
                           help="grouping columns besides the model, e.g. task")
    reporting.add_argument("--baseline", metavar="MODEL",
                           help="compare every other model with this one (paired)")
    reporting.add_argument("--model-column", default="model", metavar="COLUMN",
                           help="the column naming the models (default: model)")
    reporting.add_argument("-m", "--metric", action="append", dest="metrics",
                           metavar="METRIC", help="metric column to report (repeatable)")
    reporting.add_argument("--svg", metavar="DIR", help="also write every chart as SVG here")
    reporting.add_argument("--title", default="Evaluation report", help="the report's title")
    reporting.add_argument("--ci", type=float, default=0.95, metavar="LEVEL")
    reporting.add_argument("--missing", choices=MISSING_POLICIES, default="wrong",
                           help="what a missing answer counts as (default wrong)")
    _add_common(reporting)

    planning = commands.add_parser(
        "power",
        help="power, minimum detectable effect and questions needed for a paired comparison",
        description=(
            "Plan a paired comparison (Miller 2024): from scored data (the variance of the "
            "paired difference per question, between and within questions) or a given "
            "--variance, print the power to detect each --delta with n questions, the "
            "minimum detectable effect for each --n, and the questions needed for each "
            "--delta at --power."
        ),
        epilog=(
            "Example: evalframe power scored.parquet -m acc --baseline gpt-x --delta "
            "0.02,0.05"
        ),
    )
    planning.add_argument("inputs", nargs="*", metavar="INPUT",
                          help="scored files (or none with --variance)")
    planning.add_argument("-m", "--metric", help="the metric column")
    planning.add_argument("--baseline", help="the baseline model")
    planning.add_argument("--candidate", help="the other model (default: the only other one)")
    planning.add_argument("--model-column", default="model", metavar="COLUMN")
    planning.add_argument("--on", default="sample_id", metavar="COLS",
                          help="comma-separated columns that identify a question")
    planning.add_argument("--cluster", metavar="COLUMN")
    planning.add_argument("--variance", type=float,
                          help="the variance of one question's paired difference (no data)")
    planning.add_argument("--delta", default="", metavar="D,D",
                          help="effects to detect, comma-separated (e.g. 0.02,0.05)")
    planning.add_argument("--n", default="", metavar="N,N",
                          help="numbers of questions, comma-separated (default: the data's)")
    planning.add_argument("--alpha", type=float, default=0.05)
    planning.add_argument("--power", type=float, default=0.8, dest="target_power")
    planning.add_argument("--one-sided", action="store_true")
    _add_common(planning)

    metrics = commands.add_parser(
        "metrics",
        help="list the metrics in the registry",
        description=(
            "List every registered metric with its level, direction, roles and options; "
            "with a metric name, show that metric in full (reference, statistics, reduce, "
            "options, edge rules, divergences)."
        ),
    )
    metrics.add_argument(
        "metric", nargs="?", metavar="METRIC", help="a metric to show in full, e.g. pass@10"
    )
    metrics.add_argument("--names", action="store_true", help="print only the names, one a line")
    metrics.add_argument("-o", "--output", metavar="PATH", help="write the registry to a file")
    _add_common(metrics)

    ranking = commands.add_parser(
        "ranks",
        help="rank models within each group of a table, with rank intervals",
        description=(
            "Add rank, rank_low, rank_high and tied_with to a table of scores (the output "
            "of aggregate, compare or judge report, or any table with a value and its "
            "standard error): models are ranked within each group (by default every key "
            "of the table but --by, the metric included), the intervals from seeded normal "
            "draws of each row's value and standard error, the models treated as independent "
            "(conservative when they answered the same questions). judge ratings gives its "
            "own rank intervals from its bootstrap."
        ),
        epilog="Example: evalframe aggregate scored.parquet --by model,task -o agg.parquet "
        "&& evalframe ranks agg.parquet --by model",
    )
    ranking.add_argument("inputs", nargs="+", metavar="TABLE", help="table files or globs")
    ranking.add_argument("--by", default="model", metavar="COLUMN",
                         help="the column whose entries are ranked (default model)")
    ranking.add_argument(
        "--within", metavar="COLS",
        help="comma-separated columns whose groups are ranked apart; 'none' for one group "
        "(default: every key of the table but --by, and metric)",
    )
    ranking.add_argument("--value", metavar="COLUMN",
                         help="the value column (default: value; diff for compare, "
                         "win_rate_a for judge report)")
    ranking.add_argument("--stderr", default="stderr", metavar="COLUMN")
    direction = ranking.add_mutually_exclusive_group()
    direction.add_argument("--lower-is-better", action="store_true",
                           help="rank the smallest value first (default: the metric's "
                           "direction, higher where the table does not say)")
    direction.add_argument("--higher-is-better", action="store_true")
    ranking.add_argument("--ci", type=float, default=0.95, metavar="LEVEL")
    ranking.add_argument("--draws", type=int, default=10_000, metavar="N",
                         help="normal draws per group (default 10000)")
    ranking.add_argument("--seed", type=int, default=0)
    ranking.add_argument("-o", "--output", metavar="PATH", help="write the table to a file")
    _add_common(ranking)

    add_gate_parser(commands, COMPARISON_TESTS.names(), CORRECTION_METHODS.names(),
                    MISSING_POLICIES, _add_common)
    add_judge_parser(commands, _Parser)
    _add_listing(commands, "formats")
    _add_listing(commands, "normalizers")
    add_extract_parsers(commands, _add_common, _add_reading)
    _add_listing(commands, "extractors")
    return parser


class Listing(NamedTuple):
    """A command that lists a plug-in table: the table, the command's help and description,
    and the columns shown on the terminal (every column without; ``-o`` writes them all)."""

    table: Registry[Any]
    help: str
    description: str
    shown: tuple[str, ...] = ()


#: The commands that list a plug-in table, by name.
LISTINGS = {
    "formats": Listing(
        LAYOUTS,
        "list the harness file layouts evalframe reads (for --format)",
        "The harness layouts evalframe recognises in input files.",
        ("format", "harness", "files", "level"),
    ),
    "normalizers": Listing(
        NORMALIZERS,
        "list the text normalisers metrics accept as normalizer=NAME",
        "List the normaliser table: name, the reference it reproduces, meaning.",
    ),
    "extractors": Listing(
        EXTRACTORS,
        "list the answer extractors metrics accept as extractor=NAME",
        "List the extractor table: name, the reference it reproduces, meaning.",
    ),
}


def _add_listing(commands: Any, name: str) -> None:
    listing = LISTINGS[name]
    parser = commands.add_parser(name, help=listing.help, description=listing.description)
    parser.add_argument("-o", "--output", metavar="PATH", help="write the table to a file")
    _add_common(parser)


def _run_listing(args: argparse.Namespace) -> int:
    listing = LISTINGS[args.command]
    table = listing.table.frame()
    if args.output:
        save(table, args.output)
    else:
        _show(table.select(listing.shown) if listing.shown else table)
    return EXIT_OK


def _add_reading(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--schema", action="append", default=[], metavar="COLUMN=TYPE",
        help="read a column as a type (repeatable): str, int, float, bool, or a polars dtype "
        "name; e.g. --schema answer=str keeps '007' as text",
    )
    parser.add_argument(
        "--csv-empty", choices=("string", "null"), default="string",
        help="what an empty CSV field of a text column means: an empty string (default, as "
        "pandas and Python's csv write '') or null",
    )
    parser.add_argument(
        "--duplicates", choices=("error", "first", "last"), default="error",
        help="a harness file holding one sample twice (a resumed run appends its records "
        "again): an error naming both lines (default), or keep the first / last record",
    )


def _reading(args: argparse.Namespace) -> dict:
    schema = {}
    for pair in args.schema:
        column, sep, dtype = pair.partition("=")
        if not sep or not column or not dtype:
            raise UsageError(
                f"evalframe {args.command}: --schema expects COLUMN=TYPE, got {pair!r}"
            )
        try:
            parse_dtype(dtype, column)
        except EvalframeError:
            raise UsageError(
                f"evalframe {args.command}: --schema {pair}: unknown type {dtype!r}; the types: "
                f"{', '.join(sorted(DTYPE_NAMES))}, or list[TYPE]"
            ) from None
        schema[column] = dtype
    return {
        "schema": schema or None, "csv_empty": args.csv_empty, "duplicates": args.duplicates,
    }


def _add_input_shaping(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--format", default="auto", metavar="LAYOUT",
        help="input layout: auto (default: harness dumps are recognised from their content), "
        "table (read every file as a plain table), or a layout from 'evalframe formats'",
    )
    parser.add_argument(
        "--select", default="", metavar="COLS",
        help="comma-separated: read only these columns",
    )
    parser.add_argument(
        "--gold", metavar="FILE",
        help="golds from another file (e.g. SQuAD's dev set), matched on --on; a question "
        "without a prediction is a missing answer, an unknown id is reported",
    )
    parser.add_argument(
        "--on", metavar="COLS", help="key column(s) matching --gold with the predictions (id)"
    )
    parser.add_argument(
        "--group", metavar="COLS",
        help="one row per sample first: rows with the same values in these columns become "
        "one row, varying columns become lists (passed, prediction always), e.g. "
        "--group model,task_id for one row per run",
    )


def _shaping(args: argparse.Namespace) -> dict:
    if args.format not in format_names():
        _usage(_check_format, args.format)
    select = [name.strip() for name in args.select.split(",") if name.strip()] or None
    if (args.gold is None) != (args.on is None):
        raise UsageError(f"evalframe {args.command}: --gold and --on go together")
    return {
        "format": args.format,
        "select": select,
        "gold": args.gold,
        "on": _usage(key_columns, args.on, "--on") if args.on else None,
        "group_by": _usage(key_columns, args.group, "--group") if args.group else None,
    }


def _check_format(name: str) -> None:
    from evalframe.io.adapters import resolve_format

    resolve_format(name)


#: Suffixes of --output that write a formatted table rather than the data.
FORMATTED_SUFFIXES = (".md", ".markdown", ".tex", ".html", ".htm")
#: The commands whose -o may be a formatted table.
FORMATTED_COMMANDS = ("aggregate", "compare")
#: --format: the terminal table, or a formatted one (values with intervals) on stdout.
FORMATS = ("table", "markdown", "latex", "html", "csv")


def _add_format(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--format", choices=FORMATS, default="table",
        help="how the table is printed: the data ('table', default), or formatted for "
        "people, each value with its interval (markdown, latex, html, csv; with --wide, "
        "one row per model and a column per task and metric)",
    )


def _emit(table: pl.DataFrame, args: argparse.Namespace, *, wide: bool = False,
          data: pl.DataFrame | None = None) -> None:
    """Write or print ``table``: formatted (``--format``, or a .md/.tex/.html output) from
    the long table, else the data (``data``: what the data output is, e.g. widened)."""
    from evalframe.formatted import table as formatted

    data = table if data is None else data
    if args.output and args.output.lower().endswith(FORMATTED_SUFFIXES):
        formatted(table, wide=wide).save(args.output)
    elif args.output:
        save(data, args.output)
    elif args.format == "table":
        _show(data.drop("signature") if "signature" in data.columns else data)
    else:
        sys.stdout.write(formatted(table, wide=wide).render(args.format))


#: The engines of ``score`` and ``aggregate``: one process, or a Ray cluster.
ENGINES = ("polars", "ray")


def _add_engine(parser: argparse.ArgumentParser, ray_help: str) -> None:
    parser.add_argument(
        "--engine", choices=ENGINES, default="polars",
        help=f"polars (default: this process) or ray ({ray_help}; needs the ray extra: "
        'pip install "evalframe[ray]"; see docs/scale.md)',
    )
    parser.add_argument(
        "--address", metavar="ADDRESS",
        help="with --engine ray, the cluster: auto (the one 'ray start --head' started on "
        "this machine) or HOST:PORT (its head node); default: a new local cluster",
    )


def _add_common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    parser.add_argument(
        "--quiet", action="store_true", help="no progress or summary lines on stderr"
    )


def _column_mapping(pairs: Sequence[str], command: str = "score") -> dict[str, str]:
    mapping: dict[str, str] = {}
    for pair in pairs:
        role, sep, column = pair.partition("=")
        if not sep or not role or not column:
            raise UsageError(f"evalframe {command}: --col expects ROLE=COLUMN, got {pair!r}")
        if role not in ROLES:
            raise UsageError(
                f"evalframe {command}: --col {pair!r}: unknown role {role!r}; "
                f"known roles: {', '.join(ROLES)}"
            )
        mapping[role] = column
    return mapping


@contextmanager
def progress(label: str, quiet: bool) -> Iterator[None]:
    """Show elapsed time on stderr while a long step runs (after one second, on a terminal)."""
    done = threading.Event()
    started = time.perf_counter()
    interactive = sys.stderr.isatty() and not quiet

    def tick() -> None:
        while not done.wait(0.5):
            elapsed = time.perf_counter() - started
            if elapsed >= 1.0:
                sys.stderr.write(f"\r{label}... {elapsed:.0f} s")
                sys.stderr.flush()

    thread = threading.Thread(target=tick, daemon=True)
    if interactive:
        thread.start()
    try:
        yield
    finally:
        done.set()
        if interactive:
            thread.join()
            sys.stderr.write("\r\x1b[K")
    # Reached only when the step succeeded: a failed run never says "done".
    if not quiet:
        elapsed = time.perf_counter() - started
        sys.stderr.write(f"{label}: done in {elapsed:.2f} s\n")


@contextmanager
def _spooled_stdin(command: str) -> Iterator[str]:
    """Parquet piped on standard input, copied to a temporary file named ``stdin.parquet``.

    Standard input is copied in blocks (reading the copy holds no more than reading a
    file given by name would, not the whole input at once) and checked to be parquet; the
    copy and its folder are deleted when the block ends.
    """
    if sys.stdin is None or sys.stdin.isatty():
        raise UsageError(
            f"evalframe {command}: no input on standard input; give files, or pipe parquet "
            "into it (from 'evalframe score' or 'evalframe extract')"
        )
    folder = tempfile.mkdtemp(prefix="evalframe-stdin-")
    path = os.path.join(folder, "stdin.parquet")
    try:
        with open(path, "wb") as handle:
            shutil.copyfileobj(sys.stdin.buffer, handle, _SPOOL_BLOCK)
            size = handle.tell()
        if not size:
            raise EvalframeError(
                "no input: standard input is empty (give files or pipe parquet into it)"
            )
        try:
            pl.read_parquet_schema(path)
        except (OSError, pl.exceptions.PolarsError) as error:
            raise EvalframeError(f"standard input is not a parquet file: {error}") from error
        yield path
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@contextmanager
def _stdin_parquet() -> Iterator[tuple[pl.LazyFrame, dict[str, str], dict[str, str]]]:
    """Scored parquet piped on standard input, as a scan of a temporary copy
    (:func:`_spooled_stdin`)."""
    with _spooled_stdin("aggregate") as path:
        metadata = pl.read_parquet_metadata(path)
        frame = pl.scan_parquet(path)
        try:
            frame.collect_schema()
        except (OSError, pl.exceptions.PolarsError) as error:
            raise EvalframeError(f"standard input is not a parquet file: {error}") from error
        yield frame, decode_metadata(metadata), decode_metadata(metadata, ROLES_KEY)


#: Bytes copied at a time from standard input to its temporary file.
_SPOOL_BLOCK = 1 << 20


def _show(frame: pl.DataFrame) -> None:
    """A table on the terminal, as wide as the terminal. A ``signature`` column is printed
    below the table (a few distinct ones) rather than cut inside every row."""
    signatures: list[str] = []
    if "signature" in frame.columns:
        signatures = [text for text in frame["signature"].unique(maintain_order=True).to_list()
                      if text]
        frame = frame.drop("signature")
    width = shutil.get_terminal_size((200, 24)).columns if sys.stdout.isatty() else 200
    with pl.Config(tbl_rows=200, tbl_cols=20, tbl_width_chars=max(width, 80),
                   fmt_str_lengths=40):
        print(frame)
    if 0 < len(signatures) <= 3:
        for text in signatures:
            print(f"signature: {text}")
    elif signatures:
        print(f"{len(signatures)} distinct signatures: write the table with -o to keep them")


def _run_score(args: argparse.Namespace) -> int:
    mapping = _column_mapping(args.col)
    requests = _usage(parse_requests, args.metrics)  # checked before any input is read
    reading = _reading(args)
    efr = ray_engine(args)
    if efr is not None:
        _shaping(args)
        score_on_ray(args, efr, requests, mapping, _show)
        return EXIT_OK
    frame = prepare_input(args.inputs, columns=mapping, **_shaping(args), **reading)
    scored, planned = score_plan(frame, requests, mapping, overwrite=args.overwrite)
    metadata = {
        "evalframe.version": __version__,
        "evalframe.signatures": json.dumps(
            {request.column: score_signature(request) for request, _ in planned},
            ensure_ascii=False,
        ),
    }
    output = args.output
    if output is None and not sys.stdout.isatty():
        output = STDIO
    stdout = sys.stdout.buffer if output == STDIO else None  # a closed one fails here, first
    with progress(f"scoring {len(planned)} metric(s)", args.quiet):
        if stdout is not None:
            buffer = io.BytesIO()
            collect(scored).write_parquet(buffer, metadata=metadata)
            stdout.write(buffer.getvalue())
            sys.stdout.flush()
        elif output is None:  # the record of the scoring is for programs, not the terminal
            _show(collect(scored).drop(CONTRACT_COLUMN))
        else:
            save(scored, output, metadata=metadata)
    return EXIT_OK


def _usage(check, *values):
    """Run a check of the command line; its EvalframeError is a usage error (exit code 2)."""
    try:
        return check(*values)
    except EvalframeError as error:
        raise UsageError(f"evalframe: {error}") from error


#: The command-line option of each argument of ``aggregate`` the command passes on.
AGGREGATE_OPTIONS = {
    "by": "--by", "ci": "--ci", "bootstrap": "--bootstrap", "seed": "--seed",
    "interval": "--interval", "stderr": "--stderr", "missing": "--missing",
    "cluster": "--cluster",
}
#: The command-line option of each argument of ``compare`` the command passes on.
COMPARE_OPTIONS = {
    "by": "--by", "on": "--on", "model": "--model-column", "cluster": "--cluster",
    "ci": "--ci", "method": "--method", "correction": "--correction",
    "bootstrap": "--bootstrap", "seed": "--seed", "missing": "--missing",
}
#: The command-line option of each argument of ``report`` the command passes on.
REPORT_OPTIONS = {"by": "--by", "model": "--model-column", "ci": "--ci", "missing": "--missing"}


@contextmanager
def _options(command: str, options: Mapping[str, str]) -> Iterator[None]:
    """The library's error about an argument given on the command line is a usage error
    (exit code 2), said with the command line's option."""
    try:
        yield
    except OptionError as error:
        option = options.get(error.option)
        if option is None:
            raise
        raise UsageError(f"evalframe {command}: {error.reworded(option)}") from error


def _metric_columns(
    args: argparse.Namespace, frame: pl.LazyFrame, recorded: dict[str, str],
    roles: dict[str, str] | None = None,
) -> tuple[dict[str, str | None], list[str]]:
    """The metric columns a command reads (``-m``, else those found in the scored input),
    each with the metric request the file records for it; and the recorded ones lost."""
    lost: list[str] = []
    if args.metrics:
        chosen = args.metrics
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            found = find_columns(frame, recorded=recorded, recorded_roles=roles)
        lost = list(found.lost)
        chosen = [column.column for column in found.columns]
    return {name: recorded.get(name) for name in chosen}, lost


def _run_aggregate(args: argparse.Namespace) -> int:
    with _options("aggregate", AGGREGATE_OPTIONS):  # checked before any input is read
        check_aggregate_options(
            ci=args.ci, interval=args.interval, missing=args.missing, stderr=args.stderr,
            bootstrap=args.bootstrap, seed=args.seed,
        )
    reading = _reading(args)
    inputs = [path for path in args.inputs if path != STDIO]
    if inputs and len(inputs) != len(args.inputs):
        raise UsageError("evalframe aggregate: give files or '-' for standard input, not both")
    if args.cluster and args.no_cluster:
        raise UsageError("evalframe aggregate: give --cluster COLUMN or --no-cluster, not both")
    efr = ray_engine(args)
    if efr is not None:
        keys = _keys(args.by)
        with _options("aggregate", AGGREGATE_OPTIONS):
            table, clustered = aggregate_on_ray(args, efr, inputs, keys, _aggregating(args, {}))
        return _aggregate_table(args, table, keys, clustered)
    if inputs:
        paths = expand_paths(inputs, readable=tuple(READ_FORMATS))
        frame, recorded = scan(inputs, **reading), recorded_metrics(paths)
        return _aggregate_frame(args, frame, recorded, recorded_mapping(paths))
    with _stdin_parquet() as (frame, recorded, roles):
        return _aggregate_frame(args, frame, recorded, roles)


def _keys(text: str) -> list[str]:
    """Comma-separated column names (``--by``)."""
    return [key.strip() for key in text.split(",") if key.strip()]


def _aggregating(args: argparse.Namespace, roles: dict[str, str]) -> dict[str, Any]:
    """The arguments of ``aggregate`` the command line gives, but ``by`` and ``metrics``."""
    return {
        "ci": args.ci, "bootstrap": args.bootstrap, "seed": args.seed,
        "missing": args.missing, "interval": args.interval,
        "cluster": False if args.no_cluster else args.cluster, "stderr": args.stderr,
        "columns": {**roles, **_column_mapping(args.col, "aggregate")},
    }


def _aggregate_frame(
    args: argparse.Namespace,
    frame: pl.LazyFrame,
    recorded: dict[str, str],
    roles: dict[str, str],
) -> int:
    """``evalframe aggregate`` on its input: one aggregation, then the table's notes."""
    keys = _keys(args.by)
    names, lost = _metric_columns(args, frame, recorded, roles)
    options = _aggregating(args, roles)
    with _options("aggregate", AGGREGATE_OPTIONS), progress("aggregating", args.quiet):
        table = aggregate(frame, by=keys, metrics=names, keep_empty=True, **options)
    if lost and not args.quiet:
        sys.stderr.write(
            f"note: metric column(s) the scored file records are not aggregated: "
            f"{'; '.join(lost)}\n"
        )
    # for the notes: the column the standard errors are clustered on, where some group's
    # rows repeat it
    repeated = not args.quiet and table.filter(pl.col("n_clusters") < pl.col("n")).height > 0
    clustering = {key: options[key] for key in ("cluster", "stderr", "columns")}
    clustered = cluster_column(frame, keys, names, **clustering) if repeated else None
    return _aggregate_table(args, table, keys, clustered)


def _aggregate_table(
    args: argparse.Namespace, table: pl.DataFrame, keys: list[str], clustered: str | None
) -> int:
    """The aggregate table (every group) as the command shows or writes it, with its notes
    (``clustered``: the column the standard errors were clustered on, where rows repeat)."""
    everything = table.height
    if not args.keep_empty:
        table = table.filter(pl.col("n") > 0)
    if not args.keep_empty and not args.quiet:
        kept = table.height
        if everything > kept:
            sys.stderr.write(
                f"left out {everything - kept} group x metric row(s) with no scores "
                "(--keep-empty keeps them)\n"
            )
    if args.groups:
        table = _with_groups(table, keys, args)
    if args.join:
        table = join_metadata(table, args.join, on=_usage(key_columns, args.on, "--on"))
    if not args.quiet:
        _notes(table, clustered)
    _emit(table, args, wide=args.wide, data=widen(table, keys) if args.wide else table)
    return EXIT_OK


def _with_groups(table: pl.DataFrame, keys: list[str], args: argparse.Namespace) -> pl.DataFrame:
    if "task" not in keys:
        raise UsageError("evalframe aggregate: --groups needs 'task' among the --by columns")
    try:
        with open(os.path.expanduser(args.groups), encoding="utf-8") as handle:
            groups = json.load(handle)
    except (OSError, json.JSONDecodeError) as error:
        raise UsageError(f"evalframe aggregate: --groups {args.groups}: {error}") from error
    if not isinstance(groups, dict) or not all(
        isinstance(tasks, list) and all(isinstance(t, str) for t in tasks)
        for tasks in groups.values()
    ):
        raise UsageError(
            f"evalframe aggregate: --groups {args.groups}: expected an object mapping group "
            "names to lists of task names"
        )
    methods = [method.strip() for method in args.group_method.split(",") if method.strip()]
    others = [key for key in keys if key != "task"]
    grouped = group_tasks(table, groups, by=others, task="task", method=methods)
    return pl.concat([table, grouped], how="diagonal_relaxed")


def _run_compare(args: argparse.Namespace) -> int:
    with _options("compare", COMPARE_OPTIONS):  # checked before any input is read
        check_compare_options(
            ci=args.ci, method=args.method, bootstrap=args.bootstrap, seed=args.seed,
            correction=args.correction, missing=args.missing,
        )
    if args.cluster and args.no_cluster:
        raise UsageError("evalframe compare: give --cluster COLUMN or --no-cluster, not both")
    paths = expand_paths(args.inputs)
    frame, recorded = scan(args.inputs), recorded_metrics(paths)
    keys = [key.strip() for key in args.by.split(",") if key.strip()]
    on = [key.strip() for key in args.on.split(",") if key.strip()]
    names, _ = _metric_columns(args, frame, recorded)
    with _options("compare", COMPARE_OPTIONS), progress("comparing", args.quiet):
        table = compare(
            frame, baseline=args.baseline, model=args.model_column, by=keys or None, on=on,
            metrics=names, cluster=False if args.no_cluster else args.cluster, ci=args.ci,
            method=args.method,
            bootstrap=args.bootstrap, seed=args.seed, correction=args.correction,
            missing=args.missing, columns=recorded_mapping(paths),
        )
    if not args.quiet:
        unmatched = int(table["n_unmatched_model"].sum() + table["n_unmatched_baseline"].sum())
        nulls = int(table["n_null_pairs"].sum()) if "n_null_pairs" in table.columns else 0
        sys.stderr.write(
            f"compared {int(table['n_pairs'].sum())} matched pair(s); {unmatched} item(s) "
            f"present for one side only, {nulls} pair(s) with a null score, not compared\n"
        )
    _emit(table, args)
    return EXIT_OK


def _run_report(args: argparse.Namespace) -> int:
    from evalframe.reporting import report

    if not 0 < args.ci < 1:
        raise UsageError(f"evalframe report: --ci {args.ci} must be strictly between 0 and 1")
    keys = [key.strip() for key in args.by.split(",") if key.strip()]
    inputs = [path for path in args.inputs if path != STDIO]
    if inputs and len(inputs) != len(args.inputs):
        raise UsageError("evalframe report: give files or '-' for standard input, not both")

    def write(frame: pl.LazyFrame, recorded: dict[str, str], roles: dict[str, str]) -> int:
        names, _ = _metric_columns(args, frame, recorded, roles)
        with _options("report", REPORT_OPTIONS), progress("writing the report", args.quiet):
            result = report(
                frame.collect(), by=keys or None, baseline=args.baseline,
                model=args.model_column, metrics=names,
                title=args.title, ci=args.ci,
                missing=args.missing, columns=roles or None,
            )
            result.save(args.output, svg=args.svg)
        if not args.quiet:
            sys.stderr.write(f"wrote {args.output} ({len(result.charts())} chart(s))\n")
        return EXIT_OK

    if inputs:
        paths = expand_paths(inputs)
        return write(scan(inputs), recorded_metrics(paths), recorded_mapping(paths))
    with _stdin_parquet() as (frame, recorded, roles):
        return write(frame, recorded, roles)


def _numbers(text: str, convert, option: str) -> list:
    try:
        return [convert(part) for part in text.split(",") if part.strip()]
    except ValueError as error:
        raise UsageError(f"evalframe power: {option} {text!r}: {error}") from error


def _run_power(args: argparse.Namespace) -> int:
    deltas = _numbers(args.delta, float, "--delta")
    sizes = _numbers(args.n, int, "--n")
    if not deltas and not sizes:
        raise UsageError("evalframe power: give --delta and/or --n")
    if not 0 < args.alpha < 1 or not 0 < args.target_power < 1:
        raise UsageError("evalframe power: --alpha and --power must be between 0 and 1")
    if args.variance is not None:
        if args.inputs:
            raise UsageError("evalframe power: give scored files or --variance, not both")
        if not (math.isfinite(args.variance) and args.variance > 0):
            raise UsageError(f"evalframe power: --variance {args.variance} must be a number > 0")
        variance, questions = args.variance, None
        lines = [f"variance of one question's paired difference: {variance:.6g} (given)"]
    else:
        if not args.inputs or not args.metric or not args.baseline:
            raise UsageError(
                "evalframe power: give scored files with -m METRIC and --baseline, or "
                "--variance"
            )
        variance = paired_variance(
            scan(args.inputs), metric=args.metric, baseline=args.baseline,
            candidate=args.candidate, model=args.model_column,
            on=[key.strip() for key in args.on.split(",") if key.strip()], cluster=args.cluster,
            columns=recorded_mapping(expand_paths(args.inputs)),
        )
        questions = variance.n
        lines = [
            f"questions: {variance.n}; variance of one question's paired difference: "
            f"{variance.total:.6g} (between {variance.between:.6g}, within "
            f"{variance.within_model:.6g} / {variance.within_baseline:.6g})"
        ]
    two_sided = not args.one_sided
    options = {"variance": variance, "alpha": args.alpha, "two_sided": two_sided}
    sizes = sizes or ([questions] if questions else [])
    for n in sizes:
        found = mde(n, power=args.target_power, **options)
        lines.append(f"n={n}: minimum detectable effect {found:.6g} at power {args.target_power:g}")
        for delta in deltas:
            lines.append(f"n={n}, delta={delta:g}: power {power(delta, n, **options):.4f}")
    for delta in deltas:
        needed = sample_size(delta, power=args.target_power, **options)
        lines.append(f"delta={delta:g}: {int(needed)} questions for power {args.target_power:g}")
    print("\n".join(lines))
    return EXIT_OK


def _notes(table: pl.DataFrame, clustered: str | None) -> None:
    """One line each: rows without a gold, missing answers, the clustering applied (the
    column ``clustered``)."""
    known = table.filter(pl.col("n_missing").is_not_null())
    unknown = table.filter(pl.col("n_missing").is_null())
    unscoreable = int(known["n_null"].sum() or 0)
    if unscoreable:
        sys.stderr.write(
            f"note: {unscoreable} score(s) over all metrics cannot be computed (a null gold "
            "or reference): left out of n, counted in n_null\n"
        )
    if int(unknown["n_null"].sum() or 0):
        sys.stderr.write(
            f"note: {int(unknown['n_null'].sum())} null score(s) in metric(s) "
            f"{sorted(set(unknown['metric']))} whose answer columns are not in the input: "
            "missing answers cannot be told from rows without a gold (left out, n_missing "
            "empty); give the role mapping with --col\n"
        )
    missing = int(known["n_missing"].sum() or 0)
    if missing:
        sys.stderr.write(
            f"note: {missing} missing answer(s) over all metrics (a null answer column: "
            "prediction, choice_logprobs...), counted in n_missing; the signature says how "
            "they were scored (--missing)\n"
        )
    if clustered:
        sys.stderr.write(
            f"note: standard errors clustered on {clustered} (rows repeat a "
            "question); --no-cluster treats rows as independent\n"
        )



def _run_metrics(args: argparse.Namespace) -> int:
    if args.metric:
        print(_usage(_describe_metric, args.metric))
        return EXIT_OK
    table = list_metrics()
    if args.names:
        print("\n".join(table["name"].to_list()))
    elif args.output:
        save(table, args.output)
    else:
        _show(table.select("name", "level", "higher_is_better", "roles", "options"))
    return EXIT_OK


def _describe_metric(text: str) -> str:
    request = parse_requests([text])[0]
    spec = request.spec
    lines = [
        f"{spec.name}: {spec.description}",
        f"  reference: {spec.reference}",
        f"  level: {spec.level}; higher is better: {spec.higher_is_better}",
        "  roles: " + " or ".join("(" + ", ".join(roles) + ")" for roles in spec.role_sets),
        f"  statistics: {request.statistics()}; reduce: {request.reduction().name}",
        f"  options: {describe_options(spec)}",
    ]
    if request.params or request.options:
        lines.append(f"  this request: {request.text}")
    lines += [f"  edge rule: {rule}" for rule in spec.edge_rules]
    lines += [f"  divergence: {rule}" for rule in spec.divergences]
    return "\n".join(lines)


def _run_rescore(args: argparse.Namespace) -> int:
    from evalframe.rescoring import rescore

    mapping = _column_mapping(args.col, "rescore")
    requests = _usage(parse_requests, args.metrics)
    against = {}
    for pair in args.against:
        column, sep, target = pair.partition("=")
        if not sep or not column or not target:
            raise UsageError(
                f"evalframe rescore: --against expects COLUMN=HARNESS_COLUMN, got {pair!r}"
            )
        against[column] = target
    if not args.tolerance >= 0:
        raise UsageError(f"evalframe rescore: --tolerance {args.tolerance} must be >= 0")
    if args.show < 0:
        raise UsageError(f"evalframe rescore: --show {args.show} must be >= 0")
    unknown = sorted(set(against) - {request.column for request in requests})
    if unknown:
        raise UsageError(
            f"evalframe rescore: --against {', '.join(unknown)}: no requested metric column of "
            f"that name; the columns: {', '.join(request.column for request in requests)}"
        )
    shaping, reading = _shaping(args), _reading(args)
    with progress(f"rescoring {len(requests)} metric(s)", args.quiet):
        found = rescore(
            args.inputs, args.metrics, against=against, tolerance=args.tolerance,
            columns=mapping, **shaping, **reading,
        )
    _show(found.summary)
    if found.differences.height:
        print(f"first {min(args.show, found.differences.height)} of "
              f"{found.differences.height} differing row(s):")
        _show(found.differences.head(args.show))
    if args.output:
        save(found.differences, args.output)
    return EXIT_OK if found.agrees else EXIT_DATA


def _run_ranks(args: argparse.Namespace) -> int:
    from evalframe.stats.ranks import ranks

    with _options("ranks", {"ci": "--ci", "seed": "--seed"}):
        check_level(args.ci)
        check_seed(args.seed)
    if args.draws < 100:
        raise UsageError(f"evalframe ranks: --draws {args.draws} must be >= 100")
    within = None
    if args.within is not None:
        within = [] if args.within.strip().lower() == "none" else _keys(args.within)
    frame = scan(args.inputs)
    schema = frame.collect_schema()
    named = [("--by", args.by), ("--stderr", args.stderr), ("--value", args.value),
             *(("--within", column) for column in within or [])]
    for option, column in named:
        if column is not None and column not in schema:
            raise UsageError(
                f"evalframe ranks: {option} {column}: no such column; available: "
                f"{', '.join(schema)}"
            )
    direction = False if args.lower_is_better else (True if args.higher_is_better else None)
    table = ranks(
        frame.collect(), by=args.by, within=within, value=args.value, stderr=args.stderr,
        higher_is_better=direction, ci=args.ci, draws=args.draws, seed=args.seed,
    )
    if args.output:
        from evalframe.io.formats import WRITE_FORMATS, format_of
        from evalframe.stats.ranks import ties_as_text

        if format_of(args.output, WRITE_FORMATS, "write") == "csv":
            table = ties_as_text(table)  # a CSV file holds no lists
        save(table, args.output)
    else:
        _show(table)
    return EXIT_OK


COMMANDS = {
    "score": _run_score,
    "ranks": _run_ranks,
    "aggregate": _run_aggregate,
    "compare": _run_compare,
    "report": _run_report,
    "power": _run_power,
    "gate": lambda args: run_gate(args, UsageError, _options),
    "metrics": _run_metrics,
    "normalizers": _run_listing,
    "rescore": _run_rescore,
    "formats": _run_listing,
    "judge": lambda args: run_judge(args, _show),
    "extract": run_extract,
    "extractors": _run_listing,
}


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit code."""
    from evalframe._progress import ENABLED

    enabled = ENABLED[0]
    ENABLED[0] = False  # the commands show their own progress
    try:
        return _main(argv)
    finally:
        ENABLED[0] = enabled


def _main(argv: Sequence[str] | None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv
    _standard_streams()
    try:
        args = build_parser().parse_args(argv)
        _check_output(args)
        with warnings.catch_warnings(), _standard_input(args):
            warnings.showwarning = functools.partial(_show_warning, debug=debug)
            return COMMANDS[args.command](args)
    except UsageError as error:
        sys.stderr.write(f"{short_message(str(error), debug)}\n")
        return EXIT_USAGE
    except BrokenPipeError:
        # The reader of our output went away (`| head`): nothing more to say to it.
        _silence_stdout()
        return EXIT_BROKEN_PIPE
    except KeyboardInterrupt:
        if debug:
            traceback.print_exc()
        sys.stderr.write("evalframe: interrupted\n")
        return EXIT_INTERRUPTED
    except (EvalframeError, OSError, pl.exceptions.PolarsError) as error:
        if debug:
            traceback.print_exc()
        text = short_message(without_plan(error), debug) or type(error).__name__
        sys.stderr.write(f"evalframe: error: {text}\n")
        return EXIT_DATA
    except SystemExit as exit_:  # --help and --version
        return int(exit_.code or 0)


def short_message(text: str, whole: bool = False, limit: int = MESSAGE_LIMIT) -> str:
    """An error or warning as the command line shows it: its first line, at most ``limit``
    characters, cut after the last clause that fits; ``whole``: every line, uncut (--debug).

    A message leads with what went wrong; lists of what is available come after it.

    >>> short_message("bad row\\nmore about it")
    'bad row'
    >>> columns = ", ".join(f"c{i}" for i in range(900))
    >>> short_message(f"no column 'x'; available: {columns}", limit=60)
    "no column 'x'; available: c0, c1, c2 … (--debug shows all)"
    >>> short_message("x" * 80, limit=40)  # 40 - 22 characters of the tail
    'xxxxxxxxxxxxxxxxxx … (--debug shows all)'
    """
    text = text.strip()
    if whole:
        return text
    first = text.splitlines()[0].strip() if text else ""
    if len(first) <= limit:
        return first
    tail = " … (--debug shows all)"
    room = first[: limit - len(tail)]
    cut = max(room.rfind(mark) for mark in ("; ", ", ", ". ", " ("))
    return (room[:cut] if cut > len(room) // 2 else room).rstrip(" ,;.") + tail


def _show_warning(message, category, filename, lineno, file=None, line=None, *,
                  debug: bool = False) -> None:
    """A warning on the command line: one short line on stderr, without the source line."""
    sys.stderr.write(f"evalframe: warning: {short_message(str(message), debug)}\n")


class _ClosedOutput(io.TextIOBase):
    """Standard output of a process started without one (``>&-``): nothing can be written
    there, so a command that must write its result there fails with a one-line error."""

    message = "standard output is closed: the result cannot be written (give -o FILE)"

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        raise EvalframeError(self.message)

    @property
    def buffer(self) -> io.BufferedIOBase:
        raise EvalframeError(self.message)

    def isatty(self) -> bool:
        return False


def _standard_streams() -> None:
    """Stand-ins for the standard streams a process was started without (``>&-``).

    File descriptors 0 to 2 are held on ``/dev/null``, so no file this run opens (an
    output, the judgment cache) takes their numbers and receives what is meant for them;
    a missing standard output refuses writes (:class:`_ClosedOutput`), a missing standard
    error swallows messages (the exit code still tells).
    """
    for number, name in ((0, "stdin"), (1, "stdout"), (2, "stderr")):
        try:
            os.fstat(number)
            continue
        except OSError:
            pass
        with contextlib.suppress(OSError):
            held = os.open(os.devnull, os.O_RDWR)
            if held != number:
                os.dup2(held, number)
                os.close(held)
        if name == "stdin":
            sys.stdin = None  # type: ignore[assignment]
        elif name == "stdout":
            sys.stdout = _ClosedOutput()
        else:
            sys.stderr = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115


def _check_output(args: argparse.Namespace) -> None:
    """The output file of ``-o``, before any input is read or any judge asked: a type that
    cannot be written is a usage error; a folder that does not exist, a data error."""
    output = getattr(args, "output", None)
    if output is None:
        return
    command = " ".join(filter(None, (args.command, getattr(args, "judge_command", None))))
    if output == STDIO:
        if args.command in STDOUT_COMMANDS and not getattr(args, "audit", False):
            if isinstance(sys.stdout, _ClosedOutput):
                raise EvalframeError(_ClosedOutput.message)
            return
        raise UsageError(
            f"evalframe {command}: -o -: this table is written to a file; standard output "
            "takes the parquet of 'score' and 'extract' only"
        )
    if args.command == "score" and getattr(args, "engine", "polars") == "ray":
        return  # a folder of parquet files (evalframe.cli_ray.score_on_ray checks it)
    if args.command == "report":
        if not output.lower().endswith((".html", ".htm")):
            raise UsageError(f"evalframe report: -o {output}: a report is an HTML file (.html)")
    elif args.command in FORMATTED_COMMANDS and output.lower().endswith(FORMATTED_SUFFIXES):
        pass  # a formatted table
    else:
        try:
            format_of(output, WRITE_FORMATS, "write")
        except EvalframeError:
            formatted = (f", or formatted: {', '.join(FORMATTED_SUFFIXES)}"
                         if args.command in FORMATTED_COMMANDS else "")
            raise UsageError(
                f"evalframe {command}: -o {output}: unknown type of file; give a name ending "
                f"in {', '.join(sorted(WRITE_FORMATS))}{formatted}"
            ) from None
    resolve_target(output, output)


@contextmanager
def _standard_input(args: argparse.Namespace) -> Iterator[None]:
    """An input ``-`` (parquet on standard input) read as a file: ``args.inputs`` names a
    temporary copy while the command runs (``aggregate`` reads it its own way)."""
    inputs = getattr(args, "inputs", None) or []
    if STDIO not in inputs or args.command == "aggregate":
        yield
        return
    if len(inputs) > 1:
        raise UsageError(
            f"evalframe {args.command}: give files or '-' for standard input, not both"
        )
    with _spooled_stdin(args.command) as path:
        args.inputs = [str(path)]
        yield


def _silence_stdout() -> None:
    """Point stdout at /dev/null, so the interpreter's final flush cannot fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # no real file descriptor (a test's captured stdout)
        pass


def run() -> None:
    """The ``evalframe`` command's entry point: run :func:`main` and exit with its code.

    After an interrupt the process ends at once (``os._exit``): polars' worker threads
    may still be busy, and a normal interpreter shutdown under them can abort.
    """
    code = main()
    if code == EXIT_INTERRUPTED:
        sys.stderr.flush()
        os._exit(code)
    sys.exit(code)


if __name__ == "__main__":  # pragma: no cover
    run()
