"""A durable cache of judgments in SQLite: every answer committed the moment it arrives.

One table, ``judgments``, keyed by :func:`judgment_key`: the sha256 of the judge's identity
(its model and every parameter that changes the answer, as canonical JSON) and the full
rendered prompt (so the template and the rubric are in the key). A row holds the reply
text, the identity, the prompt, and when it was asked and answered. Only answers are
stored: a prompt that failed (an exception, a final HTTP error, an unparseable server
reply) is not, so the next run asks it again.

Any Python string is stored and given back identically. JSON may escape a lone surrogate
(``"\\ud800"``), so a server can send text that UTF-8 cannot encode; such a text is stored
as a BLOB of its bytes with the ``surrogatepass`` error handler (every other text as
SQLite TEXT, as before) and decoded the same way when read.

Guarantees
----------
- Durability: each answer is committed in its own transaction as it arrives (WAL mode,
  ``synchronous=NORMAL``), so a process killed at any moment loses no answer it already
  stored; only an operating-system crash or power loss can lose the last few commits.
- Zero requests on a rerun: a prompt whose key is stored is never asked again.
- Several processes may share one file. SQLite serialises the writers (a busy timeout,
  and retries with backoff when the database stays locked), so the file is never corrupt.
  Before asking a prompt a process *claims* its key in a second table, ``claims``, in one
  ``BEGIN IMMEDIATE`` transaction (an atomic test-and-set across processes). A prompt
  claimed by another live process is not asked; the process waits for its answer. A
  claim is taken over when it has expired (a lease of ``lease`` seconds, renewed while
  its owner runs), when its owner is a process on this machine that is no longer alive
  (a killed run is resumed at once), or when its owner released it after a failure. So
  two processes never ask the same prompt twice unless a lease expires while its owner
  still waits for the server (a request slower than the lease); even then the first
  answer stored is the one every process returns.

>>> import tempfile, os
>>> path = os.path.join(tempfile.mkdtemp(), "judgments.sqlite")
>>> with JudgmentCache(path) as cache:
...     identity = {"backend": "callable", "name": "mod.judge"}
...     key = judgment_key(identity, "Which is better?")
...     cache.claim(key)
...     cache.store(key, identity, "Which is better?", "FIRST")
...     cache.lookup([key]) == {key: "FIRST"}, len(cache)
('claimed', None)
'FIRST'
(True, 1)
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import sqlite3
import threading
import time
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from evalframe.errors import EvalframeError

__all__ = ["CacheStats", "JudgmentCache", "canonical_json", "judgment_key", "utf8_text"]

#: The layout version written to ``PRAGMA user_version``.
SCHEMA_VERSION = 1
#: Keys per ``IN (...)`` query (below SQLite's bound on host parameters).
_CHUNK = 500

_SCHEMA = """
CREATE TABLE IF NOT EXISTS judgments (
    key         TEXT PRIMARY KEY,
    judge       TEXT NOT NULL,
    prompt      TEXT NOT NULL,
    reply       TEXT NOT NULL,
    asked_at    REAL NOT NULL,
    answered_at REAL NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS claims (
    key        TEXT PRIMARY KEY,
    owner      TEXT NOT NULL,
    expires_at REAL NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS claims_owner ON claims (owner);
"""


def canonical_json(identity: Mapping[str, Any]) -> str:
    """The identity as compact JSON with sorted keys (the form that is hashed and stored).

    >>> canonical_json({"model": "m", "temperature": 0.0, "backend": "openai-chat"})
    '{"backend":"openai-chat","model":"m","temperature":0.0}'
    """
    return json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def judgment_key(identity: Mapping[str, Any] | str, prompt: str) -> str:
    """The cache key: sha256 (hex) of the judge's canonical identity JSON and the prompt.

    ``identity`` is the dict of :func:`evalframe.judge.run.judge_identity` or its
    :func:`canonical_json`. The two parts are encoded as one JSON array, so no pair of
    different (identity, prompt) strings gives the same bytes.

    >>> judgment_key({"name": "j"}, "p") == judgment_key('{"name":"j"}', "p")
    True
    >>> judgment_key({"name": "j"}, "p") == judgment_key({"name": "j"}, "p ")
    False
    """
    text = identity if isinstance(identity, str) else canonical_json(identity)
    payload = json.dumps([text, prompt], ensure_ascii=False, separators=(",", ":"))
    # surrogatepass: the same bytes as UTF-8 for every text UTF-8 can encode
    return hashlib.sha256(payload.encode("utf-8", "surrogatepass")).hexdigest()


def _to_sql(text: str) -> str | bytes:
    """A text as SQLite stores it: TEXT, or a BLOB when UTF-8 cannot encode it.

    >>> _to_sql("FIRST"), _to_sql("FIRST \\ud800")
    ('FIRST', b'FIRST \\xed\\xa0\\x80')
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass")
    return text


def _from_sql(value: str | bytes) -> str:
    """The text :func:`_to_sql` stored.

    >>> _from_sql(_to_sql("FIRST \\ud800")) == "FIRST \\ud800"
    True
    """
    return value.decode("utf-8", "surrogatepass") if isinstance(value, bytes) else value


def utf8_text(text: str) -> str:
    """``text`` as UTF-8 can hold it: each lone surrogate replaced by U+FFFD.

    Polars, Arrow and parquet hold UTF-8 only; a surrogate pair (two code points that
    JSON escapes separately) becomes the character it encodes.

    >>> utf8_text("FIRST \\ud800"), utf8_text("\\ud83d\\ude00") == "\\U0001f600"
    ('FIRST \ufffd', True)
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return text


#: The columns of the cache's tables, and the primary key of each.
_TABLES = {
    "judgments": ("key", ("key", "judge", "prompt", "reply", "asked_at", "answered_at")),
    "claims": ("key", ("key", "owner", "expires_at")),
}


def _foreign_table(db: sqlite3.Connection) -> str | None:
    """What is wrong with a table of the cache's names that another program made, or None."""
    for table, (primary, columns) in _TABLES.items():
        row = db.execute("SELECT type FROM sqlite_master WHERE name = ?", (table,)).fetchone()
        if row is None:
            continue
        expected = f"a table with the columns {', '.join(columns)} (primary key {primary})"
        if row[0] != "table":
            return f"{table!r} is a {row[0]}; expected {expected}"
        info = db.execute(f"PRAGMA table_info({table})").fetchall()
        found = [name for _, name, *_ in info]
        keys = [name for _, name, _, _, _, pk in info if pk]
        if sorted(found) != sorted(columns) or keys != [primary]:
            return (f"the table {table!r} has the columns {', '.join(found) or 'none'}; "
                    f"expected {expected}")
    return None


@dataclass
class CacheStats:
    """What one :class:`JudgmentCache` object saw: answers found, not found, stored.

    ``hits`` and ``misses`` count distinct keys looked up; ``waited`` counts prompts this
    object found claimed by another process and then read from the cache instead of asking.
    """

    hits: int = 0
    misses: int = 0
    stored: int = 0
    waited: int = 0

    @property
    def hit_rate(self) -> float | None:
        """``hits / (hits + misses)``, or None before any lookup."""
        looked_up = self.hits + self.misses
        return self.hits / looked_up if looked_up else None


def _owner_alive(owner: str) -> bool:
    """Whether the process named by a claim's owner may still be running."""
    host, _, rest = owner.partition(":")
    pid_text = rest.partition(":")[0]
    if host != socket.gethostname() or not pid_text.isdigit():
        return True  # another machine: only the lease tells
    pid = int(pid_text)
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class JudgmentCache:
    """Judgments stored in an SQLite file (WAL mode), safe to share between processes.

    Parameters
    ----------
    path : str or Path
        The database file; created with its tables when absent.
    lease : float
        Seconds a claim on a prompt holds before another process may take it over
        (renewed by :meth:`renew` while its owner runs).
    busy_timeout : float
        Seconds SQLite waits for another writer's lock before raising; on top of that each
        operation is retried with backoff for up to ``busy_timeout`` more seconds.

    Attributes
    ----------
    stats : CacheStats
        Hits, misses and stores seen by this object.
    owner : str
        ``host:pid:nonce``, the name this object's claims carry.

    Examples
    --------
    >>> import tempfile, os
    >>> cache = JudgmentCache(os.path.join(tempfile.mkdtemp(), "c.sqlite"))
    >>> key = judgment_key({"name": "j"}, "p")
    >>> cache.lookup([key]), cache.stats.misses
    ({}, 1)
    >>> cache.close()
    """

    def __init__(self, path: str | os.PathLike[str], *, lease: float = 120.0,
                 busy_timeout: float = 30.0) -> None:
        self.path = Path(path)
        self.lease = float(lease)
        self.busy_timeout = float(busy_timeout)
        self.owner = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:12]}"
        self.stats = CacheStats()
        self._lock = threading.Lock()
        if self.path.parent and not self.path.parent.exists():
            raise EvalframeError(f"judgment cache: the folder {str(self.path.parent)!r} "
                                 "does not exist")
        try:
            self._db = sqlite3.connect(self.path, timeout=self.busy_timeout,
                                       isolation_level=None, check_same_thread=False)
            self._retry(self._setup)
        except sqlite3.DatabaseError as error:
            raise EvalframeError(f"judgment cache {str(self.path)!r} cannot be opened as an "
                                 f"SQLite database: {error}") from error

    def _setup(self) -> None:
        db = self._db
        db.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout * 1000)}")
        mode = db.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        if str(mode).lower() != "wal":
            raise EvalframeError(f"judgment cache {str(self.path)!r}: WAL mode unavailable "
                                 f"(journal mode {mode!r})")
        db.execute("PRAGMA synchronous = NORMAL")
        version = db.execute("PRAGMA user_version").fetchone()[0]
        if version not in (0, SCHEMA_VERSION):
            raise EvalframeError(f"judgment cache {str(self.path)!r} has layout version "
                                 f"{version}; this evalframe reads version {SCHEMA_VERSION}")
        foreign = _foreign_table(db)
        if foreign is not None:
            raise EvalframeError(f"judgment cache {str(self.path)!r} is not an evalframe "
                                 f"judgment cache: {foreign}; give another file")
        db.executescript(_SCHEMA)
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

    # -- plumbing ------------------------------------------------------------------------

    def _retry(self, operation: Any, *args: Any) -> Any:
        """Run ``operation`` under the lock, retrying while the database is locked."""
        deadline = time.monotonic() + self.busy_timeout
        delay = 0.005
        while True:
            try:
                with self._lock:
                    return operation(*args)
            except sqlite3.OperationalError as error:
                message = str(error).lower()
                if ("locked" not in message and "busy" not in message) or (
                        time.monotonic() > deadline):
                    raise
                time.sleep(delay)
                delay = min(delay * 2, 0.5)

    def _transaction(self, body: Any, *args: Any) -> Any:
        """Run ``body(db, *args)`` in one ``BEGIN IMMEDIATE`` transaction (write lock first)."""

        def run() -> Any:
            db = self._db
            db.execute("BEGIN IMMEDIATE")
            try:
                result = body(db, *args)
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")
            return result

        return self._retry(run)

    # -- reading -------------------------------------------------------------------------

    def _select(self, keys: Sequence[str]) -> dict[str, str]:
        found: dict[str, str] = {}
        for start in range(0, len(keys), _CHUNK):
            chunk = list(keys[start:start + _CHUNK])
            marks = ",".join("?" * len(chunk))
            rows = self._retry(lambda c=chunk, m=marks: self._db.execute(
                f"SELECT key, reply FROM judgments WHERE key IN ({m})", c).fetchall())
            found.update((key, _from_sql(reply)) for key, reply in rows)
        return found

    def lookup(self, keys: Iterable[str]) -> dict[str, str]:
        """The stored replies of ``keys`` (key -> reply text); counts hits and misses."""
        unique = list(dict.fromkeys(keys))
        found = self._select(unique)
        self.stats.hits += len(found)
        self.stats.misses += len(unique) - len(found)
        return found

    def poll(self, keys: Iterable[str]) -> dict[str, str]:
        """Like :meth:`lookup` without counting: for keys another process is answering."""
        return self._select(list(dict.fromkeys(keys)))

    def get(self, identity: Mapping[str, Any], prompt: str) -> str | None:
        """The stored reply of ``judge`` (its identity) to ``prompt``, or None.

        >>> import tempfile, os
        >>> with JudgmentCache(os.path.join(tempfile.mkdtemp(), "c.sqlite")) as cache:
        ...     cache.get({"name": "j"}, "p") is None
        True
        """
        return self._select([judgment_key(identity, prompt)]).get(judgment_key(identity, prompt))

    def __bool__(self) -> bool:  # an empty cache is still a cache
        return True

    def __len__(self) -> int:
        return self._retry(lambda: self._db.execute("SELECT count(*) FROM judgments")
                           .fetchone()[0])

    # -- claiming and storing ------------------------------------------------------------

    def claim(self, key: str) -> tuple[str, str | None]:
        """Try to take ``key`` for this object before asking its prompt.

        Returns ``("answered", reply)`` when it is already stored, ``("claimed", None)``
        when this object now holds it, ``("busy", None)`` when a live claim of another
        process holds it.
        """

        def body(db: sqlite3.Connection) -> tuple[str, str | None]:
            row = db.execute("SELECT reply FROM judgments WHERE key = ?", (key,)).fetchone()
            if row is not None:
                return "answered", _from_sql(row[0])
            now = time.time()
            held = db.execute("SELECT owner, expires_at FROM claims WHERE key = ?",
                              (key,)).fetchone()
            if held is not None and held[0] != self.owner and held[1] > now and _owner_alive(
                    held[0]):
                return "busy", None
            db.execute("INSERT OR REPLACE INTO claims (key, owner, expires_at) VALUES (?, ?, ?)",
                       (key, self.owner, now + self.lease))
            return "claimed", None

        return self._transaction(body)

    def store(self, key: str, identity: Mapping[str, Any] | str, prompt: str, reply: str, *,
              asked_at: float | None = None) -> str:
        """Commit ``reply`` for ``key`` now and drop this object's claim on it.

        When another process stored an answer first, that one is kept and returned, so
        every process sharing the cache returns the same reply.
        """
        if not isinstance(reply, str):
            raise EvalframeError(f"judgment cache: a reply must be a string, got "
                                 f"{type(reply).__name__}")
        judge = identity if isinstance(identity, str) else canonical_json(identity)
        now = time.time()

        def body(db: sqlite3.Connection) -> str:
            cursor = db.execute(
                "INSERT OR IGNORE INTO judgments (key, judge, prompt, reply, asked_at, "
                "answered_at) VALUES (?, ?, ?, ?, ?, ?)",
                (key, _to_sql(judge), _to_sql(prompt), _to_sql(reply),
                 now if asked_at is None else asked_at, now))
            db.execute("DELETE FROM claims WHERE key = ? AND owner = ?", (key, self.owner))
            if cursor.rowcount == 1:
                return reply
            first = db.execute("SELECT reply FROM judgments WHERE key = ?", (key,)).fetchone()
            return _from_sql(first[0])

        stored = self._transaction(body)
        self.stats.stored += 1
        return stored

    def release(self, keys: Iterable[str] | None = None) -> None:
        """Drop this object's claims on ``keys`` (all of its claims when None)."""
        if keys is None:
            self._transaction(lambda db: db.execute("DELETE FROM claims WHERE owner = ?",
                                                    (self.owner,)))
            return
        rows = [(key, self.owner) for key in keys]
        if rows:
            self._transaction(lambda db: db.executemany(
                "DELETE FROM claims WHERE key = ? AND owner = ?", rows))

    def renew(self) -> None:
        """Extend the lease of every claim this object holds by ``lease`` seconds from now."""
        self._transaction(lambda db: db.execute(
            "UPDATE claims SET expires_at = ? WHERE owner = ?",
            (time.time() + self.lease, self.owner)))

    # -- export --------------------------------------------------------------------------

    def frame(self) -> pl.DataFrame:
        """Every stored judgment as a DataFrame, ordered by when it was answered.

        Columns: ``key``, ``judge`` (identity JSON), ``judge_model`` (its ``model`` or
        ``name``), ``prompt``, ``reply``, ``asked_at``, ``answered_at`` (UTC datetimes).
        A lone surrogate in a text is U+FFFD here (:func:`utf8_text`): Polars holds UTF-8.
        """
        rows = self._retry(lambda: [
            (key, *(utf8_text(_from_sql(text)) if isinstance(text, bytes) else text
                    for text in texts), asked, answered)
            for key, *texts, asked, answered in self._db.execute(
                "SELECT key, judge, prompt, reply, asked_at, answered_at FROM judgments "
                "ORDER BY answered_at, key")])
        schema = {"key": pl.String, "judge": pl.String, "prompt": pl.String,
                  "reply": pl.String, "asked_at": pl.Float64, "answered_at": pl.Float64}
        frame = pl.DataFrame(rows, schema=schema, orient="row")
        as_time = [(pl.col(name) * 1e6).cast(pl.Int64).cast(pl.Datetime("us", "UTC"))
                   for name in ("asked_at", "answered_at")]
        model = pl.coalesce(pl.col("judge").str.json_path_match("$.model"),
                            pl.col("judge").str.json_path_match("$.name")).alias("judge_model")
        return frame.with_columns(*as_time, model).select(
            "key", "judge", "judge_model", "prompt", "reply", "asked_at", "answered_at")

    def export(self, path: str | os.PathLike[str]) -> Path:
        """Write every stored judgment (:meth:`frame`) to a parquet file; return its path.

        >>> import tempfile, os, polars as pl
        >>> folder = tempfile.mkdtemp()
        >>> with JudgmentCache(os.path.join(folder, "c.sqlite")) as cache:
        ...     key = judgment_key({"model": "m"}, "p")
        ...     _ = cache.store(key, {"model": "m"}, "p", "TIE")
        ...     out = cache.export(os.path.join(folder, "judgments.parquet"))
        >>> pl.read_parquet(out).select("judge_model", "prompt", "reply").rows()
        [('m', 'p', 'TIE')]
        """
        out = Path(path)
        self.frame().write_parquet(out)
        return out

    # -- lifetime ------------------------------------------------------------------------

    def close(self) -> None:
        """Release this object's claims and close the connection."""
        if getattr(self, "_db", None) is None:
            return
        try:
            self.release()
        finally:
            with self._lock:
                self._db.close()
            self._db = None  # type: ignore[assignment]

    def __enter__(self) -> JudgmentCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"JudgmentCache({str(self.path)!r})"
