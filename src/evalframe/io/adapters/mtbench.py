"""FastChat's MT-bench files (``fastchat/llm_judge``): judge verdicts, judge scores, questions.

Three layouts, each recognised from its first record's keys:

- ``mtbench_pair``: ``data/mt_bench/model_judgment/<judge>_pair.jsonl``, written by
  ``common.play_a_match_pair``. Each line is one match judged twice: game 1 shows ``model_1``'s
  answer as A and ``model_2``'s as B, game 2 swaps them. ``g1_winner`` and ``g2_winner`` are
  already mapped back to model names (``"model_1"``, ``"model_2"``, ``"tie"``, ``"error"``: the
  judge's text held no ``[[A]]``/``[[B]]``/``[[C]]``, or the API call failed, ``$ERROR$``).
  Read as ``verdict_ab`` (game 1) and ``verdict_ba`` (game 2), both in terms of ``model_a`` =
  ``model_1`` and ``model_b`` = ``model_2``: ``"A"``, ``"B"``, ``"tie"``, ``"error"``.
- ``mtbench_single``: ``<judge>_single.jsonl`` (``common.play_a_match_single``), one grade of
  one answer per line; ``score`` is the judge's rating with FastChat's ``-1`` (no ``[[rating]]``
  found in the judgment) read as null, the value as written kept in ``score_raw``.
- ``mtbench_questions``: ``data/mt_bench/question.jsonl``, the questions (``turns``, a list of
  one or two user turns; ``reference`` answers for math, reasoning and coding), read as
  ``reference`` rows with ``question`` = the first turn.

``sample_id`` is ``question_id``, ``task`` is ``"mt_bench"``; ``judge`` (FastChat's
``[model, prompt]`` pair) is split into ``judge`` (the judge model) and ``judge_prompt`` (the
prompt's name, e.g. ``pair-v2``, ``single-math-v1-multi-turn``). Judgment files hold no question
text and no answers (they are inside the judge prompts): join the questions on ``sample_id``.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from evalframe.errors import EvalframeError
from evalframe.io._common import short
from evalframe.io._duplicates import unique_samples
from evalframe.io._json import line_locator, read_json_array, read_jsonl
from evalframe.io._source import is_gzip, open_binary
from evalframe.io.adapters._adapter import Adapter
from evalframe.io.adapters._probe import Probe
from evalframe.io.adapters.table import register
from evalframe.io.formats import READ_FORMATS, format_of

__all__ = ["ADAPTERS", "read_pair", "read_questions", "read_single"]

DOC = "docs/harnesses/mt-bench.md"
TASK = "mt_bench"

PAIR_KEYS = ("question_id", "model_1", "model_2", "g1_winner", "g2_winner", "judge")
SINGLE_KEYS = ("question_id", "model", "judge", "score")
QUESTION_KEYS = ("question_id", "turns")
#: The other keys FastChat writes on every line; detection needs them too.
PAIR_WRITTEN = ("g1_judgment", "g2_judgment")
SINGLE_WRITTEN = ("judgment", "turn")
QUESTION_OPTIONAL = ("category", "reference")

#: What names one row: FastChat judges a question's turn once per model (pair) and judge prompt.
PAIR_ROW = ("sample_id", "model_a", "model_b", "judge", "judge_prompt", "turn")
SINGLE_ROW = ("sample_id", "model", "judge", "judge_prompt", "turn")
QUESTION_ROW = ("sample_id",)

#: What FastChat's winners mean for A (``model_1``) and B (``model_2``).
VERDICTS = {"model_1": "A", "model_2": "B", "tie": "tie", "error": "error"}

PAIR_NAMES = {
    "question_id": "sample_id",
    "model_1": "model_a",
    "model_2": "model_b",
    "g1_judgment": "judgment_ab",
    "g2_judgment": "judgment_ba",
}
SINGLE_NAMES = {"question_id": "sample_id"}
QUESTION_NAMES = {"question_id": "sample_id"}
#: The file's own keys each layout keeps under their names (or replaces on purpose).
PAIR_KEPT = ("judge", "turn")
SINGLE_KEPT = ("model", "judge", "score", "judgment", "turn")
QUESTION_KEPT = ("category", "turns")

#: The columns each layout gives first, in this order (an empty file gives the typed ones).
PAIR_SCHEMA = {
    "sample_id": pl.Null,
    "model": pl.String,
    "model_a": pl.String,
    "model_b": pl.String,
    "verdict_ab": pl.String,
    "verdict_ba": pl.String,
    "judgment_ab": pl.String,
    "judgment_ba": pl.String,
    "judge": pl.String,
    "judge_prompt": pl.String,
    "turn": pl.Int64,
    "task": pl.String,
}
SINGLE_SCHEMA = {
    "sample_id": pl.Null,
    "model": pl.String,
    "score": pl.Float64,
    "score_raw": pl.Float64,
    "judgment": pl.String,
    "judge": pl.String,
    "judge_prompt": pl.String,
    "turn": pl.Int64,
    "task": pl.String,
}
QUESTION_SCHEMA = {
    "sample_id": pl.Null,
    "question": pl.String,
    "category": pl.String,
    "turns": pl.List(pl.String),
    "task": pl.String,
}


# ---------------------------------------------------------------- detection


def _judge_pair(value: object) -> bool:
    return isinstance(value, list) and len(value) == 2 and all(isinstance(v, str) for v in value)


def _is_pair(probe: Probe) -> bool:
    record = probe.record
    if probe.top not in ("lines", "array") or record is None:
        return False
    return (
        all(key in record for key in (*PAIR_KEYS, *PAIR_WRITTEN))
        and record["g1_winner"] in VERDICTS
        and record["g2_winner"] in VERDICTS
        and _judge_pair(record["judge"])
    )


def _is_single(probe: Probe) -> bool:
    record = probe.record
    if probe.top not in ("lines", "array") or record is None:
        return False
    score = record.get("score")
    return (
        all(key in record for key in (*SINGLE_KEYS, *SINGLE_WRITTEN))
        and "g1_winner" not in record
        and _judge_pair(record["judge"])
        and isinstance(record["judgment"], str)
        and isinstance(score, int | float)
        and not isinstance(score, bool)
    )


def _is_questions(probe: Probe) -> bool:
    record = probe.record
    if probe.top not in ("lines", "array") or record is None:
        return False
    turns = record.get("turns")
    return (
        {*QUESTION_KEYS, "category"} <= set(record) <= {*QUESTION_KEYS, *QUESTION_OPTIONAL}
        and isinstance(turns, list)
        and len(turns) > 0
        and all(isinstance(turn, str) for turn in turns)
    )


# ---------------------------------------------------------------- readers


def read_pair(path: Path, *, duplicates: str = "error") -> pl.LazyFrame:
    """A FastChat ``*_pair.jsonl`` as pairwise judgment rows, one per match (two games).

    A match written twice (same question, models, judge, prompt and turn: FastChat appends to
    the file when a run is repeated) is an error, or one line is kept: ``duplicates``.

    >>> import json, tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "gpt-4_pair.jsonl"
    >>> line = {"question_id": 81, "model_1": "m1", "model_2": "m2", "judge": ["gpt-4", "pair-v2"],
    ...         "g1_judgment": "[[A]]", "g2_judgment": "[[B]]", "turn": 1}
    >>> games = [("model_1", "model_1"), ("model_1", "tie"), ("error", "model_2")]
    >>> _ = path.write_text("\\n".join(json.dumps(
    ...     {**line, "question_id": 81 + i, "g1_winner": a, "g2_winner": b})
    ...     for i, (a, b) in enumerate(games)))
    >>> read_pair(path).select("sample_id", "verdict_ab", "verdict_ba", "judge_prompt").collect(
    ... ).rows()
    [(81, 'A', 'A', 'pair-v2'), (82, 'A', 'tie', 'pair-v2'), (83, 'error', 'B', 'pair-v2')]
    """
    what = "FastChat MT-bench pairwise judgments (format 'mtbench_pair')"
    frame = _read(path, what, PAIR_KEYS, PAIR_SCHEMA, PAIR_NAMES, PAIR_KEPT)
    if frame is None:
        return pl.LazyFrame(schema=PAIR_SCHEMA)
    for key in ("g1_winner", "g2_winner"):
        _check_in(path, frame, key, what)
    frame = _split_judge(path, frame, what)
    added = [
        pl.col("model_1").alias("model"),
        pl.col("g1_winner").replace_strict(VERDICTS, return_dtype=pl.String).alias("verdict_ab"),
        pl.col("g2_winner").replace_strict(VERDICTS, return_dtype=pl.String).alias("verdict_ba"),
        pl.lit(TASK).alias("task"),
    ]
    ordered = _ordered(frame.lazy().with_columns(added), PAIR_NAMES, PAIR_SCHEMA)
    return _unique(ordered, PAIR_ROW, path, what, duplicates)


def read_single(path: Path, *, duplicates: str = "error") -> pl.LazyFrame:
    """A FastChat ``*_single.jsonl`` as one row per graded answer; ``score`` -1 is null.

    An answer graded twice by one judge and prompt is an error, or one line is kept:
    ``duplicates``.

    >>> import json, tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "gpt-4_single.jsonl"
    >>> line = {"question_id": 81, "model": "m", "judge": ["gpt-4", "single-v1"],
    ...         "user_prompt": "...", "judgment": "Rating: [[9]]", "turn": 1}
    >>> _ = path.write_text("\\n".join(
    ...     json.dumps({**line, "question_id": 81 + i, "score": s})
    ...     for i, s in enumerate([9, -1, 7.5])))
    >>> read_single(path).select("sample_id", "score", "score_raw").collect().rows()
    [(81, 9.0, 9.0), (82, None, -1.0), (83, 7.5, 7.5)]
    """
    what = "FastChat MT-bench single-answer grades (format 'mtbench_single')"
    frame = _read(path, what, SINGLE_KEYS, SINGLE_SCHEMA, SINGLE_NAMES, SINGLE_KEPT)
    if frame is None:
        return pl.LazyFrame(schema=SINGLE_SCHEMA)
    dtype = frame.schema["score"]
    if not (dtype == pl.Null or (dtype.is_numeric() and not dtype.is_decimal())):
        raise EvalframeError(
            f"cannot read {str(path)!r} as {what}: 'score' is {dtype}; expected numbers "
            "(the judge's rating, -1 where FastChat found none)"
        )
    frame = _split_judge(path, frame, what)
    raw = pl.col("score").cast(pl.Float64)
    added = [
        pl.when(raw == -1).then(None).otherwise(raw).alias("score"),
        raw.alias("score_raw"),
        pl.lit(TASK).alias("task"),
    ]
    ordered = _ordered(frame.lazy().with_columns(added), SINGLE_NAMES, SINGLE_SCHEMA)
    return _unique(ordered, SINGLE_ROW, path, what, duplicates)


def read_questions(path: Path, *, duplicates: str = "error") -> pl.LazyFrame:
    """MT-bench's ``question.jsonl`` as reference rows; ``question`` is the first turn (a
    ``question_id`` written twice: an error, or one kept, as ``duplicates`` says).

    >>> import json, tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "question.jsonl"
    >>> _ = path.write_text(json.dumps(
    ...     {"question_id": 81, "category": "writing", "turns": ["Write.", "Shorter."]}))
    >>> read_questions(path).collect().rows()
    [(81, 'Write.', 'writing', ['Write.', 'Shorter.'], 'mt_bench')]
    """
    what = "MT-bench questions (format 'mtbench_questions')"
    frame = _read(path, what, QUESTION_KEYS, QUESTION_SCHEMA, QUESTION_NAMES, QUESTION_KEPT)
    if frame is None:
        return pl.LazyFrame(schema=QUESTION_SCHEMA)
    dtype = frame.schema["turns"]
    if dtype not in (pl.List(pl.String), pl.List(pl.Null)):
        raise EvalframeError(
            f"cannot read {str(path)!r} as {what}: 'turns' is {dtype}; expected a list of "
            "the user's turns (strings)"
        )
    added = [
        pl.col("turns").cast(pl.List(pl.String)),
        pl.col("turns").cast(pl.List(pl.String)).list.first().alias("question"),
        pl.lit(TASK).alias("task"),
    ]
    ordered = _ordered(frame.lazy().with_columns(added), QUESTION_NAMES, QUESTION_SCHEMA)
    return _unique(ordered, QUESTION_ROW, path, what, duplicates)


def _unique(
    frame: pl.LazyFrame, keys: tuple[str, ...], path: Path, what: str, duplicates: str
) -> pl.LazyFrame:
    present = frame.collect_schema()
    lines = format_of(path, READ_FORMATS, "read").startswith("ndjson")
    return unique_samples(
        frame,
        [key for key in keys if key in present],
        duplicates=duplicates,
        source=str(path),
        what=what,
        locate=line_locator(path, compressed=is_gzip(path)) if lines else _record,
    )


def _record(row: int) -> str:
    return f"record {row + 1}"


# ---------------------------------------------------------------- shared


def _read(
    path: Path,
    what: str,
    keys: tuple[str, ...],
    schema: dict[str, pl.DataType],
    names: dict[str, str],
    kept: tuple[str, ...],
) -> pl.DataFrame | None:
    """The file as read exactly, its required keys checked; ``None`` when it has no records."""
    kind = format_of(path, READ_FORMATS, "read")
    if not kind.startswith(("json", "ndjson")):
        raise EvalframeError(
            f"cannot read {str(path)!r} as {what}: it is a {kind} file; FastChat writes JSON "
            "lines (.jsonl, .jsonl.gz; a JSON list .json is also read)"
        )
    compressed = kind.endswith(".gz")
    lines = kind.startswith("ndjson")
    if not _has_records(path, compressed, lines=lines):
        return None
    frame = (
        read_jsonl(path, compressed=compressed)
        if lines
        else read_json_array(path, compressed=compressed)
    )
    locate = line_locator(path, compressed=compressed) if lines else _record
    unit = "line" if lines else "record"
    expected = f"every {unit} needs the keys {', '.join(keys)}"
    for key in keys:
        if key not in frame.columns:
            raise EvalframeError(
                f"cannot read {str(path)!r} as {what}: no {unit} has key {key!r}; {expected}"
            )
        missing = frame.get_column(key).is_null()
        count = int(missing.sum())
        if count:
            first = locate(int(missing.arg_max() or 0))
            raise EvalframeError(
                f"cannot read {str(path)!r} as {what}: {count} {unit}(s) have no {key!r} (or "
                f"null), first {first}; {expected}"
            )
    taken = sorted((set(frame.columns) - set(names) - set(kept)) & set(schema))
    if taken:
        raise EvalframeError(
            f"cannot read {str(path)!r} as {what}: it already has column(s) {taken}, which "
            "the layout's own columns would replace; read it with format='table'"
        )
    return frame


def _has_records(path: Path, compressed: bool, *, lines: bool) -> bool:
    """Whether the file holds a record (JSON lines: a non-blank line; JSON: not ``[]``)."""
    with open_binary(path) as handle:
        if lines:
            return any(line.strip() for line in handle)
        head = handle.read(4096).removeprefix(b"\xef\xbb\xbf").lstrip()
    return not (head.startswith(b"[") and head[1:].lstrip().startswith(b"]"))


def _check_in(path: Path, frame: pl.DataFrame, key: str, what: str) -> None:
    column = frame.get_column(key)
    if column.dtype != pl.String:
        raise EvalframeError(
            f"cannot read {str(path)!r} as {what}: {key!r} is {column.dtype}; expected one of "
            f"{', '.join(VERDICTS)}"
        )
    wrong = ~column.is_in(list(VERDICTS))
    count = int(wrong.sum())
    if count:
        first = int(wrong.arg_max() or 0)
        raise EvalframeError(
            f"cannot read {str(path)!r} as {what}: {count} row(s) have a {key!r} FastChat does "
            f"not write, first row {first}: {short(column[first], 40)}; expected one of "
            f"{', '.join(VERDICTS)}"
        )


def _split_judge(path: Path, frame: pl.DataFrame, what: str) -> pl.DataFrame:
    """``judge`` ``[model, prompt]`` as ``judge`` (the model) and ``judge_prompt``."""
    column = frame.get_column("judge")
    if column.dtype != pl.List(pl.String):
        raise EvalframeError(
            f"cannot read {str(path)!r} as {what}: 'judge' is {column.dtype}; expected FastChat's "
            "[judge model, prompt name] pair"
        )
    wrong = column.list.len() != 2
    count = int(wrong.sum())
    if count:
        first = int(wrong.arg_max() or 0)
        raise EvalframeError(
            f"cannot read {str(path)!r} as {what}: {count} row(s) have a 'judge' that is not a "
            f"[model, prompt] pair, first row {first}: {column[first].to_list()}"
        )
    return frame.with_columns(
        pl.col("judge").list.get(0).alias("judge"),
        pl.col("judge").list.get(1).alias("judge_prompt"),
    )


def _ordered(
    frame: pl.LazyFrame, names: dict[str, str], schema: dict[str, pl.DataType]
) -> pl.LazyFrame:
    renamed = frame.rename(names, strict=False)
    columns = renamed.collect_schema().names()
    first = [name for name in schema if name in columns]
    return renamed.select(*first, *(name for name in columns if name not in schema))


#: This module's layouts, registered in the table of formats.
ADAPTERS = register(
    __name__,
    Adapter(
        name="mtbench_pair",
        harness="FastChat MT-bench",
        files="model_judgment/<judge>_pair.jsonl",
        expects="JSON lines with " + ", ".join(repr(k) for k in (*PAIR_KEYS, *PAIR_WRITTEN)),
        detect=_is_pair,
        read=read_pair,
        doc=DOC,
        rows="pairwise judgments",
        keys=PAIR_ROW,
        fields=(*PAIR_KEYS, *PAIR_WRITTEN),
    ),
    Adapter(
        name="mtbench_single",
        harness="FastChat MT-bench",
        files="model_judgment/<judge>_single.jsonl",
        expects="JSON lines with " + ", ".join(repr(k) for k in (*SINGLE_KEYS, *SINGLE_WRITTEN)),
        detect=_is_single,
        read=read_single,
        doc=DOC,
        rows="graded answers",
        keys=SINGLE_ROW,
        fields=(*SINGLE_KEYS, *SINGLE_WRITTEN),
    ),
    Adapter(
        name="mtbench_questions",
        harness="FastChat MT-bench",
        files="question.jsonl",
        expects="JSON lines with exactly 'question_id', 'category', 'turns' (a list of strings) "
        "and optionally 'reference'",
        detect=_is_questions,
        read=read_questions,
        level="reference",
        doc=DOC,
        keys=QUESTION_ROW,
        fields=(*QUESTION_KEYS, "category"),
    ),
)
