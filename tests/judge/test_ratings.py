"""Bradley-Terry ratings: against scikit-learn's logistic regression, anchoring, bootstrap."""

from __future__ import annotations

import math
import warnings

import numpy as np
import polars as pl
import pytest

from evalframe import EvalframeError
from evalframe.judge.ratings import (
    RATING_COLUMNS,
    _prepare,
    _replicate_weights,
    ratings,
    win_rate_matrix,
)


def synthetic(seed: int = 3, models: int = 7, n: int = 2500, questions: int = 200):
    """Battles among ``models`` with a latent strength, ties and inconsistent pairs."""
    rng = np.random.default_rng(seed)
    strength = rng.normal(0, 1, models)
    a = rng.integers(0, models, n)
    b = (a + rng.integers(1, models, n)) % models
    p = 1 / (1 + np.exp(-(strength[a] - strength[b])))
    u = rng.random(n)
    outcome = np.where(u < 0.8 * p, "A", np.where(u < 0.8, "B",
                       np.where(u < 0.88, "tie", np.where(u < 0.97, "inconsistent", "error"))))
    names = [f"m{i}" for i in range(models)]
    return pl.DataFrame({
        "model_a": [names[i] for i in a],
        "model_b": [names[i] for i in b],
        "outcome": outcome,
        "sample_id": rng.integers(0, questions, n),
    })


def compute_mle_elo(battles: pl.DataFrame, anchor: str, scale=400, base=10, init=1000):
    """Chatbot Arena's compute_mle_elo formulation, with scikit-learn's LogisticRegression.

    Battles duplicated; one feature per model, +log(base) for model_a and -log(base) for
    model_b; y = 1 for an A win (both copies), a tie (here also an inconsistent pair) is one
    A win in the first copy and one B win in the second; no intercept, no penalty.
    """
    from sklearn.linear_model import LogisticRegression

    kept = battles.filter(pl.col("outcome") != "error")
    models = sorted(set(kept["model_a"]) | set(kept["model_b"]))
    index = {m: i for i, m in enumerate(models)}
    n = kept.height
    first = np.array([index[m] for m in kept["model_a"]] * 2)
    second = np.array([index[m] for m in kept["model_b"]] * 2)
    X = np.zeros((2 * n, len(models)))
    X[np.arange(2 * n), first] = +math.log(base)
    X[np.arange(2 * n), second] = -math.log(base)
    outcome = np.array(kept["outcome"].to_list() * 2)
    y = np.zeros(2 * n)
    y[outcome == "A"] = 1.0
    tie = np.isin(outcome, ["tie", "inconsistent"])
    tie[n:] = False
    y[tie] = 1.0
    lr = LogisticRegression(fit_intercept=False, C=np.inf, solver="newton-cg", tol=1e-12,
                            max_iter=100_000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the rank-deficient design (ratings sum freely)
        lr.fit(X, y)
    elo = scale * lr.coef_[0] + init
    elo += init - elo[index[anchor]]
    return dict(zip(models, elo, strict=True))


def test_fit_matches_scikit_learn_logistic_regression():
    pytest.importorskip("sklearn")
    battles = synthetic()
    expected = compute_mle_elo(battles, anchor="m2")
    got = ratings(battles, anchor="m2", bootstrap=0)
    assert got.columns == list(RATING_COLUMNS)
    assert set(got["model"]) == set(expected)
    for model, rating in zip(got["model"], got["rating"], strict=True):
        assert rating == pytest.approx(expected[model], abs=1e-6), model


def test_fit_matches_on_few_battles_with_other_scale_and_base():
    pytest.importorskip("sklearn")
    battles = synthetic(seed=11, models=3, n=40, questions=40)
    expected = compute_mle_elo(battles, anchor="m0", scale=173.7, base=math.e, init=1500)
    got = ratings(battles, anchor="m0", scale=173.7, base=math.e, init=1500, bootstrap=0)
    for model, rating in zip(got["model"], got["rating"], strict=True):
        assert rating == pytest.approx(expected[model], abs=1e-6), model


def test_anchor_gets_exactly_its_rating():
    battles = synthetic()
    assert ratings(battles, anchor="m4", bootstrap=0).filter(
        pl.col("model") == "m4")["rating"].item() == 1000.0
    pinned = ratings(battles, anchor=("m4", 1114.0), bootstrap=20)
    row = pinned.filter(pl.col("model") == "m4").row(0, named=True)
    assert row["rating"] == 1114.0 and row["ci_low"] == row["ci_high"] == 1114.0
    centred = ratings(battles, bootstrap=0)
    assert centred["rating"].mean() == pytest.approx(1000.0, abs=1e-9)
    # the differences do not depend on the anchor
    shift = pinned.sort("model")["rating"] - centred.sort("model")["rating"]
    assert (shift - shift[0]).abs().max() < 1e-6


@pytest.mark.slow
def test_bootstrap_is_reproducible_and_seeded():
    battles = synthetic()
    first = ratings(battles, anchor="m0", bootstrap=200, seed=5)
    again = ratings(battles, anchor="m0", bootstrap=200, seed=5)
    other = ratings(battles, anchor="m0", bootstrap=200, seed=6)
    assert first.equals(again)
    assert not first["ci_low"].equals(other["ci_low"])
    assert first["rating"].equals(other["rating"])
    free = first.filter(pl.col("model") != "m0")
    assert ((free["ci_low"] < free["rating"]) & (free["rating"] < free["ci_high"])).all()
    assert (free["stderr"] > 0).all()
    assert "seed:5" in first["signature"][0] and "resample:sample_id" in first["signature"][0]


def test_replicates_resample_whole_questions():
    battles = synthetic(n=300, questions=30)
    prepared, clustered = _prepare(battles, "model_a", "model_b", "outcome", None, "sample_id")
    assert clustered
    weights = _replicate_weights(prepared, 50, seed=9)
    # the same multinomial draw, then each drawn question's battles added up one by one
    kept = battles.filter(pl.col("outcome") != "error")
    questions = sorted(set(kept["sample_id"]))
    drawn = np.random.default_rng(9).multinomial(
        len(questions), np.full(len(questions), 1 / len(questions)), size=50
    )
    cell_of = {
        (m_a, m_b, y): k
        for k, (m_a, m_b, y) in enumerate(zip(prepared.first, prepared.second, prepared.outcome,
                                              strict=True))
    }
    value = {"A": 1.0, "B": 0.0, "tie": 0.5, "inconsistent": 0.5}
    expected = np.zeros_like(weights)
    for row in kept.iter_rows(named=True):
        key = (prepared.models.index(row["model_a"]), prepared.models.index(row["model_b"]),
               value[row["outcome"]])
        expected[:, cell_of[key]] += drawn[:, questions.index(row["sample_id"])]
    assert np.array_equal(weights, expected)


def test_without_the_cluster_column_battles_are_resampled():
    battles = synthetic().drop("sample_id")
    table = ratings(battles, anchor="m0", bootstrap=50)
    assert "resample:battle" in table["signature"][0]


def test_a_model_that_never_loses_is_an_error():
    battles = pl.DataFrame({
        "model_a": ["x", "x", "y", "z", "y"],
        "model_b": ["y", "z", "z", "y", "x"],
        "outcome": ["A", "A", "A", "A", "B"],
    })
    with pytest.raises(EvalframeError, match=r"never lost a point: \['x'\]"):
        ratings(battles, bootstrap=0)
    never_wins = pl.DataFrame({
        "model_a": ["x", "z", "y", "z"],
        "model_b": ["y", "x", "z", "y"],
        "outcome": ["B", "A", "A", "A"],
    })
    with pytest.raises(EvalframeError, match=r"do not exist.*never won a point: \['x'\]"):
        ratings(never_wins, bootstrap=0)
    apart = pl.DataFrame({  # two groups that never met
        "model_a": ["w", "x", "y", "z"], "model_b": ["x", "w", "z", "y"],
        "outcome": ["A", "A", "A", "A"],
    })
    with pytest.raises(EvalframeError, match="groups"):
        ratings(apart, bootstrap=0)
    # one tie is half a win: x then takes and gives points, the ratings exist
    tied = battles.with_columns(
        pl.when(pl.int_range(pl.len()) == 0).then(pl.lit("tie")).otherwise("outcome")
        .alias("outcome")
    )
    assert ratings(tied, bootstrap=0).height == 3


def test_replicates_without_ratings_are_left_out_and_counted():
    # y loses exactly once, in one question of twenty: many resamples miss that loss
    model_a = ["y"] * 19 + ["x"] * 20 + ["x"]
    model_b = ["x"] * 19 + ["y"] * 20 + ["y"]
    outcome = ["A"] * 19 + ["B"] * 20 + ["A"]
    battles = pl.DataFrame({
        "model_a": model_a, "model_b": model_b, "outcome": outcome,
        "sample_id": list(range(20)) * 2,
    })
    with pytest.warns(UserWarning, match="bootstrap replicates left out"):
        table = ratings(battles, anchor="x", bootstrap=100, seed=1)
    dropped = table["bootstrap_dropped"][0]
    assert 0 < dropped < 100
    assert table.filter(pl.col("model") == "y")["ci_high"].item() is not None


def test_weights_count_as_repeated_battles():
    battles = synthetic(n=400)
    weights = np.random.default_rng(0).integers(1, 4, battles.height)
    weighted = ratings(battles.with_columns(pl.Series("w", weights)), weight="w", bootstrap=0)
    repeated = ratings(battles.select(pl.all().repeat_by(pl.Series(weights)).explode()),
                       bootstrap=0)
    assert np.allclose(weighted["rating"].to_numpy(), repeated["rating"].to_numpy(),
                       atol=1e-9)
    assert weighted["model"].equals(repeated["model"])


def test_counts_per_model():
    battles = pl.DataFrame({
        "model_a": ["x", "x", "y", "y", "x"],
        "model_b": ["y", "y", "x", "x", "x"],
        "outcome": ["A", "tie", "A", "error", "A"],
    })
    table = ratings(battles, bootstrap=0).sort("model")
    # the error and the self-match are left out
    assert table.select("model", "n_battles", "wins", "losses", "ties").rows() == [
        ("x", 3, 1, 1, 1), ("y", 3, 1, 1, 1),
    ]
    assert table["rating"].to_list() == pytest.approx([1000.0, 1000.0], abs=1e-9)


def test_bad_inputs():
    battles = synthetic(n=100)
    with pytest.raises(EvalframeError, match="anchor model 'nope'"):
        ratings(battles, anchor="nope", bootstrap=0)
    with pytest.raises(EvalframeError, match="the rating must be a finite number"):
        ratings(battles, anchor=("m0", math.inf), bootstrap=0)
    with pytest.raises(EvalframeError, match="bootstrap=1"):
        ratings(battles, bootstrap=1)
    with pytest.raises(EvalframeError, match="'win'"):
        ratings(battles.with_columns(pl.lit("win").alias("outcome")), bootstrap=0)
    with pytest.raises(EvalframeError, match="column"):
        ratings(battles.drop("model_b"), bootstrap=0)


def test_win_rate_matrix_by_hand():
    battles = pl.DataFrame({
        "model_a": ["x", "x", "y", "z", "x"],
        "model_b": ["y", "y", "x", "x", "z"],
        "outcome": ["A", "inconsistent", "A", "tie", "error"],
    })
    wide = win_rate_matrix(battles)
    assert wide.columns == ["model", "x", "y", "z"]
    # x vs y: 1 + 0.5 + 0 over 3; x vs z: the tie
    assert wide.row(0) == ("x", None, pytest.approx(0.5), 0.5)
    assert wide.row(1) == ("y", pytest.approx(0.5), None, None)
    assert wide.row(2) == ("z", 0.5, None, None)
    long = win_rate_matrix(battles, long=True)
    assert long.filter((pl.col("model") == "y") & (pl.col("opponent") == "x"))["n"].item() == 3


def test_a_fit_that_stalls_at_floating_point_precision_is_finished_not_refused():
    # every model wins 6, loses 6 and ties 4 around a cycle x > y > z > x: by symmetry the
    # maximum-likelihood ratings are equal, all at init (1000); some bootstrap replicates
    # made scipy's trust-exact stop with a gradient of ~1.5e-8 ("a bad approximation"),
    # which was reported as a fit that did not converge
    battles = pl.DataFrame({
        "sample_id": [f"q{i}" for i in range(24)],
        "model_a": ["x", "y", "z"] * 8,
        "model_b": ["y", "z", "x"] * 8,
        "outcome": ["A", "B", "tie", "B", "A", "A", "tie", "B"] * 3,
    })
    table = ratings(battles, bootstrap=20)
    assert table["rating"].to_list() == pytest.approx([1000.0] * 3, abs=1e-6)
    assert table["bootstrap_dropped"].to_list() == [0, 0, 0]
