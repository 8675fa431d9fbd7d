"""aggregate(): means, standard errors, intervals, nulls, groups."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest

import evalframe as ef
from evalframe import EvalframeError, aggregate

SCORED = pl.DataFrame(
    {
        "model": ["a", "a", "a", "a", "b", "b"],
        "task": ["t", "t", "t", "u", "t", "t"],
        "squad_em": [1.0, 0.0, None, 1.0, 0.0, 0.0],
        "squad_f1": [1.0, 0.5, 0.25, None, None, None],
    }
)


def test_null_scores_of_unknown_meaning_are_refused_by_default():
    # no prediction column and no record of a scoring: a null squad_em may be a missing
    # answer (wrong by default) or a row without a gold (left out); any number would be a
    # guess, so the default policy refuses and names the ways out
    with pytest.raises(EvalframeError, match=r"'squad_em': 1 row\(s\) have a null score.*"
                       r"missing='exclude'"):
        aggregate(SCORED, by=["model", "task"])
    # the user's own frame naming its prediction column tells them apart
    named = SCORED.with_columns(
        pred=pl.Series(["x", "y", None, "z", "w", "v"]), answers=pl.lit(["x"])
    )
    table = aggregate(
        named, metrics=["squad_em"], columns={"prediction": "pred", "gold": "answers"}
    )
    # row 3 is a missing answer (null prediction): wrong, so 1, 0, 0, 1, 0, 0 -> 2/6
    assert table.select("n", "n_missing", "n_null", "value").row(0) == (6, 1, 0, 2 / 6)


def test_by_groups_hand_computed():
    table = aggregate(SCORED, by=["model", "task"], missing="exclude")
    assert table.columns == [
        "model", "task", "metric", "n", "n_missing", "n_null", "value", "stderr", "ci_low",
        "ci_high", "n_clusters", "signature",
    ]
    rows = {(r["model"], r["task"], r["metric"]): r for r in table.iter_rows(named=True)}
    # (a, t, squad_em): scores 1, 0 (one null) -> mean 0.5; sample sd = sqrt(0.5); se = sd/sqrt(2)
    em = rows[("a", "t", "squad_em")]
    assert (em["n"], em["n_null"]) == (2, 1)
    assert em["value"] == 0.5
    assert em["stderr"] == pytest.approx(math.sqrt(0.5) / math.sqrt(2), rel=1e-15)
    # 0/1 scores: Wilson. p = 0.5, n = 2, z = 1.959964, z²/n = 1.920729: centre
    # (p + z²/2n) / (1 + z²/n) = 0.5; half-width z / (1 + z²/n) * sqrt(p(1-p)/n + z²/4n²)
    # = 0.671050 * sqrt(0.125 + 0.240091) = 0.405466
    assert em["ci_low"] == pytest.approx(0.5 - 0.405466, abs=1e-5)
    assert em["ci_high"] == pytest.approx(0.5 + 0.405466, abs=1e-5)
    # no prediction column here: missing answers cannot be told apart, and say so (the
    # user chose to leave every null score out)
    assert em["n_missing"] is None and "|missing:unknown|" in em["signature"]
    # (a, t, squad_f1): 1, .5, .25 -> mean 7/12; deviations 5/12, -1/12, -4/12;
    # sum of squares 42/144 -> var 21/144 -> se = sqrt(21/144/3)
    f1 = rows[("a", "t", "squad_f1")]
    assert f1["value"] == pytest.approx(7 / 12, rel=1e-15)
    assert f1["stderr"] == pytest.approx(math.sqrt(21 / 144 / 3), rel=1e-14)
    # continuous scores: Student-t with 2 degrees of freedom (t = 4.302653), clipped:
    # 7/12 - 4.302653 * 0.220479 = -0.365 -> 0.0; 7/12 + 0.949 = 1.532 -> 1.0
    assert (f1["ci_low"], f1["ci_high"]) == (0.0, 1.0)
    assert "|ci:t-0.95|" in f1["signature"]
    # one score: no spread to estimate
    single = rows[("a", "u", "squad_em")]
    assert single["n"] == 1 and single["stderr"] is None and single["ci_low"] is None
    # groups with no scores at all are left out by default
    assert ("b", "t", "squad_f1") not in rows and ("a", "u", "squad_f1") not in rows


def test_keep_empty_keeps_all_null_groups():
    table = aggregate(SCORED, by=["model", "task"], keep_empty=True, missing="exclude")
    row = table.filter((pl.col("model") == "b") & (pl.col("metric") == "squad_f1")).row(
        0, named=True
    )
    assert (row["n"], row["n_null"], row["value"]) == (0, 2, None)


def test_no_grouping_and_metric_selection():
    table = aggregate(SCORED, metrics=["squad_em"], missing="exclude")
    assert table.columns[0] == "metric"
    assert table["n"].to_list() == [5] and table["value"].to_list() == [2 / 5]


def test_ci_level_changes_interval():
    wide = aggregate(SCORED, metrics=["squad_em"], ci=0.99, missing="exclude").row(0, named=True)
    narrow = aggregate(SCORED, metrics=["squad_em"], ci=0.5, missing="exclude").row(0, named=True)
    assert wide["ci_high"] - wide["ci_low"] > narrow["ci_high"] - narrow["ci_low"]
    assert "ci:wilson-0.99" in wide["signature"]


def test_lazy_input_and_metric_detection_by_name():
    frame = SCORED.with_columns(pl.lit(3.0).alias("not_a_metric"))
    table = aggregate(frame.lazy(), by="model", missing="exclude")
    assert set(table["metric"]) == {"squad_em", "squad_f1"}


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"by": ["nope"]}, "cannot group by"),
        ({"metrics": ["nope"]}, "not found"),
        ({"metrics": ["model"]}, "expected numeric"),
        ({"ci": 1.0}, "strictly between"),
    ],
)
def test_errors(kwargs, message):
    with pytest.raises(EvalframeError, match=message):
        aggregate(SCORED, **kwargs)


def test_nothing_to_aggregate():
    with pytest.raises(EvalframeError, match="no metric columns"):
        aggregate(SCORED.select("model"))


def test_corpus_metric_reduces_by_its_formula_with_a_bootstrap_stderr():
    from sklearn.metrics import f1_score

    frame = pl.DataFrame(
        {
            "task": ["x", "x", "x", "x", "y", "y"],
            "prediction": ["a", "b", "a", "c", "c", None],
            "gold": ["a", "b", "b", "c", "a", "a"],
        }
    )
    scored = ef.score(frame, ["f1(average=macro)"])
    table = ef.aggregate(scored, by="task")
    x = table.row(0, named=True)
    # sklearn on task x: labels a, b, c -> F1 per label 2/3, 2/3, 1 -> mean 7/9
    assert x["value"] == f1_score(["a", "b", "b", "c"], ["a", "b", "a", "c"], average="macro")
    assert (x["n"], x["n_null"]) == (4, 0)
    assert x["stderr"] > 0 and x["ci_low"] < x["value"] < x["ci_high"]
    assert x["signature"].startswith("metric:f1|opts:average='macro',")
    assert "|stderr:bootstrap|B:1000|seed:0|ci:percentile-0.95|version:" in x["signature"]
    y = table.row(1, named=True)
    # the null prediction is a missing answer: left out of a corpus metric, and counted
    assert (y["n"], y["n_missing"], y["n_null"]) == (1, 1, 0)
    assert y["stderr"] is None, "one row: no spread to estimate"
    # seeded: the same numbers every time; another seed, another stderr
    assert ef.aggregate(scored, by="task").equals(table)
    other = ef.aggregate(scored, by="task", seed=1)
    assert other["stderr"][0] != x["stderr"] and other["value"][0] == x["value"]


def test_corpus_metric_needs_its_statistics():
    frame = pl.DataFrame({"f1": [1.0, 0.0]})
    with pytest.raises(EvalframeError, match="'f1' is a corpus metric whose statistics"):
        ef.aggregate(frame, metrics=["f1"])
    # found by name and dtype only: a Float64 column named f1 is not a metric column
    with pytest.raises(EvalframeError, match="no metric columns"):
        ef.aggregate(frame)


def test_integer_column_named_like_a_metric_is_not_a_score():
    frame = pl.DataFrame({"exact_match": [1, 0, 1], "squad_em": [1.0, 0.0, 1.0]})
    assert ef.aggregate(frame)["metric"].to_list() == ["squad_em"]
    # named explicitly, a numeric column is aggregated by its mean
    named = ef.aggregate(frame, metrics=["exact_match"])
    assert named["value"].item() == 2 / 3
    assert named["signature"].item().startswith("metric:column:exact_match|reduce:mean")


def test_aliased_columns_from_a_file_written_by_the_cli(tmp_path):
    from evalframe.cli import main

    source = tmp_path / "labels.jsonl"
    pl.DataFrame({"prediction": ["a", "b", "b"], "gold": ["a", "b", "a"]}).write_ndjson(source)
    out = tmp_path / "scored.parquet"
    assert main(["score", str(source), "-m", "macro=f1(average=macro)", "-o", str(out),
                 "--quiet"]) == 0
    # the alias resolves through the file's metadata: f1-macro of a/b = (2/3 + 2/3) / 2
    table = ef.aggregate(str(out))
    assert table["metric"].to_list() == ["macro"]
    assert table["value"].item() == pytest.approx(2 / 3, rel=1e-15)
    # read by polars itself, the frame carries what the column is
    frame = pl.read_parquet(out)
    assert ef.aggregate(frame).equals(table)
    assert ef.aggregate(frame, metrics={"macro": "f1(average=macro)"}).equals(table)
    # a request that contradicts the record is refused
    with pytest.raises(EvalframeError, match="was scored as \"f1\\(average='macro'\\)\""):
        ef.aggregate(frame, metrics={"macro": "f1(average=micro)"})


@pytest.mark.slow
def test_bootstrap_interval_covers_the_true_f1_macro_95_percent_of_the_time():
    """2,000 simulated evaluations of 1,000 rows from a known population.

    Gold classes 0/1/2 with probabilities 0.5/0.3/0.2; the prediction is the gold with
    probability 0.7, else one of the two other classes at random. The population's
    F1-macro follows from the joint probabilities P(pred, gold) (F1 is scale-free, so
    probabilities can stand in for counts): per class 2 P(tp) / (2 P(tp) + P(fp) + P(fn)).
    """
    rng = np.random.default_rng(2024)
    gold_p = np.array([0.5, 0.3, 0.2])
    joint = np.zeros((3, 3))  # joint[pred, gold]
    for g in range(3):
        for p in range(3):
            joint[p, g] = gold_p[g] * (0.7 if p == g else 0.15)
    tp = np.diag(joint)
    truth = float(np.mean(2 * tp / (2 * tp + (joint.sum(axis=1) - tp) + (joint.sum(axis=0) - tp))))
    sims, rows = 2000, 1000
    cells = rng.choice(9, size=sims * rows, p=joint.ravel())
    frame = pl.DataFrame(
        {"sim": np.repeat(np.arange(sims), rows), "prediction": cells // 3, "gold": cells % 3}
    )
    table = ef.aggregate(ef.score(frame, ["f1(average=macro)"]), by="sim")
    covered = ((table["ci_low"] <= truth) & (truth <= table["ci_high"])).mean()
    assert 0.935 <= covered <= 0.965, f"coverage {covered:.3f} (truth {truth:.4f})"


def test_question_mean_is_the_mean_of_question_means():
    # questions 1, 2, 3 with 1, 3 and 2 samples: question means 1, 0, 1/2 -> 1/2 (the row
    # mean would be 2/6); SE = sd(1, 0, 1/2) / sqrt(3) = 0.5 / sqrt(3)
    frame = pl.DataFrame({"sample_id": [1, 2, 2, 2, 3, 3], "squad_em": [1.0, 0, 0, 0, 1, 0]})
    row = ef.aggregate(frame, stderr="question_mean").row(0, named=True)
    assert row["value"] == 0.5
    assert row["stderr"] == pytest.approx(0.5 / math.sqrt(3), rel=1e-15)
    assert "stderr:question_mean(sample_id)" in row["signature"]


def test_a_null_cluster_id_is_an_error():
    frame = pl.DataFrame({"question": ["q1", "q1", None], "squad_em": [1.0, 0.0, 1.0]})
    with pytest.raises(EvalframeError, match=r"'question' is null in 1 row\(s\) \(first: row 2\)"):
        ef.aggregate(frame, cluster="question")


def test_a_null_repeated_sample_id_is_an_error_and_unrepeated_ids_do_not_cluster():
    frame = pl.DataFrame({"sample_id": [1, 1, None, 2], "squad_em": [1.0, 0.0, 1.0, 0.0]})
    with pytest.raises(EvalframeError, match=r"'sample_id' is null in 1 row\(s\) \(first: row 2\)"):
        ef.aggregate(frame)
    unique = pl.DataFrame({"sample_id": [1, None, 2], "squad_em": [1.0, 0.0, 1.0]})
    assert "stderr:sem" in ef.aggregate(unique)["signature"].item()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"ci": "0.9"}, "ci='0.9' must be a number"),
        ({"missing": "drop"}, "missing='drop' is invalid"),
        ({"interval": "bca"}, "interval='bca' is invalid"),
        ({"cluster": 3}, "cluster=3: expected a column name"),
        ({"wide": "yes"}, "wide='yes' must be True or False"),
        ({"bootstrap": 1}, "bootstrap=1 must be an integer >= 2"),
        ({"stderr": "robust"}, "stderr='robust' is invalid"),
    ],
)
def test_wrong_arguments_are_clear_errors(kwargs, message):
    with pytest.raises(EvalframeError, match=message):
        aggregate(SCORED, **kwargs)


def test_stacked_files_that_disagree_on_a_column_are_an_error(tmp_path):
    frame = pl.DataFrame({"prediction": ["a", "b"], "gold": ["a", "a"]})
    first, second = tmp_path / "1.parquet", tmp_path / "2.parquet"
    ef.save(ef.score(frame, {"score": "exact_match"}), first,
            metadata={"evalframe.metrics": '{"score": "exact_match"}'})
    ef.save(ef.score(frame, {"score": "squad_em"}), second,
            metadata={"evalframe.metrics": '{"score": "squad_em"}'})
    with pytest.raises(EvalframeError, match=r"column 'score' is 'exact_match' in .*1.parquet.* "
                                             r"but 'squad_em' in .*2.parquet"):
        ef.aggregate([str(first), str(second)])


# --- hostile inputs: NaN scores, no rows ---------------------------------------------------


def _brier_with_no_probability_mass() -> pl.DataFrame:
    # rows 2 and 4 put -inf on every choice: no probability mass, the softmax is 0 / 0 and
    # brier_score NaN (lm_eval.utils.softmax gives NaN too)
    lp = [[-1.0, -2.0], [0.0, 0.0], [-math.inf, -math.inf], [-1.0, -1.0],
          [-math.inf, -math.inf]]
    data = pl.DataFrame({"task": ["t"] * 5, "choice_logprobs": lp, "gold_index": [0] * 5})
    return ef.score(data, ["brier_score"])


def test_nan_scores_are_refused_naming_the_column_count_and_first_row():
    scored = _brier_with_no_probability_mass()
    assert [math.isnan(v) for v in scored["brier_score"]] == [False, False, True, False, True]
    with pytest.raises(EvalframeError) as error:
        aggregate(scored, by="task")
    message = str(error.value)
    assert message.startswith(
        "cannot aggregate metric column 'brier_score': 2 row(s) hold a NaN score (first: row 2)"
    )
    assert "frame.filter(~pl.col('brier_score').is_nan())" in message
    # dropped as the message says, the rest aggregates: p = [e^-1, e^-2] / (e^-1 + e^-2)
    # for gold 0 gives 2 (e^-2 / (e^-1 + e^-2))^2 = 2 / (1 + e)^2; [.5, .5] gives .5 twice
    kept = aggregate(scored.filter(~pl.col("brier_score").is_nan()), by="task")
    assert kept["value"].item() == pytest.approx((2 / (1 + math.e) ** 2 + 0.5 + 0.5) / 3)


def test_nan_in_a_plain_score_column_is_refused_too():
    frame = pl.DataFrame({"task": ["a", "a", "b"], "correct": [1.0, 0.0, math.nan]})
    with pytest.raises(EvalframeError, match=r"'correct': 1 row\(s\) hold a NaN score "
                       r"\(first: row 2\)"):
        aggregate(frame, by="task", metrics=["correct"], missing="exclude")
    # ...over a lazy scan too, counted over every row
    lazy = pl.concat([frame.lazy()] * 3)
    with pytest.raises(EvalframeError, match=r"3 row\(s\) hold a NaN score \(first: row 2\)"):
        aggregate(lazy, metrics=["correct"], missing="exclude")


def test_a_corpus_value_that_is_nan_by_its_formula_stays():
    # two empty documents (log-likelihood 0, no bytes): exp(-0 / 0) has no value (lm-eval:
    # ZeroDivisionError); a NaN value of the formula, documented, not a NaN row score
    data = pl.DataFrame({"loglikelihood": [0.0, 0.0], "text": ["", ""]})
    table = aggregate(ef.score(data, ["byte_perplexity"]), bootstrap=10)
    assert table["n"].item() == 2 and math.isnan(table["value"].item())


def test_no_rows_with_by_gives_an_empty_table_of_the_same_columns_and_dtypes():
    data = pl.DataFrame({
        "model": ["a", "a", "b"], "task": [1, 2, 1],
        "choice_logprobs": [[-1.0, -2.0]] * 3, "gold_index": [0, 1, 0],
        "passed": [[True, False], [False, False], [True, True]],
        "loglikelihood": [-1.0, -2.0, -3.0], "n_words": [1, 2, 3],
    })
    scored = ef.score(data, ["acc", "pass@1", "word_perplexity"])
    for options in ({"by": ["model", "task"]}, {"by": "task", "keep_empty": True},
                    {"by": "model", "wide": True}, {}):
        full = aggregate(scored, bootstrap=10, **options)
        empty = aggregate(scored.head(0), bootstrap=10, **options)
        assert empty.height == 0, options
        assert empty.schema == full.schema, options
        lazy = aggregate(scored.lazy().filter(pl.col("task") > 5), bootstrap=10, **options)
        assert lazy.schema == full.schema and lazy.height == 0, options
