"""A path is a path: glob characters, ``~``, files named twice, directories, unreadable files."""

from __future__ import annotations

import importlib
import os
from pathlib import Path

import polars as pl
import pytest

import evalframe as ef
from evalframe import EvalframeError
from evalframe.io import expand_paths, load
from evalframe.io.paths import expand_user_path

# The package attribute `evalframe.io.load` is the function; the module is imported by name.
load_module = importlib.import_module("evalframe.io.load")


def parquet(path, value):
    pl.DataFrame({"prediction": [value], "gold": [value]}).write_parquet(path)
    return path


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet", ".csv", ".arrow"])
def test_existing_file_with_glob_characters_is_that_file(tmp_path, suffix):
    frame_1 = pl.DataFrame({"a": [1]})
    frame_2 = pl.DataFrame({"a": [2]})
    for frame, name in [(frame_1, f"b1{suffix}"), (frame_2, f"b[1]{suffix}")]:
        writer = {
            ".jsonl": frame.write_ndjson,
            ".parquet": frame.write_parquet,
            ".csv": frame.write_csv,
            ".arrow": frame.write_ipc,
        }[suffix]
        writer(tmp_path / name)
    assert load(tmp_path / f"b[1]{suffix}")["a"].to_list() == [2]
    assert load(str(tmp_path / f"b[1]{suffix}"))["a"].to_list() == [2]


def test_score_reads_the_named_file(tmp_path):
    (tmp_path / "b1.jsonl").write_text('{"prediction": "x", "gold": "y"}\n')
    (tmp_path / "b[1].jsonl").write_text('{"prediction": "x", "gold": "x"}\n')
    assert ef.score(tmp_path / "b[1].jsonl", ["exact_match"])["exact_match"].to_list() == [1.0]


def test_glob_keyword(tmp_path):
    parquet(tmp_path / "b1.parquet", "x")
    parquet(tmp_path / "b[1].parquet", "y")
    pattern = str(tmp_path / "b[1].parquet")
    assert load(pattern, glob=True)["prediction"].to_list() == ["x"]  # [1] is a class
    with pytest.raises(EvalframeError, match="file not found"):
        load(str(tmp_path / "b*.parquet"), glob=False)
    with pytest.raises(EvalframeError, match="no files match"):
        load(str(tmp_path / "c*.parquet"))


def test_glob_matching_only_directories(tmp_path):
    (tmp_path / "dir.parquet").mkdir()
    with pytest.raises(EvalframeError, match="no files match .*only the directories"):
        load(str(tmp_path / "*.parquet"))


def test_tilde_is_expanded(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    parquet(tmp_path / "a.parquet", "x")
    assert load("~/a.parquet")["prediction"].to_list() == ["x"]
    assert load("~/*.parquet")["prediction"].to_list() == ["x"]
    assert expand_user_path("~/a.parquet") == tmp_path / "a.parquet"
    assert expand_user_path(Path("x/y")) == Path("x/y")


def test_same_file_twice_is_read_once(tmp_path):
    first = parquet(tmp_path / "a.parquet", "x")
    parquet(tmp_path / "b.parquet", "y")
    (tmp_path / "link.parquet").symlink_to(first)
    spellings = [
        first,
        str(tmp_path / "*.parquet"),
        str(tmp_path / "." / "a.parquet"),
        tmp_path / "link.parquet",
    ]
    assert expand_paths(spellings) == [first, tmp_path / "b.parquet"]
    assert load(spellings)["prediction"].to_list() == ["x", "y"]


def test_empty_directory_and_missing_file(tmp_path):
    with pytest.raises(EvalframeError, match="holds no readable file"):
        load(tmp_path)
    with pytest.raises(EvalframeError, match="is a directory"):
        expand_paths(tmp_path)
    with pytest.raises(EvalframeError, match="file not found"):
        load(tmp_path / "missing.jsonl")


@pytest.mark.parametrize(
    ("source", "message"),
    [
        (123, "cannot load a int"),
        (b"a.jsonl", "cannot load a bytes"),
        (["a.jsonl", 3], "a list holding a int"),
        ({"a": 1}, "cannot load a dict"),
        ([], "no input files given"),
        ("", "non-empty"),
    ],
)
def test_wrong_python_types(source, message):
    with pytest.raises(EvalframeError, match=message):
        load(source)


@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() == 0,
    reason="root reads files whatever their mode; see test_unreadable_file_simulated",
)
def test_unreadable_file(tmp_path):
    path = parquet(tmp_path / "a.parquet", "x")
    path.chmod(0)
    try:
        with pytest.raises(EvalframeError, match=r"a\.parquet'.*permission denied"):
            load(path)
    finally:
        path.chmod(0o644)


def test_unreadable_file_simulated(tmp_path, monkeypatch):
    """Tests run as root, who can read a mode-000 file: simulate the failing open instead."""
    path = parquet(tmp_path / "a.parquet", "x")

    def denied(*args, **kwargs):
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(load_module, "open", denied, raising=False)
    with pytest.raises(EvalframeError, match=r"a\.parquet'.*permission denied"):
        load(path)


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("d.parquet", b'{"a": 1}\n', "it is UTF-8 text, not a parquet file"),
        ("d.arrow", b"PAR1....", r"it is a parquet file.*\.parquet"),
        ("d.csv", b"PK\x03\x04rest", "it is a zip archive"),
        ("d.parquet", b"", r"empty \(0 bytes\); expected a parquet file"),
    ],
)
def test_file_not_what_its_extension_says(tmp_path, name, content, message):
    (tmp_path / name).write_bytes(content)
    with pytest.raises(EvalframeError, match=message):
        load(tmp_path / name)


def test_truncated_parquet_names_the_file(tmp_path):
    path = parquet(tmp_path / "a.parquet", "x")
    path.write_bytes(path.read_bytes()[:-20])
    with pytest.raises(EvalframeError, match=r"a\.parquet'"):
        load(path)
