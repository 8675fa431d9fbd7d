"""Judge backends: Python callables (sync or async) and OpenAI-compatible chat servers.

:func:`evalframe.judge.run.ask` turns any judge into a :class:`Backend` with
:func:`as_backend` and calls its ``complete(prompt)`` concurrently. A backend never
raises for one failed prompt: it returns an :class:`Outcome` holding the reply text or an
error message. It raises :class:`JudgeUnavailable` only when no prompt can succeed (the
key was rejected, the model or endpoint does not exist); ``ask`` documents what then stops.

:class:`OpenAIJudge` talks to any server with the OpenAI chat-completions API (OpenAI,
vLLM, TGI, Ollama, ...) through the ``openai`` package (the ``judge`` extra). The client's
own retries are off (``max_retries=0``); the retry loop is this module's:

- retried: HTTP 408, 409, 429 and every 5xx, timeouts, and connection errors (refused,
  reset, dropped); up to ``max_retries`` retries after the first request;
- the wait before retry ``k`` (0, 1, ...) is the server's ``Retry-After`` (seconds or an
  HTTP date; ``retry-after-ms`` too) when it sends one, capped at ``max_retry_after``;
  otherwise ``d = min(max_backoff, backoff * 2**k)`` with jitter, uniform in
  ``[d / 2, d]`` (:func:`retry_delay`);
- not retried, the prompt's error: other 4xx (a prompt too long, say), and a 200 reply
  that is not a chat completion with text content (a body that cannot be read: not JSON,
  JSON cut short, not UTF-8; or no ``choices``, no text content) — a server bug, not a
  passing fault; it is that prompt's error, even on a run's first request;
- raised as :class:`JudgeUnavailable`: 401 and 403 (the key is rejected) and 404 (no
  such model or endpoint): every other prompt would fail the same way.

The API key is read from the environment variable ``api_key_env`` when a run starts; it is
kept only by the client, never in this object, its repr, its identity, the cache, an
error message or any output.

>>> judge = OpenAIJudge("my-judge", base_url="http://127.0.0.1:8000/v1", seed=1)
>>> judge                                             # doctest: +NORMALIZE_WHITESPACE
OpenAIJudge(model='my-judge', base_url='http://127.0.0.1:8000/v1',
            api_key_env='OPENAI_API_KEY', temperature=0.0, max_tokens=1024, seed=1,
            timeout=60.0, max_retries=5, concurrency=8)
>>> judge.judge_identity()["model"], "base_url" in judge.judge_identity()
('my-judge', False)
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import functools
import inspect
import math
import os
import random
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol

from evalframe.errors import EvalframeError

__all__ = [
    "Backend",
    "CallableBackend",
    "JudgeUnavailable",
    "OpenAIJudge",
    "Outcome",
    "as_backend",
    "callable_identity",
    "retry_after_seconds",
    "retry_delay",
]

#: HTTP statuses retried besides every 5xx.
RETRIED_STATUSES = frozenset({408, 409, 429})
#: HTTP statuses that stop a run: the key is rejected, or the model / endpoint is absent.
FATAL_STATUSES = frozenset({401, 403, 404})


class JudgeUnavailable(EvalframeError):
    """No prompt can be judged: the server is unreachable or refuses the key or the model."""


@dataclass(frozen=True)
class Outcome:
    """What asking one prompt gave.

    ``text`` is the reply, or None with ``error`` saying why. ``requests`` counts the
    requests made (retries included; 1 for a callable). ``kind`` classifies an error:
    ``"connection"`` (the server could not be reached), ``"timeout"``, ``"status"`` (an
    HTTP error status), ``"garbage"`` (a reply that is not a completion, or a callable
    returning a non-string) or ``"exception"`` (a callable raised).
    """

    text: str | None
    error: str | None = None
    requests: int = 1
    kind: str | None = None


class Backend(Protocol):
    """What :func:`evalframe.judge.run.ask` needs of a judge."""

    #: Send the first prompt alone, and stop the run when it cannot reach the judge.
    pilot: bool
    #: Concurrency used when ``ask`` is not given one (None: ask's default).
    concurrency: int | None

    def judge_identity(self) -> dict[str, Any]:
        """What identifies the judge's answers (the cache key and signatures)."""
        ...

    def describe(self) -> str:
        """A short name for messages (never a secret)."""
        ...

    def session(self, concurrency: int) -> contextlib.AbstractAsyncContextManager[
            Callable[[str], Awaitable[Outcome]]]:
        """An async context yielding ``complete(prompt) -> Outcome`` for one run."""
        ...


def callable_identity(function: Callable[..., Any]) -> dict[str, Any]:
    """The identity of a Python judge: its module-qualified name.

    A ``functools.partial`` adds the repr of its bound arguments; an instance with
    ``__call__`` is named by its class. Two different functions with the same name (a
    lambda redefined, say) share a name: give the judge a distinct name, or an object with
    a ``judge_identity()`` method, to keep their cached answers apart.

    >>> callable_identity(len)
    {'backend': 'callable', 'name': 'builtins.len'}
    >>> import functools
    >>> callable_identity(functools.partial(round, ndigits=2))["name"]
    'builtins.round(ndigits=2)'
    """
    if isinstance(function, functools.partial):
        inner = callable_identity(function.func)["name"]
        parts = [repr(a) for a in function.args]
        parts += [f"{k}={v!r}" for k, v in sorted(function.keywords.items())]
        return {"backend": "callable", "name": f"{inner}({', '.join(parts)})"}
    target = function
    if not (inspect.isfunction(function) or inspect.ismethod(function)
            or inspect.isbuiltin(function)):
        target = type(function)
    module = getattr(target, "__module__", None) or "?"
    name = getattr(target, "__qualname__", None) or getattr(target, "__name__", repr(target))
    return {"backend": "callable", "name": f"{module}.{name}"}


def _is_async(function: Callable[..., Any]) -> bool:
    while isinstance(function, functools.partial):
        function = function.func
    call = type(function).__call__ if not inspect.isroutine(function) else None
    return inspect.iscoroutinefunction(function) or inspect.iscoroutinefunction(call)


class CallableBackend:
    """A Python judge ``judge(prompt) -> str``, sync (run in a thread pool) or async.

    An exception raised by the judge, or a reply that is not a string, becomes the
    prompt's error. Nothing is retried: a judge that wants retries does them itself.
    """

    pilot = False
    concurrency: int | None = None

    def __init__(self, function: Callable[[str], Any]) -> None:
        if not callable(function):
            raise EvalframeError(f"a judge must be callable, or an OpenAIJudge; got "
                                 f"{type(function).__name__}")
        self.function = function
        self.is_async = _is_async(function)

    def judge_identity(self) -> dict[str, Any]:
        method = getattr(self.function, "judge_identity", None)
        if callable(method):
            return dict(method())
        return callable_identity(self.function)

    def describe(self) -> str:
        return self.judge_identity().get("name", "callable judge")

    @contextlib.asynccontextmanager
    async def session(self, concurrency: int) -> AsyncIterator[
            Callable[[str], Awaitable[Outcome]]]:
        pool = None if self.is_async else ThreadPoolExecutor(
            max_workers=max(1, concurrency), thread_name_prefix="evalframe-judge")
        loop = asyncio.get_running_loop()

        async def complete(prompt: str) -> Outcome:
            try:
                if pool is None:
                    reply = await self.function(prompt)
                else:
                    reply = await loop.run_in_executor(pool, self.function, prompt)
                    if inspect.isawaitable(reply):
                        reply = await reply
            except Exception as error:
                return Outcome(None, f"{type(error).__name__}: {error}", 1, "exception")
            return _checked(reply)

        def call_each(prompts: list[str]) -> list[Outcome | Any]:
            outcomes: list[Outcome | Any] = []
            for prompt in prompts:
                try:
                    outcomes.append(self.function(prompt))
                except Exception as error:
                    outcomes.append(
                        Outcome(None, f"{type(error).__name__}: {error}", 1, "exception")
                    )
            return outcomes

        async def complete_many(prompts: list[str]) -> list[str | Outcome]:
            """Several prompts in one thread-pool job: a fast sync judge pays one hand-off.

            A reply that is a string is returned as it is (the common case, kept cheap);
            anything else becomes an :class:`Outcome` (an error, or an awaited reply).
            """
            assert pool is not None
            replies = await loop.run_in_executor(pool, call_each, prompts)
            for position, reply in enumerate(replies):
                if type(reply) is str or isinstance(reply, Outcome):
                    continue
                if inspect.isawaitable(reply):
                    try:
                        reply = await reply
                    except Exception as error:
                        replies[position] = Outcome(
                            None, f"{type(error).__name__}: {error}", 1, "exception"
                        )
                        continue
                replies[position] = _checked(reply)
            return replies

        complete.many = None if pool is None else complete_many  # type: ignore[attr-defined]
        try:
            yield complete
        finally:
            if pool is not None:
                pool.shutdown(wait=False, cancel_futures=True)


def _checked(reply: Any) -> Outcome:
    """A callable judge's reply as an outcome: a string, or the error of anything else."""
    if not isinstance(reply, str):
        return Outcome(None, f"the judge returned {type(reply).__name__}, expected str", 1,
                       "garbage")
    return Outcome(reply)


def retry_after_seconds(headers: Mapping[str, str] | None, *,
                        now: float | None = None) -> float | None:
    """The wait a server asks for: ``retry-after-ms``, or ``Retry-After`` in seconds or as an
    HTTP date; None when absent or unreadable.

    >>> retry_after_seconds({"retry-after": "2"}), retry_after_seconds({"retry-after-ms": "250"})
    (2.0, 0.25)
    >>> retry_after_seconds({"retry-after": "Wed, 21 Oct 2015 07:28:05 GMT"},
    ...                     now=1445412480.0)
    5.0
    >>> retry_after_seconds({"retry-after": "soon"}) is None
    True
    """
    if not headers:
        return None
    lowered = {str(k).lower(): str(v) for k, v in headers.items()}
    with contextlib.suppress(KeyError, ValueError):
        return max(0.0, float(lowered["retry-after-ms"]) / 1000.0)
    value = lowered.get("retry-after")
    if value is None:
        return None
    with contextlib.suppress(ValueError):
        return max(0.0, float(value))
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    current = datetime.now(UTC).timestamp() if now is None else now
    return max(0.0, when.timestamp() - current)


def retry_delay(retry: int, *, backoff: float, max_backoff: float,
                rng: random.Random | None = None) -> float:
    """Seconds to wait before retry number ``retry`` (0 for the first retry).

    Exponential with jitter: ``d = min(max_backoff, backoff * 2**retry)``, then uniform in
    ``[d / 2, d]``.

    >>> rng = random.Random(0)
    >>> [0.25 <= retry_delay(0, backoff=0.5, max_backoff=30, rng=rng) <= 0.5 for _ in "ab"]
    [True, True]
    >>> 15 <= retry_delay(10, backoff=0.5, max_backoff=30, rng=rng) <= 30
    True
    """
    ceiling = min(max_backoff, backoff * 2.0 ** retry)
    return (rng or random).uniform(ceiling / 2, ceiling)


def _require_openai() -> Any:
    try:
        import openai
    except ImportError as error:  # no prompt can be judged: JudgeUnavailable
        raise JudgeUnavailable(
            "OpenAIJudge needs the 'openai' package: pip install \"evalframe[judge]\""
        ) from error
    return openai


def _scrub(text: str, secret: str | None) -> str:
    return text.replace(secret, "***") if secret else text


def _short(text: str, limit: int = 200) -> str:
    """``text`` on one line, cut to ``limit`` characters (a server's error page can be long).

    >>> _short("<html>\\n  <body>" + "x" * 300, 24)
    '<html> <body>xxxxxxxxxx…'
    """
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _status_detail(failure: Any) -> str:
    """The server's own error message of an HTTP error status."""
    body = getattr(failure, "body", None)
    if isinstance(body, dict) and isinstance(body.get("message"), str):
        return body["message"]
    message = str(getattr(failure, "message", "") or failure)
    prefix = f"Error code: {failure.status_code} - "
    return message[len(prefix):] if message.startswith(prefix) else message


def _connect_failure(error: BaseException) -> bool:
    """Whether a timeout happened while connecting (the server is unreachable)."""
    seen: BaseException | None = error
    while seen is not None:
        if "ConnectTimeout" in type(seen).__name__ or "ConnectError" in type(seen).__name__:
            return True
        seen = seen.__cause__ or seen.__context__
    return False


@dataclass(frozen=True)
class OpenAIJudge:
    """A judge model served by an OpenAI-compatible chat-completions API.

    Parameters
    ----------
    model : str
        The model name the server knows.
    base_url : str or None
        The API root, e.g. ``http://localhost:8000/v1`` for vLLM; None is OpenAI's.
    api_key_env : str or None
        The environment variable holding the API key, read when a run starts. When it is
        unset, a run against a ``base_url`` sends the placeholder key ``"EMPTY"`` (local
        servers take any key); against OpenAI itself it stops with an error.
    temperature, max_tokens, seed : request parameters
        Sent with every request (``seed`` and ``max_tokens`` only when not None).
    system : str or None
        A system message sent before every prompt.
    extra_body : mapping or None
        More request fields (``top_p``, a vLLM sampling option, ...), sent as they are.
    timeout : float
        Seconds one request may take before it is abandoned (and retried).
    max_retries : int
        Retries after the first request of a prompt (see the module's retry rules).
    backoff, max_backoff : float
        Base and cap (seconds) of the exponential backoff.
    max_retry_after : float
        The longest ``Retry-After`` wait honoured (seconds).
    concurrency : int
        Requests in flight at once when ``ask`` is not given a concurrency.

    The identity (:meth:`judge_identity`) holds the model and everything sent that changes
    the answer; not the URL, the key, timeouts or retry settings.
    """

    model: str
    base_url: str | None = None
    api_key_env: str | None = "OPENAI_API_KEY"
    temperature: float | None = 0.0
    max_tokens: int | None = 1024
    seed: int | None = None
    system: str | None = field(default=None, repr=False)
    extra_body: Mapping[str, Any] | None = field(default=None, repr=False)
    timeout: float = 60.0
    max_retries: int = 5
    backoff: float = field(default=0.5, repr=False)
    max_backoff: float = field(default=30.0, repr=False)
    max_retry_after: float = field(default=120.0, repr=False)
    concurrency: int = 8

    pilot = True

    def __post_init__(self) -> None:
        if not isinstance(self.model, str) or not self.model:
            raise EvalframeError(f"OpenAIJudge: model must be a non-empty string, got "
                                 f"{self.model!r}")
        for name in ("timeout", "backoff", "max_backoff", "max_retry_after"):
            value = getattr(self, name)
            if isinstance(value, bool) or not (isinstance(value, int | float) and value > 0):
                raise EvalframeError(f"OpenAIJudge: {name} must be a number > 0, got {value!r}")
        if not (isinstance(self.max_retries, int) and self.max_retries >= 0):
            raise EvalframeError(f"OpenAIJudge: max_retries must be an int >= 0, got "
                                 f"{self.max_retries!r}")
        if not (isinstance(self.concurrency, int) and self.concurrency >= 1):
            raise EvalframeError(f"OpenAIJudge: concurrency must be an int >= 1, got "
                                 f"{self.concurrency!r}")
        if self.temperature is not None and not (
                isinstance(self.temperature, int | float) and 0 <= self.temperature < math.inf):
            raise EvalframeError(f"OpenAIJudge: temperature must be a number >= 0 or None, got "
                                 f"{self.temperature!r}")
        if self.max_tokens is not None and (isinstance(self.max_tokens, bool) or not (
                isinstance(self.max_tokens, int) and self.max_tokens >= 1)):
            raise EvalframeError(f"OpenAIJudge: max_tokens must be an int >= 1 or None, got "
                                 f"{self.max_tokens!r}")
        _require_openai()

    def judge_identity(self) -> dict[str, Any]:
        """The model and the request parameters that change its answers.

        >>> OpenAIJudge("m", base_url="http://127.0.0.1:1/v1").judge_identity()
        {'backend': 'openai-chat', 'model': 'm', 'temperature': 0.0, 'max_tokens': 1024, \
'seed': None, 'system': None, 'extra_body': None}
        """
        return {
            "backend": "openai-chat",
            "model": self.model,
            # 0 and 0.0 are the same request: one key
            "temperature": None if self.temperature is None else float(self.temperature),
            "max_tokens": self.max_tokens,
            "seed": self.seed,
            "system": self.system,
            "extra_body": dict(self.extra_body) if self.extra_body is not None else None,
        }

    def describe(self) -> str:
        return f"{self.model} at {self.base_url or 'the OpenAI API'}"

    def _api_key(self) -> str | None:
        key = os.environ.get(self.api_key_env) if self.api_key_env else None
        if key:
            return key
        if self.base_url is None:
            raise JudgeUnavailable(
                f"OpenAIJudge: no API key: set the environment variable "
                f"{self.api_key_env or 'OPENAI_API_KEY'} (or give base_url for a local server)")
        return None

    def _request(self, prompt: str) -> dict[str, Any]:
        messages = [{"role": "user", "content": prompt}]
        if self.system is not None:
            messages.insert(0, {"role": "system", "content": self.system})
        params: dict[str, Any] = {"model": self.model, "messages": messages}
        if self.temperature is not None:
            params["temperature"] = self.temperature
        if self.max_tokens is not None:
            params["max_tokens"] = self.max_tokens
        if self.seed is not None:
            params["seed"] = self.seed
        if self.extra_body:
            params["extra_body"] = dict(self.extra_body)
        return params

    @contextlib.asynccontextmanager
    async def session(self, concurrency: int) -> AsyncIterator[
            Callable[[str], Awaitable[Outcome]]]:
        """One client for one run: yields ``complete(prompt) -> Outcome``."""
        openai = _require_openai()
        key = self._api_key()
        client = openai.AsyncOpenAI(api_key=key or "EMPTY", base_url=self.base_url,
                                    timeout=self.timeout, max_retries=0)
        rng = random.Random()

        async def complete(prompt: str) -> Outcome:
            return await self._complete(openai, client, key, rng, prompt)

        try:
            yield complete
        finally:
            await client.close()

    async def _complete(self, openai: Any, client: Any, key: str | None, rng: random.Random,
                        prompt: str) -> Outcome:
        params = self._request(prompt)
        where = self.describe()
        requests, error, kind = 0, "", "status"
        for retry in range(self.max_retries + 1):
            requests += 1
            wait: float | None = None
            try:
                response = await client.chat.completions.create(**params)
            except openai.APIStatusError as failure:
                status = failure.status_code
                if status in (401, 403):
                    variable = self.api_key_env or "(no variable)"
                    raise JudgeUnavailable(
                        f"the judge server ({where}) rejected the API key: HTTP {status}; the "
                        f"key is read from the environment variable {variable}") from None
                if status == 404:
                    raise JudgeUnavailable(
                        f"the judge server ({where}) answered HTTP 404: no model "
                        f"{self.model!r} or no chat-completions endpoint at this base URL: "
                        f"{_short(_scrub(_status_detail(failure), key))}") from None
                error = f"HTTP {status}: {_short(_scrub(_status_detail(failure), key), 500)}"
                kind = "status"
                if status not in RETRIED_STATUSES and status < 500:
                    return Outcome(None, error, requests, kind)
                wait = retry_after_seconds(failure.response.headers)
            except openai.APITimeoutError as failure:
                kind = "connection" if _connect_failure(failure) else "timeout"
                error = (f"could not connect to {where} within {self.timeout}s"
                         if kind == "connection" else
                         f"no reply within the timeout of {self.timeout}s")
            except openai.APIConnectionError as failure:
                cause = failure.__cause__ or failure.__context__
                detail = (f" ({type(cause).__name__}: {_short(_scrub(str(cause), key))})"
                          if cause else "")
                error, kind = f"connection error with {where}{detail}", "connection"
            except openai.OpenAIError as failure:
                return Outcome(None, f"{type(failure).__name__}: "
                               f"{_short(_scrub(str(failure), key))}", requests, "garbage")
            except Exception as failure:  # a 200 body the client cannot read (JSON cut short)
                return Outcome(None, "the server's reply cannot be read: "
                               f"{type(failure).__name__}: {_short(_scrub(str(failure), key))}",
                               requests, "garbage")
            else:
                return _reply_text(response, requests)
            if retry == self.max_retries:
                break
            if wait is not None:
                delay = min(wait, self.max_retry_after)
            else:
                delay = retry_delay(retry, backoff=self.backoff, max_backoff=self.max_backoff,
                                    rng=rng)
            await asyncio.sleep(delay)
        attempts = "request" if requests == 1 else f"{requests} requests"
        return Outcome(None, f"{error} (after {attempts})", requests, kind)


def _reply_text(response: Any, requests: int) -> Outcome:
    """The text of a chat completion, or the garbage error saying what is missing.

    Whatever JSON the server sent (``choices`` an object, a number, a list of strings...)
    gives a reply or an error, never an exception.

    >>> from types import SimpleNamespace as NS
    >>> _reply_text(NS(choices=[NS(message=NS(content="TIE"))]), 1).text
    'TIE'
    >>> _reply_text(NS(choices={"0": 1}), 1).kind
    'garbage'
    """
    if isinstance(response, str | bytes):
        shown = response[:80] if isinstance(response, str) else repr(response[:80])
        return Outcome(None, f"the server's reply is not a chat completion: {shown!r}",
                       requests, "garbage")
    choices = getattr(response, "choices", None)
    if not isinstance(choices, list | tuple) or not choices:
        return Outcome(None, "the server's reply has no choices", requests, "garbage")
    first = choices[0]
    message = first.get("message") if isinstance(first, dict) else getattr(first, "message", None)
    content = message.get("content") if isinstance(message, dict) else getattr(
        message, "content", None)
    if not isinstance(content, str):
        return Outcome(None, "the server's reply has no message content in choices[0]",
                       requests, "garbage")
    return Outcome(content, None, requests)


def as_backend(judge: Any) -> Backend:
    """The backend for ``judge``: an :class:`OpenAIJudge` (or any object with a ``session``
    method) as it is, a callable wrapped in :class:`CallableBackend`.

    >>> as_backend(str.upper).is_async
    False
    """
    if callable(getattr(judge, "session", None)) and callable(
            getattr(judge, "judge_identity", None)):
        return judge
    return CallableBackend(judge)
