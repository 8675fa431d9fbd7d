"""A local fake OpenAI-compatible chat-completions server for the judge tests and benchmark.

It listens on 127.0.0.1 only, answers ``POST /v1/chat/completions`` with a deterministic
reply derived from the prompt (the content of the last message), counts every request (in
total and per prompt) and the most requests it had in flight at once, and injects faults
on demand, per prompt and in order, so a test knows exactly which request fails how:

========================  ==================================================================
fault                     what the server does for that request
========================  ==================================================================
``"429"``, ``"429:1.5"``  HTTP 429, with ``Retry-After: 1.5`` when a number is given
``"500"``, ``"503"``      that HTTP status with an error body (also 502)
``"401"``, ``"403"``      that HTTP status: a rejected key
``"400"``, ``"404"``      that HTTP status (also 422)
``"timeout:2"``           sleeps 2 s (past the client's timeout), then answers normally
``"drop"``                closes the connection without a reply
``"nonjson"``             HTTP 200 whose body is not JSON
``"nofields"``            HTTP 200 with JSON that has no ``choices``
``"raw:BODY"``            HTTP 200, ``Content-Type: application/json``, whose body is ``BODY``
                          as it is, UTF-8 (JSON cut short, any shape; ``"\udcff"`` sends the
                          byte 0xff, as Python's ``surrogateescape`` error handler writes it)
========================  ==================================================================

The server is bounded: it answers at most ``max_requests`` requests (later ones get a
non-retryable 400) and shuts itself down after ``lifetime`` seconds. ``GET /stats`` returns
the counters as JSON, for processes that do not share memory with it.

Run standalone (the benchmark does): ``python tests/judge/fake_server.py [--delay S]``
prints the port on stdout and serves until stdin closes or the lifetime ends.

>>> import json, urllib.request
>>> with FakeServer() as server:
...     body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}]})
...     request = urllib.request.Request(server.url + "/chat/completions", body.encode(),
...                                      {"Content-Type": "application/json"})
...     reply = json.load(urllib.request.urlopen(request))
...     (reply["choices"][0]["message"]["content"] == reply_for("hi"), server.requests)
(True, 1)
"""

from __future__ import annotations

import argparse
import hashlib
import json
import socket
import sys
import threading
import time
from collections import Counter, deque
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256  # the default backlog of 5 drops connections opened at once


def reply_for(prompt: str) -> str:
    """The default deterministic answer to ``prompt``."""
    return "answer " + hashlib.sha256(prompt.encode()).hexdigest()[:16]


class FakeServer:
    """A threaded fake chat-completions server on 127.0.0.1 (use as a context manager).

    Parameters
    ----------
    delay : float
        Seconds every answered request takes (simulated latency).
    api_key : str or None
        When given, a request whose bearer token differs gets HTTP 401.
    responder : callable or None
        ``prompt -> reply text``; :func:`reply_for` by default.
    faults : callable or None
        ``prompt -> fault or None``, for a request whose prompt has no injected fault
        pending (a fault for prompts a test cannot spell out, as a template renders them).
    max_requests : int
        Requests answered before the server refuses every further one.
    lifetime : float
        Seconds after which the server shuts itself down.
    port : int
        0 picks a free port.
    """

    def __init__(
        self,
        *,
        delay: float = 0.0,
        api_key: str | None = None,
        responder: Callable[[str], str] | None = None,
        faults: Callable[[str], str | None] | None = None,
        max_requests: int = 50_000,
        lifetime: float = 300.0,
        port: int = 0,
    ) -> None:
        self.delay = delay
        self.api_key = api_key
        self.responder = responder or reply_for
        self.faults = faults
        self.max_requests = max_requests
        self.lifetime = lifetime
        self._lock = threading.Lock()
        self._faults: dict[str, deque[str]] = {}
        self.requests = 0
        self.counts: Counter[str] = Counter()
        self.in_flight = 0
        self.max_in_flight = 0
        self.bodies: list[dict[str, Any]] = []
        self._httpd = _Server(("127.0.0.1", port), _handler(self))
        self._thread: threading.Thread | None = None
        self._timer: threading.Timer | None = None

    @property
    def port(self) -> int:
        return self._httpd.server_address[1]

    @property
    def url(self) -> str:
        """The base URL an OpenAI client takes (``http://127.0.0.1:PORT/v1``)."""
        return f"http://127.0.0.1:{self.port}/v1"

    def inject(self, prompt: str, *faults: str) -> None:
        """Make the next requests for ``prompt`` fail with ``faults``, in order."""
        with self._lock:
            self._faults.setdefault(prompt, deque()).extend(faults)

    def reset_counts(self) -> None:
        """Forget the counters (not the pending faults)."""
        with self._lock:
            self.requests, self.max_in_flight = 0, 0
            self.counts.clear()
            self.bodies.clear()

    def stats(self) -> dict[str, Any]:
        with self._lock:
            return {
                "requests": self.requests,
                "max_in_flight": self.max_in_flight,
                "counts": dict(self.counts),
            }

    def start(self) -> FakeServer:
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,), daemon=True)
        self._thread.start()
        self._timer = threading.Timer(self.lifetime, self.stop)
        self._timer.daemon = True
        self._timer.start()
        return self

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        if self._thread is not None:
            self._httpd.shutdown()
            self._thread = None
        self._httpd.server_close()

    def __enter__(self) -> FakeServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- called by the handler threads ------------------------------------------------------

    def _begin(self, prompt: str, body: dict[str, Any]) -> tuple[str | None, bool]:
        """Count one request; return its fault (or None) and whether the budget is spent."""
        with self._lock:
            self.requests += 1
            self.counts[prompt] += 1
            if len(self.bodies) < 1000:
                self.bodies.append(body)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            queue = self._faults.get(prompt)
            fault = queue.popleft() if queue else None
            if fault is None and self.faults is not None:
                fault = self.faults(prompt)
            return fault, self.requests > self.max_requests

    def _end(self) -> None:
        with self._lock:
            self.in_flight -= 1


def _completion(model: str, text: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


def _handler(server: FakeServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def setup(self) -> None:
            super().setup()
            # headers and body go out in two writes: without this, Nagle's algorithm and
            # delayed ACKs hold the body back ~40 ms
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def log_message(self, format: str, *args: Any) -> None:  # keep stderr quiet
            pass

        def _send(self, status: int, payload: bytes, headers: dict[str, str] | None = None,
                  content_type: str = "application/json") -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(payload)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(payload)

        def _error(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
            body = {"error": {"message": message, "type": "fake", "code": status}}
            self._send(status, json.dumps(body).encode(), headers)

        def do_GET(self) -> None:
            if self.path.rstrip("/").endswith("/stats"):
                self._send(200, json.dumps(server.stats()).encode())
            else:
                self._error(404, "not found")

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            if not self.path.rstrip("/").endswith("/chat/completions"):
                self._error(404, f"no route {self.path}")
                return
            try:
                body = json.loads(raw)
                prompt = body["messages"][-1]["content"]
            except (ValueError, KeyError, IndexError, TypeError):
                self._error(400, "malformed request")
                return
            fault, spent = server._begin(prompt, body)
            try:
                self._answer(body, prompt, fault, spent)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (a timeout): nothing to answer
            finally:
                server._end()

        def _answer(self, body: dict[str, Any], prompt: str, fault: str | None,
                    spent: bool) -> None:
            if spent:
                self._error(400, "request budget of the fake server exhausted")
                return
            expected = f"Bearer {server.api_key}"
            if server.api_key is not None and self.headers.get("Authorization") != expected:
                self._error(401, "Incorrect API key provided")
                return
            kind, _, argument = (fault or "").partition(":")
            if kind == "drop":
                self.close_connection = True
                self.connection.shutdown(2)
                return
            if kind == "timeout":
                time.sleep(float(argument or 2.0))
            if kind in ("400", "401", "403", "404", "422", "429", "500", "502", "503"):
                headers = {"Retry-After": argument} if argument else None
                self._error(int(kind), f"injected {kind}", headers)
                return
            if kind == "nonjson":
                self._send(200, b"<html>upstream proxy error</html>", content_type="text/html")
                return
            if kind == "raw":
                self._send(200, argument.encode("utf-8", "surrogateescape"))
                return
            if kind == "nofields":
                self._send(200, json.dumps({"id": "chatcmpl-fake", "object": "x"}).encode())
                return
            if server.delay:
                time.sleep(server.delay)
            text = server.responder(prompt)
            self._send(200, json.dumps(_completion(body.get("model", ""), text)).encode())

    return Handler


def main(argv: list[str] | None = None) -> None:
    """Serve standalone: print the port, serve until stdin closes or the lifetime ends."""
    parser = argparse.ArgumentParser(description="fake OpenAI-compatible server on 127.0.0.1")
    parser.add_argument("--delay", type=float, default=0.0)
    parser.add_argument("--api-key", default=None)
    parser.add_argument("--max-requests", type=int, default=100_000)
    parser.add_argument("--lifetime", type=float, default=600.0)
    args = parser.parse_args(argv)
    server = FakeServer(delay=args.delay, api_key=args.api_key,
                        max_requests=args.max_requests, lifetime=args.lifetime).start()
    print(server.port, flush=True)
    done = threading.Event()
    threading.Thread(target=lambda: (sys.stdin.read(), done.set()), daemon=True).start()
    done.wait(args.lifetime)
    server.stop()


if __name__ == "__main__":
    main()
