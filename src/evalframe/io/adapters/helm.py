"""HELM (crfm-helm) run folders: the request states of ``scenario_state.json``, one row each.

``helm-run`` writes one folder per run, ``benchmark_output/runs/<suite>/<run name>/``, holding
``run_spec.json``, ``scenario.json``, ``scenario_state.json``, ``per_instance_stats.json`` and
``stats.json`` (``helm.benchmark.runner.Runner.run_one``; every dataclass written by
``asdict_without_nones``, so a field that is ``None`` is absent). ``scenario_state.json`` is
one object: ``adapter_spec`` and ``request_states``, a list of ``RequestState`` records
(``instance``, ``train_trial_index``, ``output_mapping``, ``request``, ``result``,
``num_train_instances``, ``prompt_truncated``, ``num_conditioning_tokens``, ``annotations``).

Layout ``helm`` reads the folder (or its ``scenario_state.json``) as one row per request state,
in the file's order:

- ``sample_id`` (``instance.id``), ``model`` (``adapter_spec.model``, else the request's),
  ``task`` (the run's name without its ``model=`` argument, see
  :func:`~evalframe.io.adapters.helm_stats.task_name`), ``run`` (the run's name: ``run_spec.json``
  beside, else the folder's name) and ``method`` (``adapter_spec.method``);
- ``gold``: the texts of the references tagged ``correct`` (null when none is);
- ``prediction``: the text HELM scores (``evaluate_reference_metrics.compute_reference_metrics``):
  the completion with the highest ``logprob`` (the first of equals), stripped (``str.strip``) and,
  when the request state has an ``output_mapping`` (multiple choice), mapped through it after
  ``adapter_spec.output_mapping_pattern``; null (a missing answer) when the request has no
  result or no completion, or the answer maps to no choice. ``predictions`` holds every
  completion read so, in HELM's order; ``completion`` the chosen completion's text as written;
- ``train_trial_index``, ``split``, ``sub_split``, ``perturbation`` (the perturbation's name,
  null for an original instance) and ``perturbation_details`` (its whole description, JSON);
- ``input`` (``instance.input.text``; HELM before 0.2.0 wrote the text itself, as it did a
  reference's output), ``references`` and ``reference_tags`` (every reference's text and tags,
  in order), ``prompt`` (``request.prompt``), ``num_train_instances``, ``prompt_truncated``,
  ``num_conditioning_tokens``;
- as JSON text: ``output_mapping``, ``request`` (without the prompt), ``result`` (without the
  completions), ``completions`` (as written, tokens included), ``annotations``, and
  ``reference_details`` (the references as written, when one holds more than a text and tags:
  a code reference's test cases); every other field (``extra_data``, ``contrast_inputs``,
  ``request_mode``, an input's ``messages`` as ``input_messages``...) under its own name, JSON
  text when it is nested;
- ``harness.<stat>`` for every stat of ``per_instance_stats.json`` beside the file: the stat's
  ``sum / count`` for the row's instance key (instance id, train trial, perturbation). A
  perturbed copy of an instance shares its id and has its own key, so each row gets the stats
  HELM computed on that row's own input and completion.

A run must have one request state per instance key: runs whose request states are per
reference (``multiple_choice_separate_original``, ``multiple_choice_separate_calibrated``,
``ranking_binary``: ``reference_index`` is set) or per window (``language_modeling``) are
refused, as is an instance key given twice. A stat of ``per_instance_stats.json`` whose key has
no request state is an error.
"""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path
from typing import Any

import polars as pl

from evalframe.errors import EvalframeError
from evalframe.io._common import short
from evalframe.io._duplicates import check_policy as check_duplicates_policy
from evalframe.io._duplicates import unique_samples
from evalframe.io.adapters._adapter import Adapter
from evalframe.io.adapters._probe import CHUNK, Probe
from evalframe.io.adapters.helm_stats import (
    DOC,
    Key,
    beside,
    described_key,
    instance_stats,
    is_int,
    json_text,
    kind,
    load_json,
    perturbation_key,
    run_of,
    task_name,
)
from evalframe.io.adapters.table import register

__all__ = ["ADAPTERS", "read_run", "scored_texts"]

WHAT = "HELM request states (format 'helm')"
#: The columns that name one request state.
SAMPLE_KEY = ("sample_id", "train_trial_index", "perturbation")
CORRECT = "correct"
#: Adaptation methods whose request states are not one per instance key.
PER_REFERENCE = (
    "multiple_choice_separate_original", "multiple_choice_separate_calibrated", "ranking_binary",
)  # fmt: skip
PER_WINDOW = ("language_modeling",)

#: The columns of every read, first, in this order.
SCHEMA = {
    "sample_id": pl.String,
    "model": pl.String,
    "task": pl.String,
    "prediction": pl.String,
    "gold": pl.List(pl.String),
    "train_trial_index": pl.Int64,
    "split": pl.String,
    "sub_split": pl.String,
    "perturbation": pl.String,
    "input": pl.String,
    "references": pl.List(pl.String),
    "reference_tags": pl.List(pl.List(pl.String)),
    "completion": pl.String,
    "predictions": pl.List(pl.String),
}
#: The columns after the ``harness.`` ones, in this order.
TAIL = {
    "prompt": pl.String,
    "num_train_instances": pl.Int64,
    "prompt_truncated": pl.Boolean,
    "num_conditioning_tokens": pl.Int64,
    "output_mapping": pl.String,
    "perturbation_details": pl.String,
    "request": pl.String,
    "result": pl.String,
    "completions": pl.String,
    "annotations": pl.String,
    "run": pl.String,
    "method": pl.String,
}
#: The request state's and instance's fields that have columns above.
STATE_FIELDS = (
    "instance", "train_trial_index", "output_mapping", "request", "result", "num_train_instances",
    "prompt_truncated", "num_conditioning_tokens", "annotations",
)  # fmt: skip
INSTANCE_FIELDS = ("input", "references", "split", "sub_split", "id", "perturbation")
#: How far detection reads for ``adapter_spec`` at the start of the file before parsing it all.
MAX_HEAD = 1 << 24
_FIRST_KEY = re.compile(r'\s*\{\s*"adapter_spec"\s*:\s*')
_NEXT_KEY = re.compile(r'\s*,\s*"request_states"\s*:\s*\[')


# ---------------------------------------------------------------- detection


def _is_scenario_state(probe: Probe) -> bool:
    """``adapter_spec`` (with ``method`` and ``model``) then ``request_states`` (a list).

    HELM writes ``adapter_spec`` first: it is parsed from the head of the file; a file in
    another key order is parsed whole.
    """
    if probe.top != "object":
        return False
    head = _leading_adapter_spec(probe)
    if head is None:
        value = probe.value
        if not isinstance(value, dict):
            return False
        spec, follows = value.get("adapter_spec"), isinstance(value.get("request_states"), list)
    else:
        spec, follows = head
    return follows and isinstance(spec, dict) and {"method", "model"} <= set(spec)


def _leading_adapter_spec(probe: Probe) -> tuple[object, bool] | None:
    """The first key's value when it is ``adapter_spec`` followed by ``request_states`` (a
    list), as HELM writes them; ``None`` when the file starts otherwise or ``adapter_spec`` is
    too long to look at."""
    opener = gzip.open if probe.path.name.lower().endswith(".gz") else open
    decoder = json.JSONDecoder()
    data = b""
    with opener(probe.path, "rb") as handle:
        while True:
            chunk = handle.read(CHUNK if not data else len(data))
            data += chunk
            more = bool(chunk) and len(data) <= MAX_HEAD
            text = data.removeprefix(b"\xef\xbb\xbf").decode("utf-8", errors="ignore")
            start = _FIRST_KEY.match(text)
            if start is None:
                if more and len(text) < 64:  # too short yet to hold the first key
                    continue
                return None
            try:
                spec, end = decoder.raw_decode(text, start.end())
            except ValueError:
                if more:
                    continue
                return None
            if _NEXT_KEY.match(text, end) is not None:
                return spec, True
            if more and len(text) - end < 64:  # too short yet to hold the next key
                continue
            return None


# ---------------------------------------------------------------- reading


def read_run(path: Path, *, duplicates: str = "error") -> pl.LazyFrame:
    """A HELM ``scenario_state.json`` as one row per request state (see the module docstring),
    joined with the ``per_instance_stats.json`` beside it.

    A request state repeated (instance id, train trial, perturbation) is an error naming both
    positions, unless ``duplicates`` is ``"first"`` or ``"last"``.

    >>> import json, tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp()) / "demo:task=qa,model=org_m"
    >>> folder.mkdir()
    >>> state = {"instance": {"input": {"text": "Capital of France?"},
    ...     "references": [{"output": {"text": "Paris"}, "tags": ["correct"]}],
    ...     "split": "test", "id": "id4"}, "train_trial_index": 0,
    ...     "request": {"model": "org/m", "prompt": "Q: Capital of France?\\nA:"},
    ...     "result": {"success": True, "completions": [{"text": " Paris.", "logprob": -0.2,
    ...     "tokens": []}], "cached": True}, "num_train_instances": 0,
    ...     "prompt_truncated": False, "num_conditioning_tokens": 0}
    >>> _ = (folder / "scenario_state.json").write_text(json.dumps(
    ...     {"adapter_spec": {"method": "generation", "model": "org/m"},
    ...      "request_states": [state]}))
    >>> stat = {"name": {"name": "exact_match", "split": "test"}, "count": 1, "sum": 0}
    >>> _ = (folder / "per_instance_stats.json").write_text(json.dumps(
    ...     [{"instance_id": "id4", "train_trial_index": 0, "stats": [stat]}]))
    >>> read_run(folder / "scenario_state.json").select(
    ...     "sample_id", "task", "prediction", "gold", "harness.exact_match").collect().rows()
    [('id4', 'demo:task=qa', 'Paris.', ['Paris'], 0.0)]
    """
    state = load_json(path, WHAT)
    if not isinstance(state, dict) or not isinstance(state.get("adapter_spec"), dict):
        raise EvalframeError(
            f"cannot read {str(path)!r} as {WHAT}: it holds {kind(state)} without "
            "'adapter_spec'; expected HELM's scenario state, one object with 'adapter_spec' "
            "and 'request_states'"
        )
    spec, states = state["adapter_spec"], state.get("request_states")
    if not isinstance(states, list):
        raise EvalframeError(
            f"cannot read {str(path)!r} as {WHAT}: 'request_states' is {kind(states)}; "
            "expected a list of request states"
        )
    method = spec.get("method")
    if method in PER_WINDOW:
        raise EvalframeError(
            f"cannot read {str(path)!r} as {WHAT}: the run's method is {method!r}, whose "
            "request states are windows of a document, several per instance; evalframe reads "
            "runs with one request state per instance, train trial and perturbation"
        )
    pattern = spec.get("output_mapping_pattern")
    try:
        re.compile(pattern or "")
    except (TypeError, re.error) as error:
        raise EvalframeError(
            f"cannot read {str(path)!r} as {WHAT}: adapter_spec.output_mapping_pattern "
            f"{short(pattern, 60)} is not a regular expression ({error})"
        ) from error
    run, run_model = run_of(path)
    check_duplicates_policy(duplicates)
    rows = [_row(path, state, position, spec) for position, state in enumerate(states, 1)]
    if duplicates == "error":
        _check_unique(path, rows)
    frame = _frame(path, rows, spec, run, run_model)
    stats_path = beside(path, "per_instance_stats.json")
    if stats_path is not None:
        frame = _joined(frame, rows, stats_path)
    if duplicates == "error":
        return frame.lazy()
    return unique_samples(
        frame, list(SAMPLE_KEY), duplicates=duplicates, source=str(path), what=WHAT,
        locate=lambda row: f"request state {row + 1}", optional=("perturbation",),
    )


def _row(path: Path, state: object, position: int, spec: dict[str, Any]) -> dict[str, Any]:
    """One request state's values; ``__key`` and ``__position`` for the checks."""
    where = f"request state {position}"
    if not isinstance(state, dict):
        raise EvalframeError(
            f"cannot read {str(path)!r} as {WHAT}: {where} is {kind(state)} "
            f"({short(state, 40)}); expected an object"
        )
    if state.get("reference_index") is not None:
        method = spec.get("method")
        raise EvalframeError(
            f"cannot read {str(path)!r} as {WHAT}: {where} has reference_index "
            f"{short(state['reference_index'], 20)} (method {method!r}: one request per "
            "reference); evalframe reads runs with one request state per instance, train "
            "trial and perturbation"
        )
    instance = _field(path, state, "instance", dict, "an object", where)
    trial = state.get("train_trial_index")
    if not is_int(trial):
        raise EvalframeError(
            f"cannot read {str(path)!r} as {WHAT}: {where} has 'train_trial_index' = "
            f"{short(trial, 40)}; expected an integer"
        )
    sample_id = _field(path, instance, "id", str, "a string", f"{where}, instance")
    perturbation = instance.get("perturbation")
    if perturbation is not None and not isinstance(perturbation, dict):
        raise EvalframeError(
            f"cannot read {str(path)!r} as {WHAT}: {where} has instance.perturbation = "
            f"{short(perturbation, 40)}; expected an object"
        )
    texts, tags = _references(path, instance, where)
    gold = [text for text, tag in zip(texts, tags, strict=True) if CORRECT in tag]
    request = state.get("request")
    if request is not None and not isinstance(request, dict):
        raise EvalframeError(
            f"cannot read {str(path)!r} as {WHAT}: {where} has 'request' = {short(request, 40)}; "
            "expected an object"
        )
    request = request or {}
    chosen, predictions, completions = _completions(path, state, spec, where)
    mapping = state.get("output_mapping")
    row: dict[str, Any] = {
        "__key": (sample_id, trial, perturbation_key(perturbation)),
        "__position": position,
        "sample_id": sample_id,
        "request_model": request.get("model"),
        "prediction": predictions[0] if predictions else None,
        "gold": gold or None,
        "train_trial_index": trial,
        "split": _text(path, instance, "split", where),
        "sub_split": _text(path, instance, "sub_split", where),
        "perturbation": None if perturbation is None else perturbation.get("name"),
        "input": _input_text(path, instance, where),
        "references": texts,
        "reference_tags": tags,
        "completion": chosen,
        "predictions": predictions if completions is not None else None,
        "prompt": request.get("prompt"),
        "num_train_instances": state.get("num_train_instances"),
        "prompt_truncated": state.get("prompt_truncated"),
        "num_conditioning_tokens": state.get("num_conditioning_tokens"),
        "output_mapping": json_text(mapping),
        "perturbation_details": json_text(perturbation),
        "request": json_text({k: v for k, v in request.items() if k != "prompt"} or None),
        "result": _result_text(state.get("result")),
        "completions": json_text(completions),
        "annotations": json_text(state.get("annotations")),
    }
    extra = {key: value for key, value in state.items() if key not in STATE_FIELDS}
    extra.update(
        {key: value for key, value in instance.items() if key not in INSTANCE_FIELDS}
    )
    given = instance.get("input")
    if isinstance(given, dict):
        extra.update({f"input_{key}": value for key, value in given.items() if key != "text"})
    if any(_has_details(reference) for reference in instance.get("references") or []):
        extra["reference_details"] = instance["references"]
    for key, value in extra.items():
        if key in row or key in SCHEMA or key in TAIL:
            raise EvalframeError(
                f"cannot read {str(path)!r} as {WHAT}: {where} has a field {key!r}, the name of "
                "a column the layout gives to another field; expected HELM's fields"
            )
        row[key] = value
    return row


def _field(path: Path, owner: dict[str, Any], key: str, kind_: type, expected: str, where: str):
    value = owner.get(key)
    if not isinstance(value, kind_):
        raise EvalframeError(
            f"cannot read {str(path)!r} as {WHAT}: {where} has {key!r} = {short(value, 40)}; "
            f"expected {expected}"
        )
    return value


def _text(path: Path, owner: dict[str, Any], key: str, where: str) -> str | None:
    value = owner.get(key)
    if value is not None and not isinstance(value, str):
        raise EvalframeError(
            f"cannot read {str(path)!r} as {WHAT}: {where} has instance.{key} = "
            f"{short(value, 40)}; expected a string"
        )
    return value


def _input_text(path: Path, instance: dict[str, Any], where: str) -> str | None:
    """``instance.input.text`` (HELM before 0.2.0 wrote the text itself as ``input``)."""
    given = instance.get("input")
    if given is None or isinstance(given, str):
        return given
    if not isinstance(given, dict) or not isinstance(given.get("text", ""), str):
        raise EvalframeError(
            f"cannot read {str(path)!r} as {WHAT}: {where} has instance.input = "
            f"{short(given, 40)}; expected an object with a string 'text'"
        )
    return given.get("text")


def _references(
    path: Path, instance: dict[str, Any], where: str
) -> tuple[list[str], list[list[str]]]:
    references = instance.get("references", [])
    if not isinstance(references, list):
        raise EvalframeError(
            f"cannot read {str(path)!r} as {WHAT}: {where} has instance.references = "
            f"{short(references, 40)}; expected a list"
        )
    texts, tags = [], []
    for number, reference in enumerate(references, 1):
        output = reference.get("output") if isinstance(reference, dict) else None
        # HELM before 0.2.0 wrote the text itself as a reference's output
        text = output.get("text", "") if isinstance(output, dict) else output
        labels = reference.get("tags", []) if isinstance(reference, dict) else None
        if (
            not isinstance(text, str)
            or not isinstance(labels, list)
            or not all(isinstance(label, str) for label in labels)
        ):
            raise EvalframeError(
                f"cannot read {str(path)!r} as {WHAT}: {where}, reference {number} is "
                f"{short(reference, 60)}; expected {{'output': {{'text': ...}}, 'tags': [...]}}"
            )
        texts.append(text)
        tags.append(labels)
    return texts, tags


def _has_details(reference: dict[str, Any]) -> bool:
    """Whether a reference holds more than its output text and tags (a code reference's test
    cases, an output's media)."""
    output = reference.get("output")
    return bool(set(reference) - {"output", "tags"}) or (
        isinstance(output, dict) and bool(set(output) - {"text"})
    )


def _completions(
    path: Path, state: dict[str, Any], spec: dict[str, Any], where: str
) -> tuple[str | None, list[str | None], list[Any] | None]:
    """The chosen completion's text, HELM's predictions in its order, the completions as
    written (``None`` without a result)."""
    result = state.get("result")
    if result is None:
        return None, [], None
    if not isinstance(result, dict) or not isinstance(result.get("completions"), list):
        raise EvalframeError(
            f"cannot read {str(path)!r} as {WHAT}: {where} has 'result' = {short(result, 60)}; "
            "expected an object with 'completions' (a list)"
        )
    completions = result["completions"]
    for number, completion in enumerate(completions, 1):
        logprob = completion.get("logprob") if isinstance(completion, dict) else None
        if (
            not isinstance(completion, dict)
            or not isinstance(completion.get("text"), str)
            or not (isinstance(logprob, int | float) and not isinstance(logprob, bool))
        ):
            raise EvalframeError(
                f"cannot read {str(path)!r} as {WHAT}: {where}, completion {number} is "
                f"{short(completion, 60)}; expected an object with 'text' (a string) and "
                "'logprob' (a number)"
            )
    ordered = sorted(completions, key=lambda completion: -completion["logprob"])
    mapping = state.get("output_mapping")
    if mapping is not None and not (
        isinstance(mapping, dict) and all(isinstance(v, str) for v in mapping.values())
    ):
        raise EvalframeError(
            f"cannot read {str(path)!r} as {WHAT}: {where} has 'output_mapping' = "
            f"{short(mapping, 60)}; expected an object of strings"
        )
    pattern = spec.get("output_mapping_pattern")
    texts = scored_texts([c["text"] for c in ordered], mapping, pattern)
    return (ordered[0]["text"] if ordered else None), texts, completions


def scored_texts(
    texts: list[str], mapping: dict[str, str] | None, pattern: str | None = None
) -> list[str | None]:
    """The texts HELM's reference metrics compare with the golds: stripped, then (multiple
    choice) mapped through ``output_mapping`` after ``output_mapping_pattern``; ``None`` where
    the answer maps to no choice.

    >>> scored_texts([" Paris. ", ""], None)
    ['Paris.', '']
    >>> scored_texts([" B", "E", "Answer: C"], {"B": "Lyon", "C": "Nice"}, r"([A-E])$")
    ['Lyon', None, 'Nice']
    """
    found: list[str | None] = []
    for text in texts:
        answer = text.strip()
        if mapping is None:
            found.append(answer)
            continue
        if pattern:
            match = re.search(pattern, answer)
            answer = "" if match is None else match.group(1) if match.groups() else match.group(0)
        found.append(mapping.get(answer))
    return found


def _result_text(result: object) -> str | None:
    if not isinstance(result, dict):
        return json_text(result)
    return json_text({key: value for key, value in result.items() if key != "completions"})


def _check_unique(path: Path, rows: list[dict[str, Any]]) -> None:
    seen: dict[Key, int] = {}
    for row in rows:
        key, position = row["__key"], row["__position"]
        if key in seen:
            raise EvalframeError(
                f"cannot read {str(path)!r} as {WHAT}: request states {seen[key]} and "
                f"{position} have the same instance key ({described_key(key)}); expected one "
                "request state per instance, train trial and perturbation"
            )
        seen[key] = position


def _frame(
    path: Path, rows: list[dict[str, Any]], spec: dict[str, Any], run: str, run_model: str | None
) -> pl.DataFrame:
    model = spec.get("model") or run_model
    values = {
        "model": [model or row["request_model"] for row in rows],
        "task": [task_name(run)] * len(rows),
        "run": [run] * len(rows),
        "method": [spec.get("method")] * len(rows),
    }
    columns: dict[str, pl.Series] = {}
    for name, dtype in {**SCHEMA, **TAIL}.items():
        given = values[name] if name in values else [row[name] for row in rows]
        columns[name] = _series(path, name, given, dtype)
    extras = dict.fromkeys(
        key for row in rows for key in row if key not in columns and not key.startswith("__")
    )
    extras.pop("request_model", None)
    for name in extras:
        columns[name] = _typed(name, [row.get(name) for row in rows])
    return pl.DataFrame(columns)


def _series(path: Path, name: str, values: list[Any], dtype: pl.DataType) -> pl.Series:
    wrong = next(
        (position for position, value in enumerate(values, 1) if not _fits(value, dtype)), None
    )
    if wrong is not None:
        field = {"prompt": "request.prompt"}.get(name, name)
        raise EvalframeError(
            f"cannot read {str(path)!r} as {WHAT}: request state {wrong} has {field!r} = "
            f"{short(values[wrong - 1], 40)}; expected {_expected(dtype)}"
        )
    return pl.Series(name, values, dtype=dtype, strict=True)


def _fits(value: object, dtype: pl.DataType) -> bool:
    if value is None:
        return True
    if dtype == pl.Int64:
        return is_int(value)
    if dtype == pl.Boolean:
        return isinstance(value, bool)
    if dtype == pl.String:
        return isinstance(value, str)
    return True


def _expected(dtype: pl.DataType) -> str:
    return {pl.Int64: "an integer", pl.Boolean: "true or false", pl.String: "a string"}.get(
        dtype, str(dtype)
    )


def _typed(name: str, values: list[object]) -> pl.Series:
    """Another field's values: text, booleans, integers or numbers as such, anything else
    (objects, lists, a mix of kinds) as JSON text."""
    kinds = {type(value) for value in values if value is not None}
    if kinds and kinds <= {str}:
        return pl.Series(name, values, dtype=pl.String)
    if kinds and kinds <= {bool}:
        return pl.Series(name, values, dtype=pl.Boolean)
    if kinds and kinds <= {int} and all(-(2**63) <= v < 2**63 for v in values if v is not None):
        return pl.Series(name, values, dtype=pl.Int64)
    if kinds and kinds <= {int, float}:
        return pl.Series(name, [None if v is None else float(v) for v in values], pl.Float64)
    return pl.Series(name, [json_text(value) for value in values], dtype=pl.String)


def _joined(frame: pl.DataFrame, rows: list[dict[str, Any]], stats_path: Path) -> pl.DataFrame:
    """``frame`` with a ``harness.<stat>`` column per stat of ``per_instance_stats.json``,
    placed before the tail columns."""
    values, names = instance_stats(stats_path)
    keys = [row["__key"] for row in rows]
    unmatched = [key for key in values if key not in set(keys)]
    if unmatched:
        raise EvalframeError(
            f"cannot read {str(stats_path)!r} as HELM per-instance stats: {len(unmatched)} "
            f"instance key(s) have no request state in the scenario state beside it, first "
            f"{described_key(unmatched[0])}; expected the stats of this run's request states"
        )
    harness = [
        pl.Series(f"harness.{name}", [values.get(key, {}).get(name) for key in keys], pl.Float64)
        for name in names
    ]
    head = [name for name in frame.columns if name in SCHEMA]
    rest = [name for name in frame.columns if name not in SCHEMA]
    return pl.concat(
        [frame.select(head), pl.DataFrame(harness), frame.select(rest)], how="horizontal"
    )


#: This module's layouts, registered in the table of formats.
ADAPTERS = register(
    __name__,
    Adapter(
        name="helm",
        harness="HELM",
        files="run folder or scenario_state.json (benchmark_output/runs/<suite>/<run>/)",
        expects="one JSON object with 'adapter_spec' (holding 'method' and 'model') and "
        "'request_states' (a list)",
        detect=_is_scenario_state,
        read=read_run,
        folder_file="scenario_state.json",
        doc=DOC,
        keys=SAMPLE_KEY,
        fields=("adapter_spec", "request_states"),
    ),
)
