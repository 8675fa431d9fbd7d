"""Asking a judge many prompts: concurrency, the durable cache, errors kept as replies.

:func:`ask` sends each distinct prompt to the judge once (a Python callable, sync or async,
or an :class:`~evalframe.judge.backends.OpenAIJudge`), at most ``concurrency`` at a time,
and returns one :class:`Reply` per input prompt, in order. With a cache
(:class:`~evalframe.judge.cache.JudgmentCache` or a path to one) a prompt already answered
is not asked again, and each new answer is committed as it arrives.

A failure of one prompt is that prompt's :class:`Reply` (``text=None``, ``error`` set):
an exception of a Python judge, a final failure after the backend's retries, a reply that
is not a completion. It is never raised, never dropped, and never cached, so a later run
asks it again.

When the run stops
------------------
Only a judge that cannot answer any prompt stops a run, and only before it started:

- Up front, :class:`~evalframe.judge.backends.JudgeUnavailable` (an ``EvalframeError``) is
  raised when a server judge's first request (sent alone, before the others) cannot
  reach the server after its retries, when the server rejects the API key (HTTP 401 or
  403) or answers 404 (no such model or endpoint), and when no API key is set for the
  OpenAI API. Nothing has been answered then.
- Later in the run the same conditions do not raise: the remaining prompts are not sent
  and their replies carry the error ``"not asked: ..."`` (a ``RuntimeWarning`` says why),
  so the answers already received are returned (and are in the cache). The conditions
  are a 401 / 403 / 404, or ``max(concurrency, 4)`` prompts in a row ending in a
  connection failure (the server went away).

Nothing is asked when every prompt is cached: the judge is not even contacted.

Cache operations run on the event loop's own thread: each is one short transaction (tens
of microseconds), cheaper than a hop to another thread, which under the GIL can wait
milliseconds for a busy event loop.

>>> replies = ask(["2+2?", "3+3?", "2+2?"], lambda prompt: "4" if "2" in prompt else "6")
>>> [reply.text for reply in replies], replies.stats.requests
(['4', '6', '4'], 2)
"""

from __future__ import annotations

import asyncio
import gc
import os
import time
import warnings
from collections import deque
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from evalframe.errors import EvalframeError
from evalframe.judge.backends import JudgeUnavailable, Outcome, as_backend
from evalframe.judge.cache import JudgmentCache, canonical_json, judgment_key
from evalframe.judge.progress import Progress

__all__ = ["Replies", "Reply", "RunStats", "ask", "ask_async", "judge_identity"]

#: Concurrency when neither ``ask`` nor the judge gives one.
DEFAULT_CONCURRENCY = 8
#: Seconds of a sync judge's work handed to one thread-pool job, once its speed is known.
BATCH_SECONDS = 0.02
#: The most prompts in one thread-pool job.
MAX_BATCH = 1024


@dataclass(frozen=True)
class Reply:
    """The judge's answer to one prompt: its text, or the error that stopped it.

    ``cached`` is True when the text came from the cache instead of the judge.

    >>> Reply("FIRST"), Reply(None, "HTTP 500: overloaded").ok
    (Reply(text='FIRST', error=None, cached=False), False)
    """

    text: str | None
    error: str | None = None
    cached: bool = False

    @property
    def ok(self) -> bool:
        """Whether the judge answered."""
        return self.text is not None


@dataclass(frozen=True)
class RunStats:
    """What one :func:`ask` run did.

    Attributes
    ----------
    prompts, distinct : int
        Prompts given, and distinct prompts among them (each asked at most once).
    hits : int
        Distinct prompts answered from the cache (including answers another process
        sharing the cache stored while this run waited for them).
    misses : int
        ``distinct - hits``: prompts this run had to send (or could not).
    answered, errors : int
        Distinct prompts the judge answered in this run, and prompts ending in an error.
    requests : int
        Requests sent to the judge, retries included (calls, for a Python judge).
    seconds : float
        Wall time of the run.
    """

    prompts: int
    distinct: int
    hits: int
    misses: int
    answered: int
    errors: int
    requests: int
    seconds: float

    @property
    def hit_rate(self) -> float | None:
        """``hits / distinct``; None for an empty run."""
        return self.hits / self.distinct if self.distinct else None

    @property
    def requests_per_second(self) -> float | None:
        return self.requests / self.seconds if self.seconds > 0 else None


class Replies(list[Reply]):
    """The list of :class:`Reply` returned by :func:`ask`, with the run's :class:`RunStats`."""

    stats: RunStats

    def __init__(self, replies: Sequence[Reply], stats: RunStats) -> None:
        super().__init__(replies)
        self.stats = stats


def judge_identity(judge: Any) -> dict[str, Any]:
    """What identifies a judge's answers: the cache key and the judge signature use it.

    A server judge: the backend, the model and the request parameters that change the
    answer (not its URL, key, timeouts or retries). A Python callable: its
    module-qualified name (an object may give its own with a ``judge_identity()``
    method).

    >>> def prefers_first(prompt):
    ...     return "FIRST"
    >>> judge_identity(prefers_first)
    {'backend': 'callable', 'name': 'evalframe.judge.run.prefers_first'}
    """
    return dict(as_backend(judge).judge_identity())


def _open_cache(cache: Any) -> tuple[JudgmentCache | None, bool]:
    if cache is None:
        return None, False
    if isinstance(cache, JudgmentCache):
        return cache, False
    if isinstance(cache, str | os.PathLike):
        return JudgmentCache(cache), True
    raise EvalframeError(f"ask: cache must be None, a path or a JudgmentCache; got "
                         f"{type(cache).__name__}")


def _check_prompts(prompts: Sequence[str]) -> list[str]:
    if isinstance(prompts, str):
        raise EvalframeError("ask: prompts must be a sequence of strings, got one string")
    prompts = list(prompts)
    for index, prompt in enumerate(prompts):
        if not isinstance(prompt, str):
            bad = sum(not isinstance(p, str) for p in prompts)
            raise EvalframeError(f"ask: every prompt must be a string; {bad} of {len(prompts)} "
                                 f"are not, the first at index {index}: "
                                 f"{type(prompt).__name__} {prompt!r:.80}")
    return prompts


class _Run:
    """The state of one run: the queue, the replies, the counters."""

    def __init__(self, distinct: list[str], keys: list[str] | None, identity: str,
                 cache: JudgmentCache | None,
                 progress: Progress, breaker: int) -> None:
        self.distinct = distinct
        self.keys = keys
        self.identity = identity
        self.cache = cache
        self.progress = progress
        self.breaker = breaker
        self.replies: dict[int, Reply] = {}
        self.queue: deque[int] = deque()
        self.deferred: list[int] = []
        self.hits = self.answered = self.errors = self.requests = 0
        self.failed_connections = 0
        self.stop_reason: str | None = None
        self.latency: float | None = None

    def settle(self, index: int, reply: Reply) -> None:
        self.replies[index] = reply
        if reply.cached:
            self.hits += 1
        elif reply.ok:
            self.answered += 1
        else:
            self.errors += 1
        self.progress.update(done=len(self.replies), errors=self.errors, cached=self.hits,
                             requests=self.requests)

    def claim(self, index: int) -> bool:
        """Whether ``index`` is to be asked now (not answered meanwhile, not held elsewhere)."""
        if self.cache is None:
            return True
        state, text = self.cache.claim(self.keys[index])
        if state == "answered":
            self.cache.stats.waited += 1
            self.settle(index, Reply(text, None, cached=True))
            return False
        if state == "busy":
            self.deferred.append(index)
            return False
        return True

    async def ask_one(self, index: int, complete: Any, *, pilot: bool = False) -> None:
        prompt = self.distinct[index]
        if not self.claim(index):
            return
        asked_at = time.time()
        try:
            outcome: Outcome = await complete(prompt)
        except JudgeUnavailable as error:
            if self.cache is not None:
                self.cache.release([self.keys[index]])
            if pilot:
                raise
            self.stop(str(error))
            self.settle(index, Reply(None, str(error)))
            return
        self.finish(index, outcome, asked_at, pilot=pilot)

    async def ask_many(self, indices: list[int], complete_many: Any) -> None:
        """A batch of prompts for a fast sync judge: one thread-pool job, replies kept alike."""
        asked = [index for index in indices if self.claim(index)]
        if not asked:
            return
        asked_at = time.time()
        started = time.monotonic()
        outcomes = await complete_many([self.distinct[index] for index in asked])
        self.record_latency((time.monotonic() - started) / len(asked))
        if self.cache is not None:
            for index, outcome in zip(asked, outcomes, strict=True):
                self.finish(index, outcome if isinstance(outcome, Outcome) else Outcome(outcome),
                            asked_at)
            return
        # without a cache, a string reply only needs recording (one progress update a batch)
        replies = self.replies
        for index, outcome in zip(asked, outcomes, strict=True):
            if type(outcome) is str:
                replies[index] = Reply(outcome)
                self.answered += 1
                self.requests += 1
            else:
                self.finish(index, outcome, asked_at)
        self.failed_connections = 0
        self.progress.update(done=len(replies), errors=self.errors, cached=self.hits,
                             requests=self.requests)

    def record_latency(self, seconds: float) -> None:
        """Keep a running mean of one sync call's time, which sets the batch size."""
        self.latency = seconds if self.latency is None else 0.8 * self.latency + 0.2 * seconds

    def batch_size(self, concurrency: int) -> int:
        """Prompts per thread-pool job: 1 until a call's time is known, then enough for about
        :data:`BATCH_SECONDS` of work (at most :data:`MAX_BATCH`, and a share of what is left
        for every worker), so a fast judge is not slowed by hand-offs and a slow one keeps
        its concurrency and its progress."""
        if self.latency is None:
            return 1
        wanted = int(BATCH_SECONDS / max(self.latency, 1e-9))
        share = -(-len(self.queue) // max(concurrency, 1))
        return max(1, min(MAX_BATCH, wanted, share))

    def finish(self, index: int, outcome: Outcome, asked_at: float, *, pilot: bool = False) -> None:
        prompt = self.distinct[index]
        self.requests += outcome.requests
        if outcome.text is None:
            if self.cache is not None:
                self.cache.release([self.keys[index]])
            if outcome.kind == "connection":
                if pilot:
                    raise JudgeUnavailable(f"cannot reach the judge: {outcome.error}")
                self.failed_connections += 1
                if self.failed_connections >= self.breaker:
                    self.stop(f"{self.failed_connections} prompts in a row could not reach "
                              f"the judge; the last: {outcome.error}")
            self.settle(index, Reply(None, outcome.error or "the judge gave no reply"))
            return
        self.failed_connections = 0
        text = outcome.text
        if self.cache is not None:
            text = self.cache.store(self.keys[index], self.identity, prompt, text,
                                    asked_at=asked_at)
        self.settle(index, Reply(text))

    def stop(self, reason: str) -> None:
        if self.stop_reason is None:
            self.stop_reason = reason
            warnings.warn(f"judge run stopped, the remaining prompts are not asked: {reason}",
                          RuntimeWarning, stacklevel=2)

    async def work(self, complete: Any, concurrency: int = 1) -> None:
        many = getattr(complete, "many", None)
        while self.queue and self.stop_reason is None:
            size = self.batch_size(concurrency) if many is not None else 1
            if size == 1:
                index = self.queue.popleft()
                started = time.monotonic()
                await self.ask_one(index, complete)
                if many is not None:
                    self.record_latency(time.monotonic() - started)
                continue
            batch = [self.queue.popleft() for _ in range(min(size, len(self.queue)))]
            await self.ask_many(batch, many)

    async def drain(self, complete: Any, concurrency: int) -> None:
        """Ask everything queued; then wait for the prompts other processes hold."""
        wait = 0.02
        while True:
            workers = [asyncio.create_task(self.work(complete, concurrency))
                       for _ in range(min(concurrency, len(self.queue)))]
            try:
                await asyncio.gather(*workers)
            except BaseException:
                for worker in workers:
                    worker.cancel()
                raise
            if not self.deferred or self.stop_reason is not None or self.cache is None:
                return
            await asyncio.sleep(wait)
            wait = min(wait * 2, 0.5)
            waiting, self.deferred = self.deferred, []
            found = self.cache.poll([self.keys[i] for i in waiting])
            for index in waiting:
                key = self.keys[index]
                if key in found:
                    self.cache.stats.waited += 1
                    self.settle(index, Reply(found[key], None, cached=True))
                else:
                    self.queue.append(index)  # claim again: its owner may be gone

    async def keep_claims(self) -> None:
        assert self.cache is not None
        while True:
            await asyncio.sleep(self.cache.lease / 3)
            self.cache.renew()


async def ask_async(prompts: Sequence[str], judge: Any, *, cache: Any = None,
                    concurrency: int | None = None, progress: bool | None = None,
                    quiet: bool = False, distinct: bool = False) -> Replies:
    """The coroutine behind :func:`ask` (same parameters), for code already in an event loop.

    >>> import asyncio
    >>> async def judge(prompt):
    ...     return prompt.upper()
    >>> [r.text for r in asyncio.run(ask_async(["a", "b"], judge))]
    ['A', 'B']
    """
    started = time.monotonic()
    prompts = list(prompts) if distinct else _check_prompts(prompts)
    backend = as_backend(judge)
    if concurrency is None:
        concurrency = getattr(backend, "concurrency", None) or DEFAULT_CONCURRENCY
    if not (isinstance(concurrency, int) and concurrency >= 1):
        raise EvalframeError(f"ask: concurrency must be an int >= 1, got {concurrency!r}")
    identity = canonical_json(backend.judge_identity())
    unique = prompts if distinct else list(dict.fromkeys(prompts))
    store, owned = _open_cache(cache)
    bar = Progress(len(unique), enabled=progress, quiet=quiet)
    keys = [judgment_key(identity, prompt) for prompt in unique] if store is not None else None
    run = _Run(unique, keys, identity, store, bar, breaker=max(concurrency, 4))
    keeper: asyncio.Task[None] | None = None
    try:
        if store is not None:
            found = store.lookup(keys)
            for index, key in enumerate(keys):
                if key in found:
                    run.settle(index, Reply(found[key], None, cached=True))
                else:
                    run.queue.append(index)
            keeper = asyncio.create_task(run.keep_claims())
        else:
            run.queue.extend(range(len(unique)))
        if run.queue:
            async with backend.session(concurrency) as complete:
                if getattr(backend, "pilot", False):
                    await run.ask_one(run.queue.popleft(), complete, pilot=True)
                await run.drain(complete, concurrency)
        for index in [*run.queue, *run.deferred]:
            run.settle(index, Reply(None, f"not asked: {run.stop_reason}"))
    finally:
        if keeper is not None:
            keeper.cancel()
        bar.close()
        if store is not None:
            if owned:
                store.close()
            else:
                store.release()
    stats = RunStats(prompts=len(prompts), distinct=len(unique), hits=run.hits,
                     misses=len(unique) - run.hits, answered=run.answered, errors=run.errors,
                     requests=run.requests, seconds=time.monotonic() - started)
    if distinct:
        return Replies([run.replies[index] for index in range(len(unique))], stats)
    by_prompt = {prompt: run.replies[index] for index, prompt in enumerate(unique)}
    return Replies([by_prompt[prompt] for prompt in prompts], stats)


def ask(prompts: Sequence[str], judge: Any, *, cache: Any = None,
        concurrency: int | None = None, progress: bool | None = None,
        quiet: bool = False, distinct: bool = False) -> Replies:
    """Ask ``judge`` every distinct prompt once; one :class:`Reply` per prompt, in order.

    Parameters
    ----------
    prompts : sequence of str
        The full rendered prompts (repeats are asked once and answered alike).
    judge : callable or OpenAIJudge
        ``judge(prompt) -> str``, sync (run in a thread pool) or ``async def``; or an
        :class:`~evalframe.judge.backends.OpenAIJudge`.
    cache : None, str, Path or JudgmentCache
        Where judgments are kept across runs (an SQLite file, created when absent). Keyed
        by :func:`judge_identity` and the prompt; errors are not cached.
    concurrency : int or None
        Prompts in flight at once; None takes the judge's own ``concurrency``
        (``OpenAIJudge``) or 8.
    progress : bool or None
        Draw progress on stderr: None (default) when stderr is a terminal; True or False
        forces it.
    quiet : bool
        Never draw progress.
    distinct : bool
        The prompts are already distinct strings (de-duplicated by the caller, as
        :func:`evalframe.judge.pairwise` does in Polars): they are neither checked nor
        de-duplicated again.

    Returns
    -------
    Replies
        A list of :class:`Reply`; its ``stats`` (:class:`RunStats`) counts cache hits,
        misses, requests made and errors.

    Raises
    ------
    JudgeUnavailable
        Up front only (see "When the run stops" in the module's documentation).

    Examples
    --------
    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "judgments.sqlite")
    >>> def judge(prompt):
    ...     if "?" not in prompt:
    ...         raise ValueError("not a question")
    ...     return "TIE"
    >>> first = ask(["Which?", "Oops"], judge, cache=path)
    >>> [(reply.text, reply.error) for reply in first]
    [('TIE', None), (None, 'ValueError: not a question')]
    >>> again = ask(["Which?", "Oops"], judge, cache=path)
    >>> [r.cached for r in again], again.stats.hits, again.stats.requests
    ([True, False], 1, 1)

    Inside a running event loop (a notebook) the run happens on its own loop in a worker
    thread; ``await ask_async(...)`` is the direct way there.
    """
    found: list[Replies] = []

    async def run() -> None:
        # The replies are handed over outside the task's result: asyncio.run may repr the
        # finished task (Python 3.11 does, checking its SIGINT handler), which would format
        # every reply.
        found.append(await ask_async(prompts, judge, cache=cache, concurrency=concurrency,
                                     progress=progress, quiet=quiet, distinct=distinct))

    # A run allocates a few small objects per prompt and frees none of them until it ends:
    # the cyclic garbage collector would walk them again and again (a third of the time of a
    # million prompts to a fast judge), so it waits until the run is over.
    collecting = gc.isenabled()
    gc.disable()
    try:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            asyncio.run(run())
        else:
            with ThreadPoolExecutor(max_workers=1, thread_name_prefix="evalframe-ask") as pool:
                pool.submit(asyncio.run, run()).result()
    finally:
        if collecting:
            gc.enable()
    return found[0]
