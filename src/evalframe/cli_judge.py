"""The ``evalframe judge`` commands: pairwise and pointwise judging, reports, ratings, audits.

The commands compose :mod:`evalframe.judge`; they compute nothing themselves. Every option
is checked before any input is read or any judge asked: a value that cannot be used (a
concurrency of 0, a regex that does not compile, a scale that is not two numbers, an
unknown format, policy or measure) is a usage error (exit code 2), as a column named on the
command line that the input lacks (--by, --cluster, --verdict-ab, --human); a judge that cannot
answer, or input that cannot be judged, is a data error (exit code 1).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl

from evalframe.errors import EvalframeError
from evalframe.io.load import scan
from evalframe.io.save import save

#: The concurrency of an OpenAI-compatible judge without --concurrency.
DEFAULT_CONCURRENCY = 8

#: Where each judge command's help comes from.
EXAMPLES = {
    "pairwise": "evalframe judge pairwise pairs.parquet --model gpt-4o --cache judge.sqlite "
    "-o judged.parquet",
    "grade": "evalframe judge grade answers.jsonl --model gpt-4o --format mtbench "
    "-o graded.parquet",
    "classify": "evalframe judge classify gpt-4_pair.jsonl --verdict-ab g1_judgment "
    "--verdict-ba g2_judgment --format mtbench -o outcomes.parquet",
    "report": "evalframe judge report judged.parquet --by model_b --policy mtbench; "
    "evalframe judge report 'results/*/weighted_alpaca_eval_gpt4_turbo/annotations.json' "
    "--by model --policy alpaca_eval --length-controlled --glm-data glm/",
    "ratings": "evalframe judge ratings judged.parquet --anchor gpt-4=1000 --bootstrap 1000 "
    "--style length,markdown_headers,markdown_lists,bold",
    "audit": "evalframe judge audit gpt-4_pair.jsonl --by model_a,model_b --human labels.csv",
}


class _Known:
    """The names of a judge table, for an option's help: read when the help is shown, so
    that building the parser does not import the judge modules."""

    def __init__(self, table: str) -> None:
        self.table = table

    def __str__(self) -> str:
        from evalframe import judge

        return ", ".join(getattr(judge, self.table).names())


def _listing(action: argparse.Action, table: str) -> None:
    """Let ``action``'s help name every entry of the judge table ``table`` (``%(known)s``)."""
    action.known = _Known(table)  # type: ignore[attr-defined]


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
            "Bradley-Terry ratings on the Elo scale; 'audit' measures the judge (position "
            "bias, flips, length bias, self-preference, agreement with human labels). Every "
            "judgment goes through a durable "
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
        _listing(sub.add_argument(
            "--format", default="default" if name == "pairwise" else "mtbench",
            help="the format: %(known)s (default: %(default)s)",
        ), "FORMATS" if name == "pairwise" else "GRADE_FORMATS")
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
    _listing(classify.add_argument(
        "--format",
        help="the columns hold raw replies in this format, one of %(known)s (default: labels "
        "A/B/tie/error)",
    ), "FORMATS")
    classify.add_argument("-o", "--output", metavar="PATH", help="output file")
    classify.add_argument("--debug", action="store_true", help="show tracebacks on errors")

    report = subcommands.add_parser(
        "report", help="win rates, their standard errors and intervals, position bias",
        epilog=f"Example: {EXAMPLES['report']}",
    )
    report.add_argument("inputs", nargs="+", metavar="INPUT", help="judged files or globs")
    report.add_argument("--by", default="", metavar="COLS", help="comma-separated group columns")
    _listing(report.add_argument(
        "--policy", default="default",
        help="how ties and inconsistent pairs count: %(known)s (default: %(default)s)",
    ), "POLICIES")
    report.add_argument("--ci", type=float, default=0.95, metavar="LEVEL")
    report.add_argument("--cluster", metavar="COLUMN", help="cluster the standard error")
    report.add_argument(
        "--length-controlled", action="store_true",
        help="with --policy alpaca_eval: add AlpacaEval 2.0's length-controlled win rate "
        "(length_controlled_winrate, lc_standard_error, lc_ci_low, lc_ci_high)",
    )
    report.add_argument(
        "--glm-data", metavar="DIR",
        help="with --length-controlled: the folder of AlpacaEval's df_gamed.csv (and "
        "optionally alpaca_eval.json) from the Hugging Face dataset tatsu-lab/alpaca_eval; "
        "without it the models given are fitted together",
    )
    report.add_argument("-o", "--output", metavar="PATH", help="write the table to a file")
    _add_format(report)
    report.add_argument("--debug", action="store_true", help="show tracebacks on errors")

    ratings = subcommands.add_parser(
        "ratings", help="Bradley-Terry ratings on the Elo scale, bootstrap intervals",
        epilog=f"Example: {EXAMPLES['ratings']}",
    )
    ratings.add_argument("inputs", nargs="+", metavar="INPUT", help="judged files or globs")
    ratings.add_argument("--anchor", metavar="MODEL[=RATING]", help="the model fixed at a rating")
    ratings.add_argument("--bootstrap", type=int, default=1000, metavar="B")
    ratings.add_argument("--seed", type=int, default=0)
    ratings.add_argument("--cluster", metavar="COLUMN",
                         help="resample by this column (questions; default: sample_id when "
                         "the battles have it); 'none' for battles")
    ratings.add_argument("--matrix", action="store_true", help="also show the win-rate matrix")
    ratings.add_argument(
        "--style", metavar="FEATURES",
        help="control for style (Chatbot Arena's style control): comma-separated features "
        "among length, markdown_headers, markdown_lists, bold, or 'all'; the style "
        "coefficients are shown after the ratings",
    )
    ratings.add_argument(
        "--style-column", action="append", default=[], metavar="FEATURE=COL_A,COL_B",
        help="precomputed counts of a feature (e.g. length=tokens_a,tokens_b for token "
        "counts), instead of counting in the answers' text (repeatable)",
    )
    ratings.add_argument(
        "--answers", default="answer_a,answer_b", metavar="COL_A,COL_B",
        help="the answers' text columns the features are counted in (default %(default)s)",
    )
    ratings.add_argument("--length-unit", choices=("words", "characters"), default="words",
                         help="the unit of length counted in text (default %(default)s)")
    ratings.add_argument(
        "--style-normalization", choices=("chatbot_arena", "arena_hard"),
        default="chatbot_arena",
        help="how two answers' counts make a battle's feature: chatbot_arena "
        "(a - b) / (a + b + 1), or arena_hard (length ratio, markdown densities); default "
        "%(default)s",
    )
    ratings.add_argument("--coefficients", metavar="PATH",
                         help="write the style coefficients to a file (default: shown)")
    ratings.add_argument("-o", "--output", metavar="PATH", help="write the table to a file")
    _add_format(ratings)
    ratings.add_argument("--debug", action="store_true", help="show tracebacks on errors")

    audit = subcommands.add_parser(
        "audit", help="audit the judge: position bias, flip rate, length bias, self-preference, "
        "agreement with human labels (Cohen's and Fleiss' kappa)",
        epilog=f"Example: {EXAMPLES['audit']}",
    )
    audit.add_argument("inputs", nargs="+", metavar="INPUT", help="judged files or globs")
    audit.add_argument("--by", default="", metavar="COLS", help="comma-separated group columns")
    audit.add_argument(
        "--human", metavar="FILE_OR_COLUMN",
        help="human labels A/B/tie: a column of the input, or a file joined on the item "
        "columns (--on) holding them in --human-label",
    )
    audit.add_argument("--human-label", default="human", metavar="COLUMN",
                       help="the label column of a --human file (default: %(default)s)")
    audit.add_argument("--on", default="", metavar="COLS",
                       help="the columns naming an item, to match judges and human labels "
                       "(default: sample_id or question, model_a, model_b, turn)")
    audit.add_argument("--judge", metavar="COLUMN",
                       help="the column naming the judge (default: judge_model or judge)")
    audit.add_argument(
        "--measures", default="", metavar="NAMES",
        help="comma-separated measures to compute, each required (default: all that apply): "
        "position_bias, flip_rate, length_bias, self_win_rate, self_preference, agreement, "
        "cohen_kappa, fleiss_kappa",
    )
    audit.add_argument("--self", action="append", default=[], dest="self_models",
                       metavar="JUDGE=MODEL", help="the judge's own model, where the names "
                       "differ (repeatable)")
    audit.add_argument("--kappa-weights", choices=("linear", "quadratic"),
                       help="weighted Cohen's kappa on the order A < tie < B")
    audit.add_argument("--ci", type=float, default=0.95, metavar="LEVEL")
    audit.add_argument("--bootstrap", type=int, default=1000, metavar="B")
    audit.add_argument("--seed", type=int, default=0)
    audit.add_argument("--cluster", metavar="COLUMN",
                       help="resample by this column (default: cluster, sample_id or question, "
                       "the first present); 'none' for rows")
    audit.add_argument("-o", "--output", metavar="PATH", help="write the table to a file")
    _add_format(audit)
    audit.add_argument("--debug", action="store_true", help="show tracebacks on errors")


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
    command = args.judge_command
    if command in ("pairwise", "grade"):
        return _run_asking(args, command)
    if command == "classify":
        return _run_classify(args, show)
    if command == "report":
        return _run_report(args, show)
    if command == "audit":
        return _run_audit(args, show)
    return _run_ratings(args, show)


def _usage_error(message: str) -> Exception:
    """A usage error of ``evalframe judge`` (exit code 2)."""
    from evalframe.cli import UsageError

    return UsageError(message)


def _checked(command: str, check: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Run a check of the command line: its EvalframeError is a usage error."""
    try:
        return check(*args, **kwargs)
    except EvalframeError as error:
        raise _usage_error(f"evalframe judge {command}: {error}") from error


def _judge(args: argparse.Namespace) -> Any:
    """The OpenAI-compatible judge of the command line (its settings checked)."""
    from evalframe.judge.backends import JudgeUnavailable, OpenAIJudge

    if args.concurrency is not None and args.concurrency < 1:
        raise _usage_error(
            f"evalframe judge {args.judge_command}: --concurrency {args.concurrency} must be "
            ">= 1 (requests in flight at once)"
        )
    for option, value, low in (("--timeout", args.timeout, "> 0"),
                               ("--temperature", args.temperature, ">= 0")):
        if not (math.isfinite(value) and (value > 0 if low == "> 0" else value >= 0)):
            raise _usage_error(
                f"evalframe judge {args.judge_command}: {option} {value} must be a finite "
                f"number {low}"
            )
    for option, value, low in (("--max-retries", args.max_retries, 0),
                               ("--max-tokens", args.max_tokens, 1)):
        if value < low:
            raise _usage_error(
                f"evalframe judge {args.judge_command}: {option} {value} must be >= {low}"
            )
    settings = {
        "base_url": args.base_url, "api_key_env": args.api_key_env,
        "temperature": args.temperature, "max_tokens": args.max_tokens, "seed": args.seed,
        "timeout": args.timeout, "max_retries": args.max_retries,
        "concurrency": args.concurrency or DEFAULT_CONCURRENCY,
    }
    try:
        return OpenAIJudge(args.model, **settings)
    except JudgeUnavailable:  # the openai package is missing: not the command line's fault
        raise
    except EvalframeError as error:
        raise _usage_error(f"evalframe judge {args.judge_command}: {error}") from error


def _run_asking(args: argparse.Namespace, command: str) -> int:
    """``judge pairwise`` and ``judge grade``: every option checked, then the judge asked."""
    from evalframe import judge as J
    from evalframe.judge.grade import grade_prompt
    from evalframe.judge.pairwise import pairwise_prompt

    model = _judge(args)
    rubric = _text(args.rubric, "--rubric", command)
    template = _text(args.template, "--template", command)
    columns = _mapping(args.col, command)
    if command == "pairwise":
        layout: Any = args.format
        if args.pattern:
            if template is None:
                raise _usage_error(
                    "evalframe judge pairwise: --pattern needs --template (the prompt whose "
                    "replies it reads)"
                )
            layout = _checked(command, J.custom_format, template, args.pattern)
            template = None
        _checked(command, pairwise_prompt, format=layout, template=template, rubric=rubric,
                 columns=columns)
    else:
        scale = _scale(args.scale)
        _checked(command, grade_prompt, format=args.format, template=template, scale=scale,
                 rubric=rubric, columns=columns)
    frame = scan(args.inputs).collect()
    options: dict[str, Any] = {
        "rubric": rubric, "columns": columns, "cache": args.cache,
        "concurrency": args.concurrency, "quiet": args.quiet,
    }
    before = _cached_count(args.cache)
    if command == "pairwise":
        result = J.pairwise(frame, model, format=layout, template=template, **options)
    else:
        result = J.grade(frame, model, format=args.format, template=template, scale=scale,
                         **options)
    save(result, args.output)
    if not args.quiet:
        sys.stderr.write(_summary(result, command, before, _cached_count(args.cache)) + "\n")
    return 0


def _columns_present(
    frame: pl.LazyFrame, named: list[tuple[str, str | None]], command: str
) -> None:
    """Columns named on the command line (option, column) that the input must have."""
    schema = frame.collect_schema()
    for option, column in named:
        if column is not None and column not in schema:
            raise _usage_error(
                f"evalframe judge {command}: {option} {column}: no such column; available: "
                f"{', '.join(schema)}"
            )


def _run_classify(args: argparse.Namespace, show: Callable[[pl.DataFrame], None]) -> int:
    from evalframe import judge as J
    from evalframe.judge.formats import resolve_format

    if args.format is not None:
        _checked("classify", resolve_format, args.format)
    frame = scan(args.inputs)
    _columns_present(frame, [("--verdict-ab", args.verdict_ab),
                             ("--verdict-ba", args.verdict_ba)], "classify")
    result = J.classify(
        frame.collect(), verdict_ab=args.verdict_ab, verdict_ba=args.verdict_ba,
        format=args.format,
    )
    _emit(result, args.output, show)
    return 0


def _run_report(args: argparse.Namespace, show: Callable[[pl.DataFrame], None]) -> int:
    from evalframe import judge as J
    from evalframe.judge.length_controlled import check_glm_data
    from evalframe.judge.policies import resolve_policy

    policy = _checked("report", resolve_policy, args.policy)
    if not 0 < args.ci < 1:
        raise _usage_error(f"evalframe judge report: --ci {args.ci} must be strictly between "
                           "0 and 1")
    if args.glm_data is not None and not args.length_controlled:
        raise _usage_error("evalframe judge report: --glm-data is read only for the "
                           "length-controlled win rate: add --length-controlled")
    if args.length_controlled and not policy.length_control:
        raise _usage_error(f"evalframe judge report: --length-controlled is AlpacaEval's "
                           f"length-controlled win rate: it needs --policy alpaca_eval, not "
                           f"{args.policy!r}")
    if args.glm_data is not None:
        _checked("report", check_glm_data, args.glm_data)
    by = [key.strip() for key in args.by.split(",") if key.strip()]
    frame = scan(args.inputs)
    _columns_present(frame, [*(("--by", key) for key in by), ("--cluster", args.cluster)],
                     "report")
    table = J.report(
        frame.collect(), by=by or None, policy=args.policy, ci=args.ci, cluster=args.cluster,
        length_controlled=args.length_controlled, glm_data=args.glm_data,
    )
    _emit(table, args.output, show, getattr(args, "format", "table"))
    return 0


def _anchor(text: str | None) -> str | tuple[str, float] | None:
    """``--anchor MODEL[=RATING]``: a model name, or a model and a finite rating."""
    if text is None:
        return None
    name, sep, rating = text.partition("=")
    if not name:
        raise _usage_error(f"evalframe judge ratings: --anchor {text}: expected MODEL[=RATING]")
    if not sep:
        return name
    try:
        value = float(rating)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise _usage_error(
            f"evalframe judge ratings: --anchor {text}: the rating {rating!r} is not a finite "
            "number; expected MODEL[=RATING], e.g. gpt-4=1000"
        )
    return name, value


def _style_options(args: argparse.Namespace) -> dict[str, Any]:
    """``--style`` and its options, checked (an unknown feature is a usage error)."""
    from evalframe.judge.style import STYLE_FEATURES, check_style

    if args.style is None:
        if args.style_column or args.coefficients:
            option = "--style-column" if args.style_column else "--coefficients"
            raise _usage_error(f"evalframe judge ratings: {option} needs --style")
        return {}
    names = [name.strip() for name in args.style.split(",") if name.strip()]
    style: bool | list[str] = True if names == ["all"] else names
    columns: dict[str, tuple[str, str]] = {}
    for text in args.style_column:
        name, sep, pair = text.partition("=")
        first, comma, second = pair.partition(",")
        if not (sep and comma and name and first and second):
            raise _usage_error(
                f"evalframe judge ratings: --style-column {text}: expected "
                "FEATURE=COL_A,COL_B, e.g. length=tokens_a,tokens_b"
            )
        columns[name] = (first, second)
    for name in names:
        if name != "all" and name not in STYLE_FEATURES and name not in columns:
            raise _usage_error(
                f"evalframe judge ratings: --style {name}: unknown style feature; known: "
                f"{', '.join(STYLE_FEATURES)}, or all (a feature of your own needs "
                "--style-column NAME=COL_A,COL_B)"
            )
    answers = tuple(name.strip() for name in args.answers.split(","))
    if len(answers) != 2 or not all(answers):
        raise _usage_error(f"evalframe judge ratings: --answers {args.answers}: expected "
                           "COL_A,COL_B")
    options = {
        "style": style, "style_columns": columns or None, "answer_a": answers[0],
        "answer_b": answers[1], "length_unit": args.length_unit,
        "style_normalization": args.style_normalization,
    }
    spec = _checked("ratings", check_style, style, style_columns=columns or None,
                    answers=answers, length_unit=args.length_unit,
                    normalization=args.style_normalization)
    options["spec"] = spec
    return options


def _run_ratings(args: argparse.Namespace, show: Callable[[pl.DataFrame], None]) -> int:
    from evalframe import judge as J
    from evalframe.judge.ratings import check_numbers

    anchor = _anchor(args.anchor)
    _checked("ratings", check_numbers, 400, 10, 1000, args.bootstrap, args.seed, 0.95)
    styling = _style_options(args)
    if args.coefficients:
        _check_file(args.coefficients, "--coefficients")
    frame = scan(args.inputs)
    if args.cluster is None:
        cluster: str | None = "sample_id"  # when the battles have it
    elif args.cluster.lower() == "none":
        cluster = None
    else:
        cluster = args.cluster
        _columns_present(frame, [("--cluster", cluster)], "ratings")
    if styling:
        spec = styling.pop("spec")
        named = [("--style-column", column) for pair in spec.columns.values()
                 for column in pair]
        if spec.counted():
            named += [("--answers", column) for column in spec.answers]
        _columns_present(frame, named, "ratings")
    battles = frame.collect()
    result = J.ratings(
        battles, anchor=anchor, bootstrap=args.bootstrap, seed=args.seed, cluster=cluster,
        return_coefficients=bool(styling), **styling,
    )
    table = result.ratings if styling else result
    _emit(table, args.output, show, getattr(args, "format", "table"))
    if styling:
        if args.coefficients:
            save(result.coefficients, args.coefficients)
        else:
            show(result.coefficients)
    if args.matrix:
        show(J.win_rate_matrix(battles))
    return 0


def _check_file(path: str, option: str) -> None:
    """A file the command writes: a type evalframe writes (a usage error otherwise)."""
    from evalframe.io.formats import WRITE_FORMATS, format_of

    try:
        format_of(path, WRITE_FORMATS, "write")
    except EvalframeError:
        raise _usage_error(
            f"evalframe judge ratings: {option} {path}: unknown type of file; give a name "
            f"ending in {', '.join(sorted(WRITE_FORMATS))}"
        ) from None


def _names(text: str) -> list[str]:
    """A comma-separated list of names, blanks left out."""
    return [name.strip() for name in text.split(",") if name.strip()]


def _self_models(pairs: list[str]) -> dict[str, list[str]] | None:
    """``--self JUDGE=MODEL`` (repeatable): each judge's own model(s)."""
    mapping: dict[str, list[str]] = {}
    for pair in pairs:
        judge, sep, model = pair.partition("=")
        if not sep or not judge or not model:
            raise _usage_error(f"evalframe judge audit: --self expects JUDGE=MODEL, got {pair!r}")
        mapping.setdefault(judge, []).append(model)
    return mapping or None


def _run_audit(args: argparse.Namespace, show: Callable[[pl.DataFrame], None]) -> int:
    from evalframe import judge as J
    from evalframe.io.load import expand_paths
    from evalframe.judge.audit import check_options

    measures = _names(args.measures) or None
    self_models = _self_models(args.self_models)
    _checked("audit", check_options, measures=measures, ci=args.ci, bootstrap=args.bootstrap,
             seed=args.seed, kappa_weights=args.kappa_weights, self_models=self_models)
    by, on = _names(args.by), _names(args.on)
    frame = scan(args.inputs)
    cluster: str | bool | None = args.cluster
    if isinstance(cluster, str) and cluster.lower() == "none":
        cluster = False
    named = [*(("--by", key) for key in by), *(("--on", key) for key in on),
             ("--judge", args.judge), ("--cluster", cluster if isinstance(cluster, str) else None)]
    _columns_present(frame, named, "audit")
    human: Any = args.human
    if human is not None and human not in frame.collect_schema():
        try:
            expand_paths(human)
        except EvalframeError as error:
            raise _usage_error(
                f"evalframe judge audit: --human {human}: neither a column of the input nor a "
                f"file of labels ({error})"
            ) from error
    table = J.audit(
        frame.collect(), human=human, by=by or None, judge=args.judge, measures=measures,
        on=on or None, self_models=self_models, kappa_weights=args.kappa_weights, ci=args.ci,
        bootstrap=args.bootstrap, seed=args.seed, cluster=cluster, human_label=args.human_label,
    )
    _emit(table, args.output, show, getattr(args, "format", "table"))
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


#: --format of report and ratings: the data, or formatted (values with their intervals).
_FORMATS = ("table", "markdown", "latex", "html", "csv")


def _add_format(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--format", choices=_FORMATS, default="table",
        help="how the table is printed: the data ('table', default), or formatted for "
        "people, each rate with its interval (markdown, latex, html, csv)",
    )


def _emit(table: pl.DataFrame, output: str | None, show: Callable[[pl.DataFrame], None],
          form: str = "table") -> None:
    if output:
        from evalframe.io.formats import WRITE_FORMATS, format_of
        from evalframe.stats.ranks import ties_as_text

        if format_of(output, WRITE_FORMATS, "write") == "csv":
            table = ties_as_text(table)  # a CSV file holds no lists
        save(table, output)
    elif form == "table":
        show(table)
    else:
        from evalframe.formatted import table as formatted

        sys.stdout.write(formatted(table).render(form))


def _text(value: str | None, option: str, command: str) -> str | None:
    """A command-line text, or the content of the file named after ``@``."""
    if value is None or not value.startswith("@"):
        return value
    path = Path(os.path.expanduser(value[1:]))
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        reason = getattr(error, "strerror", None) or error
        raise _usage_error(
            f"evalframe judge {command}: {option} {value}: cannot read {str(path)!r}: {reason}"
        ) from error


def _mapping(pairs: list[str], command: str) -> dict[str, str] | None:
    mapping = {}
    for pair in pairs:
        role, sep, column = pair.partition("=")
        if not sep or not role or not column:
            raise _usage_error(f"evalframe judge {command}: --col expects ROLE=COLUMN, got "
                               f"{pair!r}")
        mapping[role] = column
    return mapping or None


def _scale(text: str | None) -> tuple[float, float] | None:
    """``--scale LOW,HIGH`` as two finite numbers, ``LOW < HIGH``."""
    if text is None:
        return None
    low, sep, high = text.partition(",")
    try:
        if not sep:
            raise ValueError(text)
        bounds = float(low), float(high)
    except ValueError:
        bounds = math.nan, math.nan
    if not (math.isfinite(bounds[0]) and math.isfinite(bounds[1]) and bounds[0] < bounds[1]):
        raise _usage_error(
            f"evalframe judge grade: --scale {text}: expected LOW,HIGH, two numbers with LOW "
            "below HIGH (e.g. 1,10)"
        )
    return bounds
