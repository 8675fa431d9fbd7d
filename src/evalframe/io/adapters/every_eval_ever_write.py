"""Write scored rows and aggregate tables as Every Eval Ever records (schema 0.3.0).

``ef.save(frame, path, format="every_eval_ever", metadata={...})`` calls :func:`write`, which
tells the two kinds of table apart by their columns: a table with every one of ``metric``,
``value``, ``stderr``, ``ci_low``, ``ci_high`` and ``n`` (what ``ef.aggregate`` returns) is
written as one aggregate record (``<uuid>.json``, one JSON object); any other table as
instance-level records (``<uuid>_samples.jsonl``, JSON lines), one record per row and score
column (the schema asks for one instance record per aggregate result). Both are written
atomically, as every save is (:mod:`evalframe.io._atomic`).

Instance-level records, from a scored frame:

- score columns: ``metadata["metrics"]`` (a list of columns), by default every ``Float64``
  column that is not one of evalframe's roles or keys nor a ``harness.*`` column. The column
  name is the record's ``evaluation_result_id``; its value ``evaluation.score``;
  ``evaluation.is_correct`` is ``score == 1.0`` (the rule of the ``every-eval-ever`` lm-eval
  converter). A null or non-finite score is an error: the schema needs a number, so say what
  a missing answer scores first (``scored.with_columns(pl.col("exact_match").fill_null(0.0))``).
- ``model`` -> ``model_id``, ``task`` -> ``evaluation_name`` (or ``metadata["model_id"]``,
  ``metadata["evaluation_name"]`` for the whole frame), ``sample_id`` (required; as text).
- ``prediction`` -> ``output.raw`` (a string as a one-item list, a list as it is, null as
  ``[]``: no response) and one terminal ``answer_attribution`` per response, with
  ``extraction_method`` ``metadata["extraction_method"]`` (default ``"none"``).
- ``gold`` -> ``input.reference`` (a string as a one-item list; null as ``[]``); without a
  ``gold`` column, the choices at ``gold_index``. ``choices`` -> ``input.choices``.
- ``input.raw``: the column ``metadata["input"]`` names (default ``input`` if there is one),
  else ``""`` (evalframe's frames rarely hold the prompt).
- ``interaction_type`` is ``"single_turn"``; ``evaluation_id`` is ``metadata["evaluation_id"]``
  or ``<task>/<model>/<retrieved_timestamp>`` (``metadata["retrieved_timestamp"]``, default
  the time of the save as Unix seconds): give the aggregate record the same one to link them.
- every other column is kept in the record's ``metadata`` (text: strings as they are, other
  values as JSON text; nulls left out).

Aggregate record, from ``ef.aggregate`` output for one model and one task (the schema's
``model_info`` is one model; the datastore keeps one file per benchmark and model):

- each row is one ``evaluation_results`` entry: ``evaluation_result_id`` the ``metric``
  (with the other columns' values, ``metric:key=value,...``, when the metric repeats),
  ``score_details.score`` the ``value``; ``uncertainty``: ``standard_error`` (``stderr``, with
  the method of the row's signature), ``confidence_interval`` (``ci_low``, ``ci_high``, the
  level and method of the signature), ``num_samples`` (``n``), ``num_bootstrap_samples``
  (the signature's ``B``); the signature itself in
  ``metric_config.additional_details.evalframe_signature``; every other column (``n_missing``,
  ``n_null``, ``n_clusters``, other groups) in ``score_details.details`` as text.
- ``metric_config.lower_is_better`` (required by the schema): a ``lower_is_better`` or
  ``higher_is_better`` column, or ``metadata["lower_is_better"]`` ({metric: bool}); evalframe's
  metric table (``ef.list_metrics()``) says each metric's direction.
- ``metadata`` keys are otherwise dotted paths into the record. Required, with no default:
  ``source_metadata.source_organization_name`` and ``source_metadata.evaluator_relationship``
  (``first_party``, ``third_party``, ``collaborative``, ``other``). Defaults:
  ``source_metadata.source_type`` ``"evaluation_run"`` (scores computed from per-item
  outputs), ``model_info.name`` and ``model_info.id`` the ``model``,
  ``model_info.additional_details.deployment_type`` and ``.model_availability``
  ``"unknown"``, ``eval_library`` ``{"name": "evalframe", "version": <evalframe's>}``,
  ``evaluation_id`` as above, ``retrieved_timestamp`` the time of the save, and each result's
  ``source_data`` ``{"dataset_name": <task>, "source_type": "other"}``. A key starting with
  ``evaluation_results.`` is set in every result (``"evaluation_results.source_data"``).
"""

from __future__ import annotations

import json
import math
import re
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import polars as pl

from evalframe._version import __version__
from evalframe.errors import EvalframeError
from evalframe.io._atomic import replacing, resolve_target
from evalframe.io.adapters.every_eval_ever import (
    AGGREGATE_REQUIRED,
    SCHEMA_VERSION,
    SIGNATURE_KEY,
    enum_problems,
    missing_fields,
)
from evalframe.schema import ROLES

__all__ = ["AGGREGATE_COLUMNS", "results_record", "samples_records", "write"]

#: Columns that make a table an aggregate table (``ef.aggregate`` output).
AGGREGATE_COLUMNS = ("metric", "value", "stderr", "ci_low", "ci_high", "n")

#: Columns an aggregate row maps to fields of its result (the rest go to its details).
_RESULT_COLUMNS = (
    "model",
    "task",
    *AGGREGATE_COLUMNS,
    "signature",
    "lower_is_better",
    "higher_is_better",
)

#: ``metadata`` keys of instance-level writing.
SAMPLE_OPTIONS = (
    "metrics",
    "input",
    "extraction_method",
    "evaluation_id",
    "retrieved_timestamp",
    "model_id",
    "evaluation_name",
)

#: Top-level fields of an aggregate record (``eval.schema.json``), which dotted keys may set.
RECORD_FIELDS = (
    "schema_version",
    "evaluation_id",
    "evaluation_timestamp",
    "retrieved_timestamp",
    "source_metadata",
    "eval_library",
    "model_info",
    "evaluation_results",
    "detailed_evaluation_results",
)

#: Columns that are evalframe's keys rather than scores.
_KEYS = ("task", "model", "sample_id", "cluster", "filter", "epoch")

#: Rows turned into records at a time.
_BATCH = 10_000


def write(
    frame: pl.DataFrame | pl.LazyFrame, path: str | Path, *, metadata: Mapping[str, Any] | None
) -> None:
    """Write ``frame`` to ``path`` as Every Eval Ever records (see the module docstring).

    An aggregate table (columns ``metric``, ``value``, ``stderr``, ``ci_low``, ``ci_high``,
    ``n``) becomes one aggregate record in a ``.json`` file; any other table instance-level
    records in a ``.jsonl`` file.

    >>> import polars as pl, tempfile, os, json
    >>> out = os.path.join(tempfile.mkdtemp(), "run_samples.jsonl")
    >>> scored = pl.DataFrame({"model": ["org/m"], "task": ["gsm8k"], "sample_id": [7],
    ...                        "prediction": ["4"], "gold": ["4"], "exact_match": [1.0]})
    >>> write(scored, out, metadata={"retrieved_timestamp": "1700000000"})
    >>> record = json.loads(open(out).read())
    >>> record["evaluation_id"], record["sample_id"], record["evaluation"]
    ('gsm8k/org/m/1700000000', '7', {'score': 1.0, 'is_correct': True})
    """
    data = frame.collect() if isinstance(frame, pl.LazyFrame) else frame
    options = dict(metadata or {})
    shown = str(path)
    aggregate = all(column in data.columns for column in AGGREGATE_COLUMNS)
    suffix = ".json" if aggregate else ".jsonl"
    if not shown.lower().endswith(suffix):
        kind = "an aggregate table" if aggregate else "instance-level rows"
        raise EvalframeError(
            f"cannot write {shown!r} as Every Eval Ever records: {kind} is written to a "
            f"'{suffix}' file (<uuid>{'.json' if aggregate else '_samples.jsonl'}); an aggregate "
            f"table is one with the columns {list(AGGREGATE_COLUMNS)}"
        )
    if aggregate:
        record = results_record(data, options, shown)
        text = json.dumps(record, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
        chunks: Iterator[bytes] = iter([text.encode()])
    else:
        chunks = (
            "".join(
                json.dumps(record, ensure_ascii=False, allow_nan=False) + "\n" for record in batch
            ).encode()
            for batch in _batches(samples_records(data, options, shown))
        )
    with replacing(resolve_target(path, shown), shown) as out:
        for chunk in chunks:
            out.write(chunk)


def _batches(records: Iterator[dict[str, Any]]) -> Iterator[list[dict[str, Any]]]:
    batch: list[dict[str, Any]] = []
    for record in records:
        batch.append(record)
        if len(batch) == _BATCH:
            yield batch
            batch = []
    if batch:
        yield batch


# ---------------------------------------------------------------- instance-level records


def samples_records(
    frame: pl.DataFrame, options: Mapping[str, Any], shown: str = "<frame>"
) -> Iterator[dict[str, Any]]:
    """Instance-level records of ``frame``: one per row and score column, row by row.

    Checks run before the first record is made, so nothing is written on a bad frame.

    >>> frame = pl.DataFrame({"model": ["m"], "task": ["t"], "sample_id": ["a"],
    ...                       "prediction": [None], "gold": ["x"], "em": [0.0]})
    >>> record = next(samples_records(frame, {"retrieved_timestamp": "1"}))
    >>> record["output"], record["answer_attribution"], record["input"]
    ({'raw': []}, [], {'raw': '', 'reference': ['x']})
    """
    unknown = sorted(set(options) - set(SAMPLE_OPTIONS))
    if unknown:
        raise EvalframeError(
            f"cannot write {shown!r} as Every Eval Ever instance records: unknown metadata "
            f"key(s) {unknown}; instance records take {list(SAMPLE_OPTIONS)}"
        )
    metrics = _score_columns(frame, options, shown)
    model = _key_values(frame, "model", "model_id", options, shown)
    task = _key_values(frame, "task", "evaluation_name", options, shown)
    if "sample_id" not in frame.columns:
        raise EvalframeError(
            f"cannot write {shown!r} as Every Eval Ever instance records: the column "
            "'sample_id' is required (the record's sample_id); number the rows with "
            "frame.with_row_index('sample_id') if they have no id"
        )
    _check_nulls(frame, ["sample_id"], shown, "an id")
    raw_column = _input_column(frame, options, shown)
    prediction = _text_column(frame, "prediction", shown)
    gold = _text_column(frame, "gold", shown)
    choices = _choices(frame, shown)
    references = gold if "gold" in frame.columns else _gold_from_index(frame, choices, shown)
    method = str(options.get("extraction_method", "none"))
    stamp = str(options.get("retrieved_timestamp") or time.time())
    fixed_id = options.get("evaluation_id")
    mapped = {"sample_id", "model", "task", "prediction", "gold", "choices", *metrics}
    if raw_column is not None:
        mapped.add(raw_column)
    extra = [name for name in frame.columns if name not in mapped]
    for start in range(0, frame.height, _BATCH):
        part = frame.slice(start, _BATCH)
        rows = range(start, start + part.height)
        ids = part.get_column("sample_id").cast(pl.String).to_list()
        raws = part.get_column(raw_column).to_list() if raw_column else [""] * part.height
        scores = {name: part.get_column(name).to_list() for name in metrics}
        extras = {name: part.get_column(name).to_list() for name in extra}
        for offset, row in enumerate(rows):
            evaluation_id = fixed_id or f"{task[row]}/{model[row]}/{stamp}"
            base = _instance_base(
                evaluation_id,
                model[row],
                task[row],
                ids[offset],
                raws[offset] or "",
                _as_list(references[row]),
                choices[row],
                _as_list(prediction[row]),
                method,
                {name: extras[name][offset] for name in extra},
            )
            for name in metrics:
                score = float(scores[name][offset])
                yield {
                    **base["head"],
                    "evaluation_result_id": name,
                    **base["body"],
                    "evaluation": {"score": score, "is_correct": score == 1.0},
                    **base["tail"],
                }


def _instance_base(
    evaluation_id: str,
    model: str,
    task: str,
    sample_id: str,
    raw: str,
    references: list[str],
    choices: list[str] | None,
    responses: list[str],
    method: str,
    extra: dict[str, Any],
) -> dict[str, dict[str, Any]]:
    """The parts of a record that every score of one row shares, in the schema's order."""
    head = {
        "schema_version": SCHEMA_VERSION,
        "evaluation_id": evaluation_id,
        "model_id": model,
        "evaluation_name": task,
    }
    given: dict[str, Any] = {"raw": raw, "reference": references}
    if choices is not None:
        given["choices"] = choices
    single = len(responses) == 1
    body = {
        "sample_id": sample_id,
        "interaction_type": "single_turn",
        "input": given,
        "output": {"raw": responses},
        "answer_attribution": [
            {
                "turn_idx": 0,
                "source": "output.raw" if single else f"output.raw[{index}]",
                "extracted_value": response,
                "extraction_method": method,
                "is_terminal": True,
            }
            for index, response in enumerate(responses)
        ],
    }
    notes = {name: _as_text(value) for name, value in extra.items() if value is not None}
    return {"head": head, "body": body, "tail": {"metadata": notes} if notes else {}}


def _score_columns(frame: pl.DataFrame, options: Mapping[str, Any], shown: str) -> list[str]:
    named = options.get("metrics")
    if named is None:
        metrics = [
            name
            for name, dtype in frame.schema.items()
            if dtype == pl.Float64
            and name not in ROLES
            and name not in _KEYS
            and not name.startswith("harness.")
        ]
        if not metrics:
            raise EvalframeError(
                f"cannot write {shown!r} as Every Eval Ever instance records: no score column "
                "(a Float64 column that is not a role, key or harness.* column); score the "
                "frame first or name the columns with metadata={'metrics': [...]}"
            )
    else:
        metrics = [named] if isinstance(named, str) else list(named)
        absent = [name for name in metrics if name not in frame.columns]
        if absent:
            raise EvalframeError(
                f"cannot write {shown!r}: metadata['metrics'] names {absent}, which the frame "
                f"does not have; columns: {frame.columns}"
            )
        wrong = [name for name in metrics if not frame.schema[name].is_numeric()]
        if wrong:
            kinds = {name: str(frame.schema[name]) for name in wrong}
            raise EvalframeError(
                f"cannot write {shown!r}: score columns must be numbers (one score per row; a "
                f"corpus metric's statistics are written in the aggregate record); got {kinds}"
            )
    for name in metrics:
        column = frame.get_column(name).cast(pl.Float64)
        bad = (column.is_null() | ~column.is_finite()).arg_true()
        if bad.len():
            row = int(bad[0])
            raise EvalframeError(
                f"cannot write {shown!r} as Every Eval Ever instance records: column {name!r} "
                f"has no finite score in {bad.len()} row(s), first row {row} "
                f"({column[row]}); the schema needs a number: decide what those rows score, "
                f"e.g. frame.with_columns(pl.col({name!r}).fill_null(0.0))"
            )
    return metrics


def _key_values(
    frame: pl.DataFrame, column: str, option: str, options: Mapping[str, Any], shown: str
) -> list[str]:
    if column in frame.columns:
        _check_nulls(frame, [column], shown, f"a {column}")
        return frame.get_column(column).cast(pl.String).to_list()
    given = options.get(option)
    if not isinstance(given, str) or not given:
        raise EvalframeError(
            f"cannot write {shown!r} as Every Eval Ever instance records: no {column!r} column; "
            f"add one or give metadata={{{option!r}: ...}} (the record's {option})"
        )
    return [given] * frame.height


def _check_nulls(frame: pl.DataFrame, columns: Sequence[str], shown: str, what: str) -> None:
    for name in columns:
        nulls = frame.get_column(name).is_null().arg_true()
        if nulls.len():
            raise EvalframeError(
                f"cannot write {shown!r} as Every Eval Ever records: column {name!r} is null in "
                f"{nulls.len()} row(s), first row {int(nulls[0])}; every record needs {what}"
            )


def _input_column(frame: pl.DataFrame, options: Mapping[str, Any], shown: str) -> str | None:
    name = options.get("input")
    if name is None:
        return "input" if frame.schema.get("input") == pl.String else None
    if name not in frame.columns or frame.schema[name] != pl.String:
        raise EvalframeError(
            f"cannot write {shown!r}: metadata['input'] names {name!r}, which must be a text "
            f"column of the frame (the record's input.raw); columns: {frame.columns}"
        )
    return str(name)


def _text_column(frame: pl.DataFrame, name: str, shown: str) -> list[Any]:
    if name not in frame.columns:
        return [None] * frame.height
    dtype = frame.schema[name]
    if dtype not in (pl.String, pl.List(pl.String), pl.Null, pl.List(pl.Null)):
        raise EvalframeError(
            f"cannot write {shown!r} as Every Eval Ever instance records: column {name!r} is "
            f"{dtype}; the schema holds text or a list of texts (alternatives of one "
            "reference, several responses), not nested lists or numbers"
        )
    return frame.get_column(name).to_list()


def _choices(frame: pl.DataFrame, shown: str) -> list[list[str] | None]:
    if "choices" not in frame.columns:
        return [None] * frame.height
    if frame.schema["choices"] not in (pl.List(pl.String), pl.List(pl.Null), pl.Null):
        raise EvalframeError(
            f"cannot write {shown!r}: column 'choices' is {frame.schema['choices']}; "
            "input.choices is a list of texts"
        )
    return frame.get_column("choices").to_list()


def _gold_from_index(
    frame: pl.DataFrame, choices: list[list[str] | None], shown: str
) -> list[list[str] | None]:
    if "gold_index" not in frame.columns:
        return [None] * frame.height
    golds: list[list[str] | None] = []
    for row, (index, options) in enumerate(
        zip(frame.get_column("gold_index").to_list(), choices, strict=True)
    ):
        if index is None or options is None:
            golds.append(None)
            continue
        indices = index if isinstance(index, list) else [index]
        if any(not 0 <= position < len(options) for position in indices):
            raise EvalframeError(
                f"cannot write {shown!r}: gold_index {index} is out of range of the "
                f"{len(options)} choices on row {row}"
            )
        golds.append([options[position] for position in indices])
    return golds


def _as_list(value: str | list[str] | None) -> list[str]:
    if value is None:
        return []
    return [value] if isinstance(value, str) else list(value)


def _as_text(value: object) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


# ---------------------------------------------------------------- aggregate record


def results_record(
    table: pl.DataFrame, options: Mapping[str, Any], shown: str = "<table>"
) -> dict[str, Any]:
    """The aggregate record of ``table`` (``ef.aggregate`` output for one model and task).

    >>> table = pl.DataFrame({"model": ["org/m"], "task": ["gsm8k"], "metric": ["em"],
    ...     "n": [20], "value": [0.5], "stderr": [0.1], "ci_low": [0.3], "ci_high": [0.7],
    ...     "signature": ["metric:em|stderr:sem|ci:wilson-0.95|version:0.2.0"]})
    >>> record = results_record(table, {"lower_is_better": {"em": False},
    ...     "source_metadata.source_organization_name": "Lab",
    ...     "source_metadata.evaluator_relationship": "third_party",
    ...     "retrieved_timestamp": "1700000000"})
    >>> record["evaluation_id"], record["evaluation_results"][0]["score_details"]["uncertainty"]
    ('gsm8k/org/m/1700000000', {'standard_error': {'value': 0.1, 'method': 'sem'}, \
'confidence_interval': {'lower': 0.3, 'upper': 0.7, 'confidence_level': 0.95, \
'method': 'wilson'}, 'num_samples': 20})
    """
    options = dict(options)
    direction = options.pop("lower_is_better", None)
    model = _single(table, "model", options.get("model_info.id"), shown)
    task = _single(table, "task", options.get("evaluation_name"), shown)
    options.pop("evaluation_name", None)
    stamp = str(options.get("retrieved_timestamp") or time.time())
    lower = _directions(table, direction, shown)
    record: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "evaluation_id": f"{task}/{model}/{stamp}",
        "retrieved_timestamp": stamp,
        "source_metadata": {"source_type": "evaluation_run"},
        "eval_library": {"name": "evalframe", "version": __version__},
        "model_info": {
            "name": model,
            "id": model,
            "additional_details": {"deployment_type": "unknown", "model_availability": "unknown"},
        },
        "evaluation_results": _results(table, task, lower, shown),
    }
    for key, value in options.items():
        _set(record, key, value, shown)
    problems = missing_fields(record, AGGREGATE_REQUIRED) + enum_problems(record)
    if problems:
        raise EvalframeError(
            f"cannot write {shown!r} as an Every Eval Ever aggregate record: "
            + "; ".join(problems)
            + ". Give what evalframe cannot know as metadata={'<field>': value}, e.g. "
            "{'source_metadata.source_organization_name': 'My lab', "
            "'source_metadata.evaluator_relationship': 'third_party'}"
        )
    return record


def _single(table: pl.DataFrame, column: str, given: object, shown: str) -> str:
    if column not in table.columns:
        if isinstance(given, str) and given:
            return given
        option = "model_info.id" if column == "model" else "evaluation_name"
        raise EvalframeError(
            f"cannot write {shown!r} as an Every Eval Ever aggregate record: no {column!r} "
            f"column; add one or give metadata={{{option!r}: ...}}"
        )
    values = table.get_column(column).unique(maintain_order=True).to_list()
    if len(values) != 1 or values[0] is None:
        raise EvalframeError(
            f"cannot write {shown!r} as an Every Eval Ever aggregate record: it holds one "
            f"{column}, the table holds {values[:5]}{'...' if len(values) > 5 else ''}; write "
            f"one file per model and task: for (model, task), part in "
            f"table.group_by(['model', 'task']): ef.save(part, ...)"
        )
    return str(values[0])


def _directions(table: pl.DataFrame, given: object, shown: str) -> dict[str, bool]:
    metrics = table.get_column("metric").to_list()
    if "lower_is_better" in table.columns or "higher_is_better" in table.columns:
        column = "lower_is_better" if "lower_is_better" in table.columns else "higher_is_better"
        values = table.get_column(column).to_list()
        flip = column == "higher_is_better"
        found = {
            metric: (not value if flip else value)
            for metric, value in zip(metrics, values, strict=True)
            if isinstance(value, bool)
        }
    elif isinstance(given, Mapping):
        found = {metric: value for metric, value in given.items() if isinstance(value, bool)}
    else:
        found = {}
    lacking = sorted({metric for metric in metrics if metric not in found})
    if lacking:
        raise EvalframeError(
            f"cannot write {shown!r} as an Every Eval Ever aggregate record: the schema needs "
            f"each metric's direction (metric_config.lower_is_better), unknown for {lacking}; "
            "give metadata={'lower_is_better': {'<metric>': False, ...}} or a "
            "higher_is_better column (ef.list_metrics() has each metric's)"
        )
    return found


def _results(
    table: pl.DataFrame, task: str, lower: Mapping[str, bool], shown: str
) -> list[dict[str, Any]]:
    _check_nulls(table, ["metric", "value"], shown, "a metric and a value")
    extra = [name for name in table.columns if name not in _RESULT_COLUMNS]
    rows = table.to_dicts()
    ids = _result_ids(rows, extra, shown)
    results = []
    for row, result_id in zip(rows, ids, strict=True):
        metric = str(row["metric"])
        config: dict[str, Any] = {"metric_name": metric, "lower_is_better": lower[metric]}
        if row.get("signature"):
            config["additional_details"] = {SIGNATURE_KEY: row["signature"]}
        score: dict[str, Any] = {"score": _finite(row["value"], "value", metric, shown)}
        uncertainty = _uncertainty(row, metric, shown)
        if uncertainty:
            score["uncertainty"] = uncertainty
        details = {name: _as_text(row[name]) for name in extra if row[name] is not None}
        if details:
            score["details"] = details
        results.append(
            {
                "evaluation_result_id": result_id,
                "evaluation_name": task,
                "source_data": {"dataset_name": task, "source_type": "other"},
                "metric_config": config,
                "score_details": score,
            }
        )
    return results


def _result_ids(rows: list[dict[str, Any]], extra: list[str], shown: str) -> list[str]:
    metrics = [str(row["metric"]) for row in rows]
    if len(set(metrics)) == len(metrics):
        return metrics
    ids = [
        f"{metric}:" + ",".join(f"{name}={_as_text(row[name])}" for name in extra)
        for metric, row in zip(metrics, rows, strict=True)
    ]
    if len(set(ids)) != len(ids):
        repeated = sorted({key for key in ids if ids.count(key) > 1})
        raise EvalframeError(
            f"cannot write {shown!r} as an Every Eval Ever aggregate record: rows repeat one "
            f"result ({repeated[:3]}); each metric must appear once per group"
        )
    return ids


def _uncertainty(row: Mapping[str, Any], metric: str, shown: str) -> dict[str, Any]:
    methods = _signature_methods(row.get("signature"))
    out: dict[str, Any] = {}
    if row["stderr"] is not None:
        error: dict[str, Any] = {"value": _finite(row["stderr"], "stderr", metric, shown)}
        if "stderr" in methods:
            error["method"] = methods["stderr"]
        out["standard_error"] = error
    low, high = row["ci_low"], row["ci_high"]
    if (low is None) != (high is None):
        raise EvalframeError(
            f"cannot write {shown!r}: metric {metric!r} has one bound of its interval "
            f"(ci_low {low}, ci_high {high}); the schema's interval has both"
        )
    if low is not None:
        interval: dict[str, Any] = {
            "lower": _finite(low, "ci_low", metric, shown),
            "upper": _finite(high, "ci_high", metric, shown),
        }
        if "level" in methods:
            interval["confidence_level"] = methods["level"]
        if "interval" in methods:
            interval["method"] = methods["interval"]
        out["confidence_interval"] = interval
    if row["n"] is not None:
        out["num_samples"] = int(row["n"])
    if "B" in methods:
        out["num_bootstrap_samples"] = methods["B"]
    return out


def _signature_methods(signature: object) -> dict[str, Any]:
    """The standard-error method, bootstrap count and interval of an evalframe signature.

    >>> _signature_methods("metric:f1|stderr:bootstrap|B:1000|seed:0|ci:percentile-0.9|v:1")
    {'stderr': 'bootstrap', 'B': 1000, 'interval': 'percentile', 'level': 0.9}
    """
    if not isinstance(signature, str):
        return {}
    pairs = dict(re.findall(r"(?:^|\|)(stderr|B|ci):([^|]*)", signature))
    found: dict[str, Any] = {}
    if pairs.get("stderr"):
        found["stderr"] = pairs["stderr"]
    if pairs.get("B", "").isdigit():
        found["B"] = int(pairs["B"])
    method, _, level = pairs.get("ci", "").rpartition("-")
    try:
        value = float(level)
    except ValueError:
        return found
    if method and 0 <= value <= 1:
        found["interval"] = method
        found["level"] = value
    return found


def _finite(value: object, column: str, metric: str, shown: str) -> float:
    number = float(value)  # type: ignore[arg-type]
    if not math.isfinite(number):
        raise EvalframeError(
            f"cannot write {shown!r}: metric {metric!r} has {column} {number}; JSON and the "
            "schema hold finite numbers only"
        )
    return number


def _set(record: dict[str, Any], key: str, value: object, shown: str) -> None:
    """Set the dotted ``key`` in ``record`` (``evaluation_results.<path>``: in every result)."""
    if not isinstance(key, str) or not key:
        raise EvalframeError(f"cannot write {shown!r}: metadata key {key!r} is not a field path")
    parts = key.split(".")
    if parts[0] not in RECORD_FIELDS:
        raise EvalframeError(
            f"cannot write {shown!r} as an Every Eval Ever aggregate record: metadata key "
            f"{key!r} is not a field of the record; fields: {list(RECORD_FIELDS)} (give nested "
            "fields as dotted paths, 'source_metadata.source_organization_name'), and "
            "'lower_is_better'"
        )
    if parts[0] == "evaluation_results" and len(parts) > 1:
        for result in record["evaluation_results"]:
            _put(result, parts[1:], value, key, shown)
        return
    _put(record, parts, value, key, shown)


def _put(target: dict[str, Any], parts: list[str], value: object, key: str, shown: str) -> None:
    for part in parts[:-1]:
        inner = target.setdefault(part, {})
        if not isinstance(inner, dict):
            raise EvalframeError(
                f"cannot write {shown!r}: metadata key {key!r} goes inside {part!r}, which is "
                f"not an object ({inner!r})"
            )
        target = inner
    target[parts[-1]] = value
