"""lm-evaluation-harness ``results_<date>.json``: the harness's own aggregates, one row each.

``lm_eval --output_path out`` writes ``out/<model>/results_<date>.json`` (lm-eval 0.4.3 and
later; :class:`lm_eval.loggers.EvaluationTracker`). Its ``results`` maps each task (and group)
to keys ``"<metric>,<filter>"`` (the aggregate) and ``"<metric>_stderr,<filter>"`` (its
standard error, ``"N/A"`` where the harness has none, e.g. perplexities), next to ``configs``,
``versions``, ``n-shot``, ``higher_is_better``, ``n-samples`` and the run's ``config``.

One row per task x metric x filter: ``task``, ``metric``, ``filter``, ``value``, ``stderr``
(``"N/A"``, an empty list or an absent key: null), ``n_samples`` (``n-samples`` effective:
the documents scored, after ``--limit``) and ``n_samples_original``, ``model`` (see
:func:`model_name`), ``num_fewshot``, ``higher_is_better``, ``version``, ``alias``,
``is_group`` (the entry aggregates subtasks), ``model_source`` and ``lm_eval_version``.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from evalframe.errors import EvalframeError
from evalframe.io._source import load_json
from evalframe.io.adapters._adapter import Adapter
from evalframe.io.adapters._probe import Probe
from evalframe.io.adapters.table import register

__all__ = ["ADAPTERS", "model_name", "read_results", "results_for", "run_model"]

#: lm-eval's order of the model_args keys that name a model (``GeneralConfigTracker``).
MODEL_KEYS = ("peft", "delta", "pretrained", "model", "path", "engine")

SCHEMA = {
    "task": pl.String,
    "metric": pl.String,
    "filter": pl.String,
    "value": pl.Float64,
    "stderr": pl.Float64,
    "n_samples": pl.Int64,
    "n_samples_original": pl.Int64,
    "model": pl.String,
    "num_fewshot": pl.Int64,
    "higher_is_better": pl.Boolean,
    "version": pl.String,
    "alias": pl.String,
    "is_group": pl.Boolean,
    "model_source": pl.String,
    "lm_eval_version": pl.String,
}


def _is_results(probe: Probe) -> bool:
    if probe.top != "object" or not probe.has("results"):
        return False
    value = probe.value
    # lighteval's results files hold 'results' and 'versions' too, with 'config_general'
    return (
        isinstance(value, dict)
        and isinstance(value.get("results"), dict)
        and isinstance(value.get("configs", value.get("versions")), dict)
        and ("n-shot" in value or "versions" in value)
        and "config_general" not in value
    )


def run_model(value: dict, path: Path) -> str:
    """The model a results object names: ``model_name``, else the name lm-eval takes from
    ``config.model_args`` (``pretrained=...``), else the folder ``path`` is in.

    >>> run_model({"config": {"model_args": "pretrained=EleutherAI/pythia-14m,dtype=float"}},
    ...           Path("out/x/results.json"))
    'EleutherAI/pythia-14m'
    >>> run_model({}, Path("out/my-model/results.json"))
    'my-model'
    """
    name = value.get("model_name")
    if isinstance(name, str) and name:
        return name
    config = value.get("config")
    arguments = config.get("model_args") if isinstance(config, dict) else None
    if isinstance(arguments, dict):
        for key in MODEL_KEYS:
            if arguments.get(key) not in (None, ""):
                return str(arguments[key])
    elif isinstance(arguments, str):
        for key in MODEL_KEYS:
            if f"{key}=" in arguments:
                return arguments.split(f"{key}=", 1)[1].split(",", 1)[0]
    return path.parent.name


def _load(path: Path) -> dict:
    value = load_json(path, "lm-eval results")
    if not isinstance(value, dict) or not isinstance(value.get("results"), dict):
        raise EvalframeError(
            f"cannot read {str(path)!r} as lm-eval results: expected one JSON object with a "
            "'results' mapping of task -> {'<metric>,<filter>': value}"
        )
    return value


def results_for(samples: Path) -> dict | None:
    """The results object written by the same run as a samples file, if its folder holds one.

    The run's ``results_<date>.json`` has the date of ``samples_<task>_<date>.jsonl``; without
    it, the folder's only results file, or ``None`` when there are several or none.
    """
    date = samples.name.rsplit("_", 1)[-1].removesuffix(".gz").removesuffix(".jsonl")
    exact = samples.with_name(f"results_{date}.json")
    candidates = [exact] if exact.is_file() else sorted(samples.parent.glob("results_*.json"))
    if len(candidates) != 1:
        return None
    try:
        return _load(candidates[0])
    except EvalframeError:
        return None


def model_name(samples: Path) -> str:
    """The model of a samples file: from its run's ``results_*.json`` (:func:`run_model`),
    else from every results file in its folder when they agree, else the folder's name.

    >>> model_name(Path("out/EleutherAI__pythia-14m/samples_x_2024.jsonl"))
    'EleutherAI__pythia-14m'
    """
    value = results_for(samples)
    if value is not None:
        return run_model(value, samples)
    names = set()
    for path in sorted(samples.parent.glob("results_*.json")):
        try:
            names.add(run_model(_load(path), path))
        except EvalframeError:
            continue
    return names.pop() if len(names) == 1 else samples.parent.name


def _number(value: object, path: Path, where: str) -> float | None:
    if value is None or value == "N/A" or value == []:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise EvalframeError(
            f"cannot read {str(path)!r} as lm-eval results: {where} is {value!r}; expected a "
            "number (or 'N/A' for a standard error)"
        )
    return float(value)


def _count(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def read_results(path: Path) -> pl.LazyFrame:
    """One row per task x metric x filter of a ``results_<date>.json``.

    >>> import json, tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "results_2024-01-01T00-00-00.json"
    >>> _ = path.write_text(json.dumps({
    ...     "results": {"arc": {"alias": "arc", "acc,none": 0.5, "acc_stderr,none": 0.1}},
    ...     "versions": {"arc": 1.0}, "n-shot": {"arc": 0}, "model_name": "m",
    ...     "n-samples": {"arc": {"original": 4, "effective": 2}}}))
    >>> read_results(path).select("task", "metric", "filter", "value", "stderr", "n_samples",
    ...                           "model").collect().rows()
    [('arc', 'acc', 'none', 0.5, 0.1, 2, 'm')]
    """
    value = _load(path)
    model = run_model(value, path)
    shots = value.get("n-shot") or {}
    versions = value.get("versions") or {}
    better = value.get("higher_is_better") or {}
    counts = value.get("n-samples") or {}
    subtasks = value.get("group_subtasks") or {}
    groups = set(value.get("groups") or {}) | {name for name, sub in subtasks.items() if sub}
    source = value.get("model_source")
    version = value.get("lm_eval_version")
    _check_entries(value["results"], path)
    rows = []
    for task, entry in value["results"].items():
        if not isinstance(entry, dict):
            raise EvalframeError(
                f"cannot read {str(path)!r} as lm-eval results: results[{task!r}] is "
                f"{type(entry).__name__}; expected an object of '<metric>,<filter>' keys"
            )
        keys = [key for key in entry if "," in key]
        stderr_keys = {key for key in keys if key.split(",", 1)[0].endswith("_stderr")}
        count = counts.get(task) if isinstance(counts.get(task), dict) else {}
        task_better = better.get(task) if isinstance(better.get(task), dict) else {}
        for key in keys:
            metric, filter_name = key.split(",", 1)
            if key in stderr_keys and f"{metric.removesuffix('_stderr')},{filter_name}" in entry:
                continue
            where = f"results[{task!r}][{key!r}]"
            error_key = f"{metric}_stderr,{filter_name}"
            error = _number(entry.get(error_key), path, f"results[{task!r}][{error_key!r}]")
            number = _number(entry[key], path, where)
            rows.append(
                (
                    task, metric, filter_name, number,
                    error,
                    _count(count.get("effective")), _count(count.get("original")), model,
                    _count(shots.get(task)), task_better.get(metric),
                    None if versions.get(task) is None else str(versions.get(task)),
                    entry.get("alias"), task in groups,
                    source if isinstance(source, str) else None,
                    version if isinstance(version, str) else None,
                )
            )  # fmt: skip
    return pl.DataFrame(rows, schema=SCHEMA, orient="row").lazy()


def _check_entries(results: dict, path: Path) -> None:
    """Refuse results that hold no ``"<metric>,<filter>"`` key: not lm-eval's, which would
    read as 0 rows (a lighteval results file has ``{"acc": ...}``)."""
    entries = [entry for entry in results.values() if isinstance(entry, dict)]
    if any("," in key for entry in entries for key in entry) or not entries:
        return
    task, entry = next((t, e) for t, e in results.items() if isinstance(e, dict))
    keys = ", ".join(repr(key) for key in list(entry)[:3]) + (", ..." if len(entry) > 3 else "")
    raise EvalframeError(
        f"cannot read {str(path)!r} as lm-eval results: results[{task!r}] has keys {keys}, "
        "none of the form '<metric>,<filter>' ('acc,none') that lm-eval writes"
    )


#: This module's layouts, registered in the table of formats.
ADAPTERS = register(
    __name__,
    Adapter(
        name="lm_eval_results",
        harness="lm-evaluation-harness",
        files="results_<date>.json",
        expects="one JSON object with 'results' {task: {'<metric>,<filter>': value}} and "
        "'configs' or 'versions'",
        detect=_is_results,
        read=read_results,
        level="results",
        doc="docs/harnesses/lm-eval.md",
        fields=("results", "configs", "versions", "n-shot"),
    ),
)
