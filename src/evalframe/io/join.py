"""Putting tables together by key: predictions beside their golds, model metadata beside scores.

Every join here reports what did not match (how many keys, which ones first) and never drops
a row: a question without a prediction stays, with a null prediction (a missing answer that
``aggregate`` counts as wrong by default); a prediction for an id the golds do not hold stays,
with null golds (unscoreable, counted in ``n_null``); a scored row whose model has no metadata
stays, with null metadata. A key that is null, or repeated where it must be unique, is an error.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import polars as pl

from evalframe.errors import EvalframeError
from evalframe.io.load import Source, scan

__all__ = ["join_gold", "join_metadata", "key_columns"]

#: Keys shown in a report of unmatched keys.
SHOWN = 5


def key_columns(on: str | Sequence[str] | None, what: str) -> list[str]:
    """``on`` as a list of column names, checked.

    >>> key_columns("id", "on"), key_columns(["model", "id"], "on")
    (['id'], ['model', 'id'])
    """
    if isinstance(on, str):
        names = [name.strip() for name in on.split(",")] if "," in on else [on]
    elif isinstance(on, Sequence) and on and all(isinstance(name, str) for name in on):
        names = list(on)
    else:
        raise EvalframeError(f"{what}={on!r} must name the key column(s): a string or a list")
    if not all(names) or len(set(names)) != len(names):
        raise EvalframeError(f"{what}={on!r}: key column names must be non-empty and distinct")
    return names


def join_gold(
    predictions: pl.LazyFrame,
    gold: pl.LazyFrame,
    on: str | Sequence[str],
    *,
    per: Sequence[str] | None = None,
) -> pl.LazyFrame:
    """Predictions and golds from two tables, matched on ``on``: one row per gold key.

    Rows come in the golds' order, each with its prediction's columns (null where the question
    has no prediction); predictions whose key the golds do not hold follow, with null gold
    columns. With ``per`` (default: ``["model"]`` when the predictions have a ``model`` column
    and the golds do not), every group of predictions (each model) is matched against every
    gold key on its own. Missing and unknown keys are reported in a warning. Keys repeated
    within a table (within a group), null keys, key dtypes that differ, and columns other than
    the keys that both tables hold are errors.

    >>> import polars as pl
    >>> preds = pl.LazyFrame({"id": ["b", "x"], "prediction": ["B", "X"]})
    >>> golds = pl.LazyFrame({"id": ["a", "b"], "gold": ["A", "B"]})
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     joined = join_gold(preds, golds, "id").collect()
    >>> joined.rows()
    [('a', 'A', None), ('b', 'B', 'B'), ('x', None, 'X')]
    >>> message = str(caught[0].message)
    >>> message.startswith("1 of 2 gold key(s) have no prediction"), message.count("first id=")
    (True, 2)
    """
    keys = key_columns(on, "on")
    pred_schema, gold_schema = predictions.collect_schema(), gold.collect_schema()
    for side, schema in (("predictions", pred_schema), ("gold", gold_schema)):
        absent = [name for name in keys if name not in schema]
        if absent:
            raise EvalframeError(
                f"on={keys}: the {side} input has no column(s) {absent}; its columns: "
                f"{list(schema)}"
            )
    for name in keys:
        if pred_schema[name] != gold_schema[name]:
            raise EvalframeError(
                f"key column {name!r} is {pred_schema[name]} in the predictions but "
                f"{gold_schema[name]} in the gold input; read both as one dtype "
                f"(schema={{{name!r}: 'str'}})"
            )
    groups = list(per) if per is not None else (
        ["model"] if "model" in pred_schema and "model" not in gold_schema else []
    )
    shared = [
        name for name in pred_schema if name in gold_schema and name not in keys + groups
    ]
    if shared:
        raise EvalframeError(
            f"column(s) {shared} are in both the predictions and the gold input; keep them in "
            "one of the two (select the columns to read: columns=[...] / --select)"
        )
    pred_keys = predictions.select(groups + keys).collect()
    gold_keys = gold.select(keys).collect()
    _check_keys(gold_keys, keys, "gold input")
    _check_keys(pred_keys, groups + keys, "predictions")
    if groups:
        combos = pred_keys.select(groups).unique(maintain_order=True)
        frame = combos.lazy().join(gold, how="cross", maintain_order="left_right")
        expected = combos.join(gold_keys, how="cross")
    else:
        frame, expected = gold, gold_keys
    matched = frame.join(
        predictions, on=groups + keys, how="left", nulls_equal=False, maintain_order="left"
    )
    ordered = [*groups, *gold_schema, *(n for n in pred_schema if n not in keys + groups)]
    matched = matched.select(list(dict.fromkeys(ordered)))
    unknown = predictions.join(gold.select(keys), on=keys, how="anti", maintain_order="left")
    joined = pl.concat([matched, unknown], how="diagonal")
    _report(expected, pred_keys, groups, keys)
    return joined


def _check_keys(frame: pl.DataFrame, keys: list[str], side: str) -> None:
    nulls = frame.select(pl.any_horizontal(pl.col(keys).is_null()).arg_true())
    if nulls.height:
        raise EvalframeError(
            f"the {side} has {nulls.height} row(s) with a null key {keys}, first row "
            f"{nulls.item(0, 0)}; every row needs its key"
        )
    repeated = frame.filter(pl.struct(keys).is_duplicated())
    if repeated.height:
        first = repeated.row(0, named=True)
        raise EvalframeError(
            f"the {side} repeats keys {keys}: {repeated.height} row(s) share a key with "
            f"another row, first {first}; each key must appear once"
            + (" per group" if len(keys) > 1 else "")
        )


def _report(
    expected: pl.DataFrame, present: pl.DataFrame, groups: list[str], keys: list[str]
) -> None:
    on = groups + keys
    missing = expected.join(present, on=on, how="anti", maintain_order="left")
    unknown = present.join(
        expected.select(keys).unique(), on=keys, how="anti", maintain_order="left"
    )
    parts = []
    if missing.height:
        parts.append(
            f"{missing.height} of {expected.height} gold key(s) have no prediction (a missing "
            "answer, scored as wrong by aggregate's default missing='wrong'): first "
            + _describe(missing, on)
        )
    if unknown.height:
        parts.append(
            f"{unknown.height} prediction(s) have a key the golds do not hold (kept, with null "
            "golds): first " + _describe(unknown, on)
        )
    if parts:
        warnings.warn("; ".join(parts), stacklevel=5)


def _describe(frame: pl.DataFrame, names: list[str]) -> str:
    shown = [
        ", ".join(f"{name}={row[name]!r}" for name in names)
        for row in frame.head(SHOWN).iter_rows(named=True)
    ]
    more = f" and {frame.height - SHOWN} more" if frame.height > SHOWN else ""
    return "; ".join(shown) + more


def join_metadata(
    table: pl.DataFrame | pl.LazyFrame,
    metadata: Source,
    on: str | Sequence[str] = "model",
    **reading: object,
) -> pl.DataFrame | pl.LazyFrame:
    """``table`` with the columns of ``metadata`` (a file or a frame) matched on ``on``.

    Every row of ``table`` is kept, in order: one whose key has no metadata row gets nulls, and
    a warning says how many keys and which ones had none. ``metadata`` is read as
    :func:`evalframe.load` reads it (csv, parquet, json...; ``reading`` passes
    ``schema=`` and the other keywords), so parameters, training tokens or the model family sit
    beside the scores. A key repeated in ``metadata``, a null key there, a key dtype that
    differs, or a column other than the key in both is an error. A LazyFrame stays lazy.

    >>> import polars as pl, warnings
    >>> scores = pl.DataFrame({"model": ["a", "b", "c"], "value": [0.5, 0.7, 0.1]})
    >>> sizes = pl.DataFrame({"model": ["a", "b"], "params_b": [7, 70]})
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     join_metadata(scores, sizes, on="model").rows()
    [('a', 0.5, 7), ('b', 0.7, 70), ('c', 0.1, None)]
    """
    keys = key_columns(on, "on")
    lazy = isinstance(table, pl.LazyFrame)
    frame = table.lazy() if isinstance(table, pl.DataFrame) else table
    if not isinstance(frame, pl.LazyFrame):
        raise EvalframeError(
            f"join_metadata takes a polars DataFrame or LazyFrame; got {type(table).__name__}"
        )
    extra = scan(metadata, **reading)  # type: ignore[arg-type]
    schema, extra_schema = frame.collect_schema(), extra.collect_schema()
    for side, found in (("table", schema), ("metadata", extra_schema)):
        absent = [name for name in keys if name not in found]
        if absent:
            raise EvalframeError(
                f"on={keys}: the {side} has no column(s) {absent}; its columns: {list(found)}"
            )
    for name in keys:
        if schema[name] != extra_schema[name]:
            raise EvalframeError(
                f"key column {name!r} is {schema[name]} in the table but {extra_schema[name]} "
                f"in the metadata; read the metadata with schema={{{name!r}: ...}}"
            )
    shared = [name for name in extra_schema if name in schema and name not in keys]
    if shared:
        raise EvalframeError(
            f"column(s) {shared} are in both the table and the metadata; drop or rename them "
            "in one of the two"
        )
    extra_keys = extra.select(keys).collect()
    _check_keys(extra_keys, keys, "metadata")
    table_keys = frame.select(keys).unique(maintain_order=True).collect()
    unmatched = table_keys.join(
        extra_keys, on=keys, how="anti", nulls_equal=False, maintain_order="left"
    )
    if unmatched.height:
        warnings.warn(
            f"{unmatched.height} of {table_keys.height} key(s) {keys} in the table have no "
            f"metadata row (kept, with null metadata): {_describe(unmatched, keys)}",
            stacklevel=2,
        )
    joined = frame.join(extra, on=keys, how="left", maintain_order="left")
    return joined if lazy else joined.collect()
