"""lighteval's math extraction cascade on hostile inputs: per-response timeouts, killable
workers, the warning that counts what was not extracted, and the options that set them.

The pathological inputs are the ones that used to hang: a 200 kB ``\\boxed{1+1+...}``
(latex2sympy parses it for minutes; lighteval's own 5 s alarm cannot run where polars
calls the kernel, outside the main thread) and 120 kB responses for ``lighteval_latex``.
The tests give a small timeout, so each takes a few seconds at most.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import re
import threading
import time
import warnings

import polars as pl
import pytest

import evalframe as ef
from evalframe import EvalframeError
from evalframe import metrics as M

pytest.importorskip("latex2sympy2_extended", reason="latex2sympy2_extended is not installed")

# the module (the package exports a function of the same name)
lm = importlib.import_module("evalframe.extract.lighteval_math")

#: \boxed{1+1+...+1}, 200 kB: latex2sympy runs for minutes on it (past 60 s unbounded).
BOXED = "\\boxed{" + "+".join(["1"] * 100_000) + "}"
#: 120 kB of the boxed sum inside a display environment: lighteval_latex's slow case.
DISPLAY = "$$" + "+".join(["1"] * 60_000) + "$$"


def _extract(texts, extractor, **options):
    frame = pl.DataFrame({"prediction": texts}, schema={"prediction": pl.String})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        started = time.monotonic()
        out = ef.extract(frame, extractor, **options)
        elapsed = time.monotonic() - started
    late = [w for w in caught if issubclass(w.category, lm.ExtractionTimeoutWarning)]
    return out, late, elapsed


@pytest.fixture(scope="module", autouse=True)
def warm_workers():
    # a fresh worker process imports sympy and latex2sympy first: done once, here
    ef.extract(pl.DataFrame({"prediction": ["$1$"]}), "lighteval_math", timeout=5)


@pytest.mark.slow
@pytest.mark.parametrize(("extractor", "slow"), [("lighteval_math", BOXED),
                                                  ("lighteval_latex", DISPLAY)],
                         ids=["lighteval_math", "lighteval_latex"])
def test_a_response_past_the_timeout_is_not_extracted_and_counted(extractor, slow):
    texts = ["so $x=2$", slow, None, slow, "answer: $\\frac{1}{2}$"]
    out, late, elapsed = _extract(texts, extractor, timeout=1)
    # ef.extract runs the kernel where polars calls it (not the main thread): the killable
    # worker processes, each response under its 1 s budget
    assert elapsed < 120, elapsed  # unbounded, it ran past 200 s; a busy machine adds start-up
    assert out["extracted"].to_list() == ["x=2", None, None, None, "\\frac{1}{2}"]
    assert out["extraction_rule"].to_list() == ["latex", "timeout", None, "timeout", "latex"]
    (warning,) = late
    message = str(warning.message)
    assert message.startswith(
        f"extractor {extractor!r}: 2 response(s) (1 distinct) ran past the 1 s timeout and "
        "count as not extracted (answer null, rule 'timeout'); first: row 1 of the 5 "
        "extracted together"
    )
    assert "timeout=" in message


@pytest.mark.slow
def test_the_budget_holds_in_the_main_thread_without_workers():
    # extract_one in this (main) thread: the signal cuts the parse at the budget
    started = time.monotonic()
    assert lm.extract_one(BOXED, lm.ExtractOptions(("latex", "expr"), 0.5)) == (None, "timeout")
    assert time.monotonic() - started < 3
    # a normal response is not affected, and the budget is gone afterwards
    assert lm.extract_one("so $x=2$", lm.ExtractOptions(("latex",), 0.5)) == ("x=2", "latex")
    assert lm._DEADLINE.get() is None


@pytest.mark.slow
def test_a_budget_alarm_swallowed_by_the_parser_still_counts_as_a_timeout(monkeypatch):
    # sympy and antlr have bare ``except`` clauses: when the budget's alarm lands in one,
    # the parse merely fails and the cascade falls back to the match's text ("latex-text").
    # That text must not come back: it is the answer of an interrupted parse.
    def swallowing_find(text, patterns, timeout):
        # the suppress is what a bare except in a parser does
        with lm._Alarm.limit(5, "parsing"), contextlib.suppress(BaseException):
            time.sleep(2)
        return lm.Found(["1+1"], "1+1", "latex-text")

    monkeypatch.setattr(lm, "find", swallowing_find)
    started = time.monotonic()
    assert lm.extract_one("$1+1$", lm.ExtractOptions(("latex",), 0.3)) == (None, "timeout")
    assert time.monotonic() - started < 1.5


@pytest.mark.slow
def test_a_budget_alarm_swallowed_mid_parse_fires_again_until_the_parse_stops(monkeypatch):
    # an alarm can land in code that swallows it and then goes on working (a garbage
    # collector's callback: "Exception ignored in ..."); one alarm would leave the rest of
    # the parse unbounded. The budget's alarm repeats until the block is left.
    def swallow_once_then_work(text, patterns, timeout):
        with lm._Alarm.limit(30, "parsing"):
            with contextlib.suppress(BaseException):
                time.sleep(1)  # the first alarm (0.3 s) lands here and is swallowed
            for _ in range(1000):  # 10 s of work, unless interrupted again
                time.sleep(0.01)
        return lm.Found(["1+1"], "1+1", "latex")

    monkeypatch.setattr(lm, "find", swallow_once_then_work)
    started = time.monotonic()
    assert lm.extract_one("$1+1$", lm.ExtractOptions(("latex",), 0.3)) == (None, "timeout")
    assert time.monotonic() - started < 2
    assert lm._DEADLINE.get() is None


def test_outside_the_main_thread_without_workers_the_budget_is_checked_between_parses():
    # no signal there: a parse runs to its end, but no further parse starts after the
    # deadline. 3 000 small environments, each parsed: far past a budget of 0.2 s
    many = " ".join(f"$x_{{{i}}} = $" for i in range(3000))
    found = {}

    def run():
        found["answer"] = lm.extract_one(many, lm.ExtractOptions(("latex",), 0.2))

    started = time.monotonic()
    thread = threading.Thread(target=run)
    thread.start()
    thread.join(30)
    assert found["answer"] == (None, "timeout")
    assert time.monotonic() - started < 10


@pytest.mark.slow
def test_a_worker_past_the_hard_limit_is_killed_and_the_response_counted(monkeypatch):
    # no budget of its own (timeout=None), and the hard limit cut to 0.5 s: the parent kills
    # the worker still parsing, the response counts as not extracted, the next one is
    # answered by a fresh worker
    monkeypatch.setattr(lm, "PARALLEL_THRESHOLD", 0)  # to the workers, whatever the thread
    warm = lm._extract_distinct(["$1$"], lm.ExtractOptions(("latex",), 5.0), 1)
    assert warm == [("1", "latex")]  # a warm worker: the first answer may wait for imports
    monkeypatch.setattr(lm, "hard_limit", lambda timeout: 0.5)
    frame = pl.DataFrame({"t": [BOXED, "so $x=2$"]})
    with pytest.warns(lm.ExtractionTimeoutWarning, match=r"1 response\(s\) \(1 distinct\) ran "
                      r"past the hard limit of 0.5 s"):
        out = frame.lazy().select(
            lm.lighteval_math("t", timeout=None, workers=1).struct.unnest()
        ).collect()
    assert out.rows() == [(None, "timeout"), ("x=2", "latex")]


@pytest.mark.subprocess
def test_many_texts_go_to_the_workers_in_the_main_thread_too(monkeypatch):
    monkeypatch.setattr(lm, "PARALLEL_THRESHOLD", 1)
    calls = []
    real = lm.POOL.run
    monkeypatch.setattr(lm.POOL, "run", lambda *a, **k: calls.append(a[0]) or real(*a, **k))
    out = lm._extract_distinct(["$1$", "$2$", BOXED], lm.ExtractOptions(("latex",), 1.0), 2)
    assert calls == ["evalframe.extract.lighteval_math:extract_one"]
    assert out == [("1", "latex"), ("2", "latex"), (None, "timeout")]


@pytest.mark.slow
def test_the_extract_timeout_option():
    # given to the extractors that take one, the others left as they are
    out, late, _ = _extract([BOXED, "\\boxed{4}"], ["boxed", "lighteval_math"], timeout=0.5)
    assert out["extracted_boxed"].to_list()[1] == "4"
    assert out["extraction_rule_lighteval_math"].to_list() == ["timeout", "latex"]
    assert len(late) == 1
    with pytest.raises(EvalframeError, match=r"timeout=1 is for the extractors that parse "
                       r"with sympy.*'boxed' take\(s\) none"):
        ef.extract(pl.DataFrame({"prediction": ["x"]}), "boxed", timeout=1)
    for bad in (0, -1, "5", True, float("nan")):
        with pytest.raises(EvalframeError, match=re.escape(f"timeout={bad!r} is invalid")):
            ef.extract(pl.DataFrame({"prediction": ["x"]}), "lighteval_math", timeout=bad)


@pytest.mark.parametrize(
    ("options", "message"),
    [({"timeout": 0}, "timeout=0 is invalid"), ({"timeout": "1"}, "timeout='1' is invalid"),
     ({"workers": -1}, "workers=-1 is invalid"), ({"workers": 1.5}, "workers=1.5 is invalid")],
)
def test_invalid_options_are_reported_when_the_expression_is_built(options, message):
    for function in (lm.lighteval_math, lm.lighteval_latex, lm.lighteval_expr):
        with pytest.raises(EvalframeError, match=f"{function.__name__}: {message}"):
            function("t", **options)


@pytest.mark.subprocess
def test_a_response_past_the_timeout_is_a_missing_answer_of_a_metric():
    # exact_match through the extractor: the response that ran out has no answer, so its
    # score is null (a missing answer, which aggregate counts as wrong by default)
    frame = pl.DataFrame({"prediction": ["so \\boxed{2}", BOXED], "gold": ["2", "2"]})
    extractor = functools.partial(lm.lighteval_math, timeout=0.5)
    with pytest.warns(lm.ExtractionTimeoutWarning):
        got = frame.lazy().select(
            M.exact_match("prediction", "gold", extractor=extractor).alias("em")
        ).collect()
    assert got["em"].to_list() == [1.0, None]


def test_the_default_timeout_and_the_limits_are_documented():
    assert lm.EXTRACTION_TIMEOUT == 10.0 and lm.hard_limit(10.0) == 15.0
    assert lm.hard_limit(None) == 600.0
    for function in (lm.lighteval_math, lm.lighteval_latex, lm.lighteval_expr):
        doc = function.__doc__
        assert "{options}" not in doc and "default :data:`EXTRACTION_TIMEOUT`" in doc
        assert "no limit on the input's size" in doc
