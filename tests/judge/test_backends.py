"""The backends: Python callables and the OpenAI-compatible judge against a local fake server."""

from __future__ import annotations

import asyncio
import functools
import random
import socket
import sqlite3
import sys
import threading
import time

import pytest

from evalframe import EvalframeError
from evalframe.judge.backends import (
    CallableBackend,
    JudgeUnavailable,
    OpenAIJudge,
    callable_identity,
    retry_after_seconds,
    retry_delay,
)
from evalframe.judge.run import ask, judge_identity
from tests.judge.fake_server import FakeServer, reply_for

KEY = "sk-test-secret-4f1b9c"


@pytest.fixture
def openai_installed():
    pytest.importorskip("openai", reason="openai is not installed (the judge extra)")


@pytest.fixture
def server(monkeypatch, openai_installed):
    monkeypatch.setenv("FAKE_JUDGE_KEY", KEY)
    with FakeServer(api_key=KEY, lifetime=60, max_requests=2000) as running:
        yield running


def make_judge(server: FakeServer, **options) -> OpenAIJudge:
    settings = {"api_key_env": "FAKE_JUDGE_KEY", "timeout": 0.5, "max_retries": 3,
                "backoff": 0.01, "max_backoff": 0.05}
    settings.update(options)
    return OpenAIJudge("fake-judge", base_url=server.url, **settings)


def free_port() -> int:
    """A port nothing listens on (bound, then closed)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


# -- the OpenAI-compatible judge ------------------------------------------------------------


@pytest.mark.subprocess
def test_concurrent_requests_are_bounded_and_each_prompt_sent_once(server):
    server.delay = 0.1
    prompts = [f"question {i}" for i in range(33)]
    start = time.perf_counter()
    replies = ask(prompts + prompts[:5], make_judge(server, seed=7, max_tokens=16),
                  concurrency=8, quiet=True)
    elapsed = time.perf_counter() - start
    assert [r.text for r in replies] == [reply_for(p) for p in prompts + prompts[:5]]
    assert server.requests == 33 and set(server.counts.values()) == {1}
    # the first prompt alone (0.1 s), then 32 in four waves of 8: ~0.5 s; serial would be 3.3 s
    assert server.max_in_flight == 8
    assert elapsed < 1.5
    body = server.bodies[0]
    assert body["model"] == "fake-judge"
    assert body["temperature"] == 0.0 and body["max_tokens"] == 16 and body["seed"] == 7
    assert body["messages"] == [{"role": "user", "content": prompts[0]}]
    assert replies.stats.requests == 33 and replies.stats.errors == 0


@pytest.mark.slow
@pytest.mark.parametrize(
    ("faults", "requests"),
    [
        (["429"], 2),
        (["500", "503"], 3),
        (["502"], 2),
        (["timeout:1.0"], 2),  # the server sleeps past the client's 0.5 s timeout
        (["drop"], 2),
        (["drop", "500", "429"], 4),
    ],
)
def test_each_failure_kind_is_recovered_by_retries(server, faults, requests):
    server.inject("p1", *faults)
    replies = ask(["p0", "p1", "p2"], make_judge(server), quiet=True)
    assert [r.text for r in replies] == [reply_for("p0"), reply_for("p1"), reply_for("p2")]
    assert all(r.error is None for r in replies)
    assert server.counts["p1"] == requests and server.counts["p0"] == server.counts["p2"] == 1
    assert replies.stats.requests == requests + 2


@pytest.mark.slow
def test_retry_after_is_honoured(server):
    server.inject("slow", "429:1")
    start = time.perf_counter()
    reply = ask(["slow"], make_judge(server), quiet=True)[0]
    waited = time.perf_counter() - start
    assert reply.text == reply_for("slow")
    # without the header the backoff here is at most 0.05 s
    assert 1.0 <= waited < 2.5
    assert server.counts["slow"] == 2


@pytest.mark.subprocess
def test_garbage_replies_become_errors_and_are_not_retried(server):
    server.inject("html", "nonjson")
    server.inject("empty", "nofields")
    replies = ask(["ok", "html", "empty"], make_judge(server), quiet=True)
    assert replies[0].text == reply_for("ok")
    assert replies[1].text is None and "not a chat completion" in replies[1].error
    assert "upstream proxy error" in replies[1].error
    assert replies[2].text is None and "no choices" in replies[2].error
    assert server.counts["html"] == 1 and server.counts["empty"] == 1
    assert replies.stats.errors == 2 and replies.stats.answered == 1


def hostile_bodies() -> dict[str, tuple[str, str | None, str | None]]:
    """Prompt -> (a 200 body, the reply expected, a part of the error expected)."""
    import json

    whole = json.dumps({"choices": [{"message": {"role": "assistant", "content": "FIRST"}}]})
    return {
        # the body cut in half: the client cannot decode it
        "cut": (whole[: len(whole) // 2], None, "cannot be read: JSONDecodeError"),
        "empty": ("", None, "cannot be read: JSONDecodeError"),
        # the byte 0xff is not UTF-8
        "bytes": ('{"choices": [{"message": {"content": "x \udcff"}}]}', None,
                  "cannot be read: UnicodeDecodeError"),
        "extra": (whole + "}", None, "cannot be read: JSONDecodeError"),
        "null": ("null", None, "no choices"),
        "list": ("[1, 2]", None, "no choices"),
        "object": ('{"choices": {"0": {"message": {"content": "FIRST"}}}}', None, "no choices"),
        "strings": ('{"choices": ["FIRST"]}', None, "no message content"),
        "number": ('{"choices": [{"message": {"content": 5}}]}', None, "no message content"),
        # JSON may escape any code point, a lone surrogate too: it is text, kept as sent
        "surrogate": ('{"choices": [{"message": {"content": "FIRST \\ud800"}}]}',
                      "FIRST \ud800", None),
        "nul": ('{"choices": [{"message": {"content": "a\\u0000b"}}]}', "a\x00b", None),
    }


@pytest.mark.parametrize("first", ["cut", "number", "surrogate"])
def test_an_unreadable_200_body_is_that_prompts_error_never_a_crash(server, first):
    # each hostile body once, the pilot request (the run's first) included
    bodies = hostile_bodies()
    prompts = [first, *[prompt for prompt in bodies if prompt != first], "fine"]
    for prompt in bodies:
        server.inject(prompt, "raw:" + bodies[prompt][0])
    replies = ask(prompts, make_judge(server), concurrency=3, quiet=True)
    for prompt, reply in zip(prompts, replies, strict=True):
        text, error = bodies.get(prompt, (None, reply_for(prompt), None))[1:]
        assert reply.text == text, prompt
        assert (reply.error is None) if error is None else (error in reply.error), prompt
    # not retried: a server bug is not a passing fault
    assert all(server.counts[prompt] == 1 for prompt in prompts)
    assert replies.stats.errors == 9 and replies.stats.answered == 3


def test_final_failure_after_retries_is_a_reply_error(server):
    server.inject("doomed", *["500"] * 4)
    server.inject("refused", "400")
    replies = ask(["first", "doomed", "refused", "last"], make_judge(server, max_retries=3),
                  quiet=True)
    assert [r.ok for r in replies] == [True, False, False, True]
    assert replies[1].error == "HTTP 500: injected 500 (after 4 requests)"
    assert server.counts["doomed"] == 4
    assert replies[2].error.startswith("HTTP 400") and server.counts["refused"] == 1


@pytest.mark.slow
def test_timeout_exhausted_is_an_error_naming_the_timeout(server):
    server.inject("stuck", "timeout:0.8", "timeout:0.8")
    reply = ask(["warm", "stuck"], make_judge(server, max_retries=1, timeout=0.3),
                quiet=True)[1]
    assert reply.error == "no reply within the timeout of 0.3s (after 2 requests)"


def test_rejected_key_stops_the_run_up_front_without_showing_the_key(server, monkeypatch):
    monkeypatch.setenv("FAKE_JUDGE_KEY", "sk-wrong-key-77aa")
    with pytest.raises(JudgeUnavailable) as caught:
        ask(["a", "b", "c"], make_judge(server), quiet=True)
    message = str(caught.value)
    assert "rejected the API key" in message and "FAKE_JUDGE_KEY" in message
    assert "sk-wrong-key-77aa" not in message
    assert server.requests == 1  # the first prompt, sent alone, and nothing after it
    assert isinstance(caught.value, EvalframeError)


def test_unreachable_server_stops_the_run_up_front(openai_installed):
    judge = OpenAIJudge("m", base_url=f"http://127.0.0.1:{free_port()}/v1", api_key_env=None,
                        max_retries=2, backoff=0.01, timeout=1.0)
    start = time.perf_counter()
    with pytest.raises(JudgeUnavailable, match="cannot reach the judge.*after 3 requests"):
        ask(["a", "b"], judge, quiet=True)
    assert time.perf_counter() - start < 5


def test_missing_model_stops_the_run_up_front(server):
    server.inject("a", "404")
    with pytest.raises(JudgeUnavailable, match="HTTP 404: no model 'fake-judge'"):
        ask(["a", "b"], make_judge(server), quiet=True)


def test_rejected_key_mid_run_returns_what_was_answered(server):
    server.inject("p3", "401")
    prompts = [f"p{i}" for i in range(8)]
    with pytest.warns(RuntimeWarning, match="rejected the API key"):
        replies = ask(prompts, make_judge(server), concurrency=1, quiet=True)
    assert [r.text for r in replies[:3]] == [reply_for(p) for p in prompts[:3]]
    assert "rejected the API key" in replies[3].error
    assert all(r.error.startswith("not asked: ") for r in replies[4:])
    assert server.requests == 4 and len(replies) == 8


def test_server_going_away_mid_run_stops_after_four_connection_failures(server):
    prompts = [f"p{i}" for i in range(10)]
    for prompt in prompts[2:6]:
        server.inject(prompt, "drop")
    with pytest.warns(RuntimeWarning, match="4 prompts in a row could not reach"):
        replies = ask(prompts, make_judge(server, max_retries=0), concurrency=1, quiet=True)
    assert [r.ok for r in replies[:2]] == [True, True]
    assert all("connection error" in r.error for r in replies[2:6])
    assert all(r.error.startswith("not asked: 4 prompts in a row") for r in replies[6:])
    assert server.requests == 6


def test_the_key_is_never_in_repr_identity_cache_or_replies(server, tmp_path):
    judge = make_judge(server)
    path = tmp_path / "judgments.sqlite"
    server.inject("x", "500", "500", "500", "500")
    replies = ask(["x", "y"], judge, cache=path, quiet=True)
    assert KEY not in repr(judge) and KEY not in str(judge_identity(judge))
    assert all(KEY not in str(r) for r in replies)
    for file in tmp_path.iterdir():
        assert KEY.encode() not in file.read_bytes()
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT count(*) FROM judgments").fetchone() == (1,)


def test_no_key_for_the_openai_api_is_a_clear_error(monkeypatch, openai_installed):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(JudgeUnavailable, match="set the environment variable OPENAI_API_KEY"):
        ask(["a"], OpenAIJudge("gpt-4o-mini"), quiet=True)


def test_identity_holds_what_changes_the_answer_only(server):
    base = judge_identity(make_judge(server))
    assert base == {"backend": "openai-chat", "model": "fake-judge", "temperature": 0.0,
                    "max_tokens": 1024, "seed": None, "system": None, "extra_body": None}
    assert judge_identity(make_judge(server, timeout=9, max_retries=0, concurrency=2)) == base
    assert judge_identity(OpenAIJudge("fake-judge", base_url="http://127.0.0.1:1/v1")) == base
    assert judge_identity(make_judge(server, seed=3))["seed"] == 3
    assert judge_identity(make_judge(server, temperature=0)) == base
    assert judge_identity(make_judge(server, system="Be fair."))["system"] == "Be fair."


def test_system_message_and_extra_body_are_sent(server):
    ask(["q"], make_judge(server, system="Be fair.", extra_body={"top_k": 5}), quiet=True)
    body = server.bodies[0]
    assert body["messages"] == [{"role": "system", "content": "Be fair."},
                                {"role": "user", "content": "q"}]
    assert body["top_k"] == 5


def test_invalid_settings_are_rejected(openai_installed):
    with pytest.raises(EvalframeError, match="model must be a non-empty string"):
        OpenAIJudge("")
    with pytest.raises(EvalframeError, match="max_retries must be an int >= 0"):
        OpenAIJudge("m", max_retries=-1)
    with pytest.raises(EvalframeError, match="timeout must be a number > 0"):
        OpenAIJudge("m", timeout=0)
    with pytest.raises(EvalframeError, match="timeout must be a number > 0, got '5'"):
        OpenAIJudge("m", timeout="5")
    with pytest.raises(EvalframeError, match="temperature must be a number >= 0"):
        OpenAIJudge("m", temperature=-0.5)
    with pytest.raises(EvalframeError, match="temperature must be a number >= 0"):
        OpenAIJudge("m", temperature=float("nan"))
    with pytest.raises(EvalframeError, match="max_tokens must be an int >= 1"):
        OpenAIJudge("m", max_tokens=0)


def test_missing_openai_package_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "openai", None)  # makes `import openai` fail
    with pytest.raises(EvalframeError, match=r'pip install "evalframe\[judge\]"'):
        OpenAIJudge("m")


def test_retry_after_header_forms():
    assert retry_after_seconds({"Retry-After": "3"}) == 3.0
    assert retry_after_seconds({"retry-after": "0.5"}) == 0.5
    assert retry_after_seconds({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5
    # an HTTP date 30 s after "now" (Sun, 06 Nov 1994 08:49:37 GMT = 784111777)
    assert retry_after_seconds({"retry-after": "Sun, 06 Nov 1994 08:49:37 GMT"},
                               now=784111747.0) == 30.0
    assert retry_after_seconds({"retry-after": "-4"}) == 0.0
    assert retry_after_seconds({}) is None and retry_after_seconds(None) is None


def test_backoff_grows_exponentially_with_jitter_and_a_cap():
    rng = random.Random(1)
    for retry, ceiling in [(0, 0.5), (1, 1.0), (2, 2.0), (3, 4.0), (6, 30.0), (12, 30.0)]:
        delays = [retry_delay(retry, backoff=0.5, max_backoff=30.0, rng=rng) for _ in range(50)]
        assert all(ceiling / 2 <= d <= ceiling for d in delays)
        assert len(set(delays)) == 50  # jittered, not a fixed schedule


# -- Python callables -----------------------------------------------------------------------


def test_sync_callables_run_concurrently_in_a_thread_pool():
    lock, state = threading.Lock(), {"now": 0, "most": 0}

    def judge(prompt: str) -> str:
        with lock:
            state["now"] += 1
            state["most"] = max(state["most"], state["now"])
        time.sleep(0.05)
        with lock:
            state["now"] -= 1
        return prompt[::-1]

    start = time.perf_counter()
    replies = ask([f"p{i}" for i in range(12)], judge, concurrency=4, quiet=True)
    assert [r.text for r in replies] == [f"p{i}"[::-1] for i in range(12)]
    assert state["most"] == 4
    assert time.perf_counter() - start < 0.12 * 3 + 0.3  # three waves, not twelve calls


def test_async_callables_are_awaited_with_bounded_concurrency():
    state = {"now": 0, "most": 0}

    async def judge(prompt: str) -> str:
        state["now"] += 1
        state["most"] = max(state["most"], state["now"])
        await asyncio.sleep(0.02)
        state["now"] -= 1
        return prompt.upper()

    replies = ask(["a", "b", "c", "d", "e"], judge, concurrency=2, quiet=True)
    assert [r.text for r in replies] == ["A", "B", "C", "D", "E"]
    assert state["most"] == 2
    assert CallableBackend(judge).is_async and not CallableBackend(str.upper).is_async


def test_callable_failures_are_replies():
    def judge(prompt: str):
        if prompt == "boom":
            raise RuntimeError("judge crashed")
        return 42 if prompt == "number" else "ok"

    replies = ask(["boom", "number", "fine"], judge, quiet=True)
    assert replies == [
        type(replies[0])(None, "RuntimeError: judge crashed", False),
        type(replies[0])(None, "the judge returned int, expected str", False),
        type(replies[0])("ok", None, False),
    ]


class Grader:
    def __call__(self, prompt: str) -> str:
        return "TIE"


class Named:
    def judge_identity(self) -> dict:
        return {"backend": "callable", "name": "my-judge", "version": 2}

    def __call__(self, prompt: str) -> str:
        return "FIRST"


def module_judge(prompt: str, style: str = "plain") -> str:
    return style


def test_callable_identities():
    assert callable_identity(module_judge) == {
        "backend": "callable", "name": "tests.judge.test_backends.module_judge"}
    assert callable_identity(Grader())["name"] == "tests.judge.test_backends.Grader"
    assert callable_identity(functools.partial(module_judge, style="x"))["name"] == (
        "tests.judge.test_backends.module_judge(style='x')")
    assert judge_identity(Named()) == {"backend": "callable", "name": "my-judge", "version": 2}
    assert ask(["q"], Named(), quiet=True)[0].text == "FIRST"
    with pytest.raises(EvalframeError, match="a judge must be callable"):
        ask(["q"], "not a judge", quiet=True)
