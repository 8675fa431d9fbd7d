"""Coverage by simulation: the nominal 95% intervals cover the truth 95% of the time.

Every test simulates many evaluations from a population whose true score is known
exactly, puts them all in one frame with a ``sim`` column, and runs the public API once
(``ef.aggregate(frame, by="sim")`` or ``ef.compare(..., by="sim")``: one vectorised call,
not one per evaluation). The share of evaluations whose interval holds the truth is the
coverage; with 10,000 evaluations its Monte Carlo standard deviation at 95% is
``sqrt(0.95 * 0.05 / 10_000) = 0.22`` points, so "95 +/- 1%" is a band of 4.6 standard
deviations. Every generator is seeded: the figures in the docstrings are the ones these
seeds give (also quoted in docs/statistics.md).
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from scipy import stats as st

import evalframe as ef

SIMS = 10_000
Z975 = float(st.norm.ppf(0.975))


def _covered(table: pl.DataFrame, truth: float | pl.Series) -> pl.Series:
    return (table["ci_low"] <= truth) & (truth <= table["ci_high"])


def _coverage(table: pl.DataFrame, truth: float) -> float:
    assert table.height == SIMS and table["ci_low"].null_count() == 0
    return float(_covered(table, truth).mean())


def _mc_sd(p: float, sims: int = SIMS) -> float:
    """The Monte Carlo standard deviation of a coverage (or rejection rate) ``p``."""
    return math.sqrt(p * (1 - p) / sims)


def _wilson(k: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Wilson's score interval (written out here, independently of evalframe)."""
    p, z2 = k / n, Z975**2
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = Z975 / (1 + z2 / n) * np.sqrt(p * (1 - p) / n + z2 / (4 * n * n))
    return centre - half, centre + half


def _exact_wilson_coverage(n: int, p: float) -> float:
    """``sum_k P(Binom(n, p) = k) [p in Wilson(k, n)]``: the coverage with no simulation."""
    k = np.arange(n + 1)
    low, high = _wilson(k, n)
    return float(np.sum(st.binom.pmf(k, n, p) * ((low <= p) & (p <= high))))


def _binary_frame(rng: np.random.Generator, p: np.ndarray, n: int) -> pl.DataFrame:
    """``len(p)`` evaluations of ``n`` independent 0/1 scores, evaluation s right w.p. p[s]."""
    correct = (rng.random((p.size, n)) < p[:, None]).astype(np.float64)
    return pl.DataFrame({"sim": np.repeat(np.arange(p.size), n), "correct": correct.ravel()})


# --- binary scores: Wilson ------------------------------------------------------------------


def test_wilson_covers_95_percent_for_100_rows():
    """n = 100 rows of 0/1 scores; each evaluation's true accuracy p_s ~ U(0.6, 0.8).

    Truth: the evaluation's own population mean p_s. Why not one fixed p = 0.7: the
    coverage of *any* interval for a binomial proportion oscillates with p at fixed n
    (the attainable counts are discrete). At n = 100 Wilson's exact coverage is 93.72%
    at p = 0.70 but 95.90% at p = 0.68 and 95.13% at p = 0.75 (the normal interval
    happens to hit 95.02% at p = 0.70 and averages 94.37% over [0.6, 0.8]); averaged
    over p in [0.6, 0.8] Wilson's exact coverage is 95.03%. Drawing p_s per evaluation
    measures that average, the quantity "95% coverage" can honestly promise. Seed 11:
    Wilson 95.10%, normal 94.68%. The fixed p = 0.7 point is checked too, against its
    exact value: Wilson 93.54% (exact 93.72%).
    """
    rng = np.random.default_rng(11)
    p = rng.uniform(0.6, 0.8, SIMS)
    frame = _binary_frame(rng, p, 100)
    table = ef.aggregate(frame, by="sim", metrics=["correct"])
    assert "|stderr:sem|ci:wilson-0.95|" in table["signature"][0]
    truth = pl.Series(p)  # table rows are in sim order
    assert table["sim"].to_list() == list(range(SIMS))
    coverage = float(_covered(table, truth).mean())
    normal = ef.aggregate(frame, by="sim", metrics=["correct"], interval="normal")
    normal_coverage = float(_covered(normal, truth).mean())
    assert normal_coverage < coverage, (coverage, normal_coverage)
    assert 0.94 <= coverage <= 0.96, f"Wilson coverage {coverage:.4f} over p ~ U(0.6, 0.8)"

    # one fixed p = 0.7: the simulation agrees with the exact (oscillating) coverage
    fixed = ef.aggregate(_binary_frame(rng, np.full(SIMS, 0.7), 100), by="sim",
                         metrics=["correct"])
    exact = _exact_wilson_coverage(100, 0.7)  # 0.93719
    observed = _coverage(fixed, 0.7)
    assert abs(observed - exact) <= 3 * _mc_sd(exact), (observed, exact)


def test_wilson_at_n_20_near_1_is_far_better_than_the_normal_interval():
    """n = 20 rows, p = 0.95 (truth: 0.95): where Wilson matters.

    With probability 0.95**20 = 36% all 20 answers are right; the normal interval is
    then [1, 1] (zero width) and misses 0.95, so it covers only 63.9% (exact binomial
    sum). Wilson's exact coverage here is 92.45%: below 95%, honestly so. At n = 20 its
    coverage swings between 89.4% and 98.3% as p moves over [0.90, 0.99] (and dips to 84%
    near p = 0.009, where n p < 1), and p = 0.95 sits in a dip. The tolerance: the
    simulated coverage must equal that exact figure within 3 Monte Carlo standard
    deviations (0.8 points), must not be below the lowest exact coverage of that
    neighbourhood (0.894), and must beat the normal interval by 20 points. Seed 12: Wilson
    92.84%, normal 63.75%, Student-t 63.93%.
    """
    rng = np.random.default_rng(12)
    frame = _binary_frame(rng, np.full(SIMS, 0.95), 20)
    wilson = _coverage(ef.aggregate(frame, by="sim", metrics=["correct"]), 0.95)
    normal_table = ef.aggregate(frame, by="sim", metrics=["correct"], interval="normal")
    t_table = ef.aggregate(frame, by="sim", metrics=["correct"], interval="t")
    normal, student = _coverage(normal_table, 0.95), _coverage(t_table, 0.95)
    exact = _exact_wilson_coverage(20, 0.95)  # 0.92452
    report = f"Wilson {wilson:.4f} (exact {exact:.4f}), normal {normal:.4f}, t {student:.4f}"
    assert abs(wilson - exact) <= 3 * _mc_sd(exact), report
    assert wilson >= 0.894, report
    assert normal <= 0.70 and student <= 0.70, report
    assert wilson - normal >= 0.20, report
    # the reason: a perfect score gets a zero-width normal interval, a real Wilson one
    perfect = normal_table.join(
        frame.group_by("sim").agg(pl.col("correct").min().alias("all")), on="sim"
    ).filter(pl.col("all") == 1.0)
    assert perfect.height == pytest.approx(0.95**20 * SIMS, rel=0.05)
    assert (perfect["ci_low"] == 1.0).all() and (perfect["ci_high"] == 1.0).all()


# --- bounded continuous scores: Student-t clipped to [0, 1] ---------------------------------


def test_t_interval_covers_95_percent_for_bounded_continuous_scores():
    """n = 100 token-F1-like scores ~ Beta(2, 5) in [0, 1]; truth: 2 / (2 + 5) = 0.285714.

    The column is named ``squad_f1``, so aggregate reads the metric's bounds [0, 1] and
    uses Student-t (99 degrees of freedom) clipped to them. Seed 13: 94.88% (over
    20,000 evaluations of another seed: 94.98%).
    """
    rng = np.random.default_rng(13)
    a, b, n = 2.0, 5.0, 100
    scores = rng.beta(a, b, (SIMS, n))
    frame = pl.DataFrame({"sim": np.repeat(np.arange(SIMS), n), "squad_f1": scores.ravel()})
    table = ef.aggregate(frame, by="sim", metrics=["squad_f1"])
    assert "|ci:t-0.95|" in table["signature"][0]
    assert table["ci_low"].min() >= 0.0 and table["ci_high"].max() <= 1.0
    coverage = _coverage(table, a / (a + b))
    assert 0.94 <= coverage <= 0.96, f"t coverage {coverage:.4f}"


def test_t_interval_undercovers_skewed_scores_near_a_bound_with_few_rows():
    """A known limitation, kept visible: n = 30 scores ~ Beta(0.5, 5) (mean 1/11 = 0.0909,
    skewness 2.4, most scores near 0). The t interval assumes a roughly symmetric mean;
    here the sample mean's distribution is right-skewed, and the interval misses high
    more often than low. Seed 14: 92.33%, missing high 6.87% of the time and low 0.80%.
    With more rows it recovers (the skewness of the mean falls as 1/sqrt(n)).
    """
    rng = np.random.default_rng(14)
    a, b, n = 0.5, 5.0, 30
    scores = rng.beta(a, b, (SIMS, n))
    frame = pl.DataFrame({"sim": np.repeat(np.arange(SIMS), n), "squad_f1": scores.ravel()})
    table = ef.aggregate(frame, by="sim", metrics=["squad_f1"])
    truth = a / (a + b)
    coverage = _coverage(table, truth)
    assert 0.91 <= coverage <= 0.94, f"t coverage {coverage:.4f} (expected ~0.925)"
    misses_high = float((table["ci_high"] < truth).mean())
    misses_low = float((table["ci_low"] > truth).mean())
    assert misses_high > 2 * misses_low, (misses_high, misses_low)


# --- clustered: questions x samples ---------------------------------------------------------


@pytest.mark.slow
def test_clustered_interval_covers_95_percent_and_the_naive_one_fails():
    """100 questions x 5 samples each: question difficulty p_q ~ Beta(2, 1), each sample
    right with probability p_q.

    Truth: E[p_q] = 2 / 3. The intra-question correlation of two samples' 0/1 scores is
    Var(p_q) / (E p (1 - E p)) = (1/18) / (2/9) = 1/4, so the design effect is
    1 + (K - 1) ICC = 2: the naive standard error (rows as independent) is too small by
    sqrt(2), and its interval has nominal z = 1.96 / sqrt(2) = 1.386, i.e. about 83%
    coverage. The clustered one (by default on the repeated ``sample_id``; Wilson on the
    effective sample size) covers 95%. Seed 15: clustered 94.99%, question-mean 94.99%,
    clustered Student-t 95.08%, naive 83.35%; clustered / naive standard error 1.414.
    """
    rng = np.random.default_rng(15)
    questions, k, a, b = 100, 5, 2.0, 1.0
    p = rng.beta(a, b, (SIMS, questions))
    correct = (rng.random((SIMS, questions, k)) < p[:, :, None]).astype(np.float64)
    frame = pl.DataFrame({
        "sim": np.repeat(np.arange(SIMS), questions * k),
        "sample_id": np.tile(np.repeat(np.arange(questions), k), SIMS),
        "correct": correct.ravel(),
    })
    truth = a / (a + b)
    clustered = ef.aggregate(frame, by="sim", metrics=["correct"])
    assert "|stderr:clustered(sample_id)|ci:wilson-0.95|" in clustered["signature"][0]
    assert (clustered["n_clusters"] == questions).all() and (clustered["n"] == 500).all()
    naive = ef.aggregate(frame, by="sim", metrics=["correct"], cluster=False)
    assert "|stderr:sem|" in naive["signature"][0]
    question_mean = ef.aggregate(frame, by="sim", metrics=["correct"], stderr="question_mean")
    student = ef.aggregate(frame, by="sim", metrics=["correct"], interval="t")
    figures = {
        "clustered": _coverage(clustered, truth),
        "question_mean": _coverage(question_mean, truth),
        "clustered_t": _coverage(student, truth),
        "naive": _coverage(naive, truth),
    }
    report = ", ".join(f"{name} {value:.4f}" for name, value in figures.items())
    for name in ("clustered", "question_mean", "clustered_t"):
        assert 0.94 <= figures[name] <= 0.96, report
    assert figures["naive"] < 0.90, f"the naive interval should visibly fail: {report}"
    # the ratio of standard errors is the square root of the design effect, about sqrt(2)
    ratio = float((clustered["stderr"] / naive["stderr"]).mean())
    assert ratio == pytest.approx(math.sqrt(2), rel=0.05), ratio


# --- paired comparison: false positives under the null, power under an alternative ---------


def _paired_frame(rng: np.random.Generator, n: int, delta: float) -> pl.DataFrame:
    """SIMS evaluations of two models on the same n items, 0/1 scores.

    Item difficulty p_i = 0.9 B_i with B_i ~ Beta(0.5, 0.5) (many near-certain and
    near-hopeless items, shared by both models: that is the correlation); the baseline
    ``old`` is right with probability p_i, the candidate ``new`` with p_i + delta,
    independently given the item.
    """
    p = 0.9 * rng.beta(0.5, 0.5, (SIMS, n))
    new = (rng.random((SIMS, n)) < p + delta).astype(np.float64)
    old = (rng.random((SIMS, n)) < p).astype(np.float64)
    return pl.DataFrame({
        "sim": np.tile(np.repeat(np.arange(SIMS), n), 2),
        "sample_id": np.tile(np.arange(n), 2 * SIMS),
        "model": np.repeat(["new", "old"], SIMS * n),
        "correct": np.concatenate([new.ravel(), old.ravel()]),
    })


def _true_variance(delta: float) -> float:
    """Var(d_i) of one item's difference d_i = x_i - y_i, exactly.

    Given the item, x ~ Bern(p + delta) and y ~ Bern(p) independently, so (law of total
    variance) Var(d) = E[(p + delta)(1 - p - delta)] + E[p (1 - p)] + Var(delta) with the
    last term 0. For p = 0.9 B, B ~ Beta(1/2, 1/2): E p = 0.45, E p^2 = 0.81 E B^2 =
    0.81 (1/8 + 1/4) = 0.30375, so E p(1-p) = 0.14625 and
    E[(p + delta)(1 - p - delta)] = 0.14625 + delta (1 - 2 E p) - delta^2.
    """
    within = 0.45 - 0.30375
    return 2 * within + delta * (1 - 2 * 0.45) - delta**2


@pytest.mark.slow
def test_paired_test_false_positive_rate_is_5_percent_under_the_null():
    """Two equally good, correlated models (r = 0.41) on 200 items, 10,000 evaluations.

    Truth: no difference (delta = 0). method="paired" (Student-t on the 200 differences
    in {-1, 0, 1}, 199 degrees of freedom) is the calibrated one: its statistic is close
    to normal at this n. McNemar's exact test (the default for 0/1 scores) is a test of
    a discrete count conditioned on the discordant pairs, whose attainable p-values
    skip over 0.05: its actual size is below alpha, so it is conservative, and only an
    upper bound is asserted for it. Seed 16: paired 4.76%, McNemar 3.77%, r = 0.410.
    """
    rng = np.random.default_rng(16)
    frame = _paired_frame(rng, 200, 0.0)
    paired = ef.compare(frame, baseline="old", by="sim", metrics=["correct"], method="paired")
    assert paired.height == SIMS and (paired["n_pairs"] == 200).all()
    assert float(paired["correlation"].mean()) == pytest.approx(0.41, abs=0.02)
    mcnemar = ef.compare(frame, baseline="old", by="sim", metrics=["correct"])
    assert mcnemar["method"][0] == "mcnemar"
    rates = {
        "paired": float((paired["p_value"] < 0.05).mean()),
        "mcnemar": float((mcnemar["p_value"] < 0.05).mean()),
    }
    assert 0.04 <= rates["paired"] <= 0.06, rates
    assert rates["mcnemar"] <= 0.05 + 3 * _mc_sd(0.05), rates


@pytest.mark.slow
def test_paired_power_matches_the_prediction_and_beats_unpaired():
    """The candidate is 7 points better (delta = 0.07) on 200 items, 10,000 evaluations.

    Truth: delta = 0.07 and Var(d_i) = 0.2946 (:func:`_true_variance`), so ef.power
    predicts Phi(0.07 sqrt(200 / 0.2946) - 1.96) = 44.6%; ef.paired_variance estimated
    from all the simulated pairs gives the same. The observed rejection rate of the
    paired t-test must be within 3 points of it. An unpaired z-test from each model's
    own aggregate (ignoring that the items are shared) has far less power. Seed 17:
    paired 43.67% (predicted 44.60% from the true variance, 44.66% from
    paired_variance's 0.2941), McNemar 38.92%, unpaired 23.15%.
    """
    rng = np.random.default_rng(17)
    n, delta = 200, 0.07
    frame = _paired_frame(rng, n, delta)
    paired = ef.compare(frame, baseline="old", by="sim", metrics=["correct"], method="paired")
    mcnemar = ef.compare(frame, baseline="old", by="sim", metrics=["correct"])
    observed = float((paired["p_value"] < 0.05).mean())
    predicted = ef.power(delta, n, variance=_true_variance(delta))
    # every simulated item as one question of one big evaluation: the variance estimate
    estimated = ef.paired_variance(frame, metric="correct", baseline="old",
                                   on=["sim", "sample_id"])
    assert estimated.n == SIMS * n
    assert estimated.total == pytest.approx(_true_variance(delta), rel=0.01)
    from_data = ef.power(delta, n, variance=estimated)
    agg = ef.aggregate(frame, by=["sim", "model"], metrics=["correct"]).pivot(
        "model", index="sim", values=["value", "stderr"]
    )
    z = (agg["value_new"] - agg["value_old"]) / (
        agg["stderr_new"] ** 2 + agg["stderr_old"] ** 2
    ).sqrt()
    unpaired = float((2 * st.norm.sf(z.abs().to_numpy()) < 0.05).mean())
    report = (f"paired {observed:.4f}, predicted {predicted:.4f} (true variance) / "
              f"{from_data:.4f} (paired_variance), McNemar "
              f"{float((mcnemar['p_value'] < 0.05).mean()):.4f}, unpaired {unpaired:.4f}")
    assert abs(observed - predicted) <= 0.03, report
    assert abs(observed - from_data) <= 0.03, report
    assert observed > unpaired + 0.1, report


# --- corpus F1-macro: bootstrap percentile interval -----------------------------------------


@pytest.mark.slow
def test_bootstrap_percentile_interval_covers_the_population_f1_macro():
    """10,000 evaluations of 500 labelled rows, B = 1000 replicates each (the default).

    Population: gold classes 0/1/2 with probabilities 0.5/0.3/0.2; the prediction is the
    gold with probability 0.7, else one of the two other classes at random, so the
    joint table is P(pred, gold) = P(gold) (0.7 if pred = gold else 0.15). Truth: the
    F1-macro of that joint probability table (F1 is scale-free, so probabilities stand
    in for counts): per class 2 P(tp) / (2 P(tp) + P(fp) + P(fn)), averaged =
    0.682793. The bootstrap costs about 1.7 ms per group at B = 1000 here (17 s for the
    10,000, scoring included), within the budget, so B is not reduced. Seed 18: 94.93%.
    """
    rng = np.random.default_rng(18)
    gold_p = np.array([0.5, 0.3, 0.2])
    joint = np.array([[gold_p[g] * (0.7 if p == g else 0.15) for g in range(3)]
                      for p in range(3)])  # joint[pred, gold]
    tp = np.diag(joint)
    fp, fn = joint.sum(axis=1) - tp, joint.sum(axis=0) - tp
    truth = float(np.mean(2 * tp / (2 * tp + fp + fn)))
    assert truth == pytest.approx(0.682793, abs=1e-6)
    rows = 500
    cells = rng.choice(9, size=SIMS * rows, p=joint.ravel())
    frame = pl.DataFrame({
        "sim": np.repeat(np.arange(SIMS), rows), "prediction": cells // 3, "gold": cells % 3,
    })
    table = ef.aggregate(ef.score(frame, ["f1(average=macro)"]), by="sim")
    assert "|stderr:bootstrap|B:1000|seed:0|ci:percentile-0.95|" in table["signature"][0]
    coverage = _coverage(table, truth)
    assert 0.94 <= coverage <= 0.96, f"bootstrap coverage {coverage:.4f} (truth {truth:.6f})"
