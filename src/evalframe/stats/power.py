"""Power, minimum detectable effect and sample size of a paired comparison of two models.

Following Miller (2024), "Adding Error Bars to Evals: A Statistical Approach to Language
Model Evaluations" (arXiv 2411.00640), section 5 (power analysis). Two models, A (the
candidate) and B (the baseline), answer the same ``n`` questions, each question ``K_A``
and ``K_B`` times; the score of a question is the mean of its ``K`` samples, and the test
is the paired z-test on the per-question differences ``d_i = mean_k x_ik^A - mean_k x_ik^B``.

Variance of one question's difference (the law of total variance, conditioning on the
question; the two models' samples independent given the question)::

    Var(d_i) = omega2 + sigma2_A / K_A + sigma2_B / K_B

- ``omega2 = Var_i(mu_i^A - mu_i^B)``: between questions, the variance of the difference
  of the two models' conditional mean scores (what remains with infinitely many samples);
- ``sigma2_M = E_i[Var(x_ik^M | question i)]``: within a question, model M's mean
  sampling variance (``p_i (1 - p_i)`` averaged over questions, for 0/1 scores).

The mean difference over ``n`` questions then has ``SE = sqrt(Var(d_i) / n)`` and, with
``x = |delta| / SE`` and the normal approximation of the test statistic (say ``z``
quantiles; no Student-t correction, which matters only for a few dozen questions):

- two-sided power ``Phi(x - z_{1-alpha/2}) + Phi(-x - z_{1-alpha/2})`` (both rejection
  regions; Miller keeps the first term only, which differs by at most ``alpha/2`` and
  typically by < 1e-6);
- one-sided power ``Phi(x - z_{1-alpha})`` (the test that the difference has ``delta``'s
  sign);
- hence Miller's sample size ``n = (z_{1-alpha/2} + z_{power})**2 Var(d_i) / delta**2``,
  which :func:`sample_size` refines to the smallest integer reaching the power under the
  two-tailed formula (the same or one less).

``variance`` in every function is ``Var(d_i)``: a number (or array) or a
:class:`PairedVariance` estimated from a scored frame by :func:`paired_variance`, which
also lets a plan change ``K`` (``samples_per_question=``): resampling shrinks only the
within-question terms, never ``omega2``.

>>> round(power(0.03, 500, variance=0.1), 4), round(mde(500, variance=0.1), 4)
(0.5641, 0.0396)
>>> sample_size(0.03, variance=0.1)
873
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt
import polars as pl

from evalframe.errors import EvalframeError, OptionError
from evalframe.io.load import Source, scan
from evalframe.stats.columns import apply_missing, find_columns, recorded_in
from evalframe.stats.methods import POWER_TESTS, PowerTest, check_method
from evalframe.stats.missing import check_policy
from evalframe.stats.power_tests import (
    exact_mcnemar_curve,
    mcnemar_asymptotic_power,
)
from evalframe.stats.stderr import clustered_stderr

__all__ = [
    "PairedDiscordance",
    "PairedVariance",
    "QuestionPairs",
    "mde",
    "paired_discordant",
    "paired_variance",
    "power",
    "question_pairs",
    "sample_size",
]

ArrayLike = float | int | Sequence[float] | npt.NDArray[np.floating] | npt.NDArray[np.integer]


@dataclass(frozen=True)
class PairedVariance:
    """The components of the variance of one question's paired difference (Miller 2024, §5).

    Attributes
    ----------
    between
        ``omega2``: the variance over questions of the difference of the two models'
        conditional mean scores (with ``cluster=``, inflated by the design effect of the
        clusters, see :func:`paired_variance`).
    within_model, within_baseline
        ``sigma2_A``, ``sigma2_B``: each model's mean within-question variance of one
        sample (``ddof=1`` within each question). NaN when the data holds one sample per
        question, which cannot separate them from ``between`` (which then holds the whole
        variance, and ``K`` cannot be changed).
    k_model, k_baseline
        Samples per question ``K`` the :attr:`total` is for: the data's (the harmonic mean
        over questions, when they differ) unless a plan set another.
    n
        Questions both models answered (the pairs the estimate used).
    n_clusters
        Clusters of questions (None without ``cluster=``).
    n_unmatched
        Questions only one of the two models has a score for (left out).
    n_null
        Rows of the two models with a null score (left out).

    Examples
    --------
    >>> v = PairedVariance(between=0.01, within_model=0.2, within_baseline=0.2,
    ...                    k_model=4, k_baseline=4, n=100)
    >>> round(v.total, 6), round(v.at(16).total, 6)
    (0.11, 0.035)
    """

    between: float
    within_model: float
    within_baseline: float
    k_model: float
    k_baseline: float
    n: int
    n_clusters: int | None = None
    n_unmatched: int = 0
    n_null: int = 0

    @property
    def total(self) -> float:
        """``between + within_model / k_model + within_baseline / k_baseline``."""
        if math.isnan(self.within_model) or math.isnan(self.within_baseline):
            return self.between
        return (
            self.between
            + self.within_model / self.k_model
            + self.within_baseline / self.k_baseline
        )

    def at(self, samples_per_question: float) -> PairedVariance:
        """The same components for an evaluation drawing ``samples_per_question`` per model.

        Examples
        --------
        >>> v = PairedVariance(0.0, 0.25, 0.25, k_model=1, k_baseline=1, n=10)
        >>> v.at(5).total
        0.1
        """
        k = float(samples_per_question)
        if not k >= 1:
            raise EvalframeError(
                f"samples_per_question={samples_per_question!r}: expected a number >= 1"
            )
        if math.isnan(self.within_model) or math.isnan(self.within_baseline):
            raise EvalframeError(
                "cannot plan for another number of samples per question: the data has one "
                "sample per question, which cannot separate the within-question variance "
                "from the between-question variance (score K >= 2 samples per question)"
            )
        return replace(self, k_model=k, k_baseline=k)


def _as_list(on: str | Sequence[str]) -> list[str]:
    keys = [on] if isinstance(on, str) else list(on)
    if not keys or not all(isinstance(key, str) for key in keys):
        raise EvalframeError(f"on={on!r}: expected a column name or a list of column names")
    return keys


@dataclass(frozen=True)
class QuestionPairs:
    """Per-question summaries of two models on the questions both answered.

    ``pairs`` has the ``on`` keys, then per model (the baseline's columns suffixed ``_b``)
    ``mean``, ``var`` (``ddof=1``; null for one sample), ``k`` (samples) and ``binary``
    (every sample 0 or 1), and with ``cluster=`` the ``cluster`` columns.
    """

    pairs: pl.DataFrame
    keys: list[str]
    candidate: object
    baseline: object
    n_unmatched: int
    n_null: int


def question_pairs(
    scored: Source,
    *,
    metric: str,
    baseline: str,
    candidate: str | None = None,
    model: str = "model",
    on: str | Sequence[str] = "sample_id",
    cluster: str | None = None,
    missing: str = "wrong",
    columns: Mapping[str, str] | None = None,
    where: str = "paired_variance",
    minimum: int = 2,
) -> QuestionPairs:
    """The two models' per-question means, variances and sample counts, paired on ``on``.

    What :func:`paired_variance` and :func:`paired_discordant` estimate from (``where``
    names the caller in messages).

    >>> import polars as pl
    >>> scored = pl.DataFrame({"model": ["a", "a", "b", "b"], "sample_id": [1, 2, 1, 2],
    ...                        "acc": [1.0, 0.0, 0.0, 0.0]})
    >>> question_pairs(scored, metric="acc", baseline="b").pairs["mean"].to_list()
    [1.0, 0.0]
    """
    keys = _as_list(on)
    check_policy(missing)
    recorded, recorded_roles = recorded_in(scored)
    frame = scan(scored)
    schema = frame.collect_schema()
    if isinstance(metric, str) and metric in schema:
        found = find_columns(
            frame, [metric], columns=columns, recorded=recorded, recorded_roles=recorded_roles
        )
        frame = apply_missing(frame, found.columns, missing)
    needed = [model, *keys, metric, *([cluster] if cluster is not None else [])]
    absent = [column for column in needed if column not in schema]
    if absent:
        raise EvalframeError(
            f"{where}: no column(s) {absent}; available: {list(schema)}"
        )
    dtype = schema[metric]
    if not (dtype.is_numeric() or dtype in (pl.Boolean, pl.Null)):
        raise EvalframeError(
            f"{where}: metric column {metric!r} has dtype {dtype}; expected numeric "
            "scores (a sample metric)"
        )
    names = frame.select(pl.col(model).unique()).collect().to_series().to_list()
    if baseline not in names:
        raise EvalframeError(
            f"{where}: baseline {baseline!r} not found in column {model!r}; "
            f"models: {sorted(map(str, names))}"
        )
    if candidate is None:
        others = [name for name in names if name != baseline]
        if len(others) != 1:
            raise EvalframeError(
                f"{where}: name the candidate= model: column {model!r} holds "
                f"{len(others)} model(s) besides the baseline {baseline!r}: "
                f"{sorted(map(str, others))}"
            )
        candidate = others[0]
    elif candidate not in names or candidate == baseline:
        raise EvalframeError(
            f"{where}: candidate {candidate!r} not found in column {model!r} (or is "
            f"the baseline); models: {sorted(map(str, names))}"
        )

    x = pl.col(metric).cast(pl.Float64)
    aggs = [x.mean().alias("mean"), x.var(ddof=1).alias("var"), x.count().alias("k"),
            x.is_in([0.0, 1.0]).all().alias("binary")]
    if cluster is not None:
        aggs += [
            pl.col(cluster).first().alias("cluster"),
            pl.col(cluster).n_unique().alias("n_cluster_values"),
        ]
    rows = frame.filter(pl.col(model).is_in([candidate, baseline]))
    n_null = int(rows.select(x.null_count()).collect().item())
    per_question = (
        rows.filter(x.is_not_null())
        .group_by([model, *keys], maintain_order=True)
        .agg(aggs)
        .collect()
    )
    a = per_question.filter(pl.col(model) == candidate).drop(model)
    b = per_question.filter(pl.col(model) == baseline).drop(model)
    # in the candidate's order: the same sums in the same order, the same bits every run
    pairs = a.join(b, on=keys, how="inner", suffix="_b", maintain_order="left")
    n = pairs.height
    n_unmatched = a.height + b.height - 2 * n
    if n < minimum:
        raise EvalframeError(
            f"{where}: {n} question(s) scored by both {candidate!r} and "
            f"{baseline!r} on {keys}; at least {minimum} are needed"
        )
    return QuestionPairs(pairs, keys, candidate, baseline, n_unmatched, n_null)


def paired_variance(
    scored: Source,
    *,
    metric: str,
    baseline: str,
    candidate: str | None = None,
    model: str = "model",
    on: str | Sequence[str] = "sample_id",
    cluster: str | None = None,
    samples_per_question: float | None = None,
    missing: str = "wrong",
    columns: Mapping[str, str] | None = None,
) -> PairedVariance:
    """Estimate the variance components of a paired comparison from a scored long frame.

    Rows are samples: one row per (model, question, sample), the models named in the
    ``model`` column, questions identified by the ``on`` column(s). Rows of one model
    sharing an ``on`` key are that question's ``K`` samples. Per model and question the
    mean and (``ddof=1``) variance of ``metric`` are taken; questions both models
    answered are paired (the others are left out), and with ``d_i`` the difference of
    question means (Miller 2024, §5, method of moments)::

        within_M = mean_i s2_i^M                  (over questions with >= 2 samples)
        K_M      = 1 / mean_i (1 / K_i^M)         (harmonic mean)
        observed = var_i(d_i, ddof=1)             (with cluster: n * clustered_SE(d)**2)
        between  = max(observed - within_A / K_A - within_B / K_B, 0)

    so that :attr:`PairedVariance.total` at the data's ``K`` is the observed variance
    (unless ``between`` was floored at 0). With ``cluster`` (a column constant within a
    question, e.g. the passage several questions share) ``observed`` is ``n`` times the
    squared cluster-robust SE of the mean difference (Miller 2024, eq. 4,
    :func:`evalframe.stats.stderr.clustered_stderr`): the variance per question of an
    evaluation with the same clusters. Null scores are left out and counted in
    ``n_null``, questions only one model has in ``n_unmatched``. A missing answer (a null
    answer column with its gold present) counts as the metric's worst score by default, as
    in ``aggregate`` and ``compare`` (``missing="wrong"``; ``"exclude"`` leaves it null;
    the role mapping comes from ``columns=`` or the scored file).

    Parameters
    ----------
    scored
        A scored frame (or anything :func:`evalframe.scan` reads).
    metric
        The score column (a ``Float64`` sample metric, or any numeric column).
    baseline
        The baseline model's name (a value of the ``model`` column).
    candidate
        The other model's name; by default the one other model in the frame.
    model
        The column naming the model (as ``ef.compare(model=...)``).
    on
        The column(s) identifying a question, matched between the two models.
    cluster
        Optional column clustering questions.
    samples_per_question
        ``K`` to plan for (both models); default the data's.

    Returns
    -------
    PairedVariance

    Examples
    --------
    >>> import polars as pl
    >>> scored = pl.DataFrame({
    ...     "model": ["a"] * 6 + ["b"] * 6,
    ...     "sample_id": [1, 1, 2, 2, 3, 3] * 2,
    ...     "acc": [1.0, 1.0, 1.0, 0.0, 0.0, 0.0] + [0.0, 0.0, 1.0, 1.0, 0.0, 0.0],
    ... })
    >>> v = paired_variance(scored, metric="acc", baseline="b")
    >>> v.n, v.k_model, round(v.within_model, 4), v.within_baseline, round(v.between, 12)
    (3, 2.0, 0.1667, 0.0, 0.5)
    >>> round(v.total, 4), round(v.at(8).total, 4)  # var(d_i) = 21/36 at the data's K = 2
    (0.5833, 0.5208)
    """
    found = question_pairs(
        scored, metric=metric, baseline=baseline, candidate=candidate, model=model, on=on,
        cluster=cluster, missing=missing, columns=columns,
    )
    pairs, keys, n = found.pairs, found.keys, found.pairs.height
    n_unmatched, n_null = found.n_unmatched, found.n_null
    d = (pairs["mean"] - pairs["mean_b"]).to_numpy()
    n_clusters = None
    if cluster is None:
        observed = float(np.var(d, ddof=1))
    else:
        mixed = pairs.filter(
            (pl.col("n_cluster_values") > 1)
            | (pl.col("n_cluster_values_b") > 1)
            | (pl.col("cluster") != pl.col("cluster_b"))
        )
        if mixed.height:
            raise EvalframeError(
                f"paired_variance: cluster column {cluster!r} is not constant within "
                f"{mixed.height} question(s); first: {mixed.select(keys).row(0)}"
            )
        clusters = pairs["cluster"].to_numpy()
        n_clusters = int(pairs["cluster"].n_unique())
        se = clustered_stderr(d, clusters)
        if math.isnan(se):
            raise EvalframeError(
                f"paired_variance: cluster column {cluster!r} has {n_clusters} cluster(s) "
                "among the paired questions; at least 2 are needed"
            )
        observed = n * se**2

    def within(variances: pl.Series, counts: pl.Series) -> tuple[float, float]:
        repeated = variances.drop_nulls().drop_nans()
        spread = float(repeated.mean()) if repeated.len() else math.nan
        return spread, float(1.0 / (1.0 / counts.cast(pl.Float64)).mean())

    within_a, k_a = within(pairs["var"], pairs["k"])
    within_b, k_b = within(pairs["var_b"], pairs["k_b"])
    if math.isnan(within_a) or math.isnan(within_b):
        within_a = within_b = math.nan
        between = observed
    else:
        between = max(observed - within_a / k_a - within_b / k_b, 0.0)
    result = PairedVariance(
        between=between,
        within_model=within_a,
        within_baseline=within_b,
        k_model=k_a,
        k_baseline=k_b,
        n=n,
        n_clusters=n_clusters,
        n_unmatched=n_unmatched,
        n_null=n_null,
    )
    return result if samples_per_question is None else result.at(samples_per_question)


@dataclass(frozen=True)
class PairedDiscordance:
    """How often two models disagree on a question, one sample each (McNemar's test).

    ``model_better`` (``p10``): the candidate right and the baseline wrong;
    ``baseline_better`` (``p01``): the reverse; :attr:`discordant` their sum; :attr:`delta`
    their difference. With ``K`` samples per question the rates are those of one sample
    of each model (``mean_A (1 - mean_B)`` averaged over questions, unbiased as the two
    models' samples are independent given the question).

    >>> d = PairedDiscordance(model_better=0.2, baseline_better=0.1, n=50)
    >>> round(d.discordant, 6), round(d.delta, 6)
    (0.3, 0.1)
    """

    model_better: float
    baseline_better: float
    n: int
    n_unmatched: int = 0
    n_null: int = 0

    @property
    def discordant(self) -> float:
        """``p10 + p01``."""
        return self.model_better + self.baseline_better

    @property
    def delta(self) -> float:
        """``p10 - p01``: the difference of the two models' accuracies."""
        return self.model_better - self.baseline_better


def paired_discordant(
    scored: Source,
    *,
    metric: str,
    baseline: str,
    candidate: str | None = None,
    model: str = "model",
    on: str | Sequence[str] = "sample_id",
    missing: str = "wrong",
    columns: Mapping[str, str] | None = None,
) -> PairedDiscordance:
    """Estimate the discordant rates of two models' 0/1 scores (the input of McNemar's power).

    Questions are paired as in :func:`paired_variance`; every score must be 0 or 1.

    >>> import polars as pl
    >>> scored = pl.DataFrame({"model": ["a"] * 4 + ["b"] * 4, "sample_id": [1, 2, 3, 4] * 2,
    ...                        "acc": [1.0, 1.0, 0.0, 1.0, 0.0, 1.0, 1.0, 1.0]})
    >>> d = paired_discordant(scored, metric="acc", baseline="b")
    >>> d.model_better, d.baseline_better, d.n
    (0.25, 0.25, 4)
    """
    found = question_pairs(
        scored, metric=metric, baseline=baseline, candidate=candidate, model=model, on=on,
        missing=missing, columns=columns, where="paired_discordant", minimum=1,
    )
    pairs = found.pairs
    if not (pairs["binary"].all() and pairs["binary_b"].all()):
        raise EvalframeError(
            f"paired_discordant: metric column {metric!r} holds scores other than 0 and 1; "
            "McNemar's test (and its power) is for 0/1 scores: use test='t' or 'z'"
        )
    a, b = pairs["mean"].to_numpy(), pairs["mean_b"].to_numpy()
    return PairedDiscordance(
        model_better=float(np.mean(a * (1 - b))),
        baseline_better=float(np.mean(b * (1 - a))),
        n=pairs.height,
        n_unmatched=found.n_unmatched,
        n_null=found.n_null,
    )


def _variance(
    variance: ArrayLike | PairedVariance | None,
    scored: Source | None,
    samples_per_question: float | None,
    paired: dict[str, object],
) -> tuple[npt.NDArray[np.float64], int | None]:
    """``Var(d_i)`` as an array and the data's question count (None for a given number)."""
    if (variance is None) == (scored is None):
        raise EvalframeError(
            "give either variance= (a number, an array or a PairedVariance) or scored= "
            "(with metric= and baseline=), not both or neither"
        )
    if scored is not None:
        if paired["metric"] is None or paired["baseline"] is None:
            raise EvalframeError("scored= needs metric= and baseline= (the model compared to)")
        variance = paired_variance(scored, **paired)  # type: ignore[arg-type]
    elif any(paired[key] is not None for key in ("metric", "baseline", "candidate", "cluster")):
        raise EvalframeError(
            "metric=, baseline=, candidate= and cluster= describe scored=; with variance= "
            "leave them out"
        )
    if isinstance(variance, PairedVariance):
        if samples_per_question is not None:
            variance = variance.at(samples_per_question)
        values = np.asarray(variance.total, dtype=np.float64)
        count: int | None = variance.n
    else:
        if samples_per_question is not None:
            raise EvalframeError(
                "samples_per_question= needs the variance's components: pass a "
                "PairedVariance (evalframe.paired_variance) or scored="
            )
        values = np.asarray(variance, dtype=np.float64)
        count = None
    if not np.all(np.isfinite(values) & (values > 0)):
        raise EvalframeError(
            f"variance={variance!r}: expected finite values > 0 (the variance of one "
            "question's paired difference; 0 means the two models never differ)"
        )
    return values, count


def _questions(n: ArrayLike | None, count: int | None) -> npt.NDArray[np.float64]:
    if n is None:
        if count is None:
            raise EvalframeError("n= (the number of questions) is needed with variance=")
        n = count
    values = np.asarray(n, dtype=np.float64)
    if not np.all(np.isfinite(values) & (values > 0)):
        raise EvalframeError(f"n={n!r}: expected numbers of questions > 0")
    return values


def _check_alpha(alpha: ArrayLike) -> npt.NDArray[np.float64]:
    values = np.asarray(alpha, dtype=np.float64)
    if not np.all((values > 0) & (values < 1)):
        raise EvalframeError(f"alpha={alpha!r}: expected levels strictly between 0 and 1")
    return values


def _check_target(target: ArrayLike, alpha: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    values = np.asarray(target, dtype=np.float64)
    if not np.all((values > alpha) & (values < 1)):
        raise EvalframeError(
            f"power={target!r}: expected a power strictly between alpha ({alpha!r}, the "
            "power at no difference) and 1"
        )
    return values


def _ndtr(x):
    """The standard normal CDF (scipy's, imported when first needed: start-up time)."""
    from scipy.special import ndtr as cdf

    return cdf(x)


def _ndtri(p):
    """The standard normal quantile (scipy's, imported when first needed)."""
    from scipy.special import ndtri as quantile

    return quantile(p)


def _critical(alpha: npt.NDArray[np.float64], two_sided: bool) -> npt.NDArray[np.float64]:
    return _ndtri(1 - alpha / 2) if two_sided else _ndtri(1 - alpha)


def _power_at(
    x: npt.NDArray[np.float64], alpha: npt.NDArray[np.float64], two_sided: bool
) -> npt.NDArray[np.float64]:
    """Power at standardised effect ``x = |delta| / SE``."""
    z = _critical(alpha, two_sided)
    if two_sided:
        return _ndtr(x - z) + _ndtr(-x - z)
    return _ndtr(x - z)


def _effect_for(
    target: npt.NDArray[np.float64], alpha: npt.NDArray[np.float64], two_sided: bool
) -> npt.NDArray[np.float64]:
    """The standardised effect ``x >= 0`` at which the power is ``target`` (vectorised)."""
    target, alpha = np.broadcast_arrays(target, alpha)
    z = _critical(alpha, two_sided)
    high = z + _ndtri(target)
    if not two_sided:
        return high
    # Phi(x - z) <= power(x) <= Phi(x - z) + alpha / 2 brackets the root; bisect it
    low = np.maximum(z + _ndtri(np.maximum(target - alpha / 2, 0.0)), 0.0)
    for _ in range(200):
        mid = (low + high) / 2
        below = _power_at(mid, alpha, True) < target
        low = np.where(below, mid, low)
        high = np.where(below, high, mid)
        if np.all(high - low <= 4 * np.finfo(np.float64).eps * np.maximum(high, 1.0)):
            break
    return high


def _out(values: npt.NDArray, *inputs: object) -> float | npt.NDArray:
    scalar = all(np.ndim(value) == 0 for value in inputs)
    return values.item() if scalar else values


#: The arguments of :func:`paired_variance` that describe ``scored=``.
_DATA_ARGUMENTS = ("metric", "baseline", "candidate", "cluster")


@dataclass(frozen=True)
class _Problem:
    """A power problem resolved: the test, ``Var(d_i)``, the data's question count, the
    discordant rate and the number of clusters (None where the test takes none)."""

    test: PowerTest
    variance: npt.NDArray[np.float64] | None
    count: int | None
    discordant: npt.NDArray[np.float64] | None
    clusters: npt.NDArray[np.float64] | None


def _option(option: str, value: object, problem: str) -> OptionError:
    return OptionError(f"{option}={value!r} {problem}", option=option, value=value,
                       problem=problem)


def _resolve(
    test: str,
    variance: ArrayLike | PairedVariance | None,
    scored: Source | None,
    samples_per_question: float | None,
    paired: dict[str, object],
    discordant: ArrayLike | None,
    clusters: ArrayLike | None,
) -> _Problem:
    entry = check_method(POWER_TESTS, test, "test")
    count: int | None = None
    values = None
    if entry.needs_discordant:
        if variance is not None:
            raise _option("variance", variance,
                          f"is not used by test={test!r}: its power depends on discordant= "
                          "(the probability that the two models disagree on a question)")
        if samples_per_question is not None:
            raise _option("samples_per_question", samples_per_question,
                          f"does not apply to test={test!r}: McNemar's test compares one 0/1 "
                          "score per model and question")
        if paired["cluster"] is not None or clusters is not None:
            raise _option("clusters" if clusters is not None else "cluster",
                          clusters if clusters is not None else paired["cluster"],
                          f"does not apply to test={test!r}: McNemar's test treats pairs as "
                          "independent (compare refuses it on clustered pairs); use test='t'")
        if scored is not None:
            if discordant is not None:
                raise _option("discordant", discordant,
                              "is estimated from scored=; give one or the other")
            if paired["metric"] is None or paired["baseline"] is None:
                raise EvalframeError(
                    "scored= needs metric= and baseline= (the model compared to)"
                )
            found = paired_discordant(
                scored, metric=paired["metric"], baseline=paired["baseline"],  # type: ignore[arg-type]
                candidate=paired["candidate"], model=paired["model"],  # type: ignore[arg-type]
                on=paired["on"],  # type: ignore[arg-type]
            )
            discordant, count = found.discordant, found.n
        else:
            if discordant is None:
                raise _option("discordant", None,
                              f"is needed for test={test!r}: the probability p10 + p01 that "
                              "the two models disagree on a question (or give scored=)")
            if any(paired[key] is not None for key in _DATA_ARGUMENTS):
                raise EvalframeError(
                    "metric=, baseline=, candidate= and cluster= describe scored=; with "
                    "discordant= leave them out"
                )
        rate = np.asarray(discordant, dtype=np.float64)
        if not np.all(np.isfinite(rate) & (rate > 0) & (rate <= 1)):
            raise _option("discordant", discordant,
                          "must be in (0, 1]: the probability that the two models disagree "
                          "on a question")
    else:
        if discordant is not None:
            raise _option("discordant", discordant,
                          f"is for the McNemar tests ('mcnemar_exact', 'mcnemar'), not "
                          f"test={test!r}: give variance= or scored=")
        if clusters is not None and not entry.takes_clusters:
            raise _option("clusters", clusters,
                          f"sets the t-test's degrees of freedom (test='t'); test={test!r} "
                          "has none: the design effect belongs in variance=")
        values, count = _variance(variance, scored, samples_per_question, paired)
        rate = None
    groups = None
    if clusters is not None:
        groups = np.asarray(clusters, dtype=np.float64)
        if not np.all(np.isfinite(groups) & (groups >= 2)):
            raise _option("clusters", clusters, "must be numbers of clusters >= 2")
    return _Problem(entry, values, count, rate, groups)


def _check_n(problem: _Problem, questions: npt.NDArray[np.float64], n: object) -> None:
    if problem.test.integer_n and not np.all(questions == np.round(questions)):
        raise _option("n", n, f"must be whole numbers of questions for "
                      f"test={problem.test.name!r}")
    if problem.test.takes_clusters and problem.clusters is None and not np.all(questions >= 2):
        raise _option("n", n, "must be >= 2 for test='t' (df = n - 1)")


def _check_effect(problem: _Problem, effect: npt.NDArray[np.float64], delta: object) -> None:
    if problem.discordant is not None and not np.all(effect <= problem.discordant):
        raise _option("delta", delta,
                      f"is impossible with discordant={problem.discordant.tolist()!r}: "
                      "|delta| = |p10 - p01| cannot exceed p10 + p01")


def _power_of(problem: _Problem, effect, questions, levels, two_sided: bool):
    return problem.test.function(
        effect, questions, variance=problem.variance, alpha=levels, two_sided=two_sided,
        discordant=problem.discordant, clusters=problem.clusters,
    )


def _paired(metric, baseline, candidate, model, on, cluster) -> dict[str, object]:
    return {"metric": metric, "baseline": baseline, "candidate": candidate, "model": model,
            "on": on, "cluster": cluster}


def power(
    delta: ArrayLike,
    n: ArrayLike | None = None,
    *,
    variance: ArrayLike | PairedVariance | None = None,
    alpha: ArrayLike = 0.05,
    two_sided: bool = True,
    test: str = "z",
    discordant: ArrayLike | None = None,
    clusters: ArrayLike | None = None,
    scored: Source | None = None,
    metric: str | None = None,
    baseline: str | None = None,
    candidate: str | None = None,
    model: str = "model",
    on: str | Sequence[str] = "sample_id",
    cluster: str | None = None,
    samples_per_question: float | None = None,
) -> float | npt.NDArray[np.float64]:
    """The power of the paired test ``test`` to detect a difference ``delta`` with ``n`` questions.

    - ``test="z"`` (default): ``Phi(x - z_{1-alpha/2}) + Phi(-x - z_{1-alpha/2})`` with ``x =
      |delta| sqrt(n / variance)`` (one-sided: ``Phi(x - z_{1-alpha})``), the normal
      approximation of Miller (2024), §5; see the module docstring for the derivation.
    - ``test="t"``: the paired t-test ``compare`` runs on non-binary scores (and on
      clustered pairs), from the noncentral t: ``df = n - 1`` (``clusters - 1`` with
      ``clusters=C``, ``variance`` then being the per-question variance inflated by the
      design effect, as ``paired_variance(cluster=...)`` gives it), noncentrality
      ``|delta| sqrt(n / variance)`` (statsmodels ``TTestPower``).
    - ``test="mcnemar_exact"``: McNemar's exact test, what ``compare`` runs on 0/1 scores:
      the exact sum over the number ``D`` of discordant pairs of ``P(D; n, discordant)
      P(reject | D)``, ``b | D ~ Binom(D, p10 / discordant)``. Not monotone in ``n``
      (a saw-tooth: the discrete test's level jumps with ``D``).
    - ``test="mcnemar"``: the asymptotic McNemar test without continuity correction,
      Connor (1987): ``Phi((|delta| sqrt(n) - z sqrt(discordant)) / sqrt(discordant -
      delta**2))`` (two-sided: plus the opposite tail).

    The tests are :data:`~evalframe.stats.methods.POWER_TESTS`
    (:mod:`evalframe.stats.power_tests`).

    Parameters
    ----------
    delta
        The true difference of mean scores (candidate - baseline); only ``|delta|``
        matters (a one-sided test is taken in ``delta``'s direction). For the McNemar
        tests ``delta = p10 - p01``.
    n
        Questions. Default, with ``scored=`` or a :class:`PairedVariance`: the data's.
    variance
        ``Var(d_i)``, the variance of one question's paired (``K``-averaged) difference:
        numbers, or a :class:`PairedVariance`. Give this or ``scored=`` (``"z"``, ``"t"``).
    alpha
        Level of the test.
    two_sided
        A two-sided test (default) or one-sided.
    test
        ``"z"``, ``"t"``, ``"mcnemar_exact"`` or ``"mcnemar"``.
    discordant
        The McNemar tests: ``p10 + p01``, the probability that the two models disagree on
        a question, in ``(0, 1]`` and at least ``|delta|`` (or give ``scored=``, which
        estimates it: :func:`paired_discordant`).
    clusters
        ``test="t"``: the number of clusters, whose ``C - 1`` are the degrees of freedom.
    scored, metric, baseline, candidate, model, on, cluster
        Estimate the variance (or the discordant rate) from a scored frame instead: as
        :func:`paired_variance`.
    samples_per_question
        Plan for ``K`` samples per question (needs the components: ``scored=`` or a
        :class:`PairedVariance`).

    Returns
    -------
    float or numpy.ndarray
        Broadcast over ``delta``, ``n``, ``variance``, ``alpha``, ``discordant`` and
        ``clusters``; a float for scalars.

    Examples
    --------
    >>> round(power(0.03, 500, variance=0.1), 4)
    0.5641
    >>> power([0.0, 0.03, 0.1], 500, variance=0.1).round(3)
    array([0.05 , 0.564, 1.   ])
    >>> round(power(0.03, 500, variance=0.1, test="t"), 4)
    0.5625
    >>> round(power(0.1, 200, test="mcnemar_exact", discordant=0.3), 4)
    0.7034
    """
    problem = _resolve(test, variance, scored, samples_per_question,
                       _paired(metric, baseline, candidate, model, on, cluster),
                       discordant, clusters)
    questions = _questions(n, problem.count)
    _check_n(problem, questions, n)
    levels = _check_alpha(alpha)
    effect = np.abs(np.asarray(delta, dtype=np.float64))
    if not np.all(np.isfinite(effect)):
        raise EvalframeError(f"delta={delta!r}: expected finite differences")
    _check_effect(problem, effect, delta)
    if problem.test.name == "z":
        x = effect * np.sqrt(questions / problem.variance)
        result = _power_at(x, levels, two_sided)
    else:
        result = np.asarray(_power_of(problem, effect, questions, levels, two_sided))
    return _out(result, delta, n, problem.variance, alpha, problem.discordant, clusters)


def _bisect_effect(reaches, low, high):
    """The smallest effect in ``[low, high]`` for which ``reaches`` holds (monotone)."""
    for _ in range(200):
        mid = (low + high) / 2
        below = ~reaches(mid)
        low = np.where(below, mid, low)
        high = np.where(below, high, mid)
        if np.all(high - low <= 4 * np.finfo(np.float64).eps * np.maximum(high, 1e-3)):
            break
    return high


def mde(
    n: ArrayLike | None = None,
    *,
    variance: ArrayLike | PairedVariance | None = None,
    alpha: ArrayLike = 0.05,
    power: ArrayLike = 0.8,
    two_sided: bool = True,
    test: str = "z",
    discordant: ArrayLike | None = None,
    clusters: ArrayLike | None = None,
    scored: Source | None = None,
    metric: str | None = None,
    baseline: str | None = None,
    candidate: str | None = None,
    model: str = "model",
    on: str | Sequence[str] = "sample_id",
    cluster: str | None = None,
    samples_per_question: float | None = None,
) -> float | npt.NDArray[np.float64]:
    """The minimum detectable effect: the smallest ``|delta|`` reaching ``power``.

    The exact inverse of :func:`power` for every test (a bracketed bisection; the power
    of each test grows with ``|delta|``): ``power(mde(n), n) == power``, to rounding. For
    ``test="z"``, Miller's closed form ``(z_{1-alpha/2} + z_{power}) sqrt(variance / n)``
    is the one-sided answer and exceeds the two-sided one by a negligible amount (its
    second tail). For the McNemar tests ``discordant`` stays fixed and ``delta = p10 -
    p01`` varies in ``[0, discordant]``; where not even ``|delta| = discordant`` (every
    disagreement in the candidate's favour) reaches the power, the answer is NaN.

    Parameters
    ----------
    n, variance, alpha, two_sided, test, discordant, clusters, scored, metric, baseline,\
 candidate, model, on, cluster, samples_per_question
        As :func:`power`.
    power
        The power to reach, strictly between ``alpha`` and 1.

    Returns
    -------
    float or numpy.ndarray

    Examples
    --------
    >>> round(mde(500, variance=0.1), 6)
    0.03962
    >>> mde([100, 400], variance=0.1).round(4)
    array([0.0886, 0.0443])
    >>> round(mde(100, test="mcnemar_exact", discordant=0.3), 4)
    0.1585
    """
    problem = _resolve(test, variance, scored, samples_per_question,
                       _paired(metric, baseline, candidate, model, on, cluster),
                       discordant, clusters)
    questions = _questions(n, problem.count)
    _check_n(problem, questions, n)
    levels = _check_alpha(alpha)
    target = _check_target(power, levels)
    x = _effect_for(target, levels, two_sided)
    if problem.test.name == "z":
        return _out(x * np.sqrt(problem.variance / questions), n, problem.variance, alpha,
                    power)
    shape = np.broadcast_shapes(np.shape(questions), np.shape(levels), np.shape(target),
                                np.shape(problem.variance), np.shape(problem.discordant),
                                np.shape(problem.clusters))

    def reaches(effect):
        return _power_of(problem, effect, questions, levels, two_sided) >= target

    if problem.discordant is not None:
        high = np.broadcast_to(problem.discordant, shape).astype(np.float64)
        possible = reaches(high)
        found = _bisect_effect(reaches, np.zeros(shape), high)
        result = np.where(possible, found, np.nan)
    else:
        high = np.broadcast_to(2 * x * np.sqrt(problem.variance / questions), shape).copy()
        for _ in range(64):  # the t-test needs more than the z-test: widen until it reaches
            short = ~reaches(high)
            if not short.any():
                break
            high = np.where(short, 2 * high, high)
        result = _bisect_effect(reaches, np.zeros(shape), high)
    return _out(result, n, problem.variance, alpha, power, problem.discordant, clusters)


def _smallest_reaching(reaches, first, shape) -> npt.NDArray[np.float64]:
    """The smallest whole ``n >= first`` where ``reaches(n)`` holds, for a monotone power:
    doubling, then bisection, elementwise."""
    high = np.broadcast_to(np.asarray(first, dtype=np.float64), shape).copy()
    for _ in range(64):
        short = ~reaches(high)
        if not short.any():
            break
        high = np.where(short, 2 * high, high)
    else:
        raise EvalframeError("sample_size: the power is not reached with 2**64 questions")
    low = np.where(high > first, high // 2, first - 1)  # low never reaches (or is below first)
    while np.any(high - low > 1):
        mid = np.floor((low + high) / 2)
        hit = reaches(np.maximum(mid, first))
        wide = high - low > 1
        high = np.where(wide & hit, mid, high)
        low = np.where(wide & ~hit, mid, low)
    return high


#: Below this many questions (the asymptotic McNemar size), the exact sample size is
#: searched from one question.
SCAN_FROM_ONE = 500


def _exact_mcnemar_size(effect: float, discordant: float, level: float, target: float,
                        two_sided: bool, asymptotic: float) -> int:
    """The smallest ``n`` whose exact McNemar power reaches ``target``, scanning ``n``
    upward in blocks (the power is a saw-tooth in ``n``)."""
    if asymptotic <= SCAN_FROM_ONE:
        start = 1
    else:  # the size where the asymptotic (liberal) power is 0.1 below the target
        lower = max(target - 0.1, (target + level) / 2)
        start = int(_smallest_reaching(
            lambda count: mcnemar_asymptotic_power(effect, count, alpha=level,
                                                   two_sided=two_sided,
                                                   discordant=discordant) >= lower,
            1, (),
        ))
    block = 512
    while True:
        sizes = np.arange(start, start + block)
        reached = np.flatnonzero(
            exact_mcnemar_curve(effect, sizes, discordant, level, two_sided) >= target
        )
        if reached.size:
            return int(sizes[reached[0]])
        start += block
        block = min(2 * block, 16384)


def sample_size(
    delta: ArrayLike,
    *,
    variance: ArrayLike | PairedVariance | None = None,
    alpha: ArrayLike = 0.05,
    power: ArrayLike = 0.8,
    two_sided: bool = True,
    test: str = "z",
    discordant: ArrayLike | None = None,
    clusters: ArrayLike | None = None,
    scored: Source | None = None,
    metric: str | None = None,
    baseline: str | None = None,
    candidate: str | None = None,
    model: str = "model",
    on: str | Sequence[str] = "sample_id",
    cluster: str | None = None,
    samples_per_question: float | None = None,
) -> int | npt.NDArray[np.int64]:
    """The number of questions needed: the smallest integer ``n`` with ``power(delta, n) >= power``.

    ``test="z"``: ``ceil(variance (x / delta)**2)`` with ``x`` the standardised effect
    reaching the power (:func:`mde`'s), checked against :func:`power` at ``n`` and ``n -
    1`` so that rounding never gives one question too many or too few; Miller's
    ``(z_{1-alpha/2} + z_{power})**2 variance / delta**2`` rounds up to the same number or
    one more. ``"t"`` (at least 2 questions without ``clusters=``; with it the degrees of
    freedom stay ``clusters - 1``) and ``"mcnemar"``: the power grows with ``n``, which is
    bisected. ``"mcnemar_exact"``: the power is a saw-tooth in ``n`` (it can fall when a
    question is added), and the answer is the smallest ``n`` whose power reaches the
    target, searched upward from one question (from the size at which the asymptotic,
    liberal, power is 0.1 below the target when that exceeds 500 questions); a larger
    ``n`` may fall below the target again, by less than the saw-tooth's height.

    Parameters
    ----------
    delta
        The difference to detect (nonzero).
    variance, alpha, power, two_sided, test, discordant, clusters, scored, metric,\
 baseline, candidate, model, on, cluster, samples_per_question
        As :func:`mde`.

    Returns
    -------
    int or numpy.ndarray of int64

    Examples
    --------
    >>> sample_size(0.03, variance=0.1)
    873
    >>> sample_size([0.03, 0.02], variance=0.1, power=0.9).tolist()
    [1168, 2627]
    >>> sample_size(0.03, variance=0.1, test="t")
    875
    >>> sample_size(0.1, test="mcnemar_exact", discordant=0.3)
    249
    """
    problem = _resolve(test, variance, scored, samples_per_question,
                       _paired(metric, baseline, candidate, model, on, cluster),
                       discordant, clusters)
    levels = _check_alpha(alpha)
    target = _check_target(power, levels)
    effect = np.abs(np.asarray(delta, dtype=np.float64))
    if not np.all(np.isfinite(effect) & (effect > 0)):
        raise EvalframeError(f"delta={delta!r}: expected finite, nonzero differences")
    _check_effect(problem, effect, delta)
    values = problem.variance
    if problem.test.name != "z":
        shape = np.broadcast_shapes(effect.shape, levels.shape, target.shape,
                                    np.shape(values), np.shape(problem.discordant),
                                    np.shape(problem.clusters))

        def reaches(count):
            return _power_of(problem, effect, count, levels, two_sided) >= target

        if problem.test.monotone:
            first = 2 if problem.test.takes_clusters and problem.clusters is None else 1
            result = _smallest_reaching(reaches, first, shape).astype(np.int64)
        else:
            rates = problem.discordant
            asymptotic = np.broadcast_to(_smallest_reaching(
                lambda count: mcnemar_asymptotic_power(
                    effect, count, alpha=levels, two_sided=two_sided, discordant=rates,
                ) >= target, 1, shape,
            ), shape)
            items = np.broadcast_arrays(effect, rates, levels, target)
            result = np.empty(shape, dtype=np.int64)
            for index in np.ndindex(shape):
                one, rate, level, goal = (float(np.broadcast_to(item, shape)[index])
                                          for item in items)
                result[index] = _exact_mcnemar_size(one, rate, level, goal, two_sided,
                                                    float(asymptotic[index]))
        return int(result) if result.ndim == 0 else result
    x = _effect_for(target, levels, two_sided)
    needed = np.maximum(np.ceil(values * (x / effect) ** 2), 1.0)
    needed, effect, values, levels, target = np.broadcast_arrays(
        needed, effect, values, levels, target
    )

    def reaches_z(count: npt.NDArray[np.float64]) -> npt.NDArray[np.bool_]:
        return _power_at(effect * np.sqrt(count / values), levels, two_sided) >= target

    for _ in range(4):  # rounding of the root: at most a step either way
        needed = np.where(reaches_z(needed), needed, needed + 1)
        lower = np.maximum(needed - 1, 1.0)
        needed = np.where((needed > 1) & reaches_z(lower), lower, needed)
    result = needed.astype(np.int64)
    return int(result) if result.ndim == 0 else result
