"""The ``by`` columns of a judge table, checked once for every table that groups.

>>> import polars as pl
>>> group_columns("model", pl.Schema({"model": pl.String}), taken={"value"}, table="report")
['model']
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

import polars as pl

from evalframe.errors import EvalframeError

__all__ = ["group_columns"]


def group_columns(
    by: str | Sequence[str] | None,
    schema: Mapping[str, pl.DataType],
    *,
    taken: Collection[str],
    table: str,
) -> list[str]:
    """``by`` as a list of columns of ``schema``, or an error saying what is wrong with it.

    A key must be a column name, named once, present in ``schema``, and not the name of a
    column the result has (``taken``, or a name starting with ``__``): ``table`` names that
    result in the message.

    >>> import polars as pl
    >>> group_columns(["m", "m"], pl.Schema({"m": pl.String}), taken=(), table="report")
    Traceback (most recent call last):
    ...
    evalframe.errors.EvalframeError: by=['m', 'm'] names ['m'] more than once
    """
    if by is None:
        return []
    keys = [by] if isinstance(by, str) else list(by)
    if not all(isinstance(key, str) for key in keys):
        raise EvalframeError(f"by={by!r}: expected a column name or a list of column names")
    repeated = sorted({key for key in keys if keys.count(key) > 1})
    if repeated:
        raise EvalframeError(f"by={keys!r} names {repeated} more than once")
    absent = [key for key in keys if key not in schema]
    if absent:
        raise EvalframeError(
            f"cannot group by {absent}: no such column(s); available: {list(schema)}"
        )
    clashing = [key for key in keys if key in taken or key.startswith("__")]
    if clashing:
        raise EvalframeError(
            f"cannot group by {clashing}: the {table} has column(s) of that name; rename the "
            f"group column(s) first, e.g. frame.rename({{{clashing[0]!r}: "
            f"{clashing[0] + '_group'!r}}})"
        )
    return keys
