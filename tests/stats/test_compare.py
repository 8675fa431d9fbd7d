"""compare(): paired differences, McNemar, paired bootstrap, randomisation, corrections."""

from __future__ import annotations

import itertools
import math

import numpy as np
import polars as pl
import pytest
from scipy import stats as st

import evalframe as ef
from evalframe import EvalframeError
from evalframe.stats.compare import (
    adjust_p_values,
    bootstrap_p_value,
    mcnemar_exact,
    randomization_p_value,
)
from evalframe.stats.stderr import clustered_stderr, mean_stderr


def _long(scores: dict[str, list], column: str = "score", **extra: list) -> pl.DataFrame:
    """One row per model and item: ``sample_id`` 0..n-1 for every model."""
    frames = []
    for name, values in scores.items():
        frames.append(
            pl.DataFrame(
                {"model": [name] * len(values), "sample_id": list(range(len(values))),
                 column: pl.Series(values, dtype=pl.Float64), **extra}
            )
        )
    return pl.concat(frames)


def test_paired_t_hand_computed():
    # x = 1, .5, .75, .25 and y = .5, .5, .25, .25: d = .5, 0, .5, 0, mean .25;
    # squared deviations 4 x .0625 = .25 -> var .25 / 3 = 1/12 -> se = sqrt(1/12) / 2 = sqrt(1/48)
    frame = _long({"base": [0.5, 0.5, 0.25, 0.25], "new": [1.0, 0.5, 0.75, 0.25]})
    row = ef.compare(frame, baseline="base", metrics=["score"]).row(0, named=True)
    assert row["method"] == "paired"  # not 0/1 scores
    assert (row["model"], row["baseline"], row["metric"]) == ("new", "base", "score")
    assert (row["n_pairs"], row["n_null_pairs"]) == (4, 0)
    assert row["value_model"] == 0.625 and row["value_baseline"] == 0.375
    assert row["diff"] == 0.25
    se = math.sqrt(1 / 48)
    assert row["stderr"] == pytest.approx(se, rel=1e-15)
    assert row["stderr"] == pytest.approx(mean_stderr(np.array([0.5, 0, 0.5, 0])), rel=1e-15)
    # Student t, 3 degrees of freedom: t = .25 / sqrt(1/48) = sqrt(3)
    t975 = 3.182446305284263  # scipy.stats.t.ppf(0.975, 3)
    assert row["ci_low"] == pytest.approx(0.25 - t975 * se, rel=1e-12)
    assert row["ci_high"] == pytest.approx(0.25 + t975 * se, rel=1e-12)
    assert row["p_value"] == pytest.approx(2 * st.t.sf(math.sqrt(3), 3), rel=1e-12)
    assert row["p_value"] == pytest.approx(
        st.ttest_rel([1.0, 0.5, 0.75, 0.25], [0.5, 0.5, 0.25, 0.25]).pvalue, rel=1e-12
    )
    # deviations x: .375 -.125 .125 -.375, y: .125 .125 -.125 -.125 ->
    # r = .0625 / sqrt(.3125 * .0625) = 1 / sqrt(5)
    assert row["correlation"] == pytest.approx(1 / math.sqrt(5), rel=1e-12)
    sig = row["signature"]
    assert sig.startswith(
        "metric:column:score|reduce:mean|missing:unknown|method:paired|stderr:sem|ci:t-0.95|"
    )
    assert "|on:sample_id|correction:none|version:" in sig and "B:" not in sig


def test_mcnemar_exact_matches_scipy_and_statsmodels():
    mcnemar = pytest.importorskip("statsmodels.stats.contingency_tables").mcnemar

    for b, c in [(0, 0), (1, 0), (3, 0), (5, 5), (7, 2), (2, 13), (40, 25), (0, 60)]:
        ours = float(mcnemar_exact(np.array([b]), np.array([c]))[0])
        table = [[10, b], [c, 10]]
        assert ours == pytest.approx(mcnemar(table, exact=True).pvalue, rel=1e-12)
        if b + c:
            assert ours == pytest.approx(st.binomtest(b, b + c, 0.5).pvalue, rel=1e-12)
        else:
            assert ours == 1.0


def test_mcnemar_in_compare_counts_the_discordant_pairs():
    rng = np.random.default_rng(3)
    x = (rng.random(60) < 0.7).astype(float)
    y = (rng.random(60) < 0.5).astype(float)
    frame = _long({"base": y.tolist(), "new": x.tolist()})
    row = ef.compare(frame, baseline="base", metrics=["score"]).row(0, named=True)
    b = int(((x == 1) & (y == 0)).sum())
    c = int(((x == 0) & (y == 1)).sum())
    assert row["method"] == "mcnemar"
    assert row["p_value"] == pytest.approx(st.binomtest(b, b + c, 0.5).pvalue, rel=1e-12)
    # the interval stays the paired-difference one
    paired = ef.compare(frame, baseline="base", metrics=["score"], method="paired").row(
        0, named=True
    )
    assert (row["stderr"], row["ci_low"]) == (paired["stderr"], paired["ci_low"])
    assert paired["p_value"] == pytest.approx(st.ttest_rel(x, y).pvalue, rel=1e-10)
    # a Boolean column is 0/1 too
    boolean = frame.with_columns(pl.col("score").cast(pl.Boolean))
    again = ef.compare(boolean, baseline="base", metrics=["score"]).row(0, named=True)
    assert again["method"] == "mcnemar" and again["p_value"] == row["p_value"]


def test_unmatched_and_null_items_are_counted():
    # base has items 0..4, new has items 1..5; item 2 is null for base, item 3 for new
    frame = pl.DataFrame(
        {
            "model": ["base"] * 5 + ["new"] * 5,
            "sample_id": [0, 1, 2, 3, 4, 1, 2, 3, 4, 5],
            "score": [1.0, 0.0, None, 1.0, 0.5, 1.0, 0.5, None, 1.0, 0.0],
        }
    )
    # nothing says whether the nulls are missing answers: refused unless left out knowingly
    with pytest.raises(EvalframeError, match="'score': 2 row\\(s\\) have a null score"):
        ef.compare(frame, baseline="base", metrics=["score"])
    row = ef.compare(frame, baseline="base", metrics=["score"], missing="exclude").row(
        0, named=True
    )
    # matched: 1, 2, 3, 4; null on a side: 2 and 3; pairs: 1 (1 vs 0) and 4 (1 vs .5)
    assert (row["n_pairs"], row["n_null_pairs"]) == (2, 2)
    assert (row["n_unmatched_model"], row["n_unmatched_baseline"]) == (1, 1)
    assert (row["value_model"], row["value_baseline"], row["diff"]) == (1.0, 0.25, 0.75)


def test_groups_present_for_one_side_only_are_reported():
    frame = pl.DataFrame(
        {
            "model": ["base", "base", "base", "new", "new", "other"],
            "task": ["t", "t", "u", "t", "t", "v"],
            "sample_id": [0, 1, 0, 0, 1, 0],
            "score": [1.0, 0.0, 1.0, 1.0, 1.0, 0.0],
        }
    )
    table = ef.compare(frame, baseline="base", by="task", metrics=["score"])
    rows = {(r["task"], r["model"]): r for r in table.iter_rows(named=True)}
    assert table.columns[:2] == ["task", "model"]
    assert set(rows) == {("t", "new"), ("u", "new"), ("t", "other"), ("u", "other"),
                         ("v", "other")}
    assert rows[("t", "new")]["n_pairs"] == 2
    u = rows[("u", "new")]
    assert (u["n_pairs"], u["n_unmatched_baseline"], u["diff"], u["p_value"]) == (0, 1, None, None)
    v = rows[("v", "other")]
    assert (v["n_pairs"], v["n_unmatched_model"], v["n_unmatched_baseline"]) == (0, 1, 0)
    # sorted by the keys, then the models in order of appearance
    assert table.select("task", "model").rows() == [
        ("t", "new"), ("t", "other"), ("u", "new"), ("u", "other"), ("v", "other")
    ]


def test_pairing_on_several_keys_and_lazy_input():
    frame = pl.DataFrame(
        {
            "model": ["a"] * 4 + ["b"] * 4,
            "doc": [0, 0, 1, 1] * 2,
            "question": [0, 1, 0, 1] * 2,
            "score": [1.0, 0.0, 1.0, 1.0, 0.0, 0.0, 1.0, 0.0],
        }
    )
    eager = ef.compare(frame, baseline="a", on=["doc", "question"], metrics=["score"])
    row = eager.row(0, named=True)
    assert (row["model"], row["n_pairs"], row["diff"]) == ("b", 4, -0.5)
    lazy = ef.compare(frame.lazy(), baseline="a", on=["doc", "question"], metrics=["score"])
    assert lazy.equals(eager)
    # the item key may repeat a by key: then it pairs on the group keys alone
    by_doc = ef.compare(frame, baseline="a", by=["doc", "question"], on="question",
                        metrics=["score"])
    assert by_doc["n_pairs"].to_list() == [1, 1, 1, 1]


def test_clustered_stderr_and_degrees_of_freedom():
    rng = np.random.default_rng(5)
    n = 30
    clusters = np.repeat(np.arange(10), 3)
    x = rng.random(n)
    y = x * 0.5 + rng.random(n) * 0.5
    frame = _long({"base": y.tolist(), "new": x.tolist()}, q=clusters.tolist())
    row = ef.compare(frame, baseline="base", metrics=["score"], cluster="q").row(0, named=True)
    d = x - y
    se = clustered_stderr(d, clusters)
    assert row["stderr"] == pytest.approx(se, rel=1e-12)
    t = st.t.ppf(0.975, 9)  # 10 clusters: 9 degrees of freedom
    assert row["ci_high"] == pytest.approx(d.mean() + t * se, rel=1e-12)
    assert row["p_value"] == pytest.approx(2 * st.t.sf(abs(d.mean()) / se, 9), rel=1e-10)
    assert "|stderr:clustered|cluster:q|" in row["signature"]
    # the cluster must be the same on both sides of a pair
    broken = frame.with_columns(
        pl.when((pl.col("model") == "new") & (pl.col("sample_id") == 4))
        .then(99).otherwise(pl.col("q")).alias("q")
    )
    with pytest.raises(EvalframeError, match="cluster column 'q' differs .*sample_id=4"):
        ef.compare(broken, baseline="base", metrics=["score"], cluster="q")


@pytest.mark.slow
def test_holm_and_bh_match_statsmodels():
    multipletests = pytest.importorskip("statsmodels.stats.multitest").multipletests

    rng = np.random.default_rng(11)
    p = np.concatenate([rng.random(17) ** 3, [0.01, 0.01, 0.5, 1.0]])
    for ours, theirs in (("holm", "holm"), ("bh", "fdr_bh")):
        expected = multipletests(p, method=theirs)[1]
        np.testing.assert_allclose(adjust_p_values(p, ours), expected, rtol=1e-12)
    # by hand: p = .01, .04, .03 -> Holm: .03, max(.03, 2 * .03) = .06, max(.06, .04) = .06
    np.testing.assert_allclose(
        adjust_p_values(np.array([0.01, 0.04, 0.03, np.nan]), "holm"), [0.03, 0.06, 0.06, np.nan]
    )
    # BH: sorted .01 .03 .04 -> 3 * .01, 3/2 * .03 = .045, .04 -> running min from the top
    np.testing.assert_allclose(adjust_p_values(np.array([0.01, 0.04, 0.03]), "bh"),
                               [0.03, 0.04, 0.04])


@pytest.mark.slow
def test_correction_is_per_metric_over_every_group_and_model():
    multipletests = pytest.importorskip("statsmodels.stats.multitest").multipletests

    rng = np.random.default_rng(2)
    rows = []
    for task, name in itertools.product("tuvw", ["base", "m1", "m2"]):
        shift = {"base": 0.0, "m1": 0.1, "m2": 0.2}[name]
        rows.append(pl.DataFrame({
            "task": task, "model": name, "sample_id": np.arange(40),
            "a": rng.random(40) + shift, "b": rng.random(40),
        }))
    frame = pl.concat(rows)
    table = ef.compare(frame, baseline="base", by="task", metrics=["a", "b"], correction="holm")
    assert table.columns.index("p_adjusted") == table.columns.index("p_value") + 1
    for metric in ("a", "b"):
        part = table.filter(pl.col("metric") == metric)
        assert part.height == 8
        expected = multipletests(part["p_value"].to_numpy(), method="holm")[1]
        np.testing.assert_allclose(part["p_adjusted"].to_numpy(), expected, rtol=1e-12)
    assert table["signature"].str.contains("correction:holm").all()
    bh = ef.compare(frame, baseline="base", by="task", metrics=["a"], correction="bh")
    np.testing.assert_allclose(
        bh["p_adjusted"].to_numpy(), multipletests(bh["p_value"].to_numpy(), method="fdr_bh")[1],
        rtol=1e-12,
    )


def _labels(seed: int, n: int = 120) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    gold = rng.integers(0, 3, n)
    hard = rng.random(n) < 0.3  # items both models tend to get wrong
    out = []
    for name, skill in (("base", 0.6), ("new", 0.75)):
        right = rng.random(n) < np.where(hard, skill - 0.4, skill)
        prediction = np.where(right, gold, (gold + rng.integers(1, 3, n)) % 3)
        out.append(pl.DataFrame({
            "model": name, "sample_id": np.arange(n), "task": np.where(np.arange(n) < 60, "x", "y"),
            "prediction": prediction.astype(str), "gold": gold.astype(str),
            "loglikelihood": rng.normal(-12 if name == "new" else -13, 3, n),
            "n_words": rng.integers(1, 8, n),
        }))
    return ef.score(pl.concat(out), ["f1(average=macro)", "mcc", "word_perplexity"])


def test_corpus_paired_bootstrap_is_seeded_and_reduces_like_aggregate():
    scored = _labels(0)
    table = ef.compare(scored, baseline="base", by="task")
    assert table["metric"].to_list() == ["f1(average=macro)", "mcc", "word_perplexity"] * 2
    assert set(table["method"]) == {"bootstrap"}
    assert table["correlation"].null_count() == table.height
    # the values are the metric's own reduce of each side's pairs (every item is paired here)
    agg = ef.aggregate(scored, by=["task", "model"])
    for row in table.iter_rows(named=True):
        for side, name in (("value_model", "new"), ("value_baseline", "base")):
            expected = agg.filter(
                (pl.col("task") == row["task"]) & (pl.col("model") == name)
                & (pl.col("metric") == row["metric"])
            )["value"].item()
            assert row[side] == expected
        assert row["ci_low"] < row["diff"] < row["ci_high"] and row["stderr"] > 0
        assert 0 < row["p_value"] <= 1
    assert ef.compare(scored, baseline="base", by="task").equals(table)
    other = ef.compare(scored, baseline="base", by="task", seed=1)
    assert other["diff"].equals(table["diff"]) and not other["stderr"].equals(table["stderr"])
    sig = table["signature"][1]
    assert sig.startswith(
        "metric:mcc|opts:-|reduce:matthews_corrcoef|missing:exclude|method:bootstrap|"
    )
    assert "|stderr:bootstrap|B:1000|seed:0|ci:percentile-0.95|" in sig


def test_corpus_identical_models_differ_by_zero_with_p_value_one():
    scored = _labels(1)
    base = scored.filter(pl.col("model") == "base")
    same = pl.concat([base, base.with_columns(model=pl.lit("copy"))])
    for method in ("bootstrap", "randomization"):
        table = ef.compare(same, baseline="base", by="task", method=method)
        assert (table["diff"] == 0).all() and (table["stderr"] == 0).all()
        assert (table["p_value"] == 1).all(), method
        assert (table["ci_low"] == 0).all() and (table["ci_high"] == 0).all()


def test_sums_paired_bootstrap_by_hand():
    """The replicates are the reduction of both sides' sums under one set of row weights."""
    scored = _labels(2, n=30)
    row = ef.compare(scored, baseline="base", metrics=["word_perplexity"], bootstrap=300,
                     seed=4).row(0, named=True)
    stats = {
        name: scored.filter(pl.col("model") == name)["word_perplexity"].struct.unnest()
        for name in ("new", "base")
    }
    m = np.column_stack([stats["new"][f].cast(pl.Float64).to_numpy()
                         for f in ("loglikelihood", "n_words")])
    b = np.column_stack([stats["base"][f].cast(pl.Float64).to_numpy()
                         for f in ("loglikelihood", "n_words")])
    rng = np.random.default_rng(4)  # the draws of bootstrap_sums: n indices per replicate
    weights = np.stack([np.bincount(rng.integers(0, 30, size=30), minlength=30)
                        for _ in range(300)])
    ppl = lambda s: np.exp(-s[:, 0] / s[:, 1])  # noqa: E731
    replicates = ppl(weights @ m) - ppl(weights @ b)
    assert row["stderr"] == pytest.approx(np.std(replicates, ddof=1), rel=1e-12)
    low, high = np.quantile(replicates, [0.025, 0.975])
    assert (row["ci_low"], row["ci_high"]) == (pytest.approx(low, rel=1e-12),
                                               pytest.approx(high, rel=1e-12))
    assert row["p_value"] == bootstrap_p_value(replicates)
    assert row["diff"] == pytest.approx(ppl(m.sum(0)[None])[0] - ppl(b.sum(0)[None])[0],
                                        rel=1e-12)


@pytest.mark.slow
def test_table_paired_bootstrap_agrees_with_a_row_resampling_bootstrap():
    """The joint-cell multinomial is a row resampling: same spread as resampling rows."""
    from sklearn.metrics import f1_score

    scored = _labels(3, n=200)
    row = ef.compare(scored, baseline="base", metrics=["f1(average=macro)"],
                     bootstrap=2000).row(0, named=True)
    new = scored.filter(pl.col("model") == "new")
    base = scored.filter(pl.col("model") == "base")
    gold = new["gold"].to_numpy()
    pn, pb = new["prediction"].to_numpy(), base["prediction"].to_numpy()
    assert row["diff"] == f1_score(gold, pn, average="macro") - f1_score(gold, pb, average="macro")
    rng = np.random.default_rng(123)
    draws = rng.integers(0, 200, size=(400, 200))
    brute = [f1_score(gold[i], pn[i], average="macro") - f1_score(gold[i], pb[i], average="macro")
             for i in draws]
    assert row["stderr"] == pytest.approx(np.std(brute, ddof=1), rel=0.12)


def test_randomization_p_value_matches_exact_enumeration():
    # 10 pairs: all 2**10 swap patterns give the exact permutation p-value
    x = np.array([1.0, 0.9, 0.8, 0.8, 0.7, 0.6, 0.6, 0.4, 0.3, 0.9])
    y = np.array([0.6, 0.7, 0.9, 0.5, 0.4, 0.6, 0.2, 0.5, 0.1, 0.3])
    d = x - y
    signs = np.array(list(itertools.product([1, -1], repeat=10)))
    exact = np.mean(np.abs(signs @ d) >= abs(d.sum()) - 1e-12)
    frame = _long({"base": y.tolist(), "new": x.tolist()})
    row = ef.compare(frame, baseline="base", metrics=["score"], method="randomization",
                     bootstrap=20000).row(0, named=True)
    assert row["p_value"] == pytest.approx(exact, abs=0.006)  # 4 sd of 20,000 trials
    # the interval of a sample metric stays the paired-t one
    paired = ef.compare(frame, baseline="base", metrics=["score"], method="paired").row(
        0, named=True
    )
    assert (row["stderr"], row["ci_low"], row["ci_high"]) == (
        paired["stderr"], paired["ci_low"], paired["ci_high"]
    )
    assert "|method:randomization|stderr:sem|B:20000|seed:0|ci:t-0.95|" in row["signature"]


@pytest.mark.slow
def test_table_randomization_agrees_with_swapping_each_pair():
    from sklearn.metrics import matthews_corrcoef

    scored = _labels(4, n=80)
    row = ef.compare(scored, baseline="base", metrics=["mcc"], method="randomization",
                     bootstrap=4000).row(0, named=True)
    new = scored.filter(pl.col("model") == "new")
    base = scored.filter(pl.col("model") == "base")
    gold = new["gold"].to_numpy()
    pn, pb = new["prediction"].to_numpy(), base["prediction"].to_numpy()
    observed = matthews_corrcoef(gold, pn) - matthews_corrcoef(gold, pb)
    assert row["diff"] == pytest.approx(observed, rel=1e-12)
    rng = np.random.default_rng(9)
    trials = []
    for swap in rng.integers(2, size=(1000, 80), dtype=bool):
        a, b = np.where(swap, pb, pn), np.where(swap, pn, pb)
        trials.append(matthews_corrcoef(gold, a) - matthews_corrcoef(gold, b))
    brute = randomization_p_value(np.array(trials), observed)
    assert row["p_value"] == pytest.approx(brute, abs=0.05)


def test_p_value_helpers_by_hand():
    # 2 * min(1 + 1, 1 + 3) / (4 + 1)
    assert bootstrap_p_value(np.array([0.1, 0.2, -0.1, 0.3])) == 0.8
    assert bootstrap_p_value(np.full(999, 0.5)) == 2 / 1000  # never 0
    # |trials| >= .5: two of four -> (1 + 2) / 5
    assert randomization_p_value(np.array([0.5, -0.2, 0.1, -0.5]), 0.5) == 0.6


def test_single_pair_has_no_stderr():
    frame = _long({"base": [0.2], "new": [0.7]})
    row = ef.compare(frame, baseline="base", metrics=["score"]).row(0, named=True)
    assert row["n_pairs"] == 1 and row["diff"] == pytest.approx(0.5)
    assert (row["stderr"], row["ci_low"], row["p_value"], row["correlation"]) == (
        None, None, None, None
    )


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"baseline": "nope"}, r"baseline='nope' is not a value .*present: \['base', 'new'\]"),
        ({"baseline": "base", "on": "item"}, "no column 'item'"),
        ({"baseline": "base", "model": "system"}, "no column 'system'"),
        ({"baseline": "base", "by": "nope"}, "no column 'nope'"),
        ({"baseline": "base", "on": "model"}, "cannot also be a by or on key"),
        ({"baseline": "base", "ci": 1.5}, "strictly between"),
        ({"baseline": "base", "ci": 0}, "strictly between"),
        ({"baseline": "base", "method": "t"}, "method='t' is unknown"),
        ({"baseline": "base", "correction": "bonferroni"}, "correction='bonferroni'"),
        ({"baseline": "base", "bootstrap": 1}, "bootstrap=1"),
        ({"baseline": "base", "seed": -1}, "seed=-1"),
        ({"baseline": "base", "cluster": "nope"}, "no column 'nope'"),
        ({"baseline": "base", "metrics": ["nope"]}, "not found"),
        ({"baseline": "base", "method": "mcnemar"}, "needs 0/1 scores; .* value 0.5"),
        ({"baseline": "base", "by": "metric"}, "comparison table has column"),
    ],
)
def test_errors(kwargs, message):
    frame = _long({"base": [0.5, 1.0], "new": [1.0, 0.0]}, column="squad_f1",
                  metric=["m", "m"])
    with pytest.raises(EvalframeError, match=message):
        ef.compare(frame, **kwargs)


def test_more_errors():
    only = _long({"base": [1.0, 0.0]}, column="squad_em")
    with pytest.raises(EvalframeError, match="only the baseline 'base'"):
        ef.compare(only, baseline="base")
    repeated = pl.concat([_long({"base": [1.0, 0.0], "new": [1.0, 1.0]}, column="squad_em"),
                          _long({"new": [0.0]}, column="squad_em")])
    with pytest.raises(EvalframeError, match=r"model 'new' has 2 rows for the item \(sample_id=0"):
        ef.compare(repeated, baseline="base")
    nulls = _long({"base": [1.0], "new": [1.0]}, column="squad_em").with_columns(
        model=pl.Series(["base", None])
    )
    with pytest.raises(EvalframeError, match="null value"):
        ef.compare(nulls, baseline="base")
    with pytest.raises(EvalframeError, match="no metric columns"):
        ef.compare(only.select("model", "sample_id"), baseline="base")
    corpus = _labels(5, n=10)
    with pytest.raises(EvalframeError, match="'mcc' is a corpus metric .* method='paired'"):
        ef.compare(corpus, baseline="base", metrics=["mcc"], method="paired")


def _accuracy(rng: np.random.Generator, sims: int, n: int, shift: float) -> pl.DataFrame:
    """``sims`` evaluations of ``n`` items: both models see the same easy and hard items.

    Item difficulty p ~ Beta(0.4, 0.4) (many near-certain and near-hopeless items);
    the baseline is right with probability p, the new model with logit(p) + shift.
    """
    p = rng.beta(0.4, 0.4, size=(sims, n))
    q = 1 / (1 + np.exp(-(np.log(p / (1 - p)) + shift)))
    x = (rng.random((sims, n)) < q).astype(np.float64)
    y = (rng.random((sims, n)) < p).astype(np.float64)
    sim = np.tile(np.repeat(np.arange(sims), n), 2)
    item = np.tile(np.arange(n), 2 * sims)
    return pl.DataFrame({
        "sim": sim, "sample_id": item, "model": np.repeat(["new", "old"], sims * n),
        "acc": np.concatenate([x.ravel(), y.ravel()]),
    })


def _rejections(frame: pl.DataFrame) -> dict[str, float]:
    out = {}
    for method in ("paired", "mcnemar"):
        table = ef.compare(frame, baseline="old", by="sim", metrics=["acc"], method=method)
        out[method] = float((table["p_value"] < 0.05).mean())
    # unpaired: a two-sample z-test from each model's own mean and standard error
    agg = ef.aggregate(frame, by=["sim", "model"], metrics=["acc"]).pivot(
        "model", index="sim", values=["value", "stderr"]
    )
    z = (agg["value_new"] - agg["value_old"]) / (agg["stderr_new"] ** 2 + agg["stderr_old"] ** 2
                                                  ).sqrt()
    out["unpaired"] = float((2 * st.norm.sf(z.abs().to_numpy()) < 0.05).mean())
    return out


@pytest.mark.slow
def test_paired_test_is_calibrated_under_the_null_and_more_powerful_than_unpaired():
    """2,000 evaluations of 200 items each, under the null and under an alternative.

    Figures (seed 7): null: paired t 4.8%, McNemar 3.5% (exact, hence conservative),
    unpaired z 0.4% (it ignores the correlation of the two models' scores, r = 0.55);
    alternative (+0.5 logit, +5.5 points of accuracy): paired t 37.0%, McNemar 31.7%,
    unpaired z 9.5%.
    """
    rng = np.random.default_rng(7)
    null = _rejections(_accuracy(rng, 2000, 200, 0.0))
    assert 0.035 <= null["paired"] <= 0.065, null
    assert null["mcnemar"] <= 0.065 and null["unpaired"] <= 0.065, null
    alternative = _rejections(_accuracy(rng, 2000, 200, 0.5))
    assert alternative["paired"] > 3 * alternative["unpaired"], alternative
    assert alternative["mcnemar"] > 3 * alternative["unpaired"], alternative


@pytest.mark.slow
def test_corpus_tests_are_calibrated_under_the_null():
    """400 evaluations of 150 items: two classifiers of equal skill on shared hard items.

    Figures (seed 1, B = 500): F1-macro paired bootstrap rejects 4.5%, randomisation 4.25%
    (binomial sd over 400 evaluations: 1.1 points).
    """
    rng = np.random.default_rng(1)
    sims, n = 400, 150
    gold = rng.integers(0, 3, (sims, n))
    hard = rng.random((sims, n)) < 0.3

    def predict() -> np.ndarray:
        right = rng.random((sims, n)) < np.where(hard, 0.3, 0.8)
        return np.where(right, gold, (gold + rng.integers(1, 3, (sims, n))) % 3)

    new, old = predict(), predict()
    frame = pl.DataFrame({
        "sim": np.tile(np.repeat(np.arange(sims), n), 2),
        "sample_id": np.tile(np.arange(n), 2 * sims),
        "model": np.repeat(["new", "old"], sims * n),
        "prediction": np.concatenate([new.ravel(), old.ravel()]),
        "gold": np.concatenate([gold.ravel(), gold.ravel()]),
    })
    scored = ef.score(frame, ["f1(average=macro)"])
    for method in ("bootstrap", "randomization"):
        table = ef.compare(scored, baseline="old", by="sim", method=method, bootstrap=500)
        rate = float((table["p_value"] < 0.05).mean())
        assert 0.02 <= rate <= 0.08, (method, rate)


def test_scored_files_are_read(tmp_path):
    path = tmp_path / "scored.parquet"
    frame = _long({"base": [1.0, 0.0, 1.0], "new": [1.0, 1.0, 1.0]}, column="squad_em")
    frame.write_parquet(path)
    table = ef.compare(str(path), baseline="base")
    assert table.equals(ef.compare(frame, baseline="base"))
    assert table["metric"].to_list() == ["squad_em"] and table["method"].item() == "mcnemar"


def test_sample_metric_paired_bootstrap_by_hand():
    rng = np.random.default_rng(8)
    x, y = rng.random(25), rng.random(25)
    frame = _long({"base": y.tolist(), "new": x.tolist()})
    row = ef.compare(frame, baseline="base", metrics=["score"], method="bootstrap",
                     bootstrap=200, seed=3).row(0, named=True)
    draws = np.random.default_rng(3)
    weights = np.stack([np.bincount(draws.integers(0, 25, size=25), minlength=25)
                        for _ in range(200)])
    replicates = weights @ x / 25 - weights @ y / 25
    assert row["stderr"] == pytest.approx(np.std(replicates, ddof=1), rel=1e-12)
    assert row["ci_low"] == pytest.approx(np.quantile(replicates, 0.025), rel=1e-12)
    assert row["p_value"] == bootstrap_p_value(replicates)
    assert row["diff"] == pytest.approx(x.mean() - y.mean(), rel=1e-12)
    assert row["correlation"] == pytest.approx(np.corrcoef(x, y)[0, 1], rel=1e-12)
    assert "|method:bootstrap|stderr:bootstrap|B:200|seed:3|ci:percentile-0.95|" in (
        row["signature"]
    )


@pytest.mark.slow
def test_cluster_bootstrap_resamples_whole_clusters():
    from sklearn.metrics import f1_score

    scored = _labels(6, n=40).with_columns(q=pl.col("sample_id") // 2)
    # one row per cluster: the Sums cluster bootstrap is the row bootstrap
    single = scored.with_columns(q=pl.col("sample_id"))
    kwargs = {"baseline": "base", "metrics": ["word_perplexity"], "bootstrap": 300}
    assert ef.compare(single, cluster="q", **kwargs)["stderr"].item() == pytest.approx(
        ef.compare(single, **kwargs)["stderr"].item(), rel=1e-12
    )
    # Table: replicate weights drawn per cluster (as bootstrap_sums draws rows), then the
    # F1-macro of each side with those row weights (scikit-learn's sample_weight)
    row = ef.compare(scored, baseline="base", metrics=["f1(average=macro)"], cluster="q",
                     bootstrap=100, seed=2).row(0, named=True)
    new = scored.filter(pl.col("model") == "new")
    base = scored.filter(pl.col("model") == "base")
    gold = new["gold"].to_numpy()
    pn, pb = new["prediction"].to_numpy(), base["prediction"].to_numpy()
    cluster = new["q"].to_numpy()
    rng = np.random.default_rng(2)
    replicates = []
    for _ in range(100):
        w = np.bincount(rng.integers(0, 20, size=20), minlength=20)[cluster]
        replicates.append(f1_score(gold, pn, average="macro", sample_weight=w)
                          - f1_score(gold, pb, average="macro", sample_weight=w))
    assert row["stderr"] == pytest.approx(np.std(replicates, ddof=1), rel=1e-9)
    assert "|stderr:bootstrap|cluster:q|B:100|seed:2|" in row["signature"]


def test_interval_of_a_bounded_metric_stays_within_the_possible_differences():
    # squad_em lies in [0, 1], so a difference lies in [-1, 1]: d = 0, 1, 1 has
    # mean 2/3, se 1/3 and t(2) = 4.303: the upper end 2.10 is clipped to 1
    frame = _long({"old": [1.0, 0.0, 0.0], "new": [1.0, 1.0, 1.0]}, column="squad_em")
    row = ef.compare(frame, baseline="old").row(0, named=True)
    assert row["ci_high"] == 1.0
    assert row["ci_low"] == pytest.approx(2 / 3 - st.t.ppf(0.975, 2) / 3, rel=1e-12)
    # a plain column of 0/1 values is bounded the same way; one of other values is not:
    # d = 0, 2, 2 has mean 4/3 and se 2/3
    plain = frame.rename({"squad_em": "mine"})
    assert ef.compare(plain, baseline="old", metrics=["mine"])["ci_high"].item() == 1.0
    doubled = plain.with_columns(pl.col("mine") * 2)
    unbounded = ef.compare(doubled, baseline="old", metrics=["mine"])
    assert unbounded["ci_high"].item() == pytest.approx(4 / 3 + st.t.ppf(0.975, 2) * 2 / 3)


def test_missing_answers_lose_the_pair_by_default():
    import evalframe as ef

    # item 2: model "new" gave no answer. Counted wrong (default), new loses that pair:
    # diffs [0, -1] -> mean -0.5; excluded, only item 1 is paired: diff 0
    frame = pl.DataFrame(
        {
            "model": ["old", "old", "new", "new"],
            "sample_id": [1, 2, 1, 2],
            "prediction": ["a", "b", "a", None],
            "gold": ["a", "b", "a", "b"],
        }
    )
    scored = ef.score(frame, ["exact_match"])
    wrong = ef.compare(scored, baseline="old").row(0, named=True)
    assert (wrong["n_pairs"], wrong["diff"]) == (2, -0.5)
    excluded = ef.compare(scored, baseline="old", missing="exclude").row(0, named=True)
    assert (excluded["n_pairs"], excluded["n_null_pairs"], excluded["diff"]) == (1, 1, 0.0)
    with pytest.raises(EvalframeError, match="1 row\\(s\\) have no answer"):
        ef.compare(scored, baseline="old", missing="error")


# --- clustered pairs --------------------------------------------------------------------


def _equal_models_with_epochs(replicates: int, questions: int, epochs: int) -> pl.DataFrame:
    """Two models equally good on average, each with its own difficulty per question.

    p(model, question) ~ Beta(2, 2) independently for each model, ``epochs`` 0/1 samples
    per question and model: a model's samples of one question are correlated (ICC 0.2),
    so its ``epochs`` rows are one cluster, not ``epochs`` independent items.
    """
    rng = np.random.default_rng(11)
    shape = (replicates, questions)
    a = rng.random((*shape, epochs)) < rng.beta(2, 2, size=shape)[:, :, None]
    b = rng.random((*shape, epochs)) < rng.beta(2, 2, size=shape)[:, :, None]
    keys = {
        "rep": np.repeat(np.arange(replicates), questions * epochs),
        "sample_id": np.tile(np.repeat(np.arange(questions), epochs), replicates),
        "epoch": np.tile(np.arange(epochs), replicates * questions),
    }
    return pl.concat([
        pl.DataFrame({**keys, "model": "a", "correct": a.ravel().astype(float)}),
        pl.DataFrame({**keys, "model": "b", "correct": b.ravel().astype(float)}),
    ])


@pytest.mark.slow
def test_repeated_sample_ids_are_clusters_and_auto_keeps_the_type_i_error():
    """2,000 simulated comparisons of equal models (100 questions x 5 epochs).

    At alpha = 0.05 a valid test rejects 5% of them, give or take the Monte-Carlo error
    sqrt(0.05 * 0.95 / 2000) = 0.49%; three of those either side is the bound. McNemar,
    which treats the 500 pairs as independent, rejects far more often (about 12%).
    """
    frame = _equal_models_with_epochs(2000, 100, 5)
    on = ["sample_id", "epoch"]
    table = ef.compare(frame, baseline="b", by="rep", on=on, metrics=["correct"])
    assert table["method"].unique().to_list() == ["paired"]
    assert "cluster:sample_id" in table["signature"][0]
    rate = float((table["p_value"] < 0.05).mean())
    error = 3 * math.sqrt(0.05 * 0.95 / 2000)
    assert 0.05 - error <= rate <= 0.05 + error, rate
    # the same data with the clusters ignored: the test the default used to pick
    naive = ef.compare(frame, baseline="b", by="rep", on=on, metrics=["correct"],
                       cluster=False)
    assert naive["method"].unique().to_list() == ["mcnemar"]
    assert float((naive["p_value"] < 0.05).mean()) > 0.09
    with pytest.raises(EvalframeError, match="method='mcnemar' treats every pair as"):
        ef.compare(frame.filter(pl.col("rep") == 0), baseline="b", on=on,
                   metrics=["correct"], method="mcnemar")


def test_nan_scores_are_refused_naming_the_column_count_and_first_row():
    # a NaN score has no difference: diff NaN and p-value None before; now an error
    frame = _long({"base": [1.0, 0.0, 1.0], "new": [1.0, math.nan, math.nan]})
    with pytest.raises(EvalframeError) as error:
        ef.compare(frame, baseline="base", metrics=["score"], missing="exclude")
    message = str(error.value)
    assert message.startswith(
        "cannot compare metric column 'score': 2 row(s) hold a NaN score (first: row 4)"
    )
    assert "the difference and its p-value" in message
