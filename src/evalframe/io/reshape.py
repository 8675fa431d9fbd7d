"""One row per sample: collapse per-run rows into the lists that sampling metrics read.

A HumanEval results file with one row per run (``task_id``, ``run``, ``passed``), or a dump
with one row per generation, becomes one row per sample: pass@k reads ``passed`` as
``list[bool]``, maj@k / avg@k read ``prediction`` as ``list[str]``.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from evalframe.errors import EvalframeError
from evalframe.io.join import key_columns

__all__ = ["one_row_per_sample"]


def one_row_per_sample(
    frame: pl.LazyFrame, by: str | Sequence[str], *, lists: Sequence[str] = ()
) -> pl.LazyFrame:
    """Rows grouped by ``by``, one per group, in the order each group first appears.

    Within a group, rows keep their order. A column that takes more than one value within
    some group becomes a list of the group's values (nulls included, in row order) for every
    group; a column holding one value in every group stays as it is. The columns in ``lists``
    (the sample roles, such as ``passed`` and ``prediction``) always become lists, so a group
    whose runs all passed still gives ``[True, True, ...]``. A null key is a group of its own.

    >>> import polars as pl
    >>> runs = pl.LazyFrame({
    ...     "task_id": ["t/0", "t/0", "t/1"], "run": [1, 2, 1],
    ...     "passed": [True, False, True], "model": ["m", "m", "m"],
    ... })
    >>> one_row_per_sample(runs, "task_id", lists=["passed"]).collect().rows()
    [('t/0', [1, 2], [True, False], 'm'), ('t/1', [1], [True], 'm')]
    """
    keys = key_columns(by, "group_by")
    schema = frame.collect_schema()
    absent = [name for name in keys if name not in schema]
    if absent:
        raise EvalframeError(
            f"group_by={keys}: the input has no column(s) {absent}; its columns: {list(schema)}"
        )
    others = [name for name in schema if name not in keys]
    forced = {name for name in lists if name in schema and name not in keys}
    candidates = [name for name in others if name not in forced]
    varying: set[str] = set(forced)
    if candidates:
        counts = (
            frame.group_by(keys)
            .agg(pl.col(name).n_unique() for name in candidates)
            .select(pl.col(candidates).max())
            .collect()
        )
        if counts.height:
            varying |= {name for name in candidates if (counts[name][0] or 0) > 1}
    aggregations = [
        pl.col(name) if name in varying else pl.col(name).first() for name in others
    ]
    return frame.group_by(keys, maintain_order=True).agg(aggregations)
