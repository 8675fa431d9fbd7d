"""``evalframe gate``: fail a build when a candidate regresses against a baseline.

Exit codes: 0 passed (no significant regression, and every group could detect ``--mde``),
1 regressed (a significant regression after the correction; also a data error, such as a
dump that cannot be read or items one dump lacks, which the message names), 3 underpowered
(no significant regression, but some group cannot detect ``--mde`` at ``--power``), 2
usage errors. The decision is :func:`evalframe.gate`'s.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

EXAMPLE = (
    "evalframe gate candidate.parquet baseline.parquet --mde 0.02 --by task "
    "--format markdown >> \"$GITHUB_STEP_SUMMARY\""
)
#: What the gate prints on standard output (--format).
GATE_FORMATS = ("text", "json", "markdown")
#: The command-line option of each argument of ``gate`` the command passes on.
GATE_OPTIONS = {
    "mde": "--mde", "alpha": "--alpha", "power": "--power", "correction": "--correction",
    "by": "--by", "on": "--on", "model": "--model-column", "cluster": "--cluster",
    "ci": "--ci", "method": "--method", "bootstrap": "--bootstrap", "seed": "--seed",
    "missing": "--missing", "higher_is_better": "--higher-is-better",
    "metrics": "--metric",
}


def add_gate_parser(commands: Any, methods: list[str], corrections: list[str],
                    missing: tuple[str, ...], add_common: Any) -> None:
    """The ``gate`` command's parser."""
    parser = commands.add_parser(
        "gate",
        help="fail a build when a candidate regresses significantly against a baseline",
        description=(
            "Compare a candidate's scored dump with a baseline's on the items both "
            "answered, per group and metric, with one-sided paired tests corrected over "
            "every group and metric (holm by default). Exit 0: no significant regression "
            "and every group could detect --mde at --power; 1: a significant regression "
            "(or a data error, named); 3: no significant regression, but some group is too "
            "small to detect --mde (under-powered); 2: a usage error."
        ),
        epilog=f"Example: {EXAMPLE}",
    )
    parser.add_argument("candidate", metavar="CANDIDATE", help="the candidate's scored file(s)")
    parser.add_argument("baseline", metavar="BASELINE", help="the baseline's scored file(s)")
    parser.add_argument("--mde", type=float, required=True, metavar="DELTA",
                        help="the smallest regression that matters, in the metric's units "
                        "(0.02: two points of accuracy)")
    parser.add_argument("--by", default="", metavar="COLS",
                        help="comma-separated grouping columns, e.g. task")
    parser.add_argument("--on", default="sample_id", metavar="COLS",
                        help="comma-separated columns that identify an item (default: "
                        "sample_id)")
    parser.add_argument("-m", "--metric", action="append", dest="metrics", metavar="COLUMN",
                        help="metric column to gate on (repeatable; default: every one)")
    parser.add_argument("--alpha", type=float, default=0.05,
                        help="the false-alarm rate of the gate (default 0.05)")
    parser.add_argument("--power", type=float, default=0.8, dest="target_power",
                        help="the power a group needs to detect --mde (default 0.8)")
    parser.add_argument("--correction", default="holm", choices=[*corrections, "none"],
                        help="over every group and metric (default holm)")
    parser.add_argument("--method", default="auto", choices=methods,
                        help="the paired test (default auto: McNemar for 0/1 scores, paired "
                        "t otherwise, bootstrap for corpus metrics)")
    parser.add_argument("--cluster", metavar="COLUMN", help="cluster the paired test on it")
    parser.add_argument("--no-cluster", action="store_true",
                        help="never cluster: every pair is independent")
    parser.add_argument("--missing", choices=missing, default="wrong",
                        help="what a missing answer counts as (default wrong)")
    parser.add_argument("--allow-unmatched", action="store_true",
                        help="compare the items both dumps have (default: an item only one "
                        "has is an error)")
    parser.add_argument("--higher-is-better", action="append", default=[], metavar="COLUMN",
                        help="a plain score column whose higher values are better "
                        "(repeatable)")
    parser.add_argument("--lower-is-better", action="append", default=[], metavar="COLUMN",
                        help="a plain score column whose lower values are better "
                        "(repeatable)")
    parser.add_argument("--model-column", default="model", metavar="COLUMN")
    parser.add_argument("--candidate-model", metavar="NAME",
                        help="the candidate's model, when its dump holds several")
    parser.add_argument("--baseline-model", metavar="NAME",
                        help="the baseline's model, when its dump holds several")
    parser.add_argument("--ci", type=float, default=0.95, metavar="LEVEL")
    parser.add_argument("--bootstrap", type=int, default=1000, metavar="B")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--format", choices=GATE_FORMATS, default="text", dest="gate_format",
                        help="what standard output gets: the summary (text, default), JSON "
                        "or Markdown")
    parser.add_argument("--json", metavar="PATH", dest="json_path",
                        help="also write the decision and every row as JSON here")
    parser.add_argument("--markdown", metavar="PATH", dest="markdown_path",
                        help="also write the summary as Markdown here")
    add_common(parser)


def run_gate(args: argparse.Namespace, usage_error: type[Exception],
             options: Any) -> int:
    """Run ``evalframe gate``; return its exit code (0, 1 or 3)."""
    from evalframe.stats.compare import check_options
    from evalframe.stats.gate import check_gate_options, gate

    correction = None if args.correction == "none" else args.correction
    if args.cluster and args.no_cluster:
        raise usage_error("evalframe gate: give --cluster COLUMN or --no-cluster, not both")
    both = set(args.higher_is_better) & set(args.lower_is_better)
    if both:
        raise usage_error(f"evalframe gate: {sorted(both)} cannot be both higher- and "
                          "lower-is-better")
    with options("gate", GATE_OPTIONS):  # checked before any input is read
        check_gate_options(mde=args.mde, alpha=args.alpha, power=args.target_power,
                           method=args.method)
        check_options(ci=args.ci, method=args.method, bootstrap=args.bootstrap,
                      seed=args.seed, correction=correction, missing=args.missing)
    from evalframe.io._atomic import resolve_target

    for path in (args.json_path, args.markdown_path):
        if path:
            resolve_target(path, path)  # a folder that does not exist: said before the work
    directions = {**{c: True for c in args.higher_is_better},
                  **{c: False for c in args.lower_is_better}}
    keys = [key.strip() for key in args.by.split(",") if key.strip()]
    on = [key.strip() for key in args.on.split(",") if key.strip()]
    with options("gate", GATE_OPTIONS):
        result = gate(
            args.candidate, args.baseline, mde=args.mde, by=keys or None, on=on,
            metrics=args.metrics, alpha=args.alpha, power=args.target_power,
            correction=correction, method=args.method,
            cluster=False if args.no_cluster else args.cluster, missing=args.missing,
            unmatched="ignore" if args.allow_unmatched else "error",
            higher_is_better=directions or None, model=args.model_column,
            candidate_model=args.candidate_model, baseline_model=args.baseline_model,
            ci=args.ci, bootstrap=args.bootstrap, seed=args.seed,
        )
    if args.json_path:
        Path(args.json_path).write_text(result.to_json(), encoding="utf-8")
    if args.markdown_path:
        Path(args.markdown_path).write_text(result.to_markdown(), encoding="utf-8")
    if args.gate_format == "json":
        sys.stdout.write(result.to_json())
    elif args.gate_format == "markdown":
        sys.stdout.write(result.to_markdown())
    else:
        sys.stdout.write(str(result))
    if args.gate_format != "text" and not args.quiet:
        sys.stderr.write(str(result).splitlines()[0] + "\n")
    return result.exit_code
