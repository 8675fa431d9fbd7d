"""maj@k, avg@k, G-pass@k_τ and mG-pass@k: hand values, tie rule, normalisers, errors.

Expected values come from hand computation (shown in comments), Python's own
``max(key=count)`` / ``Counter.most_common`` voting, or exact rational hypergeometric
sums (``fractions`` + ``math.comb``), never from evalframe.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from fractions import Fraction

import polars as pl
import pytest

import evalframe as ef
from evalframe import EvalframeError
from evalframe.metrics import avg_at_k, g_pass_at_k, maj_at_k, mg_pass_at_k
from evalframe.metrics.registry import resolve
from evalframe.metrics.sampling import threshold_count


def exact_g_pass(n: int, c: int, k: int, m: int) -> Fraction:
    """P(X >= m), X ~ Hypergeom(n, c, k), as an exact sum of pmf terms (0 if m > min(c,k))."""
    if m > min(c, k):
        return Fraction(0)
    total = math.comb(n, k)
    return sum(
        (Fraction(math.comb(c, j) * math.comb(n - c, k - j), total)
         for j in range(m, min(c, k) + 1)),
        Fraction(0),
    )


def exact_mg_pass(n: int, c: int, k: int) -> Fraction:
    low = math.ceil(k * 0.5)
    return 2 * sum((exact_g_pass(n, c, k, i) for i in range(low + 1, k + 1)), Fraction(0)) / k


# ---------------------------------------------------------------------------- maj@k


def test_majority_hand_values():
    frame = pl.DataFrame({
        "gens": [["Paris", "Paris", "London"], ["London", "London", "Paris", "Paris"],
                 ["a", "b", "c", "a", "a"], None],
        "gold": [["Paris"], ["Paris"], ["z", "b"], ["x"]],
    })
    got = frame.select(maj_at_k("gens", "gold", k=3)).to_series().to_list()
    # row 0: Paris 2 vs London 1 -> Paris -> 1.0
    # row 1 (first 3): London 2, Paris 1 -> London -> 0.0
    # row 2 (first 3): a, b, c tie at 1 -> "a" occurs first -> not in {z, b} -> 0.0
    # row 3: null generations -> null
    assert got == [1.0, 0.0, 0.0, None]
    # k=4 on row 1: London 2, Paris 2 -> tie -> London (first) -> 0.0
    assert frame.slice(1, 1).select(maj_at_k("gens", "gold", k=4)).item() == 0.0


def test_tie_rule_matches_python_max_and_counter():
    rng = random.Random(11)
    rows, golds = [], []
    for _ in range(400):
        rows.append([rng.choice("abcd") for _ in range(rng.randint(3, 8))])
        golds.append(rng.choice("abcd"))
    frame = pl.DataFrame({"gens": rows, "gold": golds})
    got = frame.select(maj_at_k("gens", "gold", k=3)).to_series().to_list()
    for gens, gold, score in zip(rows, golds, got, strict=True):
        first = gens[:3]
        by_max = max(first, key=first.count)  # lighteval MajAtK's vote
        by_counter = Counter(first).most_common(1)[0][0]
        assert by_max == by_counter
        assert score == float(by_max == gold)


@pytest.mark.parametrize("longest", [6, 80])  # counted pairwise / through a sort
def test_vote_of_ragged_and_long_lists_matches_python_max(longest, monkeypatch):
    from evalframe.metrics import sampling

    rng = random.Random(longest)
    rows = []
    for _ in range(300):
        if rng.random() < 0.05:
            rows.append(None)
            continue
        size = rng.randint(0, longest)
        rows.append([rng.choice(["a", "b", "", "é", "a ", None]) for _ in range(size)])
    expected = [max(row, key=row.count) if row else None for row in rows]
    lists = pl.Series(rows, dtype=pl.List(pl.String))
    assert sampling.majority_votes(lists).to_list() == expected
    monkeypatch.setattr(sampling, "_PAIRWISE_VOTES", 0)  # every width through the sort
    assert sampling.majority_votes(lists).to_list() == expected
    assert sampling.majority_votes(lists.slice(7, 100)).to_list() == expected[7:107]


def test_majority_of_many_generations_and_k_equal_width():
    rng = random.Random(3)
    rows = [[rng.choice("abcde") for _ in range(40)] for _ in range(200)]
    golds = [rng.choice("abcde") for _ in rows]
    frame = pl.DataFrame({"gens": rows, "gold": golds})
    for k in (1, 2, 33, 40):
        got = frame.select(maj_at_k("gens", "gold", k=k)).to_series().to_list()
        assert got == [
            float(max(gens[:k], key=gens[:k].count) == gold)
            for gens, gold in zip(rows, golds, strict=True)
        ]


def test_majority_normalizer_changes_the_vote():
    frame = pl.DataFrame({"gens": [[" Rome", "Rome ", "Oslo", "Oslo"]], "gold": ["Rome"]})
    # none: " Rome", "Rome ", "Oslo" all differ -> tie -> " Rome" (first) != "Rome" -> 0.0
    assert frame.select(maj_at_k("gens", "gold", k=3)).item() == 0.0
    # strip: "Rome" x2 vs "Oslo" x1 -> Rome -> 1.0; with k=4 it is a tie won by Rome (first)
    assert frame.select(maj_at_k("gens", "gold", k=3, normalizer="strip")).item() == 1.0
    assert frame.select(maj_at_k("gens", "gold", k=4, normalizer="strip")).item() == 1.0


def test_majority_squad_and_helm_normalizers():
    frame = pl.DataFrame({
        "gens": [["The Cat!", "a cat", "dog"], ["1,000", "1000", "10"]],
        "gold": ["cat", "1000"],
    })
    # squad: lower, drop punctuation and articles -> "cat", "cat", "dog" -> cat -> 1.0;
    # "1,000" -> "1000": "1000" x2 -> 1.0
    assert frame.select(maj_at_k("gens", "gold", k=3, normalizer="squad")).to_series().to_list() \
        == [1.0, 1.0]
    # helm: same for these (numbers become floats on both sides: "1000.0")
    assert frame.select(maj_at_k("gens", "gold", k=3, normalizer="helm")).to_series().to_list() \
        == [1.0, 1.0]
    # none: "The Cat!", "a cat", "dog" tie -> "The Cat!" != "cat"; "1,000" first of a tie
    assert frame.select(maj_at_k("gens", "gold", k=3)).to_series().to_list() == [0.0, 0.0]


def test_majority_errors_and_nulls():
    frame = pl.DataFrame({"gens": [["a", "b"], ["a"], ["a", None, "b"]], "gold": ["a", "a", "a"]})
    with pytest.raises(EvalframeError, match=r"'maj@2'.*1 row\(s\) have fewer than k=2 "
                                             r"generations.*First offending row: 1"):
        frame.select(maj_at_k("gens", "gold", k=2))
    # a null among the first k generations -> null; beyond the first k it does not matter
    assert frame.slice(2, 1).select(maj_at_k("gens", "gold", k=2)).item() is None
    assert frame.slice(2, 1).select(maj_at_k("gens", "gold", k=1)).item() == 1.0
    with pytest.raises(EvalframeError, match="empty gold list"):
        pl.DataFrame({"gens": [["a"]], "gold": [[]]}, schema={
            "gens": pl.List(pl.String), "gold": pl.List(pl.String)
        }).select(maj_at_k("gens", "gold", k=1))
    with pytest.raises(EvalframeError, match="k=0 is invalid"):
        maj_at_k("gens", "gold", k=0)


# ---------------------------------------------------------------------------- avg@k


def test_avg_hand_values_and_passed():
    frame = pl.DataFrame({
        "gens": [["4", "5", "4", "4"], ["x", "y", "z", "w"], ["4", None, "4", "4"]],
        "gold": [["4"], ["y", "w"], ["4"]],
        "passed": [[True, False, True, True], [False, True, False, True], [True, None, True, True]],
    })
    # first 3: 2/3, 1/3; a null among the first 3 -> null
    got = frame.select(avg_at_k("gens", "gold", k=3)).to_series().to_list()
    assert got[:2] == pytest.approx([2 / 3, 1 / 3], abs=1e-15) and got[2] is None
    flags = frame.select(avg_at_k(passed="passed", k=3)).to_series().to_list()
    assert flags[:2] == pytest.approx([2 / 3, 1 / 3], abs=1e-15) and flags[2] is None
    # k=1 ignores the later null
    assert frame.select(avg_at_k(passed="passed", k=1)).to_series().to_list() == [1.0, 0.0, 1.0]
    with pytest.raises(EvalframeError, match=r"3 row\(s\) have fewer than k=5"):
        frame.select(avg_at_k("gens", "gold", k=5))


def test_avg_gold_alternatives_diverge_from_lighteval_first_gold():
    # lighteval's AvgAtK scores against golds[0] only ("London"): 1/3 for this case
    # (its fixture "Avg at K - Multiple Correct"); evalframe takes any alternative: 3/3.
    frame = pl.DataFrame({"gens": [["Paris", "London", "Berlin", "Tokyo"]],
                          "gold": [["London", "Paris", "Berlin"]]})
    assert frame.select(avg_at_k("gens", "gold", k=3)).item() == 1.0
    first_only = frame.with_columns(pl.col("gold").list.first())
    assert first_only.select(avg_at_k("gens", "gold", k=3)).item() == pytest.approx(1 / 3)


# ------------------------------------------------------------------- G-pass, mG-pass


def _cases() -> list[tuple[int, int]]:
    rng = random.Random(5)
    cases = [(8, 4), (8, 0), (8, 8), (16, 1), (16, 15), (5, 5), (10, 7), (64, 20)]
    cases += [(n, rng.randint(0, n)) for n in (rng.randint(10, 200) for _ in range(40))]
    return cases


@pytest.mark.parametrize("k", [1, 2, 5, 8, 10])
@pytest.mark.parametrize("tau", [0.0, 0.25, 0.5, 0.7, 0.75, 1.0])
def test_g_pass_against_exact_hypergeometric_sums(k, tau):
    cases = [(n, c) for n, c in _cases() if n >= k]
    frame = pl.DataFrame(cases, schema=["n", "c"], orient="row")
    got = frame.select(g_pass_at_k("n", "c", k=k, tau=tau)).to_series().to_list()
    m = threshold_count(k, tau)
    want = [float(exact_g_pass(n, c, k, m)) for n, c in cases]
    assert got == pytest.approx(want, rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("k", [1, 2, 3, 4, 5, 8, 10])
def test_mg_pass_against_exact_sums(k):
    cases = [(n, c) for n, c in _cases() if n >= k]
    frame = pl.DataFrame(cases, schema=["n", "c"], orient="row")
    got = frame.select(mg_pass_at_k("n", "c", k=k)).to_series().to_list()
    want = [float(exact_mg_pass(n, c, k)) for n, c in cases]
    assert got == pytest.approx(want, rel=1e-12, abs=1e-15)


def test_threshold_count_follows_float64_like_lighteval():
    # 25 * 0.28 == 7.000000000000001 in float64, so ceil gives 8, as np.ceil(k * t) does
    # in lighteval (the exact rational value would give 7).
    assert 25 * 0.28 > 7
    assert threshold_count(25, 0.28) == 8 and threshold_count(10, 0.7) == 7
    assert threshold_count(5, 0.5) == 3 and threshold_count(4, 0.0) == 1


def test_g_pass_hand_value_and_roles():
    # n=8, c=4, k=5, tau=0.25: m = ceil(1.25) = 2; P(X >= 2) = 1 - P(X=1)
    # = 1 - C(4,1) C(4,4) / C(8,5) = 1 - 4/56 = 13/14
    frame = pl.DataFrame({
        "n": [8], "c": [4],
        "passed": [[True, False, True, False, True, False, True, False]],
        "gens": [["a", "b", "a", "c", "a", "d", "a", "e"]], "gold": ["a"],
    })
    want = pytest.approx(13 / 14, rel=1e-14)
    assert frame.select(g_pass_at_k("n", "c", k=5, tau=0.25)).item() == want
    assert frame.select(g_pass_at_k(passed="passed", k=5, tau=0.25)).item() == want
    assert frame.select(g_pass_at_k(prediction="gens", gold="gold", k=5, tau=0.25)).item() == want
    # mG-pass@5: (2/5) * (P(X>=4) + P(X>=5)) = (2/5) * (4/56 + 0) = 1/35
    assert frame.select(mg_pass_at_k("n", "c", k=5)).item() == pytest.approx(1 / 35, rel=1e-14)


def test_g_pass_errors_and_nulls():
    frame = pl.DataFrame({"n": [8, 3, 4, None], "c": [9, 1, 2, 1]})
    with pytest.raises(EvalframeError, match=r"1 row\(s\) have c > n"):
        frame.select(g_pass_at_k("n", "c", k=2, tau=0.5))
    with pytest.raises(EvalframeError, match=r"'mg-pass@4'.*1 row\(s\) have k=4 > n"):
        frame.slice(1).select(mg_pass_at_k("n", "c", k=4))
    assert frame.slice(1).select(g_pass_at_k("n", "c", k=2, tau=1.0)).to_series().to_list() == \
        [0.0, pytest.approx(1 / 6, rel=1e-14), None]
    # m = 2: (3, 1) has c < m -> 0.0; (4, 2): P(X = 2) = C(2,2) / C(4,2) = 1/6; null -> null
    with pytest.raises(EvalframeError, match="tau=1.5 is invalid"):
        g_pass_at_k("n", "c", k=2, tau=1.5)


def test_registry_names_resolve():
    spec, params = resolve("g-pass@16_0.75")
    assert spec.name == "g-pass@{k}_{tau}" and params == {"k": 16, "tau": 0.75}
    spec, params = resolve("mg-pass@16")
    assert spec.name == "mg-pass@{k}" and params == {"k": 16}
    assert resolve("maj@8")[0].name == "maj@{k}" and resolve("avg@8")[1] == {"k": 8}
    assert resolve("pass@8")[0].name == "pass@{k}"


def test_engine_scores_generations():
    frame = pl.DataFrame({"prediction": [["4", "4", "5", "6"], None], "gold": ["4", "4"]})
    names = ["maj@3", "avg@4", "g-pass@4_1.0", "mg-pass@2"]
    scored = ef.score(frame, names)
    # maj@3: "4" x2 -> 1.0; avg@4: 2/4; g-pass@4_1.0 with n=4, c=2, k=4: need 4 of 2 -> 0.0;
    # mg-pass@2: (2/2) * P(X >= 2), X ~ Hypergeom(4, 2, 2): C(2,2)/C(4,2) = 1/6
    assert scored.row(0)[2:6] == pytest.approx((1.0, 0.5, 0.0, 1 / 6))
    # no generations: a missing answer, scored wrong (0.0) and flagged
    assert scored.row(1)[2:10] == (0.0, 0.0, 0.0, 0.0, True, True, True, True)


# ------------------------------------------------------- extractor=, gold_extractor=, equivalence=

LETTERS = {"extractor": "lighteval_letters", "gold_extractor": "lighteval_letters"}


@pytest.mark.slow
def test_extractor_compares_the_extracted_answers():
    frame = pl.DataFrame({
        "gens": [["Answer: B", "answer: (B)", "so C", "B"], ["x", "Answer: D", "(d)", "E"]],
        "gold": ["(B)", "D"],
    })
    # lighteval_letters: "Answer: B" -> B, "answer: (B)" -> B, "so C" -> C (delimited),
    # "B" -> B; "x" -> none, "Answer: D" -> D, "(d)" -> none (lower case), "E" -> none (four
    # choices: A-D). Golds: "(B)" -> B, "D" -> D.
    got = frame.select(
        avg_at_k("gens", "gold", k=4, **LETTERS).alias("avg"),
        avg_at_k("gens", "gold", k=4, extractor="lighteval_letters").alias("raw_gold"),
        g_pass_at_k(prediction="gens", gold="gold", k=2, tau=1.0, **LETTERS).alias("g"),
    )
    # avg: 3/4 and 1/4; without the gold extractor "(B)" matches nothing: 0, then D: 1/4
    assert got["avg"].to_list() == [0.75, 0.25]
    assert got["raw_gold"].to_list() == [0.0, 0.25]
    # g-pass@2_1.0 = P(both draws correct) = C(c, 2) / C(4, 2): 3/6 and 0
    assert got["g"].to_list() == [pytest.approx(0.5), 0.0]


def test_no_answer_found_is_wrong_not_null_and_gold_falls_back_to_its_text():
    frame = pl.DataFrame({"gens": [["nothing", "Answer: C"], ["A", "q"]], "gold": ["C", "q"]})
    got = frame.select(avg_at_k("gens", "gold", k=2, **LETTERS)).to_series().to_list()
    # row 0: "nothing" has no letter -> wrong (not null), "Answer: C" -> C: 1/2;
    # row 1: gold "q" has no letter -> compared as it is: "A" -> A != q, "q" -> no letter
    assert got == [0.5, 0.0]
    # the raw-gold fallback applies to the whole row (lighteval: any gold without a label)
    alternatives = pl.DataFrame({"gens": [["A", "B"]], "gold": [["A", "zz"]]})
    assert alternatives.select(avg_at_k("gens", "gold", k=2, **LETTERS)).item() == 0.5
    # nulls are still judged on the raw input: a null generation gives a null row
    nulls = pl.DataFrame({"gens": [["Answer: C", None]], "gold": ["C"]})
    assert nulls.select(avg_at_k("gens", "gold", k=2, **LETTERS)).item() is None


def test_normalizer_runs_before_the_extractor():
    # " A. x\nB." unstripped: no label at the start (a space first), B at a line start;
    # stripped: "A. x\nB." has A at the very start (priority 200 < 210)
    frame = pl.DataFrame({"gens": [[" A. x\nB."]], "gold": ["A"]})
    plain = frame.select(avg_at_k("gens", "gold", k=1, extractor="lighteval_letters_anchored"))
    strip = frame.select(avg_at_k("gens", "gold", k=1, normalizer="strip",
                                  extractor="lighteval_letters_anchored"))
    assert (plain.item(), strip.item()) == (0.0, 1.0)


def test_maj_votes_over_texts_by_default_and_over_answers_on_request():
    frame = pl.DataFrame({
        "gens": [["Answer: B", "The answer is B.", "C", "C"]], "gold": ["B"],
    })
    # vote="text": "C" x2 is the most frequent text -> its letter C != B -> 0.0
    # vote="answer": letters B, B, C, C tie at 2 -> B comes first -> 1.0
    text = frame.select(maj_at_k("gens", "gold", k=4, **LETTERS)).item()
    answer = frame.select(maj_at_k("gens", "gold", k=4, vote="answer", **LETTERS)).item()
    assert (text, answer) == (0.0, 1.0)
    # a missing answer is a vote like the others: two with no letter beat one B -> 0.0
    missing = pl.DataFrame({"gens": [["x", "y", "B"]], "gold": ["B"]})
    assert missing.select(maj_at_k("gens", "gold", k=3, vote="answer", **LETTERS)).item() == 0.0


def test_defaults_are_unchanged():
    frame = pl.DataFrame({"gens": [["4", " 4", "5"], ["x", "y", "x"]], "gold": ["4", "x"]})
    for function in (maj_at_k, avg_at_k):
        plain = frame.select(function("gens", "gold", k=3)).to_series()
        given = frame.select(function("gens", "gold", k=3, extractor=None, gold_extractor=None,
                                      equivalence="exact")).to_series()
        assert plain.equals(given)
    assert frame.select(avg_at_k("gens", "gold", k=3)).to_series().to_list() == [
        pytest.approx(1 / 3), pytest.approx(2 / 3)]


def test_options_through_requests_and_their_errors():
    frame = pl.DataFrame({"prediction": [["Answer: A", "B"]], "gold": ["A"]})
    scored = ef.score(frame, ["avg@2(extractor=lighteval_letters)",
                              "maj@2(extractor='lighteval_letters', vote=answer)"])
    # avg: A, B vs A -> 1/2; maj (answers A, B tie) -> A -> 1.0
    assert scored.row(0)[2:4] == (0.5, 1.0)
    with pytest.raises(EvalframeError, match="extractor='nope' is unknown"):
        ef.score(frame, ["avg@2(extractor=nope)"])
    with pytest.raises(EvalframeError, match="equivalence"):
        ef.score(frame, ["avg@2(equivalence=fuzzy)"])
    with pytest.raises(EvalframeError, match="vote"):
        ef.score(frame, ["maj@2(vote=best)"])
    with pytest.raises(EvalframeError, match="equivalence='fuzzy' is invalid"):
        avg_at_k("prediction", "gold", k=2, equivalence="fuzzy")


def test_a_custom_function_extractor():
    frame = pl.DataFrame({"gens": [["x=4", "x=5"]], "gold": ["4"]})

    def after_equals(text: pl.Expr) -> pl.Expr:
        return text.str.extract(r"=(\d+)", 1)

    assert frame.select(avg_at_k("gens", "gold", k=2, extractor=after_equals)).item() == 0.5


def _math_available() -> bool:
    import importlib.util

    return (importlib.util.find_spec("math_verify") is not None
            and importlib.util.find_spec("evalframe.metrics._math_equal") is not None)


needs_math = pytest.mark.skipif(not _math_available(), reason="math-verify is not installed")


@needs_math
def test_math_equivalence_counts_equal_values():
    frame = pl.DataFrame({
        "gens": [["$\\frac{1}{2}$", "0.5", "1/3", "nothing"], ["4", "four", "5", "4.0"]],
        "gold": ["0.5", "4"],
    })
    got = frame.select(
        avg_at_k("gens", "gold", k=4, equivalence="math").alias("avg"),
        avg_at_k("gens", "gold", k=4).alias("exact"),
        maj_at_k("gens", "gold", k=4, equivalence="math").alias("maj"),
        g_pass_at_k(prediction="gens", gold="gold", k=1, tau=1.0,
                    equivalence="math").alias("g"),
    )
    # 1/2 = 0.5, "0.5" = 0.5; 1/3 and "nothing" are not. "4" and "4.0" equal 4; "four" and
    # "5" do not. Exact: only "0.5" and "4" are the gold strings.
    assert got["avg"].to_list() == [0.5, 0.5]
    assert got["exact"].to_list() == [0.25, 0.25]
    # maj: every text distinct in row 0 -> the first, 1/2 -> equal; row 1: "4" (x1, first)
    assert got["maj"].to_list() == [1.0, 1.0]
    # g-pass@1_1.0 = c / n
    assert got["g"].to_list() == [0.5, 0.5]


@needs_math
def test_math_equivalence_after_extraction():
    frame = pl.DataFrame({"gens": [["so \\boxed{\\frac{2}{4}}", "\\boxed{3}"]], "gold": ["0.5"]})
    got = frame.select(avg_at_k("gens", "gold", k=2, extractor="boxed", equivalence="math"))
    # boxed: "\\frac{2}{4}" (= 1/2, equal to 0.5) and "3"
    assert got.item() == 0.5
