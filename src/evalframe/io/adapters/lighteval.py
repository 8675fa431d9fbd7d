"""lighteval's per-sample details parquet files and its ``results_<timestamp>.json``.

``lighteval ... --output-dir out --save-details`` writes
``out/details/<model>/<timestamp>/details_<task>_<timestamp>.parquet`` (one file per task,
``<task>`` such as ``lighteval|gsm8k|0`` or ``ef_mc|0``) and
``out/results/<model>/results_<timestamp>.json``
(:class:`lighteval.logging.evaluation_tracker.EvaluationTracker`).

Details come in two layouts, both read by the ``lighteval`` format:

- nested (lighteval 0.13.0): one row per document with the struct columns ``doc`` (the
  :class:`~lighteval.tasks.requests.Doc`: ``query``, ``choices``, ``gold_index``, ``id``,
  ``task_name``, ``sampling_methods``...), ``model_response`` (the
  :class:`~lighteval.models.model_output.ModelResponse`: ``text``, ``text_post_processed``,
  ``logprobs``, ``output_tokens``...) and ``metric`` (the per-sample metric values);
- flat (earlier releases, and the Open LLM Leaderboard details): the fields of
  ``DetailsLogger.Detail`` as columns, ``example``, ``instruction``, ``full_prompt``,
  ``num_effective_few_shots``, ``num_asked_few_shots``, ``predictions``,
  ``prediction_logits``, ``input_tokens``, ``cont_tokens``, ``truncated``, ``padded``,
  ``gold``, ``pred_logits``, ``choices``, ``gold_index``, ``metrics``, ``specifics``; typed, or
  every column the ``str()`` of its Python value (lighteval's fallback when the values did not
  fit one Arrow type, as the ``(logprob, is_greedy)`` pairs of log-likelihood tasks).

Canonical columns (see ``docs/harnesses/lighteval.md``): ``task`` (``doc.task_name``, else
the file name's task), ``model`` (the folders between ``details/`` and the timestamp folder,
else the ``config_general.model_name`` of a ``results_<timestamp>.json`` next to the file or
one folder up, else null), ``sample_id`` (``doc.id``; the flat layout has no id: the row's
position, as text), ``timestamp`` (the file name's), ``prediction`` (the model's final text,
as lighteval's metrics read it: ``text_post_processed`` when set, else ``text``; a ``str``,
or a ``list[str]`` in a file where a document has several samples), ``gold`` (``list[str]``,
``Doc.get_golds()``: the choices at the gold indices), ``choices``, ``gold_index``,
``choice_logprobs`` (the first ``len(choices)`` log-probabilities of a log-likelihood
document), ``unconditioned_logprobs`` (the next ``len(choices)``, when a PMI task doubled
them), ``choice_token_counts`` (the length of each choice's ``output_tokens``) and one
``harness.<metric>`` column per per-sample metric value. Every other field is kept: the
nested ``doc`` and ``model_response`` as one column per field (``doc.query``,
``model_response.text``..., so that the files of several tasks stack), every flat column
under its name (a ``str()``-written one as its text). A role column is present when the
file can hold it: ``prediction`` when the texts are strings, ``choice_logprobs`` when the
log-probabilities are numbers, ``choice_token_counts`` when the output tokens are lists
(a generative task has no ``choice_logprobs``, a multiple-choice one no ``prediction``),
``unconditioned_logprobs`` when some document has twice as many log-probabilities as
choices; ``gold_index`` is always a ``list[int]`` (``as_list``, as lighteval's metrics read
it).

The ``lighteval_results`` format reads ``results_<timestamp>.json``: one row per task x
metric with ``value`` and ``stderr`` (the ``<metric>_stderr`` key), ``model``
(``config_general.model_name``) and the run's and task's configuration.
"""

from __future__ import annotations

import ast
import math
import re
from collections.abc import Sequence
from pathlib import Path

import polars as pl

from evalframe.errors import EvalframeError
from evalframe.io._duplicates import unique_samples
from evalframe.io._source import load_json
from evalframe.io.adapters._adapter import Adapter
from evalframe.io.adapters._probe import Probe
from evalframe.io.adapters.table import register

__all__ = ["ADAPTERS", "details_name", "model_from_path", "read_details", "read_results"]

DOC = "docs/harnesses/lighteval.md"

#: ``datetime.now().isoformat()`` with ``:`` replaced by ``-`` (the hub's older files keep ``:``).
TIMESTAMP = r"\d{4}-\d{2}-\d{2}T\d{2}[-:]\d{2}[-:]\d{2}(?:\.\d+)?"
_DETAILS = re.compile(rf"^details_(?P<task>.+)_(?P<timestamp>{TIMESTAMP})\.parquet$")
_TIMESTAMP = re.compile(rf"^{TIMESTAMP}$")

#: Top-level columns of the nested layout, and the fields the mapping needs in each.
NESTED = ("doc", "model_response", "metric")
DOC_FIELDS = ("query", "choices", "gold_index")
RESPONSE_FIELDS = ("text", "logprobs")
#: Columns of the flat layout the mapping needs (every ``Detail`` has them all).
FLAT = ("example", "full_prompt", "predictions", "gold", "choices", "gold_index", "metrics")
#: Flat columns parsed from their ``str()`` text; the others are kept as written.
PARSED = ("predictions", "gold", "choices", "gold_index", "metrics")

EXPECTS = (
    "parquet columns 'doc', 'model_response' and 'metric' (structs), or the flat columns "
    + ", ".join(repr(name) for name in FLAT)
)


# ------------------------------------------------------------------------------ naming


def details_name(path: Path) -> tuple[str | None, str | None]:
    """The task and timestamp of ``details_<task>_<timestamp>.parquet`` (``None`` otherwise).

    >>> details_name(Path("details_lighteval|gsm8k|0_2025-01-02T10-20-30.123456.parquet"))
    ('lighteval|gsm8k|0', '2025-01-02T10-20-30.123456')
    >>> details_name(Path("mine.parquet"))
    (None, None)
    """
    match = _DETAILS.match(path.name)
    return (match["task"], match["timestamp"]) if match else (None, None)


def model_from_path(path: Path, timestamp: str | None = None) -> str | None:
    """The model a details file belongs to, from where lighteval put it.

    ``<out>/details/<model>/<timestamp>/details_*.parquet``: the folders between ``details``
    and the timestamp folder (``org/name``, as ``config_general.model_name``). Otherwise the
    ``model_name`` of ``results_<timestamp>.json`` in the file's folder or the one above;
    ``None`` when neither says.

    >>> model_from_path(Path("out/details/org/name/2025-01-02T10-20-30/x.parquet"))
    'org/name'
    >>> model_from_path(Path("elsewhere/x.parquet")) is None
    True
    """
    parts = path.parts
    if len(parts) >= 4 and _TIMESTAMP.match(parts[-2]):
        for index in range(len(parts) - 4, -1, -1):
            if parts[index] == "details":
                return "/".join(parts[index + 1 : -2])
    if timestamp is None:
        return None
    for folder in (path.parent, path.parent.parent):
        results = folder / f"results_{timestamp}.json"
        if results.is_file():
            try:
                config = load_json(results, "lighteval results").get("config_general")
            except (ValueError, AttributeError):
                continue
            name = config.get("model_name") if isinstance(config, dict) else None
            if isinstance(name, str) and name:
                return name
    return None


# --------------------------------------------------------------------------- detection


def _struct_fields(dtype: pl.DataType | None) -> set[str] | None:
    return {field.name for field in dtype.fields} if isinstance(dtype, pl.Struct) else None


def _is_nested(schema: pl.Schema) -> bool:
    doc = _struct_fields(schema.get("doc"))
    response = _struct_fields(schema.get("model_response"))
    return (
        doc is not None
        and response is not None
        and "metric" in schema
        and set(DOC_FIELDS) <= doc
        and set(RESPONSE_FIELDS) <= response
    )


def _is_flat(schema: pl.Schema) -> bool:
    return all(name in schema for name in FLAT)


def _is_details(probe: Probe) -> bool:
    if probe.kind != "parquet":
        return False
    schema = probe.schema
    return schema is not None and (_is_nested(schema) or _is_flat(schema))


def _is_results(probe: Probe) -> bool:
    if probe.top != "object" or not probe.has("config_general", "results"):
        return False
    value = probe.value
    if not isinstance(value, dict):
        return False
    config, results = value.get("config_general"), value.get("results")
    return (
        isinstance(config, dict)
        and isinstance(results, dict)
        and ("model_name" in config or "lighteval_sha" in config)
    )


# ----------------------------------------------------------------------------- details


#: What names one document of the nested layout: lighteval numbers documents per split
#: (``doc.id = str(ix)``), so a task evaluated on two splits holds each id twice, with
#: different queries.
KEYS = ("task", "model", "sample_id", "doc.query")


def read_details(path: Path, *, duplicates: str = "error") -> pl.LazyFrame:
    """A lighteval details parquet file (either layout) in evalframe's columns.

    A document written twice (same task, model, ``doc.id`` and query) is an error, or one row
    is kept: ``duplicates`` (see :mod:`evalframe.io._duplicates`). The flat layout has no
    document id: its rows are numbered, so a repeated row cannot be told from a question the
    dataset holds twice, and is kept.

    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp()) / "details" / "org" / "m" / "2025-01-02T10-20-30"
    >>> folder.mkdir(parents=True)
    >>> path = folder / "details_ef_mc|0_2025-01-02T10-20-30.parquet"
    >>> pl.DataFrame({
    ...     "doc": [{"query": "2+2?", "choices": [" 3", " 4"], "gold_index": 1, "id": "0",
    ...              "task_name": "ef_mc|0", "sampling_methods": ["LOGPROBS"]}],
    ...     "model_response": [{"text": [], "logprobs": [-2.0, -0.5]}],
    ...     "metric": [{"acc": 1}],
    ... }).write_parquet(path)
    >>> columns = ["task", "model", "gold", "choice_logprobs", "harness.acc"]
    >>> read_details(path).select(columns).collect()
    shape: (1, 5)
    ┌─────────┬───────┬───────────┬─────────────────┬─────────────┐
    │ task    ┆ model ┆ gold      ┆ choice_logprobs ┆ harness.acc │
    │ ---     ┆ ---   ┆ ---       ┆ ---             ┆ ---         │
    │ str     ┆ str   ┆ list[str] ┆ list[f64]       ┆ i64         │
    ╞═════════╪═══════╪═══════════╪═════════════════╪═════════════╡
    │ ef_mc|0 ┆ org/m ┆ [" 4"]    ┆ [-2.0, -0.5]    ┆ 1           │
    └─────────┴───────┴───────────┴─────────────────┴─────────────┘
    """
    frame = pl.scan_parquet(path, glob=False)
    schema = frame.collect_schema()
    task, timestamp = details_name(path)
    keys = {"task": task, "model": model_from_path(path, timestamp), "timestamp": timestamp}
    if all(name in schema for name in NESTED):
        _check_nested(path, schema)
        try:
            nested = _read_nested(frame, schema, keys)
        except EvalframeError as error:
            raise EvalframeError(f"{str(path)!r}: column 'doc': {error}") from None
        named = [key for key in KEYS if key in nested.collect_schema()]
        return unique_samples(
            nested,
            named,
            duplicates=duplicates,
            source=str(path),
            what="lighteval details",
            locate=lambda row: f"row {row}",
            optional=("sample_id",),
        )
    if all(name in schema for name in FLAT):
        if all(schema[name] == pl.String for name in PARSED):
            return _read_flat_text(path, frame.collect(), keys)
        return _read_flat(path, frame, schema, keys)
    missing = [name for name in NESTED if name not in schema]
    flat_missing = [name for name in FLAT if name not in schema]
    raise EvalframeError(
        f"{str(path)!r} is not a lighteval details file: the nested layout needs column(s) "
        f"{missing} and the flat layout column(s) {flat_missing}, which it does not have; "
        f"its columns: {list(schema)}"
    )


def _check_nested(path: Path, schema: pl.Schema) -> None:
    for column, needed in (("doc", DOC_FIELDS), ("model_response", RESPONSE_FIELDS)):
        fields = _struct_fields(schema[column])
        if fields is None:
            raise EvalframeError(
                f"{str(path)!r}: column {column!r} is {schema[column]}; expected a struct "
                f"with fields {list(needed)} (a lighteval {column})"
            )
        missing = [name for name in needed if name not in fields]
        if missing:
            raise EvalframeError(
                f"{str(path)!r}: column {column!r} has no field(s) {missing}; expected a "
                f"lighteval {column} with fields {list(needed)}, found {sorted(fields)}"
            )
    metric = schema["metric"]
    if not isinstance(metric, pl.Struct) and metric != pl.Null:
        raise EvalframeError(
            f"{str(path)!r}: column 'metric' is {metric}; expected a struct of per-sample "
            "metric values"
        )


def _field(column: str, name: str, schema: pl.Schema) -> pl.Expr | None:
    fields = _struct_fields(schema.get(column))
    return pl.col(column).struct.field(name) if fields and name in fields else None


#: ``doc`` fields that become canonical columns (``task``, ``sample_id``, ``choices``,
#: ``gold_index``); every other field is kept as ``doc.<field>``.
MAPPED_DOC = ("task_name", "id", "choices", "gold_index")


def _read_nested(frame: pl.LazyFrame, schema: pl.Schema, keys: dict) -> pl.LazyFrame:
    doc = {field.name: field.dtype for field in schema["doc"].fields}
    response = {field.name: field.dtype for field in schema["model_response"].fields}
    choices = pl.col("doc").struct.field("choices").cast(pl.List(pl.String))
    n_choices = choices.list.len()
    gold_index = _as_list(pl.col("doc").struct.field("gold_index"), doc["gold_index"])
    text = pl.col("model_response").struct.field("text").cast(pl.List(pl.String))
    if "text_post_processed" in response:
        processed = pl.col("model_response").struct.field("text_post_processed")
        text = pl.coalesce(processed.cast(pl.List(pl.String)), text)
    logprobs = pl.col("model_response").struct.field("logprobs").cast(pl.List(pl.Float64))
    if "sampling_methods" in doc:
        methods = pl.col("doc").struct.field("sampling_methods").cast(pl.List(pl.String))
        scored = methods.list.contains("LOGPROBS").fill_null(False)
    else:
        scored = (logprobs.list.len() >= n_choices) & (text.list.len() == 0)
    scored = scored & (n_choices > 0) & (logprobs.list.len() >= n_choices)
    doubled = scored & (logprobs.list.len() == 2 * n_choices)
    tokens_dtype = response.get("output_tokens")
    has_tokens = isinstance(tokens_dtype, pl.List) and isinstance(tokens_dtype.inner, pl.List)
    tokens = pl.col("model_response").struct.field("output_tokens")
    counted = scored & (tokens.list.len() >= n_choices) if has_tokens else pl.lit(False)

    shape = frame.select(
        text.list.len().max().alias("samples"), doubled.any().alias("doubled")
    ).collect()
    samples = shape["samples"][0] or 0
    texts = [_inner(response.get(name)) for name in ("text", "text_post_processed")]
    has_text = pl.String in texts
    has_logprobs = _inner(response.get("logprobs")) in (pl.Float64, pl.Float32, pl.Int64)

    task = pl.lit(keys["task"], dtype=pl.String)
    if "task_name" in doc:
        named = pl.col("doc").struct.field("task_name").cast(pl.String)
        task = pl.when(named != "").then(named).otherwise(task)
    sample_id = pl.col("doc").struct.field("id") if "id" in doc else pl.lit(None, pl.String)
    columns = [
        task.alias("task"),
        pl.lit(keys["model"], dtype=pl.String).alias("model"),
        sample_id.cast(pl.String).alias("sample_id"),
        pl.lit(keys["timestamp"], dtype=pl.String).alias("timestamp"),
    ]
    if has_text:
        prediction = text if samples > 1 else text.list.first()
        columns.append(pl.when(text.list.len() > 0).then(prediction).alias("prediction"))
    columns += [
        _gather(choices, gold_index).alias("gold"),
        choices.alias("choices"),
        gold_index.alias("gold_index"),
    ]
    if has_logprobs:
        columns.append(pl.when(scored).then(logprobs.list.head(n_choices)).alias("choice_logprobs"))
    if shape["doubled"][0]:
        unconditioned = logprobs.list.slice(n_choices, n_choices)
        columns.append(pl.when(doubled).then(unconditioned).alias("unconditioned_logprobs"))
    if has_logprobs and has_tokens:
        counts = tokens.list.head(n_choices).list.eval(pl.element().list.len())
        columns.append(
            pl.when(counted).then(counts.cast(pl.List(pl.Int64))).alias("choice_token_counts")
        )
    columns += _harness_columns("metric", schema["metric"])
    columns += [
        pl.col("doc").struct.field(name).alias(f"doc.{name}")
        for name in doc
        if name not in MAPPED_DOC
    ]
    columns += [
        pl.col("model_response").struct.field(name).alias(f"model_response.{name}")
        for name in response
    ]
    rest = [pl.col(name) for name in schema if name not in NESTED]
    return frame.select(columns + rest)


def _inner(dtype: pl.DataType | None) -> pl.DataType | None:
    return dtype.inner if isinstance(dtype, pl.List) else None


def _as_list(index: pl.Expr, dtype: pl.DataType) -> pl.Expr:
    """``as_list(gold_index)``, as lighteval's metrics take it: a ``list[int]``."""
    if isinstance(dtype, pl.List) and (dtype.inner.is_integer() or dtype.inner == pl.Null):
        return index.cast(pl.List(pl.Int64))
    if dtype.is_integer():
        return pl.when(index.is_not_null()).then(pl.concat_list(index.cast(pl.Int64)))
    if dtype == pl.Null:
        return pl.lit(None, dtype=pl.List(pl.Int64))
    raise EvalframeError(f"gold_index is {dtype}; expected an integer or a list of integers")


def _gather(choices: pl.Expr, gold_index: pl.Expr) -> pl.Expr:
    """``Doc.get_golds()``: the choices at the gold indices, in that order (an index out of
    range gives a null element, where lighteval raises)."""
    return choices.list.gather(gold_index, null_on_oob=True)


def _harness_columns(column: str, dtype: pl.DataType) -> list[pl.Expr]:
    if not isinstance(dtype, pl.Struct):
        return []
    return [
        pl.col(column).struct.field(field.name).alias(f"harness.{field.name}")
        for field in dtype.fields
    ]


def _key_columns(keys: dict) -> list[pl.Expr]:
    position = pl.int_range(pl.len(), dtype=pl.Int64).cast(pl.String)
    return [
        pl.lit(keys["task"], dtype=pl.String).alias("task"),
        pl.lit(keys["model"], dtype=pl.String).alias("model"),
        position.alias("sample_id"),
        pl.lit(keys["timestamp"], dtype=pl.String).alias("timestamp"),
    ]


def _read_flat(path: Path, frame: pl.LazyFrame, schema: pl.Schema, keys: dict) -> pl.LazyFrame:
    """The flat layout written with its own types (generative and single-token tasks)."""
    odd = {
        name: schema[name]
        for name in ("predictions", "gold", "choices", "gold_index")
        if not isinstance(schema[name], pl.List)
    }
    if odd:
        raise EvalframeError(
            f"{str(path)!r}: flat lighteval columns {odd} are not lists; expected every one of "
            f"{list(PARSED)} to be a list (typed) or text (written with str())"
        )
    choices = pl.col("choices").cast(pl.List(pl.String))
    try:
        gold_index = _as_list(pl.col("gold_index"), schema["gold_index"])
    except EvalframeError as error:
        raise EvalframeError(f"{str(path)!r}: {error}") from None
    derived = _gather(choices, gold_index)
    gold = pl.col("gold")
    if schema["gold"] == pl.List(pl.String):
        gold = pl.when(gold.list.len() > 0).then(gold).otherwise(derived)
    else:
        gold = derived
    columns = [*_key_columns(keys)]
    predictions = schema["predictions"]
    inner = predictions.inner if isinstance(predictions, pl.List) else None
    extra: list[pl.Expr] = []
    if inner == pl.String:
        shape = frame.select(pl.col("predictions").list.len().max()).collect().item() or 0
        text = pl.col("predictions")
        prediction = text if shape > 1 else text.list.first()
        extra.append(pl.when(text.list.len() > 0).then(prediction).alias("prediction"))
    elif inner is not None and inner.is_numeric():
        logprobs = pl.col("predictions").cast(pl.List(pl.Float64))
        given = (choices.list.len() > 0) & (logprobs.list.len() >= choices.list.len())
        extra.append(
            pl.when(given).then(logprobs.list.head(choices.list.len())).alias("choice_logprobs")
        )
    columns += [
        *extra,
        gold.alias("gold"),
        choices.alias("choices"),
        gold_index.alias("gold_index"),
    ]
    columns += _harness_columns("metrics", schema["metrics"])
    flattened = isinstance(schema["metrics"], pl.Struct)
    mapped = (
        ("gold", "choices", "gold_index", "metrics")
        if flattened
        else ("gold", "choices", "gold_index")
    )
    rest = [pl.col(name) for name in schema if name not in mapped]
    return frame.select(columns + rest)


# -------------------------------------------------------------- flat, written as str()


def _read_flat_text(path: Path, frame: pl.DataFrame, keys: dict) -> pl.LazyFrame:
    """The flat layout with every column the ``str()`` of a Python value."""
    parsed = {name: _parse_column(path, frame, name) for name in PARSED}
    choices = [_strings(path, "choices", row, value) for row, value in enumerate(parsed["choices"])]
    gold_index = [_indices(path, row, value) for row, value in enumerate(parsed["gold_index"])]
    golds = []
    for row, value in enumerate(parsed["gold"]):
        gold = _strings(path, "gold", row, value)
        if not gold and choices[row] is not None and gold_index[row] is not None:
            gold = [
                choices[row][i] if 0 <= i < len(choices[row]) else None for i in gold_index[row]
            ]
        golds.append(gold)
    texts, logprobs = _predictions(path, parsed["predictions"], choices)
    samples = max((len(text) for text in texts if text), default=0)
    data: dict[str, pl.Series] = {}
    if samples > 0:
        values = [(text if samples > 1 else text[0]) if text else None for text in texts]
        dtype = pl.List(pl.String) if samples > 1 else pl.String
        data["prediction"] = pl.Series("prediction", values, dtype=dtype)
    data["gold"] = pl.Series("gold", golds, dtype=pl.List(pl.String))
    data["choices"] = pl.Series("choices", choices, dtype=pl.List(pl.String))
    data["gold_index"] = pl.Series("gold_index", gold_index, dtype=pl.List(pl.Int64))
    if any(value is not None for value in logprobs):
        data["choice_logprobs"] = pl.Series("choice_logprobs", logprobs, dtype=pl.List(pl.Float64))
    for name, values in _metric_values(path, parsed["metrics"]).items():
        data[f"harness.{name}"] = _series(path, name, values)
    mapped = pl.DataFrame(data, height=frame.height)
    kept = frame.drop("gold", "choices", "gold_index", "metrics")
    keyed = frame.lazy().select(_key_columns(keys)).collect()
    return pl.concat([keyed, mapped, kept], how="horizontal").lazy()


def _parse_column(path: Path, frame: pl.DataFrame, name: str) -> list[object]:
    values = []
    for row, text in enumerate(frame[name].to_list()):
        try:
            values.append(None if text is None else _literal(text))
        except (ValueError, SyntaxError, TypeError, RecursionError) as error:
            shown = text if len(text) <= 60 else text[:57] + "..."
            raise EvalframeError(
                f"{str(path)!r}: column {name!r} row {row} is the text {shown!r}, which is not "
                f"a Python literal as lighteval writes it ({error}); expected a list or dict"
            ) from error
    return values


_CONSTANTS = {"nan": math.nan, "inf": math.inf, "None": None, "True": True, "False": False}
_NUMBER_CALLS = {"float", "int", "float64", "float32", "float16", "int64", "int32", "bool_"}


def _literal(text: str) -> object:
    """A Python literal as ``str()`` writes it, also ``nan``, ``inf`` and numpy scalars
    (``np.float64(0.5)``, ``np.False_``), which :func:`ast.literal_eval` refuses.

    >>> _literal("{'acc': np.float64(0.5), 'f1': nan, 'x': [(-1.5, np.False_)]}")
    {'acc': 0.5, 'f1': nan, 'x': [(-1.5, False)]}
    """
    return _convert(ast.parse(text.strip(), mode="eval").body)


def _convert(node: ast.AST) -> object:
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.List | ast.Tuple):
        items = [_convert(item) for item in node.elts]
        return items if isinstance(node, ast.List) else tuple(items)
    if isinstance(node, ast.Dict):
        pairs = zip(node.keys, node.values, strict=True)
        return {_convert(key): _convert(value) for key, value in pairs}  # type: ignore[arg-type]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        value = _convert(node.operand)
        if isinstance(value, int | float) and not isinstance(value, bool):
            return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.Name) and node.id in _CONSTANTS:
        return _CONSTANTS[node.id]
    if isinstance(node, ast.Attribute) and node.attr in ("True_", "False_"):
        return node.attr == "True_"
    if isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords:
        function = node.func
        name = function.attr if isinstance(function, ast.Attribute) else getattr(function, "id", "")
        value = _convert(node.args[0])
        if name in _NUMBER_CALLS and isinstance(value, int | float):
            return value
        if name == "str_" and isinstance(value, str):
            return value
    raise ValueError(f"unsupported expression {ast.dump(node)[:60]}")


def _strings(path: Path, column: str, row: int, value: object) -> list[str] | None:
    if value is None:
        return None
    if isinstance(value, list | tuple) and all(isinstance(item, str) for item in value):
        return list(value)
    raise EvalframeError(
        f"{str(path)!r}: column {column!r} row {row} holds {value!r}; expected a list of strings"
    )


def _indices(path: Path, row: int, value: object) -> list[int] | None:
    if value is None:
        return None
    items = value if isinstance(value, list | tuple) else [value]
    if all(isinstance(item, int) and not isinstance(item, bool) for item in items):
        return list(items)
    raise EvalframeError(
        f"{str(path)!r}: column 'gold_index' row {row} holds {value!r}; expected a list of integers"
    )


def _predictions(
    path: Path, values: Sequence[object], choices: Sequence[list[str] | None]
) -> tuple[list[list[str] | None], list[list[float] | None]]:
    """Generated texts and choice log-probabilities of the flat ``predictions`` values:
    strings (generations), ``(logprob, is_greedy)`` pairs or bare numbers (one per choice)."""
    texts: list[list[str] | None] = []
    logprobs: list[list[float] | None] = []
    for row, value in enumerate(values):
        items = value if isinstance(value, list | tuple) else None
        if items is None:
            if value is not None:
                raise EvalframeError(
                    f"{str(path)!r}: column 'predictions' row {row} holds {value!r}; "
                    "expected a list"
                )
            texts.append(None)
            logprobs.append(None)
            continue
        if items and all(isinstance(item, str) for item in items):
            texts.append(list(items))
            logprobs.append(None)
            continue
        numbers = [_logprob(item) for item in items]
        if any(number is None for number in numbers):
            raise EvalframeError(
                f"{str(path)!r}: column 'predictions' row {row} holds {value!r}; expected "
                "generated texts, (logprob, is_greedy) pairs or log-probabilities"
            )
        count = len(choices[row] or [])
        texts.append(None)
        logprobs.append(numbers[:count] if count and len(numbers) >= count else None)
    return texts, logprobs


def _logprob(item: object) -> float | None:
    if isinstance(item, list | tuple) and item:
        item = item[0]
    if isinstance(item, int | float) and not isinstance(item, bool):
        return float(item)
    return None


def _metric_values(path: Path, values: Sequence[object]) -> dict[str, list[object]]:
    names: dict[str, None] = {}
    for row, value in enumerate(values):
        if value is not None and not isinstance(value, dict):
            raise EvalframeError(
                f"{str(path)!r}: column 'metrics' row {row} holds {value!r}; expected a dict "
                "of metric values"
            )
        names.update(dict.fromkeys(value or {}))
    return {
        name: [value.get(name) if isinstance(value, dict) else None for value in values]
        for name in names
    }


def _series(path: Path, name: str, values: list[object]) -> pl.Series:
    """One metric's values: booleans, integers, floats (integers with them as floats), or
    the ``str()`` of anything else, exactly as it was."""
    given = [value for value in values if value is not None]
    label = f"harness.{name}"
    if given and all(isinstance(value, bool) for value in given):
        return pl.Series(label, values, dtype=pl.Boolean)
    if all(isinstance(value, int) and not isinstance(value, bool) for value in given):
        return pl.Series(label, values, dtype=pl.Int64)
    if all(isinstance(value, int | float) and not isinstance(value, bool) for value in given):
        if any(isinstance(v, int) and abs(v) > 2**53 for v in given):
            raise EvalframeError(
                f"{str(path)!r}: metric {name!r} mixes floats with integers too large for a "
                "float; read the file with format='table' to keep the text"
            )
        return pl.Series(label, [None if v is None else float(v) for v in values], pl.Float64)
    return pl.Series(label, [None if v is None else str(v) for v in values], dtype=pl.String)


# ----------------------------------------------------------------------------- results

RESULTS_SCHEMA = {
    "task": pl.String,
    "metric": pl.String,
    "value": pl.Float64,
    "stderr": pl.Float64,
    "model": pl.String,
    "is_group": pl.Boolean,
    "num_fewshots": pl.Int64,
    "version": pl.String,
    "hf_repo": pl.String,
    "hf_subset": pl.String,
    "timestamp": pl.String,
    "lighteval_sha": pl.String,
    "num_fewshot_seeds": pl.Int64,
    "max_samples": pl.Int64,
    "job_id": pl.String,
    "total_evaluation_time_secondes": pl.String,
    "model_sha": pl.String,
    "model_dtype": pl.String,
    "model_size": pl.String,
}

_RESULTS_NAME = re.compile(rf"^results_(?P<timestamp>{TIMESTAMP})\.json$")


def read_results(path: Path) -> pl.LazyFrame:
    """A lighteval ``results_<timestamp>.json``: one row per task x metric.

    ``stderr`` is the ``<metric>_stderr`` entry (null where lighteval wrote none: one
    document, corpus metrics returning several values). ``is_group`` marks lighteval's
    averages (``all``, and ``<task>:_average|<shots>`` over subtasks): means of the
    subtasks' values *and* of their standard errors.

    >>> import json, tempfile
    >>> path = Path(tempfile.mkdtemp()) / "results_2025-01-02T10-20-30.json"
    >>> _ = path.write_text(json.dumps({
    ...     "config_general": {"model_name": "org/m", "lighteval_sha": "?"},
    ...     "results": {"ef|0": {"acc": 0.5, "acc_stderr": 0.25}, "all": {"acc": 0.5}},
    ... }))
    >>> read_results(path).select("task", "metric", "value", "stderr", "model").collect()
    shape: (2, 5)
    ┌──────┬────────┬───────┬────────┬───────┐
    │ task ┆ metric ┆ value ┆ stderr ┆ model │
    │ ---  ┆ ---    ┆ ---   ┆ ---    ┆ ---   │
    │ str  ┆ str    ┆ f64   ┆ f64    ┆ str   │
    ╞══════╪════════╪═══════╪════════╪═══════╡
    │ ef|0 ┆ acc    ┆ 0.5   ┆ 0.25   ┆ org/m │
    │ all  ┆ acc    ┆ 0.5   ┆ null   ┆ org/m │
    └──────┴────────┴───────┴────────┴───────┘
    """
    value = load_json(path, "lighteval results")
    if not isinstance(value, dict):
        raise EvalframeError(f"{str(path)!r}: expected a JSON object, found {type(value).__name__}")
    config = _mapping(path, value, "config_general")
    results = _mapping(path, value, "results")
    tasks_config = value.get("config_tasks") if isinstance(value.get("config_tasks"), dict) else {}
    versions = value.get("versions") if isinstance(value.get("versions"), dict) else {}
    match = _RESULTS_NAME.match(path.name)
    run = {
        "model": _text(config.get("model_name")),
        "timestamp": match["timestamp"] if match else None,
        "lighteval_sha": _text(config.get("lighteval_sha")),
        "num_fewshot_seeds": _integer(config.get("num_fewshot_seeds")),
        "max_samples": _integer(config.get("max_samples")),
        "job_id": _text(config.get("job_id")),
        "total_evaluation_time_secondes": _text(config.get("total_evaluation_time_secondes")),
        "model_sha": _text(config.get("model_sha")),
        "model_dtype": _text(config.get("model_dtype")),
        "model_size": _text(config.get("model_size")),
    }
    rows = []
    for task, metrics in results.items():
        if not isinstance(metrics, dict):
            raise EvalframeError(
                f"{str(path)!r}: results[{task!r}] is {type(metrics).__name__}; expected an "
                "object of metric values"
            )
        task_config = tasks_config.get(task) if isinstance(tasks_config.get(task), dict) else {}
        version = versions.get(task, task_config.get("version"))
        for metric, number in metrics.items():
            if metric.endswith("_stderr") and metric.removesuffix("_stderr") in metrics:
                continue
            stderr = f"{metric}_stderr"
            rows.append(
                {
                    "task": task,
                    "metric": metric,
                    "value": _number(path, task, metric, number),
                    "stderr": _number(path, task, f"{metric}_stderr", metrics.get(stderr)),
                    "is_group": task == "all" or ":_average|" in task,
                    "num_fewshots": _integer(task_config.get("num_fewshots")),
                    "version": None if version is None else str(version),
                    "hf_repo": _text(task_config.get("hf_repo")),
                    "hf_subset": _text(task_config.get("hf_subset")),
                    **run,
                }
            )
    return pl.DataFrame(rows, schema=RESULTS_SCHEMA).lazy()


def _mapping(path: Path, value: dict, key: str) -> dict:
    found = value.get(key)
    if not isinstance(found, dict):
        raise EvalframeError(
            f"{str(path)!r}: key {key!r} is "
            f"{'missing' if key not in value else type(found).__name__}; expected an object "
            "(a lighteval results_<timestamp>.json has 'config_general' and 'results')"
        )
    return found


def _number(path: Path, task: str, metric: str, value: object) -> float | None:
    if value is None:
        return None
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    raise EvalframeError(
        f"{str(path)!r}: results[{task!r}][{metric!r}] is {value!r}; expected a number"
    )


def _text(value: object) -> str | None:
    return None if value is None else str(value)


def _integer(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


#: This module's layouts, registered in the table of formats.
ADAPTERS = register(
    __name__,
    Adapter(
        name="lighteval",
        harness="lighteval",
        files="details_<task>_<timestamp>.parquet (lighteval --save-details)",
        expects=EXPECTS,
        detect=_is_details,
        read=read_details,
        doc=DOC,
        keys=KEYS,
        fields=NESTED,
    ),
    Adapter(
        name="lighteval_results",
        harness="lighteval",
        files="results_<timestamp>.json (lighteval)",
        expects="a JSON object with 'config_general' (with 'model_name') and 'results'",
        detect=_is_results,
        read=read_results,
        level="results",
        doc=DOC,
        fields=("config_general", "results"),
    ),
)
