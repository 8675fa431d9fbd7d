"""The statistics layer against its references, and the missing-answer policy by hand.

- clustered standard error: Inspect AI's ``stderr(cluster=...)`` (Inspect is not a
  dependency: its documented algorithm is written out below) and lm-eval's
  ``mean_stderr`` for independent rows;
- Wilson: statsmodels' ``proportion_confint(method="wilson")``; Student-t:
  ``scipy.stats.t.interval``; McNemar through ``ef.compare``: statsmodels'
  ``mcnemar(exact=True)`` (the p-value function itself is checked in test_compare.py);
- ``missing=``: wrong / exclude / error, ``n_missing`` and ``n_null``, the signature.

Floats agree to 1e-12 relative.
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from scipy import stats as st

import evalframe as ef
from evalframe import EvalframeError
from evalframe.stats.stderr import clustered_stderr

REL = 1e-12


def inspect_clustered_stderr(values: np.ndarray, clusters: np.ndarray) -> float:
    """Inspect AI's ``stderr(cluster=...)``, as its documentation and source describe it.

    (``inspect_ai/scorer/_metrics/std.py``, after Miller 2024, appendix A, with a finite
    cluster correction.) With ``mean`` the overall mean of the ``n`` scores: for each
    cluster, ``sum_i sum_j (x_i - mean)(x_j - mean)`` over the pairs of its scores (the
    outer product of its residuals, summed); the total over the ``C`` clusters, times
    ``C / (C - 1)``; the square root; divided by ``n``.
    """
    mean = float(np.mean(values))
    unique = np.unique(clusters)
    variance = 0.0
    for cluster in unique:
        residuals = values[clusters == cluster] - mean
        variance += float(np.outer(residuals, residuals).sum())
    return math.sqrt(variance * len(unique) / (len(unique) - 1)) / len(values)


def _clustered_data(seed: int, groups: int = 6) -> pl.DataFrame:
    """Random groups of clustered rows: uneven cluster sizes, 0/1 and continuous scores."""
    rng = np.random.default_rng(seed)
    frames = []
    for group in range(groups):
        n_clusters = int(rng.integers(2, 40))
        sizes = rng.integers(1, 9, n_clusters)
        question = np.repeat(np.arange(n_clusters), sizes)
        p = rng.beta(1.5, 1.0, n_clusters)[question]
        frames.append(pl.DataFrame({
            "group": group,
            "question": [f"q{group}-{q}" for q in question],
            "correct": (rng.random(question.size) < p).astype(np.float64),
            "score": np.clip(p + rng.normal(0, 0.2, question.size), 0, 1),
        }))
    return pl.concat(frames)


# --- clustered standard errors: Inspect ------------------------------------------------------


@pytest.mark.parametrize("seed", range(5))
def test_clustered_stderr_equals_inspect(seed):
    data = _clustered_data(seed)
    table = ef.aggregate(data, by="group", metrics=["correct", "score"], cluster="question")
    for (group, metric), row in zip(
        table.select("group", "metric").rows(), table.iter_rows(named=True), strict=True
    ):
        part = data.filter(pl.col("group") == group)
        values, clusters = part[metric].to_numpy(), part["question"].to_numpy()
        expected = inspect_clustered_stderr(values, clusters)
        assert clustered_stderr(values, clusters) == pytest.approx(expected, rel=REL)
        assert row["stderr"] == pytest.approx(expected, rel=REL), (group, metric)
        assert row["value"] == pytest.approx(values.mean(), rel=REL)
        assert row["n_clusters"] == np.unique(clusters).size
        assert "|stderr:clustered(question)|" in row["signature"]


def test_clustered_stderr_with_one_row_per_cluster_is_the_iid_one():
    # C/(C-1) makes the clustered SE of singleton clusters exactly std(ddof=1)/sqrt(n)
    rng = np.random.default_rng(1)
    values = rng.random(37)
    ids = np.arange(37)
    assert inspect_clustered_stderr(values, ids) == pytest.approx(
        np.std(values, ddof=1) / math.sqrt(37), rel=REL
    )
    assert clustered_stderr(values, ids) == pytest.approx(
        np.std(values, ddof=1) / math.sqrt(37), rel=REL
    )


def test_iid_stderr_equals_lm_eval_mean_stderr():
    metrics = pytest.importorskip("lm_eval.api.metrics")
    data = _clustered_data(7, groups=8)
    table = ef.aggregate(data, by="group", metrics=["correct", "score"])
    assert table["n_clusters"].to_list() == table["n"].to_list()
    for row in table.iter_rows(named=True):
        values = data.filter(pl.col("group") == row["group"])[row["metric"]].to_list()
        assert row["stderr"] == pytest.approx(metrics.mean_stderr(values), rel=REL)
        assert "|stderr:sem|" in row["signature"]


# --- intervals ---------------------------------------------------------------------------


def test_wilson_equals_statsmodels():
    proportion = pytest.importorskip("statsmodels.stats.proportion")
    rng = np.random.default_rng(2)
    # every count of successes from 0 to n, for several n (0 and n included)
    rows = []
    for n in (2, 3, 7, 20, 57, 200):
        for k in range(n + 1):
            rows.append(pl.DataFrame({
                "group": f"{n}-{k}", "correct": rng.permutation([1.0] * k + [0.0] * (n - k)),
            }))
    data = pl.concat(rows)
    for ci in (0.95, 0.9, 0.99):
        table = ef.aggregate(data, by="group", metrics=["correct"], ci=ci)
        assert table["signature"].str.contains(f"|ci:wilson-{ci:g}|", literal=True).all()
        successes = (table["value"] * table["n"]).round().cast(pl.Int64).to_numpy()
        low, high = proportion.proportion_confint(
            successes, table["n"].to_numpy(), alpha=1 - ci, method="wilson"
        )
        np.testing.assert_allclose(table["ci_low"].to_numpy(), low, rtol=REL, atol=1e-15)
        np.testing.assert_allclose(table["ci_high"].to_numpy(), high, rtol=REL, atol=1e-15)


def test_student_t_equals_scipy():
    rng = np.random.default_rng(3)
    sizes = [2, 3, 5, 11, 40, 300]
    data = pl.concat(
        pl.DataFrame({"group": n, "score": rng.normal(0.5, 2.0, n)}) for n in sizes
    )
    for ci in (0.95, 0.8):
        table = ef.aggregate(data, by="group", metrics=["score"], ci=ci)
        assert table["signature"].str.contains(f"|ci:t-{ci:g}|", literal=True).all()
        for row in table.iter_rows(named=True):
            values = data.filter(pl.col("group") == row["group"])["score"].to_numpy()
            low, high = st.t.interval(
                ci, df=values.size - 1, loc=values.mean(), scale=st.sem(values)
            )
            assert row["ci_low"] == pytest.approx(low, rel=REL)
            assert row["ci_high"] == pytest.approx(high, rel=REL)


def test_student_t_is_clipped_to_the_metric_bounds():
    # squad_f1 lies in [0, 1]: the t interval of (0.05, 0.1, 0.9) would reach below 0
    data = pl.DataFrame({"squad_f1": [0.05, 0.1, 0.9]})
    row = ef.aggregate(data).row(0, named=True)
    low, high = st.t.interval(0.95, df=2, loc=np.mean([0.05, 0.1, 0.9]),
                              scale=st.sem([0.05, 0.1, 0.9]))
    assert low < 0 and row["ci_low"] == 0.0
    assert row["ci_high"] == pytest.approx(min(high, 1.0), rel=REL)


def test_clustered_wilson_is_computed_on_the_effective_sample_size():
    proportion = pytest.importorskip("statsmodels.stats.proportion")
    data = _clustered_data(4)
    table = ef.aggregate(data, by="group", metrics=["correct"], cluster="question")
    for row in table.iter_rows(named=True):
        p, se = row["value"], row["stderr"]
        n_eff = p * (1 - p) / se**2
        # statsmodels with a fractional count: p * n_eff successes of n_eff
        low, high = proportion.proportion_confint(p * n_eff, n_eff, method="wilson")
        assert row["ci_low"] == pytest.approx(low, rel=1e-10)
        assert row["ci_high"] == pytest.approx(high, rel=1e-10)


# --- McNemar through compare ----------------------------------------------------------------


def test_compare_mcnemar_equals_statsmodels_exact():
    mcnemar = pytest.importorskip("statsmodels.stats.contingency_tables").mcnemar
    rng = np.random.default_rng(5)
    sims, n = 40, 60
    p = rng.beta(0.7, 0.7, (sims, n))
    new = (rng.random((sims, n)) < np.clip(p + 0.05, 0, 1)).astype(np.float64)
    old = (rng.random((sims, n)) < p).astype(np.float64)
    frame = pl.DataFrame({
        "sim": np.tile(np.repeat(np.arange(sims), n), 2),
        "sample_id": np.tile(np.arange(n), 2 * sims),
        "model": np.repeat(["new", "old"], sims * n),
        "correct": np.concatenate([new.ravel(), old.ravel()]),
    })
    table = ef.compare(frame, baseline="old", by="sim", metrics=["correct"])
    assert (table["method"] == "mcnemar").all()
    for row in table.iter_rows(named=True):
        x, y = new[row["sim"]], old[row["sim"]]
        contingency = [[int(((x == 1) & (y == 1)).sum()), int(((x == 1) & (y == 0)).sum())],
                       [int(((x == 0) & (y == 1)).sum()), int(((x == 0) & (y == 0)).sum())]]
        assert row["p_value"] == pytest.approx(
            mcnemar(contingency, exact=True).pvalue, rel=REL
        )


# --- the missing-answer policy, by hand ------------------------------------------------------

#: Rows 0-1 are answered (right, wrong); row 2 has no answer (a failed extraction: a
#: missing answer); row 3 has no gold (unscoreable); row 4 has neither (unscoreable: with
#: no gold there is nothing to be wrong about, so it is not a missing answer).
MISSING = pl.DataFrame({
    "task": ["t"] * 5 + ["u"] * 2,
    "prediction": ["a", "b", None, "a", None, "x", None],
    "gold": ["a", "a", "a", None, None, "x", "y"],
})


def _scored() -> pl.DataFrame:
    return ef.score(MISSING, ["exact_match"])


def _row(table: pl.DataFrame, task: str) -> dict:
    return table.filter(pl.col("task") == task).row(0, named=True)


def test_missing_wrong_counts_a_missing_answer_as_the_worst_score():
    table = ef.aggregate(_scored(), by="task")  # missing="wrong" is the default
    t = _row(table, "t")
    # scores 1, 0 and the missing answer as 0: 1/3 over n = 3; rows 3 and 4 unscoreable
    assert (t["n"], t["n_missing"], t["n_null"]) == (3, 1, 2)
    assert t["value"] == pytest.approx(1 / 3, rel=REL)
    assert t["stderr"] == pytest.approx(np.std([1, 0, 0], ddof=1) / math.sqrt(3), rel=REL)
    assert "|missing:wrong|" in t["signature"]
    u = _row(table, "u")  # 1 and the missing answer as 0
    assert (u["n"], u["n_missing"], u["n_null"], u["value"]) == (2, 1, 0, 0.5)


def test_missing_exclude_leaves_a_missing_answer_out_and_counts_it():
    table = ef.aggregate(_scored(), by="task", missing="exclude")
    t = _row(table, "t")
    assert (t["n"], t["n_missing"], t["n_null"], t["value"]) == (2, 1, 2, 0.5)
    assert "|missing:exclude|" in t["signature"]
    u = _row(table, "u")
    assert (u["n"], u["n_missing"], u["n_null"], u["value"]) == (1, 1, 0, 1.0)
    assert u["stderr"] is None  # one score: no spread to estimate


def test_missing_error_raises_naming_the_count_and_the_first_row():
    with pytest.raises(EvalframeError, match=r"2 row\(s\) have no answer .* first: row 2"):
        ef.aggregate(_scored(), by="task", missing="error")
    # without missing answers, missing="error" aggregates as the others do
    answered = _scored().filter(pl.col("prediction").is_not_null())
    assert ef.aggregate(answered, by="task", missing="error")["value"].to_list() == [0.5, 1.0]


def test_missing_answers_are_known_without_the_answer_column():
    # the prediction column dropped: the scored frame still records which rows were
    # missing answers (exact_match:missing), so the table does not change
    whole = ef.aggregate(_scored(), by="task")
    assert ef.aggregate(_scored().drop("prediction", "gold"), by="task").equals(whole)
    # with the record dropped too, a null score's meaning is unknown: refused by default,
    # and left out when the user says so
    bare = _scored().select("task", "exact_match")
    with pytest.raises(EvalframeError, match="'exact_match': 2 row\\(s\\) have a null score"):
        ef.aggregate(bare, by="task")
    t = _row(ef.aggregate(bare, by="task", missing="exclude"), "t")
    # the missing answer was scored 0.0 in the column itself: the value stays honest
    assert (t["n"], t["n_missing"], t["n_null"], t["value"]) == (3, None, 2, 1 / 3)
    assert "|missing:unknown|" in t["signature"]


def test_missing_answers_follow_the_role_mapping_given_to_score_only():
    renamed = MISSING.rename({"prediction": "pred", "gold": "answer"})
    columns = {"prediction": "pred", "gold": "answer"}
    scored = ef.score(renamed, ["exact_match"], columns=columns)
    t = _row(ef.aggregate(scored, by="task"), "t")
    assert (t["n"], t["n_missing"], t["n_null"]) == (3, 1, 2)
    assert ef.aggregate(scored, by="task", columns=columns).equals(
        ef.aggregate(scored, by="task")
    )
    assert ef.aggregate(scored, by="task").equals(ef.aggregate(_scored(), by="task"))


def test_corpus_metrics_leave_missing_answers_out_under_any_policy():
    scored = ef.score(MISSING, ["f1(average=macro)"])
    for policy in ("wrong", "exclude"):
        t = _row(ef.aggregate(scored, by="task", missing=policy), "t")
        assert (t["n"], t["n_missing"], t["n_null"]) == (2, 1, 2)
        assert "|missing:exclude|" in t["signature"]
    with pytest.raises(EvalframeError, match="have no answer with missing='error'"):
        ef.aggregate(scored, by="task", missing="error")


def test_missing_policy_is_validated():
    with pytest.raises(EvalframeError, match="missing='skip' is invalid"):
        ef.aggregate(_scored(), by="task", missing="skip")


# --- signatures ------------------------------------------------------------------------------


def test_the_cluster_bootstrap_signature_names_its_replicates_and_seed():
    # the clustered bootstrap's numbers depend on B and the seed as the row bootstrap's do
    rng = np.random.default_rng(6)
    gold = rng.integers(0, 3, 200)
    pred = np.where(rng.random(200) < 0.7, gold, (gold + 1) % 3)
    frame = pl.DataFrame({"sample_id": np.repeat(np.arange(50), 4),
                          "prediction": pred.astype(str), "gold": gold.astype(str)})
    scored = ef.score(frame, ["f1(average=macro)"])
    default = ef.aggregate(scored).row(0, named=True)
    other = ef.aggregate(scored, bootstrap=200, seed=5).row(0, named=True)
    assert default["stderr"] != other["stderr"]
    assert "|stderr:bootstrap(sample_id)|B:1000|seed:0|ci:percentile-0.95|" in default["signature"]
    assert "|stderr:bootstrap(sample_id)|B:200|seed:5|" in other["signature"]
    assert default["signature"] != other["signature"]
