"""Missing answers: which rows of a metric are answers the model did not give.

A metric's expression gives a null score for two different reasons, which evalframe
keeps apart:

- a **missing answer**: an answer column of the metric (``prediction``, ``passed``,
  ``c``, ``choice_logprobs``, ``loglikelihood``) is null while its reference columns
  are not, or the metric's ``extractor=`` finds no answer in the prediction (a null
  extracted answer: ``boxed`` without a ``\\boxed{}``). The model was asked and gave
  nothing (a failed answer extraction, say). ``evalframe.score`` scores it as wrong (the
  metric's worst score) and flags it in ``<metric>:missing``; ``aggregate`` counts it in
  ``n_missing`` and applies its ``missing=`` policy (``"wrong"``, ``"exclude"``,
  ``"error"``).
- an **unscoreable row**: a reference is null (no gold). It cannot be scored under any
  policy: it is left out and counted in ``n_null``.

This module finds a metric's answer and reference columns through a role mapping
(:func:`answer_columns`) and says which rows are missing answers (:func:`missing_rows`):
``score`` uses it where the roles are known, and ``aggregate`` for frames that carry no
record of their scoring (see :mod:`evalframe.stats.columns`).

>>> import polars as pl
>>> from evalframe.metrics.request import parse_request
>>> frame = pl.DataFrame({"prediction": ["a", None, "b"], "gold": ["a", "b", None],
...                       "exact_match": [1.0, None, None]})
>>> found = answer_columns(parse_request("exact_match"), frame.schema, {})
>>> frame.select(missing_rows(found)).to_series().to_list()
[False, True, False]
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import polars as pl

from evalframe.errors import EvalframeError
from evalframe.metrics.request import MetricRequest
from evalframe.schema import resolve_columns

#: Roles that hold the model's answer; the others are references and settings.
ANSWER_ROLES = frozenset({"prediction", "passed", "c", "choice_logprobs", "loglikelihood"})


@dataclass(frozen=True)
class RoleColumns:
    """Where a scored metric's answer and reference columns are in the frame."""

    score: str
    answers: tuple[str, ...]
    references: tuple[str, ...]
    #: True where the metric's extractor finds no answer in a non-null prediction.
    unextracted: tuple[pl.Expr, ...] = ()


def answer_columns(
    request: MetricRequest, schema: Mapping[str, pl.DataType], mapping: Mapping[str, str]
) -> RoleColumns | None:
    """The metric's answer and reference columns in ``schema``, or None when not there."""
    try:
        columns = resolve_columns(
            request.column, request.spec.role_sets, schema, mapping, request.spec.dtypes
        )
    except EvalframeError:
        return None
    answers = tuple(column for role, column in columns.items() if role in ANSWER_ROLES)
    references = tuple(column for role, column in columns.items() if role not in ANSWER_ROLES)
    if not answers:
        return None
    unextracted = _unextracted(request, columns.get("prediction"), schema)
    return RoleColumns(request.column, answers, references, unextracted)


def _unextracted(
    request: MetricRequest, prediction: str | None, schema: Mapping[str, pl.DataType]
) -> tuple[pl.Expr, ...]:
    """Where the metric's ``extractor=`` gives a null answer (a null element of a list)."""
    extractor = request.keyword_options().get("extractor", "none")
    if prediction is None or extractor is None or extractor == "none":
        return ()
    from evalframe.extract.table import answer_of

    answer = answer_of(pl.col(prediction), request.name, extractor)
    if isinstance(schema[prediction], pl.List):
        return (answer.list.eval(pl.element().is_null()).list.any().fill_null(False),)
    return (answer.is_null(),)


def missing_rows(columns: RoleColumns, worst: float | None = None) -> pl.Expr:
    """True where the score is null because the model gave no answer (references present).

    ``worst``: the score may also be the metric's worst, where a missing answer was already
    scored as wrong (a scored frame whose record of missing answers was dropped).
    """
    answer_null = pl.any_horizontal(
        [pl.col(name).is_null() for name in columns.answers] + list(columns.unextracted)
    )
    references_present = (
        pl.all_horizontal([pl.col(name).is_not_null() for name in columns.references])
        if columns.references
        else pl.lit(True)
    )
    unscored = pl.col(columns.score).is_null()
    if worst is not None:
        unscored = unscored | (pl.col(columns.score) == worst)
    return unscored & answer_null & references_present
