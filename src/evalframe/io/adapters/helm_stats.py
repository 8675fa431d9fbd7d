"""HELM's statistics files: ``per_instance_stats.json`` and ``stats.json`` of a run folder.

``helm-run`` (``helm.benchmark.runner.Runner.run_one``) writes, beside ``scenario_state.json``:

- ``per_instance_stats.json``: a JSON list of ``PerInstanceStats`` records, ``instance_id``,
  ``perturbation`` (absent for an original instance), ``train_trial_index`` and ``stats``.
  Every metric class of the run writes its own records, so one instance key (instance id,
  train trial, perturbation) can have several records with different stats; HELM's own
  display code merges them, and so does evalframe. Layout ``helm_instance_stats`` reads the
  file alone, one row per instance key with ``harness.<stat name>`` = the stat's ``sum /
  count`` (null when ``count`` is 0); :mod:`evalframe.io.adapters.helm` joins the same values
  onto the request states.
- ``stats.json``: a JSON list of ``Stat`` records, the run's aggregates (layout
  ``helm_stats``, level ``results``): one row per record, ``metric`` (the stat's name),
  ``split``, ``sub_split``, ``perturbation`` (its name), ``computed_on`` (``perturbed``,
  ``original`` or ``worst``), ``perturbation_details`` (the description as JSON text), HELM's
  ``count``, ``sum``, ``sum_squared``, ``min``, ``max``, ``mean``, ``variance``, ``stddev``, and
  ``value`` = ``sum / count``. HELM aggregates a stat within each train trial, then keeps the
  mean of each trial as one value: ``count`` is the number of train trials, not of instances
  (that is the ``num_instances`` stat).

A ``Stat``'s ``name`` is a ``MetricName``: ``name``, ``split``, ``sub_split`` and
``perturbation`` (a ``PerturbationDescription``: ``name``, ``robustness``, ``fairness``,
``computed_on``, ``seed`` and the perturbation's own fields). HELM writes every dataclass with
``asdict_without_nones``: a field that is ``None`` is absent. ``task``, ``run`` and ``model``
come from ``run_spec.json`` beside the file (:func:`run_of`).
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import polars as pl

from evalframe.errors import EvalframeError
from evalframe.io._common import json_kind, short
from evalframe.io._duplicates import check_policy as check_duplicates_policy
from evalframe.io.adapters._adapter import Adapter
from evalframe.io.adapters._probe import Probe
from evalframe.io.adapters.table import register

__all__ = [
    "ADAPTERS",
    "Key",
    "described_key",
    "instance_stats",
    "read_instance_stats",
    "read_stats",
    "run_of",
    "task_name",
]

DOC = "docs/harnesses/helm.md"
BOM = b"\xef\xbb\xbf"

#: The fields of HELM's ``Stat`` (``helm.benchmark.metrics.statistic``).
STAT_FIELDS = (
    "name", "count", "sum", "sum_squared", "min", "max", "mean", "variance", "stddev",
)  # fmt: skip
#: The fields of ``PerInstanceStats`` (``helm.benchmark.metrics.metric``).
RECORD_KEYS = ("instance_id", "train_trial_index", "stats")
RECORD_OPTIONAL = ("perturbation",)
#: The run-name arguments that name the model (added by HELM's ``ModelRunExpander``).
MODEL_ARGUMENTS = ("model", "model_deployment")

#: An instance key: instance id, train trial, the perturbation as canonical JSON (or None).
Key = tuple[str, int, str | None]

STATS_SCHEMA = {
    "task": pl.String,
    "model": pl.String,
    "metric": pl.String,
    "split": pl.String,
    "sub_split": pl.String,
    "perturbation": pl.String,
    "computed_on": pl.String,
    "value": pl.Float64,
    "count": pl.Int64,
    "sum": pl.Float64,
    "sum_squared": pl.Float64,
    "min": pl.Float64,
    "max": pl.Float64,
    "mean": pl.Float64,
    "variance": pl.Float64,
    "stddev": pl.Float64,
    "perturbation_details": pl.String,
    "run": pl.String,
}
INSTANCE_SCHEMA = {
    "sample_id": pl.String,
    "model": pl.String,
    "task": pl.String,
    "train_trial_index": pl.Int64,
    "perturbation": pl.String,
    "perturbation_details": pl.String,
    "run": pl.String,
}


# ---------------------------------------------------------------- shared helpers


def load_json(path: Path, what: str) -> Any:
    """The whole file parsed as JSON (gzip when the name ends in ``.gz``), or an error."""
    try:
        opener = gzip.open if path.name.lower().endswith(".gz") else open
        with opener(path, "rb") as handle:
            data = handle.read().removeprefix(BOM)
    except (OSError, EOFError) as error:
        raise EvalframeError(f"cannot read {str(path)!r} as {what}: {error}") from error
    try:
        return json.loads(data)
    except UnicodeDecodeError as error:
        raise EvalframeError(f"cannot read {str(path)!r} as {what}: not valid UTF-8") from error
    except json.JSONDecodeError as error:
        raise EvalframeError(
            f"cannot read {str(path)!r} as {what}: line {error.lineno} is not valid JSON: "
            f"{error.msg} (column {error.colno})"
        ) from error


def kind(value: object) -> str:
    """How a JSON value is named in messages (:func:`evalframe.io._common.json_kind`).

    >>> kind([1]), kind(None), kind(True), kind(2.5)
    ('a list', 'null', 'a boolean', 'a number')
    """
    return json_kind(value)


def is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def json_text(value: object) -> str | None:
    """``value`` as JSON text (non-ASCII kept), ``None`` for ``None``."""
    return None if value is None else json.dumps(value, ensure_ascii=False)


def perturbation_key(value: object) -> str | None:
    """A perturbation description as canonical JSON (keys sorted), the form keys compare in.

    >>> perturbation_key({"robustness": True, "name": "typos"})
    '{"name": "typos", "robustness": true}'
    >>> perturbation_key(None) is None
    True
    """
    return None if value is None else json.dumps(value, ensure_ascii=False, sort_keys=True)


def described_key(key: Key) -> str:
    """An instance key as messages show it.

    >>> described_key(("id7", 0, '{"name": "typos"}'))
    "instance id 'id7', train trial 0, perturbation {'name': 'typos'}"
    >>> described_key(("id7", 1, None))
    "instance id 'id7', train trial 1, perturbation none"
    """
    instance, trial, perturbation = key
    shown = "none" if perturbation is None else short(json.loads(perturbation), 120)
    return f"instance id {instance!r}, train trial {trial}, perturbation {shown}"


def beside(path: Path, name: str) -> Path | None:
    """The file ``name`` (or ``name.gz``) in ``path``'s folder, if there is one."""
    for candidate in (name, name + ".gz"):
        found = path.parent / candidate
        if found.is_file():
            return found
    return None


def task_name(run: str) -> str:
    """A HELM run name without the arguments that name the model: the task it evaluates.

    >>> task_name("mmlu:subject=anatomy,method=multiple_choice_joint,model=openai_gpt2")
    'mmlu:subject=anatomy,method=multiple_choice_joint'
    >>> task_name("boolq:model=openai_gpt2"), task_name("natural_qa")
    ('boolq', 'natural_qa')
    """
    head, colon, arguments = run.partition(":")
    if not colon:
        return run
    kept = [
        argument
        for argument in arguments.split(",")
        if argument.split("=", 1)[0].strip() not in MODEL_ARGUMENTS
    ]
    return head + (":" + ",".join(kept) if kept else "")


def run_of(path: Path) -> tuple[str, str | None]:
    """The run's name and model: ``name`` and ``adapter_spec.model`` of the ``run_spec.json``
    beside ``path``; without one, the folder's name (HELM names a run folder after its run)
    and no model."""
    spec_path = beside(path, "run_spec.json")
    if spec_path is None:
        return path.resolve().parent.name, None
    spec = load_json(spec_path, "a HELM run spec")
    name = spec.get("name") if isinstance(spec, dict) else None
    adapter_spec = spec.get("adapter_spec") if isinstance(spec, dict) else None
    model = adapter_spec.get("model") if isinstance(adapter_spec, dict) else None
    if not isinstance(name, str) or not (model is None or isinstance(model, str)):
        raise EvalframeError(
            f"cannot read {str(spec_path)!r} as a HELM run spec: expected an object with "
            "'name' (a string) and 'adapter_spec' holding 'model' (a string)"
        )
    return name, model or None


def records(path: Path, what: str) -> list[dict[str, Any]]:
    """The file's JSON list of objects, or an error naming the first record that is not one."""
    value = load_json(path, what)
    if not isinstance(value, list):
        raise EvalframeError(
            f"cannot read {str(path)!r} as {what}: it holds {kind(value)}; expected a JSON list "
            "of records ([{...}, {...}])"
        )
    for position, record in enumerate(value, 1):
        if not isinstance(record, dict):
            raise EvalframeError(
                f"cannot read {str(path)!r} as {what}: record {position} is {kind(record)} "
                f"({short(record, 40)}); expected an object"
            )
    return value


def _stat_name(path: Path, what: str, stat: object, where: str) -> dict[str, Any]:
    """A stat's ``MetricName`` after checking the stat's shape."""
    if not isinstance(stat, dict):
        raise EvalframeError(
            f"cannot read {str(path)!r} as {what}: {where} is {kind(stat)}; expected a stat "
            "object ({'name': {...}, 'count': ..., 'sum': ...})"
        )
    name = stat.get("name")
    if not isinstance(name, dict) or not isinstance(name.get("name"), str):
        raise EvalframeError(
            f"cannot read {str(path)!r} as {what}: {where} has 'name' = {short(name, 60)}; "
            "expected an object with a string 'name'"
        )
    for field in ("split", "sub_split"):
        if name.get(field) is not None and not isinstance(name[field], str):
            raise EvalframeError(
                f"cannot read {str(path)!r} as {what}: {where} has name.{field} = "
                f"{short(name[field], 40)}; expected a string"
            )
    perturbation = name.get("perturbation")
    if perturbation is not None and not isinstance(perturbation, dict):
        raise EvalframeError(
            f"cannot read {str(path)!r} as {what}: {where} has name.perturbation = "
            f"{short(perturbation, 40)}; expected an object"
        )
    count = stat.get("count")
    if not is_int(count) or count < 0:
        raise EvalframeError(
            f"cannot read {str(path)!r} as {what}: {where} has 'count' = {short(count, 40)}; "
            "expected an integer >= 0"
        )
    for field in STAT_FIELDS[2:]:
        value = stat.get(field)
        if field == "sum" and value is None:
            raise EvalframeError(
                f"cannot read {str(path)!r} as {what}: {where} has no 'sum'; every stat needs "
                "'name', 'count' and 'sum'"
            )
        if value is not None and not is_number(value):
            raise EvalframeError(
                f"cannot read {str(path)!r} as {what}: {where} has {field!r} = "
                f"{short(value, 40)}; expected a number"
            )
    return name


def stat_mean(stat: dict[str, Any]) -> float | None:
    """HELM's mean of a stat: ``sum / count``, ``None`` when it counted nothing.

    >>> stat_mean({"count": 2, "sum": 1}), stat_mean({"count": 0, "sum": 0})
    (0.5, None)
    """
    return stat["sum"] / stat["count"] if stat["count"] else None


# ---------------------------------------------------------------- per-instance stats


def instance_stats(path: Path) -> tuple[dict[Key, dict[str, float | None]], list[str]]:
    """The values of ``per_instance_stats.json`` by instance key and stat name, and the stat
    names in the order first seen.

    Records of one key are merged (each metric class writes its own); the same stat name twice
    for one key is an error naming both places. A stat whose name carries another perturbation
    than its record is an error too.
    """
    what = "HELM per-instance stats (format 'helm_instance_stats')"
    values: dict[Key, dict[str, float | None]] = {}
    places: dict[tuple[Key, str], str] = {}
    order: dict[str, None] = {}
    for position, record in enumerate(records(path, what), 1):
        key = _record_key(path, what, record, position)
        stats = record["stats"]
        found = values.setdefault(key, {})
        for number, stat in enumerate(stats, 1):
            where = f"record {position}, stat {number}"
            name = _stat_name(path, what, stat, where)
            if perturbation_key(name.get("perturbation")) != key[2]:
                raise EvalframeError(
                    f"cannot read {str(path)!r} as {what}: {where} ({name['name']!r}) has "
                    f"perturbation {short(name.get('perturbation'), 80)} but its record is "
                    f"{described_key(key)}; expected the record's perturbation"
                )
            metric = name["name"]
            first = places.get((key, metric))
            if first is not None:
                raise EvalframeError(
                    f"cannot read {str(path)!r} as {what}: stat {metric!r} of "
                    f"{described_key(key)} is given twice, at {first} and {where}; expected "
                    "one value per stat and instance key"
                )
            places[(key, metric)] = where
            found[metric] = stat_mean(stat)
            order[metric] = None
    return values, list(order)


def _record_key(path: Path, what: str, record: dict[str, Any], position: int) -> Key:
    for field in RECORD_KEYS:
        if field not in record:
            raise EvalframeError(
                f"cannot read {str(path)!r} as {what}: record {position} has no {field!r}; "
                f"every record needs {', '.join(repr(k) for k in RECORD_KEYS)}"
            )
    instance, trial, stats = (record[field] for field in RECORD_KEYS)
    perturbation = record.get("perturbation")
    checks = [
        ("instance_id", instance, isinstance(instance, str), "a string"),
        ("train_trial_index", trial, is_int(trial), "an integer"),
        ("stats", stats, isinstance(stats, list), "a list of stats"),
        ("perturbation", perturbation, perturbation is None or isinstance(perturbation, dict),
         "an object"),
    ]  # fmt: skip
    for field, value, fits, expected in checks:
        if not fits:
            raise EvalframeError(
                f"cannot read {str(path)!r} as {what}: record {position} has {field!r} = "
                f"{short(value, 40)}; expected {expected}"
            )
    return instance, trial, perturbation_key(perturbation)


def read_instance_stats(path: Path, *, duplicates: str = "error") -> pl.LazyFrame:
    """``per_instance_stats.json`` alone: one row per instance key, ``harness.<stat>`` columns.

    >>> import json, tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "per_instance_stats.json"
    >>> stat = {"name": {"name": "exact_match", "split": "test"}, "count": 1, "sum": 1}
    >>> _ = path.write_text(json.dumps([
    ...     {"instance_id": "id7", "train_trial_index": 0, "stats": [stat]},
    ...     {"instance_id": "id8", "train_trial_index": 0,
    ...      "stats": [{**stat, "count": 2, "sum": 1}]}]))
    >>> read_instance_stats(path).select("sample_id", "harness.exact_match").collect().rows()
    [('id7', 1.0), ('id8', 0.5)]
    """
    # a stat given twice for one instance key is refused by instance_stats whatever
    # ``duplicates`` says: HELM writes one record per metric class, merged into one row
    check_duplicates_policy(duplicates)
    values, names = instance_stats(path)
    run, model = run_of(path)
    keys = list(values)
    columns: dict[str, pl.Series] = {
        "sample_id": pl.Series([key[0] for key in keys], dtype=pl.String),
        "model": pl.Series([model] * len(keys), dtype=pl.String),
        "task": pl.Series([task_name(run)] * len(keys), dtype=pl.String),
        "train_trial_index": pl.Series([key[1] for key in keys], dtype=pl.Int64),
        "perturbation": pl.Series(
            [None if key[2] is None else json.loads(key[2]).get("name") for key in keys],
            dtype=pl.String,
        ),
        "perturbation_details": pl.Series([key[2] for key in keys], dtype=pl.String),
    }
    for name in names:
        columns[f"harness.{name}"] = pl.Series(
            [values[key].get(name) for key in keys], dtype=pl.Float64
        )
    columns["run"] = pl.Series([run] * len(keys), dtype=pl.String)
    return pl.DataFrame(columns).lazy()


# ---------------------------------------------------------------- stats.json


def read_stats(path: Path) -> pl.LazyFrame:
    """``stats.json`` as a results table: one row per stat (see the module docstring).

    >>> import json, tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "stats.json"
    >>> _ = path.write_text(json.dumps([{"name": {"name": "exact_match", "split": "test"},
    ...     "count": 1, "sum": 0.75, "sum_squared": 0.5625, "min": 0.75, "max": 0.75,
    ...     "mean": 0.75, "variance": 0.0, "stddev": 0.0}]))
    >>> read_stats(path).select("metric", "split", "value", "count").collect().rows()
    [('exact_match', 'test', 0.75, 1)]
    """
    what = "HELM stats (format 'helm_stats')"
    rows: dict[str, list[Any]] = {name: [] for name in STATS_SCHEMA}
    run, model = run_of(path)
    for position, stat in enumerate(records(path, what), 1):
        name = _stat_name(path, what, stat, f"record {position}")
        perturbation = name.get("perturbation")
        row = {
            "task": task_name(run),
            "model": model,
            "metric": name["name"],
            "split": name.get("split"),
            "sub_split": name.get("sub_split"),
            "perturbation": None if perturbation is None else perturbation.get("name"),
            "computed_on": None if perturbation is None else perturbation.get("computed_on"),
            "value": stat_mean(stat),
            **{field: stat.get(field) for field in STAT_FIELDS[1:]},
            "perturbation_details": json_text(perturbation),
            "run": run,
        }
        for column in STATS_SCHEMA:
            rows[column].append(row[column])
    return pl.DataFrame(
        {name: pl.Series(values, dtype=STATS_SCHEMA[name]) for name, values in rows.items()}
    ).lazy()


# ---------------------------------------------------------------- detection


def is_stat(value: object) -> bool:
    """Whether ``value`` has the shape of a HELM ``Stat`` written by ``asdict_without_nones``."""
    if not isinstance(value, dict) or not {"name", "count", "sum"} <= set(value):
        return False
    name = value["name"]
    return (
        set(value) <= set(STAT_FIELDS)
        and isinstance(name, dict)
        and isinstance(name.get("name"), str)
        and set(name) <= {"name", "split", "sub_split", "perturbation"}
        and is_int(value["count"])
    )


def _is_instance_stats(probe: Probe) -> bool:
    record = probe.record
    if probe.top != "array" or record is None:
        return False
    stats = record.get("stats")
    return (
        set(RECORD_KEYS) <= set(record) <= {*RECORD_KEYS, *RECORD_OPTIONAL}
        and isinstance(record["instance_id"], str)
        and is_int(record["train_trial_index"])
        and isinstance(stats, list)
        and all(is_stat(stat) for stat in stats[:1])
    )


def _is_stats(probe: Probe) -> bool:
    return probe.top == "array" and is_stat(probe.record)


#: This module's layouts, registered in the table of formats.
ADAPTERS = register(
    __name__,
    Adapter(
        name="helm_instance_stats",
        harness="HELM",
        files="per_instance_stats.json (benchmark_output/runs/<suite>/<run>/)",
        expects="a JSON list of records with exactly 'instance_id', 'train_trial_index', "
        "'stats' (a list of HELM stats) and optionally 'perturbation'",
        detect=_is_instance_stats,
        read=read_instance_stats,
        folder_file="per_instance_stats.json",
        doc=DOC,
        rows="per-instance statistics",
        keys=("sample_id", "train_trial_index", "perturbation_details"),
        fields=("instance_id", "train_trial_index", "stats"),
    ),
    Adapter(
        name="helm_stats",
        harness="HELM",
        files="stats.json (benchmark_output/runs/<suite>/<run>/)",
        expects="a JSON list of HELM stats: records with 'name' ({'name': ...}), 'count', 'sum' "
        "and only the other fields of a Stat",
        detect=_is_stats,
        read=read_stats,
        level="results",
        folder_file="stats.json",
        doc=DOC,
    ),
)
