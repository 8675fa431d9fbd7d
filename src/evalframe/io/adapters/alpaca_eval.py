"""AlpacaEval's files: pairwise judge annotations and the model outputs they compare.

Two layouts, each recognised from its records' keys:

- ``alpaca_eval``: ``results/<model>/<annotator>/annotations.json``, a JSON list of one judgment
  per instruction: ``instruction, output_1, generator_1, output_2, generator_2, annotator,
  preference`` (plus ``dataset``, ``price_per_example``, ``time_per_example``, ``raw_completion``
  or others, depending on the annotator). ``output_1`` is the baseline's answer, ``output_2`` the
  evaluated model's. One row per record, in evalframe's pairwise columns (``sample_id``,
  ``question``, ``model_a``/``model_b``, ``answer_a``/``answer_b``, ``judge``, ``verdict_ab``,
  ``verdict_ba``, ``model``, ``baseline``, ``task``), ``preference`` kept as Float64, and two
  per-row win columns whose means are AlpacaEval's win rates (``harness.win_rate``,
  ``harness.discrete_win_rate``).
- ``alpaca_eval_outputs``: ``results/<model>/model_outputs.json``, a JSON list of
  ``instruction, output, generator`` (and ``dataset``, ``datasplit``): the answers without
  judgments, read as ``reference`` rows (``sample_id``, ``question``, ``prediction``, ``model``).

How the preference counts, as AlpacaEval's ``get_winrate`` (``metrics/winrate.py``) counts it with
``AbsoluteScoringRule.describe_head2head`` (``metrics/helpers.py``): a preference of 0 (AlpacaEval
1's draw) is read as 1.5; a value in [1, 2] is a judgment, ``preference - 1`` being the evaluated
model's share of the win (1 = the baseline's answer is better, 2 = the model's, 1.5 = a draw, a
float in between is the weighted annotator's probability); anything else (null, NaN, a number
outside [1, 2]) is not a judgment and AlpacaEval leaves it out of every count. ``verdict_ab`` is
``"B"`` (the model wins, AlpacaEval's ``n_wins``) when ``preference - 1 > 0.5``, ``"A"`` (the
baseline wins, ``n_wins_base``) when it is below 0.5, ``"tie"`` (``n_draws``) at exactly 0.5,
and ``"error"`` for a value that is not a judgment. AlpacaEval shows the two outputs in an order
drawn at random for each instruction and maps the verdict back to ``output_1``/``output_2``; the
files do not say which order was shown, so ``verdict_ab`` holds the one verdict (A =
``output_1``) and ``verdict_ba`` is null: no second judgment with the outputs swapped was made.

``raw_completion`` (the judge's raw answer; a nested object whose fields depend on the annotator
and the API version, absent from some files) is kept as JSON text (``json.loads`` gives the
value back), so annotation files of several annotators stack into one frame.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import polars as pl

from evalframe.errors import EvalframeError
from evalframe.io._common import json_kind, short
from evalframe.io._duplicates import unique_samples
from evalframe.io._json import read_json_array, read_jsonl
from evalframe.io._source import load_json, read_bytes
from evalframe.io.adapters._adapter import Adapter
from evalframe.io.adapters._probe import Probe
from evalframe.io.adapters.table import register
from evalframe.io.formats import READ_FORMATS, format_of

__all__ = ["ADAPTERS", "read_annotations", "read_outputs"]

DOC = "docs/harnesses/alpaca-eval.md"
TASK = "alpaca_eval"

#: Keys every record of an annotations file has.
ANNOTATION_KEYS = (
    "instruction",
    "output_1",
    "generator_1",
    "output_2",
    "generator_2",
    "annotator",
    "preference",
)
#: Keys every record of a model outputs file has, and the only others detection accepts.
OUTPUT_KEYS = ("instruction", "output", "generator")
OUTPUT_OPTIONAL = ("dataset", "datasplit")

#: Annotation keys renamed to evalframe's pairwise columns.
ANNOTATION_NAMES = {
    "instruction": "question",
    "output_1": "answer_a",
    "output_2": "answer_b",
    "generator_1": "model_a",
    "generator_2": "model_b",
    "annotator": "judge",
}
OUTPUT_NAMES = {"instruction": "question", "output": "prediction", "generator": "model"}

#: The columns an annotations file gives first, in this order (an empty file gives only these).
ANNOTATION_SCHEMA = {
    "sample_id": pl.String,
    "question": pl.String,
    "model": pl.String,
    "baseline": pl.String,
    "model_a": pl.String,
    "model_b": pl.String,
    "answer_a": pl.String,
    "answer_b": pl.String,
    "judge": pl.String,
    "preference": pl.Float64,
    "verdict_ab": pl.String,
    "verdict_ba": pl.String,
    "harness.win_rate": pl.Float64,
    "harness.discrete_win_rate": pl.Float64,
    "task": pl.String,
}
OUTPUT_SCHEMA = {
    "sample_id": pl.String,
    "question": pl.String,
    "prediction": pl.String,
    "model": pl.String,
    "task": pl.String,
}

BOM = b"\xef\xbb\xbf"


# ---------------------------------------------------------------- detection


def _is_annotations(probe: Probe) -> bool:
    record = probe.record
    if probe.top not in ("array", "lines") or record is None:
        return False
    preference = record.get("preference", "")
    return (
        all(key in record for key in ANNOTATION_KEYS)
        and all(
            isinstance(record[key], str) for key in ("instruction", "generator_1", "generator_2")
        )
        and (preference is None or _is_number(preference))
    )


def _is_outputs(probe: Probe) -> bool:
    record = probe.record
    if probe.top not in ("array", "lines") or record is None:
        return False
    keys = set(record)
    return (
        set(OUTPUT_KEYS) <= keys <= {*OUTPUT_KEYS, *OUTPUT_OPTIONAL}
        and isinstance(record["instruction"], str)
        and isinstance(record["generator"], str)
        and (record["output"] is None or isinstance(record["output"], str))
    )


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


# ---------------------------------------------------------------- annotations


#: What names one judgment: an instruction judged once per model, baseline and annotator.
ANNOTATION_KEYS_OF_ROW = ("model", "baseline", "judge", "sample_id")
#: What names one answer of a model outputs file.
OUTPUT_KEYS_OF_ROW = ("model", "sample_id")


def leaderboard_name(path: Path, annotator: object = None) -> str | None:
    """The model name AlpacaEval's leaderboard gives the results folder ``path`` is in, or
    ``None`` when the file is not in that layout.

    AlpacaEval saves a model's files as ``results/<model>/model_outputs.json`` and
    ``results/<model>/<annotator>/annotations.json``, and its leaderboard names the model by
    that folder (``evaluate(name=...)``, the folder name for the published results), not by the
    ``generator`` the outputs carry: the ``NullModel`` results hold ``generator`` =
    ``"example"``. An annotations file is in the layout when its folder is named after its
    ``annotator``; a model outputs file when a folder beside it holds an annotations file.

    >>> leaderboard_name(Path("results/NullModel/weighted_judge/annotations.json"),
    ...                  "weighted_judge")
    'NullModel'
    >>> leaderboard_name(Path("mine/annotations.json"), "weighted_judge") is None
    True
    """
    name = path.name.lower()
    if name.startswith("annotations."):
        if isinstance(annotator, str) and path.parent.name == annotator:
            return path.parent.parent.name or None
        return None
    if name.startswith("model_outputs."):
        beside = [
            folder
            for folder in path.parent.iterdir()
            if folder.is_dir() and any(folder.glob("annotations.json*"))
        ] if path.parent.is_dir() else []
        return path.parent.name if beside else None
    return None


def read_annotations(path: Path, *, duplicates: str = "error") -> pl.LazyFrame:
    """An AlpacaEval ``annotations.json`` as pairwise judgment rows.

    ``model`` (and ``model_b``) is the leaderboard's name of the evaluated model, the results
    folder (:func:`leaderboard_name`), else ``generator_2``; the file's ``generator_2`` is kept.
    An instruction judged twice for one model, baseline and annotator is an error, or one
    judgment is kept: ``duplicates`` (see :mod:`evalframe.io._duplicates`).

    >>> import json, tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "annotations.json"
    >>> record = {"instruction": "Hi?", "output_1": "Hello.", "generator_1": "base",
    ...           "output_2": "Hey!", "generator_2": "mine", "annotator": "judge-x"}
    >>> _ = path.write_text(json.dumps([
    ...     {**record, "instruction": f"Hi {i}?", "preference": p}
    ...     for i, p in enumerate([2, 1.25, 0, None])]))
    >>> read_annotations(path).select(
    ...     "model", "preference", "verdict_ab", "harness.win_rate"
    ... ).collect().rows()
    [('mine', 2.0, 'B', 1.0), ('mine', 1.25, 'A', 0.25), ('mine', 0.0, 'tie', 0.5), \
('mine', None, 'error', None)]
    """
    kind = _kind(path, "AlpacaEval annotations")
    records = _records(path, kind)
    what = "AlpacaEval annotations (format 'alpaca_eval')"
    _check_keys(path, records, ANNOTATION_KEYS, what)
    if not records:
        return pl.LazyFrame(schema=ANNOTATION_SCHEMA)
    for key in ("instruction", "generator_1", "generator_2"):
        _check_values(path, records, key, what, nulls=False)
    for key in ("output_1", "output_2", "annotator"):
        _check_values(path, records, key, what, nulls=True)
    _check_values(path, records, "preference", what, nulls=True, number=True)
    frame = _frame(path, kind)
    _check_clashes(path, frame, ANNOTATION_SCHEMA, ANNOTATION_NAMES, what, kept=("preference",))
    if "raw_completion" in frame.columns:
        texts = [_json_text(record.get("raw_completion")) for _, record in records]
        frame = frame.with_columns(pl.Series("raw_completion", texts, dtype=pl.String))
    preference = pl.col("preference").cast(pl.Float64)
    win = _win(preference)
    annotators = {record.get("annotator") for _, record in records}
    named = leaderboard_name(path, annotators.pop() if len(annotators) == 1 else None)
    model = pl.lit(named, pl.String) if named is not None else pl.col("generator_2")
    frame = frame.with_columns(pl.col("generator_2").alias("__generator_2"))
    added = [
        pl.col("instruction").alias("sample_id"),
        model.alias("model"),
        model.alias("generator_2"),
        pl.col("generator_1").alias("baseline"),
        preference.alias("preference"),
        _verdict(win).alias("verdict_ab"),
        pl.lit(None, pl.String).alias("verdict_ba"),
        win.alias("harness.win_rate"),
        _discrete_win(preference).alias("harness.discrete_win_rate"),
        pl.lit(TASK).alias("task"),
    ]
    ordered = _ordered(frame.lazy().with_columns(added), ANNOTATION_NAMES, ANNOTATION_SCHEMA)
    ordered = ordered.rename({"__generator_2": "generator_2"})
    return unique_samples(
        ordered,
        ANNOTATION_KEYS_OF_ROW,
        duplicates=duplicates,
        source=str(path),
        what="AlpacaEval annotations",
        locate=_where(records),
    )


def _where(records: list[tuple[str, dict[str, object]]]) -> Callable[[int], str]:
    return lambda row: records[row][0]


def _win(preference: pl.Expr) -> pl.Expr:
    """The evaluated model's share of the win, ``preference - 1`` with 0 read as 1.5; null for
    a value AlpacaEval's ``AbsoluteScoringRule`` leaves out (null, NaN, outside [1, 2])."""
    counted = pl.when(preference == 0).then(pl.lit(1.5)).otherwise(preference)
    judged = counted.is_not_nan() & counted.is_between(1.0, 2.0)
    return pl.when(judged).then(counted - 1.0).otherwise(None)


def _verdict(win: pl.Expr) -> pl.Expr:
    """``"B"``, ``"A"``, ``"tie"`` as AlpacaEval counts ``n_wins``, ``n_wins_base``, ``n_draws``."""
    return (
        pl.when(win.is_null())
        .then(pl.lit("error"))
        .when(win > 0.5)
        .then(pl.lit("B"))
        .when(win < 0.5)
        .then(pl.lit("A"))
        .otherwise(pl.lit("tie"))
    )


def _discrete_win(preference: pl.Expr) -> pl.Expr:
    """1, 0.5 or 0 as AlpacaEval's ``ZeroOneScoringRule`` (its ``discrete_win_rate``) counts a
    row: 1.5 is read as 0, the value rounded half to even, 0 read as 1.5, then kept in [1, 2]."""
    rounded = (
        pl.when(preference == 1.5)
        .then(pl.lit(0.0))
        .otherwise(preference)
        .round(0, mode="half_to_even")
    )
    counted = pl.when(rounded == 0).then(pl.lit(1.5)).otherwise(rounded)
    judged = counted.is_not_nan() & counted.is_between(1.0, 2.0)
    return pl.when(judged).then(counted - 1.0).otherwise(None)


def _json_text(value: object) -> str | None:
    return None if value is None else json.dumps(value, ensure_ascii=False)


# ---------------------------------------------------------------- model outputs


def read_outputs(path: Path, *, duplicates: str = "error") -> pl.LazyFrame:
    """An AlpacaEval ``model_outputs.json`` as rows of one model's answers.

    ``model`` is the leaderboard's name (the results folder, :func:`leaderboard_name`), else
    ``generator`` (kept as ``generator``). An instruction answered twice by one model is an
    error, or one answer is kept: ``duplicates``.

    >>> import json, tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "model_outputs.json"
    >>> _ = path.write_text(json.dumps([
    ...     {"instruction": "Hi?", "output": "Hey!", "generator": "mine", "dataset": "oasst"}]))
    >>> read_outputs(path).collect().rows()
    [('Hi?', 'Hi?', 'Hey!', 'mine', 'alpaca_eval', 'oasst', 'mine')]
    """
    kind = _kind(path, "AlpacaEval model outputs")
    records = _records(path, kind)
    what = "AlpacaEval model outputs (format 'alpaca_eval_outputs')"
    _check_keys(path, records, OUTPUT_KEYS, what)
    if not records:
        return pl.LazyFrame(schema=OUTPUT_SCHEMA)
    for key in ("instruction", "generator"):
        _check_values(path, records, key, what, nulls=False)
    _check_values(path, records, "output", what, nulls=True)
    frame = _frame(path, kind)
    _check_clashes(path, frame, OUTPUT_SCHEMA, OUTPUT_NAMES, what)
    named = leaderboard_name(path)
    frame = frame.with_columns(pl.col("generator").alias("__generator"))
    added = [pl.col("instruction").alias("sample_id"), pl.lit(TASK).alias("task")]
    if named is not None:
        added.append(pl.lit(named, pl.String).alias("generator"))
    ordered = _ordered(frame.lazy().with_columns(added), OUTPUT_NAMES, OUTPUT_SCHEMA)
    return unique_samples(
        ordered.rename({"__generator": "generator"}),
        OUTPUT_KEYS_OF_ROW,
        duplicates=duplicates,
        source=str(path),
        what="AlpacaEval model outputs",
        locate=_where(records),
    )


# ---------------------------------------------------------------- shared


def _kind(path: Path, what: str) -> str:
    kind = format_of(path, READ_FORMATS, "read")
    if not kind.startswith(("json", "ndjson")):
        raise EvalframeError(
            f"cannot read {str(path)!r} as {what}: it is a {kind} file; AlpacaEval writes JSON "
            "(.json, .json.gz; JSON lines .jsonl also read)"
        )
    return kind


def _records(path: Path, kind: str) -> list[tuple[str, dict[str, object]]]:
    """Every record of the file with where it is (``"record 3"``, ``"line 7"``)."""
    data = read_bytes(path)
    if kind.startswith("ndjson"):
        found = [
            (f"line {number}", _loads(line, path, f"line {number}"))
            for number, line in enumerate(data.split(b"\n"), 1)
            if line.strip()
        ]
    else:
        value = load_json(path, "AlpacaEval records", data)
        if not isinstance(value, list):
            raise EvalframeError(
                f"cannot read {str(path)!r}: it holds {json_kind(value)}; expected a JSON list "
                "of records ([{...}, {...}])"
            )
        found = [(f"record {number}", item) for number, item in enumerate(value, 1)]
    for where, record in found:
        if not isinstance(record, dict):
            raise EvalframeError(
                f"cannot read {str(path)!r}: {where} is {json_kind(record)} "
                f"({short(record, 40)}); expected an object"
            )
    return found




def _loads(data: bytes, path: Path, where: str | None) -> object:
    try:
        return json.loads(data)
    except RecursionError as error:
        raise EvalframeError(
            f"cannot read {str(path)!r}: {where} nests too deep for Python's JSON parser"
        ) from error
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        if isinstance(error, UnicodeDecodeError):
            detail = "not valid UTF-8"
        elif where is None:
            detail = f"line {error.lineno} is not valid JSON: {error.msg} (column {error.colno})"
        else:
            detail = f"{where} is not valid JSON: {error.msg} (column {error.colno})"
        raise EvalframeError(f"cannot read {str(path)!r}: {detail}") from error


def _check_keys(
    path: Path, records: list[tuple[str, dict[str, object]]], keys: tuple[str, ...], what: str
) -> None:
    for key in keys:
        lacking = [where for where, record in records if key not in record]
        if lacking:
            more = f" (and {len(lacking) - 1} more)" if len(lacking) > 1 else ""
            raise EvalframeError(
                f"cannot read {str(path)!r} as {what}: {lacking[0]}{more} has no key {key!r}; "
                f"every record needs the keys {', '.join(keys)}"
            )


def _frame(path: Path, kind: str) -> pl.DataFrame:
    compressed = kind.endswith(".gz")
    if kind.startswith("ndjson"):
        return read_jsonl(path, compressed=compressed)
    return read_json_array(path, compressed=compressed)


def _check_values(
    path: Path,
    records: list[tuple[str, dict[str, object]]],
    key: str,
    what: str,
    *,
    nulls: bool,
    number: bool = False,
) -> None:
    """Every record's ``key`` is text (``number``: a number), or null where ``nulls``."""

    def fits(value: object) -> bool:
        if value is None:
            return nulls
        return _is_number(value) if number else isinstance(value, str)

    wrong = [(where, record[key]) for where, record in records if not fits(record[key])]
    if wrong:
        where, value = wrong[0]
        expected = "a number" if number else "text"
        if nulls:
            expected += " or null"
        more = f" (and {len(wrong) - 1} more)" if len(wrong) > 1 else ""
        raise EvalframeError(
            f"cannot read {str(path)!r} as {what}: {where}{more} has {key!r} = "
            f"{short(value, 40)}; expected {expected}"
        )


def _check_clashes(
    path: Path,
    frame: pl.DataFrame,
    schema: dict[str, pl.DataType],
    names: dict[str, str],
    what: str,
    *,
    kept: tuple[str, ...] = (),
) -> None:
    taken = sorted((set(frame.columns) - set(names) - set(kept)) & set(schema))
    if taken:
        raise EvalframeError(
            f"cannot read {str(path)!r} as {what}: it already has column(s) {taken}, which "
            "the layout's own columns would replace; read it with format='table'"
        )


def _ordered(
    frame: pl.LazyFrame, names: dict[str, str], schema: dict[str, pl.DataType]
) -> pl.LazyFrame:
    renamed = frame.rename(names)
    columns = renamed.collect_schema().names()
    first = [name for name in schema if name in columns]
    return renamed.select(*first, *(name for name in columns if name not in schema))


#: This module's layouts, registered in the table of formats.
ADAPTERS = register(
    __name__,
    Adapter(
        name="alpaca_eval",
        harness="AlpacaEval",
        files="annotations.json (results/<model>/<annotator>/)",
        expects="a JSON list of records with " + ", ".join(repr(k) for k in ANNOTATION_KEYS),
        detect=_is_annotations,
        read=read_annotations,
        doc=DOC,
        rows="pairwise judgments",
        keys=ANNOTATION_KEYS_OF_ROW,
        fields=ANNOTATION_KEYS,
    ),
    Adapter(
        name="alpaca_eval_outputs",
        harness="AlpacaEval",
        files="model_outputs.json (results/<model>/)",
        expects="a JSON list of records with exactly 'instruction', 'output', 'generator' "
        "(and optionally 'dataset', 'datasplit')",
        detect=_is_outputs,
        read=read_outputs,
        level="reference",
        doc=DOC,
        keys=OUTPUT_KEYS_OF_ROW,
        fields=OUTPUT_KEYS,
    ),
)
