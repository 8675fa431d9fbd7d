"""Inspect AI eval logs (``.eval`` archives and ``.json`` logs): one row per sample x epoch.

Logs are read by Inspect's own reader, :func:`inspect_ai.log.read_eval_log` (the layout is
versioned by Inspect, not a frozen public format), imported only when a log is read; without
it, reading says to ``pip install "evalframe[inspect]"``. See ``docs/harnesses/inspect.md``.

Columns, per sample and epoch (``sample.*`` is Inspect's ``EvalSample``):

- ``task``, ``model`` (``eval.task``, ``eval.model``), ``eval_id``, ``log_status``
  (``success``, ``error``, ``cancelled``, ``started``), ``sample_id`` (as text), ``epoch``.
- ``input``: the text Inspect calls ``input_text`` (the input itself, or the last user
  message of a chat input); ``input_messages``: a chat input as JSON text (null for text).
- ``gold``: ``sample.target`` (``list[str]`` in every row when one target is a list);
  ``prediction``: ``output.completion`` (null when the sample produced no output, e.g. an
  error); ``choices``; ``gold_index``: the choice(s) a multiple-choice target names, read as
  Inspect's ``choice()`` scorer reads it (``"A"`` is 0, ``"AC"`` / ``["A", "C"]`` is
  ``[0, 2]``; null when the target is not letters of the choices). ``gold`` without rows and
  ``gold_index`` without any value are Null columns, which stack with either dtype.
- per scorer ``s``: ``harness.s`` (Float64: the value as Inspect's ``value_to_float()``
  converts it; see :func:`score_to_float`), ``harness.s:missing`` (all false: a null score
  is a sample Inspect left unscored, not a missing answer; see :mod:`evalframe.scored`) and,
  as text, ``scores.s.value`` (the raw value;
  JSON for a non-string), ``scores.s.answer``, ``scores.s.explanation``, ``scores.s.reason``,
  ``scores.s.metadata`` (JSON).
- ``metadata.<key>`` for each key of ``sample.metadata`` (see :func:`metadata_columns`).
- ``usage.input_tokens``, ``usage.output_tokens``, ``usage.total_tokens`` (and the cache,
  reasoning and cost fields some provider gave), summed over the models the sample called;
  ``model_usage``: the per-model usage as JSON.
- ``error``, ``error_traceback``: why a sample failed (null when it did not); such a row is
  kept, its scores null, as Inspect leaves it out of its metrics.
- ``messages`` (the conversation, JSON), ``stop_reason``, ``sample_uuid``, ``started_at``,
  ``completed_at``, ``total_time``, ``working_time``.

A log written with ``log_samples=False`` (results, no samples) is an error, not 0 rows.
Not carried: a sample's ``events``, ``store``, ``attachments`` (resolved into the messages),
sandbox set-up and timelines; read the log with Inspect for those.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import polars as pl

from evalframe.errors import EvalframeError
from evalframe.io._duplicates import unique_samples
from evalframe.io.adapters._adapter import Adapter
from evalframe.io.adapters._probe import Probe
from evalframe.io.adapters.table import register
from evalframe.scored import missing_column

__all__ = [
    "ADAPTERS",
    "detect",
    "log_frame",
    "metadata_columns",
    "read",
    "score_to_float",
    "target_indexes",
]

INSTALL = 'pip install "evalframe[inspect]"'

#: What a log's ``status`` can be.
STATUSES = ("started", "success", "cancelled", "error")

#: Keys every ``eval`` spec of a log holds.
EVAL_KEYS = ("task", "model", "dataset", "config")

#: Fields of Inspect's ``ModelUsage``, in its order.
USAGE_FIELDS = (
    "input_tokens",
    "output_tokens",
    "total_tokens",
    "input_tokens_cache_write",
    "input_tokens_cache_read",
    "reasoning_tokens",
    "total_cost",
)
#: Usage columns written even when no sample has them.
USAGE_ALWAYS = USAGE_FIELDS[:3]

#: Score fields kept as text besides the value.
SCORE_TEXT = ("answer", "explanation", "reason")

#: Sample fields a frame never needs (skipped when an ``.eval`` archive is read).
EXCLUDED = {"events", "timelines", "store", "events_data"}

#: Inspect's letters of a score, as ``value_to_float()`` converts them.
LETTERS = {"C": 1.0, "P": 0.5, "I": 0.0, "N": 0.0}

#: The largest integer a float holds exactly.
EXACT_INT = 2**53


def detect(probe: Probe) -> bool:
    """Whether ``probe``'s file is an Inspect log written as JSON: one object whose
    ``version`` is an integer, ``status`` a log status and ``eval`` an eval spec.

    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "log.json"
    >>> _ = path.write_text('{"version": 2, "status": "success", "eval": {"task": "t", '
    ...                     '"model": "m", "dataset": {}, "config": {}}, "samples": []}')
    >>> detect(Probe(path, "json"))
    True
    >>> _ = path.write_text('{"version": 2, "status": "success", "eval": "t"}')
    >>> detect(Probe(path, "json"))
    False
    """
    if probe.top != "object":
        return False
    record = probe.record
    if record is None or not {"version", "status", "eval"} <= record.keys():
        return False
    version, status, spec = record["version"], record["status"], record["eval"]
    return (
        isinstance(version, int)
        and not isinstance(version, bool)
        and status in STATUSES
        and isinstance(spec, dict)
        and all(key in spec for key in EVAL_KEYS)
        and isinstance(record.get("samples", []), list)
    )


#: What names one row: Inspect runs each sample once per epoch.
KEYS = ("task", "model", "sample_id", "epoch")


def read(path: Path, *, duplicates: str = "error") -> pl.LazyFrame:
    """The samples of the Inspect log at ``path``, one row per sample and epoch.

    A sample and epoch the log holds twice is an error, or one is kept: ``duplicates`` (see
    :mod:`evalframe.io._duplicates`).

    Examples
    --------
    A log of the repository's tests (two epochs of a multiple-choice task):

    >>> import evalframe
    >>> root = Path(evalframe.__file__).parents[2]
    >>> frame = read(root / "tests/fixtures/harness/inspect/mc.eval").collect()
    >>> frame.select("sample_id", "epoch", "prediction", "gold_index", "harness.choice").head(3)
    shape: (3, 5)
    ┌───────────┬───────┬────────────┬────────────┬────────────────┐
    │ sample_id ┆ epoch ┆ prediction ┆ gold_index ┆ harness.choice │
    │ ---       ┆ ---   ┆ ---        ┆ ---        ┆ ---            │
    │ str       ┆ i64   ┆ str        ┆ list[i64]  ┆ f64            │
    ╞═══════════╪═══════╪════════════╪════════════╪════════════════╡
    │ q1        ┆ 1     ┆ ANSWER: A  ┆ [0]        ┆ 1.0            │
    │ q2        ┆ 1     ┆ ANSWER: B  ┆ [1]        ┆ 1.0            │
    │ q3        ┆ 1     ┆ ANSWER: A  ┆ [1]        ┆ 0.0            │
    └───────────┴───────┴────────────┴────────────┴────────────────┘
    """
    read_eval_log = _reader(path)
    path = Path(path)
    log_format = "eval" if path.name.lower().endswith(".eval") else "json"
    try:
        log = read_eval_log(
            str(path), resolve_attachments=True, format=log_format, exclude_fields=EXCLUDED
        )
    except Exception as error:
        text = str(error).strip().splitlines()
        raise EvalframeError(
            f"cannot read {str(path)!r} as an Inspect AI {log_format} log with "
            f"inspect_ai.log.read_eval_log: {type(error).__name__}: {text[0] if text else ''}"
        ) from error
    completed = log.results.completed_samples if log.results is not None else 0
    if not log.samples and completed:
        raise EvalframeError(
            f"cannot read {str(path)!r} as Inspect AI samples: the log holds {completed} "
            "completed sample(s) in its results but no samples (written with "
            "log_samples=False?); only its aggregate scores are there"
        )
    return unique_samples(
        log_frame(log),
        KEYS,
        duplicates=duplicates,
        source=str(path),
        what="Inspect AI samples",
        locate=lambda row: f"sample {row + 1} of the log",
    )


def _reader(path: Path) -> Callable[..., Any]:
    try:
        from inspect_ai.log import read_eval_log
    except ImportError as error:
        raise EvalframeError(
            f"cannot read {str(path)!r}: Inspect AI logs are read with the inspect_ai package, "
            f"which is not installed ({error}); install it with: {INSTALL}"
        ) from error
    return read_eval_log


def log_frame(log: Any) -> pl.DataFrame:
    """The frame of an ``inspect_ai.log.EvalLog`` read by the caller (see the module
    docstring for its columns; read it with ``resolve_attachments=True``, as :func:`read`
    does, for message text instead of ``attachment://`` references).

    >>> import evalframe
    >>> from inspect_ai.log import read_eval_log
    >>> root = Path(evalframe.__file__).parents[2]
    >>> log = read_eval_log(str(root / "tests/fixtures/harness/inspect/gen.eval"))
    >>> frame = log_frame(log)
    >>> frame.height, frame["epoch"].unique().sort().to_list()
    (8, [1, 2])
    >>> [name for name in frame.columns if name.startswith("harness.") and ":" not in name]
    ['harness.match', 'harness.includes', 'harness.graded', 'harness.answer_length']
    """
    samples = list(log.samples or [])
    n = len(samples)
    columns: dict[str, pl.Series] = {}

    def put(name: str, values: Sequence[object], dtype: pl.DataType) -> None:
        columns[name] = pl.Series(name, values, dtype=dtype, strict=True)

    put("task", [log.eval.task] * n, pl.String)
    put("model", [log.eval.model] * n, pl.String)
    put("eval_id", [log.eval.eval_id] * n, pl.String)
    put("log_status", [log.status] * n, pl.String)
    columns["sample_id"] = _ids([sample.id for sample in samples])
    put("epoch", [sample.epoch for sample in samples], pl.Int64)
    put("input", [_input_text(sample.input) for sample in samples], pl.String)
    put(
        "input_messages",
        [None if isinstance(s.input, str) else _json_of(s.input) for s in samples],
        pl.String,
    )
    columns["gold"] = _gold([sample.target for sample in samples])
    put("prediction", [_completion(sample) for sample in samples], pl.String)
    put("choices", [sample.choices for sample in samples], pl.List(pl.String))
    columns["gold_index"] = _gold_indexes(samples)
    for name in _scorers(log, samples):
        columns.update(_score_columns(name, [(s.scores or {}).get(name) for s in samples]))
    columns.update(metadata_columns([sample.metadata for sample in samples]))
    columns.update(_usage_columns([sample.model_usage for sample in samples]))
    errors = [sample.error for sample in samples]
    put("error", [e.message if e is not None else None for e in errors], pl.String)
    put("error_traceback", [e.traceback if e is not None else None for e in errors], pl.String)
    put("messages", [_json_of(sample.messages) for sample in samples], pl.String)
    put("stop_reason", [_stop_reason(sample) for sample in samples], pl.String)
    put("sample_uuid", [sample.uuid for sample in samples], pl.String)
    for name in ("started_at", "completed_at"):
        put(name, [_text(getattr(sample, name, None)) for sample in samples], pl.String)
    for name in ("total_time", "working_time"):
        put(name, [getattr(sample, name, None) for sample in samples], pl.Float64)
    return pl.DataFrame([series.alias(name) for name, series in columns.items()])


# -- keys, input, target, output ----------------------------------------------------------------


def _ids(ids: list[int | str]) -> pl.Series:
    """Sample ids as text (Inspect's ids are integers or text; an integer as its digits),
    so that logs of different tasks stack."""
    return pl.Series("sample_id", [str(i) for i in ids], dtype=pl.String)


def _input_text(value: object) -> str | None:
    """Inspect's ``TaskState.input_text``: the input, or the last user message's text
    (a placeholder such as ``[image]`` for a message without text); null without one."""
    if isinstance(value, str):
        return value
    user = next((m for m in reversed(list(value or [])) if m.role == "user"), None)
    if user is None:
        return None
    if user.text or isinstance(user.content, str):
        return user.text
    return " ".join(f"[{part.type}]" for part in user.content if part.type != "text")


def _gold(targets: list[str | list[str]]) -> pl.Series:
    """Targets: text, or ``list[str]`` for every row when any target is a list (Null
    without rows, so that an empty log stacks with either)."""
    if not targets:
        return pl.Series("gold", [], dtype=pl.Null)
    if all(isinstance(target, str) for target in targets):
        return pl.Series("gold", targets, dtype=pl.String)
    lists = [[target] if isinstance(target, str) else list(target) for target in targets]
    return pl.Series("gold", lists, dtype=pl.List(pl.String))


def _completion(sample: Any) -> str | None:
    output = sample.output
    return output.completion if output is not None and output.choices else None


def _stop_reason(sample: Any) -> str | None:
    output = sample.output
    return output.stop_reason if output is not None and output.choices else None


def _answer_index(token: str) -> int | None:
    """Inspect's ``answer_index``: ``"A"`` -> 0 ... ``"Z"`` -> 25, ``"1"`` -> 26 ...;
    ``None`` for anything else."""
    if len(token) == 1 and token.isalpha():
        return ord(token.upper()) - ord("A")
    if token.isnumeric() and int(token) > 0:
        return 25 + int(token)
    return None


def target_indexes(target: str | list[str], n_choices: int) -> list[int] | None:
    """The choices ``target`` names, as Inspect's ``choice()`` scorer reads a target:
    each value split at commas and spaces, a number kept whole, letters one by one.
    ``None`` when a part is neither, names no choice, or there is none.

    >>> target_indexes("A", 4), target_indexes(["A", "C"], 4), target_indexes("B, D", 4)
    ([0], [0, 2], [1, 3])
    >>> target_indexes("Paris", 4) is None
    True
    """
    answers: list[str] = []
    for value in [target] if isinstance(target, str) else target:
        for token in value.replace(",", " ").split():
            answers.extend([token] if token.isnumeric() else list(token))
    indexes = [_answer_index(answer) for answer in answers]
    if not indexes or any(index is None or index >= n_choices for index in indexes):
        return None
    return [index for index in indexes if index is not None]


def _gold_indexes(samples: list[Any]) -> pl.Series:
    """``gold_index``: Int64 when every multiple-choice target names one choice, else
    ``list[int]``; null for a sample without choices or a target that names none (a Null
    column when no sample has one, so that it stacks with either)."""
    found = [
        target_indexes(sample.target, len(sample.choices)) if sample.choices else None
        for sample in samples
    ]
    if all(indexes is None for indexes in found):
        return pl.Series("gold_index", [None] * len(found), dtype=pl.Null)
    if all(indexes is None or len(indexes) == 1 for indexes in found):
        single = [indexes[0] if indexes is not None else None for indexes in found]
        return pl.Series("gold_index", single, dtype=pl.Int64)
    return pl.Series("gold_index", found, dtype=pl.List(pl.Int64))


# -- scores ---------------------------------------------------------------------------------


def _scorers(log: Any, samples: list[Any]) -> list[str]:
    """Scorer names: those the samples hold, in order, then any the eval declares."""
    names: dict[str, None] = {}
    for sample in samples:
        names.update(dict.fromkeys(sample.scores or {}))
    names.update(dict.fromkeys(scorer.name for scorer in (log.eval.scorers or [])))
    return list(names)


def score_to_float(value: object) -> float | None:
    """A score value as Inspect's default ``value_to_float()`` converts it.

    ``"C"`` is 1, ``"P"`` 0.5, ``"I"`` and ``"N"`` 0 (compared with ``==``, so ``True`` is
    1 and ``False`` 0 too); other numbers as floats; text ``yes``/``true`` is 1 and
    ``no``/``false`` 0 (any case), text of a finite number that number. Two differences,
    both null here: NaN, Inspect's unscored sentinel, which its metrics leave out; and a
    value Inspect cannot convert (a list, a dict, other text), which it counts as 0 with a
    logged warning.

    >>> [score_to_float(v) for v in ["C", "P", "I", "N", True, 3, "Yes", "2.5", "nan", [1]]]
    [1.0, 0.5, 0.0, 0.0, 1.0, 3.0, 1.0, 2.5, None, None]
    """
    if isinstance(value, str) and value in LETTERS:
        return LETTERS[value]
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, int | float):
        number = float(value)
        return None if math.isnan(number) else number
    if isinstance(value, str):
        lowered = value.lower()
        if lowered in ("yes", "true"):
            return 1.0
        if lowered in ("no", "false"):
            return 0.0
        try:
            number = float(lowered)
        except ValueError:
            return None
        return number if math.isfinite(number) else None
    return None


def _score_columns(name: str, scores: list[Any]) -> dict[str, pl.Series]:
    """``harness.<name>`` and the ``scores.<name>.*`` text columns of one scorer (null
    where a sample has no score of it)."""

    def column(get: Callable[[Any], object], dtype: pl.DataType) -> pl.Series:
        return pl.Series([get(s) if s is not None else None for s in scores], dtype=dtype)

    columns = {
        f"harness.{name}": column(lambda s: score_to_float(s.value), pl.Float64),
        # a null score is a sample Inspect left unscored (an error), not a missing answer:
        # aggregate leaves it out and counts it in n_null, as Inspect's metrics do
        missing_column(f"harness.{name}"): pl.Series([False] * len(scores), dtype=pl.Boolean),
        f"scores.{name}.value": column(lambda s: _raw(s.value), pl.String),
    }
    for field in SCORE_TEXT:
        columns[f"scores.{name}.{field}"] = column(
            lambda s, field=field: _text(getattr(s, field, None)), pl.String
        )
    columns[f"scores.{name}.metadata"] = column(
        lambda s: _json_of(s.metadata) if s.metadata else None, pl.String
    )
    return columns


def _raw(value: object) -> str:
    """A score value as text: a string as is, anything else as JSON (``NaN`` for NaN)."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


# -- metadata and usage -------------------------------------------------------------------


def metadata_columns(metadata: list[dict[str, Any] | None]) -> dict[str, pl.Series]:
    """One ``metadata.<key>`` column per key of the samples' metadata, in first-seen order.

    A key whose values are all text is String, all booleans Boolean, all integers Int64,
    numbers (floats, or integers a float holds exactly) Float64; a key with lists, objects
    or values of several kinds is JSON text. A sample without the key, or with null, is null.

    >>> frame = pl.DataFrame(metadata_columns([{"a": 1, "b": [1]}, {"a": 2, "c": "x"}]))
    >>> frame.columns, frame.dtypes
    (['metadata.a', 'metadata.b', 'metadata.c'], [Int64, String, String])
    >>> frame["metadata.b"].to_list()
    ['[1]', None]
    """
    keys: dict[str, None] = {}
    for item in metadata:
        keys.update(dict.fromkeys(item or {}))
    columns = {}
    for key in keys:
        values = [(item or {}).get(key) for item in metadata]
        columns[f"metadata.{key}"] = _typed(f"metadata.{key}", values)
    return columns


def _typed(name: str, values: list[object]) -> pl.Series:
    """One metadata key's values as a typed column, or as JSON text (see above)."""
    kinds = {type(value) for value in values if value is not None}
    integers = [value for value in values if type(value) is int]
    if kinds == {str}:
        return pl.Series(name, values, dtype=pl.String)
    if kinds == {bool}:
        return pl.Series(name, values, dtype=pl.Boolean)
    if kinds == {int} and all(-(2**63) <= value < 2**63 for value in integers):
        return pl.Series(name, values, dtype=pl.Int64)
    if kinds == {int, float} and all(abs(value) <= EXACT_INT for value in integers):
        numbers = [float(value) if value is not None else None for value in values]
        return pl.Series(name, numbers, dtype=pl.Float64)
    if kinds == {float}:
        return pl.Series(name, values, dtype=pl.Float64)
    return pl.Series(name, [None if v is None else _json_of(v) for v in values], pl.String)


def _usage_columns(usages: list[dict[str, Any]]) -> dict[str, pl.Series]:
    """``usage.<field>``: each ``ModelUsage`` field summed over a sample's models (null when
    the sample has no usage, or no model gave the field), and ``model_usage`` as JSON."""
    sums: dict[str, list[float | int | None]] = {field: [] for field in USAGE_FIELDS}
    for usage in usages:
        models = list((usage or {}).values())
        for field in USAGE_FIELDS:
            given = [getattr(m, field) for m in models if getattr(m, field, None) is not None]
            sums[field].append(sum(given) if given else None)
    columns = {}
    for field in USAGE_FIELDS:
        if field in USAGE_ALWAYS or any(value is not None for value in sums[field]):
            dtype = pl.Float64 if field == "total_cost" else pl.Int64
            columns[f"usage.{field}"] = pl.Series(sums[field], dtype=dtype)
    columns["model_usage"] = pl.Series(
        [_json_of(usage) if usage else None for usage in usages], dtype=pl.String
    )
    return columns


# -- text -------------------------------------------------------------------------------------


def _plain(value: object) -> object:
    """``value`` with Inspect's models dumped to JSON-able values (nulls left out)."""
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json", exclude_none=True)  # type: ignore[union-attr]
    if isinstance(value, dict):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    return value


def _json_of(value: object) -> str:
    return json.dumps(_plain(value), ensure_ascii=False)


def _text(value: object) -> str | None:
    if value is None or isinstance(value, str):
        return value
    return str(value)


#: This module's layouts, registered in the table of formats.
ADAPTERS = register(
    __name__,
    Adapter(
        name="inspect",
        harness="Inspect AI",
        files="<date>_<task>_<id>.eval or .json (inspect eval --log-format json)",
        expects=(
            "an .eval log archive, or a JSON object with Inspect's keys 'version' (int), "
            f"'status' ({'/'.join(STATUSES)}) and 'eval' (holding {', '.join(EVAL_KEYS)})"
        ),
        detect=detect,
        read=read,
        level="samples",
        extensions=(".eval",),
        doc="docs/harnesses/inspect.md",
        keys=KEYS,
        fields=("version", "status", "eval"),
    ),
)
