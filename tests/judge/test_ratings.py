"""Bradley-Terry ratings: against scikit-learn's logistic regression, anchoring, bootstrap."""

from __future__ import annotations

import math
import warnings

import numpy as np
import polars as pl
import pytest

from evalframe import EvalframeError
from evalframe.judge.ratings import (
    COEFFICIENT_COLUMNS,
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


# --- style control --------------------------------------------------------------------------

def styled_battles(seed: int = 5, models: int = 5, n: int = 1500, questions: int = 300):
    """Battles whose answers differ in length and markdown, the longer and more formatted
    answer favoured by the judge; ``tokens_a``/``tokens_b`` are precomputed lengths."""
    rng = np.random.default_rng(seed)
    strength = rng.normal(0, 0.6, models)
    verbosity = rng.uniform(20, 200, models)
    markdown = rng.uniform(0, 4, models)
    a = rng.integers(0, models, n)
    b = (a + rng.integers(1, models, n)) % models

    def answer(model: int) -> tuple[str, int]:
        headers, items, bold = rng.poisson(markdown[model] * np.array([0.3, 1.5, 1.0]))
        words = int(rng.poisson(verbosity[model] * rng.uniform(0.2, 1.8))) + 1
        text = "".join(
            ["## Part\n"] * headers + ["- point\n"] * items + ["**key** "] * bold
            + ["word "] * words
        )
        if rng.random() < 0.2:
            text += "\n```\n# code\n- x\n```\n"
        return text, len(text.split()) + int(rng.integers(0, 10))

    sides = [[answer(m) for m in side] for side in (a, b)]

    def relative(x, y):
        return (x - y) / (x + y + 1)

    tokens_a = np.array([t for _, t in sides[0]])
    tokens_b = np.array([t for _, t in sides[1]])
    logit = strength[a] - strength[b] + 1.5 * relative(tokens_a, tokens_b)
    u = rng.random(n)
    p = 1 / (1 + np.exp(-logit))
    outcome = np.where(u < 0.9 * p, "A", np.where(u < 0.9, "B", "tie"))
    names = [f"m{i}" for i in range(models)]
    return pl.DataFrame({
        "model_a": [names[i] for i in a],
        "model_b": [names[i] for i in b],
        "outcome": outcome,
        "sample_id": rng.integers(0, questions, n),
        "answer_a": [text for text, _ in sides[0]],
        "answer_b": [text for text, _ in sides[1]],
        "tokens_a": tokens_a,
        "tokens_b": tokens_b,
    })


def fastchat_style_design(battles: pl.DataFrame, base=10):
    """FastChat's ``construct_style_matrices`` (elo_analysis.py, Aug. 2024), written out:
    battles duplicated; one column per model, +log(base) for model_a and -log(base) for
    model_b; the four style features of both answers (tokens, headers, lists, bold, counted
    with Python's re and FastChat's patterns), (a - b) / (a + b + 1), standardised with
    numpy's mean and std; y = 1 for an A win (both copies), a tie one A win in the first
    copy and one B win in the second."""
    from tests.judge.test_style import oracle

    models = sorted(set(battles["model_a"]) | set(battles["model_b"]))
    index = {m: i for i, m in enumerate(models)}
    n = battles.height
    first = np.array([index[m] for m in battles["model_a"]] * 2)
    second = np.array([index[m] for m in battles["model_b"]] * 2)
    columns = []
    for feature in ("length", "markdown_headers", "markdown_lists", "bold"):
        if feature == "length":
            count_a = battles["tokens_a"].to_numpy().astype(float)
            count_b = battles["tokens_b"].to_numpy().astype(float)
        else:
            count_a = np.array([oracle(text, feature) for text in battles["answer_a"]])
            count_b = np.array([oracle(text, feature) for text in battles["answer_b"]])
        diff = (count_a - count_b) / (count_a + count_b + 1)
        columns.append((diff - diff.mean()) / diff.std())
    features = np.tile(np.column_stack(columns), (2, 1))
    X = np.zeros((2 * n, len(models) + 4))
    X[np.arange(2 * n), first] = +math.log(base)
    X[np.arange(2 * n), second] = -math.log(base)
    X[:, len(models):] = features
    outcome = np.array(battles["outcome"].to_list() * 2)
    y = np.zeros(2 * n)
    y[outcome == "A"] = 1.0
    tie = outcome == "tie"
    tie[n:] = False
    y[tie] = 1.0
    return X, y, models


def fit_style_with_sklearn(battles, anchor, **options):
    from sklearn.linear_model import LogisticRegression

    X, y, models = fastchat_style_design(battles)
    lr = LogisticRegression(fit_intercept=False, **options)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the rank-deficient design (ratings sum freely)
        lr.fit(X, y)
    k = len(models)
    elo = 400 * lr.coef_[0][:k] + 1000
    elo += 1000 - elo[models.index(anchor)]
    return dict(zip(models, elo, strict=True)), lr.coef_[0][k:]


STYLE_FROM_TOKENS = {"style": True, "style_columns": {"length": ("tokens_a", "tokens_b")}}


@pytest.mark.conformance
def test_style_controlled_fit_matches_fastchats_logistic_regression_without_penalty():
    pytest.importorskip("sklearn")
    battles = styled_battles()
    expected, beta = fit_style_with_sklearn(
        battles, "m0", C=np.inf, solver="newton-cg", tol=1e-12, max_iter=100_000
    )
    table, coefficients = ratings(battles, anchor="m0", bootstrap=0, return_coefficients=True,
                                  **STYLE_FROM_TOKENS)
    for model, rating in zip(table["model"], table["rating"], strict=True):
        assert rating == pytest.approx(expected[model], abs=1e-6), model
    assert coefficients["feature"].to_list() == [
        "length", "markdown_headers", "markdown_lists", "bold"
    ]
    assert coefficients["coefficient"].to_numpy() == pytest.approx(beta, abs=1e-8)
    assert coefficients["elo_per_sd"].to_numpy() == pytest.approx(
        beta * 400 / math.log(10), abs=1e-6
    )
    # the judge favours the longer answer: a clearly positive length coefficient
    assert coefficients["coefficient"][0] > 0.3


@pytest.mark.conformance
def test_style_controlled_fit_is_close_to_fastchats_default_regularised_fit():
    # FastChat calls LogisticRegression(fit_intercept=False) as it is: C=1, an L2 penalty of
    # 0.5 * |w|^2 against 2 x 1500 duplicated log-losses (and lbfgs's default tolerance),
    # which pulls the ratings and coefficients toward 0. evalframe fits the likelihood
    # itself; on these 1500 battles the two differ by at most 0.48 Elo points (m2) and 0.003
    # on a coefficient (length): tolerances 1 and 0.01
    pytest.importorskip("sklearn")
    battles = styled_battles()
    expected, beta = fit_style_with_sklearn(battles, "m0")
    table, coefficients = ratings(battles, anchor="m0", bootstrap=0, return_coefficients=True,
                                  **STYLE_FROM_TOKENS)
    gaps = [abs(rating - expected[model])
            for model, rating in zip(table["model"], table["rating"], strict=True)]
    assert max(gaps) < 1.0
    assert max(gaps) > 0.1  # the penalty is felt: the comparison is not the unpenalised one
    assert coefficients["coefficient"].to_numpy() == pytest.approx(beta, abs=0.01)


def test_style_control_with_the_bootstrap_counted_from_text():
    battles = styled_battles(n=600, questions=120)
    table, coefficients = ratings(battles, anchor="m0", bootstrap=30, seed=2, style=True,
                                  return_coefficients=True)
    assert table.columns == list(RATING_COLUMNS)
    assert coefficients.columns == list(COEFFICIENT_COLUMNS)
    assert "style:length+markdown_headers+markdown_lists+bold;length=words;" \
        "norm=chatbot_arena" in table["signature"][0]
    assert coefficients["signature"][0] == table["signature"][0]
    free = table.filter(pl.col("model") != "m0")
    assert ((free["ci_low"] <= free["rating"]) & (free["rating"] <= free["ci_high"])).all()
    assert (coefficients["stderr"] > 0).all()
    assert (coefficients["ci_low"] < coefficients["ci_high"]).all()
    # the counted words track the hidden token counts: length is what the judge favoured
    assert coefficients["coefficient"][0] > 0
    # the standardisation is reported: the mean and std of (a - b) / (a + b + 1)
    from evalframe.judge.style import style_counts, style_differences

    raw = style_differences(battles.select(style_counts(["length"])), ["length"],
                            "chatbot_arena")["length"].to_numpy()
    assert coefficients["feature_mean"][0] == pytest.approx(raw.mean(), abs=1e-12)
    assert coefficients["feature_std"][0] == pytest.approx(raw.std(), abs=1e-12)


def test_without_style_the_coefficients_table_is_empty_and_the_fit_unchanged():
    battles = styled_battles(n=300)
    plain = ratings(battles, bootstrap=0)
    table, coefficients = ratings(battles, bootstrap=0, return_coefficients=True)
    assert table.equals(plain)
    assert coefficients.height == 0 and coefficients.columns == list(COEFFICIENT_COLUMNS)


def test_style_mistakes_are_errors_naming_what_is_wrong():
    battles = styled_battles(n=200)
    with pytest.raises(EvalframeError, match="style feature 'italics' is not one of"):
        ratings(battles, style=["italics"], bootstrap=0)
    with pytest.raises(EvalframeError, match=r"the column\(s\) \['answer_a'\]"):
        ratings(battles.drop("answer_a"), style=True, bootstrap=0)
    # precomputed lengths need no text
    ratings(battles.drop("answer_a", "answer_b"), style=["length"], bootstrap=0,
            style_columns={"length": ("tokens_a", "tokens_b")})
    nulled = battles.with_columns(
        pl.when(pl.int_range(pl.len()) == 7).then(None).otherwise("answer_b").alias("answer_b")
    )
    with pytest.raises(EvalframeError, match=r"no usable the answer in 'answer_b'.*first: row 7"):
        ratings(nulled, style=True, bootstrap=0)
    # a null answer in a battle that is not rated (an error outcome) is no problem
    ratings(nulled.with_columns(
        pl.when(pl.int_range(pl.len()) == 7).then(pl.lit("error")).otherwise("outcome")
        .alias("outcome")), style=True, bootstrap=0)
    with pytest.raises(EvalframeError, match=r"\['bold'\] do not vary"):
        ratings(battles.with_columns(pl.col("answer_a", "answer_b").str.replace_all(r"\*", "")),
                style=["length", "bold"], bootstrap=0)
    with pytest.raises(EvalframeError, match="expected counts"):
        ratings(battles, style=["length"], style_columns={"length": ("answer_a", "answer_b")},
                bootstrap=0)
    with pytest.raises(EvalframeError, match="return_coefficients='yes'"):
        ratings(battles, bootstrap=0, return_coefficients="yes")


def test_a_feature_that_separates_the_outcomes_is_refused():
    # the longer answer always wins: its coefficient has no finite maximum-likelihood value
    rng = np.random.default_rng(0)
    n = 200
    length_a, length_b = rng.integers(1, 50, n), rng.integers(1, 50, n)
    length_b = np.where(length_a == length_b, length_b + 1, length_b)
    battles = pl.DataFrame({
        "model_a": np.where(np.arange(n) % 2 == 0, "x", "y"),
        "model_b": np.where(np.arange(n) % 2 == 0, "y", "x"),
        "outcome": np.where(length_a > length_b, "A", "B"),
        "len_a": length_a, "len_b": length_b,
    })
    with pytest.raises(EvalframeError, match="not identified|did not converge"):
        ratings(battles, style=["length"], style_columns={"length": ("len_a", "len_b")},
                bootstrap=0)


def test_ranks_in_the_ratings_table():
    battles = synthetic()
    point = ratings(battles, anchor="m0", bootstrap=0)
    assert point["rank"].to_list() == list(range(1, 8))  # sorted by rating, all distinct
    assert point["rank_low"].null_count() == 7 and point["tied_with"].null_count() == 7
    table = ratings(battles, anchor="m0", bootstrap=60, seed=1)
    assert (table["rank_low"] <= table["rank"]).all()
    assert (table["rank"] <= table["rank_high"]).all()
    tied = dict(zip(table["model"], table["tied_with"].to_list(), strict=True))
    for model, others in tied.items():  # being tied is mutual
        assert all(model in tied[other] for other in others)
    # the same intervals as rank_intervals on the bootstrap's own replicates
    from evalframe.judge.ratings import _bootstrap, _prepare
    from evalframe.stats.ranks import rank_intervals

    prepared, _ = _prepare(battles, "model_a", "model_b", "outcome", None, "sample_id")
    models = prepared.models
    order = [models.index(name) for name in table["model"]]
    rating = point.sort("model")["rating"].to_numpy()
    params = np.delete((rating - 1000) / 400, 0)  # anchor m0 is the reference (index 0)
    fits = _bootstrap(prepared, math.log(10), 0, params, 60, 1)
    replicates = 1000 + 400 * np.insert(fits, 0, 0.0, axis=1)
    found = rank_intervals(np.round(rating, 6), replicates, ci=0.95)
    assert table["rank_low"].to_list() == found.low[order].tolist()
    assert table["rank_high"].to_list() == found.high[order].tolist()


def test_equal_ratings_share_the_smallest_rank():
    battles = pl.DataFrame({
        "model_a": ["x", "y", "z", "x", "y", "z"],
        "model_b": ["y", "z", "x", "z", "x", "y"],
        "outcome": ["A", "A", "A", "B", "B", "B"],
    })
    table = ratings(battles, bootstrap=0)  # a perfect cycle: every rating 1000
    assert table["rank"].to_list() == [1, 1, 1]


def alpaca_eval_battles(shared_data, leave_out=()):
    from evalframe import judge, load

    folder = shared_data / "alpaca_eval"
    files = sorted(folder.glob("*/weighted_alpaca_eval_gpt4_turbo/annotations.json.gz"))
    if len(files) < 8:
        pytest.skip("the AlpacaEval 2.0 annotations are incomplete in ../shared/data")
    frames = [load(path) for path in files if path.parts[-3] not in leave_out]
    return judge.classify(pl.concat(frames, how="diagonal_relaxed"))


BASELINE = "gpt4_1106_preview"


@pytest.mark.slow
def test_real_data_adding_an_ordinary_model_leaves_the_others_within_their_intervals(
    shared_data,
):
    battles = alpaca_eval_battles(shared_data)
    without = ratings(battles.filter(pl.col("model") != "FuseChat-Llama-3.2-1B-Instruct"),
                      anchor=BASELINE, bootstrap=100, style=True)
    with_it = ratings(battles, anchor=BASELINE, bootstrap=100, style=True)
    joined = without.join(with_it.select("model", pl.col("rating").alias("after")), on="model")
    assert joined.height == 7
    inside = (pl.col("ci_low") <= pl.col("after")) & (pl.col("after") <= pl.col("ci_high"))
    assert joined.filter(~inside).height == 0, joined


def test_real_data_verbose_models_fall_and_the_null_model_rises_under_style_control(
    shared_data,
):
    battles = alpaca_eval_battles(shared_data)
    plain = ratings(battles, anchor=BASELINE, bootstrap=0)
    styled, coefficients = ratings(battles, anchor=BASELINE, bootstrap=0, style=True,
                                   return_coefficients=True)
    shift = dict(plain.join(styled, on="model").select(
        "model", pl.col("rating_right") - pl.col("rating")).rows())
    # the FuseChat models write long, heavily formatted answers (about 2,200 characters, 10
    # list items and 13 bold spans per answer, against the baseline's 2,050, 4 and 4):
    # they lose 164 and 198 points
    assert shift["FuseChat-Gemma-2-9B-Instruct"] < -150
    assert shift["FuseChat-Llama-3.2-1B-Instruct"] < -150
    # NullModel wins by a prompt injection with short answers (872 characters): with the
    # judge's taste for length taken out, its wins count for more
    assert shift["NullModel"] > 5
    # short, plain answers gain: text_davinci_001 (298 characters) and alpaca-7b
    assert shift["text_davinci_001"] > 100 and shift["alpaca-7b"] > 100
    length, _, _, bold = coefficients["coefficient"].to_list()
    assert length > 0.8 and bold > 0.15  # the judge favours the longer, bolder answer


@pytest.mark.slow
def test_real_data_the_null_model_moves_the_style_coefficients(shared_data):
    # NullModel wins (by a prompt injection) with no list and no bold span: adding it
    # weakens the markdown coefficients (bold 0.375 -> 0.232, lists 0.129 -> 0.021 logit per
    # sd), and the FuseChat models, the heaviest markdown users, rise by 40 and 51 points,
    # past their intervals: a model whose wins owe nothing to style shifts the style
    # coefficients every other model is corrected with
    battles = alpaca_eval_battles(shared_data)
    without, before = ratings(battles.filter(pl.col("model") != "NullModel"), anchor=BASELINE,
                              bootstrap=100, style=True, return_coefficients=True)
    with_it, after = ratings(battles, anchor=BASELINE, bootstrap=100, style=True,
                             return_coefficients=True)
    bold, lists = (after["coefficient"] - before["coefficient"]).to_list()[3:1:-1]
    assert bold < -0.1 and lists < -0.1
    joined = without.join(with_it.select("model", pl.col("rating").alias("after")), on="model")
    moved = joined.filter(pl.col("after") > pl.col("ci_high"))["model"].sort().to_list()
    assert moved == ["FuseChat-Gemma-2-9B-Instruct", "FuseChat-Llama-3.2-1B-Instruct"]
