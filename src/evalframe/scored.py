"""The scored-result contract: what every metric column of a scored frame is.

:func:`evalframe.score` knows what it computed; every later layer (``aggregate``,
``compare``, ``power``, the CLI, files written by any tool) must read the same meaning.
A Polars frame carries no attributes, so the meaning travels **in the data**, in columns
that survive the user's own ``filter`` / ``select`` / ``join`` / ``concat``, parquet
written by evalframe or by polars itself, JSON lines, CSV, Arrow and pipes:

- each metric column ``M`` holds the metric's score, with a **missing answer already
  scored as wrong** (the metric's worst score: 0.0 for accuracy), so the per-row scores
  are honest for any tool that reads them (pandas, DuckDB, a plotting library);
  a row that cannot be scored (a null gold) is null;
- ``M:missing`` (``Boolean``, when the metric has an answer column) is true on the rows
  whose answer the model did not give (a null prediction, or nothing extracted from it)
  while the gold is there: ``aggregate`` counts them in ``n_missing`` and, with
  ``missing="exclude"``, leaves them out;
- ``_evalframe`` (:data:`CONTRACT_COLUMN`, categorical text, the same on every row of
  one scoring) records, as JSON, for every metric column its full request (name,
  options, alias), its missing-answer column and the input columns that played each
  role. A frame stacked from several scorings holds one value per scoring; they must
  agree on what a column is.

Readers go through :func:`read_contract`; a frame without the contract column is read
the way evalframe read frames before it (by the metric names of its columns), and
``aggregate`` refuses where that cannot give an honest number.

This module is the ground floor: it knows column names and JSON, not metrics.

>>> import polars as pl
>>> text = encode_contract([ScoredMetric("em", "exact_match", "em:missing",
...                                      {"prediction": "pred", "gold": "answer"})])
>>> frame = pl.DataFrame({"em": [1.0, 0.0], "em:missing": [False, True],
...                       CONTRACT_COLUMN: [text, text]})
>>> contract = read_contract(frame.lazy())
>>> contract.metrics["em"].request, contract.metrics["em"].missing
('exact_match', 'em:missing')
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import polars as pl

from evalframe.errors import EvalframeError

#: The column that records what each metric column of a scored frame is.
CONTRACT_COLUMN = "_evalframe"
#: Version of the JSON layout in :data:`CONTRACT_COLUMN`.
CONTRACT_VERSION = 1
#: What the score of a missing answer is in the metric column: the metric's worst score.
SCORED_MISSING = "wrong"


def missing_column(metric_column: str) -> str:
    """The name of the column flagging ``metric_column``'s missing answers.

    >>> missing_column("squad_em")
    'squad_em:missing'
    """
    return f"{metric_column}:missing"


@dataclass(frozen=True)
class ScoredMetric:
    """One metric column of a scored frame, as :func:`evalframe.score` made it."""

    #: The output column.
    column: str
    #: The request, re-parseable: ``"exact_match(ignore_case=true)"``.
    request: str
    #: The column flagging missing answers (None: the metric has no answer column).
    missing: str | None
    #: Role -> input column the metric read.
    roles: Mapping[str, str] = field(default_factory=dict)

    def as_json(self) -> dict[str, object]:
        return {
            "request": self.request, "missing": self.missing, "roles": dict(self.roles),
        }


@dataclass(frozen=True)
class Contract:
    """What the contract column of a frame says, over every distinct value it holds."""

    #: Metric column -> what it is.
    metrics: Mapping[str, ScoredMetric]
    #: The role -> column mapping the scoring was given (merged over the scorings;
    #: a role the scorings mapped to different columns is left out).
    roles: Mapping[str, str]
    #: Metric column -> the contract texts whose rows hold that metric (all: None).
    scored_in: Mapping[str, tuple[str, ...] | None]
    #: Whether some rows have no contract (stacked with rows evalframe did not score).
    unscored_rows: bool = False

    def rows_scored(self, column: str) -> pl.Expr:
        """True on the rows a scoring that computed ``column`` wrote."""
        texts = self.scored_in.get(column)
        contract = pl.col(CONTRACT_COLUMN).cast(pl.String)
        if texts is None:
            return contract.is_not_null()
        return contract.is_in(list(texts))


def encode_contract(
    metrics: Iterable[ScoredMetric],
    roles: Mapping[str, str] | None = None,
    *,
    version: str | None = None,
) -> str:
    """The JSON text recorded in :data:`CONTRACT_COLUMN` for one scoring."""
    if version is None:
        from evalframe._version import __version__ as version
    body = {
        "contract": CONTRACT_VERSION,
        "evalframe": version,
        "scored_missing": SCORED_MISSING,
        "roles": dict(roles or {}),
        "metrics": {metric.column: metric.as_json() for metric in metrics},
    }
    return json.dumps(body, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def decode_contract(text: str) -> tuple[dict[str, ScoredMetric], dict[str, str]]:
    """The metric columns and role mapping of one contract text; an error if unreadable."""
    try:
        body = json.loads(text)
        version = body["contract"]
        metrics = body["metrics"]
        roles = body.get("roles", {})
    except (json.JSONDecodeError, TypeError, KeyError) as error:
        raise EvalframeError(
            f"column {CONTRACT_COLUMN!r} holds {text[:80]!r}, which is not a record written "
            "by evalframe.score; rename the column if it is yours"
        ) from error
    if version != CONTRACT_VERSION:
        raise EvalframeError(
            f"column {CONTRACT_COLUMN!r} records contract version {version!r}; this "
            f"evalframe reads version {CONTRACT_VERSION}: upgrade evalframe"
        )
    found = {
        str(column): ScoredMetric(
            str(column), str(entry["request"]),
            None if entry.get("missing") is None else str(entry["missing"]),
            {str(k): str(v) for k, v in (entry.get("roles") or {}).items()},
        )
        for column, entry in metrics.items()
    }
    return found, {str(k): str(v) for k, v in roles.items()}


def contract_values(frame: pl.LazyFrame) -> tuple[list[str], bool]:
    """The distinct contract texts of ``frame``, and whether some rows have none."""
    schema = frame.collect_schema()
    if CONTRACT_COLUMN not in schema:
        return [], False
    if schema[CONTRACT_COLUMN] not in (pl.String, pl.Categorical) and not isinstance(
        schema[CONTRACT_COLUMN], pl.Enum | pl.Categorical
    ):
        raise EvalframeError(
            f"column {CONTRACT_COLUMN!r} has dtype {schema[CONTRACT_COLUMN]}; evalframe.score "
            "writes text there (what each metric column is): rename the column if it is yours"
        )
    values = (
        frame.select(pl.col(CONTRACT_COLUMN).cast(pl.String).unique(maintain_order=True))
        .collect()
        .to_series()
        .to_list()
    )
    texts = [value for value in values if value is not None]
    return texts, len(texts) < len(values)


def contract_texts(frame: pl.LazyFrame) -> list[str]:
    """The distinct contract texts of ``frame`` (empty without the contract column)."""
    return contract_values(frame)[0]


def read_contract(frame: pl.LazyFrame) -> Contract | None:
    """The contract of a scored frame, or None when it has no contract column.

    Scorings stacked in one frame must agree on what a shared column is: the same
    request and the same missing-answer column; otherwise an error names both.
    """
    texts, unscored = contract_values(frame)
    if not texts:
        return None
    metrics: dict[str, ScoredMetric] = {}
    holders: dict[str, list[str]] = {}
    roles: dict[str, str] = {}
    clashing_roles: set[str] = set()
    for text in texts:
        found, mapping = decode_contract(text)
        for column, metric in found.items():
            known = metrics.get(column)
            if known is not None and (known.request, known.missing) != (
                metric.request, metric.missing
            ):
                raise EvalframeError(
                    f"metric column {column!r} was scored as {known.request!r} in some rows "
                    f"and as {metric.request!r} in others (rows stacked from different "
                    "scorings): aggregate them separately, or rename the column in one of them"
                )
            metrics.setdefault(column, metric)
            holders.setdefault(column, []).append(text)
        for role, column in mapping.items():
            if roles.get(role, column) != column:
                clashing_roles.add(role)
            roles.setdefault(role, column)
    for role in clashing_roles:
        roles.pop(role, None)
    scored_in = {
        column: None if len(found) == len(texts) else tuple(found)
        for column, found in holders.items()
    }
    return Contract(metrics, roles, scored_in, unscored)


def merged_contract_expr(
    frame: pl.LazyFrame, metrics: Sequence[ScoredMetric], roles: Mapping[str, str]
) -> pl.Expr:
    """The contract column after scoring ``metrics`` into ``frame`` (kept rows' earlier ones).

    A frame scored again keeps what its earlier scorings recorded, the new metrics added
    (a re-scored column replaces its earlier record).
    """
    new_text = encode_contract(metrics, roles)
    earlier = contract_texts(frame)
    if not earlier:
        return pl.lit(new_text).cast(pl.Categorical).alias(CONTRACT_COLUMN)
    merged = {}
    for text in earlier:
        found, mapping = decode_contract(text)
        found.update({metric.column: metric for metric in metrics})
        merged[text] = encode_contract(found.values(), {**mapping, **roles})
    return (
        pl.col(CONTRACT_COLUMN)
        .cast(pl.String)
        .replace_strict(merged, default=new_text, return_dtype=pl.String)
        .cast(pl.Categorical)
        .alias(CONTRACT_COLUMN)
    )
