"""Which columns of a scored frame are metrics, and what each one is: one reader for all.

``aggregate``, ``compare``, ``paired_variance`` and the CLI find their metric columns here,
in this order of authority:

1. the **scored-result contract** (:mod:`evalframe.scored`) that ``evalframe.score`` puts in
   the data: each metric column's request, its missing-answer flags and its roles. A frame
   that carries it is read by it alone: no column name is parsed to learn what it is;
2. for a frame without it (scored by an older evalframe, or by another tool): the metric
   columns an older ``evalframe score`` recorded in a parquet file's metadata, else the
   columns whose name is a metric request *and* whose dtype is that metric's statistics
   (an ``Int64`` column called ``exact_match`` is not a score). Missing answers are then
   told apart through the metric's input columns, found with the role mapping
   (``columns=``) or the roles' default names; where they cannot be found, the column's
   missing answers are unknown, and :func:`check_unknown_missing` refuses to count
   null scores under a policy that needs them.

A column named in ``metrics=`` that is neither is a plain score (a user's own 0/1
``correct``), aggregated by its mean.

>>> import polars as pl, evalframe as ef
>>> scored = ef.score(pl.DataFrame({"prediction": ["a", None], "gold": ["a", "b"]}),
...                   ["em=exact_match"])
>>> found = find_columns(scored.lazy())
>>> [(c.column, c.request.text) for c in found.columns]
[('em', 'exact_match')]
"""

from __future__ import annotations

import json
import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from evalframe.errors import EvalframeError
from evalframe.metrics.answers import ANSWER_ROLES, answer_columns, missing_rows
from evalframe.metrics.reduce import Mean, Reduction
from evalframe.metrics.request import MetricRequest, parse_request
from evalframe.scored import CONTRACT_COLUMN, Contract, missing_column, read_contract

#: Key of the parquet metadata in which an older ``evalframe score`` recorded its metric
#: columns (read, for files it wrote; the contract column replaced it).
METADATA_KEY = "evalframe.metrics"
#: Key of the parquet metadata in which an older ``evalframe score`` recorded its roles.
ROLES_KEY = "evalframe.roles"

_UNBOUNDED = (-math.inf, math.inf)


@dataclass(frozen=True)
class MetricColumn:
    """A column to aggregate or compare, and what is known about it."""

    column: str
    #: The metric request behind it (None: a plain score, aggregated by its mean).
    request: MetricRequest | None
    #: True on the rows whose answer is missing; None: unknown (no way to tell).
    missing: pl.Expr | None = None
    #: True on the rows a scoring of this column wrote (None: every row).
    scored: pl.Expr | None = None
    #: The input columns holding the metric's references (golds), where known.
    references: tuple[str, ...] = ()
    #: The input columns holding the model's answer, where known (for messages).
    answers: tuple[str, ...] = field(default=())
    #: The flag column the contract names, when it is gone from the frame.
    lost_flag: str | None = None

    @property
    def reduction(self) -> Reduction:
        return self.request.reduction() if self.request is not None else Mean()

    @property
    def level(self) -> str:
        return self.request.spec.level if self.request is not None else "sample"

    @property
    def bounds(self) -> tuple[float, float]:
        return self.request.spec.bounds if self.request is not None else _UNBOUNDED

    @property
    def worst(self) -> float | None:
        return self.request.spec.worst if self.request is not None else None

    @property
    def missing_known(self) -> bool:
        return self.missing is not None

    def counted(self, missing: str) -> pl.Expr:
        """The score each row counts with under a missing-answer policy (null: not counted).

        ``"wrong"``: a missing answer scores the metric's worst; ``"exclude"``: null. Rows
        another scoring wrote (``scored`` false) are null.
        """
        value = pl.col(self.column).cast(pl.Float64)
        if self.missing is not None:
            if missing == "wrong" and self.worst is not None:
                value = pl.when(self.missing).then(pl.lit(self.worst)).otherwise(value)
            elif missing == "exclude":
                value = pl.when(self.missing).then(None).otherwise(value)
        if self.scored is not None:
            value = pl.when(self.scored).then(value)
        return value


@dataclass(frozen=True)
class Found:
    """The metric columns of a frame, the role mapping, and the recorded columns lost."""

    columns: list[MetricColumn]
    mapping: dict[str, str]
    #: Recorded metric columns that cannot be used, each with why.
    lost: list[str]
    contract: Contract | None


def find_columns(
    frame: pl.LazyFrame,
    metrics: Sequence[str] | Mapping[str, str | None] | str | None = None,
    *,
    columns: Mapping[str, str] | None = None,
    recorded: Mapping[str, str] | None = None,
    recorded_roles: Mapping[str, str] | None = None,
) -> Found:
    """The metric columns of ``frame`` (all of them, or those named in ``metrics``).

    ``metrics`` is a list of column names or a mapping column -> metric request (None:
    what the column is recorded or named as). ``columns`` maps roles to the input
    columns (it overrides what the frame records). ``recorded`` / ``recorded_roles``
    are what an older ``evalframe score`` wrote in a parquet file's metadata.
    """
    schema = frame.collect_schema()
    contract = read_contract(frame)
    mapping = {
        **(contract.roles if contract is not None else {}),
        **(recorded_roles or {}),
        **(columns or {}),
    }
    recorded = dict(recorded or {})
    if metrics is None:
        if contract is not None:
            names: dict[str, str | None] = {
                name: None for name in schema if name in contract.metrics
            }
        else:
            names = {
                name: None for name in schema
                if _by_name(recorded.get(name) or name, name, schema[name]) is not None
            }
    else:
        names = _named(metrics)
    lost = _lost(schema, contract, recorded)
    if metrics is None and lost:
        warnings.warn(
            f"metric column(s) recorded by evalframe score are not aggregated: {lost}",
            stacklevel=3,
        )
    chosen = [
        _column(name, text, schema, contract, recorded, mapping) for name, text in names.items()
    ]
    return Found(chosen, mapping, lost, contract)


def _named(metrics: Sequence[str] | Mapping[str, str | None] | str) -> dict[str, str | None]:
    if isinstance(metrics, str):
        metrics = [metrics]
    if not isinstance(metrics, Sequence | Mapping):
        raise EvalframeError(
            f"metrics={metrics!r}: expected a list of metric column names or a mapping "
            "column -> metric"
        )
    names = list(metrics)
    for name in names:
        if not isinstance(name, str):
            raise EvalframeError(f"metric columns are named by strings, got {name!r}")
    repeated = sorted({name for name in names if names.count(name) > 1}, key=str)
    if repeated:
        raise EvalframeError(f"metric column(s) named more than once: {repeated}")
    if isinstance(metrics, Mapping):
        return {str(k): v for k, v in metrics.items()}
    return {name: None for name in names}


def _column(
    name: str,
    text: str | None,
    schema: Mapping[str, pl.DataType],
    contract: Contract | None,
    recorded: Mapping[str, str],
    mapping: Mapping[str, str],
) -> MetricColumn:
    if name not in schema:
        raise EvalframeError(f"metric column {name!r} not found; available: {list(schema)}")
    dtype = schema[name]
    entry = contract.metrics.get(name) if contract is not None else None
    if entry is not None:
        request = parse_request(entry.request, column=name)
        if text is not None and parse_request(text, column=name).text != request.text:
            raise EvalframeError(
                f"metric column {name!r} was scored as {entry.request!r}, not {text!r}: "
                "name it without a request, or score the frame again with that request"
            )
        if not statistics_match(request, dtype):
            raise EvalframeError(
                f"metric column {name!r} has dtype {dtype}, not the statistics of "
                f"{entry.request!r} ({request.statistics()}) that evalframe.score wrote"
            )
        scored = (
            contract.rows_scored(name)
            if contract.scored_in.get(name) is not None or contract.unscored_rows
            else None
        )
        if entry.missing is None:
            missing: pl.Expr | None = pl.lit(False)
        elif entry.missing in schema:
            missing = pl.col(entry.missing).fill_null(False)
        else:
            missing = None  # the flags were dropped: check_unknown_missing decides
        answers = tuple(c for role, c in entry.roles.items() if role in ANSWER_ROLES)
        references = tuple(c for role, c in entry.roles.items() if role not in ANSWER_ROLES)
        lost_flag = entry.missing if missing is None else None
        return MetricColumn(name, request, missing, scored, references, answers, lost_flag)
    request = _by_name(text or recorded.get(name) or name, name, dtype)
    if request is None:
        given = _request_or_none(text or recorded.get(name) or name, name)
        if given is not None and given.spec.level == "corpus":
            raise EvalframeError(
                f"metric column {name!r} has dtype {dtype}; metric {given.name!r} is a "
                f"corpus metric whose statistics are {given.statistics()} (score the "
                "frame with evalframe.score to get them)"
            )
        if not (dtype.is_numeric() or dtype in (pl.Boolean, pl.Null)):
            raise EvalframeError(
                f"metric column {name!r} has dtype {dtype}; expected numeric scores or a "
                "metric's statistics"
            )
        # a numeric column that is not a metric's statistics: a plain score, its mean
        return MetricColumn(name, None, _flag(name, schema))
    flag = _flag(name, schema)
    roles = answer_columns(request, schema, mapping)
    if flag is None and roles is not None:
        flag = _legacy_missing(roles, request)
    return MetricColumn(
        name, request, flag, None,
        roles.references if roles is not None else (),
        roles.answers if roles is not None else (),
    )


def _flag(name: str, schema: Mapping[str, pl.DataType]) -> pl.Expr | None:
    """The column of ``name``'s missing-answer flags, where evalframe.score left one."""
    flag = missing_column(name)
    if schema.get(flag) == pl.Boolean:
        return pl.col(flag).fill_null(False)
    return None


def _legacy_missing(roles, request: MetricRequest) -> pl.Expr:
    """Missing answers of a frame without flags, from its answer and gold columns.

    The score of such a row is null (an older evalframe) or the worst score (a frame
    scored now whose flag columns were dropped).
    """
    sample = request.spec.level == "sample"
    return missing_rows(roles, request.spec.worst if sample else None)


def _request_or_none(text: str, name: str) -> MetricRequest | None:
    try:
        return parse_request(text, column=name)
    except EvalframeError:
        return None


def _by_name(text: str, name: str, dtype: pl.DataType) -> MetricRequest | None:
    """The metric ``text`` names, if it is one and ``dtype`` holds its statistics."""
    request = _request_or_none(text, name)
    return request if request is not None and statistics_match(request, dtype) else None


def statistics_match(request: MetricRequest, dtype: pl.DataType) -> bool:
    """Whether a column of ``dtype`` holds ``request``'s statistics (for its options)."""
    expected = request.statistics()
    if dtype == pl.Null:
        return True
    if isinstance(expected, pl.Struct):
        if not isinstance(dtype, pl.Struct):
            return False
        return [f.name for f in dtype.fields] == [f.name for f in expected.fields]
    return dtype == expected


def _lost(
    schema: Mapping[str, pl.DataType], contract: Contract | None, recorded: Mapping[str, str]
) -> list[str]:
    """Recorded metric columns that are gone, or whose dtype is no longer the metric's."""
    texts = (
        {name: entry.request for name, entry in contract.metrics.items()}
        if contract is not None
        else dict(recorded)
    )
    lost = []
    for name, text in texts.items():
        if name not in schema:
            lost.append(f"{name!r} (no such column: renamed or dropped?)")
            continue
        try:
            request = parse_request(text, column=name)
        except EvalframeError:
            continue
        if not statistics_match(request, schema[name]):
            lost.append(f"{name!r} (dtype {schema[name]}, not the statistics of {text!r})")
    return lost


def check_unknown_missing(
    column: MetricColumn, null_scores: int, missing: str, *, what: str = "aggregate"
) -> None:
    """Refuse to count null scores whose meaning (missing answer or no gold) is unknown.

    Under ``missing="wrong"`` (or ``"error"``) a missing answer must count as wrong; when
    nothing tells which null scores are missing answers, any number would silently be a
    different one, so this raises, naming the fixes. ``missing="exclude"`` leaves every
    null score out, knowingly.
    """
    if column.missing_known:
        return
    if column.lost_flag is not None and missing != "wrong":
        raise EvalframeError(
            f"cannot {what} metric column {column.column!r} with missing={missing!r}: the "
            f"column {column.lost_flag!r} that records its missing answers is gone (they are "
            "scored as wrong in the column itself). Keep it beside the scores, or use "
            "missing='wrong'"
        )
    if not null_scores or missing == "exclude":
        if column.request is not None or column.lost_flag is not None:
            record = (
                f"its column {column.lost_flag!r} is gone"
                if column.lost_flag is not None
                else f"the frame has no record of its scoring ({CONTRACT_COLUMN!r}, "
                f"{missing_column(column.column)!r}) and its input columns are not found "
                "(name them with columns=...)"
            )
            warnings.warn(
                f"the missing answers of {column.column!r} are not known: {record}; "
                "n_missing is left null",
                stacklevel=5,
            )
        return
    raise EvalframeError(
        f"cannot {what} metric column {column.column!r}: {null_scores} row(s) have a null "
        "score, and nothing records whether each is a missing answer (counted as wrong by "
        "default) or a row without a gold (left out). Score the frame with evalframe.score "
        f"and keep its {missing_column(column.column)!r} and {CONTRACT_COLUMN!r} columns, "
        "or name the input columns with columns={'prediction': ..., 'gold': ...}, or pass "
        "missing='exclude' to leave every null score out"
    )


def check_nan_scores(
    frame: pl.LazyFrame, columns: Sequence[MetricColumn], *, what: str = "aggregate"
) -> None:
    """Refuse NaN scores of sample metrics: counted over the whole input, first row named.

    A NaN score has no mean: left in, it would make a group's value, standard error and
    interval NaN, or a comparison's difference NaN and its p-value empty, without a word.
    No metric of evalframe gives NaN for valid inputs except where its reference does
    (``brier_score`` / ``mc2`` when every log-probability is ``-inf``: no probability
    mass); such rows, and NaN written by other tools, are reported here with where they
    are. (A corpus metric's value can legitimately be NaN: its formula over the group's
    statistics, e.g. byte perplexity of documents with no bytes at all; that stays.)

    >>> import polars as pl
    >>> frame = pl.LazyFrame({"acc": [1.0, float("nan"), 0.0, float("nan")]})
    >>> try:
    ...     check_nan_scores(frame, [MetricColumn("acc", None)])
    ... except ValueError as error:
    ...     print(str(error)[:78])
    cannot aggregate metric column 'acc': 2 row(s) hold a NaN score (first: row 1)
    """
    schema = frame.collect_schema()
    checked = [
        c for c in columns
        if c.level == "sample" and c.column in schema and schema[c.column].is_float()
    ]
    if not checked:
        return
    found = frame.select(
        *(pl.col(c.column).is_nan().sum().alias(f"n{i}") for i, c in enumerate(checked)),
        *(
            pl.int_range(pl.len(), dtype=pl.Int64).filter(pl.col(c.column).is_nan()).min()
            .alias(f"first{i}")
            for i, c in enumerate(checked)
        ),
    ).collect().row(0, named=True)
    for i, column in enumerate(checked):
        count = found[f"n{i}"]
        if count:
            undefined = (
                "the difference and its p-value" if what == "compare"
                else "the mean, its standard error and its interval"
            )
            raise EvalframeError(
                f"cannot {what} metric column {column.column!r}: {count} row(s) hold a NaN "
                f"score (first: row {found[f'first{i}']}); a NaN makes {undefined} NaN, so it "
                "is not propagated. Find the input the metric could not score (every "
                "log-probability -inf gives brier_score and mc2 no probability mass), fix it "
                f"or drop those rows: frame.filter(~pl.col({column.column!r}).is_nan())"
            )


def apply_missing(
    frame: pl.LazyFrame, columns: Sequence[MetricColumn], missing: str
) -> pl.LazyFrame:
    """Each sample metric column's scores under a missing-answer policy (in place).

    ``"wrong"``: a missing answer scores the metric's worst; ``"exclude"``: null;
    ``"error"``: raise, counting them. Rows another scoring wrote (``scored`` false) are
    null. Used by ``compare`` and ``paired_variance``; ``aggregate`` counts as it goes. NaN
    scores are refused first (:func:`check_nan_scores`).
    """
    check_nan_scores(frame, columns, what="compare")
    unknown = [c for c in columns if not c.missing_known]
    if unknown:
        counts = frame.select(
            [pl.col(c.column).null_count().alias(c.column) for c in unknown]
        ).collect().row(0)
        for column, count in zip(unknown, counts, strict=True):
            check_unknown_missing(column, count, missing, what="compare")
    known = [c for c in columns if c.missing_known and c.level == "sample"]
    if missing == "error" and known:
        counts = frame.select(
            [c.missing.sum().alias(c.column) for c in known]  # type: ignore[union-attr]
        ).collect().row(0)
        for column, count in zip(known, counts, strict=True):
            if count:
                raise EvalframeError(
                    f"metric {column.column!r}: {count} row(s) have no answer with "
                    "missing='error'; use missing='wrong' or 'exclude'"
                )
    replaced = []
    for column in columns:
        if column.level == "sample":
            replaced.append(column.counted(missing).alias(column.column))
    return frame.with_columns(replaced) if replaced else frame


# --- what an older ``evalframe score`` recorded in parquet metadata --------------------


def _recorded(paths: Sequence[str | Path], key: str) -> dict[str, str]:
    """What the files recorded under ``key``; files that disagree on a name are an error."""
    recorded: dict[str, str] = {}
    source: dict[str, str] = {}
    for path in paths:
        if not str(path).lower().endswith((".parquet", ".pq")):
            continue
        try:
            found = decode_metadata(pl.read_parquet_metadata(path), key)
        except (OSError, pl.exceptions.PolarsError):  # not evalframe's: nothing recorded
            continue
        for name, value in found.items():
            if name in recorded and recorded[name] != value:
                what = "column" if key == METADATA_KEY else "role"
                raise EvalframeError(
                    f"{what} {name!r} is {recorded[name]!r} in {source[name]!r} but {value!r} "
                    f"in {str(path)!r}: files read together must record the same "
                    f"{'metric' if key == METADATA_KEY else 'column'} for it; aggregate them "
                    "separately, or rename the column in one of them"
                )
            recorded[name], source[name] = value, str(path)
    return recorded


def recorded_metrics(paths: Sequence[str | Path]) -> dict[str, str]:
    """Column -> metric request, as an older ``evalframe score`` recorded them."""
    return _recorded(paths, METADATA_KEY)


def recorded_mapping(paths: Sequence[str | Path]) -> dict[str, str]:
    """The role -> column mapping an older ``evalframe score`` recorded."""
    return _recorded(paths, ROLES_KEY)


def decode_metadata(metadata: Mapping[str, str], key: str = METADATA_KEY) -> dict[str, str]:
    """The mapping stored under ``key`` (column -> metric request by default)."""
    text = metadata.get(key)
    if not text:
        return {}
    try:
        decoded = json.loads(text)
    except json.JSONDecodeError:
        return {}
    return {str(k): str(v) for k, v in decoded.items()} if isinstance(decoded, dict) else {}


def recorded_in(source: object) -> tuple[dict[str, str], dict[str, str]]:
    """(metrics, roles) that files given by path recorded in their metadata; else empty."""
    if isinstance(source, pl.DataFrame | pl.LazyFrame) or not isinstance(
        source, str | Path | Sequence
    ) or isinstance(source, bytes):
        return {}, {}
    from evalframe.io.load import expand_paths

    try:
        paths = expand_paths(source)  # type: ignore[arg-type]
    except EvalframeError:
        return {}, {}  # reported by the read itself
    return recorded_metrics(paths), recorded_mapping(paths)
