"""The math pair kernel: distinct pairs, caches, workers, timeouts, options, errors."""

from __future__ import annotations

import importlib.util
import threading

import polars as pl
import pytest

import evalframe.metrics._math_equal as kernel
from evalframe import EvalframeError
from evalframe.metrics._math_equal import (
    BoundedCache,
    MathTimeoutWarning,
    hard_limit,
    math_equal_stats,
    math_equivalent,
)

pytest.importorskip("math_verify", reason="math_verify is not installed")

SLOW = "$(x+1)^{100000} - (x-1)^{100000}$"  # parsing takes far more than a second


@pytest.fixture(autouse=True)
def fresh_caches():
    kernel._PAIRS.clear()
    kernel._PARSED.clear()
    yield
    kernel._PAIRS.clear()
    kernel._PARSED.clear()


def _equal(predictions, golds, **options) -> list:
    frame = pl.DataFrame({"p": predictions, "g": golds}, schema={"p": pl.String, "g": pl.String})
    return frame.select(math_equivalent(pl.col("p"), pl.col("g"), **options))["p"].to_list()


def test_values_nulls_and_empty_strings():
    # by hand: 1/2 = 0.5; 50% = 1/2; 3 != 4; null -> null; '' parses to nothing -> False
    assert _equal(["$\\frac{1}{2}$", "50%", "3", None, "x", ""], ["0.5", "$\\frac12$", "4", "1",
                                                                 None, ""]) == [
        True, True, False, None, None, False,
    ]


def test_argument_order_is_gold_then_prediction():
    # verify is asymmetric: a relation gold 1 < x < 2 accepts the interval (1, 2) as a
    # prediction (the gold is turned into a set), not the other way round
    import math_verify as mv

    pairs = [("$(1,2)$", "$1<x<2$"), ("$1<x<2$", "$(1,2)$")]
    assert [mv.verify(mv.parse(g), mv.parse(p)) for p, g in pairs] == [True, False]
    assert _equal([p for p, _ in pairs], [g for _, g in pairs]) == [True, False]


def test_only_distinct_pairs_are_compared_and_strings_parsed_once(monkeypatch):
    calls = []
    real = kernel.compare_pairs

    def spy(pairs, options, **kwargs):
        calls.append(list(pairs))
        return real(pairs, options, **kwargs)

    monkeypatch.setattr(kernel, "compare_pairs", spy)
    before = math_equal_stats()
    predictions = ["1/2", "0.5", "1/2", "1/2", None] * 20
    golds = ["0.5", "0.5", "0.5", "2", "0.5"] * 20
    assert _equal(predictions, golds)[:5] == [True, True, True, False, None]
    assert len(calls) == 1
    assert sorted(calls[0]) == [("0.5", "0.5"), ("1/2", "0.5"), ("1/2", "2")]
    after = math_equal_stats()
    assert after["rows"] - before["rows"] == 80  # the null rows are not compared
    assert after["parsed_strings"] - before["parsed_strings"] == 3  # '1/2', '0.5', '2'
    # a second call is answered by the cache: nothing compared again
    _equal(predictions, golds)
    assert len(calls) == 1
    assert math_equal_stats()["cached_pairs"] - after["cached_pairs"] == 3


def test_options_are_part_of_the_cache_key():
    # pi against 3.14159: equal to 5 decimal places, not to 6
    assert _equal(["$3.14159$"], ["$\\pi$"], precision=6) == [False]
    assert _equal(["$3.14159$"], ["$\\pi$"], precision=5) == [True]
    # '7' has no LaTeX: with LaTeX-only extraction it parses to nothing
    assert _equal(["7"], ["7"], prediction_targets="latex") == [False]
    assert _equal(["7"], ["7"]) == [True]


def test_bounded_cache_never_grows_past_its_bounds():
    cache = BoundedCache(max_entries=3, max_bytes=100)
    for i in range(10):
        cache.put(i, i, 10)
    assert len(cache) == 3 and cache.get(9) == 9 and cache.get(0) is None
    cache.put("big", 0, 60)
    cache.put("bigger", 0, 60)  # 120 bytes do not fit: the oldest go first
    assert cache.bytes <= 100 and cache.get("big") is None and cache.get("bigger") == 0
    cache.put("huge", 0, 101)  # larger than the whole cache: not kept
    assert cache.get("huge") is None


def test_the_pair_cache_is_bounded(monkeypatch):
    small = BoundedCache(max_entries=5, max_bytes=10**6)
    monkeypatch.setattr(kernel, "_PAIRS", small)
    _equal([str(i) for i in range(50)], [str(i) for i in range(50)])
    assert len(small) == 5


def test_worker_processes_give_the_same_answers(monkeypatch):
    monkeypatch.setattr(kernel, "PARALLEL_THRESHOLD", 0)
    predictions = ["$\\frac{1}{2}$", "50%", "3", "\\boxed{\\{1,2\\}}", "garbage", "", "1,000"]
    golds = ["0.5", "0.5", "4", "$\\{2,1\\}$", "garbage", "", "1000"]
    before = math_equal_stats()["pairs_in_workers"]
    in_workers = _equal(predictions, golds, workers=2)
    assert math_equal_stats()["pairs_in_workers"] - before == len(predictions)
    kernel._PAIRS.clear()
    kernel._PARSED.clear()
    assert in_workers == _equal(predictions, golds, workers=0) == [
        True, True, False, True, False, False, True,
    ]


def test_outside_the_main_thread_pairs_go_to_workers():
    # polars' streaming engine runs kernels in its own threads, where signals (and so
    # math-verify's timeouts) cannot be set: such batches are sent to worker processes
    seen = []

    def run():
        before = math_equal_stats()["pairs_in_workers"]
        seen.append(_equal(["1/2"], ["0.5"]))
        seen.append(math_equal_stats()["pairs_in_workers"] - before)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    assert seen == [[True], 1]


def test_streaming_engine_agrees_with_in_memory():
    frame = pl.DataFrame(
        {"p": ["1/2", "0.25", None, "2"] * 50, "g": ["0.5", "$\\frac14$", "1", "3"] * 50}
    )
    expr = math_equivalent(pl.col("p"), pl.col("g")).alias("eq")
    eager = frame.select(expr)
    kernel._PAIRS.clear()
    streamed = frame.lazy().select(expr).collect(engine="streaming")
    assert streamed.equals(eager)
    assert eager["eq"].to_list()[:4] == [True, True, None, False]


@pytest.mark.slow
def test_a_timeout_scores_false_warns_and_is_counted():
    before = math_equal_stats()
    with pytest.warns(MathTimeoutWarning) as caught:
        got = _equal([SLOW, SLOW, "2"], ["2", "2", "2"], timeout=1)
    assert got == [False, False, True]
    message = str(caught[0].message)
    assert "1 distinct (prediction, gold) pair(s) covering 2 row(s)" in message
    assert "hit the 1 s" in message and "first: prediction='$(x+1)^{100000}" in message
    after = math_equal_stats()
    assert after["timeouts"] - before["timeouts"] == 1
    assert after["timeout_rows"] - before["timeout_rows"] == 2


def test_a_parse_past_the_timeout_whose_alarm_was_swallowed_still_counts(monkeypatch):
    # sympy and antlr catch exceptions with a bare except: math-verify's alarm can be
    # swallowed, its "Timeout during" warning never logged, and the parse return late
    import time

    real = kernel._Backend.parse

    def late_parse(self, text, targets, boxed_first, timeout):
        parsed = real(self, text, targets, boxed_first, timeout)
        if text == "7":
            time.sleep(1.05)
        return parsed

    monkeypatch.setattr(kernel._Backend, "parse", late_parse)
    before = math_equal_stats()
    with pytest.warns(MathTimeoutWarning):
        got = _equal(["7", "2"], ["7", "2"], timeout=1, workers=0)
    assert got == [False, True]  # 7 = 7, but the parse took past the 1 s timeout
    assert math_equal_stats()["timeouts"] - before["timeouts"] == 1


@pytest.mark.subprocess
def test_a_worker_stuck_past_the_hard_limit_is_killed_and_the_pair_counted(monkeypatch):
    monkeypatch.setattr(kernel, "PARALLEL_THRESHOLD", 0)
    _equal(["1"], ["1"], workers=1)  # a warm worker: the first answer may wait for imports
    kernel._PAIRS.clear()
    # the hard limit far below math-verify's own timeout: the parent kills the worker
    monkeypatch.setattr(kernel, "hard_limit", lambda timeout: 0.3)
    before = math_equal_stats()
    with pytest.warns(MathTimeoutWarning):
        got = _equal([SLOW, "2"], ["2", "2"], workers=1, timeout=5)
    assert got == [False, True]  # the next pair is answered by a restarted worker
    after = math_equal_stats()
    assert after["worker_restarts"] - before["worker_restarts"] == 1
    assert after["timeouts"] - before["timeouts"] == 1


def test_hard_limit_covers_two_parses_and_four_comparisons():
    assert hard_limit(5) == 35.0 and hard_limit(None) == 600.0


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"precision": -1}, "precision=-1 is invalid"),
        ({"precision": 1.5}, "precision=1.5 is invalid"),
        ({"timeout": 0}, "timeout=0 is invalid"),
        ({"timeout": 2.5}, "timeout=2.5 is invalid"),
        ({"gold_targets": ("latex", "text")}, "gold_targets=.* is invalid"),
        ({"prediction_targets": ()}, "prediction_targets=.* is invalid"),
        ({"workers": -1}, "workers=-1 is invalid"),
        ({"flavour": "sympy"}, "flavour='sympy' is invalid"),
    ],
)
def test_invalid_options_are_reported_when_the_expression_is_built(options, message):
    with pytest.raises(EvalframeError, match=message):
        math_equivalent(pl.col("p"), pl.col("g"), **options)


def test_a_missing_math_verify_says_how_to_install_it(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec",
        lambda name, *a: None if name == "math_verify" else real(name, *a),
    )
    with pytest.raises(EvalframeError, match=r"pip install 'evalframe\[math\]'"):
        math_equivalent(pl.col("p"), pl.col("g"))


def test_an_error_in_a_worker_is_raised_in_the_caller(monkeypatch):
    monkeypatch.setattr(kernel, "PARALLEL_THRESHOLD", 0)
    options = kernel.check_options(
        "t", gold_targets=("latex",), prediction_targets=("latex",), precision=6, timeout=5
    )
    broken = options.__class__(**{**options.__dict__, "flavour": "no-such-flavour"})
    with pytest.raises(RuntimeError, match="math comparison failed in a worker process"):
        kernel.compare_in_workers([("1", "1")], broken, 1)
