"""lm-evaluation-harness ``samples_<task>_<date>.jsonl`` (``lm_eval --log_samples``).

One JSON object per document and filter (lm-eval 0.4.13, ``evaluator.evaluate`` and
``EvaluationTracker.save_results_samples``): ``doc_id``, ``doc`` (the dataset row),
``target`` (``str(doc_to_target(doc))``; older versions wrote the value itself: an int, a list),
``arguments`` (the requests: ``{"gen_args_<i>": {"arg_0": context, "arg_1": continuation or
generation kwargs}}``, or, in older files, a list of ``[context, continuation]`` lists),
``resps`` (every raw response), ``filtered_resps`` (per request, what the filter kept; every
leaf a string: ``["-1.25", "False"]`` for a log-likelihood), ``filter``, ``metrics`` (the
names of the metric keys), ``doc_hash``, ``prompt_hash``, ``target_hash``, and one key per
metric holding the harness's per-document value.

Columns, by the kind of request (read from ``arguments``):

- every file: ``task`` (from the file name ``samples_<task>_<date>.jsonl``; null when the name
  is not in that form), ``model`` (:func:`~evalframe.io.adapters.lm_eval_results.model_name`:
  the ``model_name`` of the run's ``results_<date>.json`` beside it, else the folder's name),
  ``sample_id`` (``doc_id``), ``filter``, ``harness.<metric>`` for each metric key, and every
  other key under its own name (``doc`` stays a struct);
- log-likelihood requests (``multiple_choice`` and ``loglikelihood`` tasks): ``choices`` (the
  continuations without the task's ``target_delimiter``, i.e. ``doc_to_choice(doc)``; the
  delimiter comes from the run's results file, else lm-eval's default ``" "``),
  ``choice_logprobs``, ``is_greedy``, ``gold_index`` (see :func:`gold_index`),
  ``unconditioned_logprobs`` when the task computes ``acc_mutual_info`` (the second half of
  the requests, whose context is empty), and ``loglikelihood`` when every document has a
  single continuation;
- ``generate_until``: ``prediction`` (the filtered response: a string, or a list of strings
  when the filter keeps several, e.g. ``repeats`` without ``take_first``) and ``gold``
  (``target``);
- ``loglikelihood_rolling``: ``loglikelihood`` and ``text`` (``target``, the document).

Reading is exact (:func:`evalframe.io._json.read_jsonl`). A file whose keys change type from
line to line, as lm-eval writes them when filters of one task keep a string on some lines and a
list on others, or older files with unsanitised responses (``[-1.25, false]``), is read a
second time line by line, with those values written the way lm-eval 0.4.13 writes them (every
response leaf a string; a single answer as a one-item list, with a warning).
"""

from __future__ import annotations

import json
import re
import tempfile
import warnings
from collections.abc import Iterator
from pathlib import Path

import polars as pl

from evalframe.errors import EvalframeError
from evalframe.io._duplicates import unique_samples
from evalframe.io._json import line_locator, read_jsonl
from evalframe.io._source import is_gzip, open_binary
from evalframe.io.adapters._adapter import Adapter
from evalframe.io.adapters._probe import Probe
from evalframe.io.adapters.lm_eval_results import model_name, results_for
from evalframe.io.adapters.table import register

__all__ = ["ADAPTERS", "gold_index", "read_samples", "task_name"]

#: Keys lm-eval writes on every line besides the metric values.
KNOWN = (
    "doc_id", "doc", "target", "arguments", "resps", "filtered_resps", "filter", "metrics",
    "doc_hash", "prompt_hash", "target_hash",
)  # fmt: skip
#: Keys the mapping cannot do without (on every line).
REQUIRED = ("doc_id", "target", "arguments", "filtered_resps")
#: What names one sample: lm-eval writes one line per document and filter.
KEYS = ("task", "model", "sample_id", "filter")
#: lm-eval's default ``target_delimiter``.
DELIMITER = " "
_DATE = re.compile(r"^samples_(?P<task>.+)_\d{4}-\d{2}-\d{2}T[0-9.\-]+\.jsonl(\.gz)?$")
_LIST_OF_INTS = r"^\[\s*[0-9]+(\s*,\s*[0-9]+)*\s*\]$"


def _is_samples(probe: Probe) -> bool:
    return probe.top == "lines" and probe.has(
        "doc_id", "doc", "target", "arguments", "resps", "filtered_resps"
    )


def task_name(path: Path) -> str | None:
    """The task of ``samples_<task>_<date>.jsonl`` (``None`` for another name).

    >>> task_name(Path("samples_arc_easy_2024-05-01T10-00-00.123456.jsonl"))
    'arc_easy'
    >>> task_name(Path("samples_gsm8k_cot.jsonl")), task_name(Path("mine.jsonl"))
    ('gsm8k_cot', None)
    """
    match = _DATE.match(path.name)
    if match:
        return match.group("task")
    stem = path.name.removesuffix(".gz").removesuffix(".jsonl")
    if stem.startswith("samples_") and len(stem) > len("samples_"):
        return stem.removeprefix("samples_")
    return None


# ---------------------------------------------------------------- reading


def read_samples(path: Path, *, duplicates: str = "error") -> pl.LazyFrame:
    """A samples file as a frame of canonical columns (see the module docstring).

    A document written twice for one filter (a resumed run appends its lines again) is an
    error, or one line is kept: ``duplicates`` (see :mod:`evalframe.io._duplicates`).

    >>> import json, tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp()) / "org__model"
    >>> folder.mkdir()
    >>> line = {"doc_id": 0, "doc": {"q": "2+2?"}, "target": "1",
    ...     "arguments": {"gen_args_0": {"arg_0": "2+2?", "arg_1": " 3"},
    ...                   "gen_args_1": {"arg_0": "2+2?", "arg_1": " 4"}},
    ...     "resps": [[["-2.5", "False"]], [["-0.5", "True"]]],
    ...     "filtered_resps": [["-2.5", "False"], ["-0.5", "True"]],
    ...     "filter": "none", "metrics": ["acc"], "acc": 1.0}
    >>> path = folder / "samples_toy_2024-05-01T10-00-00.000001.jsonl"
    >>> _ = path.write_text(json.dumps(line) + "\\n")
    >>> read_samples(path).select("task", "model", "sample_id", "choices", "choice_logprobs",
    ...                           "gold_index", "harness.acc").collect().rows()
    [('toy', 'org__model', 0, ['3', '4'], [-2.5, -0.5], 1, 1.0)]
    """
    if _blank(path):
        return _empty(path)
    return unique_samples(
        _mapped(_read(path), path),
        KEYS,
        duplicates=duplicates,
        source=str(path),
        what="lm-eval samples",
        locate=line_locator(path, compressed=is_gzip(path)),
    )


def _open(path: Path):
    return open_binary(path)


def _blank(path: Path) -> bool:
    """Whether the file holds nothing but white space (lm-eval leaves an empty file when a
    task has no document)."""
    with _open(path) as handle:
        while chunk := handle.read(1 << 20):
            if chunk.strip():
                return False
    return True


def _empty(path: Path) -> pl.LazyFrame:
    schema = {"task": pl.String, "model": pl.String, "sample_id": pl.Int64, "filter": pl.String}
    frame = pl.DataFrame(schema=schema)
    return frame.with_columns(
        pl.lit(task_name(path), pl.String).alias("task"),
        pl.lit(model_name(path), pl.String).alias("model"),
    ).lazy()


def _read(path: Path) -> pl.DataFrame:
    compressed = path.name.lower().endswith(".gz")
    try:
        return read_jsonl(path, compressed=compressed)
    except EvalframeError as error:
        try:
            return _read_normalized(path)
        except (EvalframeError, ValueError):
            raise error from None


# ---------------------------------------------------------------- the second, line-wise read


def _records(path: Path) -> Iterator[tuple[int, dict]]:
    with _open(path) as handle:
        for number, raw in enumerate(handle, 1):
            if raw.strip():
                record = json.loads(raw.removeprefix(b"\xef\xbb\xbf"))
                if not isinstance(record, dict):
                    raise ValueError(f"line {number} is not a JSON object")
                yield number, record


def _sanitized(value: object) -> object:
    """lm-eval's ``sanitize_list``: every leaf as its Python ``str`` (nulls stay null)."""
    if isinstance(value, list):
        return [_sanitized(item) for item in value]
    return None if value is None else str(value)


def _argument_dict(arguments: object) -> object:
    """The list form of ``arguments`` as lm-eval 0.4.3+ writes it, when it holds non-strings."""
    if not isinstance(arguments, list):
        return arguments
    if all(isinstance(leaf, str) for arg in arguments for leaf in _as_list(arg)):
        return arguments
    return {
        f"gen_args_{i}": {f"arg_{j}": item for j, item in enumerate(_as_list(arg))}
        for i, arg in enumerate(arguments)
    }


def _as_list(value: object) -> list:
    return value if isinstance(value, list) else [value]


def _read_normalized(path: Path) -> pl.DataFrame:
    """The file read line by line, its responses, arguments, targets and per-document metric
    values written as lm-eval 0.4.13 writes them, then read exactly."""
    records = [record for _, record in _records(path)]
    entry_kinds = {
        isinstance(entry, list)
        for record in records
        for entry in _as_list(record.get("filtered_resps"))
    }
    wrap = entry_kinds == {True, False}
    singles = sorted({str(record.get("filter")) for record in records if _single(record)})
    target_types = {type(record.get("target")) for record in records} - {type(None)}
    for record in records:
        if "arguments" in record:
            record["arguments"] = _argument_dict(record["arguments"])
        for key in ("resps", "filtered_resps"):
            if key in record:
                record[key] = _sanitized(record[key])
        if wrap and isinstance(record.get("filtered_resps"), list):
            record["filtered_resps"] = [
                entry if isinstance(entry, list) else [entry] for entry in record["filtered_resps"]
            ]
        if len(target_types) > 1 and record.get("target") is not None:
            record["target"] = str(record["target"])
        for metric in record.get("metrics") or ():
            value = record.get(metric)
            if isinstance(value, list) and len({type(leaf) for leaf in _leaves(value)}) > 1:
                record[metric] = json.dumps(value, ensure_ascii=False)
    if wrap:
        warnings.warn(
            f"{str(path)!r}: the filtered responses are single answers on some lines (filter "
            f"{', '.join(map(repr, singles))}) and lists on others; every prediction is read as "
            "a list (a single answer as a one-item list)",
            stacklevel=2,
        )
    with tempfile.TemporaryDirectory() as folder:
        copy = Path(folder) / "samples.jsonl"
        with open(copy, "w", encoding="utf-8") as handle:
            for record in records:
                handle.write(json.dumps(record, ensure_ascii=False) + "\n")
        return read_jsonl(copy, compressed=False)


def _single(record: dict) -> bool:
    return any(not isinstance(entry, list) for entry in _as_list(record.get("filtered_resps")))


def _leaves(value: object) -> Iterator[object]:
    if isinstance(value, list):
        for item in value:
            yield from _leaves(item)
    else:
        yield value


# ---------------------------------------------------------------- mapping


def _fail(path: Path, message: str) -> EvalframeError:
    return EvalframeError(f"cannot read {str(path)!r} as lm-eval samples: {message}")


def _first_row(frame: pl.DataFrame, bad: pl.Expr) -> tuple[int, int]:
    """How many rows ``bad`` marks, and the first of them (0-based)."""
    marked = frame.select(bad.fill_null(False).arg_true())
    column = marked.to_series()
    return len(column), (int(column[0]) if len(column) else -1)


def _check(frame: pl.DataFrame, bad: pl.Expr, path: Path, what: str) -> None:
    count, first = _first_row(frame, bad)
    if count:
        raise _fail(path, f"{what} on {count} row(s), first row {first} (line {first + 1})")


def _metric_names(raw: pl.DataFrame) -> list[str]:
    if "metrics" in raw.columns and raw.schema["metrics"] == pl.List(pl.String):
        names = raw.get_column("metrics").explode().drop_nulls().unique(maintain_order=True)
        return [name for name in names if name in raw.columns and name not in KNOWN]
    return [name for name in raw.columns if name not in KNOWN]


def _kind(raw: pl.DataFrame, path: Path) -> str:
    """``"choice"`` (log-likelihood requests), ``"generate"`` or ``"rolling"``."""
    dtype = raw.schema["arguments"]
    if isinstance(dtype, pl.Struct):
        requests = [field for field in dtype.fields if field.name.startswith("gen_args_")]
        if requests and isinstance(requests[0].dtype, pl.Struct):
            arguments = {field.name: field.dtype for field in requests[0].dtype.fields}
            second = arguments.get("arg_1")
            if "arg_0" in arguments and second is None:
                return "rolling"
            if second == pl.String:
                return "choice"
            if isinstance(second, pl.Struct):
                return "generate"
    elif dtype == pl.List(pl.List(pl.String)):
        sizes = set(
            raw.select(pl.col("arguments").list.eval(pl.element().list.len()))
            .to_series()
            .explode()
            .drop_nulls()
        )
        if sizes == {2}:
            return "choice"
        if sizes == {1}:
            return "rolling"
    raise _fail(
        path,
        f"key 'arguments' is {dtype}; expected lm-eval's requests: "
        "{'gen_args_0': {'arg_0': context, 'arg_1': continuation or generation kwargs}, ...} "
        "or a list of [context, continuation] lists",
    )


def _requests(raw: pl.DataFrame) -> tuple[pl.Expr, pl.Expr]:
    """Per row, the list of request contexts and the list of continuations."""
    arguments = pl.col("arguments")
    dtype = raw.schema["arguments"]
    if isinstance(dtype, pl.Struct):
        names = sorted(
            (field.name for field in dtype.fields if re.fullmatch(r"gen_args_\d+", field.name)),
            key=lambda name: int(name.rsplit("_", 1)[1]),
        )

        def gather(part: str) -> pl.Expr:
            items = [arguments.struct.field(name).struct.field(part) for name in names]
            return pl.concat_list(items).list.drop_nulls()

        contexts, continuations = gather("arg_0"), gather("arg_1")
    else:
        contexts = arguments.list.eval(pl.element().list.get(0, null_on_oob=True))
        continuations = arguments.list.eval(pl.element().list.get(1, null_on_oob=True))
    absent = arguments.is_null()
    return (
        pl.when(absent).then(None).otherwise(contexts),
        pl.when(absent).then(None).otherwise(continuations),
    )


def _delimiter(path: Path, task: str | None) -> str:
    results = results_for(path)
    configs = results.get("configs") if results else None
    config = configs.get(task) if isinstance(configs, dict) and task else None
    value = config.get("target_delimiter") if isinstance(config, dict) else None
    return value if isinstance(value, str) else DELIMITER


def gold_index(target: pl.Expr, choices: pl.Expr, n_choices: int, *, as_list: bool) -> pl.Expr:
    """The gold choice(s) from lm-eval's written ``target`` string.

    As the harness reads a target (``ConfigurableTask.doc_to_target``, ``process_results``):
    digits are an index (``"2"``: the harness turns a digit string into an int), a list of
    integers is several golds (``"[0, 2]"``), any other string is the index of the first choice
    equal to it (null when none is). One departure: digits that are out of range but equal
    to a choice are that choice (a template target ``{{choices[label]}}`` whose choices are
    numbers; lm-eval reads ``"4"`` as index 4 and scores the row wrong). ``n_choices`` is the
    largest number of choices; ``as_list`` gives ``list[int]`` for every row.

    >>> frame = pl.DataFrame({"target": ["1", "Rome", "[0, 2]", "9", "x"],
    ...                       "choices": [["a", "b"], ["Paris", "Rome"], ["a", "b", "c"],
    ...                                   ["7", "9"], ["a"]]})
    >>> frame.select(gold_index(pl.col("target"), pl.col("choices"), 3, as_list=True)
    ...              ).to_series().to_list()
    [[1], [1], [0, 2], [1], None]
    """
    matches = [
        pl.when(choices.list.get(i, null_on_oob=True) == target).then(pl.lit(i, pl.Int64))
        for i in range(n_choices)
    ]
    by_text = pl.coalesce(matches) if matches else pl.lit(None, pl.Int64)
    digits = target.str.contains(r"^[0-9]+$")
    number = pl.when(digits).then(target.str.to_integer(strict=False))
    in_range = number < choices.list.len()
    single = (
        pl.when(digits & (in_range | by_text.is_null()))
        .then(number)
        .when(digits)
        .then(by_text)
        .otherwise(by_text)
    )
    if not as_list:
        return single
    several = pl.when(target.str.contains(_LIST_OF_INTS)).then(target)
    return (
        pl.when(target.str.contains(_LIST_OF_INTS))
        .then(several.str.json_decode(pl.List(pl.Int64)))
        .when(single.is_not_null())
        .then(pl.concat_list(single))
    )


def _choice_columns(raw: pl.DataFrame, path: Path, task: str | None) -> list[pl.Expr]:
    contexts, continuations = _requests(raw)
    responses = pl.col("filtered_resps")
    dtype = raw.schema["filtered_resps"]
    if dtype != pl.List(pl.List(pl.String)):
        raise _fail(
            path,
            f"key 'filtered_resps' is {dtype}; a log-likelihood task's filtered responses are "
            "lists of [log-likelihood, is_greedy] strings per request",
        )
    texts = responses.list.eval(pl.element().list.get(0, null_on_oob=True))
    flags = responses.list.eval(pl.element().list.get(1, null_on_oob=True))
    mutual = (
        pl.col("metrics").list.contains("acc_mutual_info")
        if "metrics" in raw.columns and raw.schema["metrics"] == pl.List(pl.String)
        else pl.lit(False)
    )
    delimiter = _delimiter(path, task)
    work = raw.select(
        contexts.alias("contexts"),
        continuations.alias("continuations"),
        texts.alias("texts"),
        flags.alias("flags"),
        texts.list.eval(pl.element().cast(pl.Float64, strict=False)).alias("logprobs"),
        flags.list.eval(
            pl.element().replace_strict(
                {"True": True, "False": False}, default=None, return_dtype=pl.Boolean
            )
        ).alias("greedy"),
        responses.list.eval(pl.element().list.len()).list.eval(pl.element() != 2).list.any()
        .alias("not_pairs"),
        mutual.fill_null(False).alias("mutual"),
    )  # fmt: skip
    length = pl.col("continuations").list.len()
    _check(work, pl.col("not_pairs"), path, "a filtered response is not [log-likelihood, "
           "is_greedy]")  # fmt: skip
    _check(
        work,
        pl.col("logprobs").list.len() != length,
        path,
        "'filtered_resps' and 'arguments' hold different numbers of requests",
    )
    _check(
        work,
        pl.col("logprobs").list.drop_nulls().list.len()
        != pl.col("texts").list.drop_nulls().list.len(),
        path,
        "a log-likelihood in 'filtered_resps' is not a number",
    )
    _check(
        work,
        pl.col("greedy").list.drop_nulls().list.len()
        != pl.col("flags").list.drop_nulls().list.len(),
        path,
        "an is_greedy flag in 'filtered_resps' is not 'True' or 'False'",
    )
    half = pl.when(pl.col("mutual") & (length % 2 == 0)).then(length // 2).otherwise(length)
    strip = pl.element().str.strip_prefix(delimiter) if delimiter else pl.element()
    work = work.with_columns(
        pl.col("continuations").list.head(half).list.eval(strip).alias("choices"),
        pl.col("logprobs").list.head(half).alias("choice_logprobs"),
        pl.col("greedy").list.head(half).alias("is_greedy"),
        pl.when(pl.col("mutual") & (length % 2 == 0))
        .then(pl.col("logprobs").list.slice(half))
        .alias("unconditioned_logprobs"),
        (pl.col("contexts").list.head(half).list.n_unique() > 1).alias("multiple_input"),
    )
    n_choices = int(work.get_column("choices").list.len().max() or 0)
    target = pl.col("target")
    target_dtype = raw.schema["target"]
    if target_dtype == pl.String:
        as_list = bool(raw.select(target.str.contains(_LIST_OF_INTS).any()).item())
        gold = gold_index(target, pl.col("choices"), n_choices, as_list=as_list)
    elif target_dtype.is_integer() or target_dtype == pl.List(pl.Int64):
        gold = target.cast(pl.Int64) if target_dtype.is_integer() else target
    else:
        raise _fail(
            path,
            f"key 'target' is {target_dtype}; a multiple-choice target is a choice's index, a "
            "list of indices or a choice's text",
        )
    columns = [
        pl.lit(work.get_column("choices")).alias("choices"),
        pl.lit(work.get_column("choice_logprobs")).alias("choice_logprobs"),
        pl.lit(work.get_column("is_greedy")).alias("is_greedy"),
    ]
    golds = raw.with_columns(choices=work.get_column("choices")).select(gold).to_series()
    multiple = work.get_column("multiple_input").fill_null(False)
    golds = pl.select(pl.when(pl.lit(multiple)).then(None).otherwise(pl.lit(golds))).to_series()
    columns.append(pl.lit(golds).alias("gold_index"))
    if work.get_column("mutual").any():
        columns.append(pl.lit(work.get_column("unconditioned_logprobs")).alias(
            "unconditioned_logprobs"))  # fmt: skip
    if work.height and (work.get_column("logprobs").list.len() == 1).all():
        columns.append(pl.lit(work.get_column("logprobs").list.first()).alias("loglikelihood"))
    return columns


def _generate_columns(raw: pl.DataFrame, path: Path) -> list[pl.Expr]:
    responses = pl.col("filtered_resps")
    dtype = raw.schema["filtered_resps"]
    if dtype not in (pl.List(pl.String), pl.List(pl.List(pl.String)), pl.List(pl.Null)):
        raise _fail(
            path,
            f"key 'filtered_resps' is {dtype}; a generation task's filtered responses are a "
            "list holding the answer (a string, or a list of strings)",
        )
    _check(raw, responses.list.len() > 1, path, "'filtered_resps' holds several requests")
    target = pl.col("target")
    target_dtype = raw.schema["target"]
    if target_dtype == pl.String or target_dtype == pl.List(pl.String):
        gold = target
    elif target_dtype.is_numeric() or target_dtype == pl.Null:
        gold = target.cast(pl.String)
    else:
        gold = target.cast(pl.List(pl.String))
    return [
        responses.list.get(0, null_on_oob=True).alias("prediction"),
        gold.alias("gold"),
    ]


def _rolling_columns(raw: pl.DataFrame, path: Path) -> list[pl.Expr]:
    responses = pl.col("filtered_resps")
    first = responses.list.get(0, null_on_oob=True)
    value = first.cast(pl.Float64, strict=False)
    _check(
        raw,
        value.is_null() & first.is_not_null(),
        path,
        "the rolling log-likelihood in 'filtered_resps' is not a number",
    )
    return [value.alias("loglikelihood"), pl.col("target").cast(pl.String).alias("text")]


def _mapped(raw: pl.DataFrame, path: Path) -> pl.DataFrame:
    missing = [key for key in REQUIRED if key not in raw.columns]
    if missing:
        raise _fail(
            path,
            f"no key {', '.join(map(repr, missing))} on any of its {raw.height} line(s); lm-eval "
            f"writes {', '.join(KNOWN[:8])} and one key per metric on every line "
            "(lm_eval --log_samples)",
        )
    where = line_locator(path, compressed=is_gzip(path))
    for key in REQUIRED:
        absent = raw.get_column(key).is_null()
        if absent.any():
            raise _fail(
                path,
                f"{where(int(absent.arg_max() or 0))} has no {key!r} ({int(absent.sum())} "
                f"line(s) in all); every line of a samples file is one document's record "
                f"with {', '.join(map(repr, REQUIRED))}",
            )
    task = task_name(path)
    kind = _kind(raw, path)
    if kind == "choice":
        mapped = _choice_columns(raw, path, task)
    elif kind == "generate":
        mapped = _generate_columns(raw, path)
    else:
        mapped = _rolling_columns(raw, path)
    metrics = _metric_names(raw)
    keys = [
        pl.lit(task, pl.String).alias("task"),
        pl.lit(model_name(path), pl.String).alias("model"),
        pl.col("doc_id").alias("sample_id"),
        (pl.col("filter") if "filter" in raw.columns else pl.lit(None, pl.String)).alias("filter"),
    ]
    harness = [pl.col(name).alias(f"harness.{name}") for name in metrics]
    rest = [pl.col(name) for name in raw.columns if name not in {"doc_id", "filter", *metrics}]
    columns = [*keys, *mapped, *harness, *rest]
    names = [column.meta.output_name() for column in columns]
    doubled = sorted({name for name in names if names.count(name) > 1})
    if doubled:
        raise _fail(path, f"its key(s) {doubled} clash with the columns evalframe adds")
    return raw.select(columns)


#: This module's layouts, registered in the table of formats.
ADAPTERS = register(
    __name__,
    Adapter(
        name="lm_eval",
        harness="lm-evaluation-harness",
        files="samples_<task>_<date>.jsonl (lm_eval --log_samples)",
        expects="JSON lines with 'doc_id', 'doc', 'target', 'arguments', 'resps' and "
        "'filtered_resps'",
        detect=_is_samples,
        read=read_samples,
        doc="docs/harnesses/lm-eval.md",
        keys=KEYS,
        fields=("doc_id", "doc", "target", "arguments", "resps", "filtered_resps"),
    ),
)
