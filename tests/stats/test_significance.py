"""sacrebleu's paired tests over statistics: the same draws, the same p-values as sacrebleu."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest

import evalframe as ef
from evalframe import EvalframeError
from evalframe.stats.significance import paired_ar, paired_bootstrap

sacrebleu = pytest.importorskip("sacrebleu", reason="sacrebleu is not installed")
significance = pytest.importorskip("sacrebleu.significance", reason="sacrebleu is not installed")

WORDS = ["the", "cat", "sat", "on", "a", "mat", "dog", "ran", "Zürich", "naïve", ",", "."]


def systems(n: int, seed: int = 3) -> tuple[list[str], list[str], list[str]]:
    rng = np.random.default_rng(seed)

    def sentence() -> str:
        return " ".join(WORDS[i] for i in rng.integers(0, len(WORDS), rng.integers(3, 12)))

    refs = [sentence() for _ in range(n)]
    base = [ref if rng.random() < 0.3 else sentence() for ref in refs]
    new = [ref if rng.random() < 0.45 else sentence() for ref in refs]
    return refs, base, new


def sacrebleu_results(refs, base, new, test: str, n_samples: int):
    metric = sacrebleu.metrics.BLEU()
    metric._check_corpus_score_args = lambda *a, **k: None
    paired = significance.PairedTest(
        [("base", base), ("new", new)], {"BLEU": metric}, [refs], test_type=test,
        n_samples=n_samples,
    )
    _, scores = paired()
    return scores["BLEU"]


def scored_frame(refs, base, new) -> pl.DataFrame:
    n = len(refs)
    frame = pl.DataFrame({
        "model": ["base"] * n + ["new"] * n,
        "sample_id": list(range(n)) * 2,
        "prediction": base + new,
        "gold": refs * 2,
    })
    return ef.score(frame, ["bleu"])


@pytest.mark.parametrize(("test", "n_samples"), [("bs", 1000), ("ar", 2000)])
def test_p_values_equal_sacrebleus(test, n_samples):
    refs, base, new = systems(300)
    expected = sacrebleu_results(refs, base, new, test, n_samples)
    scored = scored_frame(refs, base, new)
    run = paired_bootstrap if test == "bs" else paired_ar
    table = run(scored, "bleu", baseline="base", n_samples=n_samples)
    base_row, new_row = table.rows(named=True)
    assert base_row["score"] == pytest.approx(expected[0].score, abs=1e-9)
    assert new_row["score"] == pytest.approx(expected[1].score, abs=1e-9)
    assert new_row["p_value"] == expected[1].p_value
    if test == "bs":
        for row, result in ((base_row, expected[0]), (new_row, expected[1])):
            assert row["mean"] == pytest.approx(result.mean, rel=1e-6)
            assert row["ci"] == pytest.approx(result.ci, rel=1e-5, abs=1e-6)


def test_a_sample_metric_and_the_draws():
    # hand check of the bootstrap rule on a sample metric: the draws are sacrebleu's
    rows = pl.DataFrame({
        "model": ["a"] * 5 + ["b"] * 5, "sample_id": list(range(5)) * 2,
        "em": [1.0, 0.0, 0.0, 1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 1.0],
    })
    table = paired_bootstrap(rows, "em", baseline="a", n_samples=50, seed=7)
    index = np.random.default_rng(7).choice(5, size=(50, 5), replace=True)
    a = np.array([1.0, 0.0, 0.0, 1.0, 0.0])[index].mean(1)
    b = np.array([1.0, 1.0, 0.0, 1.0, 1.0])[index].mean(1)
    stat = np.abs(b - a)
    expected = (np.count_nonzero(stat - stat.mean() > 0.4) + 1) / 51
    assert table["p_value"].to_list()[1] == pytest.approx(expected)
    assert table["mean"].to_list()[0] == pytest.approx(a.mean())


def test_errors_name_the_problem():
    rows = pl.DataFrame({
        "model": ["a", "a", "b"], "sample_id": [0, 1, 0], "em": [1.0, 0.0, 1.0],
    })
    with pytest.raises(EvalframeError, match="not scored on the same items"):
        paired_bootstrap(rows, "em", baseline="a")
    with pytest.raises(EvalframeError, match="baseline 'z' is not a value"):
        paired_bootstrap(rows, "em", baseline="z")
    nulls = rows.with_columns(pl.Series("em", [1.0, None, 1.0]))
    with pytest.raises(EvalframeError, match="1 row\\(s\\) of 'em' are null"):
        paired_ar(nulls, "em", baseline="a")
    with pytest.raises(EvalframeError, match="n_samples=1 must be"):
        paired_ar(rows, "em", baseline="a", n_samples=1)


@pytest.mark.slow
def test_the_centred_rule_keeps_the_type_i_error_and_sacrebleus_does_not():
    """400 simulated comparisons of equal systems (200 items of 0/1 scores, difficulty
    p ~ Beta(2, 2) shared by both): a valid test rejects 5% at 0.05, give or take the
    Monte-Carlo error 3 * sqrt(0.05 * 0.95 / 400) = 3.3%. sacrebleu's rule centres the
    absolute differences and rejects about 12% (the documented reason for ``rule=``)."""
    rng = np.random.default_rng(5)
    replicates, n = 400, 200
    rejected = {"sacrebleu": 0, "centred": 0}
    for replicate in range(replicates):
        p = rng.beta(2, 2, n)
        a, b = (rng.random(n) < p).astype(float), (rng.random(n) < p).astype(float)
        frame = pl.DataFrame({
            "model": ["a"] * n + ["b"] * n, "sample_id": list(range(n)) * 2,
            "correct": np.concatenate([a, b]),
        })
        for rule in rejected:
            table = ef.paired_bootstrap(frame, "correct", baseline="b", rule=rule,
                                        seed=replicate)
            rejected[rule] += table["p_value"][1] < 0.05
    error = 3 * math.sqrt(0.05 * 0.95 / replicates)
    assert abs(rejected["centred"] / replicates - 0.05) <= error, rejected
    assert rejected["sacrebleu"] / replicates > 0.05 + error, rejected
    assert table["test"].to_list() == ["paired_bootstrap(centred)"] * 2
    with pytest.raises(EvalframeError, match="rule='shifted' is invalid"):
        ef.paired_bootstrap(frame, "correct", baseline="b", rule="shifted")
