"""`ask`: distinct prompts, order, statistics, progress, and a killed run resumed."""

from __future__ import annotations

import asyncio
import io
import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

from evalframe import EvalframeError
from evalframe.judge.progress import Progress
from evalframe.judge.run import Replies, Reply, RunStats, ask, ask_async, judge_identity
from tests.judge.fake_server import FakeServer, reply_for


def counting_judge():
    calls = Counter()

    def judge(prompt: str) -> str:
        calls[prompt] += 1
        return f"<{prompt}>"

    return judge, calls


def test_each_distinct_prompt_is_asked_once_and_replies_keep_the_input_order():
    judge, calls = counting_judge()
    prompts = ["b", "a", "b", "c", "a", "b"]
    replies = ask(prompts, judge, quiet=True)
    assert isinstance(replies, Replies) and isinstance(replies, list)
    assert [r.text for r in replies] == ["<b>", "<a>", "<b>", "<c>", "<a>", "<b>"]
    assert calls == {"a": 1, "b": 1, "c": 1}
    stats = replies.stats
    assert (stats.prompts, stats.distinct, stats.hits, stats.misses) == (6, 3, 0, 3)
    assert (stats.answered, stats.errors, stats.requests) == (3, 0, 3)
    assert stats.hit_rate == 0.0 and stats.seconds > 0


def test_an_empty_run_asks_nothing():
    replies = ask([], lambda prompt: "x", quiet=True)
    assert replies == [] and replies.stats.distinct == 0 and replies.stats.hit_rate is None


def test_errors_are_kept_in_place_never_dropped():
    def judge(prompt: str) -> str:
        if int(prompt) % 3 == 0:
            raise ValueError(f"cannot judge {prompt}")
        return "ok"

    replies = ask([str(i) for i in range(10)], judge, concurrency=3, quiet=True)
    assert len(replies) == 10
    assert [r.error for r in replies] == [
        f"ValueError: cannot judge {i}" if i % 3 == 0 else None for i in range(10)]
    assert replies.stats.errors == 4 and replies.stats.answered == 6


def test_a_cached_rerun_calls_nothing(tmp_path):
    judge, calls = counting_judge()
    path = tmp_path / "judgments.sqlite"
    first = ask(["x", "y", "x"], judge, cache=path, quiet=True)
    assert first.stats.requests == 2 and first.stats.hits == 0
    second = ask(["y", "x", "z"], judge, cache=str(path), quiet=True)
    assert [(r.text, r.cached) for r in second] == [("<y>", True), ("<x>", True), ("<z>", False)]
    assert (second.stats.hits, second.stats.misses, second.stats.requests) == (2, 1, 1)
    assert second.stats.hit_rate == pytest.approx(2 / 3)
    assert calls == {"x": 1, "y": 1, "z": 1}


def test_a_cache_object_is_left_open_and_counts(tmp_path):
    from evalframe.judge.cache import JudgmentCache

    judge, _ = counting_judge()
    with JudgmentCache(tmp_path / "c.sqlite") as cache:
        ask(["a", "b"], judge, cache=cache, quiet=True)
        ask(["a", "b", "c"], judge, cache=cache, quiet=True)
        assert (cache.stats.hits, cache.stats.misses, cache.stats.stored) == (2, 3, 3)
        assert len(cache) == 3


def test_ask_works_inside_a_running_event_loop():
    async def main():
        inner = ask(["p"], str.upper, quiet=True)  # e.g. from a notebook cell
        direct = await ask_async(["q"], str.upper, quiet=True)
        return inner[0].text, direct[0].text

    assert asyncio.run(main()) == ("P", "Q")


def test_bad_arguments_are_clear_errors():
    with pytest.raises(EvalframeError, match="got one string"):
        ask("a prompt", str.upper)
    with pytest.raises(EvalframeError, match="1 of 3 are not, the first at index 1: int 7"):
        ask(["a", 7, "b"], str.upper)
    with pytest.raises(EvalframeError, match="concurrency must be an int >= 1, got 0"):
        ask(["a"], str.upper, concurrency=0)


def test_judge_identity_of_a_function_and_of_a_server_judge():
    def judge(prompt):
        return "TIE"

    assert judge_identity(judge) == {
        "backend": "callable",
        "name": "tests.judge.test_run.test_judge_identity_of_a_function_and_of_a_server_judge"
                ".<locals>.judge"}
    pytest.importorskip("openai", reason="openai is not installed (the judge extra)")
    from evalframe.judge.backends import OpenAIJudge

    assert judge_identity(OpenAIJudge("m", seed=4))["seed"] == 4


def test_reply_and_stats_values():
    assert Reply("A") == Reply("A", None, False) and Reply("A").ok
    assert not Reply(None, "boom").ok
    with pytest.raises(AttributeError):
        Reply("A").text = "B"
    stats = RunStats(prompts=4, distinct=4, hits=1, misses=3, answered=3, errors=0,
                     requests=6, seconds=2.0)
    assert stats.hit_rate == 0.25 and stats.requests_per_second == 3.0


# -- progress ---------------------------------------------------------------------------------


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_is_silent_when_stderr_is_not_a_terminal(capsys):
    ask(["a", "b"], str.upper)
    assert capsys.readouterr().err == ""  # pytest's captured stderr is not a terminal


def test_progress_draws_counts_on_stderr(monkeypatch):
    screen = Terminal()
    monkeypatch.setattr(sys, "stderr", screen)

    def judge(prompt: str) -> str:
        if prompt == "bad":
            raise ValueError("no")
        return "ok"

    ask(["a", "bad", "c", "a"], judge, concurrency=1)
    final = screen.getvalue().rstrip("\n").rsplit("\r", 1)[-1]
    parts = final.split(" | ")
    assert parts[:3] == ["judging 3/3", "errors 1", "cached 0"]
    assert parts[3].endswith(" req/s") and screen.getvalue().endswith("\n")


def test_quiet_wins_over_a_terminal(monkeypatch):
    screen = Terminal()
    monkeypatch.setattr(sys, "stderr", screen)
    ask(["a"], str.upper, quiet=True)
    ask(["b"], str.upper, progress=False)
    assert screen.getvalue() == ""
    ask(["c"], str.upper, progress=True, quiet=True)
    assert screen.getvalue() == ""


def test_progress_line_rate_and_throttling():
    screen = Terminal()
    bar = Progress(100, stream=screen, interval=60)
    bar._start -= 10  # ten seconds in
    bar.update(done=1, requests=1)  # the first draw
    bar.update(done=2, requests=50)  # throttled: not drawn
    assert screen.getvalue().count("\r") == 1
    assert bar.line(bar._start + 10).split(" | ")[3] == "5.0 req/s"
    bar.update(done=100, requests=100)  # the last one is always drawn
    assert screen.getvalue().count("\r") == 2
    bar.close()
    assert "judging 100/100" in screen.getvalue().rsplit("\r", 1)[-1]


# -- a killed run, resumed -------------------------------------------------------------------

RUNNER = textwrap.dedent("""
    import json, sys
    from evalframe.judge.backends import OpenAIJudge
    from evalframe.judge.run import ask

    base_url, cache, n, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    judge = OpenAIJudge("fake-judge", base_url=base_url, api_key_env="FAKE_JUDGE_KEY",
                        timeout=5.0, max_retries=2, backoff=0.01)
    replies = ask([f"prompt {i}" for i in range(n)], judge, cache=cache, concurrency=4,
                  quiet=True)
    stats = replies.stats
    with open(out, "w") as handle:
        json.dump({"texts": [r.text for r in replies], "errors": [r.error for r in replies],
                   "hits": stats.hits, "requests": stats.requests}, handle)
""")

KEY = "sk-resume-test"


def run_judge(script: Path, server: FakeServer, cache: Path, n: int, out: Path,
              **popen) -> subprocess.Popen:
    env = {**os.environ, "FAKE_JUDGE_KEY": KEY}
    return subprocess.Popen([sys.executable, str(script), server.url, str(cache), str(n),
                             str(out)], env=env, **popen)


def cached_rows(cache: Path) -> dict[str, str]:
    with sqlite3.connect(cache) as db:
        return dict(db.execute("SELECT prompt, reply FROM judgments").fetchall())


@pytest.mark.subprocess
def test_a_killed_run_resumes_without_asking_twice_or_losing_answers(tmp_path):
    pytest.importorskip("openai", reason="openai is not installed (the judge extra)")
    n, concurrency = 240, 4
    prompts = [f"prompt {i}" for i in range(n)]
    script = tmp_path / "run_judge.py"
    script.write_text(RUNNER)
    cache = tmp_path / "judgments.sqlite"
    with FakeServer(delay=0.02, api_key=KEY, lifetime=60, max_requests=2000) as server:
        # 1. start, and SIGKILL the run in the middle (after 80 requests reached the server)
        first = run_judge(script, server, cache, n, tmp_path / "killed.json")
        deadline = time.monotonic() + 30
        while server.requests < 80:
            assert first.poll() is None, "the run ended before it could be killed"
            assert time.monotonic() < deadline
            time.sleep(0.005)
        first.send_signal(signal.SIGKILL)
        assert first.wait(timeout=10) == -signal.SIGKILL
        before = cached_rows(cache)
        asked_first = Counter(server.counts)
        assert 0 < len(before) < n
        assert set(asked_first.values()) == {1}
        # every stored answer is the server's answer; only requests in flight were lost
        assert before == {p: reply_for(p) for p in before}
        in_flight = set(asked_first) - set(before)
        assert len(in_flight) <= concurrency

        # 2. restart: the dead run's claims are taken over at once
        server.reset_counts()
        out = tmp_path / "resumed.json"
        start = time.monotonic()
        assert run_judge(script, server, cache, n, out).wait(timeout=60) == 0
        assert time.monotonic() - start < 30  # no waiting for the dead run's leases
        resumed = json.loads(out.read_text())
        assert all(count == 1 for count in server.counts.values())
        assert set(server.counts) == set(prompts) - set(before)  # nothing stored asked again
        assert resumed["hits"] == len(before) and resumed["requests"] == n - len(before)
        assert resumed["errors"] == [None] * n

        # every prompt answered exactly once in the cache, nothing lost
        with sqlite3.connect(cache) as db:
            assert db.execute("SELECT count(*), count(DISTINCT prompt) FROM judgments"
                              ).fetchone() == (n, n)
            assert db.execute("SELECT count(*) FROM claims").fetchone() == (0,)
        assert cached_rows(cache) == {p: reply_for(p) for p in prompts}

        # 3. the same as an uninterrupted run
        server.reset_counts()
        fresh = tmp_path / "uninterrupted.json"
        assert run_judge(script, server, tmp_path / "fresh.sqlite", n, fresh).wait(60) == 0
        assert server.requests == n
        assert resumed["texts"] == json.loads(fresh.read_text())["texts"]

        # 4. a rerun with everything cached makes zero requests
        server.reset_counts()
        again = tmp_path / "again.json"
        assert run_judge(script, server, cache, n, again).wait(timeout=60) == 0
        assert server.requests == 0
        rerun = json.loads(again.read_text())
        assert rerun["texts"] == resumed["texts"] and rerun["hits"] == n
        assert rerun["requests"] == 0


@pytest.mark.slow
def test_a_fast_sync_judge_is_asked_in_batches_each_prompt_once_with_its_own_error(tmp_path):
    calls: dict[str, int] = {}
    lock = threading.Lock()

    def judge(prompt: str):
        with lock:
            calls[prompt] = calls.get(prompt, 0) + 1
        if prompt.endswith("7"):
            raise ValueError(f"boom {prompt}")
        return 3 if prompt.endswith("3") else prompt.upper()

    prompts = [f"p{i}" for i in range(5000)] * 2
    replies = ask(prompts, judge, cache=tmp_path / "c.sqlite", quiet=True)
    assert set(calls.values()) == {1} and len(calls) == 5000
    for prompt, reply in zip(prompts, replies, strict=True):
        if prompt.endswith("7"):
            assert reply.text is None and reply.error == f"ValueError: boom {prompt}"
        elif prompt.endswith("3"):
            assert reply.text is None and "returned int, expected str" in reply.error
        else:
            assert reply.text == prompt.upper() and reply.error is None
    again = ask(prompts, judge, cache=tmp_path / "c.sqlite", quiet=True)
    # answers are cached, errors are not: only the failed prompts are asked again
    assert sum(calls.values()) == 5000 + 1000
    assert [r.text for r in again] == [r.text for r in replies]


def test_a_slow_sync_judge_keeps_its_concurrency():
    in_flight = peak = 0
    lock = threading.Lock()

    def judge(prompt: str) -> str:
        nonlocal in_flight, peak
        with lock:
            in_flight += 1
            peak = max(peak, in_flight)
        time.sleep(0.02)
        with lock:
            in_flight -= 1
        return "ok"

    started = time.monotonic()
    replies = ask([f"q{i}" for i in range(64)], judge, concurrency=8, quiet=True)
    assert all(r.text == "ok" for r in replies)
    assert peak == 8
    assert time.monotonic() - started < 64 * 0.02 / 8 * 3  # the 8 threads stay busy
