"""The tie and inconsistency policies, each against its harness's own rule written out."""

from __future__ import annotations

import itertools
import math

import polars as pl
import pytest

from evalframe import EvalframeError
from evalframe.judge.policies import (
    POLICIES,
    AlpacaEval,
    ArenaHard,
    MTBench,
    Policy,
    classify_verdicts,
    discrete_share,
    list_policies,
    model_share,
    resolve_policy,
)
from evalframe.judge.report import report

VERDICTS = ["A", "B", "tie", "error"]


def test_the_table_and_resolution():
    assert list(POLICIES) == ["default", "mtbench", "arena_hard", "alpaca_eval"]
    assert list_policies()["name"].to_list() == list(POLICIES)
    assert isinstance(resolve_policy("arena_hard"), ArenaHard)
    custom = ArenaHard(weight=5)
    assert resolve_policy(custom) is custom
    assert custom.text == "arena_hard(weight=5,unparsed=row)"
    with pytest.raises(EvalframeError, match="unknown policy 'fastchat'"):
        resolve_policy("fastchat")
    with pytest.raises(EvalframeError, match="weight=0"):
        ArenaHard(weight=0)
    with pytest.raises(EvalframeError, match="unparsed='both'"):
        ArenaHard(unparsed="both")


def test_classification_rule_on_every_pair_of_verdicts():
    pairs = list(itertools.product([*VERDICTS, None], repeat=2))
    frame = pl.DataFrame({"ab": [p[0] for p in pairs], "ba": [p[1] for p in pairs]},
                         schema={"ab": pl.String, "ba": pl.String})
    got = frame.select(classify_verdicts(pl.col("ab"), pl.col("ba"))).to_series().to_list()

    def rule(ab, ba):  # the rule, written out
        if ab in ("error", None) or ba in ("error", None):
            return "error"
        if ab == ba:
            return ab  # the same winner twice, or two ties
        return "inconsistent"

    assert got == [rule(ab, ba) for ab, ba in pairs]


def fastchat_counts(g1: list[str], g2: list[str]) -> dict[str, float]:
    """FastChat show_result.display_result_pairwise for model_1, in plain Python.

    g1/g2 are g1_winner/g2_winner as FastChat writes them (model_1, model_2, tie, error).
    """
    win = loss = tie = 0
    for a, b in zip(g1, g2, strict=True):
        if a == "error" or b == "error":
            continue
        if a == "tie" or a != b:
            tie += 1
        elif a == "model_1":
            win += 1
        else:
            loss += 1
    total = win + loss + tie
    return {
        "win": win, "loss": loss, "tie": tie, "win_rate": win / total,
        "loss_rate": loss / total, "win_rate_adjusted": (win + 0.5 * tie) / total,
    }


def test_mtbench_policy_is_show_result_on_every_combination():
    winners = ["model_1", "model_2", "tie", "error"]
    pairs = list(itertools.product(winners, repeat=2)) * 2 + [("model_1", "model_1")] * 3
    to_ab = {"model_1": "A", "model_2": "B", "tie": "tie", "error": "error"}
    frame = pl.DataFrame({
        "verdict_ab": [to_ab[a] for a, _ in pairs],
        "verdict_ba": [to_ab[b] for _, b in pairs],
    })
    expected = fastchat_counts([a for a, _ in pairs], [b for _, b in pairs])
    got = report(frame, policy="mtbench").row(0, named=True)
    for key, value in expected.items():
        assert got[key] == pytest.approx(value, abs=1e-15), key
    assert got["win_rate_adjusted"] == got["win_rate_a"]


ARENA_LABEL_TO_SCORE = {  # Arena-Hard-Auto v2 show_result.load_judgments, weight 3
    "A>B": [1], "A>>B": [1] * 3, "A=B": [0.5], "A<<B": [0] * 3, "A<B": [0],
    "B>A": [0], "B>>A": [0] * 3, "B=A": [0.5], "B<<A": [1] * 3, "B<A": [1],
}
#: A judge's label as (slot, strength): which slot it preferred and how strongly.
ARENA_SLOTS = {
    "A>B": ("first", 1), "A>>B": ("first", 3), "A=B": ("tie", 1), "A<<B": ("second", 3),
    "A<B": ("second", 1), "B>A": ("second", 1), "B>>A": ("second", 3), "B=A": ("tie", 1),
    "B<<A": ("first", 3), "B<A": ("first", 1),
}


def arena_frame(games: list[tuple[str | None, str | None]]) -> pl.DataFrame:
    """Rows of (game 0: baseline = A shown first, game 1: model = B shown first) labels."""

    def verdict(label, first):
        if label is None:
            return "error", None
        slot, strength = ARENA_SLOTS[label]
        second = "B" if first == "A" else "A"
        return {"first": first, "second": second, "tie": "tie"}[slot], strength

    ab = [verdict(g0, "A") for g0, _ in games]
    ba = [verdict(g1, "B") for _, g1 in games]
    return pl.DataFrame({
        "verdict_ab": [v for v, _ in ab], "strength_ab": [s for _, s in ab],
        "verdict_ba": [v for v, _ in ba], "strength_ba": [s for _, s in ba],
    }, schema_overrides={"strength_ab": pl.Int64, "strength_ba": pl.Int64})


def test_arena_hard_policy_is_load_judgments_on_every_label_pair():
    labels = list(ARENA_LABEL_TO_SCORE)
    games = [*itertools.product(labels, repeat=2), ("A>B", None), (None, "B>>A"), (None, None)]
    # Arena-Hard-Auto v2: a judgment with a null game is dropped; the model's scores are
    # label_to_score[game 1] + [1 - s for s in label_to_score[game 0]]
    scores = []
    for g0, g1 in games:
        if g0 is None or g1 is None:
            continue
        scores += ARENA_LABEL_TO_SCORE[g1] + [1 - s for s in ARENA_LABEL_TO_SCORE[g0]]
    model_score = sum(scores) / len(scores)
    got = report(arena_frame(games), policy="arena_hard").row(0, named=True)
    # A is the baseline: its share is one minus the model's
    assert got["win_rate_a"] == pytest.approx(1 - model_score, abs=1e-14)
    assert got["n_battles"] == len(scores)
    assert got["errors"] == 3


def test_arena_hard_v01_keeps_the_parsed_game():
    games = [("A>>B", "A>B"), ("B>A", None), (None, "A=B")]
    # v0.1 get_battles_from_judgment, baseline = model_a: game 1 A>>B -> model_a x3,
    # game 2 (positions swapped) A>B -> model_b; B>A -> model_b; A=B -> tie; nothing else
    battles_a = [1, 1, 1, 0, 0, 0.5]  # row 1: four battles; row 2: one; row 3: one
    got = report(arena_frame(games), policy=ArenaHard(unparsed="game")).row(0, named=True)
    assert got["win_rate_a"] == pytest.approx(sum(battles_a) / len(battles_a), abs=1e-15)
    assert got["n_battles"] == 6


def test_arena_hard_weight_option_and_missing_strengths():
    frame = arena_frame([("A>>B", "B>>A")])  # both strong for the baseline (A)
    assert report(frame, policy=ArenaHard(weight=5)).row(0, named=True)["n_battles"] == 10
    plain = frame.drop("strength_ab", "strength_ba")
    assert report(plain, policy="arena_hard").row(0, named=True)["n_battles"] == 2
    with pytest.raises(EvalframeError, match="arena_hard"):
        report(pl.DataFrame({"outcome": ["A"]}), policy="arena_hard")


ADVERSARIAL = [1.0, 2.0, 1.5, 0.0, 1.25, 1.75, 1.5000001, 1.4999999, None, math.nan, 2.5,
               0.4, 0.6, 3.0, -1.0, 1.0, 2.0, 2.0]


def test_alpaca_shares_match_the_adapter_rules_written_out():
    # AbsoluteScoringRule: 0 -> 1.5, keep 1 <= x <= 2, minus 1
    def absolute(x):
        if x is None or math.isnan(x):
            return None
        x = 1.5 if x == 0 else x
        return x - 1 if 1 <= x <= 2 else None

    # ZeroOneScoringRule: 1.5 -> 0, round half to even, 0 -> 1.5, keep 1 <= x <= 2, minus 1
    def zero_one(x):
        if x is None or math.isnan(x):
            return None
        x = float(round(0.0 if x == 1.5 else x))
        x = 1.5 if x == 0 else x
        return x - 1 if 1 <= x <= 2 else None

    series = pl.Series(ADVERSARIAL, dtype=pl.Float64)
    got = pl.select(model_share(series), discrete_share(series).alias("d"))
    assert got.to_series(0).to_list() == pytest.approx([absolute(x) for x in ADVERSARIAL])
    assert got.to_series(1).to_list() == [zero_one(x) for x in ADVERSARIAL]


def test_alpaca_policy_matches_alpaca_eval_on_adversarial_preferences():
    metrics = pytest.importorskip("alpaca_eval.metrics")
    expected = metrics.pairwise_to_winrate(ADVERSARIAL)
    got = report(pl.DataFrame({"preference": ADVERSARIAL}), policy="alpaca_eval").row(
        0, named=True
    )
    for key in ("n_wins", "n_wins_base", "n_draws", "n_total"):
        assert got[key] == expected[key], key
    for key in ("win_rate", "standard_error", "discrete_win_rate"):
        assert got[key] == pytest.approx(float(expected[key]), rel=1e-12), key
    assert got["win_rate_a"] == pytest.approx(1 - float(expected["win_rate"]) / 100, rel=1e-12)
    assert got["position_bias"] is None  # AlpacaEval does not record the order shown


def test_alpaca_policy_needs_a_numeric_preference():
    with pytest.raises(EvalframeError, match="preference"):
        report(pl.DataFrame({"outcome": ["A"]}), policy="alpaca_eval")
    with pytest.raises(EvalframeError, match="dtype"):
        report(pl.DataFrame({"preference": ["2"]}), policy="alpaca_eval")


def test_default_policy_reads_the_outcome_or_classifies_the_verdicts():
    verdicts = pl.DataFrame({"verdict_ab": ["A", "A", "tie"], "verdict_ba": ["A", "B", "tie"]})
    outcomes = pl.DataFrame({"outcome": ["A", "inconsistent", "tie"]})
    keep = ["wins_a", "ties", "inconsistent", "win_rate_a"]
    assert report(verdicts).select(keep).equals(report(outcomes).select(keep))
    with pytest.raises(EvalframeError, match="neither"):
        report(pl.DataFrame({"x": [1]}))


def test_policy_classes_are_policies():
    for policy in (MTBench(), ArenaHard(), AlpacaEval()):
        assert isinstance(policy, Policy)
        assert policy.description and policy.reference


def test_single_judgments_point_to_the_alpaca_policy():
    once = pl.DataFrame({"verdict_ab": ["A", "B"], "verdict_ba": [None, None],
                         "preference": [1.0, 2.0]}, schema_overrides={"verdict_ba": pl.String})
    with pytest.raises(EvalframeError, match="policy='alpaca_eval'"):
        report(once)
    assert report(once, policy="alpaca_eval").row(0, named=True)["win_rate"] == 50.0
