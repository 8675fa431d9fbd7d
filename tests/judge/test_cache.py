"""The SQLite judgment cache: keys, durability, claims between processes, export."""

from __future__ import annotations

import hashlib
import json
import os
import socket
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from collections import Counter
from datetime import UTC, datetime

import polars as pl
import pytest

from evalframe import EvalframeError
from evalframe.judge.cache import JudgmentCache, canonical_json, judgment_key
from evalframe.judge.run import ask, judge_identity

IDENTITY = {"backend": "callable", "name": "tests.judge"}


def test_key_is_the_sha256_of_identity_json_and_prompt():
    # by hand: the canonical identity JSON and the prompt, as one compact JSON array
    payload = '["{\\"backend\\":\\"callable\\",\\"name\\":\\"tests.judge\\"}","Is A better?"]'
    assert judgment_key(IDENTITY, "Is A better?") == hashlib.sha256(payload.encode()).hexdigest()
    assert canonical_json({"b": 1, "a": [1, 2]}) == '{"a":[1,2],"b":1}'
    assert judgment_key({"name": "x", "seed": 1}, "p") != judgment_key({"name": "x", "seed": 2},
                                                                        "p")
    # no ambiguity between where the identity ends and the prompt begins
    assert judgment_key("a", "bc") != judgment_key("ab", "c")


def test_wal_mode_tables_and_rows(tmp_path):
    path = tmp_path / "c.sqlite"
    with JudgmentCache(path) as cache:
        key = judgment_key(IDENTITY, "p")
        before = time.time()
        assert cache.store(key, IDENTITY, "p", "FIRST", asked_at=before - 1) == "FIRST"
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        rows = db.execute("SELECT key, judge, prompt, reply, asked_at, answered_at "
                          "FROM judgments").fetchall()
        assert db.execute("SELECT count(*) FROM claims").fetchone() == (0,)
    assert len(rows) == 1
    stored_key, judge, prompt, reply, asked_at, answered_at = rows[0]
    assert (stored_key, json.loads(judge), prompt, reply) == (key, IDENTITY, "p", "FIRST")
    assert asked_at == pytest.approx(before - 1) and before <= answered_at <= time.time()


def test_lookup_counts_hits_and_misses(tmp_path):
    with JudgmentCache(tmp_path / "c.sqlite") as cache:
        keys = [judgment_key(IDENTITY, f"p{i}") for i in range(1200)]  # over one IN chunk
        for i in range(0, 1200, 3):
            cache.store(keys[i], IDENTITY, f"p{i}", f"r{i}")
        found = cache.lookup(keys + keys[:10])
        assert found == {keys[i]: f"r{i}" for i in range(0, 1200, 3)}
        assert (cache.stats.hits, cache.stats.misses, cache.stats.stored) == (400, 800, 400)
        assert cache.stats.hit_rate == pytest.approx(1 / 3)
        assert cache.get(IDENTITY, "p3") == "r3" and cache.get(IDENTITY, "p4") is None


def test_claims_between_two_owners(tmp_path):
    path = tmp_path / "c.sqlite"
    first, second = JudgmentCache(path), JudgmentCache(path)
    key = judgment_key(IDENTITY, "p")
    assert first.claim(key) == ("claimed", None)
    assert second.claim(key) == ("busy", None)
    first.release([key])
    assert second.claim(key) == ("claimed", None)
    assert first.claim(key) == ("busy", None)
    assert second.store(key, IDENTITY, "p", "B") == "B"
    assert first.claim(key) == ("answered", "B")
    # the first answer stored wins: a later store returns it
    assert first.store(key, IDENTITY, "p", "A") == "B"
    first.close()
    second.close()


@pytest.mark.slow
def test_expired_lease_is_taken_over_and_renewal_keeps_it(tmp_path):
    path = tmp_path / "c.sqlite"
    short, other = JudgmentCache(path, lease=0.4), JudgmentCache(path)
    key = judgment_key(IDENTITY, "held")
    assert short.claim(key)[0] == "claimed"  # held until t = 0.4
    time.sleep(0.25)
    short.renew()  # now until t = 0.65
    time.sleep(0.25)
    assert other.claim(key) == ("busy", None)  # t = 0.5: expired had it not been renewed
    time.sleep(0.25)
    assert other.claim(key) == ("claimed", None)  # t = 0.75
    short.close()
    other.close()


@pytest.mark.subprocess
def test_claim_of_a_dead_process_is_taken_over_at_once(tmp_path):
    path = tmp_path / "c.sqlite"
    finished = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                              capture_output=True, text=True, check=True)
    dead = f"{socket.gethostname()}:{finished.stdout.strip()}:abc"
    elsewhere = "another-host.example:1:abc"
    with JudgmentCache(path) as cache:
        far = time.time() + 3600
        with sqlite3.connect(path) as db:
            db.execute("INSERT INTO claims VALUES (?, ?, ?)", ("k-dead", dead, far))
            db.execute("INSERT INTO claims VALUES (?, ?, ?)", ("k-far", elsewhere, far))
        assert cache.claim("k-dead") == ("claimed", None)
        assert cache.claim("k-far") == ("busy", None)  # only its lease can tell


@pytest.mark.slow
def test_writes_wait_for_another_writer_lock(tmp_path):
    path = tmp_path / "c.sqlite"
    cache = JudgmentCache(path, busy_timeout=5)
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN IMMEDIATE")
    threading.Timer(0.3, lambda: holder.execute("COMMIT")).start()
    start = time.perf_counter()
    assert cache.store(judgment_key(IDENTITY, "p"), IDENTITY, "p", "x") == "x"
    assert time.perf_counter() - start >= 0.25
    holder.close()
    cache.close()


def test_errors_are_not_cached_and_are_asked_again(tmp_path):
    path = tmp_path / "c.sqlite"
    calls = Counter()

    def judge(prompt: str) -> str:
        calls[prompt] += 1
        if prompt == "bad" and calls[prompt] == 1:
            raise TimeoutError("slow")
        return prompt * 2

    first = ask(["ok", "bad"], judge, cache=path, quiet=True)
    assert [r.text for r in first] == ["okok", None]
    with JudgmentCache(path) as cache:
        assert len(cache) == 1
    second = ask(["ok", "bad"], judge, cache=path, quiet=True)
    assert [(r.text, r.cached) for r in second] == [("okok", True), ("badbad", False)]
    assert calls == {"ok": 1, "bad": 2}
    third = ask(["ok", "bad"], judge, cache=path, quiet=True)
    assert third.stats.requests == 0 and third.stats.hit_rate == 1.0


def test_a_different_judge_or_prompt_is_a_different_entry(tmp_path):
    path = tmp_path / "c.sqlite"

    def judge_one(prompt):
        return "one"

    def judge_two(prompt):
        return "two"

    assert ask(["p"], judge_one, cache=path, quiet=True)[0].text == "one"
    assert ask(["p"], judge_two, cache=path, quiet=True)[0] == type(
        ask(["p"], judge_one, cache=path, quiet=True)[0])("two", None, False)
    assert ask(["p "], judge_one, cache=path, quiet=True)[0].cached is False
    with JudgmentCache(path) as cache:
        assert len(cache) == 3
        assert cache.get(judge_identity(judge_two), "p") == "two"


def test_export_to_parquet(tmp_path):
    path = tmp_path / "c.sqlite"
    with JudgmentCache(path) as cache:
        openai_identity = {"backend": "openai-chat", "model": "gpt-x", "seed": 1}
        cache.store(judgment_key(openai_identity, "q1"), openai_identity, "q1", "FIRST",
                    asked_at=1_700_000_000.0)
        cache.store(judgment_key(IDENTITY, "q2"), IDENTITY, "q2", "TIE")
        out = cache.export(tmp_path / "judgments.parquet")
    frame = pl.read_parquet(out)
    assert frame.columns == ["key", "judge", "judge_model", "prompt", "reply", "asked_at",
                             "answered_at"]
    assert frame.schema["asked_at"] == pl.Datetime("us", "UTC")
    assert frame.select("judge_model", "prompt", "reply").rows() == [
        ("gpt-x", "q1", "FIRST"), ("tests.judge", "q2", "TIE")]
    assert frame["asked_at"][0] == datetime(2023, 11, 14, 22, 13, 20, tzinfo=UTC)
    assert frame["key"][1] == judgment_key(IDENTITY, "q2")


def test_bad_files_are_clear_errors(tmp_path):
    garbage = tmp_path / "not.sqlite"
    garbage.write_bytes(b"this is not a database at all" * 100)
    with pytest.raises(EvalframeError, match="cannot be opened as an SQLite database"):
        JudgmentCache(garbage)
    with pytest.raises(EvalframeError, match="does not exist"):
        JudgmentCache(tmp_path / "missing" / "c.sqlite")
    newer = tmp_path / "newer.sqlite"
    with sqlite3.connect(newer) as db:
        db.execute("PRAGMA user_version = 9")
    with pytest.raises(EvalframeError, match="layout version 9"):
        JudgmentCache(newer)
    with pytest.raises(EvalframeError, match="cache must be None, a path or a JudgmentCache"):
        ask(["p"], str.upper, cache=3)
    with pytest.raises(EvalframeError, match="a reply must be a string"):
        JudgmentCache(tmp_path / "c.sqlite").store("k", IDENTITY, "p", None)


#: Texts a server can send, each a Python str the cache must give back identically.
HOSTILE_TEXTS = [
    "FIRST \ud800",  # a lone high surrogate, as JSON's "\\ud800" decodes
    "\udfff tail",  # a lone low surrogate
    "\ud83d\ude00",  # a surrogate pair as two code points: not the character U+1F600
    "\U0001f600 \u202e RTL \u200b",  # the character itself, a bidi override, a zero width
    "nul \x00 inside",
    "",
    "x" * 100_000,
]


@pytest.mark.parametrize("text", HOSTILE_TEXTS, ids=range(len(HOSTILE_TEXTS)))
def test_any_text_round_trips_identically(tmp_path, text):
    path = tmp_path / "c.sqlite"
    identity = {**IDENTITY, "system": text}
    prompt = "Judge this: " + text
    key = judgment_key(identity, prompt)
    with JudgmentCache(path) as cache:
        assert cache.claim(key) == ("claimed", None)
        assert cache.store(key, identity, prompt, text) == text
    with JudgmentCache(path) as cache:  # read back by a new connection
        assert cache.lookup([key]) == {key: text}
        assert cache.claim(key) == ("answered", text)
        assert cache.get(identity, prompt) == text
        assert cache.store(key, identity, prompt, "other") == text  # the first answer wins
        frame = cache.frame()
    # Polars holds UTF-8: a lone surrogate is U+FFFD in the exported frame
    shown = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    assert frame["reply"].to_list() == [shown]
    assert frame["prompt"].to_list() == ["Judge this: " + shown]


def test_a_reply_with_a_lone_surrogate_is_cached_and_asked_once(tmp_path):
    path = tmp_path / "c.sqlite"
    calls = Counter()

    def judge(prompt):
        calls[prompt] += 1
        return prompt + " \ud800"

    first = ask(["a", "b"], judge, cache=path, quiet=True)
    again = ask(["a", "b"], judge, cache=path, quiet=True)
    assert [r.text for r in first] == [r.text for r in again] == ["a \ud800", "b \ud800"]
    assert [r.cached for r in again] == [True, True] and calls == {"a": 1, "b": 1}


def test_the_key_of_a_text_utf8_can_encode_is_unchanged():
    # by hand: surrogatepass changes no byte of a text UTF-8 can encode
    payload = '["{\\"name\\":\\"j\\"}","caf\u00e9 \U0001f600"]'
    expected = hashlib.sha256(payload.encode("utf-8")).hexdigest()
    assert judgment_key({"name": "j"}, "caf\u00e9 \U0001f600") == expected
    assert judgment_key({"name": "j"}, "\ud800") != judgment_key({"name": "j"}, "\udc00")


@pytest.mark.parametrize(
    ("ddl", "found"),
    [
        ("CREATE TABLE judgments (id INTEGER PRIMARY KEY, verdict TEXT)", "id, verdict"),
        # the right columns without the primary key: INSERT OR IGNORE would keep duplicates
        ("CREATE TABLE judgments (key TEXT, judge TEXT, prompt TEXT, reply TEXT, "
         "asked_at REAL, answered_at REAL)", "key, judge, prompt, reply, asked_at, answered_at"),
        ("CREATE TABLE claims (key TEXT PRIMARY KEY, holder TEXT)", "key, holder"),
        ("CREATE TABLE t (x); CREATE VIEW judgments AS SELECT x FROM t", "is a view"),
    ],
)
def test_a_foreign_table_of_the_same_name_is_a_clear_error(tmp_path, ddl, found):
    path = tmp_path / "other.sqlite"
    with sqlite3.connect(path) as db:
        db.executescript(ddl)
    with pytest.raises(EvalframeError) as caught:
        JudgmentCache(path)
    message = str(caught.value)
    assert message.startswith(f"judgment cache {str(path)!r} is not an evalframe judgment cache")
    assert found in message
    assert "expected a table with the columns key, " in message
    with pytest.raises(EvalframeError, match="is not an evalframe judgment cache"):
        ask(["p"], str.upper, cache=path)


WORKER = textwrap.dedent("""
    import json, os, sys, time
    from evalframe.judge.run import ask

    cache, log, out, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    folder = os.path.dirname(out)
    open(out + ".ready", "w").close()  # start together: wait until both are ready
    deadline = time.time() + 30
    while sum(name.endswith(".ready") for name in os.listdir(folder)) < 2:
        assert time.time() < deadline
        time.sleep(0.005)

    def judge(prompt):
        with open(log, "a") as handle:  # one short O_APPEND write per call
            handle.write(prompt + "\\n")
        time.sleep(0.01)
        return "reply to " + prompt

    replies = ask([f"prompt {i}" for i in range(n)], judge, cache=cache, concurrency=4,
                  quiet=True)
    stats = replies.stats
    json.dump({"texts": [r.text for r in replies], "hits": stats.hits,
               "requests": stats.requests}, open(out, "w"))
""")


@pytest.mark.subprocess
def test_two_processes_share_one_cache_without_asking_twice(tmp_path):
    script = tmp_path / "worker.py"
    script.write_text(WORKER)
    cache, log, n = tmp_path / "shared.sqlite", tmp_path / "calls.log", 150
    JudgmentCache(cache).close()  # both start on an existing file
    outs = [tmp_path / "a.json", tmp_path / "b.json"]
    workers = [subprocess.Popen([sys.executable, str(script), str(cache), str(log), str(out),
                                 str(n)]) for out in outs]
    assert [worker.wait(timeout=60) for worker in workers] == [0, 0]
    calls = Counter(log.read_text().splitlines())
    expected = [f"reply to prompt {i}" for i in range(n)]
    assert calls == Counter({f"prompt {i}": 1 for i in range(n)})  # each asked once in all
    results = [json.loads(out.read_text()) for out in outs]
    assert results[0]["texts"] == results[1]["texts"] == expected
    # what one process asked, the other read from the cache
    assert results[0]["requests"] + results[1]["requests"] == n
    assert min(results[0]["requests"], results[1]["requests"]) > 0  # they really shared
    assert results[0]["hits"] == n - results[0]["requests"]
    assert results[1]["hits"] == n - results[1]["requests"]
    with sqlite3.connect(cache) as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert db.execute("SELECT count(*), count(DISTINCT key) FROM judgments").fetchone() == (
            n, n)
        assert db.execute("SELECT count(*) FROM claims").fetchone() == (0,)
    assert os.path.getsize(cache) > 0
