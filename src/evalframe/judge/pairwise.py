"""The pairwise harness: every row judged twice, A shown first and then B shown first.

:func:`pairwise` renders both prompts of every row at once (one ``pl.concat_str`` each, see
:mod:`evalframe.judge.formats`), asks each distinct prompt once through
:func:`evalframe.judge.run.ask` (cached, concurrent), parses both replies with the format's
parser, maps the second back to A/B, and classifies the row
(:mod:`evalframe.judge.classify`).

Columns added (replacing input columns of the same names):

- ``judgment_ab``, ``judgment_ba``: the raw replies (null where the call failed or was not
  made; a lone surrogate a server escaped in its JSON is U+FFFD here, as Polars holds
  UTF-8, while the cache keeps the reply as sent);
- ``verdict_ab``, ``verdict_ba``: ``"A"``, ``"B"``, ``"tie"`` or ``"error"``, both in terms
  of the answers; ``strength_ab``, ``strength_ba`` (Int64) for a format that grades its
  verdicts (Arena-Hard: 3 for ``>>``, 1 otherwise);
- ``outcome``: ``"A"``, ``"B"``, ``"tie"``, ``"inconsistent"`` or ``"error"``;
- ``judge_error``: why a row's outcome is ``"error"`` (null otherwise);
- ``judge_model``, ``judge_format``, ``judge_signature``: what judged it.

A row with a null question or answer (any null field of the template) is not sent to the
judge: its outcome is ``"error"``, with ``judge_error`` naming the null fields, and the row is
kept. A failed call (an exception, an HTTP error after the retries) and an unparseable reply
are errors too, kept with the reply; nothing is dropped and nothing raises for one row.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import polars as pl

from evalframe._version import __version__
from evalframe.errors import EvalframeError
from evalframe.judge.cache import utf8_text
from evalframe.judge.classify import outcome, parsed_columns
from evalframe.judge.formats import Format, render, resolve_format, template_fields
from evalframe.judge.run import ask, judge_identity

__all__ = ["PAIRWISE_COLUMNS", "ask_column", "judge_columns", "pairwise", "pairwise_prompt"]

#: The roles a pairwise template reads, and their default column names.
ROLES = ("question", "answer_a", "answer_b")

#: The columns :func:`pairwise` adds, in order (strengths only for formats that have them).
PAIRWISE_COLUMNS = (
    "judgment_ab",
    "judgment_ba",
    "verdict_ab",
    "verdict_ba",
    "strength_ab",
    "strength_ba",
    "outcome",
    "judge_error",
    "judge_model",
    "judge_format",
    "judge_signature",
)


def pairwise(
    frame: pl.DataFrame | pl.LazyFrame,
    judge: Any,
    *,
    rubric: str | None = None,
    format: str | Format = "default",
    template: str | None = None,
    columns: Mapping[str, str] | None = None,
    cache: str | Path | Any | None = None,
    concurrency: int | None = None,
    quiet: bool = False,
) -> pl.DataFrame:
    """Judge every row twice, the answers in both orders, and classify the outcome.

    Parameters
    ----------
    frame
        One row per comparison, with the roles ``question``, ``answer_a``, ``answer_b``
        (renamed with ``columns``) and any other column the template names.
    judge
        A callable ``judge(prompt) -> str`` (sync or async), or an
        :class:`~evalframe.judge.backends.OpenAIJudge`.
    rubric
        The judging instructions, for a template with a ``{rubric}`` field (the default
        format's; ``None`` uses the format's own, :data:`~evalframe.judge.formats.DEFAULT_RUBRIC`).
        Giving one to a template without the field is an error: ``mtbench`` and
        ``arena_hard`` have their own fixed instructions.
    format
        ``"default"``, ``"mtbench"``, ``"arena_hard"``, or a
        :func:`~evalframe.judge.formats.custom_format`: the template and the verdict parser.
    template
        A template replacing the format's (its instructions and parser are kept): a format
        string over ``question``, ``answer_a`` (the answer shown first), ``answer_b`` (shown
        second), ``rubric`` and any column; ``{{``/``}}`` for literal braces. It must show
        both answers.
    columns
        Role or field -> column name, e.g. ``{"question": "prompt", "answer_a": "baseline"}``.
    cache
        ``None``, the path of an SQLite judgment cache, or a ``JudgmentCache``.
    concurrency
        Requests in flight at once (``None``: the judge's own, an ``OpenAIJudge``'s
        ``concurrency``, or 8).
    quiet
        Draw no progress bar.

    Returns
    -------
    The input (collected, every row in order) with the columns of the module's list.

    Examples
    --------
    >>> import polars as pl
    >>> frame = pl.DataFrame({"question": ["6 x 7?", "6 x 7?", "Say hi"],
    ...                       "answer_a": ["42", "41", "hi"], "answer_b": ["40", "42", "hello"]})
    >>> def prefers_42(prompt):
    ...     first = prompt.split("[The Start of the FIRST Answer]\\n")[1].split("\\n")[0]
    ...     second = prompt.split("[The Start of the SECOND Answer]\\n")[1].split("\\n")[0]
    ...     return "TIE" if ("42" in first) == ("42" in second) else (
    ...         "FIRST" if "42" in first else "SECOND")
    >>> judged = pairwise(frame, prefers_42, quiet=True)
    >>> judged.select("verdict_ab", "verdict_ba", "outcome").rows()
    [('A', 'A', 'A'), ('B', 'B', 'B'), ('tie', 'tie', 'tie')]
    """
    data = collect_pairs(frame)
    fmt, body, literals, bindings = pairwise_prompt(
        format=format, template=template, rubric=rubric, columns=columns
    )
    fields = template_fields(body)
    bind_ab = {field: bindings.get(field, field) for field in fields if field not in literals}
    bind_ba = {**bind_ab, "answer_a": bind_ab["answer_b"], "answer_b": bind_ab["answer_a"]}
    prefix = fmt.prefix()
    prompts = data.select(
        render(body, data.schema, bind_ab, literals, prefix).alias("prompt_ab"),
        render(body, data.schema, bind_ba, literals, prefix).alias("prompt_ba"),
        null_fields_expr(bind_ab).alias("null_fields"),
    )
    replies = ask_column(
        pl.concat([prompts["prompt_ab"], prompts["prompt_ba"]]),
        judge,
        cache=cache,
        concurrency=concurrency,
        quiet=quiet,
    )
    n = data.height
    asked = pl.DataFrame(
        {
            "judgment_ab": replies["text"][:n],
            "judgment_ba": replies["text"][n:],
            "failed_ab": replies["error"][:n],
            "failed_ba": replies["error"][n:],
            "null_fields": prompts["null_fields"],
        }
    )
    judged = asked.with_columns(parsed_columns(fmt, "judgment_ab", "judgment_ba")).with_columns(
        outcome()
    )
    judged = judged.with_columns(_reason().alias("judge_error"))
    identity = judge_identity(judge)
    meta = judge_columns(identity, fmt.name, fmt.fingerprint(body, literals.get("rubric")))
    added = [c for c in PAIRWISE_COLUMNS if c in judged.columns or c in meta]
    kept = data.drop([c for c in added if c in data.columns])
    return pl.concat(
        [kept, judged.with_columns(**meta).select(added)], how="horizontal"
    )


def pairwise_prompt(
    *,
    format: str | Format = "default",
    template: str | None = None,
    rubric: str | None = None,
    columns: Mapping[str, str] | None = None,
) -> tuple[Format, str, dict[str, str], dict[str, str]]:
    """The format, template, literal fields and column bindings :func:`pairwise` renders.

    Every check of these options, none of the data: a command line is checked with it
    before any input is read or any judge asked.

    >>> fmt, body, literals, bindings = pairwise_prompt(columns={"question": "prompt"})
    >>> fmt.name, sorted(literals), bindings
    ('default', ['rubric'], {'question': 'prompt'})
    >>> pairwise_prompt(template="Which is better, {answer_a} or {answer}?")
    Traceback (most recent call last):
    ...
    evalframe.errors.EvalframeError: the pairwise template has no field {answer_b}; it must \
show both answers (answer_a is the one shown first, answer_b second), and has fields \
['answer_a', 'answer']
    """
    fmt = resolve_format(format)
    body = fmt.template if template is None else template
    fields = template_fields(body)
    missing = [role for role in ("answer_a", "answer_b") if role not in fields]
    if missing:
        raise EvalframeError(
            f"the pairwise template has no field {', '.join('{' + m + '}' for m in missing)}; "
            "it must show both answers (answer_a is the one shown first, answer_b second), "
            f"and has fields {fields}"
        )
    literals = _rubric_literals(fields, rubric, fmt)
    bindings = dict(columns or {})
    unknown = sorted(set(bindings) - set(fields) - set(ROLES))
    if unknown:
        raise EvalframeError(
            f"columns= maps {unknown}, which the template does not use; its fields are {fields}"
        )
    return fmt, body, literals, bindings


def _strings(texts: list[str | None]) -> pl.Series:
    """Replies or errors as a String series; a lone surrogate (UTF-8 cannot hold it) is
    U+FFFD, found only when building the series fails (the usual texts cost nothing more).

    >>> _strings(["FIRST", "FIRST \\ud800", None]).to_list()
    ['FIRST', 'FIRST \ufffd', None]
    """
    try:
        return pl.Series(texts, dtype=pl.String)
    except UnicodeEncodeError:
        return pl.Series([None if text is None else utf8_text(text) for text in texts],
                         dtype=pl.String)


def collect_pairs(frame: pl.DataFrame | pl.LazyFrame) -> pl.DataFrame:
    if isinstance(frame, pl.LazyFrame):
        return frame.collect()
    if isinstance(frame, pl.DataFrame):
        return frame
    raise EvalframeError(
        f"the judge harness takes a polars DataFrame or LazyFrame, got {type(frame).__name__}; "
        "read files with evalframe.load first"
    )


def _rubric_literals(fields: Sequence[str], rubric: str | None, fmt: Any) -> dict[str, str]:
    if "rubric" not in fields:
        if rubric is not None:
            raise EvalframeError(
                f"rubric= was given but the {fmt.name!r} template has no {{rubric}} field "
                "(its instructions are fixed); pass template= with a {rubric} field, or no rubric"
            )
        return {}
    text = rubric if rubric is not None else fmt.rubric
    if text is None:
        raise EvalframeError(
            f"the template has a {{rubric}} field and the {fmt.name!r} format has no rubric of "
            "its own; pass rubric='...'"
        )
    return {"rubric": text}


def null_fields_expr(bindings: Mapping[str, str]) -> pl.Expr:
    """The names of the template fields that are null in the row, joined (null: none)."""
    names = [
        pl.when(pl.col(column).is_null()).then(pl.lit(field))
        for field, column in bindings.items()
    ]
    if not names:
        return pl.lit(None, dtype=pl.String)
    joined = pl.concat_list(names).list.drop_nulls().list.join(", ")
    return pl.when(joined != "").then(joined)


def _reason() -> pl.Expr:
    """Why a row is an error: null fields, failed calls, unparseable replies (null: no error)."""
    parts = [
        pl.when(pl.col("null_fields").is_not_null()).then(
            pl.lit("not asked: null ") + pl.col("null_fields")
        )
    ]
    for side, shown in (("ab", "A first"), ("ba", "B first")):
        failed = pl.col(f"failed_{side}")
        parts.append(
            pl.when(pl.col("null_fields").is_null() & pl.col(f"judgment_{side}").is_null()).then(
                pl.lit(f"judge failed ({shown}): ") + failed.fill_null("no reply")
            )
        )
        parts.append(
            pl.when(
                pl.col(f"judgment_{side}").is_not_null() & (pl.col(f"verdict_{side}") == "error")
            ).then(pl.lit(f"unparseable reply ({shown})"))
        )
    joined = pl.concat_list(parts).list.drop_nulls().list.join("; ")
    return pl.when(pl.col("outcome") == "error").then(
        pl.when(joined != "").then(joined).otherwise(pl.lit("error"))
    )


def ask_column(
    prompts: pl.Series,
    judge: Any,
    *,
    cache: Any = None,
    concurrency: int | None = None,
    quiet: bool = False,
) -> pl.DataFrame:
    """Ask the judge every distinct non-null prompt once; the replies, one row per prompt.

    Returns a frame of ``text`` (the reply, null where the call failed or the prompt is null)
    and ``error`` (why it failed, null otherwise), aligned with ``prompts``.

    >>> import polars as pl
    >>> ask_column(pl.Series(["a", None, "a"]), str.upper, quiet=True).rows()
    [('A', None), (None, None), ('A', None)]
    """
    frame = prompts.cast(pl.String).rename("prompt").to_frame()
    # de-duplicated in Polars (hashing the UTF-8 text is far cheaper than Python's str)
    distinct = frame.filter(pl.col("prompt").is_not_null() & pl.col("prompt").is_first_distinct())
    slot = (
        frame.join(distinct.with_row_index("slot"), on="prompt", how="left",
                   nulls_equal=False, maintain_order="left")
        .get_column("slot")
    )
    replies = ask(
        distinct.get_column("prompt").to_list(), judge, cache=cache, concurrency=concurrency,
        quiet=quiet, distinct=True,
    )
    answered = pl.DataFrame(
        {
            "text": _strings([reply.text for reply in replies]),
            "error": _strings([reply.error for reply in replies]),
        }
    )
    # a null prompt was not asked: its slot is null, which gathers null text and error
    return answered.select(pl.all().gather(slot))


def judge_columns(identity: Mapping[str, Any], format: str, fingerprint: str) -> dict[str, Any]:
    """``judge_model``, ``judge_format``, ``judge_signature`` for a judge and a format.

    The signature lists what changes a judgment: the judge (model or callable name), its other
    parameters, the format, a hash of the prompt template and rubric, evalframe's version.

    >>> import polars as pl
    >>> meta = judge_columns({"backend": "openai", "model": "m", "seed": 1}, "default", "abc")
    >>> pl.select(**meta)["judge_signature"].item().rsplit("|", 1)[0]
    'judge:m|params:seed=1|format:default|prompt:abc'
    """
    model = str(identity.get("model") or identity.get("name") or "?")
    params = {k: v for k, v in identity.items() if k not in ("model", "name", "backend")}
    text = (
        ",".join(
            f"{k}={json.dumps(v, sort_keys=True, default=str)}" for k, v in sorted(params.items())
        )
        or "-"
    )
    digest = "" if len(text) <= 80 else hashlib.sha256(text.encode()).hexdigest()[:12]
    signature = (
        f"judge:{model}|params:{digest or text}|format:{format}|prompt:{fingerprint}"
        f"|version:{__version__}"
    )
    return {
        "judge_model": pl.lit(model, dtype=pl.String),
        "judge_format": pl.lit(format, dtype=pl.String),
        "judge_signature": pl.lit(signature, dtype=pl.String),
    }
