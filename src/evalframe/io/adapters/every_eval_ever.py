"""Every Eval Ever (EvalEval Coalition): instance-level records and aggregate records.

Every Eval Ever is a shared schema for evaluation results (PyPI ``every-eval-ever``, schema
version 0.3.0: ``eval.schema.json`` and ``instance_level_eval.schema.json``). Two file types:

- ``every_eval_ever``: an instance-level file (``<uuid>_samples.jsonl``), one JSON record per
  line and per aggregate result a sample contributed to (a sample scored by two metrics is two
  records, told apart by ``evaluation_result_id``). Records that agree on everything but
  ``evaluation_result_id``, ``evaluation.score`` and ``evaluation.is_correct`` are one row;
  each result's score is in ``harness.<evaluation_result_id>`` (``harness.score`` for records
  without one) and its ``is_correct`` in ``harness.<evaluation_result_id>.is_correct``.
  Canonical columns: ``sample_id``, ``model`` (``model_id``), ``task`` (``evaluation_name``),
  ``prediction`` (the model's responses ``output.raw``; for multi-turn and agentic records,
  which have no ``output``, the extracted value of the last terminal ``answer_attribution``),
  ``gold`` (``input.reference``) and ``choices`` (``input.choices``). ``prediction`` and
  ``gold`` are strings when no record holds more than one value, else lists of strings; an
  empty list is null (no response: a missing answer; no reference: an unscoreable row).
  Every other field is kept under its own name (``input``, ``output``, ``answer_attribution``,
  ``metadata``... nested as in the file).
- ``every_eval_ever_results``: an aggregate file (``<uuid>.json``), one JSON object for one
  model, one row per entry of ``evaluation_results``: ``model`` (``model_info.id``), ``task``
  (``evaluation_name``), ``metric`` (``evaluation_result_id``, else ``metric_config.metric_id``,
  else ``metric_config.metric_name``), ``value`` (``score_details.score``), ``stderr``,
  ``ci_low``, ``ci_high``, ``ci_level`` (``score_details.uncertainty``), ``n``
  (``uncertainty.num_samples``) and ``signature`` (the evalframe signature a record written by
  evalframe holds in ``metric_config.additional_details``); the result's own fields and the
  file's top-level fields are kept nested under their own names.

Detection requires every field the schema requires, with its JSON type. Reading checks them
in every record: a missing or mistyped required field is an error naming the file, the field,
how many records lack it and the first one. Writing is :mod:`.every_eval_ever_write`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl

from evalframe.errors import EvalframeError
from evalframe.io._duplicates import unique_samples
from evalframe.io._json import line_locator, read_jsonl
from evalframe.io._source import load_json
from evalframe.io.adapters._adapter import Adapter
from evalframe.io.adapters._probe import Probe
from evalframe.io.adapters.table import register

__all__ = [
    "ADAPTERS",
    "AGGREGATE_REQUIRED",
    "INSTANCE_REQUIRED",
    "SCHEMA_VERSION",
    "missing_fields",
    "read_results",
    "read_samples",
]

#: Names a row of the frame by its line in the file.
Locate = Callable[[int], str]

#: The schema version evalframe reads and writes (``every-eval-ever`` 0.3.0).
SCHEMA_VERSION = "0.3.0"

#: ``interaction_type`` values of the instance-level schema.
INTERACTION_TYPES = ("single_turn", "multi_turn", "agentic")

#: Required fields of an instance-level record (``instance_level_eval.schema.json``): a name
#: maps to its JSON type, a dict to an object's required fields, a one-item list to a list
#: whose items have that type.
INSTANCE_REQUIRED: dict[str, Any] = {
    "schema_version": "string",
    "evaluation_id": "string",
    "model_id": "string",
    "evaluation_name": "string",
    "sample_id": "string",
    "interaction_type": "string",
    "input": {"raw": "string", "reference": ["string"]},
    "answer_attribution": [
        {
            "turn_idx": "integer",
            "source": "string",
            "extracted_value": "string",
            "extraction_method": "string",
            "is_terminal": "boolean",
        }
    ],
    "evaluation": {"score": "number", "is_correct": "boolean"},
}

#: Required fields of an aggregate record (``eval.schema.json``), in the same notation.
AGGREGATE_REQUIRED: dict[str, Any] = {
    "schema_version": "string",
    "evaluation_id": "string",
    "retrieved_timestamp": "string",
    "source_metadata": {
        "source_type": "string",
        "source_organization_name": "string",
        "evaluator_relationship": "string",
    },
    "model_info": {
        "name": "string",
        "id": "string",
        "additional_details": {"deployment_type": "string", "model_availability": "string"},
    },
    "eval_library": {"name": "string", "version": "string"},
    "evaluation_results": [
        {
            "evaluation_name": "string",
            "source_data": {"dataset_name": "string", "source_type": "string"},
            "metric_config": {"lower_is_better": "boolean"},
            "score_details": {"score": "number"},
        }
    ],
}

#: Closed sets of values of the aggregate schema, by field.
AGGREGATE_ENUMS: dict[str, tuple[str, ...]] = {
    "source_metadata.source_type": ("documentation", "evaluation_run"),
    "source_metadata.evaluator_relationship": (
        "first_party",
        "third_party",
        "collaborative",
        "other",
    ),
    "model_info.additional_details.deployment_type": (
        "self_deployed",
        "externally_managed",
        "unknown",
    ),
    "model_info.additional_details.model_availability": (
        "open_weights",
        "closed_weights",
        "unknown",
    ),
}

#: Where the evalframe signature of an aggregate result is kept (``metric_config``'s details).
SIGNATURE_KEY = "evalframe_signature"

_JSON_TYPES = {
    "string": (str,),
    "boolean": (bool,),
    "integer": (int,),
    "number": (int, float),
}


# ---------------------------------------------------------------- required fields


def missing_fields(value: object, spec: Any = None, where: str = "") -> list[str]:
    """The required fields ``value`` lacks or holds with the wrong JSON type, as messages.

    ``spec`` defaults to :data:`AGGREGATE_REQUIRED`.

    >>> missing_fields({"a": {"b": 1}}, {"a": {"b": "string", "c": "boolean"}})
    ["'a.b' must be a string, got 1", "'a.c' is missing"]
    """
    spec = AGGREGATE_REQUIRED if spec is None else spec
    if isinstance(spec, dict):
        if not isinstance(value, dict):
            return [f"{where or 'the record'!r} must be an object, got {_shown(value)}"]
        problems: list[str] = []
        for key, inner in spec.items():
            path = f"{where}.{key}" if where else key
            if key not in value or value[key] is None:
                problems.append(f"{path!r} is missing")
            else:
                problems.extend(missing_fields(value[key], inner, path))
        return problems
    if isinstance(spec, list):
        if not isinstance(value, list):
            return [f"{where!r} must be a list, got {_shown(value)}"]
        return [
            problem
            for index, item in enumerate(value)
            for problem in missing_fields(item, spec[0], f"{where}[{index}]")
        ]
    if not _is_type(value, spec):
        return [
            f"{where!r} must be {'an' if spec[0] in 'aeiou' else 'a'} {spec}, got {_shown(value)}"
        ]
    return []


def _is_type(value: object, kind: str) -> bool:
    if isinstance(value, bool) and kind in ("integer", "number"):
        return False
    return isinstance(value, _JSON_TYPES[kind])


def _shown(value: object) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 60 else text[:57] + "..."


def enum_problems(record: dict[str, Any]) -> list[str]:
    """Values of the aggregate schema's closed fields that are not among their choices.

    >>> enum_problems({"source_metadata": {"source_type": "scrape"}})
    ["'source_metadata.source_type' must be one of ['documentation', 'evaluation_run'], got \
'scrape'"]
    """
    problems = []
    for path, allowed in AGGREGATE_ENUMS.items():
        value: object = record
        for key in path.split("."):
            value = value.get(key) if isinstance(value, dict) else None
        if value is not None and value not in allowed:
            problems.append(f"{path!r} must be one of {list(allowed)}, got {value!r}")
    return problems


# ---------------------------------------------------------------- detection


def _has_shape(record: dict[str, Any], spec: dict[str, Any]) -> bool:
    """Whether ``record`` holds every required key of ``spec``, objects as objects, one level
    down (items of lists are checked when reading)."""
    for key, inner in spec.items():
        value = record.get(key)
        if value is None:
            return False
        if isinstance(inner, dict):
            if not isinstance(value, dict) or any(name not in value for name in inner):
                return False
        elif isinstance(inner, list):
            if not isinstance(value, list):
                return False
        elif not _is_type(value, inner):
            return False
    return True


def _is_samples(probe: Probe) -> bool:
    record = probe.record
    return (
        probe.top == "lines"
        and record is not None
        and _has_shape(record, INSTANCE_REQUIRED)
        and record["interaction_type"] in INTERACTION_TYPES
    )


def _is_results(probe: Probe) -> bool:
    if probe.top != "object" or not probe.has(*AGGREGATE_REQUIRED):
        return False
    record = probe.record
    return record is not None and _has_shape(record, AGGREGATE_REQUIRED)


# ---------------------------------------------------------------- instance-level records


#: What names one record: a sample's contribution to one aggregate result.
RECORD_KEY = ("evaluation_id", "model_id", "evaluation_name", "sample_id", "evaluation_result_id")


def read_samples(path: Path, *, duplicates: str = "error") -> pl.LazyFrame:
    """An Every Eval Ever instance-level file, one row per sample (see the module docstring).

    Two records of one sample for one aggregate result (same ``evaluation_id``, ``model_id``,
    ``evaluation_name``, ``sample_id`` and ``evaluation_result_id``) are an error, or one is
    kept: ``duplicates`` (see :mod:`evalframe.io._duplicates`).

    >>> import json, tempfile, pathlib
    >>> base = {"schema_version": "0.3.0", "evaluation_id": "e", "model_id": "org/m",
    ...         "evaluation_name": "gsm8k", "sample_id": "1", "interaction_type": "single_turn",
    ...         "input": {"raw": "1+1?", "reference": ["2"]}, "output": {"raw": ["2"]},
    ...         "answer_attribution": []}
    >>> lines = [dict(base, evaluation_result_id="exact_match",
    ...               evaluation={"score": 1.0, "is_correct": True}),
    ...          dict(base, evaluation_result_id="f1",
    ...               evaluation={"score": 0.5, "is_correct": False})]
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "x_samples.jsonl"
    >>> _ = path.write_text("\\n".join(json.dumps(line) for line in lines))
    >>> read_samples(path).select("sample_id", "model", "prediction", "gold",
    ...                           "harness.exact_match", "harness.f1").collect().rows()
    [('1', 'org/m', '2', '2', 1.0, 0.5)]
    """
    compressed = path.name.lower().endswith(".gz")
    frame = read_jsonl(path, compressed=compressed)
    locate = line_locator(path, compressed=compressed)
    _check_frame(frame, INSTANCE_REQUIRED, path, locate)
    bad = frame.filter(~pl.col("interaction_type").is_in(INTERACTION_TYPES))
    if bad.height:
        first = frame.with_row_index().filter(~pl.col("interaction_type").is_in(INTERACTION_TYPES))
        row = int(first["index"][0])
        raise EvalframeError(
            f"cannot read {str(path)!r} as Every Eval Ever instance records: 'interaction_type' "
            f"must be one of {list(INTERACTION_TYPES)}; {bad.height} record(s) hold another "
            f"value, first {first['interaction_type'][0]!r} on {locate(row)}"
        )
    if "evaluation_result_id" not in frame.columns:
        frame = frame.with_columns(pl.lit(None, pl.String).alias("evaluation_result_id"))
        unique = unique_samples(
            frame, RECORD_KEY, duplicates=duplicates, source=str(path),
            what="Every Eval Ever instance records", locate=locate,
        ).collect().drop("evaluation_result_id")
    else:
        unique = unique_samples(
            frame, RECORD_KEY, duplicates=duplicates, source=str(path),
            what="Every Eval Ever instance records", locate=locate,
        ).collect()
    return _samples(unique, path, locate).lazy()


def _check_frame(frame: pl.DataFrame, spec: dict[str, Any], path: Path, locate: Locate) -> None:
    """Every required field present, of its JSON type and non-null in every record."""
    schema = frame.schema
    for key, inner in spec.items():
        if key not in schema:
            _fail(path, key, frame.height, 0, locate, "is missing")
        _check_column(frame, pl.col(key), schema[key], inner, key, path, locate)


def _check_column(
    frame: pl.DataFrame,
    expr: pl.Expr,
    dtype: pl.DataType,
    spec: Any,
    name: str,
    path: Path,
    locate: Locate,
) -> None:
    missing = frame.select(expr.is_null().arg_true()).to_series()
    if missing.len():
        _fail(path, name, missing.len(), int(missing[0]), locate, "is missing (or null)")
    if isinstance(spec, dict):
        if not isinstance(dtype, pl.Struct):
            _fail(path, name, frame.height, 0, locate, f"must be an object, found {dtype}")
        fields = {field.name: field.dtype for field in dtype.fields}
        for key, inner in spec.items():
            if key not in fields:
                _fail(path, f"{name}.{key}", frame.height, 0, locate, "is missing")
            inner_expr = expr.struct.field(key)
            _check_column(frame, inner_expr, fields[key], inner, f"{name}.{key}", path, locate)
        return
    if isinstance(spec, list):
        if not isinstance(dtype, pl.List):
            _fail(path, name, frame.height, 0, locate, f"must be a list, found {dtype}")
        if dtype.inner == pl.Null:  # every list is empty (or holds only nulls)
            nulls = frame.select(expr.list.len().gt(0).arg_true()).to_series()
        else:
            holds_null = expr.list.eval(pl.element().is_null()).list.any()
            nulls = frame.select(holds_null.fill_null(False).arg_true()).to_series()
        if nulls.len():
            _fail(path, f"{name}[]", nulls.len(), int(nulls[0]), locate, "holds a null item")
        if dtype.inner == pl.Null:
            return
        items = (
            frame.select(expr.alias("items"))
            .with_row_index("row")
            .explode("items")
            .drop_nulls("items")
        )
        rows = items.get_column("row")
        _check_column(
            items,
            pl.col("items"),
            dtype.inner,
            spec[0],
            f"{name}[]",
            path,
            lambda index: locate(int(rows[index])),
        )
        return
    if not _dtype_is(dtype, spec):
        _fail(path, name, frame.height, 0, locate, f"must be a JSON {spec}, found {dtype}")


def _dtype_is(dtype: pl.DataType, kind: str) -> bool:
    if kind == "string":
        return dtype == pl.String
    if kind == "boolean":
        return dtype == pl.Boolean
    if kind == "integer":
        return dtype.is_integer()
    return dtype.is_numeric()


def _fail(path: Path, field: str, count: int, row: int, locate: Locate, what: str) -> None:
    raise EvalframeError(
        f"cannot read {str(path)!r} as Every Eval Ever instance records (schema "
        f"{SCHEMA_VERSION}): the required field {field!r} {what} in {count} record(s), first "
        f"on {locate(row)}"
    )


#: Fields that vary between the records of one sample (one per aggregate result).
_RESULT_FIELDS = ("evaluation_result_id", "evaluation")
_EVALUATION_OWN = ("score", "is_correct")


def _samples(frame: pl.DataFrame, path: Path, locate: Locate) -> pl.DataFrame:
    evaluation = frame.schema["evaluation"]
    assert isinstance(evaluation, pl.Struct)
    rest = [field.name for field in evaluation.fields if field.name not in _EVALUATION_OWN]
    result_id = (
        pl.col("evaluation_result_id")
        if "evaluation_result_id" in frame.columns
        else pl.lit(None, pl.String)
    )
    frame = frame.with_columns(
        __result=result_id,
        __score=pl.col("evaluation").struct.field("score").cast(pl.Float64),
        __correct=pl.col("evaluation").struct.field("is_correct"),
    )
    if rest:  # num_turns, tool_calls_count: facts of the interaction, kept with the sample
        frame = frame.with_columns(
            evaluation=pl.struct([pl.col("evaluation").struct.field(name) for name in rest])
        )
    else:
        frame = frame.drop("evaluation")
    frame = frame.drop("evaluation_result_id", strict=False).with_row_index("__row")
    keys = [name for name in frame.columns if not name.startswith("__")]
    _check_unique(frame, keys, path, locate)
    columns = []
    for result, name in _harness_names(frame).items():
        mine = pl.col("__result").is_null() if result is None else pl.col("__result") == result
        columns.append(pl.col("__score").filter(mine).first().alias(name))
        columns.append(pl.col("__correct").filter(mine).first().alias(f"{name}.is_correct"))
    wide = frame.group_by(keys, maintain_order=True).agg(columns)
    return _canonical(wide)


def _check_unique(frame: pl.DataFrame, keys: list[str], path: Path, locate: Locate) -> None:
    counts = frame.group_by([*keys, "__result"], maintain_order=True).agg(
        pl.col("__row"), pl.len().alias("__count")
    )
    repeated = counts.filter(pl.col("__count") > 1)
    if repeated.height:
        rows = repeated["__row"][0].to_list()
        result = repeated["__result"][0]
        raise EvalframeError(
            f"cannot read {str(path)!r} as Every Eval Ever instance records: "
            f"{repeated.height} sample(s) hold two records for one aggregate result "
            f"(evaluation_result_id {result!r}), first the sample "
            f"{repeated['sample_id'][0]!r} on {locate(rows[0])} and {locate(rows[1])}"
        )


def _harness_names(frame: pl.DataFrame) -> dict[str | None, str]:
    """``harness.<evaluation_result_id>`` for each result, in order of first appearance."""
    results = frame.get_column("__result").unique(maintain_order=True).to_list()
    names = {result: f"harness.{'score' if result is None else result}" for result in results}
    taken = [name for name in names.values()]
    if len(set(taken)) != len(taken):
        raise EvalframeError(
            "records without evaluation_result_id and records with evaluation_result_id "
            "'score' cannot both be read: both would be column 'harness.score'"
        )
    return names


def _canonical(frame: pl.DataFrame) -> pl.DataFrame:
    """The canonical columns first, from the record's own fields (which stay)."""
    output_raw = (
        pl.col("output").struct.field("raw")
        if isinstance(frame.schema.get("output"), pl.Struct)
        else pl.lit(None, pl.List(pl.String))
    )
    terminal = _terminal_answer(frame)
    responses = (
        pl.when(pl.col("interaction_type") == "single_turn").then(output_raw).otherwise(terminal)
    )
    gold = pl.col("input").struct.field("reference")
    choices = (
        pl.col("input").struct.field("choices")
        if "choices" in {field.name for field in frame.schema["input"].fields}
        else pl.lit(None, pl.List(pl.String))
    )
    canonical = frame.select(
        sample_id=pl.col("sample_id"),
        model=pl.col("model_id"),
        task=pl.col("evaluation_name"),
        prediction=_one_or_list(frame, responses),
        gold=_one_or_list(frame, gold),
        choices=choices.cast(pl.List(pl.String)),
    )
    harness = [name for name in frame.columns if name.startswith("harness.")]
    kept = [
        name
        for name in frame.columns
        if name not in ("sample_id", "model_id", "evaluation_name") and name not in harness
    ]
    return pl.concat([canonical, frame.select(harness), frame.select(kept)], how="horizontal")


def _terminal_answer(frame: pl.DataFrame) -> pl.Expr:
    """The extracted value of the last terminal answer attribution, as a list of 0 or 1."""
    dtype = frame.schema["answer_attribution"]
    if not isinstance(dtype, pl.List) or not isinstance(dtype.inner, pl.Struct):
        return pl.lit([], pl.List(pl.String))
    return pl.col("answer_attribution").list.eval(
        pl.element()
        .filter(pl.element().struct.field("is_terminal"))
        .struct.field("extracted_value")
        .tail(1)
    )


def _one_or_list(frame: pl.DataFrame, values: pl.Expr) -> pl.Expr:
    """One string when no row holds more than one value, else the lists; empty is null."""
    values = values.cast(pl.List(pl.String))
    longest = frame.select(values.list.len().max()).item()
    if longest is None or longest <= 1:
        return values.list.first()
    return pl.when(values.list.len() > 0).then(values)


# ---------------------------------------------------------------- aggregate records


def read_results(path: Path) -> pl.LazyFrame:
    """An Every Eval Ever aggregate file, one row per evaluation result.

    >>> import json, tempfile, pathlib
    >>> record = {"schema_version": "0.3.0", "evaluation_id": "gsm8k/org/m/1",
    ...     "retrieved_timestamp": "1", "source_metadata": {"source_type": "evaluation_run",
    ...     "source_organization_name": "Lab", "evaluator_relationship": "third_party"},
    ...     "model_info": {"name": "m", "id": "org/m", "additional_details": {
    ...         "deployment_type": "unknown", "model_availability": "unknown"}},
    ...     "eval_library": {"name": "lm_eval", "version": "0.4.13"},
    ...     "evaluation_results": [{"evaluation_name": "gsm8k", "evaluation_result_id": "em",
    ...         "source_data": {"dataset_name": "gsm8k", "source_type": "other"},
    ...         "metric_config": {"lower_is_better": False},
    ...         "score_details": {"score": 0.5, "uncertainty": {
    ...             "standard_error": {"value": 0.1}, "num_samples": 20}}}]}
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "x.json"
    >>> _ = path.write_text(json.dumps(record))
    >>> frame = read_results(path).collect()
    >>> frame.select("model", "task", "metric", "value", "stderr", "n").rows()
    [('org/m', 'gsm8k', 'em', 0.5, 0.1, 20)]
    """
    import pyarrow as pa  # on first use

    record = load_json(path, "an Every Eval Ever aggregate record")
    problems = missing_fields(record, AGGREGATE_REQUIRED) + (
        enum_problems(record) if isinstance(record, dict) else []
    )
    if problems:
        shown = "; ".join(problems[:3]) + (
            f"; and {len(problems) - 3} more" if len(problems) > 3 else ""
        )
        raise EvalframeError(
            f"cannot read {str(path)!r} as an Every Eval Ever aggregate record (schema "
            f"{SCHEMA_VERSION}): {shown}"
        )
    results = record["evaluation_results"]
    if not results:
        raise EvalframeError(
            f"cannot read {str(path)!r} as an Every Eval Ever aggregate record: "
            "'evaluation_results' is empty (no result to read)"
        )
    model = record["model_info"]["id"]
    top = {key: value for key, value in record.items() if key != "evaluation_results"}
    rows = [_with_record(_result_row(result, model), top) for result in results]
    try:
        table = pa.Table.from_pylist(rows)
    except (pa.ArrowInvalid, pa.ArrowTypeError) as error:
        raise EvalframeError(
            f"cannot read {str(path)!r} as an Every Eval Ever aggregate record: a field holds "
            f"values of different JSON types across results ({error})"
        ) from error
    frame = pl.from_arrow(table)
    assert isinstance(frame, pl.DataFrame)
    return frame.with_columns(
        pl.col(name).cast(dtype) for name, dtype in _RESULT_DTYPES.items()
    ).lazy()


_RESULT_DTYPES = {
    "model": pl.String,
    "task": pl.String,
    "metric": pl.String,
    "value": pl.Float64,
    "stderr": pl.Float64,
    "ci_low": pl.Float64,
    "ci_high": pl.Float64,
    "ci_level": pl.Float64,
    "n": pl.Int64,
    "signature": pl.String,
}


def _with_record(row: dict[str, Any], top: dict[str, Any]) -> dict[str, Any]:
    """The file's top-level fields added to a result's row; one the result also has (its own
    ``evaluation_timestamp``) is kept as ``record.<name>``."""
    return {
        **row,
        **{(f"record.{key}" if key in row else key): value for key, value in top.items()},
    }


def _result_row(result: dict[str, Any], model: str) -> dict[str, Any]:
    config = result["metric_config"]
    score = result["score_details"]
    uncertainty = score.get("uncertainty") or {}
    standard_error = uncertainty.get("standard_error") or {}
    interval = uncertainty.get("confidence_interval") or {}
    details = config.get("additional_details") or {}
    metric = (
        result.get("evaluation_result_id") or config.get("metric_id") or config.get("metric_name")
    )
    return {
        "model": model,
        "task": result["evaluation_name"],
        "metric": metric,
        "value": score["score"],
        "stderr": standard_error.get("value"),
        "ci_low": interval.get("lower"),
        "ci_high": interval.get("upper"),
        "ci_level": interval.get("confidence_level"),
        "n": uncertainty.get("num_samples"),
        "signature": details.get(SIGNATURE_KEY),
        **{key: value for key, value in result.items() if key != "evaluation_name"},
    }


#: This module's layouts, registered in the table of formats.
ADAPTERS = register(
    __name__,
    Adapter(
        name="every_eval_ever",
        harness="Every Eval Ever",
        files="instance-level records (<uuid>_samples.jsonl)",
        expects=(
            "JSON lines with 'schema_version', 'evaluation_id', 'model_id', 'evaluation_name', "
            "'sample_id', 'interaction_type', 'input' {'raw', 'reference'}, "
            "'answer_attribution' and 'evaluation' {'score', 'is_correct'}"
        ),
        detect=_is_samples,
        read=read_samples,
        level="samples",
        doc="docs/harnesses/every-eval-ever.md",
        keys=("model", "task", "sample_id"),
        fields=tuple(INSTANCE_REQUIRED),
    ),
    Adapter(
        name="every_eval_ever_results",
        harness="Every Eval Ever",
        files="aggregate record (<uuid>.json)",
        expects=(
            "one JSON object with 'schema_version', 'evaluation_id', 'retrieved_timestamp', "
            "'source_metadata', 'model_info', 'eval_library' and 'evaluation_results'"
        ),
        detect=_is_results,
        read=read_results,
        level="results",
        doc="docs/harnesses/every-eval-ever.md",
        fields=tuple(AGGREGATE_REQUIRED),
    ),
)
