"""The pairwise report: counts, win rate with interval, position bias, and the real dumps."""

from __future__ import annotations

import gzip
import json
import math

import polars as pl
import pytest

import evalframe as ef
from evalframe import EvalframeError
from evalframe.judge.report import REPORT_COLUMNS, report
from evalframe.stats.intervals import normal_quantile
from evalframe.stats.stderr import clustered_stderr

# ------------------------------------------------------------------ the seed behaviours

SEED = [  # the three-example set: (question, answer A, answer B)
    ("What is 6 x 7?", "It is 42.", "It is 41."),
    ("What is 40 + 2?", "Forty-one.", "42"),
    ("Name a number.", "Seven.", "Nine."),
]


def verdicts(judge) -> pl.DataFrame:
    """Ask ``judge(first, second) -> "FIRST" | "SECOND" | "TIE"`` both ways, in A/B terms."""
    slot = {"FIRST": "A", "SECOND": "B", "TIE": "tie"}
    back = {"FIRST": "B", "SECOND": "A", "TIE": "tie"}  # B was shown first
    return pl.DataFrame({
        "sample_id": [q for q, _, _ in SEED],
        "verdict_ab": [slot[judge(a, b)] for _, a, b in SEED],
        "verdict_ba": [back[judge(b, a)] for _, a, b in SEED],
    })


def prefers_42(first: str, second: str) -> str:
    if ("42" in first) == ("42" in second):
        return "TIE"
    return "FIRST" if "42" in first else "SECOND"


def test_seed_judge_preferring_42_gives_a_b_tie_and_one_half():
    table = report(verdicts(prefers_42)).row(0, named=True)
    assert (table["wins_a"], table["wins_b"], table["ties"], table["inconsistent"]) == (1, 1, 1, 0)
    assert table["win_rate_a"] == 0.5
    assert table["position_bias"] == 0.5  # one first-slot pick out of two decisive per order


def test_seed_judge_always_first_is_all_inconsistent_and_exactly_one_half():
    table = report(verdicts(lambda first, second: "FIRST")).row(0, named=True)
    assert table["inconsistent"] == 3 and table["n_valid"] == 3
    assert table["win_rate_a"] == 0.5
    assert table["position_bias"] == 1.0
    assert table["n_decisive"] == 6


# ------------------------------------------------------------------ counts and statistics

FRAME = pl.DataFrame({
    "model_b": ["x"] * 6 + ["y"] * 4 + ["z"] * 2,
    "sample_id": [1, 1, 2, 2, 3, 3, 1, 2, 3, 4, 1, 2],
    "outcome": ["A", "B", "tie", "A", "inconsistent", "error",
                "A", "A", "B", "A", "error", "error"],
})


def test_counts_by_group_and_the_formula():
    table = report(FRAME, by="model_b")
    assert table.columns == ["model_b", *REPORT_COLUMNS, "signature"]
    x, y, z = table.rows(named=True)
    assert (x["wins_a"], x["wins_b"], x["ties"], x["inconsistent"], x["errors"], x["n_valid"]) \
        == (2, 1, 1, 1, 1, 5)
    assert x["win_rate_a"] == pytest.approx((2 + 0.5 * (1 + 1)) / 5, abs=1e-15)
    assert y["win_rate_a"] == 0.75
    assert z["n_valid"] == 0 and z["win_rate_a"] is None and z["stderr"] is None


def test_statistics_are_aggregates_of_the_win_rate_metric():
    scored = ef.score(FRAME, ["win_rate"])
    expected = ef.aggregate(scored, by="model_b", keep_empty=True)
    got = report(FRAME, by="model_b")
    for column, theirs in (("win_rate_a", "value"), ("stderr", "stderr"),
                           ("ci_low", "ci_low"), ("ci_high", "ci_high"),
                           ("n_clusters", "n_clusters")):
        assert got[column].to_list() == expected[theirs].to_list(), column


def test_repeated_questions_give_the_clustered_stderr():
    # x repeats sample_id 1, 2, 3: clustered by question, as Miller (2024) eq. 4
    rows = FRAME.filter((pl.col("model_b") == "x") & (pl.col("outcome") != "error"))
    values = [{"A": 1.0, "B": 0.0}.get(o, 0.5) for o in rows["outcome"]]
    expected = clustered_stderr(values, rows["sample_id"].to_numpy())
    got = report(FRAME, by="model_b").row(0, named=True)
    assert got["stderr"] == pytest.approx(expected, rel=1e-12)
    assert got["n_clusters"] == 3
    assert "stderr:clustered(sample_id)" in got["signature"]
    unclustered = report(FRAME, by="model_b", cluster=False).row(0, named=True)
    assert "stderr:sem" in unclustered["signature"]


def test_wilson_interval_when_scores_are_zero_or_one():
    frame = pl.DataFrame({"outcome": ["A"] * 7 + ["B"] * 3})
    got = report(frame).row(0, named=True)
    p, n, z = 0.7, 10, normal_quantile(0.95)
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    assert got["ci_low"] == pytest.approx(centre - half, rel=1e-12)
    assert got["ci_high"] == pytest.approx(centre + half, rel=1e-12)
    assert "ci:wilson-0.95" in got["signature"]


def test_t_interval_inside_bounds_with_ties():
    frame = pl.DataFrame({"outcome": ["A", "A", "A", "tie"]})
    got = report(frame).row(0, named=True)
    assert "ci:t-0.95" in got["signature"]
    assert 0.0 <= got["ci_low"] <= got["win_rate_a"] <= got["ci_high"] == 1.0


def test_position_bias_counts_first_slot_picks_among_decisive_verdicts():
    frame = pl.DataFrame({
        "verdict_ab": ["A", "A", "B", "tie", "error", None],
        "verdict_ba": ["B", "A", "B", "B", "A", "tie"],
    })
    got = report(frame).row(0, named=True)
    # decisive: ab A, A, B (first slot twice); ba B, A, B, B, A (first slot = B, three times)
    assert got["n_decisive"] == 8
    assert got["position_bias"] == pytest.approx(5 / 8, abs=1e-15)
    no_verdicts = report(pl.DataFrame({"outcome": ["A"]})).row(0, named=True)
    assert no_verdicts["position_bias"] is None and no_verdicts["n_decisive"] == 0


def test_signature_names_policy_judge_and_version_last():
    frame = FRAME.with_columns(pl.lit("gpt-x").alias("judge_model"))
    text = report(frame, policy="mtbench").row(0, named=True)["signature"]
    parts = text.split("|")
    assert parts[0] == "metric:win_rate"
    assert "policy:mtbench" in parts and "judge:gpt-x" in parts
    assert parts[-1].startswith("version:")
    assert "missing:" not in text


def test_lazy_and_file_inputs(tmp_path):
    path = tmp_path / "judged.parquet"
    FRAME.write_parquet(path)
    eager = report(FRAME, by="model_b")
    assert report(FRAME.lazy(), by="model_b").equals(eager)
    assert report(path, by="model_b").equals(eager)


def test_bad_inputs_raise_clear_errors():
    with pytest.raises(EvalframeError, match="'Tie'"):
        report(pl.DataFrame({"outcome": ["A", "Tie"]}))
    with pytest.raises(EvalframeError, match="no such column"):
        report(FRAME, by="judge")
    with pytest.raises(EvalframeError, match="report has column"):
        report(FRAME.rename({"model_b": "wins_a"}), by="wins_a")
    with pytest.raises(EvalframeError, match="ci="):
        report(FRAME, ci=95)
    with pytest.raises(EvalframeError, match="cluster="):
        report(FRAME, cluster="question")


# ------------------------------------------------------------------ FastChat MT-bench


def test_mtbench_pairwise_reproduces_show_result(shared_data):
    path = shared_data / "mtbench-fastchat-fork" / "gpt-4_pair.jsonl.gz"
    with gzip.open(path, "rt") as handle:
        lines = [json.loads(line) for line in handle if line.strip()]
    # fastchat/llm_judge/show_result.py display_result_pairwise, written out
    lines = [r for r in lines if r["g1_winner"] != "error" and r["g2_winner"] != "error"]
    table: dict[str, dict[str, int]] = {}
    for r in lines:
        if r["g1_winner"] == "tie" or r["g1_winner"] != r["g2_winner"]:
            results = [(r["model_1"], "tie"), (r["model_2"], "tie")]
        elif r["g1_winner"] == "model_1":
            results = [(r["model_1"], "win"), (r["model_2"], "loss")]
        else:
            results = [(r["model_2"], "win"), (r["model_1"], "loss")]
        for model, what in results:
            table.setdefault(model, {"win": 0, "loss": 0, "tie": 0})[what] += 1
    for counts in table.values():
        total = counts["win"] + counts["loss"] + counts["tie"]
        counts["win_rate"] = counts["win"] / total
        counts["loss_rate"] = counts["loss"] / total
        counts["win_rate_adjusted"] = (counts["win"] + 0.5 * counts["tie"]) / total

    got = report(ef.load(path), by=["model_a", "model_b"], policy="mtbench")
    assert got.height == 1
    row = got.row(0, named=True)
    first, second = table[row["model_a"]], table[row["model_b"]]
    for key in ("win", "loss", "tie", "win_rate", "loss_rate", "win_rate_adjusted"):
        assert row[key] == pytest.approx(first[key], abs=1e-15), key
    # model_2's row of FastChat's table is the mirror image
    assert (second["win"], second["loss"], second["tie"]) == (row["loss"], row["win"], row["tie"])
    assert row["errors"] == 2 and row["n_valid"] == len(lines)
    assert row["win_rate_a"] == pytest.approx(first["win_rate_adjusted"], abs=1e-15)


# ------------------------------------------------------------------ AlpacaEval

ALPACA_FILES = [
    (model, "weighted_alpaca_eval_gpt4_turbo")
    for model in ("alpaca-7b", "text_davinci_001", "gpt-3.5-turbo-1106", "claude-2.1",
                  "FuseChat-Llama-3.2-1B-Instruct", "FuseChat-Gemma-2-9B-Instruct", "NullModel",
                  "gpt4_1106_preview")
] + [(model, "alpaca_eval_gpt4") for model in ("alpaca-7b", "gpt4", "llama-2-7b-chat-hf")]


@pytest.mark.slow
def test_alpaca_eval_reproduces_get_winrate(shared_data):
    metrics = pytest.importorskip("alpaca_eval.metrics")
    import pandas as pd

    root = shared_data / "alpaca_eval"
    paths = [root / model / annotator / "annotations.json.gz" for model, annotator in ALPACA_FILES]
    got = report(ef.load(paths), by=["model", "judge"], policy="alpaca_eval")
    assert got.height == len(ALPACA_FILES)
    for path in paths:
        with gzip.open(path, "rt") as handle:
            records = json.load(handle)
        expected = metrics.get_winrate(pd.DataFrame(records))  # the annotations as read
        # the model is named by its results folder, as the leaderboard names it (NullModel's
        # annotations say generator_2='example')
        model, annotator = path.parts[-3], records[0]["annotator"]
        row = got.filter((pl.col("model") == model) & (pl.col("judge") == annotator)).row(
            0, named=True
        )
        for key in ("n_wins", "n_wins_base", "n_draws", "n_total"):
            assert row[key] == expected[key], (model, annotator, key)
        for key in ("win_rate", "standard_error", "discrete_win_rate"):
            assert row[key] == pytest.approx(float(expected[key]), rel=1e-12, abs=1e-12), (
                model, annotator, key,
            )
        assert row["win_rate_a"] == pytest.approx(1 - float(expected["win_rate"]) / 100,
                                                  rel=1e-12, abs=1e-12)


def test_the_alpaca_eval_headline_has_its_interval_on_its_own_scale():
    # preferences 2 x5, 1 x2, 1.5: the model's shares 1 x5, 0 x2, 0.5 -> mean 0.6875 (68.75%)
    # squared deviations 5 x 0.3125^2 + 2 x 0.6875^2 + 0.1875^2 = 1.46875; / 7 -> sd 0.458062;
    # se = 0.458062 / sqrt(8) = 0.161950 (16.195%); t(0.975, 7) = 2.364624 -> half 0.382947.
    # The report's interval is on the baseline's share 0.3125: [-0.0704, 0.6954], clipped to
    # [0, 0.6954]; on the model's scale, in percent: [30.455, 100]
    frame = pl.DataFrame({"sample_id": [f"q{i}" for i in range(8)],
                          "generator_1": ["base"] * 8, "generator_2": ["m"] * 8,
                          "preference": [2.0, 2, 2, 2, 2, 1, 1, 1.5]})
    row = report(frame, policy="alpaca_eval").row(0, named=True)
    assert row["win_rate"] == pytest.approx(68.75)
    assert row["standard_error"] == pytest.approx(16.19496, abs=1e-4)
    assert row["win_rate_ci_low"] == pytest.approx(30.4550, abs=1e-3)
    assert row["win_rate_ci_high"] == pytest.approx(100.0)
    assert row["win_rate_ci_low"] <= row["win_rate"] <= row["win_rate_ci_high"]
