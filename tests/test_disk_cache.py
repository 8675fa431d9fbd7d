"""The disk cache of derived tables: used only when sound and written for the same inputs."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from evalframe import _disk_cache
from evalframe._disk_cache import cache_folder, load_or_build


@pytest.fixture
def folder(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("EVALFRAME_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def _builder(value):
    calls = []

    def build():
        calls.append(1)
        return {"points": value}

    return build, calls


def test_a_table_is_built_once_then_read(folder):
    build, calls = _builder([[65, 90]])
    assert load_or_build("t", "k", build) == {"points": [[65, 90]]}
    assert load_or_build("t", "k", build) == {"points": [[65, 90]]}
    assert len(calls) == 1
    assert len(list(folder.iterdir())) == 1


def test_another_key_builds_again(folder):
    first, _ = _builder([1])
    second, calls = _builder([2])
    load_or_build("t", "python 3.11", first)
    assert load_or_build("t", "python 3.12", second) == {"points": [2]}
    assert calls == [1]


@pytest.mark.parametrize(
    "damage",
    [
        lambda text: text[: len(text) // 2],  # truncated
        lambda text: text.replace("[65, 90]", "[65, 91]"),  # edited: the hash no longer fits
        lambda text: "",
        lambda text: "[]",
        lambda text: json.dumps({**json.loads(text), "key": "other"}),
        lambda text: json.dumps({**json.loads(text), "table": [1]}),
    ],
)
def test_a_damaged_file_is_rebuilt_and_replaced(folder, damage):
    build, calls = _builder([[65, 90]])
    load_or_build("t", "k", build)
    (path,) = folder.iterdir()
    path.write_text(damage(path.read_text()))
    assert load_or_build("t", "k", build) == {"points": [[65, 90]]}
    assert len(calls) == 2
    assert load_or_build("t", "k", build) == {"points": [[65, 90]]}
    assert len(calls) == 2  # the rewritten file is sound again


def test_an_empty_variable_turns_the_cache_off(tmp_path, monkeypatch):
    monkeypatch.setenv("EVALFRAME_CACHE_DIR", "")
    monkeypatch.chdir(tmp_path)
    build, calls = _builder([1])
    load_or_build("t", "k", build)
    load_or_build("t", "k", build)
    assert cache_folder() is None and len(calls) == 2
    assert list(tmp_path.iterdir()) == []


def test_the_default_folder_follows_xdg(monkeypatch, tmp_path):
    monkeypatch.delenv("EVALFRAME_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache_folder() == tmp_path / "evalframe"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert cache_folder() == Path("~").expanduser() / ".cache" / "evalframe"


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes to read-only folders")
def test_a_read_only_folder_is_not_an_error(tmp_path, monkeypatch):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(stat.S_IRUSR | stat.S_IXUSR)
    monkeypatch.setenv("EVALFRAME_CACHE_DIR", str(locked / "cache"))
    build, calls = _builder([1])
    assert load_or_build("t", "k", build) == {"points": [1]}
    assert load_or_build("t", "k", build) == {"points": [1]} and len(calls) == 2


def test_a_folder_that_cannot_be_made_is_not_an_error(tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    monkeypatch.setenv("EVALFRAME_CACHE_DIR", str(blocker / "cache"))
    build, _ = _builder([1])
    assert load_or_build("t", "k", build) == {"points": [1]}
    assert not (blocker / "cache").exists()


def test_a_failed_write_leaves_no_temporary_file(folder, monkeypatch):
    def refuse(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(_disk_cache.os, "replace", refuse)
    build, _ = _builder([1])
    assert load_or_build("t", "k", build) == {"points": [1]}
    assert list(folder.iterdir()) == []


@pytest.mark.subprocess
def test_the_python_text_tables_read_back_equal_a_fresh_build(tmp_path):
    """A second process reads the tables its first wrote, equal to computing them anew."""
    script = (
        "import json; from evalframe.normalize import _python_text as t; "
        "print(json.dumps([t.word_class(True), t.whitespace_characters(), "
        "t._case_disagreements(False), t._case_disagreements(True), "
        "[list(r) for r in t._build_tables()['word']], "
        "t._computed_case_disagreements(False), t._computed_case_disagreements(True)]))"
    )
    env = {**os.environ, "EVALFRAME_CACHE_DIR": str(tmp_path)}
    runs = [
        json.loads(subprocess.run([sys.executable, "-c", script], env=env, check=True,
                                  capture_output=True, text=True).stdout)
        for _ in range(2)
    ]
    assert len(list(tmp_path.iterdir())) == 1
    assert runs[0] == runs[1]
    word_class, whitespace, lower, upper, fresh_word, fresh_lower, fresh_upper = runs[1]
    assert whitespace == "".join(chr(c) for c in range(sys.maxunicode + 1)
                                 if not 0xD800 <= c < 0xE000 and chr(c).isspace())
    assert (lower, upper) == (fresh_lower, fresh_upper)
    listed = pl.Series(list(lower))
    assert (listed.str.to_lowercase() != pl.Series([c.lower() for c in lower])).all()
    # not a word character: anything but 0-9, A-Z, _, a-z (and the non-ASCII ones after)
    assert word_class.startswith("[^\\x{30}-\\x{39}\\x{41}-\\x{5A}\\x{5F}\\x{61}-\\x{7A}\\x{")
    assert fresh_word[0] == [48, 57]  # the digits are the first word characters
