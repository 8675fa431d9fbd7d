"""Multiple-choice metrics: hand-computed values, edge rules, nulls, errors and invariants.

Expected values are computed by hand in the comments (``e`` is Euler's number), never
by evalframe itself; the references themselves are in
``tests/conformance/test_choice_conformance.py``.
"""

from __future__ import annotations

import math
import random
import re

import polars as pl
import pytest

import evalframe as ef
from evalframe import EvalframeError
from evalframe import metrics as M
from evalframe.metrics.registry import resolve
from tests._scores import unscored

NAN, INF = math.nan, math.inf
E = math.e


def frame(**columns) -> pl.DataFrame:
    schema = {
        "choice_logprobs": pl.List(pl.Float64),
        "gold_index": pl.List(pl.Int64),
        "choices": pl.List(pl.String),
        "choice_token_counts": pl.List(pl.Int64),
        "unconditioned_logprobs": pl.List(pl.Float64),
        "len_mc1": pl.Int64,
    }
    if "gold_index" in columns and not isinstance(
        next((g for g in columns["gold_index"] if g is not None), []), list
    ):
        schema["gold_index"] = pl.Int64
    return pl.DataFrame(columns, schema={name: schema[name] for name in columns})


def score(metric: str, **columns) -> list[float | None]:
    """The metric's scores, null where an answer is missing (the metric's own null rule)."""
    return unscored(ef.score(frame(**columns), [metric]), metric).to_list()


def same(got: list, want: list) -> bool:
    return len(got) == len(want) and all(
        (g is None and w is None)
        or (g is not None and w is not None and (
            (math.isnan(g) and math.isnan(w)) or g == pytest.approx(w, rel=1e-15, abs=0)))
        for g, w in zip(got, want, strict=True)
    )


# --- accuracies --------------------------------------------------------------------------


def test_acc_argmax_ties_and_infinities():
    got = score(
        "acc",
        choice_logprobs=[
            [-1.0, -2.0, -3.0],  # argmax 0
            [-2.0, -0.5],  # argmax 1, golds [0, 1]
            [-1.0, -1.0, -3.0],  # tie: the first index (0) wins, gold 1 loses
            [-1.0, -INF, -0.5],  # -inf (probability 0) loses to every finite value
            [-INF, -INF],  # all -inf: a tie, index 0
            [-3.0],  # one choice
            [-0.0, 0.0],  # -0.0 == 0.0: a tie, index 0
            [-1e308, -1e-320],  # the subnormal -1e-320 is the larger
            [-1.0, 5e-7, 0.0],  # 5e-7 is rounding, accepted as given: it beats 0.0
        ],
        gold_index=[[0], [0, 1], [1], [2], [0], [0], [1], [1], [1]],
    )
    assert got == [1.0, 1.0, 0.0, 1.0, 1.0, 1.0, 0.0, 1.0, 1.0]


def test_acc_int_and_list_gold_agree():
    lp = [[-1.0, -2.0], [-3.0, -1.0], [-1.0, -1.0]]
    assert score("acc", choice_logprobs=lp, gold_index=[0, 0, 1]) == [1.0, 0.0, 0.0]
    assert score("acc", choice_logprobs=lp, gold_index=[[0], [0], [1]]) == [1.0, 0.0, 0.0]


def test_acc_norm_divides_by_code_points_as_python_len():
    got = score(
        "acc_norm",
        choice_logprobs=[[-2.0, -3.0], [-1.0, -0.3333333333333333], [-2.0, -1.5], [0.0, -1.0],
                         [-1.0, -1.0], [-6.0, -4.0]],
        gold_index=[0, 0, 0, 0, 1, 1],
        choices=[
            ["ab", "abc"],  # -2/2 = -1.0 ties -3/3 = -1.0: index 0 wins
            ["abc", "x"],  # -1/3 rounds to -0.3333333333333333 = -0.333.../1: a float tie
            ["e\u0301", "é"],  # 2 code points vs 1: -1.0 > -1.5, index 0 wins
            ["", "b"],  # 0.0 / 0 is NaN, which wins the argmax
            ["", "b"],  # -1 / 0 = -inf loses to -1/1
            ["Lisbon", "Rome"],  # -6/6 = -1.0 ties -4/4: index 0 wins, gold 1 loses
        ],
    )
    assert got == [1.0, 1.0, 1.0, 1.0, 1.0, 0.0]


def test_acc_norm_lighteval_space_options():
    lp = [[-6.0, -4.0], [-6.0, -4.0]]
    columns = {"choice_logprobs": lp, "gold_index": [0, 0],
               "choices": [["Lisbon", "Rome"], [" Lisbon", " Rome"]]}
    # as given: row 0 ties -1 = -1 (index 0 wins); row 1: -6/7 = -0.857 < -4/5 = -0.8
    assert score("acc_norm", **columns) == [1.0, 0.0]
    # count_delimiter, len(" " + c): row 0 -6/7 < -4/5; row 1 -6/8 = -0.75 < -4/6 = -0.667
    assert score("acc_norm(count_delimiter=true)", **columns) == [0.0, 0.0]
    # ignore_first_space: row 0 has no leading space (ties, 1.0); row 1 counts 6 and 4: tie
    assert score("acc_norm(ignore_first_space=true)", **columns) == [1.0, 1.0]
    # both: the delimiter added, then not counted: len(c) for every row
    assert score("acc_norm(count_delimiter=true, ignore_first_space=true)", **columns) == [
        1.0, 0.0]


def test_acc_bytes_divides_by_utf8_length():
    got = score(
        "acc_bytes",
        choice_logprobs=[[-6.0, -5.0], [-2.0, -1.5], [-2.0, -1.5]],
        gold_index=[0, 0, 1],
        # "東京" is 6 bytes: -6/6 ties -5/5, index 0 wins. "e" + U+0301 is 3 bytes and "é"
        # 2: -2/3 = -0.667 > -1.5/2 = -0.75, index 0 wins.
        choices=[["東京", "Paris"], ["e\u0301", "é"], ["e\u0301", "é"]],
    )
    assert got == [1.0, 1.0, 0.0]


def test_acc_token_and_acc_pmi():
    # -6/3 = -2 > -4/1 = -4: index 0; -6/6 = -1 > -4/2 = -2: index 0 again
    assert score("acc_token", choice_logprobs=[[-6.0, -4.0], [-6.0, -4.0]], gold_index=[0, 0],
                 choice_token_counts=[[3, 1], [6, 2]]) == [1.0, 1.0]
    # PMI: -3 - (-1) = -2 and -5 - (-6) = 1: index 1; -1 - (-9) = 8 and -inf - (-1) = -inf:
    # index 0, so gold 1 loses
    assert score("acc_pmi", choice_logprobs=[[-3.0, -5.0], [-1.0, -INF]], gold_index=[1, 1],
                 unconditioned_logprobs=[[-1.0, -6.0], [-9.0, -1.0]]) == [1.0, 0.0]


# --- probabilities -----------------------------------------------------------------------


def test_prob_is_the_best_gold_probability():
    got = score("prob", choice_logprobs=[[-0.5, -2.0, -0.1], [-3.0], [-INF, -1.0]],
                gold_index=[[0, 1], [0], [0]])
    # max(e^-0.5, e^-2) = e^-0.5 (choice 2 is not gold); e^-3; e^-inf = 0
    assert same(got, [math.exp(-0.5), math.exp(-3.0), 0.0])
    tokens = score("prob(normalization=token)", choice_logprobs=[[-2.0, -6.0]],
                   gold_index=[[0, 1]], choice_token_counts=[[2, 3]])
    assert same(tokens, [math.exp(-1.0)])  # max(e^(-2/2), e^(-6/3))


def test_prob_norm_softmax_is_stable():
    got = score(
        "prob_norm",
        choice_logprobs=[[-1.0, -1.0, -2.0], [-1000.0, -1001.0], [-INF, -INF], [-INF, -1.0],
                         [-INF, -1.0]],
        gold_index=[[0], [0], [0], [1], [0]],
    )
    # e^-1 / (2e^-1 + e^-2) = 1 / (2 + e^-1); 1 / (1 + e^-1), where exp(-1000) underflows;
    # every probability 0: 0.0 (lighteval's safe_divide); e^-1 / (0 + e^-1) = 1 and 0 / e^-1
    want = [1 / (2 + 1 / E), 1 / (1 + 1 / E), 0.0, 1.0, 0.0]
    assert same(got, want)


def test_prob_norm_normalizations():
    base = {"choice_logprobs": [[-2.0, -1.0], [-3.0, -5.0]], "gold_index": [[1], [1]],
            "choices": [["ab", "c"], ["a", "b"]], "choice_token_counts": [[1, 1], [3, 5]],
            "unconditioned_logprobs": [[0.0, 0.0], [-1.0, -6.0]]}
    # char: [-1, -1] -> 0.5; [-3, -5] -> e^-5 / (e^-3 + e^-5) = 1 / (1 + e^2)
    assert same(score("prob_norm(normalization=char)", **base), [0.5, 1 / (1 + E**2)])
    # token: [-2, -1] -> 1 / (1 + e^-1); [-1, -1] -> 0.5
    assert same(score("prob_norm(normalization=token)", **base), [1 / (1 + 1 / E), 0.5])
    # pmi: [-2, -1] again; [-2, 1] -> e / (e^-2 + e) = 1 / (1 + e^-3)
    assert same(score("prob_norm(normalization=pmi)", **base),
                [1 / (1 + 1 / E), 1 / (1 + E**-3)])
    # none: [-3, -5] -> 1 / (1 + e^2) for gold 1
    assert same(score("prob_norm", **base), [1 / (1 + 1 / E), 1 / (1 + E**2)])


def test_brier_score():
    got = score("brier_score",
                choice_logprobs=[[0.0, 0.0], [-INF, 0.0], [math.log(0.75), math.log(0.25)],
                                 [-INF, -INF]],
                gold_index=[0, 1, 1, 0])
    # p = [.5, .5]: .25 + .25; p = [0, 1] on gold 1: 0; p = [.75, .25], gold 1:
    # .75^2 + .75^2 = 1.125; all -inf: -inf - (-inf) is NaN (lm_eval.utils.softmax), which
    # aggregate and compare then refuse
    assert same(got[:2], [0.5, 0.0])
    assert got[2] == pytest.approx(1.125, rel=1e-15)
    assert math.isnan(got[3])
    assert resolve("brier_score")[0].higher_is_better is False


# --- rankings ----------------------------------------------------------------------------


def test_mrr():
    got = score(
        "mrr",
        choice_logprobs=[[-1.0, -1.0, -3.0], [-1.0, -2.0, -3.0], [-1.0, -2.0, -3.0],
                         [-1.0, -INF, 0.0]],
        gold_index=[[1], [2], [1, 2], [1]],
    )
    # a tie with the top shares rank 0 -> 1; two above -> 1/3; best gold has one above ->
    # 1/2; -inf below -1 and 0 -> 1/3
    assert same(got, [1.0, 1 / 3, 0.5, 1 / 3])
    normalized = score("mrr(length_normalization=true)", choice_logprobs=[[-4.0, -2.0]] * 3
                       + [[0.0, -1.0]] * 2, gold_index=[[1], [1], [1], [1], [0]],
                       choices=[["aaaa", "b"]] * 3 + [["", "b"]] * 2)
    # [-4/4, -2/1] = [-1, -2]: gold 1 is second; an empty choice of log-probability 0 is
    # 0 / 0 = NaN, which ranks first: 1/2 for gold 1, 1 for gold 0
    assert normalized == [0.5, 0.5, 0.5, 0.5, 1.0]
    assert score("mrr", choice_logprobs=[[-4.0, -2.0]], gold_index=[[1]]) == [1.0]


def test_recall_at_k():
    lp = [[-1.0, -2.0, -3.0]] * 3 + [[0.0, 0.0, 0.0]] * 2 + [[-1.0, -INF, -2.0]]
    gold = [[2], [2], [1], [0], [2], [1]]
    # top 2 of [-1, -2, -3]: {0, 1}; ties go to the first index: top 2 of [0, 0, 0] is
    # {0, 1}; -inf last: top 2 of [-1, -inf, -2] is {0, 2}
    assert score("recall@2", choice_logprobs=lp, gold_index=gold) == [0.0, 0.0, 1.0, 1.0, 0.0,
                                                                      0.0]
    assert score("recall@3", choice_logprobs=lp, gold_index=gold) == [1.0] * 6
    assert score("recall@10", choice_logprobs=lp, gold_index=gold) == [1.0] * 6
    assert score("recall@1", choice_logprobs=lp, gold_index=gold) == score(
        "acc", choice_logprobs=lp, gold_index=gold)


def test_recall_k_must_be_positive():
    with pytest.raises(EvalframeError, match=r"recall@0.*k='0' is invalid"):
        ef.score(frame(choice_logprobs=[[-1.0]], gold_index=[0]), ["recall@0"])
    with pytest.raises(EvalframeError, match="k=-1"):
        M.recall_at_k("choice_logprobs", "gold_index", k=-1)


# --- TruthfulQA --------------------------------------------------------------------------


def test_mc1():
    lp = [[-1.0, -2.0, -0.5], [-1.0, -0.5, -2.0], [-1.0, -2.0, -0.1], [-1.0, -1.0, -3.0]]
    # the first two choices compete: 0 wins, 1 wins, 0 wins (the -0.1 is MC2's), a tie: 0
    assert score("mc1", choice_logprobs=lp, len_mc1=[2, 2, 2, 2]) == [1.0, 0.0, 1.0, 1.0]
    # without len_mc1 every choice competes: 2 wins, 1, 2, tie at 0
    assert score("mc1", choice_logprobs=lp) == [0.0, 0.0, 0.0, 1.0]


def test_mc2():
    got = score(
        "mc2",
        choice_logprobs=[[-1.0, -3.0, -1.0, -1.0, -2.0], [-1.0, -1.0, -2.0, -3.0],
                         [-1.0, -1.0, -2.0], [-5.0, -1.0, -1.0], [-9.0, -1000.0, -1001.0]],
        gold_index=[[0, 2, 3], [0, 1, 3], [0, 1], [0], [0, 1]],
        len_mc1=[2, 1, 2, 1, 1],
    )
    # block [-1, -1, -2], true 2 and 3: 2e^-1 / (2e^-1 + e^-2) = 2 / (2 + e^-1)
    # block [-1, -2, -3], true 1 and 3 (a gap): (e^-1 + e^-3) / (e^-1 + e^-2 + e^-3)
    # block [-2], choice 1 is MC1's: no true answer, 0.0; block [-1, -1], none true: 0.0
    # block [-1000, -1001], true 1: 1 / (1 + e^-1) (lm-eval: exp underflows, NaN)
    want = [2 / (2 + 1 / E), (E**-1 + E**-3) / (E**-1 + E**-2 + E**-3), 0.0, 0.0,
            1 / (1 + 1 / E)]
    assert same(got, want)
    # without len_mc1 the whole row is MC2's: e^-1 / (e^-1 + e^-1)
    assert score("mc2", choice_logprobs=[[-1.0, -1.0]], gold_index=[[0]]) == [0.5]


# --- nulls -------------------------------------------------------------------------------


NULL_CASES = {
    "acc": {"choice_logprobs": [[-1.0, -2.0], None, [-1.0, None], [-1.0, -2.0]],
            "gold_index": [[0], [0], [0], None]},
    "acc_norm": {"choice_logprobs": [[-1.0, -2.0], [-1.0, -2.0], [-1.0, -2.0], None],
                 "gold_index": [[0], [0], [0], [0]],
                 "choices": [["a", "b"], None, ["a", None], ["a", "b"]]},
    "acc_token": {"choice_logprobs": [[-1.0, -2.0], [-1.0, -2.0], [-1.0, -2.0], [-1.0, -2.0]],
                  "gold_index": [[0], [0, None], [0], [0]],
                  "choice_token_counts": [[1, 1], [1, 1], [None, 1], None]},
    "acc_pmi": {"choice_logprobs": [[-1.0, -2.0], [-1.0, -2.0], [-1.0, -2.0], [-1.0, -2.0]],
                "gold_index": [[0], [0], [None], [0]],
                "unconditioned_logprobs": [[0.0, 0.0], None, [0.0, 0.0], [0.0, None]]},
    "mc2": {"choice_logprobs": [[-1.0, -2.0], [-1.0, -2.0], None, [-1.0, -2.0]],
            "gold_index": [[0, 1], [0, 1], [0, 1], None], "len_mc1": [1, None, 1, 1]},
}


@pytest.mark.parametrize("metric", sorted(NULL_CASES))
def test_null_inputs_and_null_entries_give_null(metric):
    # at the expression level (ef.score then scores a missing answer as the worst score)
    spec, _ = resolve(metric)
    columns = NULL_CASES[metric]
    got = frame(**columns).select(spec.function(**{c: c for c in columns}).alias(metric))
    assert got[metric][0] is not None and got[metric].to_list()[1:] == [None, None, None]


def test_null_gold_rows_still_check_the_choices():
    data = frame(choice_logprobs=[[-1.0], []], gold_index=[None, None])
    with pytest.raises(EvalframeError, match="empty choice list"):
        ef.score(data, ["acc"])


# --- errors ------------------------------------------------------------------------------


def _raises(metric: str, pattern: str, **columns) -> str:
    with pytest.raises(EvalframeError) as error:
        ef.score(frame(**columns), [metric])
    message = str(error.value)
    assert re.search(pattern, message), message
    assert message.startswith(f"metric {metric.split('(')[0]!r}: "), message
    return message


def test_gold_out_of_range_names_metric_column_count_and_first_row():
    message = _raises(
        "acc", r"2 row\(s\) have a gold index in 'gold_index' out of range",
        choice_logprobs=[[-1.0, -2.0], [-1.0, -2.0], [-1.0], [-1.0, -2.0]],
        gold_index=[[0], [2], [0], [1, -1]],
    )
    assert "expected 0 <= gold index < the number of choices in 'choice_logprobs'" in message
    assert "First offending row: 1 (choice_logprobs=[-1.0, -2.0], gold_index=[2])" in message


def test_negative_int_gold_raises():
    _raises("acc_pmi", r"1 row\(s\) have a gold index .* First offending row: 0",
            choice_logprobs=[[-1.0, -2.0]], gold_index=[-1],
            unconditioned_logprobs=[[0.0, 0.0]])


def test_empty_choice_list_and_empty_gold_list_raise():
    _raises("acc", r"1 row\(s\) have an empty choice list in 'choice_logprobs'.*"
            r"First offending row: 1", choice_logprobs=[[-1.0], []], gold_index=[[0], [0]])
    _raises("mrr", r"1 row\(s\) have an empty gold list in 'gold_index'.*First offending row: 0",
            choice_logprobs=[[-1.0], [-1.0]], gold_index=[[], [0]])


@pytest.mark.parametrize(
    ("metric", "role", "other"),
    [("acc_norm", "choices", [["a"], ["a", "b", "c"]]),
     ("acc_bytes", "choices", [["a"], ["a"]]),
     ("acc_token", "choice_token_counts", [[1], [1, 2, 3]]),
     ("acc_pmi", "unconditioned_logprobs", [[0.0], [0.0]])],
)
def test_unequal_lists_raise(metric, role, other):
    message = _raises(
        metric, rf"1 row\(s\) have a different number of entries in 'choice_logprobs' and "
        rf"'{role}'.*First offending row: 1",
        choice_logprobs=[[-1.0], [-1.0, -2.0]], gold_index=[0, 0], **{role: other},
    )
    assert f"{role}=" in message  # the other column's value is shown


@pytest.mark.parametrize(
    "metric", ["acc_token", "prob(normalization=token)", "prob_norm(normalization=token)"]
)
def test_token_counts_below_one_raise(metric):
    # a log-probability over 0 tokens is divided by 0 (lighteval: ZeroDivisionError)
    message = _raises(
        metric, r"2 row\(s\) have a token count below 1 in 'choice_token_counts'.*"
        r"expected token counts >= 1",
        choice_logprobs=[[-1.0, -2.0]] * 3, gold_index=[[0]] * 3,
        choice_token_counts=[[1, 2], [1, -2], [0, 3]],
    )
    assert "First offending row: 1" in message and "choice_token_counts=[1, -2]" in message


IMPOSSIBLE = [
    ("NaN", [-1.0, NAN]),
    ("+inf", [INF, -1.0]),  # lm-eval: +inf wins every argmax
    ("positive", [-1.0, 0.5]),
    ("just past the tolerance", [2e-6, -1.0]),
]


@pytest.mark.parametrize("metric", INVARIANT_METRICS_ALL := [
    "acc", "acc_norm", "acc_bytes", "acc_token", "acc_pmi", "prob", "prob_norm", "mrr",
    "recall@2", "brier_score", "mc1", "mc2"])
@pytest.mark.parametrize(("kind", "bad"), IMPOSSIBLE, ids=[kind for kind, _ in IMPOSSIBLE])
def test_impossible_log_probabilities_raise(metric, kind, bad):
    lp = [[-1.0, -2.0], bad, [-3.0, -1.0], bad]
    message = _raises(
        metric, r"2 row\(s\) have a log-probability in 'choice_logprobs' that is NaN or above "
        r"0 \(\+inf included\).*expected a log-probability: <= 0 \(up to 1e-06 above 0 is "
        r"taken as rounding\); -inf \(probability 0\) is allowed",
        choice_logprobs=lp, gold_index=[[0], [1], [1], [0]], choices=[["a", "b"]] * 4,
        choice_token_counts=[[1, 1]] * 4, unconditioned_logprobs=[[-1.0, -1.0]] * 4,
        len_mc1=[1] * 4,
    )
    assert "First offending row: 1" in message


@pytest.mark.parametrize("metric", ["acc_pmi", "prob_norm(normalization=pmi)"])
@pytest.mark.parametrize("bad", [NAN, INF, -INF, 0.5])
def test_unconditioned_log_probabilities_must_be_finite(metric, bad):
    # PMI subtracts them: -inf would make the choice's score +inf (or NaN against -inf)
    _raises(
        metric, r"1 row\(s\) have a log-probability in 'unconditioned_logprobs' that is NaN, "
        r"infinite or above 0.*First offending row: 0",
        choice_logprobs=[[-1.0, -2.0], [-1.0, -2.0]], gold_index=[0, 0],
        unconditioned_logprobs=[[-1.0, bad], [-1.0, -2.0]],
    )


def test_impossible_values_are_counted_over_the_whole_input():
    # 3 000 rows in 3 chunks, bad values in rows 10 (NaN), 1 500 and 2 999 (positive), and
    # an out-of-range gold in row 5: one error, naming row 5 first, counting the others
    lp = [[-1.0, -2.0]] * 3000
    lp[10], lp[1500], lp[2999] = [NAN, -1.0], [0.5, -1.0], [-1.0, 3.0]
    gold = [0] * 3000
    gold[5] = 7
    data = frame(choice_logprobs=lp, gold_index=gold)
    chunked = pl.concat([data.slice(i, 1000) for i in range(0, 3000, 1000)], rechunk=False)
    with pytest.raises(EvalframeError) as error:
        ef.score(chunked, ["acc"])
    message = str(error.value)
    assert message.startswith("metric 'acc': 1 row(s) have a gold index in 'gold_index' out "
                              "of range")
    assert "First offending row: 5" in message
    assert ("a log-probability in 'choice_logprobs' that is NaN or above 0 (+inf included) in "
            "3 row(s) (first: row 10)") in message


def test_len_mc1_outside_the_choices_raises():
    _raises("mc1", r"1 row\(s\) have len_mc1 in 'len_mc1' outside the choices.*"
            r"1 <= len_mc1 <= the number.*First offending row: 1",
            choice_logprobs=[[-1.0, -2.0], [-1.0, -2.0]], len_mc1=[2, 0])
    _raises("mc2", r"2 row\(s\) have len_mc1 .*0 <= len_mc1 < the number.*First offending row: 0",
            choice_logprobs=[[-1.0, -2.0], [-1.0, -2.0]], gold_index=[[0], [0]],
            len_mc1=[2, -1])


def test_brier_score_needs_one_gold():
    _raises("brier_score", r"1 row\(s\) have several gold indices in 'gold_index'",
            choice_logprobs=[[-1.0, -2.0], [-1.0, -2.0]], gold_index=[[0], [0, 1]])


def test_normalization_needs_its_role_and_a_known_value():
    data = frame(choice_logprobs=[[-1.0]], gold_index=[0])
    with pytest.raises(EvalframeError, match=r"normalization='char' needs the 'choices' role"):
        ef.score(data, ["prob_norm(normalization=char)"])
    with pytest.raises(EvalframeError, match="normalization"):
        ef.score(data, ["prob_norm(normalization=bytes)"])
    with pytest.raises(EvalframeError, match="'choices' role"):
        M.mrr("choice_logprobs", "gold_index", length_normalization=True)
    with pytest.raises(EvalframeError, match="invalid"):
        M.prob("choice_logprobs", "gold_index", normalization="char")


def test_wrong_dtype_is_refused_before_compute():
    data = pl.DataFrame({"choice_logprobs": [["a"]], "gold_index": [0]})
    with pytest.raises(EvalframeError, match=r"role 'choice_logprobs' .* expected list\[float\]"):
        ef.score(data, ["acc"])


# --- layout and engine -------------------------------------------------------------------


@pytest.mark.slow
def test_ragged_rows_equal_rows_scored_one_by_one():
    rng = random.Random(7)
    rows = []
    for _ in range(300):
        n = rng.randint(1, 7)
        rows.append(([-abs(round(rng.gauss(-5, 3), 1)) for _ in range(n)],
                     sorted(rng.sample(range(n), rng.randint(1, n)))))
    metrics = ["acc", "prob", "prob_norm", "mrr", "recall@2", "mc2"]
    data = frame(choice_logprobs=[lp for lp, _ in rows], gold_index=[g for _, g in rows])
    together = ef.score(data, metrics)
    for index in range(len(rows)):
        alone = ef.score(data.slice(index, 1), metrics)
        for metric in metrics:
            assert alone[metric].item() == together[metric][index], (metric, index)


def test_column_mapping_expressions_and_dtypes():
    data = pl.DataFrame({"lp": [[-1, -2], [-3, -1]], "answer": [0, 0], "opts": [["a", "bb"]] * 2},
                        schema={"lp": pl.List(pl.Int32), "answer": pl.Int8,
                                "opts": pl.List(pl.String)})
    scored = ef.score(data, ["acc", "acc_norm"],
                      columns={"choice_logprobs": "lp", "gold_index": "answer", "choices": "opts"})
    assert scored["acc"].to_list() == [1.0, 0.0]
    assert scored["acc_norm"].to_list() == [1.0, 0.0]  # [-1, -1] tie; [-3, -0.5]
    arrays = data.with_columns(pl.col("lp").cast(pl.Array(pl.Float64, 2)))
    assert arrays.select(M.acc("lp", pl.col("answer")).alias("acc"))["acc"].to_list() == [
        1.0, 0.0]


def test_prob_norm_picks_the_columns_present():
    spec, _ = resolve("prob_norm")
    assert spec.role_sets[0] == ("choice_logprobs", "gold_index", "choices",
                                 "choice_token_counts", "unconditioned_logprobs")
    assert spec.role_sets[-1] == ("choice_logprobs", "gold_index")
    data = frame(choice_logprobs=[[-2.0, -1.0]], gold_index=[1], choice_token_counts=[[2, 1]])
    # token: [-1, -1] -> 0.5
    assert ef.score(data, ["prob_norm(normalization=token)"])[
        "prob_norm(normalization=token)"].to_list() == [0.5]


def test_registry_entries():
    names = {"acc", "acc_norm", "acc_bytes", "acc_token", "acc_pmi", "prob", "prob_norm", "mrr",
             "recall@{k}", "brier_score", "mc1", "mc2"}
    specs = {spec.name: spec for spec in ef.metrics.all_metrics() if spec.name in names}
    assert set(specs) == names
    for spec in specs.values():
        assert spec.level == "sample"
        assert spec.reference.package in ("lm-eval", "lighteval")
        assert spec.description and spec.edge_rules
    assert specs["acc_pmi"].divergences and specs["recall@{k}"].divergences
    assert resolve("recall@5")[1] == {"k": 5}


# --- invariants (as tests/test_common.py checks every registered metric) ------------------


def choice_frame(rng: random.Random) -> pl.DataFrame:
    """40 rows of 2-6 choices with every choice role; row 3's log-probabilities are null."""
    rows = []
    for _ in range(40):
        n = rng.randint(2, 6)
        rows.append({
            "choice_logprobs": [-abs(round(rng.gauss(-6, 3), rng.choice([0, 1, 3])))
                                for _ in range(n)],
            "gold_index": rng.randrange(n),
            "choices": [rng.choice(["Paris", " été", "東京", "e\u0301", "x y"]) for _ in range(n)],
            "choice_token_counts": [rng.randint(1, 5) for _ in range(n)],
            "unconditioned_logprobs": [-abs(round(rng.gauss(-4, 2), 2)) for _ in range(n)],
            "len_mc1": rng.randint(1, n - 1),
        })
    data = frame(**{key: [row[key] for row in rows] for key in rows[0]})
    return data.with_columns(
        choice_logprobs=pl.when(pl.int_range(pl.len()) == 3).then(None)
        .otherwise(pl.col("choice_logprobs"))
    )


INVARIANT_METRICS = ["acc", "acc_norm", "acc_bytes", "acc_token", "acc_pmi", "prob",
                     "prob_norm", "mrr", "recall@2", "brier_score", "mc1", "mc2",
                     "acc_norm(count_delimiter=true)", "prob_norm(normalization=pmi)"]


@pytest.mark.parametrize("metric", INVARIANT_METRICS)
def test_invariants(metric):
    data = choice_frame(random.Random(1234))
    scored = ef.score(data, [metric])
    assert scored.columns == [*data.columns, metric, f"{metric}:missing", "_evalframe"]
    assert scored.schema[metric] == pl.Float64
    assert scored.select(data.columns).equals(data)
    values = unscored(scored, metric)
    assert values[3] is None and values.null_count() == 1
    assert unscored(ef.score(data.reverse(), [metric]), metric).reverse().equals(values)
    assert ef.score(data.lazy(), [metric]).collect().equals(scored)
    chunked = pl.concat([data.slice(0, 7), data.slice(7, 20), data.slice(27)], rechunk=False)
    assert chunked.n_chunks() > 1
    assert ef.score(chunked, [metric]).equals(scored)
    assert ef.score(chunked.lazy(), [metric]).collect(engine="streaming").equals(scored)
    with pytest.raises(EvalframeError, match=re.escape(repr(metric))):
        ef.score(data.drop("choice_logprobs"), [metric])
