"""power(), mde(), sample_size(), paired_variance(): hand-computed, inverse, simulation."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest

import evalframe as ef
from evalframe import EvalframeError, PairedVariance, mde, paired_variance, power, sample_size


def phi(x: float) -> float:
    return 0.5 * (1 + math.erf(x / math.sqrt(2)))


Z975 = 1.959963984540054  # scipy.stats.norm.ppf(0.975)
Z95 = 1.6448536269514722  # scipy.stats.norm.ppf(0.95)
Z80 = 0.8416212335729143  # scipy.stats.norm.ppf(0.8)


# --- the formulas, by hand ----------------------------------------------------------------


def test_power_hand_computed():
    # SE = sqrt(0.25 / 400) = 0.025, so delta = 0.05 is x = 2 standard errors
    expected = phi(2 - Z975) + phi(-2 - Z975)
    assert power(0.05, 400, variance=0.25) == pytest.approx(expected, rel=1e-12)
    assert power(-0.05, 400, variance=0.25) == pytest.approx(expected, rel=1e-12)
    assert power(0.05, 400, variance=0.25, two_sided=False) == pytest.approx(
        phi(2 - Z95), rel=1e-12
    )
    # no difference: the power is the level of the test
    assert power(0.0, 400, variance=0.25) == pytest.approx(0.05, rel=1e-12)
    assert power(0.0, 400, variance=0.25, alpha=0.01, two_sided=False) == pytest.approx(0.01)


def test_mde_hand_computed_and_miller_closed_form():
    se = math.sqrt(0.25 / 400)
    # one-sided: exactly (z_{1-alpha} + z_power) SE
    assert mde(400, variance=0.25, two_sided=False) == pytest.approx((Z95 + Z80) * se, rel=1e-12)
    # two-sided: Miller's (z_{1-alpha/2} + z_power) SE, less its negligible second tail
    two = mde(400, variance=0.25)
    miller = (Z975 + Z80) * se
    assert two < miller
    assert two == pytest.approx(miller, rel=1e-5)


def test_sample_size_hand_computed():
    # Miller: (1.96 + 0.8416)**2 * 0.1 / 0.05**2 = 313.96 -> 314
    assert pytest.approx(313.955, abs=1e-3) == (Z975 + Z80) ** 2 * 0.1 / 0.05**2
    assert sample_size(0.05, variance=0.1) == 314
    assert isinstance(sample_size(0.05, variance=0.1), int)
    # an effect of many standard errors needs one question
    assert sample_size(10.0, variance=0.1) == 1


@pytest.mark.parametrize("two_sided", [True, False])
def test_mde_inverts_power(two_sided):
    n = np.array([10, 57, 164, 1000, 14042])[:, None, None]
    alpha = np.array([0.01, 0.05, 0.1])[None, :, None]
    target = np.array([0.5, 0.8, 0.9, 0.99])[None, None, :]
    effect = mde(n, variance=0.2, alpha=alpha, power=target, two_sided=two_sided)
    assert effect.shape == (5, 3, 4)
    achieved = power(effect, n, variance=0.2, alpha=alpha, two_sided=two_sided)
    np.testing.assert_allclose(achieved, np.broadcast_to(target, achieved.shape), rtol=0, atol=1e-9)
    # the brief's case exactly
    assert abs(power(mde(500, variance=0.3), 500, variance=0.3) - 0.8) < 1e-9


def test_mde_near_alpha_is_still_inverted():
    # the power curve is flat at delta = 0; the bracketed bisection still finds the root
    effect = mde(100, variance=1.0, power=0.0500001)
    assert effect > 0
    assert abs(power(effect, 100, variance=1.0) - 0.0500001) < 1e-9


@pytest.mark.parametrize("two_sided", [True, False])
def test_sample_size_is_the_smallest_n_reaching_the_power(two_sided):
    delta = np.array([0.01, 0.02, 0.03, 0.05, 0.1, 0.2, 0.5])
    variance = np.array([0.05, 0.1, 0.2, 0.25])[:, None]
    for target in (0.5, 0.8, 0.9):
        n = sample_size(delta, variance=variance, power=target, two_sided=two_sided)
        assert n.dtype == np.int64 and n.shape == (4, 7)
        reached = power(delta, n, variance=variance, two_sided=two_sided)
        assert np.all(reached >= target)
        below = power(delta, np.maximum(n - 1, 1), variance=variance, two_sided=two_sided)
        assert np.all((below < target) | (n == 1))


def test_vectorised_shapes_and_scalars():
    assert isinstance(power(0.05, 400, variance=0.25), float)
    assert isinstance(mde(400, variance=0.25), float)
    out = power(np.array([0.01, 0.02, 0.03]), np.array([[100], [1000]]), variance=0.25)
    assert out.shape == (2, 3)
    assert np.all(np.diff(out, axis=1) > 0) and np.all(out[1] > out[0])
    assert mde([100, 400], variance=0.1).shape == (2,)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: power(0.1, 100), "either variance="),
        (lambda: power(0.1, 100, variance=0.1, scored=pl.DataFrame()), "either variance="),
        (lambda: power(0.1, variance=0.1), "n= "),
        (lambda: power(0.1, 100, variance=0.0), "variance="),
        (lambda: power(0.1, 100, variance=0.1, alpha=1.5), "alpha="),
        (lambda: power(0.1, 0, variance=0.1), "n="),
        (lambda: mde(100, variance=0.1, power=0.05), "power="),
        (lambda: mde(100, variance=0.1, power=1.0), "power="),
        (lambda: sample_size(0.0, variance=0.1), "nonzero"),
        (lambda: power(0.1, 100, variance=0.1, samples_per_question=4), "PairedVariance"),
        (lambda: power(0.1, 100, variance=0.1, metric="acc"), "describe scored="),
        (lambda: power(0.1, scored=pl.DataFrame({"model": ["a"]})), "metric= and baseline="),
    ],
)
def test_errors(call, message):
    with pytest.raises(EvalframeError, match=message):
        call()


# --- simulation: the predicted power is the rejection rate of the paired z-test -------------


def simulate_differences(rng, replicates, n, k, delta):
    """Per-question differences of K-averaged 0/1 scores, questions drawn afresh each time.

    p_B ~ U(0.2, 0.8), p_A = p_B + delta + e with e ~ U(-0.1, 0.1): omega2 = 0.2**2 / 12,
    sigma2_M = E[p (1 - p)] = E[p] - Var(p) - E[p]**2.
    """
    p_b = rng.uniform(0.2, 0.8, (replicates, n))
    p_a = p_b + delta + rng.uniform(-0.1, 0.1, (replicates, n))
    mean_a = rng.binomial(k, p_a) / k
    mean_b = rng.binomial(k, p_b) / k
    omega2 = 0.2**2 / 12
    sigma2_b = 0.5 - 0.6**2 / 12 - 0.25
    sigma2_a = (0.5 + delta) - (0.6**2 / 12 + omega2) - (0.5 + delta) ** 2
    return mean_a - mean_b, omega2 + (sigma2_a + sigma2_b) / k


@pytest.mark.parametrize(("n", "delta"), [(250, 0.05), (120, 0.05), (250, 0.0)])
def test_power_matches_the_simulated_rejection_rate(n, delta):
    rng = np.random.default_rng(20241101)
    d, variance = simulate_differences(rng, replicates=4000, n=n, k=4, delta=delta)
    z = d.mean(axis=1) / (d.std(axis=1, ddof=1) / math.sqrt(n))
    rejected = float(np.mean(np.abs(z) > Z975))
    predicted = power(delta, n, variance=variance)
    assert abs(rejected - predicted) < 0.03, (rejected, predicted)


def test_sample_size_reaches_the_power_in_simulation():
    rng = np.random.default_rng(7)
    _, variance = simulate_differences(rng, 1, 1, k=4, delta=0.05)
    n = sample_size(0.05, variance=variance)
    d, _ = simulate_differences(rng, replicates=4000, n=n, k=4, delta=0.05)
    z = d.mean(axis=1) / (d.std(axis=1, ddof=1) / math.sqrt(n))
    assert abs(float(np.mean(np.abs(z) > Z975)) - 0.8) < 0.03


# --- paired_variance: components from a scored long frame ------------------------------------


def long_frame(rng, n, k, spread=0.25):
    """One row per (model, question, sample). p_B ~ U(.3, .7), p_A = p_B + U(-spread, spread)."""
    p_b = rng.uniform(0.3, 0.7, n)
    p_a = p_b + rng.uniform(-spread, spread, n)
    rows = {
        "model": np.repeat(["cand", "base"], n * k),
        "sample_id": np.tile(np.repeat(np.arange(n), k), 2),
        "acc": np.concatenate(
            [
                (rng.random((n, k)) < p_a[:, None]).ravel(),
                (rng.random((n, k)) < p_b[:, None]).ravel(),
            ]
        ).astype(np.float64),
    }
    omega2 = (2 * spread) ** 2 / 12
    sigma2_b = 0.5 - 0.4**2 / 12 - 0.25
    sigma2_a = 0.5 - (0.4**2 / 12 + omega2) - 0.25
    return pl.DataFrame(rows), omega2, sigma2_a, sigma2_b


def test_paired_variance_hand_computed():
    scored = pl.DataFrame(
        {
            "model": ["a"] * 6 + ["b"] * 6 + ["a", "b"],
            "sample_id": [1, 1, 2, 2, 3, 3] * 2 + [9, 8],  # 9 and 8 are unmatched
            "acc": [1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 0.0, None, 1.0, 0.0],
            # the null is a row without a gold, not a missing answer (as evalframe.score
            # would flag it)
            "acc:missing": [False] * 14,
        }
    )
    with pytest.raises(EvalframeError, match="'acc': 1 row\\(s\\) have a null score"):
        paired_variance(scored.drop("acc:missing"), metric="acc", baseline="b")
    v = paired_variance(scored, metric="acc", baseline="b")
    # questions 1..3: a's means 1, .5, 0 (variances 0, .5, 0); b's 0, 1, 0 (K = 2, 2, 1)
    # d = 1, -.5, 0: var = (25 + 16 + 1) / 36 / 2 = 21/36
    assert (v.n, v.n_unmatched, v.n_null) == (3, 2, 1)
    assert v.within_model == pytest.approx(1 / 6, rel=1e-15)
    assert v.within_baseline == 0.0
    assert v.k_model == 2.0
    assert v.k_baseline == pytest.approx(1 / ((1 / 2 + 1 / 2 + 1) / 3), rel=1e-15)  # 1.5
    assert v.between == pytest.approx(21 / 36 - (1 / 6) / 2, rel=1e-14)
    assert v.total == pytest.approx(21 / 36, rel=1e-14)
    assert v.at(8).total == pytest.approx(21 / 36 - 1 / 12 + 1 / 48, rel=1e-14)
    # the same through power(scored=...), and samples_per_question re-plans K
    assert ef.power(0.1, scored=scored, metric="acc", baseline="b") == pytest.approx(
        ef.power(0.1, 3, variance=21 / 36), rel=1e-12
    )
    assert ef.mde(100, scored=scored, metric="acc", baseline="b", samples_per_question=8) == (
        pytest.approx(ef.mde(100, variance=v.at(8)), rel=1e-15)
    )


def test_paired_variance_clustered():
    # 4 questions in 2 passages; one sample each (K = 1: within unknown)
    scored = pl.DataFrame(
        {
            "model": ["a"] * 4 + ["b"] * 4,
            "q": [1, 2, 3, 4] * 2,
            "passage": ["p", "p", "r", "r"] * 2,
            "acc": [1.0, 1.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0],
        }
    )
    v = paired_variance(scored, metric="acc", baseline="b", on="q", cluster="passage")
    # d = 1, 1, 0, 0 (mean .5); passage residual sums 1, -1; SE**2 = 2/1 * 2 / 16 = 1/4
    assert v.n == 4 and v.n_clusters == 2
    assert v.between == pytest.approx(4 * 0.25, rel=1e-15)
    assert math.isnan(v.within_model) and v.total == v.between
    unclustered = paired_variance(scored, metric="acc", baseline="b", on="q")
    assert unclustered.total == pytest.approx(1 / 3, rel=1e-15)  # var(1, 1, 0, 0)
    with pytest.raises(EvalframeError, match="one sample per question"):
        unclustered.at(4)


def test_paired_variance_errors():
    scored = pl.DataFrame(
        {"model": ["a", "b", "c"], "sample_id": [1, 1, 1], "acc": [1.0, 0.0, 1.0],
         "passage": [1, 2, 3]}
    )
    with pytest.raises(EvalframeError, match="name the candidate"):
        paired_variance(scored, metric="acc", baseline="b")
    with pytest.raises(EvalframeError, match="baseline 'x' not found"):
        paired_variance(scored, metric="acc", baseline="x")
    with pytest.raises(EvalframeError, match="at least 2"):
        paired_variance(scored, metric="acc", baseline="b", candidate="a")
    with pytest.raises(EvalframeError, match=r"no column\(s\) \['score'\]"):
        paired_variance(scored, metric="score", baseline="b")
    with pytest.raises(EvalframeError, match="not constant"):
        paired_variance(
            pl.concat([scored, scored.with_columns(sample_id=pl.lit(2, pl.Int64))]),
            metric="acc", baseline="b", candidate="a", cluster="passage",
        )


def test_paired_variance_recovers_the_simulated_components():
    rng = np.random.default_rng(11)
    scored, omega2, sigma2_a, sigma2_b = long_frame(rng, n=40_000, k=4)
    v = paired_variance(scored, metric="acc", baseline="base")
    assert v.n == 40_000 and v.k_model == 4.0 and v.k_baseline == 4.0
    assert v.within_model == pytest.approx(sigma2_a, abs=0.003)
    assert v.within_baseline == pytest.approx(sigma2_b, abs=0.003)
    assert v.between == pytest.approx(omega2, abs=0.004)
    # planning K = 16 from a K = 4 pilot predicts the variance at K = 16
    assert v.at(16).total == pytest.approx(omega2 + (sigma2_a + sigma2_b) / 16, abs=0.004)


def test_paired_variance_is_reproducible_and_lazy_input_works():
    rng = np.random.default_rng(3)
    scored, *_ = long_frame(rng, n=2000, k=3)
    first = paired_variance(scored, metric="acc", baseline="base")
    assert paired_variance(scored.lazy(), metric="acc", baseline="base") == first
    assert isinstance(first, PairedVariance)


def test_paired_variance_scores_missing_answers_as_aggregate_does():
    import evalframe as ef

    # question 3: model "a" gave no answer. Counted wrong (default): d = (0, 0, -1);
    # excluded: question 3 is unpaired and two questions remain
    frame = pl.DataFrame(
        {
            "model": ["a", "a", "a", "b", "b", "b"],
            "sample_id": [1, 2, 3, 1, 2, 3],
            "prediction": ["x", "y", None, "x", "y", "z"],
            "gold": ["x", "y", "z"] * 2,
        }
    )
    scored = ef.score(frame, ["exact_match"])
    wrong = ef.paired_variance(scored, metric="exact_match", baseline="b", candidate="a")
    excluded = ef.paired_variance(scored, metric="exact_match", baseline="b", candidate="a",
                                  missing="exclude")
    assert wrong.n == 3 and excluded.n == 2
    # var(0, 0, -1) with ddof=1 = 1/3
    assert wrong.total == pytest.approx(1 / 3, rel=1e-12)


def test_paired_variance_refuses_nan_scores():
    scored = pl.DataFrame({
        "model": ["a", "a", "b", "b"], "sample_id": [1, 2, 1, 2],
        "acc": [1.0, float("nan"), 0.0, 1.0],
    })
    with pytest.raises(EvalframeError, match=r"'acc': 1 row\(s\) hold a NaN score "
                       r"\(first: row 1\)"):
        paired_variance(scored, metric="acc", baseline="b", missing="exclude")
