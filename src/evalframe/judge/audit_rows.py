"""The rows a judge audit reads: each measure's statistics per row, under internal names.

:func:`read_rows` checks the labels and reads the judge's preference for A (``Y``), the two
verdicts, the length difference of the answers, the models and the cluster of every row;
:func:`canonical` adds the item keys (the two models in sorted order, ``SWAP`` where the row's
are not), :func:`add_human` the human label, :func:`row_statistics` the per-row statistics each
measure sums, and :func:`fleiss_items` the per-item category counts of Fleiss' kappa.
:mod:`evalframe.judge.audit` documents the measures.

>>> import polars as pl
>>> rows = read_rows(pl.DataFrame({"outcome": ["A", "inconsistent", "error"]}), [], None, None,
...                  "outcome", Names("verdict_ab", "verdict_ba", "outcome", None, "answer_a",
...                                   "answer_b", "model_a", "model_b"))
>>> rows[Y].to_list()
[1.0, 0.5, None]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl

from evalframe.errors import EvalframeError
from evalframe.io.load import Source, expand_paths, scan
from evalframe.judge.classify import outcome as classified
from evalframe.judge.kappa import fleiss_item_agreement
from evalframe.metrics.judge import OUTCOMES

__all__ = [
    "ALL",
    "CELLS",
    "CLUSTER_INDEX",
    "FLEISS_STATS",
    "HUMAN_LABELS",
    "JUDGE",
    "VERDICTS",
    "Names",
    "Y",
    "add_human",
    "canonical",
    "fleiss_items",
    "read_rows",
    "row_statistics",
]

#: The labels a human-label column may hold (null: no label).
HUMAN_LABELS = ("A", "B", "tie")
#: The verdicts a verdict column may hold (null: that call was not made).
VERDICTS = ("A", "B", "tie", "error")
#: What a human label says of A (as a judge's preference ``Y``).
HUMAN_Y = {"A": 1.0, "tie": 0.5, "B": 0.0}

# internal columns of the rows
ALL, JUDGE, CLUSTER, CLUSTER_INDEX, Y, AB, BA, D, MA, MB, HUMAN, SWAP = (
    "__all", "__judge", "__cluster", "__ci", "__y", "__ab", "__ba", "__d", "__ma", "__mb",
    "__human", "__swap",
)
#: The confusion cells (human label x judge label, each A, tie, B) of agreement and kappa.
CELLS = tuple(f"__ck{i}" for i in range(9))
#: Fleiss' kappa per item: complete (1/0), the three category counts, P_i, incomplete (1/0).
FLEISS_STATS = ("__fk_n", "__fk_0", "__fk_1", "__fk_2", "__fk_p", "__fk_x")


@dataclass(frozen=True)
class Names:
    """The frame's columns the audit reads (as :func:`evalframe.judge.audit` names them)."""

    verdict_ab: str
    verdict_ba: str
    outcome: str
    preference: str | None
    answer_a: str
    answer_b: str
    model_a: str
    model_b: str

    def columns(self) -> tuple[str | None, ...]:
        return (self.verdict_ab, self.verdict_ba, self.outcome, self.preference,
                self.answer_a, self.answer_b, self.model_a, self.model_b)


def _check_labels(
    table: pl.DataFrame, column: str, allowed: Sequence[str], what: str, null: str
) -> pl.Expr:
    """The column as text, after checking every value is one of ``allowed`` or null."""
    dtype = table.schema[column]
    if dtype != pl.Null and dtype != pl.String and not isinstance(dtype, pl.Categorical | pl.Enum):
        raise EvalframeError(
            f"audit: column {column!r} ({what}) is {dtype}; expected the labels "
            f"{', '.join(map(repr, allowed))} or null ({null})"
        )
    values = table[column].cast(pl.String)
    bad = values.is_not_null() & ~values.is_in(list(allowed))
    count = int(bad.sum())
    if count:
        row = int(bad.arg_true()[0])
        raise EvalframeError(
            f"audit: column {column!r} ({what}), row {row}: {values[row]!r} is not a label "
            f"({count} row(s) in all); allowed labels: {', '.join(map(repr, allowed))}, or "
            f"null ({null})"
        )
    return pl.col(column).cast(pl.String)


def _verdicts(table: pl.DataFrame, names: Names) -> list[pl.Expr]:
    """The verdict columns the table has, checked, as text (A first, then B first)."""
    return [
        _check_labels(table, column, VERDICTS, "a verdict", "that call was not made")
        for column in (names.verdict_ab, names.verdict_ba)
        if column in table.columns
    ]


def _preference_y(
    table: pl.DataFrame, source: str | None, names: Names, verdicts: list[pl.Expr]
) -> pl.Expr:
    """The judge's preference for A on each row: 1, 0.5, 0 or in between; null: none."""
    if source is None:
        return pl.lit(None, pl.Float64)
    if source == "preference":
        column = names.preference
        assert column is not None
        dtype = table.schema[column]
        if not (dtype.is_numeric() or dtype == pl.Null):
            raise EvalframeError(
                f"audit: column {column!r} (the preference) is {dtype}; expected numbers: 1 = "
                "A (output_1) better, 2 = B better, 1.5 or 0 = a draw"
            )
        value = pl.col(column).cast(pl.Float64)
        return (
            pl.when(value == 0).then(pl.lit(0.5))
            .when(value.is_between(1.0, 2.0)).then(2.0 - value)
            .otherwise(pl.lit(None, pl.Float64))
        )
    if source == "outcome":
        label = _check_labels(table, names.outcome, tuple(OUTCOMES), "the outcome",
                              "no outcome")
    else:  # one verdict alone is the outcome, as classify reads a call not made
        label = classified(*verdicts, *[pl.lit(None, pl.String)] * (2 - len(verdicts)))
    values = {key: value for key, value in OUTCOMES.items() if value is not None}
    return label.replace_strict(values, default=None, return_dtype=pl.Float64)


def read_rows(
    table: pl.DataFrame,
    keys: list[str],
    judge: str | None,
    cluster: str | None,
    source: str | None,
    names: Names,
) -> pl.DataFrame:
    """The columns every measure reads, under internal names, the labels checked.

    ``JUDGE`` (text, null without a judge column), ``CLUSTER`` and ``CLUSTER_INDEX`` (its rank
    in the group, from 0), ``Y``, and where the table has them ``AB`` and ``BA`` (the
    verdicts), ``D`` (the answers' length difference, characters), ``MA`` and ``MB``.
    """
    verdicts = _verdicts(table, names)
    columns = [
        (pl.col(judge).cast(pl.String) if judge else pl.lit(None, pl.String)).alias(JUDGE),
        (pl.col(cluster) if cluster else pl.int_range(pl.len())).alias(CLUSTER),
        _preference_y(table, source, names, verdicts).alias(Y),
    ]
    if len(verdicts) == 2:
        columns += [verdicts[0].alias(AB), verdicts[1].alias(BA)]
    if names.answer_a in table.columns and names.answer_b in table.columns:
        for column in (names.answer_a, names.answer_b):
            dtype = table.schema[column]
            if dtype not in (pl.String, pl.Null):
                raise EvalframeError(
                    f"audit: column {column!r} (an answer) is {dtype}; expected text"
                )
        columns.append(
            (pl.col(names.answer_a).cast(pl.String).str.len_chars().cast(pl.Float64)
             - pl.col(names.answer_b).cast(pl.String).str.len_chars().cast(pl.Float64))
            .alias(D)
        )
    if names.model_a in table.columns and names.model_b in table.columns:
        columns += [pl.col(names.model_a).cast(pl.String).alias(MA),
                    pl.col(names.model_b).cast(pl.String).alias(MB)]
    rows = table.with_columns(columns)
    if cluster and rows[CLUSTER].null_count():
        raise EvalframeError(
            f"cluster column {cluster!r} is null in {rows[CLUSTER].null_count()} row(s), first row "
            f"{int(rows[CLUSTER].is_null().arg_true()[0])}; every row needs a question id (or pass "
            "cluster=False to resample rows)"
        )
    group = keys or [ALL]
    if not keys:
        rows = rows.with_columns(pl.lit(0).alias(ALL))
    return rows.with_columns(
        (pl.col(CLUSTER).rank("dense").over(group).cast(pl.Int64) - 1).alias(CLUSTER_INDEX)
    )


def _item_columns(items: list[str]) -> list[str]:
    return [f"__item{i}" for i in range(len(items))]


def canonical(rows: pl.DataFrame, items: list[str], names: Names) -> pl.DataFrame:
    """Item keys with the two models in sorted order, and whether this row's are swapped."""
    return _canonical_keys(rows, items, names.model_a, names.model_b)


def _canonical_keys(
    frame: pl.DataFrame, items: list[str], model_a: str, model_b: str
) -> pl.DataFrame:
    both = model_a in items and model_b in items
    a, b = pl.col(model_a).cast(pl.String), pl.col(model_b).cast(pl.String)
    swap = (a > b).fill_null(False) if both else pl.lit(False)
    columns = []
    for item, name in zip(items, _item_columns(items), strict=True):
        if both and item == model_a:
            columns.append(pl.when(swap).then(b).otherwise(a).alias(name))
        elif both and item == model_b:
            columns.append(pl.when(swap).then(a).otherwise(b).alias(name))
        else:
            columns.append(pl.col(item).alias(name))
    return frame.with_columns(*columns, swap.alias(SWAP))


def _mirror(value: pl.Expr) -> pl.Expr:
    """A preference for A in the item's canonical order (or back): mirrored when swapped."""
    return pl.when(pl.col(SWAP)).then(1.0 - value).otherwise(value)


def add_human(
    rows: pl.DataFrame,
    human: str | Source,
    column: str | None,
    label: str,
    items: list[str],
    names: Names,
) -> pl.DataFrame:
    """``__human``: the human's preference for A on each row (1, 0.5, 0; null: no label)."""
    to_y = HUMAN_Y
    if column is not None:
        text = _check_labels(rows, column, HUMAN_LABELS, "the human labels", "no label")
        return rows.with_columns(
            text.replace_strict(to_y, default=None, return_dtype=pl.Float64).alias(HUMAN)
        )
    if isinstance(human, str):
        try:
            expand_paths(human)
        except EvalframeError as error:
            raise EvalframeError(
                f"human={human!r}: neither a column of the frame nor a file of labels ({error})"
            ) from error
    if not items:
        raise EvalframeError(
            "human labels in a separate frame are joined on the item columns, and the frame "
            "has none (sample_id or question); name them with on="
        )
    labels = scan(human)
    schema = labels.collect_schema()
    absent = [c for c in (*items, label) if c not in schema]
    if absent:
        raise EvalframeError(
            f"human labels: no column(s) {absent}; they are joined on {items} and read from "
            f"{label!r} (human_label=); available: {list(schema)}"
        )
    labels_table = labels.select(*items, label).collect()
    differ = [
        f"{item!r} is {labels_table.schema[item]} there, {rows.schema[item]} in the judgments"
        for item in items
        if labels_table.schema[item] != rows.schema[item] and labels_table.schema[item] != pl.Null
    ]
    if differ:
        raise EvalframeError(
            f"human labels cannot be joined on {items}: {'; '.join(differ)}; give the label "
            "file the judgments' types"
        )
    text = _check_labels(labels_table, label, HUMAN_LABELS, "the human labels", "no label")
    labels_table = _canonical_keys(
        labels_table.with_columns(
            text.replace_strict(to_y, default=None, return_dtype=pl.Float64).alias(HUMAN)
        ),
        items, names.model_a, names.model_b,
    ).with_columns(_mirror(pl.col(HUMAN)).alias(HUMAN))
    keys = _item_columns(items)
    _no_duplicates(labels_table, [], items, "the human labels hold")
    joined = rows.join(labels_table.select(*keys, pl.col(HUMAN).alias("__h_canonical")),
                       on=keys, how="left", maintain_order="left")
    return joined.with_columns(_mirror(pl.col("__h_canonical")).alias(HUMAN)).drop(
        "__h_canonical"
    )


def _no_duplicates(
    frame: pl.DataFrame, keys: list[str], items: list[str], who: str, judged: bool = False
) -> None:
    """Every item once (per group and judge); else an error naming the first repeated one.

    ``keys`` are the group columns, ``items`` the item columns (the canonical ones are
    checked), ``judged``: once per judge.
    """
    groups = [key for key in keys if key not in items]
    columns = [*groups, *_item_columns(items), *([JUDGE] if judged else [])]
    labels = [*groups, *items, *(["judge"] if judged else [])]
    counts = frame.group_by(columns, maintain_order=True).len().filter(pl.col("len") > 1)
    if counts.height:
        first = counts.row(0, named=True)
        shown = ", ".join(f"{label}={first[column]!r}"
                          for label, column in zip(labels, columns, strict=True))
        raise EvalframeError(
            f"audit: {who} {counts.height} item(s) more than once (first: {shown}, "
            f"{first['len']} rows); matching needs one row per item (item columns on={items!r})"
        )


def _own(self_models: Mapping[str, str | Sequence[str]]) -> list[pl.Expr]:
    """Whether model A, model B is the row's judge's own: named like it, or in ``self_models``."""
    pairs = [
        f"{judge}\x00{model}"
        for judge, models in self_models.items()
        for model in ([models] if isinstance(models, str) else models)
    ]
    own = []
    for side in (MA, MB):
        named = pl.col(side) == pl.col(JUDGE)
        mapped = pl.concat_str([pl.col(JUDGE), pl.col(side)], separator="\x00").is_in(pairs)
        own.append((named | mapped).fill_null(False))
    return own


def row_statistics(
    rows: pl.DataFrame,
    keys: list[str],
    chosen: tuple[str, ...],
    self_models: Mapping[str, str | Sequence[str]],
    human: bool,
    items: list[str],
) -> pl.DataFrame:
    """Each chosen measure's per-row statistics, summed per cluster later.

    The columns are those :func:`evalframe.judge.audit_stats.measure_kinds` reads: for each
    measure its counts or sums (``__pb_*`` position bias, ``__fr_*`` flips, ``__lb_*`` the
    length slope's sums of the standardised difference and the preference, ``__sw_*`` and
    ``__sp_*`` the self measures, ``CELLS`` the human x judge confusion cells), and the
    ``*_x`` flag of a row the measure leaves out.
    """
    y = pl.col(Y)
    valid = y.is_not_null()
    one = pl.lit(1.0)
    zero = pl.lit(0.0)
    stats: list[pl.Expr] = []

    def flag(condition: pl.Expr) -> pl.Expr:
        return condition.fill_null(False).cast(pl.Float64)

    if {"position_bias", "flip_rate"} & set(chosen) and AB in rows.columns:
        ab, ba = pl.col(AB), pl.col(BA)
        swapped = ab.is_not_null() & ba.is_not_null()
        stats += [
            (flag(swapped & ab.is_in(["A", "B"])) + flag(swapped & ba.is_in(["A", "B"])))
            .alias("__pb_d"),
            (flag(swapped & (ab == "A")) + flag(swapped & (ba == "B"))).alias("__pb_f"),
            flag(~swapped).alias("__pb_x"),
        ]
        pair = (ab.is_in(HUMAN_LABELS) & ba.is_in(HUMAN_LABELS)).fill_null(False)
        stats += [
            flag(pair).alias("__fr_n"),
            flag(pair & (ab != ba)).alias("__fr_f"),
            flag(~pair).alias("__fr_x"),
        ]
    if "length_bias" in chosen and D in rows.columns:
        group = [*keys, JUDGE] if keys else [JUDGE]
        used = valid & pl.col(D).is_not_null()
        d = pl.when(used).then(pl.col(D))
        centre = d.mean().over(group)
        spread = d.std(ddof=1).over(group)
        scale = pl.when(spread > 0).then(spread).otherwise(one)
        z = ((pl.col(D) - centre) / scale).fill_null(0.0)
        u = flag(used)
        yy = y.fill_null(0.0)
        stats += [
            u.alias("__lb_n"), (u * z).alias("__lb_d"), (u * yy).alias("__lb_y"),
            (u * z * z).alias("__lb_dd"), (u * z * yy).alias("__lb_dy"),
            flag(~used).alias("__lb_x"),
        ]
    if {"self_win_rate", "self_preference"} & set(chosen) and MA in rows.columns:
        own_a, own_b = _own(self_models)
        party = own_a ^ own_b
        y_self = pl.when(own_a).then(y).otherwise(1.0 - y)
        stats += [
            flag(party & valid).alias("__sw_n"),
            pl.when(party & valid).then(y_self).otherwise(zero).alias("__sw_y"),
            flag(party & ~valid).alias("__sw_x"),
        ]
        if "self_preference" in chosen:
            if not human:
                rows = _others(rows, keys, items)
            reference = pl.col(HUMAN) if human else pl.col("__others")
            r_self = pl.when(own_a).then(reference).otherwise(1.0 - reference)
            usable = party & valid & reference.is_not_null()
            stats += [
                flag(usable).alias("__sp_n"),
                pl.when(usable).then(y_self - r_self).otherwise(zero).alias("__sp_v"),
                flag(party & ~usable).alias("__sp_x"),
            ]
    if {"agreement", "cohen_kappa"} & set(chosen) and human:
        judge_label = _label_index(y)
        human_label = _label_index(pl.col(HUMAN))
        cell = human_label * 3 + judge_label
        stats += [flag(cell == i).alias(name) for i, name in enumerate(CELLS)]
        stats += [flag(cell.is_not_null()).alias("__ck_n"), flag(cell.is_null()).alias("__ck_x")]
    return rows.with_columns(stats)


def _label_index(value: pl.Expr) -> pl.Expr:
    """0 for A (above 0.5), 1 for a tie (0.5), 2 for B (below 0.5); null stays null."""
    return (
        pl.when(value > 0.5).then(pl.lit(0, pl.Int8))
        .when(value == 0.5).then(pl.lit(1, pl.Int8))
        .when(value < 0.5).then(pl.lit(2, pl.Int8))
    )


def _others(rows: pl.DataFrame, keys: list[str], items: list[str]) -> pl.DataFrame:
    """``__others``: the other judges' mean preference for A on the row's item."""
    item = [*keys, *_item_columns(items)]
    _no_duplicates(rows, keys, items, "a judge judged", judged=True)
    canonical = _mirror(pl.col(Y))
    valid = pl.col(Y).is_not_null()
    total = canonical.fill_null(0.0).sum().over(item)
    count = valid.cast(pl.Float64).sum().over(item)
    own_total = canonical.fill_null(0.0)
    own_count = valid.cast(pl.Float64)
    others = (total - own_total) / (count - own_count)
    return rows.with_columns(
        pl.when(count - own_count > 0).then(_mirror(others)).alias("__others")
    )


def fleiss_items(rows: pl.DataFrame, keys: list[str], items: list[str]) -> pl.DataFrame:
    """One row per item: category counts over the judges, complete when every judge rated."""
    group = keys or [ALL]
    item = [*group, *_item_columns(items)]
    _no_duplicates(rows, keys, items, "a judge judged", judged=True)
    label = _label_index(_mirror(pl.col(Y)))
    judges = pl.col(JUDGE).n_unique().over(group)
    table = (
        rows.with_columns(label.alias("__label"), judges.alias("__raters"))
        .group_by(item, maintain_order=True)
        .agg(
            *[(pl.col("__label") == i).sum().cast(pl.Float64).alias(f"__c{i}") for i in range(3)],
            pl.col("__label").is_not_null().sum().alias("__rated"),
            pl.col("__raters").first(),
            pl.col(CLUSTER_INDEX).min(),
        )
    )
    complete = (pl.col("__rated") == pl.col("__raters")) & (pl.col("__raters") >= 2)
    counts = np.column_stack([table[f"__c{i}"].to_numpy() for i in range(3)])
    agreement = np.nan_to_num(fleiss_item_agreement(counts))
    u = complete.cast(pl.Float64)
    return table.with_columns(pl.Series("__p", agreement)).select(
        *group, CLUSTER_INDEX, "__raters",
        u.alias("__fk_n"),
        *[(u * pl.col(f"__c{i}")).alias(f"__fk_{i}") for i in range(3)],
        (u * pl.col("__p")).alias("__fk_p"),
        (1.0 - u).alias("__fk_x"),
    )
