"""SQuAD's official formats: dataset files (v1.1, v2.0) and ``{question_id: answer}`` predictions.

Three layouts, each recognised from its content:

- ``squad``: the official nested dataset JSON (``{"version", "data": [{"title", "paragraphs":
  [{"context", "qas": [{"id", "question", "answers": [{"text", "answer_start"}],
  "is_impossible"}]}]}]}``). One row per question: ``id``, ``title``, ``question``, ``context``,
  ``gold`` (every answer text, duplicates and order kept; ``[]`` for a v2.0 unanswerable
  question, which the SQuAD metrics score against the single gold ``""``), ``answer_starts``,
  ``is_impossible`` (v2.0; ``False`` in v1.1 files) and ``plausible_answers`` (v2.0).
- ``squad_answers``: a flat table of questions with an ``answers`` list (JSON lines or a JSON
  list with ``id``, ``question`` and ``answers``, each answer a string or ``{"text": ...}``). Every
  column is kept; ``gold`` is added as the list of answer texts.
- ``squad_predictions``: the leaderboard predictions file, one JSON object mapping each question
  id to its predicted answer (``""`` is SQuAD 2.0's "no answer"). One row per id: ``id``,
  ``prediction``, and ``model``, the file's name without its extension (so a folder of
  leaderboard files stacks into one frame). A null answer is a missing prediction.

Predictions and dataset are put together with ``ef.score(predictions, metrics, gold=dataset,
on="id")``: a question without a prediction is a missing answer (counted as wrong by
``aggregate``, as the official v1.1 script scores it 0), a prediction for an id the dataset does
not hold is reported.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import polars as pl

from evalframe.errors import EvalframeError
from evalframe.io._duplicates import unique_samples
from evalframe.io._source import load_json, read_bytes
from evalframe.io.adapters._adapter import Adapter
from evalframe.io.adapters._probe import Probe
from evalframe.io.adapters.table import register

__all__ = ["ADAPTERS", "read_dataset", "read_predictions"]

_QUESTION_SCHEMA = {
    "id": pl.String,
    "title": pl.String,
    "question": pl.String,
    "context": pl.String,
    "gold": pl.List(pl.String),
    "answer_starts": pl.List(pl.Int64),
    "is_impossible": pl.Boolean,
    "plausible_answers": pl.List(pl.String),
}


def _is_dataset(probe: Probe) -> bool:
    if probe.top != "object" or not probe.has("data"):
        return False
    value = probe.value
    data = value.get("data") if isinstance(value, dict) else None
    if not isinstance(data, list) or not data:
        return False
    first = data[0]
    return isinstance(first, dict) and "paragraphs" in first and isinstance(
        first["paragraphs"], list
    )


def read_dataset(path: Path, *, duplicates: str = "error") -> pl.LazyFrame:
    """One row per question of an official SQuAD dataset file (a question id written twice:
    an error, or one kept, as ``duplicates`` says).

    >>> import json, tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "dev.json"
    >>> q1 = {"id": "q1", "question": "Where?", "answers": [{"text": "Paris", "answer_start": 0}]}
    >>> q2 = {"id": "q2", "question": "Why?", "answers": [], "is_impossible": True,
    ...       "plausible_answers": [{"text": "big", "answer_start": 9}]}
    >>> article = {"title": "T", "paragraphs": [{"context": "Paris is big.", "qas": [q1, q2]}]}
    >>> _ = path.write_text(json.dumps({"version": "v2.0", "data": [article]}))
    >>> read_dataset(path).select("id", "gold", "is_impossible").collect().rows()
    [('q1', ['Paris'], False), ('q2', [], True)]
    """
    value = Probe(path, _kind(path)).value
    rows: list[tuple[object, ...]] = []
    places: list[str] = []
    for a, article in enumerate(_list(value, "data", path, "the file")):
        title = article.get("title")
        for p, paragraph in enumerate(_list(article, "paragraphs", path, f"data[{a}]")):
            context = paragraph.get("context")
            for q, qa in enumerate(_list(paragraph, "qas", path, f"data[{a}].paragraphs[{p}]")):
                where = f"data[{a}].paragraphs[{p}].qas[{q}]"
                if not isinstance(qa, dict) or "id" not in qa:
                    raise EvalframeError(
                        f"cannot read {str(path)!r} as a SQuAD dataset: {where} has no 'id'"
                    )
                answers = _answers(qa.get("answers", []), path, where)
                plausible = _answers(qa.get("plausible_answers", []), path, where)
                places.append(where)
                rows.append(
                    (
                        str(qa["id"]),
                        title,
                        qa.get("question"),
                        context,
                        [text for text, _ in answers],
                        [start for _, start in answers],
                        bool(qa.get("is_impossible", False)),
                        [text for text, _ in plausible],
                    )
                )
    return unique_samples(
        pl.DataFrame(rows, schema=_QUESTION_SCHEMA, orient="row"),
        ("id",),
        duplicates=duplicates,
        source=str(path),
        what="a SQuAD dataset",
        locate=places.__getitem__,
    )


def _list(container: object, key: str, path: Path, where: str) -> list[dict]:
    items = container.get(key) if isinstance(container, dict) else None
    if not isinstance(items, list):
        raise EvalframeError(
            f"cannot read {str(path)!r} as a SQuAD dataset: {where} has no list {key!r}"
        )
    return items


def _answers(items: object, path: Path, where: str) -> list[tuple[str, int | None]]:
    if not isinstance(items, list):
        raise EvalframeError(
            f"cannot read {str(path)!r} as a SQuAD dataset: {where} answers must be a list"
        )
    found = []
    for item in items:
        if isinstance(item, dict) and isinstance(item.get("text"), str):
            start = item.get("answer_start")
            found.append((item["text"], start if isinstance(start, int) else None))
        elif isinstance(item, str):
            found.append((item, None))
        else:
            raise EvalframeError(
                f"cannot read {str(path)!r} as a SQuAD dataset: {where} holds an answer "
                f"{item!r}; expected {{'text': ..., 'answer_start': ...}} or a string"
            )
    return found


def _is_predictions(probe: Probe) -> bool:
    """A mapping of ids to answer strings that is not one record of another layout.

    SQuAD's predictions map question ids (24 hex digits in SQuAD itself) to strings; one
    record of a JSON layout written alone (``{"instruction": ..., "output": ...,
    "generator": ...}``) maps field names to strings too. A mapping holding any field name
    of another layout is that layout's record, never predictions.
    """
    if probe.top != "object":
        return False
    value = probe.value
    return (
        isinstance(value, dict)
        and len(value) > 0
        and all(isinstance(answer, str) or answer is None for answer in value.values())
        and not set(value) & _record_fields()
    )


def _record_fields() -> set[str]:
    from evalframe.io.adapters.table import adapters

    return {
        field
        for adapter in adapters()
        if adapter.name != "squad_predictions"
        for field in adapter.fields
    }


class _Pairs(list):
    """A JSON object's (key, value) pairs in order, a repeated key kept."""


def read_predictions(path: Path, *, duplicates: str = "error") -> pl.LazyFrame:
    """The ``{question_id: answer}`` predictions file as rows ``id``, ``prediction``.

    An id the object holds twice (JSON keeps the last silently) is an error naming both
    lines, or one answer is kept: ``duplicates`` (see :mod:`evalframe.io._duplicates`).

    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "pred.json"
    >>> _ = path.write_text('{"q1": "Paris", "q2": "", "q3": null}')
    >>> read_predictions(path).collect().rows()
    [('q1', 'Paris', 'pred'), ('q2', '', 'pred'), ('q3', None, 'pred')]
    """
    data = read_bytes(path)
    value = load_json(path, "SQuAD predictions", data, object_pairs_hook=_Pairs)
    if not isinstance(value, _Pairs):
        raise EvalframeError(
            f"cannot read {str(path)!r} as SQuAD predictions: it holds "
            f"{'a list' if isinstance(value, list) else type(value).__name__}; expected one "
            "JSON object mapping question ids to answers"
        )
    wrong = [(key, answer) for key, answer in value if not isinstance(answer, str | None)]
    if wrong:
        key, answer = wrong[0]
        shown = dict(answer) if isinstance(answer, _Pairs) else answer
        raise EvalframeError(
            f"cannot read {str(path)!r} as SQuAD predictions: {len(wrong)} id(s) map to a "
            f"value that is not a string, first {key!r} -> {shown!r}; expected an answer string"
        )
    model = path.name.split(".")[0]
    frame = pl.DataFrame(
        {
            "id": [key for key, _ in value],
            "prediction": [answer for _, answer in value],
            "model": [model] * len(value),
        },
        schema={"id": pl.String, "prediction": pl.String, "model": pl.String},
    )
    return unique_samples(
        frame,
        ("id",),
        duplicates=duplicates,
        source=str(path),
        what="SQuAD predictions",
        locate=_key_lines(data),
    )


def _key_lines(data: bytes) -> Callable[[int], str]:
    """Names the ``row``-th key of the JSON object ``data`` holds by its line (computed on
    first use: only a message needs it).

    >>> _key_lines(b'{"a": "x",\\n "a": "y"}')(1)
    'line 2'
    """
    found: list[int] = []

    def locate(row: int) -> str:
        if not found:
            found.extend(_object_key_lines(data.decode("utf-8")))
        return f"line {found[row]}" if row < len(found) else f"key {row + 1}"

    return locate


def _object_key_lines(text: str) -> list[int]:
    """The line of each key of the top-level JSON object in ``text``, in order."""
    decoder = json.JSONDecoder()
    lines: list[int] = []
    index = text.index("{") + 1
    while True:
        index = len(text) - len(text[index:].lstrip())
        if text[index] != '"':
            return lines
        lines.append(text.count("\n", 0, index) + 1)
        _, index = json.decoder.scanstring(text, index + 1)  # type: ignore[attr-defined]
        index = text.index(":", index) + 1
        index = len(text) - len(text[index:].lstrip())
        _, index = decoder.raw_decode(text, index)
        index = len(text) - len(text[index:].lstrip())
        if text[index] != ",":
            return lines
        index += 1


def _is_answers_table(probe: Probe) -> bool:
    record = probe.record
    if probe.top not in ("lines", "array") or record is None:
        return False
    answers = record.get("answers")
    return (
        "id" in record
        and "question" in record
        and "gold" not in record
        and isinstance(answers, list)
        and all(isinstance(a, str) or (isinstance(a, dict) and "text" in a) for a in answers)
    )


def read_answers_table(path: Path, *, duplicates: str = "error") -> pl.LazyFrame:
    """A flat questions table with ``answers``; ``gold`` is added as the list of answer texts.

    Every record needs ``id``, ``question`` and ``answers``; an id written twice is an error,
    or one record is kept: ``duplicates`` (see :mod:`evalframe.io._duplicates`).

    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "dev.jsonl"
    >>> _ = path.write_text('{"id": "q1", "question": "Q?", "answers": ["a", "a"]}\\n')
    >>> read_answers_table(path).collect().rows()
    [('q1', 'Q?', ['a', 'a'], ['a', 'a'])]
    """
    from evalframe.io._json import line_locator, read_json_array, read_jsonl

    kind = _kind(path)
    compressed = kind.endswith(".gz")
    if kind.startswith("ndjson"):
        frame = read_jsonl(path, compressed=compressed)
        locate = line_locator(path, compressed=compressed)
    else:
        frame = read_json_array(path, compressed=compressed)
        locate = _record_number
    for key in ANSWER_KEYS:
        absent = frame.get_column(key).is_null() if key in frame.columns else None
        if absent is None or absent.any():
            first = "every record" if absent is None else locate(int(absent.arg_max() or 0))
            raise EvalframeError(
                f"cannot read {str(path)!r} as a SQuAD answers table: {first} has no {key!r} "
                f"(or null); every record needs {', '.join(map(repr, ANSWER_KEYS))}"
            )
    answers = frame.schema.get("answers")
    if answers == pl.List(pl.String):
        gold = pl.col("answers")
    elif isinstance(answers, pl.List) and isinstance(answers.inner, pl.Struct):
        gold = pl.col("answers").list.eval(pl.element().struct.field("text"))
    elif answers == pl.List(pl.Null):
        gold = pl.col("answers").cast(pl.List(pl.String))
    else:
        raise EvalframeError(
            f"cannot read {str(path)!r} as a SQuAD answers table: column 'answers' is "
            f"{answers}; expected a list of strings or of {{'text': ...}} records"
        )
    return unique_samples(
        frame.lazy().with_columns(gold.cast(pl.List(pl.String)).alias("gold")),
        ("id",),
        duplicates=duplicates,
        source=str(path),
        what="a SQuAD answers table",
        locate=locate,
    )


#: Keys every record of an answers table holds.
ANSWER_KEYS = ("id", "question", "answers")


def _record_number(row: int) -> str:
    return f"record {row + 1}"


def _kind(path: Path) -> str:
    from evalframe.io.formats import READ_FORMATS, format_of

    return format_of(path, READ_FORMATS, "read")


#: This module's layouts, registered in the table of formats.
ADAPTERS = register(
    __name__,
    Adapter(
        name="squad",
        harness="SQuAD",
        files="official dataset JSON (dev-v1.1.json, dev-v2.0.json)",
        expects="one JSON object with 'data': [{'title', 'paragraphs': [{'context', 'qas'}]}]",
        detect=_is_dataset,
        read=read_dataset,
        level="reference",
        doc="docs/harnesses/squad.md",
        keys=("id",),
        fields=("version", "data"),
    ),
    Adapter(
        name="squad_answers",
        harness="SQuAD",
        files="flat questions table (.jsonl/.json) with an answers list",
        expects="records with 'id', 'question' and 'answers' (strings or {'text': ...})",
        detect=_is_answers_table,
        read=read_answers_table,
        level="reference",
        doc="docs/harnesses/squad.md",
        keys=("id",),
        fields=ANSWER_KEYS,
    ),
    Adapter(
        name="squad_predictions",
        harness="SQuAD",
        files="predictions JSON {question_id: answer}",
        expects="one JSON object mapping every id to an answer string",
        detect=_is_predictions,
        read=read_predictions,
        doc="docs/harnesses/squad.md",
        keys=("id",),
    ),
)
