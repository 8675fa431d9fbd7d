"""An audit of a pairwise judge: position bias, flips, length bias, self-preference, agreement.

:func:`audit` returns a long table, one row per group of ``by``, judge and measure: ``value``
with a percentile bootstrap interval (``ci_low``, ``ci_high``), ``n`` (the units the measure
counts) and ``n_excluded`` (the units it had to leave out), and a ``signature``.

The judge's preference for A on a row, ``y``, is read from the first of these the frame has:
``preference`` (AlpacaEval: ``2 - preference`` for a preference in [1, 2], 0.5 for AlpacaEval
1's draw 0; anything else, null or NaN is no verdict, as AlpacaEval counts it), ``outcome``
(1 for ``A``, 0 for ``B``, 0.5 for ``tie`` and ``inconsistent``, none for ``error``), or the
verdicts ``verdict_ab`` / ``verdict_ba`` classified as :func:`evalframe.judge.classify` does.
Its label is ``A`` when ``y > 0.5``, ``B`` when ``y < 0.5`` and ``tie`` at 0.5: an inconsistent
pair counts as a tie, as FastChat's MT-bench counts it.

Measures (``n`` in brackets):

- ``position_bias`` [decisive verdicts]: :func:`evalframe.judge.report`'s rate, on the rows
  judged in both orders (both verdicts present): among the single verdicts that pick a winner,
  the share that picked the answer shown first (``"A"`` in ``verdict_ab``, ``"B"`` in
  ``verdict_ba``). 0.5 is no preference for a slot. Rows with one verdict are excluded: which
  answer came first is only known when the positions were swapped (AlpacaEval shows the
  answers in a random order and records one verdict, so this is null there).
- ``flip_rate`` [pairs]: among the rows whose two verdicts are both ``A``, ``B`` or ``tie``,
  the share whose verdicts differ (opposite winners, or a winner and a tie: ``inconsistent``).
- ``length_bias`` [rows]: the least-squares slope of ``y`` on the standardised length
  difference ``z = (d - mean(d)) / sd(d)``, ``d = len(answer_a) - len(answer_b)`` in characters
  (``sd`` with ``ddof=1``, over the rows used): the change in the preference for A when A's
  answer is one standard deviation longer, relative to B's. 0 is no length bias, +0.1 means
  ten points more preference per standard deviation. Equal to
  ``scipy.stats.linregress(z, y).slope``; null when fewer than two rows or every ``d`` equal.
- ``self_win_rate`` [rows]: on the rows where one of the two models is the judge's own (the
  judge's name equals ``model_a`` or ``model_b``, or a model ``self_models`` gives it), the mean
  preference for its own model (``y`` when it is A, ``1 - y`` when B). It cannot tell
  self-preference from a better model: that needs a reference.
- ``self_preference`` [rows]: on the same rows, how much more the judge prefers its own
  model than the reference does: the mean of ``y_self - r_self``, the reference ``r`` being
  the human label (1, 0.5, 0) when ``human`` is given, else the mean preference of the other
  judges on the same item. Null when there is no reference (one judge and no human labels).
- ``agreement`` [rows]: with ``human``, the share of rows whose judge label equals the human
  label (``A``, ``B``, ``tie``).
- ``cohen_kappa`` [rows]: Cohen's kappa of the judge's labels against the human labels, equal
  to ``sklearn.metrics.cohen_kappa_score`` (``kappa_weights`` ``"linear"`` or ``"quadratic"``
  on the order ``A < tie < B``: pass ``labels=["A", "tie", "B"]`` to scikit-learn).
- ``fleiss_kappa`` [items]: with two or more judges, Fleiss' kappa among the judges (the human
  labels are not a rater) on the items every judge of the group labelled, equal to
  ``statsmodels.stats.inter_rater.fleiss_kappa``; its ``judge`` is the judges joined by
  ``" + "``.

Items are matched across judges and with a human-label frame on ``on`` (by default the
question id, ``sample_id`` or ``question``, the two models and ``turn`` when present); when both
models are keys, a pair shown as (m2, m1) is the same item as (m1, m2), its labels mirrored.

Intervals: a percentile bootstrap over clusters (``cluster``, ``sample_id`` or ``question``:
the questions, so repeated questions and the judges of one question are resampled together):
each replicate draws the group's clusters with replacement (one multinomial draw,
``numpy.random.default_rng(seed)``, fresh for each group) and recomputes every measure from
the reweighted per-cluster counts, nothing re-read. A replicate where a measure is undefined
(no decisive verdict drawn, one label only) is left out of its interval, with a warning.

>>> import polars as pl
>>> pairs = pl.DataFrame({"verdict_ab": ["A", "A", "B", "tie"],
...                       "verdict_ba": ["A", "B", "B", "A"]})
>>> audit(pairs, measures=["position_bias", "flip_rate"], bootstrap=0).select(
...     "measure", "value", "n", "n_excluded")
shape: (2, 4)
┌───────────────┬──────────┬─────┬────────────┐
│ measure       ┆ value    ┆ n   ┆ n_excluded │
│ ---           ┆ ---      ┆ --- ┆ ---        │
│ str           ┆ f64      ┆ u32 ┆ u32        │
╞═══════════════╪══════════╪═════╪════════════╡
│ position_bias ┆ 0.571429 ┆ 7   ┆ 0          │
│ flip_rate     ┆ 0.5      ┆ 4   ┆ 0          │
└───────────────┴──────────┴─────┴────────────┘
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence

import polars as pl

from evalframe.errors import EvalframeError
from evalframe.io.load import Source, scan
from evalframe.judge.audit_rows import (
    HUMAN_LABELS,
    JUDGE,
    Names,
    add_human,
    canonical,
    fleiss_items,
    read_rows,
    row_statistics,
)
from evalframe.judge.audit_stats import AUDIT_COLUMNS, MEASURES, Context, evaluate, measure_kinds
from evalframe.judge.grouping import group_columns
from evalframe.judge.kappa import WEIGHTS
from evalframe.stats.options import check_level, check_replicates_or_none, check_seed

__all__ = ["AUDIT_COLUMNS", "HUMAN_LABELS", "MEASURES", "audit", "check_options"]

#: The columns naming the judge, looked for in this order.
_JUDGE_COLUMNS = ("judge_model", "judge")
#: The columns naming the question, looked for in this order (item keys, clusters).
_QUESTION_COLUMNS = ("sample_id", "question")


def check_options(
    *,
    measures: Sequence[str] | None = None,
    ci: float = 0.95,
    bootstrap: int = 1000,
    seed: int = 0,
    kappa_weights: str | None = None,
    self_models: Mapping[str, str | Sequence[str]] | None = None,
) -> tuple[str, ...] | None:
    """Check :func:`audit`'s options that need no data; return the measures asked for.

    >>> check_options(measures=["flip_rate", "position_bias"])
    ('position_bias', 'flip_rate')
    >>> check_options(bootstrap=1)
    Traceback (most recent call last):
    ...
    evalframe.errors.OptionError: bootstrap=1 gives no spread; use 0 (no intervals) or >= 2
    """
    check_level(ci)
    check_replicates_or_none(bootstrap)
    check_seed(seed)
    if kappa_weights is not None and kappa_weights not in WEIGHTS:
        raise EvalframeError(
            f"kappa_weights={kappa_weights!r}: expected None, 'linear' or 'quadratic'"
        )
    if self_models is not None:
        if not isinstance(self_models, Mapping):
            raise EvalframeError(
                f"self_models={self_models!r}: expected a mapping of judge name -> model "
                "name(s), e.g. {'alpaca_eval_gpt4': 'gpt4'}"
            )
        for name, models in self_models.items():
            listed = [models] if isinstance(models, str) else models
            if not isinstance(name, str) or not isinstance(listed, Sequence) or not all(
                isinstance(model, str) for model in listed
            ):
                raise EvalframeError(
                    f"self_models: {name!r} -> {models!r}; expected a judge name mapped to a "
                    "model name or a list of model names"
                )
    if measures is None:
        return None
    listed = [measures] if isinstance(measures, str) else list(measures)
    unknown = [m for m in listed if m not in MEASURES]
    if unknown or not listed:
        raise EvalframeError(
            f"measures={listed!r}: unknown measure(s) {unknown}; expected some of "
            f"{', '.join(MEASURES)}" if unknown else "measures=[]: name at least one measure"
        )
    return tuple(m for m in MEASURES if m in listed)


def audit(
    frame: Source,
    *,
    human: str | Source | None = None,
    by: str | Sequence[str] | None = None,
    judge: str | None = None,
    measures: Sequence[str] | None = None,
    on: Sequence[str] | None = None,
    self_models: Mapping[str, str | Sequence[str]] | None = None,
    kappa_weights: str | None = None,
    ci: float = 0.95,
    bootstrap: int = 1000,
    seed: int = 0,
    cluster: str | bool | None = None,
    human_label: str = "human",
    verdict_ab: str = "verdict_ab",
    verdict_ba: str = "verdict_ba",
    outcome: str = "outcome",
    preference: str | None = "preference",
    answer_a: str = "answer_a",
    answer_b: str = "answer_b",
    model_a: str = "model_a",
    model_b: str = "model_b",
) -> pl.DataFrame:
    """Audit a pairwise judge: one row per group, judge and measure (see the module docs).

    Parameters
    ----------
    frame
        Pairwise judgment rows (DataFrame, LazyFrame or files): :func:`pairwise` or
        :func:`classify` results, or rows an adapter reads (``mtbench_pair``,
        ``alpaca_eval``). Several judges: one row per judge and item, the judge named in
        ``judge``.
    human
        Human labels ``"A"``, ``"B"``, ``"tie"`` (null: no label): the name of a column of
        ``frame``, or a separate frame or file with the ``on`` columns and ``human_label``,
        one row per item (joined; a judged row without a label is excluded and counted in
        ``n_excluded``; a human row no judge judged is not used).
    by
        Grouping column(s).
    judge
        The column naming the judge; default ``judge_model`` or ``judge`` when present
        (else one unnamed judge).
    measures
        Measures to compute (:data:`MEASURES`); one that cannot be computed is an error.
        Default: the first five, ``agreement`` and ``cohen_kappa`` with ``human``, and
        ``fleiss_kappa`` with two or more judges; one that cannot be computed (a column
        absent) is null, with a warning.
    on
        The columns naming an item, to match judges and human labels; default the question
        id (``sample_id`` or ``question``), ``model_a``, ``model_b`` and ``turn`` present.
    self_models
        Judge name -> its own model name(s), where they are spelt differently
        (``{"weighted_alpaca_eval_gpt4_turbo": "gpt4_1106_preview"}``); a judge named
        like a model is always its own.
    kappa_weights
        ``None``, ``"linear"`` or ``"quadratic"`` for ``cohen_kappa`` (order A < tie < B).
    ci, bootstrap, seed
        Level of the percentile interval, replicates (0: no interval), seed.
    cluster
        The column whose values are resampled; default ``cluster``, ``sample_id`` or
        ``question`` (the first present), else rows; ``False``: rows.
    human_label
        The label column of a separate human frame.
    verdict_ab, verdict_ba, outcome, preference, answer_a, answer_b, model_a, model_b
        The frame's columns (``preference=None``: do not read a preference column).

    Returns
    -------
    pl.DataFrame
        The ``by`` keys and :data:`AUDIT_COLUMNS`, sorted by the keys, the judge and the
        order of :data:`MEASURES`.

    Raises
    ------
    EvalframeError
        On an invalid option, a missing column named by an option, a label outside the
        allowed ones (naming the column, row and labels), a measure asked for that cannot be
        computed, or an item a judge (or the human frame) holds twice when items are matched.

    Examples
    --------
    >>> import polars as pl
    >>> rows = pl.DataFrame({"outcome": ["A", "B", "tie", "A"], "human": ["A", "B", "B", None]})
    >>> audit(rows, human="human", measures=["agreement", "cohen_kappa"], bootstrap=0).select(
    ...     "measure", "value", "n", "n_excluded")
    shape: (2, 4)
    ┌─────────────┬──────────┬─────┬────────────┐
    │ measure     ┆ value    ┆ n   ┆ n_excluded │
    │ ---         ┆ ---      ┆ --- ┆ ---        │
    │ str         ┆ f64      ┆ u32 ┆ u32        │
    ╞═════════════╪══════════╪═════╪════════════╡
    │ agreement   ┆ 0.666667 ┆ 3   ┆ 1          │
    │ cohen_kappa ┆ 0.5      ┆ 3   ┆ 1          │
    └─────────────┴──────────┴─────┴────────────┘
    """
    requested = check_options(measures=measures, ci=ci, bootstrap=bootstrap, seed=seed,
                              kappa_weights=kappa_weights, self_models=self_models)
    lazy = scan(frame)
    schema = lazy.collect_schema()
    judge_column = _judge_column(judge, schema)
    keys = _keys(by, schema, judge_column)
    names = Names(verdict_ab, verdict_ba, outcome, preference, answer_a, answer_b, model_a,
                   model_b)
    source = _source(schema, names)
    items = _item_keys(on, schema, names)
    cluster_column = _cluster_column(cluster, schema)
    human_column = human if isinstance(human, str) and human in schema else None
    wanted = [*keys, *items, *(c for c in (judge_column, cluster_column, human_column) if c)]
    wanted += [c for c in names.columns() if c and c in schema]
    table = lazy.select(list(dict.fromkeys(wanted))).collect()
    rows = read_rows(table, keys, judge_column, cluster_column, source, names)
    rows = canonical(rows, items, names)
    if human is not None:
        rows = add_human(rows, human, human_column, human_label, items, names)
    if self_models:
        present = set(rows[JUDGE].drop_nulls().to_list())
        absent = sorted(set(self_models) - present)
        if absent:
            raise EvalframeError(
                f"self_models names judge(s) {absent} that the frame does not have; judges: "
                f"{sorted(present)}"
            )
    judges = rows[JUDGE].n_unique() if judge_column else 1
    chosen, reasons = _choose(requested, schema, names, source, judge_column, human, items,
                              judges)
    kinds = measure_kinds(kappa_weights)
    computable = tuple(m for m in chosen if m not in reasons)
    rows = row_statistics(rows, keys, computable, self_models or {}, human is not None, items)
    fleiss = fleiss_items(rows, keys, items) if "fleiss_kappa" in computable else None
    context = Context(keys, chosen, kinds, bootstrap, seed, ci, source, kappa_weights,
                       cluster_column, human is not None, self_models or {})
    table = evaluate(rows, fleiss, context)
    if reasons:
        warnings.warn(
            "audit: left null: " + "; ".join(f"{m} ({why})" for m, why in reasons.items()),
            stacklevel=2,
        )
    return table


# ---------------------------------------------------------------- options against the frame


def _judge_column(judge: str | None, schema: pl.Schema) -> str | None:
    if judge is None:
        return next((name for name in _JUDGE_COLUMNS if name in schema), None)
    if not isinstance(judge, str) or judge not in schema:
        raise EvalframeError(f"judge={judge!r}: no such column; available: {list(schema)}")
    return judge


def _keys(by: str | Sequence[str] | None, schema: pl.Schema, judge: str | None) -> list[str]:
    named = [] if by is None else [by] if isinstance(by, str) else list(by)
    if judge is not None and judge in named:
        raise EvalframeError(
            f"by={by!r}: {judge!r} is the judge column, which the table always splits by"
        )
    return group_columns(by, schema, taken=AUDIT_COLUMNS, table="audit table")


def _source(schema: pl.Schema, names: Names) -> str | None:
    """Where the judge's preference for A is read: the first column kind present."""
    if names.preference is not None and names.preference in schema:
        return "preference"
    if names.outcome in schema:
        return "outcome"
    if names.verdict_ab in schema or names.verdict_ba in schema:
        return "verdicts"
    return None


def _item_keys(on: Sequence[str] | None, schema: pl.Schema, names: Names) -> list[str]:
    if on is None:
        question = next((name for name in _QUESTION_COLUMNS if name in schema), None)
        if question is None:
            return []
        extra = [names.model_a, names.model_b, "turn"]
        return [question, *(name for name in extra if name in schema)]
    keys = [on] if isinstance(on, str) else list(on)
    absent = [key for key in keys if not isinstance(key, str) or key not in schema]
    if absent or not keys:
        raise EvalframeError(
            f"on={keys!r}: no such column(s) {absent}; available: {list(schema)}"
            if absent else "on=[]: name the column(s) identifying an item"
        )
    return list(dict.fromkeys(keys))


def _cluster_column(cluster: str | bool | None, schema: pl.Schema) -> str | None:
    if cluster is None:
        return next((name for name in ("cluster", *_QUESTION_COLUMNS) if name in schema), None)
    if cluster is False:
        return None
    if not isinstance(cluster, str):
        raise EvalframeError(f"cluster={cluster!r}: expected a column name, None or False")
    if cluster not in schema:
        raise EvalframeError(f"cluster={cluster!r}: no such column; available: {list(schema)}")
    return cluster


def _choose(
    requested: tuple[str, ...] | None,
    schema: pl.Schema,
    names: Names,
    source: str | None,
    judge: str | None,
    human: object,
    items: list[str],
    judges: int,
) -> tuple[tuple[str, ...], dict[str, str]]:
    """The measures to compute, and why those that cannot be are null (or an error)."""
    absent = {}
    verdicts = [c for c in (names.verdict_ab, names.verdict_ba) if c not in schema]
    if verdicts:
        reason = f"no column {verdicts} (the verdicts with A, then B, shown first)"
        absent["position_bias"] = absent["flip_rate"] = reason
    no_preference = (
        f"no {names.preference!r}, {names.outcome!r}, {names.verdict_ab!r} or "
        f"{names.verdict_ba!r} column (the judge's verdict)"
    )
    answers = [c for c in (names.answer_a, names.answer_b) if c not in schema]
    if answers:
        absent["length_bias"] = f"no column {answers} (the answers)"
    models = [c for c in (names.model_a, names.model_b) if c not in schema]
    if judge is None or models:
        missing = ["a judge column (judge_model or judge)"] if judge is None else []
        missing += [repr(c) for c in models]
        absent["self_win_rate"] = absent["self_preference"] = "no " + ", ".join(missing)
    elif human is None and judges < 2:
        absent["self_preference"] = (
            "one judge and no human labels: nothing to compare its preference with"
        )
    elif human is None and not items:
        absent["self_preference"] = "no item columns to match the judges (name them with on=)"
    for measure in ("agreement", "cohen_kappa"):
        if human is None:
            absent[measure] = "no human labels (human=)"
    if judges < 2:
        absent["fleiss_kappa"] = "fewer than two judges"
    elif not items:
        absent["fleiss_kappa"] = "no item columns to match the judges (name them with on=)"
    if source is None:
        for measure in ("length_bias", "self_win_rate", "self_preference", "agreement",
                        "cohen_kappa", "fleiss_kappa"):
            absent.setdefault(measure, no_preference)
    if requested is not None:
        impossible = [m for m in requested if m in absent]
        if impossible:
            raise EvalframeError(
                "audit: cannot compute " + "; ".join(
                    f"{m}: {absent[m]}" for m in impossible
                )
            )
        return requested, {}
    chosen = [*MEASURES[:5]]
    if human is not None:
        chosen += ["agreement", "cohen_kappa"]
    if judges >= 2:
        chosen.append("fleiss_kappa")
    reasons = {m: absent[m] for m in chosen if m in absent}
    return tuple(chosen), reasons
