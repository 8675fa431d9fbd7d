"""Saving results: formats by extension, streaming, metadata, clear errors."""

from __future__ import annotations

import os
import re
import signal
import stat
import tempfile
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import polars as pl
import pyarrow.parquet as pq
import pytest

from evalframe import EvalframeError
from evalframe.io import load, save

FRAME = pl.DataFrame({"model": ["a", "b"], "squad_f1": [0.5, None]})


@pytest.mark.parametrize("name", ["o.parquet", "o.csv", "o.jsonl", "o.arrow", "o.json"])
@pytest.mark.parametrize("lazy", [False, True])
def test_round_trip(tmp_path, name, lazy):
    save(FRAME.lazy() if lazy else FRAME, tmp_path / name)
    assert load(tmp_path / name).equals(FRAME)


def test_parquet_metadata(tmp_path):
    save(FRAME, tmp_path / "o.parquet", metadata={"evalframe.version": "x"})
    assert pq.read_metadata(tmp_path / "o.parquet").metadata[b"evalframe.version"] == b"x"


def test_csv_refuses_nested_columns(tmp_path):
    with pytest.raises(EvalframeError, match=r"columns \['gold'\] are nested"):
        save(pl.DataFrame({"gold": [["a"]]}), tmp_path / "o.csv")


def test_unknown_extension(tmp_path):
    with pytest.raises(EvalframeError, match="cannot write"):
        save(FRAME, tmp_path / "o.xlsx")


@pytest.mark.parametrize("name", ["o.parquet", "o.csv", "o.jsonl", "o.arrow"])
def test_a_plan_failing_half_way_leaves_no_partial_file(tmp_path, name):
    # 200,000 rows in row groups; a bad row deep inside fails the streamed plan after
    # earlier batches were written. Nothing may be left that looks like a result, and a
    # file already at the target stays as it was.
    import evalframe as ef

    c = [1] * 200_000
    c[150_000] = 30
    source = tmp_path / "counts.parquet"
    pl.DataFrame({"n": [10] * 200_000, "c": c}).write_parquet(source, row_group_size=20_000)
    with pytest.raises(EvalframeError, match=r"First offending row: 150000 \(n=10, c=30\)$"):
        save(ef.score(ef.scan(source), ["pass@1"]), tmp_path / name)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["counts.parquet"]

    save(FRAME, tmp_path / name)
    before = (tmp_path / name).read_bytes()
    with pytest.raises(EvalframeError):
        save(ef.score(ef.scan(source), ["pass@1"]), tmp_path / name)
    assert (tmp_path / name).read_bytes() == before


def test_unwritable_target_is_a_clear_error(tmp_path):
    with pytest.raises(EvalframeError, match="cannot write"):
        save(FRAME, tmp_path / "missing-dir" / "o.parquet")


# --- atomic, private, interruptible ------------------------------------------------------

TEMPORARY = r"\.o\.parquet\.[A-Za-z0-9_]+\.partial"


def _names(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


@pytest.fixture(scope="module")
def batched(tmp_path_factory) -> Path:
    """200 row groups of 1,000 rows: polars streams them batch by batch."""
    source = tmp_path_factory.mktemp("source") / "batches.parquet"
    pl.DataFrame({"i": range(200_000)}).write_parquet(source, row_group_size=1_000)
    return source


def _observing(source: Path, each_batch) -> pl.LazyFrame:
    """A streamed plan that calls ``each_batch(number)`` in polars' threads, batch by batch."""
    seen = iter(range(10**9))

    def batch(series: pl.Series) -> pl.Series:
        each_batch(next(seen))
        return series

    return pl.scan_parquet(source).with_columns(
        pl.col("i").map_batches(batch, return_dtype=pl.Int64, is_elementwise=True)
    )


@pytest.mark.parametrize("lazy", [False, True])
def test_parquet_metadata_from_a_dataframe_or_a_lazyframe(tmp_path, lazy):
    save(FRAME.lazy() if lazy else FRAME, tmp_path / "o.parquet", metadata={"k": "v"})
    assert pq.read_metadata(tmp_path / "o.parquet").metadata[b"k"] == b"v"
    assert _names(tmp_path) == ["o.parquet"]


def test_the_temporary_file_is_unique_and_private(tmp_path, batched):
    # A stale file with the old fixed name (another writer's) is neither used nor removed.
    stale = tmp_path / ".o.parquet.partial"
    stale.write_bytes(b"another writer")
    seen: list[dict[str, int]] = []

    def look(number: int) -> None:
        if number == 0:
            seen.append(
                {p.name: stat.S_IMODE(p.stat().st_mode) for p in tmp_path.iterdir()
                 if p.name.endswith(".partial") and p != stale}
            )

    for _ in range(2):
        save(_observing(batched, look), tmp_path / "o.parquet")
    (first,), (second,) = (list(names) for names in seen)
    assert re.fullmatch(TEMPORARY, first) and re.fullmatch(TEMPORARY, second)
    assert first != second
    assert set(seen[0].values()) == {0o600}  # nobody else reads a half-written file
    assert stale.read_bytes() == b"another writer"
    assert _names(tmp_path) == [".o.parquet.partial", "o.parquet"]


def test_a_tilde_is_the_home_folder(tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(tmp_path)
    save(FRAME, "~/o.parquet")
    assert pl.read_parquet(home / "o.parquet").equals(FRAME)
    assert _names(home) == ["o.parquet"]
    assert _names(tmp_path) == ["home"]  # no folder named '~'


def test_a_symlink_is_written_through(tmp_path):
    real = tmp_path / "real" / "o.parquet"
    real.parent.mkdir()
    save(pl.DataFrame({"x": [0]}), real)
    link = tmp_path / "link.parquet"
    link.symlink_to(real)
    save(FRAME, link)
    assert link.is_symlink() and link.resolve() == real.resolve()
    assert pl.read_parquet(real).equals(FRAME)
    assert _names(tmp_path) == ["link.parquet", "real"]
    assert _names(real.parent) == ["o.parquet"]  # the temporary file was beside the real file


def test_a_dangling_symlink_creates_its_target(tmp_path):
    link = tmp_path / "link.parquet"
    link.symlink_to("made.parquet")
    save(FRAME, link)
    assert link.is_symlink() and pl.read_parquet(tmp_path / "made.parquet").equals(FRAME)


def test_a_symlink_loop_is_a_clear_error(tmp_path):
    (tmp_path / "a.parquet").symlink_to("b.parquet")
    (tmp_path / "b.parquet").symlink_to("a.parquet")
    with pytest.raises(EvalframeError, match="cannot write .*a loop of symbolic links"):
        save(FRAME, tmp_path / "a.parquet")
    assert _names(tmp_path) == ["a.parquet", "b.parquet"]


@contextmanager
def _umask(mask: int):
    previous = os.umask(mask)
    try:
        yield
    finally:
        os.umask(previous)


@pytest.mark.parametrize("mask", [0o022, 0o027, 0o077])
def test_a_new_file_follows_the_umask(tmp_path, mask):
    with _umask(mask):
        save(FRAME, tmp_path / "o.parquet")
        (tmp_path / "plain").write_bytes(b"")  # what open() gives
    assert stat.S_IMODE((tmp_path / "o.parquet").stat().st_mode) == 0o666 & ~mask
    assert stat.S_IMODE((tmp_path / "plain").stat().st_mode) == 0o666 & ~mask


def test_a_replaced_file_keeps_its_mode(tmp_path):
    target = tmp_path / "o.parquet"
    save(pl.DataFrame({"x": [0]}), target)
    target.chmod(0o640)
    link = tmp_path / "link.parquet"
    link.symlink_to(target)
    save(FRAME, link)
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert pl.read_parquet(target).equals(FRAME)


@pytest.mark.skipif(os.geteuid() != 0, reason="only root may give a file to another user")
def test_a_replaced_file_keeps_its_owner(tmp_path):
    target = tmp_path / "o.parquet"
    save(pl.DataFrame({"x": [0]}), target)
    os.chown(target, 65534, 65534)
    save(FRAME, target)
    assert (target.stat().st_uid, target.stat().st_gid) == (65534, 65534)


@pytest.mark.parametrize("name", ["o.parquet", "o.csv", "o.jsonl", "o.arrow"])
def test_sigint_stops_a_save_at_once_and_cleans_up(tmp_path, batched, name):
    # The plan sends SIGINT from a polars thread at its 3rd batch; the save must stop
    # there (KeyboardInterrupt, as for Ctrl-C), not after the last of 200 slow batches.
    target = tmp_path / name
    save(FRAME, target)
    before = target.read_bytes()
    batches: list[int] = []

    def interrupt_at_3(number: int) -> None:
        batches.append(number)
        if number == 3:
            os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.01)

    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            save(_observing(batched, interrupt_at_3), target)
    finally:
        signal.signal(signal.SIGINT, previous)
    assert len(batches) < 100
    assert _names(tmp_path) == [name]
    assert target.read_bytes() == before


class _Stopped(Exception):
    pass


def _raise_stopped(signum, frame):
    raise _Stopped(signum)


@pytest.mark.parametrize("name", ["o.parquet", "o.csv"])
def test_sigterm_stops_a_save_cleans_up_and_reaches_the_previous_handler(
    tmp_path, batched, name
):
    target = tmp_path / name
    save(FRAME, target)
    before = target.read_bytes()
    batches: list[int] = []

    def terminate_at_3(number: int) -> None:
        batches.append(number)
        if number == 3:
            os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(0.01)

    previous = signal.signal(signal.SIGTERM, _raise_stopped)
    try:
        with pytest.raises(_Stopped):
            save(_observing(batched, terminate_at_3), target)
        assert signal.getsignal(signal.SIGTERM) is _raise_stopped  # restored
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert len(batches) < 100
    assert _names(tmp_path) == [name]
    assert target.read_bytes() == before


def test_sigterm_with_a_handler_that_returns_is_an_error(tmp_path, batched):
    calls: list[int] = []
    previous = signal.signal(signal.SIGTERM, lambda signum, frame: calls.append(signum))

    def terminate_at_3(number: int) -> None:
        if number == 3:
            os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(0.01)

    try:
        with pytest.raises(EvalframeError, match="cannot write .*interrupted by SIGTERM"):
            save(_observing(batched, terminate_at_3), tmp_path / "o.parquet")
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert calls == [signal.SIGTERM]
    assert _names(tmp_path) == []


@pytest.mark.parametrize("disposition", [signal.SIG_DFL, signal.SIG_IGN])
def test_the_sigterm_disposition_is_restored(tmp_path, disposition):
    previous = signal.signal(signal.SIGTERM, disposition)
    try:
        save(FRAME.lazy(), tmp_path / "o.parquet")
        assert signal.getsignal(signal.SIGTERM) == disposition
    finally:
        signal.signal(signal.SIGTERM, previous)


def test_saving_from_another_thread(tmp_path):
    errors: list[BaseException] = []

    def work() -> None:
        try:
            save(FRAME.lazy(), tmp_path / "o.parquet")
        except BaseException as error:  # pragma: no cover - reported below
            errors.append(error)

    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    assert errors == []
    assert pl.read_parquet(tmp_path / "o.parquet").equals(FRAME)


@pytest.fixture
def shared_folder():
    """A folder an unprivileged user can reach (tmp_path's parents are private to us)."""
    folder = Path(tempfile.mkdtemp(dir="/tmp"))
    try:
        yield folder
    finally:
        folder.chmod(0o700)
        for path in folder.iterdir():
            path.unlink()
        folder.rmdir()


@contextmanager
def _unprivileged():
    """Run as an ordinary user: as root, as 'nobody' (root may write anything)."""
    if os.geteuid() != 0:
        yield
        return
    os.setegid(65534)
    os.seteuid(65534)
    try:
        yield
    finally:
        os.seteuid(0)
        os.setegid(0)


def test_a_read_only_folder_is_a_clear_error(shared_folder):
    target = shared_folder / "o.parquet"
    save(FRAME, target)  # warm up: nothing is imported while unprivileged
    target.unlink()
    shared_folder.chmod(0o555)
    with _unprivileged(), pytest.raises(EvalframeError) as caught:
        save(FRAME, target)
    assert str(caught.value) == (
        f"cannot write {str(target)!r}: cannot create a file in {str(shared_folder)!r}: "
        "Permission denied"
    )
    assert _names(shared_folder) == []


def test_a_read_only_file_is_a_clear_error_and_is_kept(shared_folder):
    target = shared_folder / "o.parquet"
    save(pl.DataFrame({"x": [0]}), target)
    before = target.read_bytes()
    target.chmod(0o444)
    shared_folder.chmod(0o777)
    with _unprivileged(), pytest.raises(EvalframeError) as caught:
        save(FRAME, target)
    assert str(caught.value) == (
        f"cannot write {str(target)!r}: permission denied (the file is read-only)"
    )
    assert target.read_bytes() == before
    assert _names(shared_folder) == ["o.parquet"]


def test_a_missing_folder_is_a_clear_error_and_is_not_created(tmp_path):
    with pytest.raises(EvalframeError) as caught:
        save(FRAME, tmp_path / "missing" / "o.parquet")
    assert str(caught.value) == (
        f"cannot write {str(tmp_path / 'missing' / 'o.parquet')!r}: the folder "
        f"{str(tmp_path / 'missing')!r} does not exist (create it first)"
    )
    assert _names(tmp_path) == []


def test_a_file_in_place_of_the_folder_is_a_clear_error(tmp_path):
    (tmp_path / "file").write_bytes(b"x")
    with pytest.raises(EvalframeError, match="the folder .* is not a folder"):
        save(FRAME, tmp_path / "file" / "o.parquet")


def test_a_folder_as_the_output_is_a_clear_error(tmp_path):
    (tmp_path / "o.parquet").mkdir()
    with pytest.raises(EvalframeError, match=r"cannot write .*o\.parquet': it is a folder"):
        save(FRAME, tmp_path / "o.parquet")
    assert _names(tmp_path) == ["o.parquet"] and _names(tmp_path / "o.parquet") == []


def test_an_unknown_extension_writes_nothing(tmp_path):
    with pytest.raises(EvalframeError, match="unknown file extension"):
        save(FRAME, tmp_path / "o.xlsx")
    assert _names(tmp_path) == []


def test_a_check_of_the_plan_is_not_reported_as_a_write_failure(tmp_path):
    import evalframe as ef

    source = tmp_path / "counts.parquet"
    pl.DataFrame({"n": [10, 10], "c": [1, 30]}).write_parquet(source)
    with pytest.raises(EvalframeError) as caught:
        save(ef.score(ef.scan(source), ["pass@1"]), tmp_path / "o.parquet")
    assert str(caught.value).startswith("metric 'pass@1'")
    assert _names(tmp_path) == ["counts.parquet"]


def test_an_unreadable_input_is_raised_as_it_is(tmp_path):
    source = tmp_path / "in.parquet"
    FRAME.write_parquet(source)
    plan = pl.scan_parquet(source)
    plan.collect_schema()
    source.unlink()  # gone by the time the save reads it
    with pytest.raises(FileNotFoundError) as caught:
        save(plan, tmp_path / "o.parquet")
    assert "cannot write" not in str(caught.value)
    assert str(source) in str(caught.value)
    assert _names(tmp_path) == []


def test_a_long_name_still_gets_a_temporary_file(tmp_path):
    name = "é" * 120 + ".parquet"  # 248 bytes: the temporary file's name must be shorter
    save(FRAME, tmp_path / name)
    assert pl.read_parquet(tmp_path / name).equals(FRAME)
    assert _names(tmp_path) == [name]
