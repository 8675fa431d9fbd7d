"""Judgments through an OpenAI-compatible server: throughput, and what the cache costs.

Usage: ``python benchmarks/bench_judge_server.py [--judgments N] [--concurrency C]``

The fake server of the tests (``tests/judge/fake_server.py``) runs in its own process on
127.0.0.1 and answers at once, so the numbers are the client side's: the ``openai``
client, evalframe's retry loop and concurrency, and the SQLite cache. ``N`` distinct
prompts (10,000 by default) are judged with ``ask`` at concurrency ``C`` (32):

- ``bare_client``: the reference, the ``openai`` client alone (``AsyncOpenAI`` with an
  ``asyncio.Semaphore(C)``, no evalframe), the ceiling of this machine and server;
- ``no_cache``: ``ask(prompts, OpenAIJudge(...))``;
- ``with_cache``: the same with a fresh cache file, each judgment claimed and committed
  as it arrives; ``cache_overhead_per_judgment_us`` is ``(with_cache - no_cache) / N``;
- ``cached_rerun``: the same prompts again with the now full cache (zero requests);
- ``cache_ops_serial_us``: one claim plus one store, timed alone, per judgment.

Each run is repeated (``--repeat``, best kept); the server's own request counter checks
that every run sent exactly the requests it should (N, N, 0). Results go to
``benchmarks/results/judge_server.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from _harness import growth_check, peak_rss_mb, timed, write_results

from evalframe.judge.backends import OpenAIJudge
from evalframe.judge.cache import JudgmentCache, judgment_key
from evalframe.judge.run import ask

ROOT = Path(__file__).resolve().parents[1]
SERVER = ROOT / "tests" / "judge" / "fake_server.py"


def start_server() -> tuple[subprocess.Popen, str]:
    server = subprocess.Popen([sys.executable, str(SERVER), "--lifetime", "900",
                               "--max-requests", "1000000"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    port = int(server.stdout.readline())
    return server, f"http://127.0.0.1:{port}/v1"


def server_requests(url: str) -> int:
    with urllib.request.urlopen(url + "/stats") as reply:
        return json.load(reply)["requests"]


def bare_client(url: str, prompts: list[str], concurrency: int) -> list[str]:
    import openai

    async def main() -> list[str]:
        client = openai.AsyncOpenAI(api_key="EMPTY", base_url=url, max_retries=0, timeout=60)
        gate = asyncio.Semaphore(concurrency)

        async def one(prompt: str) -> str:
            async with gate:
                response = await client.chat.completions.create(
                    model="bench-judge", messages=[{"role": "user", "content": prompt}],
                    temperature=0.0, max_tokens=1024)
                return response.choices[0].message.content

        try:
            return await asyncio.gather(*(one(p) for p in prompts))
        finally:
            await client.close()

    return asyncio.run(main())


def cache_ops_serial(folder: Path, prompts: list[str]) -> float:
    """Seconds per judgment for one claim and one store, nothing else running."""
    identity = {"backend": "openai-chat", "model": "bench-judge"}
    with JudgmentCache(folder / "serial.sqlite") as cache:
        keys = [judgment_key(identity, prompt) for prompt in prompts]
        start = time.perf_counter()
        for key, prompt in zip(keys, prompts, strict=True):
            cache.claim(key)
            cache.store(key, identity, prompt, "reply")
        return (time.perf_counter() - start) / len(prompts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--judgments", type=int, default=10_000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    n, concurrency = args.judgments, args.concurrency
    prompts = [f"Question {i}: which answer is better, the first or the second?"
               for i in range(n)]
    folder = Path(tempfile.mkdtemp(prefix="bench-judge-"))
    server, url = start_server()
    os.environ["BENCH_JUDGE_KEY"] = "EMPTY"
    judge = OpenAIJudge("bench-judge", base_url=url, api_key_env="BENCH_JUDGE_KEY",
                        concurrency=concurrency)
    try:
        ask(prompts[:200], judge, quiet=True)  # warm-up: imports, connections

        def counted(run):
            before = server_requests(url)
            seconds, result = timed(run, args.repeat)
            return seconds, result, (server_requests(url) - before) // args.repeat

        bare_s, bare, bare_requests = counted(lambda: bare_client(url, prompts, concurrency))
        plain_s, plain, plain_requests = counted(lambda: ask(prompts, judge, quiet=True))
        tenth = prompts[: max(n // 10, 1)]
        small_s, _ = timed(lambda: ask(tenth, judge, quiet=True), args.repeat)
        caches = iter(range(args.repeat))
        cached_s, cached, cached_requests = counted(
            lambda: ask(prompts, judge, cache=folder / f"c{next(caches)}.sqlite", quiet=True))
        rerun_s, rerun, rerun_requests = counted(
            lambda: ask(prompts, judge, cache=folder / "c0.sqlite", quiet=True))
        serial = cache_ops_serial(folder, prompts)
    finally:
        server.stdin.close()
        server.wait(timeout=30)

    assert [r.text for r in plain] == [r.text for r in cached] == [r.text for r in rerun] == bare
    assert (bare_requests, plain_requests, cached_requests, rerun_requests) == (n, n, n, 0)
    assert rerun.stats.hits == n and rerun.stats.requests == 0

    summary = {
        "judgments": n,
        "concurrency": concurrency,
        "server": "tests/judge/fake_server.py in its own process, answering at once",
        "bare_client_s": round(bare_s, 3),
        "bare_client_requests_per_s": round(n / bare_s, 1),
        "no_cache_s": round(plain_s, 3),
        "requests_per_s": round(n / plain_s, 1),
        "with_cache_s": round(cached_s, 3),
        "requests_per_s_with_cache": round(n / cached_s, 1),
        "cache_overhead_per_judgment_us": round((cached_s - plain_s) / n * 1e6, 1),
        "cache_ops_serial_us": round(serial * 1e6, 1),
        "cached_rerun_s": round(rerun_s, 3),
        "cached_rerun_requests": rerun_requests,
        "server_requests_per_run": {"bare_client": bare_requests, "no_cache": plain_requests,
                                    "with_cache": cached_requests, "cached_rerun": rerun_requests},
        "peak_rss_mb": round(peak_rss_mb(), 1),
        "repeat": args.repeat,
        "no_superlinear": growth_check(len(tenth), small_s, n, plain_s),
    }
    for name, value in summary.items():
        print(f"{name:34} {value}")
    write_results("judge_server", summary)


if __name__ == "__main__":
    main()
