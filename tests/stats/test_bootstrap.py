"""The bootstrap of corpus metrics: seeded, exact resampling, sizes of standard errors."""

from __future__ import annotations

import math

import numpy as np
import pytest

from evalframe.metrics.reduce import Sums, Table
from evalframe.stats.bootstrap import bootstrap_sums, bootstrap_table, replicate_stderr

MEAN = Sums("mean", lambda sums: sums["x"] / sums["one"])
#: The share of rows in the first cell: a proportion, whose bootstrap is binomial.
SHARE = Table("share", lambda cells, counts: counts[:, 0] / counts.sum(axis=1))


def test_seeded_and_reproducible():
    values = {"x": np.arange(50, dtype=float), "one": np.ones(50)}
    first = bootstrap_sums(MEAN, values, replicates=100, seed=3)
    assert np.array_equal(first, bootstrap_sums(MEAN, values, replicates=100, seed=3))
    assert not np.array_equal(first, bootstrap_sums(MEAN, values, replicates=100, seed=4))
    cells, counts = {"label": np.array(["a", "b"])}, np.array([30, 70])
    table = bootstrap_table(SHARE, cells, counts, replicates=100, seed=3)
    assert np.array_equal(table, bootstrap_table(SHARE, cells, counts, replicates=100, seed=3))


def test_every_replicate_resamples_n_rows():
    seen = []

    def capture(cells, counts):
        seen.append(counts)
        return counts[:, 0] / counts.sum(axis=1)

    bootstrap_table(Table("share", capture), {"c": np.array([0, 1, 2])}, np.array([5, 0, 7]),
                    replicates=500, seed=0)
    drawn = seen[0]
    assert drawn.shape == (500, 3)
    assert (drawn.sum(axis=1) == 12).all()
    assert (drawn[:, 1] == 0).all(), "a cell with count 0 is never drawn"


def test_stderr_of_a_proportion_matches_the_binomial():
    # Resampling n rows of which k are in cell 0: the share is Binomial(n, k/n) / n, whose
    # standard deviation is sqrt(p (1 - p) / n) = sqrt(0.3 * 0.7 / 200) = 0.032404
    scores = bootstrap_table(SHARE, {"c": np.array([0, 1])}, np.array([60, 140]),
                             replicates=20_000, seed=1)
    assert replicate_stderr(scores) == pytest.approx(math.sqrt(0.3 * 0.7 / 200), rel=0.02)


def test_stderr_of_a_mean_matches_the_plug_in_formula():
    # The bootstrap variance of a mean is the plug-in variance (ddof=0) over n.
    rng = np.random.default_rng(5)
    x = rng.normal(size=400)
    scores = bootstrap_sums(MEAN, {"x": x, "one": np.ones(400)}, replicates=20_000, seed=2)
    assert replicate_stderr(scores) == pytest.approx(x.std(ddof=0) / math.sqrt(400), rel=0.02)


def test_stderr_is_the_sample_standard_deviation_not_divided_by_sqrt_b():
    scores = np.array([1.0, 2.0, 4.0])
    # mean 7/3; squared deviations 16/9, 1/9, 25/9 sum to 42/9; / (3 - 1) -> 7/3
    assert replicate_stderr(scores) == pytest.approx(math.sqrt(7 / 3), rel=1e-15)


def test_sums_in_blocks_equal_one_block(monkeypatch):
    import evalframe.stats.bootstrap as module

    values = {"x": np.arange(30, dtype=float), "one": np.ones(30)}
    whole = bootstrap_sums(MEAN, values, replicates=64, seed=9)
    monkeypatch.setattr(module, "BLOCK", 30 * 5)  # 5 replicates per block
    assert np.array_equal(bootstrap_sums(MEAN, values, replicates=64, seed=9), whole)
