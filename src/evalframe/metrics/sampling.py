"""Metrics over several generations per prompt: maj@k, avg@k, G-pass@k_τ and mG-pass@k.

Each row holds the ``k`` (or more) generations a model sampled for one prompt as a
``list[str]`` ``prediction`` and the reference as a ``str`` (or ``list[str]`` of
alternatives) ``gold``. A generation is *correct* when, after the chosen
normaliser, it equals the gold (or any of the alternatives) exactly:

- ``normalizer="none"``: the strings as they are (lighteval's default);
- ``"strip"``: Python's ``str.strip()`` on both sides (lighteval's ``strip_strings``);
- any other name of the normaliser table (``"squad"``, ``"helm"``, ``"gsm8k"``...,
  see :data:`evalframe.normalize.NORMALIZERS`), or a function, on both sides.

The definitions follow lighteval's sampling metrics (``MajAtK``, ``AvgAtK`` and
``GPassAtK`` in ``lighteval/metrics/metrics_sample.py``): maj@k compares the most
frequent of the first ``k`` normalised generations with the gold, avg@k is the mean
correctness of the first ``k`` generations, and G-pass@k_τ is the probability that at
least ``m = max(ceil(k·τ), 1)`` of ``k`` generations drawn without replacement from
the ``n`` generated are correct (a hypergeometric tail, ``scipy.stats.hypergeom.sf``);
mG-pass@k averages it over the thresholds above 0.5.

Answers can be extracted first and compared by mathematical equivalence (every metric
with the ``(prediction, gold)`` role set; lighteval's ``avg_at_n_math``,
``pass_at_k_math``, ``g_pass_at_k_math``, ``gpqa_instruct_pass_at_k``... score so):

- ``extractor=``: an extractor of :mod:`evalframe.extract` (a name such as
  ``"lighteval_letters"``, an :class:`~evalframe.extract.table.Extractor` or a function)
  applied to every generation, after the normaliser (lighteval's order: the sampling
  metric's ``preprocess``, then its sample scoring function);
- ``gold_extractor=``: the same for the gold alternatives (as lighteval's
  ``MultilingualExtractiveMatchMetric`` extracts them);
- ``equivalence=``: ``"exact"`` (string equality, the default) or ``"math"`` (each
  (answer, gold) pair judged by :func:`evalframe.metrics._math_equal.math_equivalent`,
  math-verify's equivalence, evaluated once per distinct pair).

Everything is vectorised across rows and generations: list expressions and one
flattened pass over every generation of the column, never a Python loop over rows.
The hypergeometric tail runs as one batched scipy call over whole columns.

>>> import polars as pl
>>> from evalframe.metrics import maj_at_k, avg_at_k
>>> df = pl.DataFrame({"gens": [["4", "5", "4"], ["4", "5", "5"], None], "gold": ["4", "4", "4"]})
>>> df.with_columns(maj_at_k("gens", "gold", k=3).alias("maj@3"),
...                 avg_at_k("gens", "gold", k=3).alias("avg@3"))
shape: (3, 4)
┌─────────────────┬──────┬───────┬──────────┐
│ gens            ┆ gold ┆ maj@3 ┆ avg@3    │
│ ---             ┆ ---  ┆ ---   ┆ ---      │
│ list[str]       ┆ str  ┆ f64   ┆ f64      │
╞═════════════════╪══════╪═══════╪══════════╡
│ ["4", "5", "4"] ┆ 4    ┆ 1.0   ┆ 0.666667 │
│ ["4", "5", "5"] ┆ 4    ┆ 0.0   ┆ 0.333333 │
│ null            ┆ 4    ┆ null  ┆ null     │
└─────────────────┴──────┴───────┴──────────┘
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Literal

import numpy as np
import polars as pl

from evalframe._expr import IntoExpr, RowCheck, elementwise, guard, parse_into_expr
from evalframe.errors import EvalframeError
from evalframe.extract.table import (
    ExtractorLike,
    answer_of,
    extracted_text,
    resolve_extractor,
)
from evalframe.metrics.registry import Reference, positive_int, register, unit_fraction
from evalframe.normalize.table import TextFunction, resolve_normalizer
from evalframe.schema import LIST_STR, STR

__all__ = ["avg_at_k", "g_pass_at_k", "maj_at_k", "mg_pass_at_k"]

Normalizer = str | TextFunction
#: An ``extractor=`` / ``gold_extractor=`` value: a table name, an Extractor, a function.
ExtractorOption = ExtractorLike
#: How a (generation, gold) pair is judged.
Equivalence = Literal["exact", "math"]
#: What maj@k votes over: the (normalised) texts, as lighteval, or the extracted answers.
Vote = Literal["text", "answer"]

#: The lighteval revision whose ``metrics_sample.py`` (and unit-test fixtures) these match.
LIGHTEVAL_PACKAGE = "lighteval"
LIGHTEVAL_VERSION = "main@52f8cf6"

#: Role dtypes of the generation-based role set.
GENERATION_DTYPES = {"prediction": (LIST_STR,), "gold": (STR, LIST_STR)}


# --------------------------------------------------------------------------------------
# Shared building blocks (also used by evalframe.metrics.pass_at_k)
# --------------------------------------------------------------------------------------


def check_k(metric: str, k: object) -> int:
    """``k`` must be an integer >= 1 (it is a parameter of the metric, not a column)."""
    if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 1:
        raise EvalframeError(f"metric {metric!r}: k={k!r} is invalid; expected an integer >= 1")
    return int(k)


def normalizer_function(metric: str, normalizer: Normalizer) -> TextFunction | None:
    """The text normaliser ``normalizer`` names in the normaliser table (None: as it is)."""
    return resolve_normalizer(metric, normalizer)[1]


def _normalized_list(values: pl.Expr, normalize: Callable[[pl.Expr], pl.Expr] | None) -> pl.Expr:
    if normalize is None:
        return values
    return values.list.eval(normalize(pl.element()))


def _has_null_element(values: pl.Expr) -> pl.Expr:
    return values.list.eval(pl.element().is_null()).list.any()


def gold_alternatives(gold: IntoExpr) -> pl.Expr:
    """A ``str`` or ``list[str]`` gold as ``list[str]`` (a string becomes a one-item list)."""
    return pl.concat_list([parse_into_expr(gold)])


def count_matches(generations: pl.Expr, golds: pl.Expr) -> pl.Expr:
    """Per row, how many generations equal one of the row's golds (both ``list[str]``).

    All generations of the column are flattened into one column, each is looked up in
    its own row's gold list (a row-wise ``list.contains``), and the hits are summed back
    per row through a cumulative sum read at each row's end offset.
    """
    lengths = generations.list.len().fill_null(0).cast(pl.Int64)
    flat = generations.explode(empty_as_null=False, keep_nulls=False)
    row = pl.int_range(pl.len(), dtype=pl.Int64).repeat_by(lengths)
    row = row.explode(empty_as_null=False, keep_nulls=False)
    hits = golds.gather(row).list.contains(flat).fill_null(False).cast(pl.Int64)
    running = pl.lit(0, dtype=pl.Int64).append(hits.cum_sum())
    ends = lengths.cum_sum()
    return running.gather(ends) - running.gather(ends - lengths)


def check_equivalence(metric: str, equivalence: object) -> str:
    """``equivalence`` must be ``"exact"`` or ``"math"``."""
    if equivalence not in ("exact", "math"):
        raise EvalframeError(
            f"metric {metric!r}: equivalence={equivalence!r} is invalid; expected 'exact' or "
            "'math'"
        )
    return str(equivalence)


def check_extraction(
    metric: str, extractor: ExtractorOption, gold_extractor: ExtractorOption, equivalence: object
) -> str:
    """Validate the extraction options when the metric is built (names looked up now)."""
    resolve_extractor(metric, extractor)
    resolve_extractor(metric, gold_extractor)
    return check_equivalence(metric, equivalence)


def gold_answers(metric: str, golds: pl.Expr, gold_extractor: ExtractorOption) -> pl.Expr:
    """The ``list[str]`` golds with ``gold_extractor`` applied to each alternative.

    Where the extractor finds nothing (null) in any alternative of a row, the row's golds
    are used as they are: lighteval's ``MultilingualExtractiveMatchMetric.compute`` falls
    back to the raw golds (``extracted_golds = [[gold] for gold in golds]``) so.
    """
    _, function = resolve_extractor(metric, gold_extractor)
    if function is None:
        return golds
    extracted = extracted_text(golds, function)
    missing = extracted.list.eval(pl.element().is_null()).list.any()
    return pl.when(missing).then(golds).otherwise(extracted)


def answer_lists(
    metric: str,
    generations: pl.Expr,
    golds: pl.Expr,
    normalize: Callable[[pl.Expr], pl.Expr] | None,
    extractor: ExtractorOption = None,
    gold_extractor: ExtractorOption = None,
) -> tuple[pl.Expr, pl.Expr]:
    """Generations and golds (``list[str]``) normalised, then extracted: what is compared."""
    answers = answer_of(_normalized_list(generations, normalize), metric, extractor)
    references = gold_answers(metric, _normalized_list(golds, normalize), gold_extractor)
    return answers, references


def _math_equivalent(metric: str) -> Callable[[pl.Expr, pl.Expr], pl.Expr]:
    """math-verify's equivalence of two ``String`` expressions (imported when first used)."""
    try:
        from evalframe.metrics._math_equal import math_equivalent
    except ImportError as error:
        raise EvalframeError(
            f"metric {metric!r}: equivalence='math' is unavailable ({error})"
        ) from None
    math_equivalent(pl.col("prediction"), pl.col("gold"))  # reports a missing math-verify now
    return math_equivalent


def count_equivalent(metric: str, generations: pl.Expr, golds: pl.Expr) -> pl.Expr:
    """Per row, how many generations are mathematically equivalent to one of the golds.

    One batched kernel: every (generation, gold alternative) pair of the batch is
    flattened, each *distinct* pair judged once by ``math_equivalent`` (null, where it
    cannot decide, counts as not equivalent), and the generations with an equivalent
    gold are counted back per row. A null generation matches nothing.
    """
    equivalent = _math_equivalent(metric)

    def kernel(series: list[pl.Series]) -> pl.Series:
        frame = pl.DataFrame({"gen": series[0], "ref": series[1]}).with_row_index("__row")
        flat = frame.explode("gen", keep_nulls=False, empty_as_null=False).with_row_index(
            "__gen"
        )
        pairs = flat.explode("ref", keep_nulls=False, empty_as_null=False).filter(
            pl.col("gen").is_not_null() & pl.col("ref").is_not_null()
        )
        distinct = pairs.select("gen", "ref").unique()
        judged = distinct.with_columns(
            equivalent(pl.col("gen"), pl.col("ref")).fill_null(False).alias("__eq")
        )
        hits = (
            pairs.join(judged, on=["gen", "ref"], how="left")
            .group_by("__row", "__gen")
            .agg(pl.col("__eq").any())
            .group_by("__row")
            .agg(pl.col("__eq").sum().cast(pl.Int64))
        )
        counts = frame.select("__row").join(hits, on="__row", how="left", maintain_order="left")
        return counts["__eq"].fill_null(0).alias("count")

    return elementwise([generations, golds], kernel, pl.Int64)


def count_correct(
    metric: str, answers: pl.Expr, references: pl.Expr, equivalence: str = "exact"
) -> pl.Expr:
    """Per row, how many ``answers`` (``list[str]``) are correct for the ``references``."""
    if equivalence == "math":
        return count_equivalent(metric, answers, references)
    return count_matches(answers, references)


def generation_counts(
    metric: str,
    prediction: IntoExpr,
    gold: IntoExpr,
    normalizer: str,
    *,
    first: int | None = None,
    extractor: ExtractorOption = None,
    gold_extractor: ExtractorOption = None,
    equivalence: str = "exact",
) -> tuple[pl.Expr, pl.Expr, pl.Expr, pl.Expr]:
    """``(n, c, usable, empty_gold)`` from generations and gold.

    ``n`` is the number of generations (all of them, or ``min(first, len)``), ``c`` how
    many are correct; ``usable`` is false where the score must be null (a null
    prediction or gold, or a null element among the used generations or the golds,
    before any extraction); ``empty_gold`` flags an empty gold list (an error).
    """
    normalize = normalizer_function(metric, normalizer)
    generations = parse_into_expr(prediction)
    if first is not None:
        generations = generations.list.head(first)
    golds = gold_alternatives(gold)
    usable = ~_has_null_element(generations) & ~_has_null_element(golds)
    n = generations.list.len().cast(pl.Int64)
    answers, references = answer_lists(
        metric, generations, golds, normalize, extractor, gold_extractor
    )
    c = count_correct(metric, answers, references, equivalence)
    empty_gold = golds.list.len() == 0
    return n, c, usable, empty_gold


def empty_gold_check(empty_gold: pl.Expr) -> RowCheck:
    return RowCheck(
        invalid=empty_gold,
        what="an empty gold list",
        expected="at least one gold string per row (a null gold gives a null score)",
    )


def too_few_check(n: pl.Expr, k: int, what: str = "generations") -> RowCheck:
    return RowCheck(
        invalid=n < k,
        what=f"fewer than k={k} {what}",
        expected=f"at least k={k} {what} per row (k <= n)",
        show=(("n", n),),
    )


def count_checks(n: pl.Expr, c: pl.Expr, k: int) -> list[RowCheck]:
    """The checks every (n, c, k) metric applies: n, c >= 0, c <= n, k <= n."""
    shown = (("n", n), ("c", c))
    return [
        RowCheck(n < 0, "a negative n", "n >= 0", shown),
        RowCheck(c < 0, "a negative c", "c >= 0", shown),
        RowCheck(c > n, "c > n (more passed than drawn)", "0 <= c <= n", shown),
        RowCheck(n < k, f"k={k} > n", f"n >= k={k} (k samples cannot be drawn from n)", shown),
    ]


def counts_from_roles(
    metric: str,
    *,
    n: IntoExpr | None,
    c: IntoExpr | None,
    passed: IntoExpr | None,
    prediction: IntoExpr | None,
    gold: IntoExpr | None,
    normalizer: str,
    first: int | None = None,
    extractor: ExtractorOption = None,
    gold_extractor: ExtractorOption = None,
    equivalence: str = "exact",
) -> tuple[pl.Expr, pl.Expr, pl.Expr | None, list[RowCheck]]:
    """``(n, c, usable, extra checks)`` from whichever role set was given.

    ``usable`` is ``None`` when plain null propagation suffices (the ``n``, ``c`` roles).
    The extraction options are validated here whatever the role set, and used by the
    ``(prediction, gold)`` one only (counts and flags are already judged).
    """
    equivalence = check_extraction(metric, extractor, gold_extractor, equivalence)
    given = {
        "(n, c)": n is not None or c is not None,
        "passed": passed is not None,
        "(prediction, gold)": prediction is not None or gold is not None,
    }
    chosen = [name for name, present in given.items() if present]
    if len(chosen) != 1:
        raise EvalframeError(
            f"metric {metric!r}: pass exactly one of (n, c), passed, or (prediction, gold); "
            f"got {', '.join(chosen) if chosen else 'none'}"
        )
    if given["(n, c)"]:
        if n is None or c is None:
            raise EvalframeError(f"metric {metric!r}: n and c must be given together")
        return (
            parse_into_expr(n).cast(pl.Int64),
            parse_into_expr(c).cast(pl.Int64),
            None,
            [],
        )
    if given["passed"]:
        flags = parse_into_expr(passed)
        if first is not None:
            flags = flags.list.head(first)
        count = flags.list.len().cast(pl.Int64)
        hits = flags.list.sum().cast(pl.Int64)
        return count, hits, ~_has_null_element(flags), []
    if prediction is None or gold is None:
        raise EvalframeError(f"metric {metric!r}: prediction and gold must be given together")
    count, hits, usable, empty_gold = generation_counts(
        metric, prediction, gold, normalizer, first=first, extractor=extractor,
        gold_extractor=gold_extractor, equivalence=equivalence,
    )
    return count, hits, usable, [empty_gold_check(empty_gold)]


def _null_unless(usable: pl.Expr | None, value: pl.Expr) -> pl.Expr:
    if usable is None:
        return value
    return pl.when(usable).then(value)


def count_metric(
    metric: str,
    k: int,
    score: Callable[[pl.Expr, pl.Expr], pl.Expr],
    *,
    n: IntoExpr | None,
    c: IntoExpr | None,
    passed: IntoExpr | None,
    prediction: IntoExpr | None,
    gold: IntoExpr | None,
    normalizer: str,
    extractor: ExtractorOption = None,
    gold_extractor: ExtractorOption = None,
    equivalence: str = "exact",
) -> pl.Expr:
    """An (n, c, k) metric: ``score(n, c)`` from whichever role set was given, checked.

    Null where the counts are unknown; the rows that break :func:`count_checks` (or hold
    an empty gold list) raise when the expression runs. pass@k, G-pass@k and mG-pass@k
    are this with their own ``score``.
    """
    total, correct, usable, checks = counts_from_roles(
        metric, n=n, c=c, passed=passed, prediction=prediction, gold=gold, normalizer=normalizer,
        extractor=extractor, gold_extractor=gold_extractor, equivalence=equivalence,
    )
    value = _null_unless(usable, score(total, correct))
    return guard(metric, value, [*count_checks(total, correct, k), *checks])


# --------------------------------------------------------------------------------------
# Rules the metrics below share
# --------------------------------------------------------------------------------------

_CORRECTNESS_RULE = (
    "a generation is correct when, after the normaliser (default none: exact string "
    "equality), it equals the gold or any gold alternative of a list[str] gold; with "
    "extractor= / gold_extractor= the extracted answers are compared (normaliser first, then "
    "extractor, as lighteval's preprocess then scoring function), a generation with no "
    "answer found is wrong, and a row with a gold alternative the gold extractor finds "
    "nothing in compares its golds as they are (lighteval's fallback); equivalence='math' "
    "judges each (answer, gold) pair with math-verify equivalence instead of equality"
)
_GOLD_RULE = (
    "a null prediction or gold, or a null element among the used generations or the gold "
    "alternatives, gives a null score; an empty gold list raises EvalframeError"
)
_FIRST_GOLD_DIVERGENCE = (
    "lighteval compares each generation with the first gold only (doc.get_golds()[0]) and "
    "its maj/pass/G-pass raise for several golds; evalframe accepts a list[str] gold as "
    "alternatives, any of which may match. Case: gold ['London', 'Paris'], generation "
    "'Paris' is correct here, wrong in lighteval's AvgAtK"
)
_NULL_DIVERGENCE = (
    "lighteval turns a None generation into '' (SamplingMetric.preprocess); evalframe "
    "scores the row null"
)
_COUNT_ROLES = (("n", "c"), ("passed",), ("prediction", "gold"))
_GPASS_RULES = (
    "from n, c; or passed (list[bool]): n = list length, c = number of True; or "
    "prediction (list[str]) and gold: n = number of generations, c = number correct",
    _CORRECTNESS_RULE,
    "n < 0, c < 0, c > n or k > n raise EvalframeError with the count of rows",
    "m = max(ceil(k*tau), 1) in float64, as lighteval (k=25, tau=0.28 gives m=8, not 7)",
    "large n: scipy.stats.hypergeom.sf, exact to double precision",
    _GOLD_RULE,
)
_GPASS_DIVERGENCES = (
    "lighteval returns 0.0 for k > n (and for n <= 0); evalframe raises EvalframeError",
    _FIRST_GOLD_DIVERGENCE,
    _NULL_DIVERGENCE,
)


def _lighteval(function: str) -> Reference:
    return Reference(
        LIGHTEVAL_PACKAGE, LIGHTEVAL_VERSION, f"lighteval.metrics.metrics_sample.{function}"
    )


# --------------------------------------------------------------------------------------
# maj@k
# --------------------------------------------------------------------------------------


@register(
    "maj@{k}",
    roles=("prediction", "gold"),
    dtypes=GENERATION_DTYPES,
    parameters={"k": positive_int},
    reference=_lighteval("MajAtK (MajAtN)"),
    description="Majority vote of the first k generations compared with the gold (exact match).",
    edge_rules=(
        _CORRECTNESS_RULE,
        "the vote is taken over the normalised first k generations; ties go to the answer "
        "that occurs first (lighteval's max(answers, key=answers.count))",
        "with an extractor, vote='text' (default, lighteval's MajAtN) votes over the texts and "
        "extracts the winner; vote='answer' (lm-eval's majority_vote after an extraction "
        "filter) votes over the extracted answers, a missing answer being one of the votes",
        "fewer than k generations raise EvalframeError",
        _GOLD_RULE,
    ),
    divergences=(
        _FIRST_GOLD_DIVERGENCE,
        _NULL_DIVERGENCE,
        "lighteval's MajAtK votes over however many generations there are when fewer than "
        "k; evalframe raises (k > n)",
    ),
)
def maj_at_k(
    prediction: IntoExpr,
    gold: IntoExpr,
    *,
    k: int,
    normalizer: Normalizer = "none",
    extractor: ExtractorOption = None,
    gold_extractor: ExtractorOption = None,
    equivalence: Equivalence = "exact",
    vote: Vote = "text",
) -> pl.Expr:
    """maj@k: 1.0 when the most frequent of the first ``k`` generations is correct.

    Matches lighteval's ``MajAtK`` (``MajAtN`` in later releases): each of the first
    ``k`` generations is normalised, the most frequent normalised answer is taken and
    compared with the normalised gold by exact string equality.

    Parameters
    ----------
    prediction
        ``list[str]`` column (name or expression): the generations, in sampling order.
    gold
        ``str`` column, or ``list[str]`` of alternatives (correct if any matches).
    k
        How many generations vote (the first ``k``).
    normalizer
        ``"none"`` (lighteval's default), ``"strip"``, ``"squad"`` or ``"helm"``; applied
        to the generations before voting and to the gold.
    extractor
        An extractor (name, :class:`~evalframe.extract.table.Extractor` or function)
        for the generations; ``None``: the texts are the answers.
    gold_extractor
        An extractor for the gold alternatives (the golds as they are where it finds
        nothing in one of them).
    equivalence
        ``"exact"`` (string equality) or ``"math"`` (math-verify equivalence of the
        voted answer and a gold).
    vote
        ``"text"`` (lighteval's ``MajAtN``): the vote is over the normalised texts, and
        the extractor is applied to the winning text only; ``"answer"`` (lm-evaluation-
        harness's ``majority_vote`` filter after an extraction filter): the vote is over
        the extracted answers (a generation with none found votes for "no answer", which
        is wrong if it wins). Votes count identical strings, whatever ``equivalence``.

    Returns
    -------
    pl.Expr
        ``Float64``: 1.0 or 0.0 per row.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({
    ...     "gens": [["Paris", "Paris", "London"], ["Paris", "London", "Berlin"],
    ...              [" Rome", "Rome ", "Oslo"], None],
    ...     "gold": ["Paris", "Paris", "Rome", "Paris"],
    ... })
    >>> df.with_columns(maj_at_k("gens", "gold", k=3).alias("maj@3"),
    ...                 maj_at_k("gens", "gold", k=3, normalizer="strip").alias("stripped"))
    shape: (4, 4)
    ┌───────────────────────────────┬───────┬───────┬──────────┐
    │ gens                          ┆ gold  ┆ maj@3 ┆ stripped │
    │ ---                           ┆ ---   ┆ ---   ┆ ---      │
    │ list[str]                     ┆ str   ┆ f64   ┆ f64      │
    ╞═══════════════════════════════╪═══════╪═══════╪══════════╡
    │ ["Paris", "Paris", "London"]  ┆ Paris ┆ 1.0   ┆ 1.0      │
    │ ["Paris", "London", "Berlin"] ┆ Paris ┆ 1.0   ┆ 1.0      │
    │ [" Rome", "Rome ", "Oslo"]    ┆ Rome  ┆ 0.0   ┆ 1.0      │
    │ null                          ┆ Paris ┆ null  ┆ null     │
    └───────────────────────────────┴───────┴───────┴──────────┘
    """
    metric = f"maj@{k}"
    k = check_k(metric, k)
    equivalence = check_extraction(metric, extractor, gold_extractor, equivalence)
    if vote not in ("text", "answer"):
        raise EvalframeError(
            f"metric {metric!r}: vote={vote!r} is invalid; expected 'text' or 'answer'"
        )
    normalize = normalizer_function(metric, normalizer)
    generations = parse_into_expr(prediction).list.head(k)
    golds = gold_alternatives(gold)
    usable = ~_has_null_element(generations) & ~_has_null_element(golds)
    voted = _normalized_list(generations, normalize)
    if vote == "answer":
        voted = answer_of(voted, metric, extractor)
    majority = elementwise([voted], _majority_kernel, pl.String)
    if vote == "text":
        majority = answer_of(majority, metric, extractor)
    references = gold_answers(metric, _normalized_list(golds, normalize), gold_extractor)
    if equivalence == "math":
        hits = count_equivalent(metric, pl.concat_list([majority]), references)
        correct = (hits > 0).cast(pl.Float64)
    else:
        correct = references.list.contains(majority).fill_null(False).cast(pl.Float64)
    n = generations.list.len()
    checks = [too_few_check(n, k), empty_gold_check(golds.list.len() == 0)]
    return guard(metric, _null_unless(usable, correct), checks)


#: Up to this many votes per row are counted pairwise (k passes over a rows x k matrix);
#: longer lists are counted by one sort of (row, answer) codes.
_PAIRWISE_VOTES = 32


def majority_votes(lists: pl.Series) -> pl.Series:
    """Per row of a ``list[str]`` Series, its most frequent element (ties: the first seen).

    lighteval's ``max(answers, key=answers.count)``: among the elements of the highest
    count, the one whose first occurrence comes first. A null element is a vote like
    any other (for "no answer"); an empty or null list gives null.

    Vectorised over every element of the column at once: the strings become integer
    codes (a categorical of their own, freed with the result); up to
    ``_PAIRWISE_VOTES`` votes a row, each element's count in its row is summed from
    one comparison per position of a rows x width matrix and the first element of the
    highest count wins; longer lists are counted through one stable sort by
    (row, code), keeping each row's run of the highest count, then of the earliest
    first occurrence.

    >>> import polars as pl
    >>> lists = pl.Series([["b", "a", "a", "b"], ["x"], [], None, [None, "y", None]])
    >>> majority_votes(lists).to_list()
    ['b', 'x', None, None, None]
    """
    lengths = lists.list.len().fill_null(0).cast(pl.Int64).to_numpy()
    flat = lists.explode(empty_as_null=False, keep_nulls=False)
    if len(flat) == 0:
        return pl.Series(lists.name, [None] * len(lists), dtype=pl.String)
    physical = flat.cast(pl.Categorical(pl.Categories.random())).to_physical()
    codes = physical.fill_null(int(physical.max() or 0) + 1).cast(pl.Int64).to_numpy()
    width = int(lengths.max())
    if width <= _PAIRWISE_VOTES:
        positions = _pairwise_winners(codes, lengths, width)
    else:
        positions = _sorted_winners(codes, lengths)
    empty = lengths == 0
    positions[empty] = 0
    return flat.gather(positions).set(pl.Series(empty), None).alias(lists.name)


def _pairwise_winners(codes: np.ndarray, lengths: np.ndarray, width: int) -> np.ndarray:
    """Flat position of each row's majority element, counting votes pairwise."""
    rows = len(lengths)
    starts = np.cumsum(lengths) - lengths
    if (lengths == width).all():
        matrix = codes.reshape(rows, width)
    else:
        # padding: negative codes, one per column, equal to no answer and to each other,
        # after the row's answers (so never the first of the highest count)
        matrix = np.broadcast_to(-1 - np.arange(width, dtype=np.int64), (rows, width)).copy()
        row = np.repeat(np.arange(rows, dtype=np.int64), lengths)
        matrix[row, np.arange(len(codes), dtype=np.int64) - starts[row]] = codes
    counts = np.zeros((rows, width), dtype=np.int8)
    for column in range(width):
        counts += matrix == matrix[:, column, None]
    return starts + counts.argmax(axis=1)


def _sorted_winners(codes: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Flat position of each row's majority element, counting votes through one sort."""
    rows, total = len(lengths), len(codes)
    span = int(codes.max()) + 1
    key = np.repeat(np.arange(rows, dtype=np.int64) * span, lengths) + codes
    order = np.argsort(key, kind="stable")
    ordered = key[order]
    runs = np.flatnonzero(np.concatenate(([True], ordered[1:] != ordered[:-1])))
    counts = np.diff(np.append(runs, total))
    first = order[runs]  # the stable sort keeps each run's earliest position first
    run_row = ordered[runs] // span
    # the highest count first, then the earliest first occurrence
    score = counts * (total + 1) + (total - first)
    row_runs = np.flatnonzero(np.concatenate(([True], run_row[1:] != run_row[:-1])))
    positions = np.zeros(rows, dtype=np.int64)
    positions[run_row[row_runs]] = total - np.maximum.reduceat(score, row_runs) % (total + 1)
    return positions


def _majority_kernel(series: list[pl.Series]) -> pl.Series:
    return majority_votes(series[0])


# --------------------------------------------------------------------------------------
# avg@k
# --------------------------------------------------------------------------------------


@register(
    "avg@{k}",
    roles=(("passed",), ("prediction", "gold")),
    dtypes=GENERATION_DTYPES,
    parameters={"k": positive_int},
    reference=_lighteval("AvgAtK (AvgAtN)"),
    description="Mean correctness of the first k generations.",
    edge_rules=(
        _CORRECTNESS_RULE,
        "from passed (list[bool]): the mean of the first k flags",
        "fewer than k generations raise EvalframeError (lighteval: IndexError)",
        _GOLD_RULE,
    ),
    divergences=(
        _FIRST_GOLD_DIVERGENCE,
        _NULL_DIVERGENCE,
        "lighteval's AvgAtK ignores its strip_strings/normalize options (it scores the raw "
        "texts); evalframe applies the chosen normaliser to both sides",
    ),
)
def avg_at_k(
    prediction: IntoExpr | None = None,
    gold: IntoExpr | None = None,
    *,
    k: int,
    passed: IntoExpr | None = None,
    normalizer: Normalizer = "none",
    extractor: ExtractorOption = None,
    gold_extractor: ExtractorOption = None,
    equivalence: Equivalence = "exact",
) -> pl.Expr:
    """avg@k: the mean correctness of the first ``k`` generations.

    Matches lighteval's ``AvgAtK`` (``AvgAtN`` in later releases).

    Parameters
    ----------
    prediction
        ``list[str]`` column of generations, in sampling order (with ``gold``).
    gold
        ``str`` column, or ``list[str]`` of alternatives (correct if any matches).
    k
        How many generations count (the first ``k``).
    passed
        Instead of ``prediction``/``gold``: a ``list[bool]`` column of per-generation
        correctness.
    normalizer
        ``"none"`` (default), ``"strip"``, ``"squad"`` or ``"helm"``, applied to both sides.
    extractor, gold_extractor, equivalence
        Answer extraction from each generation / gold and how a pair is judged
        (``"exact"`` or ``"math"``), see the module notes; with ``prediction``/``gold``.

    Returns
    -------
    pl.Expr
        ``Float64`` in [0, 1]: (number correct among the first ``k``) / ``k``.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"gens": [["Paris", "London", "Paris"], ["x", "y", "z"], None],
    ...                    "gold": [["Paris", "paris"], ["y"], ["x"]]})
    >>> df.with_columns(avg_at_k("gens", "gold", k=2).alias("avg@2"))
    shape: (3, 3)
    ┌──────────────────────────────┬────────────────────┬───────┐
    │ gens                         ┆ gold               ┆ avg@2 │
    │ ---                          ┆ ---                ┆ ---   │
    │ list[str]                    ┆ list[str]          ┆ f64   │
    ╞══════════════════════════════╪════════════════════╪═══════╡
    │ ["Paris", "London", "Paris"] ┆ ["Paris", "paris"] ┆ 0.5   │
    │ ["x", "y", "z"]              ┆ ["y"]              ┆ 0.5   │
    │ null                         ┆ ["x"]              ┆ null  │
    └──────────────────────────────┴────────────────────┴───────┘
    """
    metric = f"avg@{k}"
    k = check_k(metric, k)
    n, c, usable, checks = counts_from_roles(
        metric, n=None, c=None, passed=passed, prediction=prediction, gold=gold,
        normalizer=normalizer, first=k, extractor=extractor, gold_extractor=gold_extractor,
        equivalence=equivalence,
    )
    value = c.cast(pl.Float64) / float(k)
    checks = [too_few_check(n, k), *checks]
    return guard(metric, _null_unless(usable, value), checks)


# --------------------------------------------------------------------------------------
# G-pass@k_τ and mG-pass@k
# --------------------------------------------------------------------------------------


def threshold_count(k: int, tau: float) -> int:
    """``m = max(ceil(k·τ), 1)``, in float64 as lighteval computes it."""
    return max(math.ceil(float(k) * float(tau)), 1)


def _hypergeometric_tails(n: pl.Expr, c: pl.Expr, k: int, ms: tuple[int, ...]) -> pl.Expr:
    """Σ over ``m`` in ``ms`` of P(X >= m), X ~ Hypergeom(n, c, k), for whole columns.

    lighteval's ``_compute_g_pass_at_k``: 0.0 when ``m > min(c, k)``, otherwise
    ``scipy.stats.hypergeom.sf(m - 1, n, c, k)``; the terms are added in order.
    Invalid rows (negative, c > n, k > n) are left NaN here and rejected by the guard.
    """

    def kernel(series: list[pl.Series]) -> pl.Series:
        from scipy.stats import hypergeom

        total_n = series[0].cast(pl.Float64).to_numpy()
        correct = series[1].cast(pl.Float64).to_numpy()
        valid = (
            np.isfinite(total_n) & np.isfinite(correct)
            & (correct >= 0) & (correct <= total_n) & (total_n >= k)
        )
        out = np.full(total_n.shape, np.nan)
        nv, cv = total_n[valid], correct[valid]
        acc = np.zeros(nv.shape)
        for m in ms:
            tail = hypergeom.sf(m - 1, nv, cv, k)
            acc = acc + np.where(m > np.minimum(cv, k), 0.0, tail)
        out[valid] = acc
        return pl.Series(out, dtype=pl.Float64, nan_to_null=True)

    return elementwise([n, c], kernel, pl.Float64)


def _check_tau(metric: str, tau: object) -> float:
    if isinstance(tau, bool) or not isinstance(tau, int | float) or not 0.0 <= tau <= 1.0:
        raise EvalframeError(f"metric {metric!r}: tau={tau!r} is invalid; expected 0 <= tau <= 1")
    return float(tau)


@register(
    "g-pass@{k}_{tau}",
    roles=_COUNT_ROLES,
    dtypes=GENERATION_DTYPES,
    parameters={"k": positive_int, "tau": unit_fraction},
    reference=_lighteval("GPassAtK (g-pass@k_tau)"),
    description="G-Pass@k_tau: probability that at least ceil(k*tau) of k draws are correct.",
    edge_rules=_GPASS_RULES,
    divergences=_GPASS_DIVERGENCES,
)
def g_pass_at_k(
    n: IntoExpr | None = None,
    c: IntoExpr | None = None,
    *,
    k: int,
    tau: float,
    passed: IntoExpr | None = None,
    prediction: IntoExpr | None = None,
    gold: IntoExpr | None = None,
    normalizer: Normalizer = "none",
    extractor: ExtractorOption = None,
    gold_extractor: ExtractorOption = None,
    equivalence: Equivalence = "exact",
) -> pl.Expr:
    """G-pass@k_τ: the chance that at least ``ceil(k·τ)`` of ``k`` draws are correct.

    Matches lighteval's ``GPassAtK`` output ``g-pass@{k}_{tau}`` (Liu et al., 2024,
    http://arxiv.org/abs/2412.13147): with ``m = max(ceil(k·τ), 1)``, the score is
    ``P(X >= m)`` for ``X ~ Hypergeom(n, c, k)`` (``k`` of the ``n`` generations drawn
    without replacement, ``c`` of them correct), i.e.
    ``scipy.stats.hypergeom.sf(m - 1, n, c, k)``, and 0.0 when ``m > min(c, k)``.

    Parameters
    ----------
    n, c, passed, prediction, gold, normalizer, extractor, gold_extractor, equivalence
        The counts, or what they are counted from, as for
        :func:`~evalframe.metrics.pass_at_k`.
    k
        Generations per attempt.
    tau
        Threshold in [0, 1]; ``tau=0`` is the same as pass@k (``m = 1``).

    Returns
    -------
    pl.Expr
        ``Float64`` in [0, 1].

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"n": [8, 5, None], "c": [4, 4, 2]})
    >>> df.with_columns(g_pass_at_k("n", "c", k=5, tau=0.5).alias("g-pass@5_0.5"),
    ...                 g_pass_at_k("n", "c", k=4, tau=1.0).alias("g-pass@4_1.0"))
    shape: (3, 4)
    ┌──────┬─────┬──────────────┬──────────────┐
    │ n    ┆ c   ┆ g-pass@5_0.5 ┆ g-pass@4_1.0 │
    │ ---  ┆ --- ┆ ---          ┆ ---          │
    │ i64  ┆ i64 ┆ f64          ┆ f64          │
    ╞══════╪═════╪══════════════╪══════════════╡
    │ 8    ┆ 4   ┆ 0.5          ┆ 0.014286     │
    │ 5    ┆ 4   ┆ 1.0          ┆ 0.2          │
    │ null ┆ 2   ┆ null         ┆ null         │
    └──────┴─────┴──────────────┴──────────────┘
    """
    metric = f"g-pass@{k}_{tau}"
    k = check_k(metric, k)
    m = threshold_count(k, _check_tau(metric, tau))
    return count_metric(
        metric, k, lambda total, correct: _hypergeometric_tails(total, correct, k, (m,)),
        n=n, c=c, passed=passed, prediction=prediction, gold=gold, normalizer=normalizer,
        extractor=extractor, gold_extractor=gold_extractor, equivalence=equivalence,
    )


@register(
    "mg-pass@{k}",
    roles=_COUNT_ROLES,
    dtypes=GENERATION_DTYPES,
    parameters={"k": positive_int},
    reference=_lighteval("GPassAtK (mg-pass@k)"),
    description="Mean G-Pass@k over the thresholds above 0.5 (lighteval mG-Pass@k).",
    edge_rules=(*_GPASS_RULES, "mg-pass@1 is 0.0 (an empty sum), as in lighteval"),
    divergences=_GPASS_DIVERGENCES,
)
def mg_pass_at_k(
    n: IntoExpr | None = None,
    c: IntoExpr | None = None,
    *,
    k: int,
    passed: IntoExpr | None = None,
    prediction: IntoExpr | None = None,
    gold: IntoExpr | None = None,
    normalizer: Normalizer = "none",
    extractor: ExtractorOption = None,
    gold_extractor: ExtractorOption = None,
    equivalence: Equivalence = "exact",
) -> pl.Expr:
    """mG-pass@k: G-pass@k averaged over the thresholds above one half.

    Matches lighteval's ``GPassAtK`` output ``mg-pass@{k}``:
    ``(2/k) · Σ_{i = ceil(k/2)+1}^{k} P(X >= i)`` with ``X ~ Hypergeom(n, c, k)``, an
    estimate of ``2∫_{0.5}^{1} G-pass@k_τ dτ``.

    Parameters
    ----------
    n, c, k, passed, prediction, gold, normalizer, extractor, gold_extractor, equivalence
        As for :func:`g_pass_at_k`.

    Returns
    -------
    pl.Expr
        ``Float64`` in [0, 1].

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"n": [8, 4, None], "c": [4, 3, 2]})
    >>> df.with_columns(mg_pass_at_k("n", "c", k=4).alias("mg-pass@4"))
    shape: (3, 3)
    ┌──────┬─────┬───────────┐
    │ n    ┆ c   ┆ mg-pass@4 │
    │ ---  ┆ --- ┆ ---       │
    │ i64  ┆ i64 ┆ f64       │
    ╞══════╪═════╪═══════════╡
    │ 8    ┆ 4   ┆ 0.128571  │
    │ 4    ┆ 3   ┆ 0.5       │
    │ null ┆ 2   ┆ null      │
    └──────┴─────┴───────────┘
    """
    metric = f"mg-pass@{k}"
    k = check_k(metric, k)
    thresholds = tuple(range(math.ceil(k * 0.5) + 1, k + 1))

    def score(total: pl.Expr, correct: pl.Expr) -> pl.Expr:
        return 2.0 * _hypergeometric_tails(total, correct, k, thresholds) / float(k)

    return count_metric(
        metric, k, score, n=n, c=c, passed=passed, prediction=prediction, gold=gold,
        normalizer=normalizer, extractor=extractor, gold_extractor=gold_extractor,
        equivalence=equivalence,
    )
