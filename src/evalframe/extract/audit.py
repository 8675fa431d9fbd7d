"""``ef.audit_extractors``: how much several extractors find, agree, and change the verdicts.

Before trusting a score that depends on answer extraction, run every candidate extractor
on the same dump and look at three tables (:class:`ExtractionAudit`): the coverage and
accuracy of each, how often two of them both answer yet disagree, and the rows whose
verdict against the gold flips from one extractor to another.

>>> import polars as pl, evalframe as ef
>>> df = pl.DataFrame({"prediction": ["so \\\\boxed{4}", "#### 5", "it is 6", None],
...                    "gold": ["4", "5", "6", "1"]})
>>> audit = ef.audit_extractors(df, ["boxed", "last_number"], gold="gold")
>>> audit.summary.select("extractor", "answered", "coverage", "accuracy")
shape: (2, 4)
┌─────────────┬──────────┬──────────┬──────────┐
│ extractor   ┆ answered ┆ coverage ┆ accuracy │
│ ---         ┆ ---      ┆ ---      ┆ ---      │
│ str         ┆ u32      ┆ f64      ┆ f64      │
╞═════════════╪══════════╪══════════╪══════════╡
│ boxed       ┆ 1        ┆ 0.25     ┆ 0.25     │
│ last_number ┆ 3        ┆ 0.75     ┆ 0.75     │
└─────────────┴──────────┴──────────┴──────────┘
>>> audit.flips.select("row", "prediction", "extracted_boxed", "extracted_last_number")
shape: (2, 4)
┌─────┬────────────┬─────────────────┬───────────────────────┐
│ row ┆ prediction ┆ extracted_boxed ┆ extracted_last_number │
│ --- ┆ ---        ┆ ---             ┆ ---                   │
│ u32 ┆ str        ┆ str             ┆ str                   │
╞═════╪════════════╪═════════════════╪═══════════════════════╡
│ 1   ┆ #### 5     ┆ null            ┆ 5                     │
│ 2   ┆ it is 6    ┆ null            ┆ 6                     │
└─────┴────────────┴─────────────────┴───────────────────────┘
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations

import polars as pl

from evalframe.errors import EvalframeError
from evalframe.extract.api import Extractors, check_column, over_lists, resolve, resolve_many
from evalframe.extract.table import ExtractFunction

__all__ = ["ExtractionAudit", "audit_extractors"]


@dataclass(frozen=True)
class ExtractionAudit:
    """The three tables of :func:`audit_extractors` (Polars DataFrames).

    Attributes
    ----------
    summary
        One row per extractor (per ``by`` group): ``extractor``; ``rows`` (responses; with
        a ``List(String)`` column, generations); ``answered`` (rows whose ``extracted``
        is not null and whose rule is not ``"none"``); ``coverage`` (answered / rows);
        with ``gold``: ``n_gold`` (rows with a gold), ``correct`` (the extracted answer
        equals the gold, or one of a ``List(String)`` gold's alternatives) and
        ``accuracy`` (correct / n_gold: a row without an answer counts as wrong, as
        ``exact_match(extractor=...)`` averaged by ``aggregate``).
    disagreements
        One row per pair of extractors (per group), in the order given:
        ``extractor_a``, ``extractor_b``, ``both_answered``, ``disagree`` (both
        answered, with different answers), ``disagreement`` (disagree / both_answered,
        null when no row has both), ``only_a`` and ``only_b`` (one answered, the other
        did not).
    flips
        With ``gold``: the rows whose verdict (correct or not) differs between
        extractors: ``row`` (the row's number in the input, from 0), ``generation``
        (with a list column), the ``by`` columns, the response, the gold, then per
        extractor ``extracted_<label>`` and ``correct_<label>``. Without ``gold``: no
        rows.
    """

    summary: pl.DataFrame
    disagreements: pl.DataFrame
    flips: pl.DataFrame


def _columns(by: str | Sequence[str] | None) -> list[str]:
    if by is None:
        return []
    if isinstance(by, str):
        return [by]
    if isinstance(by, Sequence) and all(isinstance(name, str) for name in by):
        return list(by)
    raise EvalframeError(
        f"audit_extractors: by= must be a column name or a list of them, got {by!r}"
    )


def _grouped(frame: pl.DataFrame, by: list[str], aggregations: list[pl.Expr]) -> pl.DataFrame:
    if by:
        return frame.group_by(by, maintain_order=True).agg(aggregations)
    return frame.select(aggregations)


def audit_extractors(
    frame: pl.DataFrame | pl.LazyFrame,
    extractors: Extractors,
    *,
    column: str = "prediction",
    gold: str | None = None,
    by: str | Sequence[str] | None = None,
    gold_extractor: str | ExtractFunction | None = None,
) -> ExtractionAudit:
    """Compare extractors on one dump: coverage, accuracy, disagreements, flipped verdicts.

    Parameters
    ----------
    frame
        The responses (``DataFrame`` or ``LazyFrame``, collected here).
    extractors
        Names from the extractor table, :class:`~evalframe.extract.table.Extractor`
        objects or functions, as a list, or a mapping label -> extractor. ``"none"`` (the
        text itself) is a baseline: plain exact match of the whole response.
    column
        The responses: ``String``, or ``List(String)`` (each generation is one row).
    gold
        The gold column (``String``, or ``List(String)`` of alternatives); gives the
        accuracy and the flips.
    by
        Column(s) to group the summary and the disagreements by (``task``, ``model``).
    gold_extractor
        An extractor applied to the gold first (``"gsm8k_answer"`` for GSM8K's
        ``answer`` field); default none.

    Returns
    -------
    ExtractionAudit
        ``summary``, ``disagreements`` and ``flips``; see :class:`ExtractionAudit`.

    Notes
    -----
    A null response has no answer under any extractor (it counts in ``rows``, never in
    ``answered``). A null gold, a gold list of only nulls or an empty one, leaves the row
    out of ``n_gold`` and of the flips. The comparison is exact string equality, after
    nothing but the extraction (normalise with a custom extractor if needed).

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"prediction": ["\\\\boxed{2} so 3", "1, then 2", "7"],
    ...                    "gold": ["2", "2", "7"]})
    >>> audit_extractors(df, ["boxed", "last_number"], gold="gold").disagreements
    shape: (1, 7)
    ┌─────────────┬─────────────┬───────────────┬──────────┬──────────────┬────────┬────────┐
    │ extractor_a ┆ extractor_b ┆ both_answered ┆ disagree ┆ disagreement ┆ only_a ┆ only_b │
    │ ---         ┆ ---         ┆ ---           ┆ ---      ┆ ---          ┆ ---    ┆ ---    │
    │ str         ┆ str         ┆ u32           ┆ u32      ┆ f64          ┆ u32    ┆ u32    │
    ╞═════════════╪═════════════╪═══════════════╪══════════╪══════════════╪════════╪════════╡
    │ boxed       ┆ last_number ┆ 1             ┆ 1        ┆ 1.0          ┆ 0      ┆ 2      │
    └─────────────┴─────────────┴───────────────┴──────────┴──────────────┴────────┴────────┘
    """
    where = "audit_extractors"
    if not isinstance(frame, pl.DataFrame | pl.LazyFrame):
        raise EvalframeError(
            f"{where}: expected a polars DataFrame or LazyFrame, got {type(frame).__name__}"
        )
    entries, _ = resolve_many(extractors, where)
    labels = [label for label, _ in entries]
    keys = _columns(by)
    schema = frame.collect_schema()
    lists = check_column(schema, column, where)
    wanted = [*keys, *([gold] if gold is not None else [])]
    absent = [name for name in wanted if name not in schema]
    if absent:
        raise EvalframeError(
            f"{where}: no column(s) {absent}; available: {', '.join(schema.names())}"
        )
    if gold is not None:
        gold_dtype = schema[gold]
        if gold_dtype not in (pl.String, pl.Null) and not (
            isinstance(gold_dtype, pl.List) and gold_dtype.inner in (pl.String, pl.Null)
        ):
            raise EvalframeError(
                f"{where}: gold column {gold!r} has dtype {gold_dtype}; expected str or "
                "list[str] (alternatives)"
            )
    reserved = sorted(
        {"row", "generation", "__golds"} & {*keys, column, gold}
        | {name for name in (*keys, column) if name.startswith("__found_")}
    )
    if reserved:
        raise EvalframeError(
            f"{where}: column(s) {reserved} are named like the audit's own columns; rename them"
        )
    plan = frame.lazy().select(
        pl.int_range(pl.len(), dtype=pl.UInt32).alias("row"),
        *[pl.col(name) for name in dict.fromkeys([*keys, column, *([gold] if gold else [])])],
    )
    if lists:
        plan = plan.explode(column, empty_as_null=False).with_columns(
            pl.int_range(pl.len(), dtype=pl.UInt32).over("row").alias("generation")
        )
    text = pl.col(column).cast(pl.String)
    structs = {f"__found_{index}": function(text) for index, (_, function) in enumerate(entries)}
    columns: list[pl.Expr] = []
    for key, label in zip(structs, labels, strict=True):
        columns.append(pl.col(key).struct.field("extracted").alias(f"extracted_{label}"))
        columns.append(pl.col(key).struct.field("rule").alias(f"rule_{label}"))
    if gold is not None:
        golds = pl.concat_list([pl.col(gold)]).cast(pl.List(pl.String))
        if gold_extractor is not None:
            _, gold_function = resolve(gold_extractor, where)
            golds = over_lists(golds, gold_function).list.eval(
                pl.element().struct.field("extracted")
            )
        columns.append(golds.list.drop_nulls().alias("__golds"))
    wide = plan.with_columns(**structs).with_columns(columns).drop(list(structs)).collect()
    answered = {
        label: (
            pl.col(f"extracted_{label}").is_not_null() & (pl.col(f"rule_{label}") != "none")
        ).fill_null(False)
        for label in labels
    }
    has_gold = pl.col("__golds").list.len() > 0 if gold is not None else None
    correct = {
        label: pl.when(has_gold).then(
            pl.col("__golds").list.contains(pl.col(f"extracted_{label}")).fill_null(False)
            & pl.col(f"extracted_{label}").is_not_null()
        )
        for label in labels
    } if gold is not None else {}
    wide = wide.with_columns(
        *[expr.alias(f"answered_{label}") for label, expr in answered.items()],
        *[expr.alias(f"correct_{label}") for label, expr in correct.items()],
    )
    return ExtractionAudit(
        summary=_summary(wide, keys, labels, gold is not None),
        disagreements=_disagreements(wide, keys, labels),
        flips=_flips(wide, keys, labels, column, gold, lists),
    )


def _summary(wide: pl.DataFrame, keys: list[str], labels: list[str], gold: bool) -> pl.DataFrame:
    parts = []
    for label in labels:
        aggregations = [
            pl.len().cast(pl.UInt32).alias("rows"),
            pl.col(f"answered_{label}").sum().cast(pl.UInt32).alias("answered"),
        ]
        if gold:
            aggregations += [
                pl.col(f"correct_{label}").count().cast(pl.UInt32).alias("n_gold"),
                pl.col(f"correct_{label}").sum().cast(pl.UInt32).alias("correct"),
            ]
        part = _grouped(wide, keys, aggregations).with_columns(
            pl.lit(label).alias("extractor"),
            (pl.col("answered") / pl.col("rows")).alias("coverage"),
        )
        order = [*keys, "extractor", "rows", "answered", "coverage"]
        if gold:
            part = part.with_columns(
                pl.when(pl.col("n_gold") > 0)
                .then(pl.col("correct") / pl.col("n_gold"))
                .otherwise(None)
                .alias("accuracy")
            )
            order += ["n_gold", "correct", "accuracy"]
        parts.append(part.select(order))
    return pl.concat(parts)


_PAIR_SCHEMA = {
    "extractor_a": pl.String, "extractor_b": pl.String, "both_answered": pl.UInt32,
    "disagree": pl.UInt32, "disagreement": pl.Float64, "only_a": pl.UInt32, "only_b": pl.UInt32,
}


def _disagreements(wide: pl.DataFrame, keys: list[str], labels: list[str]) -> pl.DataFrame:
    parts = []
    for a, b in combinations(labels, 2):
        answered_a, answered_b = pl.col(f"answered_{a}"), pl.col(f"answered_{b}")
        both = answered_a & answered_b
        differ = both & (pl.col(f"extracted_{a}") != pl.col(f"extracted_{b}"))
        aggregations = [
            both.sum().cast(pl.UInt32).alias("both_answered"),
            differ.sum().cast(pl.UInt32).alias("disagree"),
            (answered_a & ~answered_b).sum().cast(pl.UInt32).alias("only_a"),
            (answered_b & ~answered_a).sum().cast(pl.UInt32).alias("only_b"),
        ]
        part = _grouped(wide, keys, aggregations).with_columns(
            pl.lit(a).alias("extractor_a"),
            pl.lit(b).alias("extractor_b"),
            pl.when(pl.col("both_answered") > 0)
            .then(pl.col("disagree") / pl.col("both_answered"))
            .otherwise(None)
            .alias("disagreement"),
        )
        parts.append(part.select(*keys, *_PAIR_SCHEMA))
    if not parts:
        return pl.DataFrame(schema={**{key: wide.schema[key] for key in keys}, **_PAIR_SCHEMA})
    return pl.concat(parts)


def _flips(
    wide: pl.DataFrame,
    keys: list[str],
    labels: list[str],
    column: str,
    gold: str | None,
    lists: bool,
) -> pl.DataFrame:
    shown = list(dict.fromkeys(["row", *(["generation"] if lists else []), *keys, column]))
    if gold is None:
        return wide.select(*shown, *[f"extracted_{label}" for label in labels]).clear()
    if gold not in shown:
        shown.append(gold)
    verdicts = [pl.col(f"correct_{label}") for label in labels]
    flipped = pl.any_horizontal(verdicts) & ~pl.all_horizontal(verdicts)
    per_extractor = [
        name for label in labels for name in (f"extracted_{label}", f"correct_{label}")
    ]
    return wide.filter(flipped.fill_null(False)).select(*shown, *per_extractor)
