"""Run evalframe on Ray Data: score and aggregate across a cluster, the same numbers.

``import evalframe.ray as efr`` (the ``ray`` extra: ``pip install "evalframe[ray]"``).

- :func:`score` scores a Ray ``Dataset`` (or parquet / JSON lines files) lazily, block by
  block: each Arrow block goes through :func:`evalframe.score` and comes back with its
  metric columns, missing-answer flags and the scored-result contract column
  (:mod:`evalframe.scored`), exactly as one process writes them.
- :func:`aggregate` reduces each block to its sufficient statistics
  (:func:`evalframe.partial`), brings those small records to the driver and merges them
  (:func:`evalframe.combine`): the table of :func:`evalframe.aggregate` over all the rows.
- :func:`save` writes a scored dataset as a folder of parquet files that
  :func:`evalframe.aggregate` and :func:`evalframe.scan` read back with their contract;
  :func:`collect` brings it to the driver as one polars frame.
- :func:`init` starts a local cluster or connects to one (``"auto"``, ``"HOST:PORT"``).

An error in a worker is raised on the driver as evalframe's own
:class:`~evalframe.EvalframeError`, with evalframe's message (row numbers in it count from
the first row of the block that failed). Every check that does not need the data (metric
names and options, the role mapping, the aggregate's options and group columns) runs on
the driver first, before any task is launched.

>>> import evalframe.ray as efr                      # doctest: +SKIP
>>> efr.init()                                       # doctest: +SKIP
>>> scored = efr.score("runs/*.parquet", ["exact_match"], columns={"gold": "answer"})
...                                                  # doctest: +SKIP
>>> efr.aggregate(scored, by=["model", "task"])      # doctest: +SKIP
"""

from __future__ import annotations

import os
import pickle
import re
import weakref
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow as pa

from evalframe.engine import check_mapping
from evalframe.engine import score as score_frame
from evalframe.errors import EvalframeError, OptionError
from evalframe.io.paths import expand_paths
from evalframe.metrics.request import parse_requests
from evalframe.scored import CONTRACT_COLUMN
from evalframe.stats.aggregate import aggregate as aggregate_frame
from evalframe.stats.aggregate import check_keys, check_options, group_keys

#: How to install what this module needs.
INSTALL_HINT = 'pip install "evalframe[ray]"'

try:
    import ray
    import ray.data
    import ray.exceptions
except ImportError as _missing:  # the extra is not installed
    raise ImportError(
        f"evalframe.ray runs evalframe on Ray Data, which is not installed ({_missing}); "
        f"install it with: {INSTALL_HINT}"
    ) from _missing

__all__ = [
    "INSTALL_HINT",
    "BlockError",
    "aggregate",
    "collect",
    "init",
    "read",
    "save",
    "score",
]

#: File name endings read with ``ray.data.read_parquet`` and ``ray.data.read_json``.
PARQUET = (".parquet", ".pq")
JSON_LINES = (".jsonl", ".ndjson", ".jsonl.gz", ".ndjson.gz")
#: An address of a running cluster: ``auto``, ``HOST:PORT`` or ``ray://HOST:PORT``.
_ADDRESS = re.compile(r"^(auto|(ray://)?[A-Za-z0-9_.\-\[\]:]+:\d{1,5})$")
#: The column of the partial statistics a block is reduced to (a pickled Partial).
PARTIAL_COLUMN = "partial"
#: ef.score options that need the whole input at once, with what to do instead.
_WHOLE_INPUT = {
    "gold": "join the golds to the predictions first (e.g. ef.load + ray.data.from_arrow), "
    "or score with evalframe.score",
    "on": "goes with gold=",
    "group_by": "collapse rows to one per sample first, or score with evalframe.score",
    "format": "harness layouts are read by evalframe.load; give Ray a plain table",
    "schema": "cast the columns in the Dataset first (ray.data's own readers take a schema)",
    "csv_empty": "Ray reads parquet and JSON lines here",
    "select": "select the columns in the Dataset first (ds.select_columns)",
    "duplicates": "harness dumps are read by evalframe.load",
}


class BlockError(EvalframeError, ray.exceptions.UserCodeException):
    """An :class:`~evalframe.EvalframeError` raised while a Ray worker processed a block.

    Carries evalframe's message to the driver unchanged (Ray appends notes of its own to
    an exception's arguments on the way); Ray reports it as an error in user code.

    >>> import pickle
    >>> pickle.loads(pickle.dumps(BlockError("bad row"))).message
    'bad row'
    """

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __reduce__(self) -> tuple[type[BlockError], tuple[str]]:
        return (type(self), (self.message,))


def init(address: str | None = None, **options: Any) -> None:
    """Start a local Ray cluster (``address=None``) or connect to a running one.

    ``address``: ``"auto"`` (the cluster ``ray start --head`` started on this machine),
    ``"HOST:PORT"`` (a head node's address) or ``"ray://HOST:PORT"`` (Ray Client). A local
    cluster is a new one (never another program's), without the dashboard and without
    Ray's usage statistics unless ``RAY_USAGE_STATS_ENABLED`` says otherwise. Other
    keyword arguments go to :func:`ray.init` (``num_cpus=``, ``object_store_memory=``...).
    Nothing happens when this process is already connected.

    >>> init("localhost")
    Traceback (most recent call last):
    ...
    evalframe.errors.OptionError: address='localhost' is not a Ray address: give 'auto', \
'HOST:PORT' or 'ray://HOST:PORT', or None for a local cluster
    """
    check_address(address)
    if ray.is_initialized():
        return
    if address is None:
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
        options = {"include_dashboard": False, **options}
    try:
        ray.init(address="local" if address is None else address, **options)
    except (ConnectionError, RuntimeError, ValueError) as error:
        where = "start a local Ray cluster" if address is None else (
            f"connect to the Ray cluster at {address!r}"
        )
        raise EvalframeError(f"cannot {where}: {_first_line(error)}") from error


def check_address(address: object) -> str | None:
    """``address`` if it is one :func:`init` takes; an OptionError otherwise.

    >>> check_address("10.0.0.5:6379"), check_address("auto"), check_address(None)
    ('10.0.0.5:6379', 'auto', None)
    """
    if address is None or (isinstance(address, str) and _ADDRESS.match(address)):
        return address
    raise OptionError(
        f"address={address!r} is not a Ray address: give 'auto', 'HOST:PORT' or "
        "'ray://HOST:PORT', or None for a local cluster",
        option="address", value=address,
        problem="is not a Ray address: give auto, HOST:PORT or ray://HOST:PORT",
    )


def read(source: Any) -> ray.data.Dataset:
    """A Ray ``Dataset`` of ``source``: a Dataset as it is, or parquet / JSON lines files.

    ``source`` is a path, a glob, a folder or a list of them (every file is read from every
    node: a shared file system, or ``s3://``-style URIs of files or folders of parquet
    files, which go to Ray as they are: no globs there). The files must all be parquet or
    all JSON lines.

    >>> import pathlib, tempfile
    >>> table = pathlib.Path(tempfile.mkdtemp()) / "runs.csv"
    >>> _ = table.write_text("prediction,gold\\na,a\\n")
    >>> read(table)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    evalframe.errors.EvalframeError: .../runs.csv: evalframe.ray reads parquet (.parquet)...
    """
    if isinstance(source, ray.data.Dataset):
        return source
    items = [source] if isinstance(source, str | os.PathLike) else list(source)
    if not items or not all(isinstance(item, str | os.PathLike) for item in items):
        raise EvalframeError(
            f"expected a ray.data.Dataset, or a path, glob or list of paths (parquet or JSON "
            f"lines); got {type(source).__name__}"
        )
    remote = [str(item) for item in items if "://" in str(item)]
    local = [item for item in items if "://" not in str(item)]
    files = [str(path.resolve()) for path in expand_paths(local, readable=PARQUET + JSON_LINES)]
    files += remote
    # a remote name without a file ending is a folder of parquet files (Ray lists it)
    kinds = {_kind(name) or ("parquet" if "://" in name else None) for name in files}
    if kinds == {"parquet"}:
        return ray.data.read_parquet(files)
    if kinds == {"json"}:
        return ray.data.read_json(files, lines=True)
    unknown = [name for name in files if _kind(name) is None and "://" not in name]
    if unknown:
        raise EvalframeError(
            f"{unknown[0]}: evalframe.ray reads parquet (.parquet) and JSON lines (.jsonl, "
            ".ndjson, also .gz) files; convert it with evalframe.save, or read it into a "
            "ray.data.Dataset yourself"
        )
    raise EvalframeError(
        "the input mixes parquet and JSON lines files; give one kind, or read each into a "
        "ray.data.Dataset and union them"
    )


def _kind(name: str) -> str | None:
    lowered = name.lower()
    if lowered.endswith(PARQUET):
        return "parquet"
    if lowered.endswith(JSON_LINES):
        return "json"
    return None


def score(
    dataset: Any,
    metrics: Any,
    *,
    columns: Mapping[str, str] | None = None,
    overwrite: bool = False,
    address: str | None = None,
    **score_options: Any,
) -> ray.data.Dataset:
    """Score every row of ``dataset`` with ``metrics`` on Ray: a lazy ``Dataset``.

    Each block goes through :func:`evalframe.score` in a worker, so the result holds the
    same rows and columns as one process gives (the metric columns, their ``:missing``
    flags and the contract column, categorical text as Arrow dictionaries): aggregate it
    with :func:`aggregate`, write it with :func:`save`, or bring it to the driver with
    :func:`collect`. Rows keep their order where Ray keeps it
    (``DataContext.execution_options.preserve_order``); aggregates do not depend on it.
    Metric names and options and the role mapping are checked on the driver, against the
    dataset's schema, before anything runs.

    Parameters
    ----------
    dataset
        A ``ray.data.Dataset``, or parquet / JSON lines files (see :func:`read`).
    metrics, columns, overwrite
        As :func:`evalframe.score`.
    address
        The cluster to connect to when this process is not connected yet (see :func:`init`).
    score_options
        Other options of :func:`evalframe.score` need the whole input at once (``gold=``,
        ``group_by=``...) or a harness file (``format=``): an error says what to do instead.

    Examples
    --------
    >>> import polars as pl, ray.data, evalframe.ray as efr            # doctest: +SKIP
    >>> rows = ray.data.from_arrow(pl.DataFrame({"prediction": ["a", "b"],
    ...                                          "gold": ["a", "c"]}).to_arrow())
    ...                                                                # doctest: +SKIP
    >>> efr.collect(efr.score(rows, ["exact_match"]))["exact_match"].to_list()
    ...                                                                # doctest: +SKIP
    [1.0, 0.0]
    """
    for option in score_options:
        if option in _WHOLE_INPUT:
            raise OptionError(
                f"{option}= is not available on Ray: it needs the whole input in one "
                f"process ({_WHOLE_INPUT[option]})",
                option=option, value=score_options[option],
                problem="is not available with the Ray engine",
            )
        raise TypeError(f"score() got an unexpected keyword argument {option!r}")
    parse_requests(metrics)  # names and options, before any data is touched
    mapping = check_mapping(columns)
    init(address)
    source = read(dataset)
    schema = _schema(source)
    scored_schema = None
    if schema is not None:  # the mapping against the columns, before any task runs
        scored_schema = score_frame(
            schema.to_frame(), metrics, columns=mapping, overwrite=overwrite
        ).schema
    scored = source.map_batches(
        _score_block,
        batch_format="pyarrow",
        zero_copy_batch=True,
        udf_modifying_row_count=False,
        fn_kwargs={
            "metrics": metrics, "columns": mapping, "overwrite": overwrite, "schema": schema,
        },
    )
    if scored_schema is not None:
        _SCORED_SCHEMAS[scored] = scored_schema
    return scored


def aggregate(
    dataset: Any,
    by: str | Sequence[str] | None = None,
    metrics: Sequence[str] | Mapping[str, str | None] | None = None,
    *,
    ci: float = 0.95,
    interval: str = "auto",
    missing: str = "wrong",
    cluster: str | bool | None = None,
    stderr: str = "auto",
    columns: Mapping[str, str] | None = None,
    keep_empty: bool = False,
    wide: bool = False,
    bootstrap: int = 1000,
    seed: int = 0,
    address: str | None = None,
) -> pl.DataFrame:
    """:func:`evalframe.aggregate` of a scored ``dataset``, computed on Ray.

    Each block is reduced in a worker to its sufficient statistics
    (:func:`evalframe.partial`: counts, sums, per-cluster sums, corpus statistics,
    bootstrap replicate sums), one small record per block; the driver merges them
    (:func:`evalframe.combine`) into the table :func:`evalframe.aggregate` gives over all
    the rows: the same groups, numbers and signatures. The options, the group columns and
    the cluster column are checked on the driver before any task runs (against the
    dataset's first row where Ray knows no schema without running it).

    ``dataset``: a scored ``ray.data.Dataset`` (from :func:`score`), or scored parquet /
    JSON lines files. The other arguments are :func:`evalframe.aggregate`'s, and
    ``address`` :func:`init`'s.

    >>> efr.aggregate(efr.score("runs/", ["exact_match"]), by="task")  # doctest: +SKIP
    """
    import evalframe as ef

    check_options(
        ci=ci, interval=interval, missing=missing, stderr=stderr, keep_empty=keep_empty,
        wide=wide, bootstrap=bootstrap, seed=seed,
    )
    keys = group_keys(by)
    reducing = {
        "missing": missing, "cluster": cluster, "stderr": stderr, "columns": columns,
        "bootstrap": bootstrap, "seed": seed,
    }
    init(address)
    source = read(dataset)
    schema = _known_schema(source)
    if schema is not None:  # the columns, before any task runs
        check_keys(keys, schema)
        _check_cluster(cluster, schema)
    else:  # the data's own checks (columns, contract), on its first row
        with _raised_here():
            head = _head(source)
        if head is not None:
            aggregate_frame(head, keys, metrics, keep_empty=True, **reducing)
    parts = source.map_batches(
        _partial_block,
        batch_format="pyarrow",
        zero_copy_batch=True,
        fn_kwargs={"by": keys, "metrics": metrics, "options": reducing},
    )
    with _raised_here():
        blobs = [row[PARTIAL_COLUMN] for row in parts.take_all()]
    # A fixed order of the parts (their bytes), whatever order the blocks finished in.
    partials = [pickle.loads(blob) for blob in sorted(blobs)]
    if not partials:
        partials = [ef.partial(_empty(source), keys, metrics, **reducing)]
    return ef.combine(partials, ci=ci, interval=interval, keep_empty=keep_empty, wide=wide)


def collect(dataset: ray.data.Dataset) -> pl.DataFrame:
    """A (scored) dataset as one polars frame on the driver, as :func:`evalframe.score`
    returns it (the contract column categorical again).

    Brings every row to this process: for results that fit in its memory (a pipe to
    ``evalframe aggregate``, a table to look at); :func:`save` writes the others.

    >>> efr.collect(efr.score(dataset, ["exact_match"]))  # doctest: +SKIP
    """
    with _raised_here():
        tables = [table for table in ray.get(dataset.to_arrow_refs()) if table.num_columns]
    if not tables:
        return _empty(dataset)
    frame = pl.from_arrow(pa.concat_tables(tables, promote_options="permissive"))
    assert isinstance(frame, pl.DataFrame)
    return _with_contract_dtype(frame)


def save(dataset: ray.data.Dataset, path: str | os.PathLike[str]) -> None:
    """Write a scored dataset as a folder of parquet files, replacing what ``path`` held.

    :func:`evalframe.aggregate` / :func:`evalframe.scan` read the folder back with its
    contract (``ef.aggregate("scored/")``), and so does :func:`aggregate` on Ray
    (``efr.aggregate("scored/")``). Every node writes its blocks, so ``path`` must be a
    folder all of them reach (a shared file system or an ``s3://``-style URI).

    >>> efr.save(efr.score("runs/", ["exact_match"]), "scored/")  # doctest: +SKIP
    """
    target = str(path)
    if "://" not in target:
        folder = Path(target).expanduser()
        if folder.exists() and not folder.is_dir():
            raise EvalframeError(
                f"{target}: a file; evalframe.ray.save writes a folder of parquet files there"
            )
        target = str(folder.resolve())
    with _raised_here():
        dataset.write_parquet(target, mode="overwrite")


def _schema(dataset: ray.data.Dataset) -> pl.Schema | None:
    """The polars schema of ``dataset`` (None: Ray knows no Arrow schema of it).

    Ray reads it from the files' metadata, or runs the plan up to its first block.
    """
    with _raised_here():
        found = dataset.schema()
    if found is None or not isinstance(found.base_schema, pa.Schema):
        return None
    frame = pl.from_arrow(found.base_schema.empty_table())
    assert isinstance(frame, pl.DataFrame)
    return frame.schema


#: The schema of each dataset :func:`score` made (Ray knows it only by running the plan).
_SCORED_SCHEMAS: weakref.WeakKeyDictionary[ray.data.Dataset, pl.Schema] = (
    weakref.WeakKeyDictionary()
)


def _known_schema(dataset: ray.data.Dataset) -> pl.Schema | None:
    """The polars schema of ``dataset`` where it is known without running anything."""
    known = _SCORED_SCHEMAS.get(dataset)
    if known is not None:
        return known
    found = dataset.schema(fetch_if_missing=False)
    if found is None or not isinstance(found.base_schema, pa.Schema):
        return None
    frame = pl.from_arrow(found.base_schema.empty_table())
    assert isinstance(frame, pl.DataFrame)
    return frame.schema


def _check_cluster(cluster: object, schema: pl.Schema) -> None:
    """A ``cluster=`` column the data does not have: the error :func:`evalframe.aggregate`
    raises."""
    if isinstance(cluster, str) and cluster not in schema:
        raise OptionError(
            f"cluster={cluster!r}: no such column; available: {list(schema)}",
            option="cluster", value=cluster, clause=False,
            problem=f"no such column; available: {', '.join(schema)}",
        )


def _empty(dataset: ray.data.Dataset) -> pl.DataFrame:
    """A frame with no rows and ``dataset``'s columns."""
    schema = _known_schema(dataset) or _schema(dataset)
    if schema is None:
        raise EvalframeError("the dataset has no rows and no Arrow schema: nothing to read")
    return _with_contract_dtype(schema.to_frame())


def _head(dataset: ray.data.Dataset) -> pl.DataFrame | None:
    """The first row of ``dataset`` (None: it has no rows)."""
    tables = [table for table in ray.get(dataset.limit(1).to_arrow_refs()) if table.num_rows]
    if not tables:
        return None
    frame = pl.from_arrow(tables[0].slice(0, 1))
    assert isinstance(frame, pl.DataFrame)
    return _with_contract_dtype(frame)


def _with_contract_dtype(frame: pl.DataFrame) -> pl.DataFrame:
    """The contract column as :func:`evalframe.score` makes it (categorical text)."""
    if CONTRACT_COLUMN in frame.columns and frame.schema[CONTRACT_COLUMN] == pl.String:
        return frame.with_columns(pl.col(CONTRACT_COLUMN).cast(pl.Categorical))
    return frame


# -- in the workers ------------------------------------------------------------------------


def _score_block(
    batch: pa.Table,
    *,
    metrics: list[str],
    columns: dict[str, str],
    overwrite: bool,
    schema: pl.Schema | None,
) -> pa.Table:
    """One block scored by :func:`evalframe.score` (runs in a worker)."""
    frame = _frame(batch, schema)
    with _raised_in_worker(rows=frame.height):
        scored = score_frame(frame, metrics, columns=columns, overwrite=overwrite)
    assert isinstance(scored, pl.DataFrame)
    return scored.to_arrow()


def _partial_block(
    batch: pa.Table, *, by: list[str], metrics: Any, options: dict[str, Any]
) -> pa.Table:
    """One block reduced to its partial statistics, pickled in one row (runs in a worker)."""
    import evalframe as ef

    frame = _with_contract_dtype(_frame(batch, None))
    if not frame.height:  # an empty block adds nothing (and holds no contract to read)
        return pa.table({PARTIAL_COLUMN: pa.array([], type=pa.large_binary())})
    with _raised_in_worker(rows=frame.height):
        part = ef.partial(frame, by, metrics, **options)
    blob = pickle.dumps(part, protocol=pickle.HIGHEST_PROTOCOL)
    return pa.table({PARTIAL_COLUMN: pa.array([blob], type=pa.large_binary())})


def _frame(batch: pa.Table, schema: pl.Schema | None) -> pl.DataFrame:
    frame = pl.from_arrow(batch)
    assert isinstance(frame, pl.DataFrame)
    return frame if schema is None else _aligned(frame, schema)


def _aligned(frame: pl.DataFrame, schema: pl.Schema) -> pl.DataFrame:
    """``frame`` with the columns read as nulls only (JSON lines) cast to ``schema``'s."""
    nulls = [
        pl.col(name).cast(schema[name])
        for name, dtype in frame.schema.items()
        if dtype == pl.Null and schema.get(name, pl.Null) != pl.Null
    ]
    return frame.with_columns(nulls) if nulls else frame


@contextmanager
def _raised_in_worker(rows: int) -> Iterator[None]:
    """evalframe's error in a worker, sent to the driver as a :class:`BlockError`."""
    try:
        yield
    except EvalframeError as error:
        # Ray Data wraps a task's exception in its own unless this is set where it is
        # raised; the driver then sees this exception itself (with its message).
        ray.data.DataContext.get_current().raise_original_map_exception = True
        raise BlockError(f"{error} (in a Ray block of {rows:,} rows)") from None


@contextmanager
def _raised_here() -> Iterator[None]:
    """A Ray error while running a dataset, raised as evalframe's error on the driver."""
    try:
        yield
    except ray.exceptions.RayError as error:
        raise _unwrapped(error) from None


def _unwrapped(error: BaseException) -> EvalframeError:
    """evalframe's error inside a Ray error, or an EvalframeError saying what Ray said."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, BlockError):
            return EvalframeError(current.message)
        if isinstance(current, EvalframeError) and not isinstance(
            current, ray.exceptions.RayError
        ):
            return EvalframeError(_without_ray_notes(str(current)))
        cause = getattr(current, "cause", None)
        current = cause if isinstance(cause, BaseException) else current.__cause__
    cause = getattr(error, "cause", None)
    if isinstance(cause, ImportError) or "No module named 'evalframe" in str(error):
        return EvalframeError(
            "a Ray worker cannot import evalframe: install the same evalframe on every node "
            f"of the cluster ({_first_line(cause or error)})"
        )
    shown = cause if isinstance(cause, BaseException) else error
    return EvalframeError(f"Ray failed: {type(shown).__name__}: {_first_line(shown)}")


def _without_ray_notes(text: str) -> str:
    return text.split("\nFailed to apply UDF transform", 1)[0]


def _first_line(error: BaseException) -> str:
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    return _without_ray_notes(lines[0]) if lines else type(error).__name__
