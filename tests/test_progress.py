"""The elapsed-time indicator of long Python calls."""

from __future__ import annotations

import io
import time

import pytest

from evalframe import _progress


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture
def terminal(monkeypatch):
    """Installs a terminal as stderr when called (in the test itself: pytest's output
    capture sets sys.stderr again between a fixture and the test)."""
    pytest.importorskip("tqdm")
    monkeypatch.setattr(_progress, "DELAY", 0.05)
    monkeypatch.delenv("EVALFRAME_PROGRESS", raising=False)

    def install() -> Terminal:
        screen = Terminal()
        monkeypatch.setattr("sys.stderr", screen)
        return screen

    return install


def test_a_long_call_shows_its_elapsed_time_on_a_terminal(terminal):
    terminal = terminal()
    with _progress.working("scoring"):
        time.sleep(0.7)
    assert "scoring: 00:0" in terminal.getvalue()


def test_a_short_call_shows_nothing(terminal, monkeypatch):
    terminal = terminal()
    monkeypatch.setattr(_progress, "DELAY", 5.0)
    with _progress.working("scoring"):
        pass
    assert terminal.getvalue() == ""


def test_off_when_asked_or_not_interactive(terminal, monkeypatch):
    terminal = terminal()
    monkeypatch.setenv("EVALFRAME_PROGRESS", "0")
    with _progress.working("scoring"):
        time.sleep(0.3)
    assert terminal.getvalue() == ""
    monkeypatch.delenv("EVALFRAME_PROGRESS")
    monkeypatch.setattr(Terminal, "isatty", lambda self: False)
    with _progress.working("scoring"):
        time.sleep(0.3)
    assert terminal.getvalue() == ""


def test_nested_calls_show_one_indicator(terminal):
    terminal = terminal()
    with _progress.working("aggregating"), _progress.working("scoring"):
        time.sleep(0.7)
    assert "aggregating" in terminal.getvalue() and "scoring" not in terminal.getvalue()


def test_the_command_line_draws_its_own(monkeypatch):
    from evalframe import cli

    seen = []
    monkeypatch.setitem(cli.COMMANDS, "metrics",
                        lambda args: seen.append(_progress.ENABLED[0]) or 0)
    assert cli.main(["metrics"]) == 0
    assert seen == [False]  # off while the command runs
    assert _progress.ENABLED == [True]  # and back on after it
