"""Intervals stay inside the metric's bounds on every stderr= / interval= choice.

Hand reasoning: a mean of 0/1 scores is a proportion, so no interval of it may leave
[0, 1], whether the column is a registered metric (``exact_match``) or a harness's own
0/1 values (``harness.match``, whose bounds evalframe cannot know from its name). At 0/n
and n/n the standard error is 0: only a method the user asks for by name (``t``,
``normal``) may then give a zero-width interval; the default (Wilson) never does.
"""

from __future__ import annotations

import itertools

import numpy as np
import polars as pl
import pytest

import evalframe as ef

STDERRS = ("auto", "question_mean")
INTERVALS = ("auto", "wilson", "t", "normal")


def _epochs(values: np.ndarray) -> pl.DataFrame:
    """5 questions x 5 epochs (Inspect's layout), one 0/1 value per row."""
    return pl.DataFrame({"sample_id": np.repeat(np.arange(5), 5), "harness.match": values})


@pytest.mark.parametrize(("stderr", "interval"), itertools.product(STDERRS, INTERVALS))
@pytest.mark.parametrize("seed", range(5))
def test_a_plain_0_1_column_stays_in_0_1(stderr, interval, seed):
    values = np.random.default_rng(seed).integers(0, 2, 25).astype(float)
    row = ef.aggregate(
        _epochs(values), metrics=["harness.match"], stderr=stderr, cluster="sample_id",
        interval=interval,
    ).row(0, named=True)
    assert 0.0 <= row["ci_low"] <= row["value"] <= row["ci_high"] <= 1.0


@pytest.mark.parametrize("stderr", STDERRS)
@pytest.mark.parametrize("score", [0.0, 1.0])
def test_all_right_or_all_wrong_keeps_a_width_by_default(stderr, score):
    row = ef.aggregate(
        _epochs(np.full(25, score)), metrics=["harness.match"], stderr=stderr,
        cluster="sample_id",
    ).row(0, named=True)
    # Wilson on the 5 questions (the effective sample size is undefined at 0 and 1):
    # at p = 1, n = 5, z = 1.959964: low = n / (n + z^2) = 5 / 8.841459 = 0.565518
    assert row["ci_high"] - row["ci_low"] > 0.4
    if score == 1.0:
        assert row["ci_low"] == pytest.approx(5 / (5 + 1.959963984540054**2), rel=1e-12)
        assert row["ci_high"] == pytest.approx(1.0, abs=1e-15)


@pytest.mark.parametrize(("stderr", "interval"), itertools.product(STDERRS, INTERVALS))
def test_a_metric_column_stays_in_its_bounds(stderr, interval):
    rng = np.random.default_rng(7)
    frame = pl.DataFrame({
        "sample_id": np.repeat(np.arange(8), 3),
        "prediction": rng.choice(["a", "b", "a b c"], 24).tolist(),
        "gold": ["a b"] * 24,
    })
    scored = ef.score(frame, ["exact_match", "token_f1"])
    table = ef.aggregate(scored, stderr=stderr, cluster="sample_id", interval=interval
                         ) if interval != "wilson" else ef.aggregate(
        scored, metrics=["exact_match"], stderr=stderr, cluster="sample_id", interval=interval)
    for row in table.iter_rows(named=True):
        assert 0.0 <= row["ci_low"] <= row["value"] <= row["ci_high"] <= 1.0, row["metric"]
