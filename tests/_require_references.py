"""A pytest plugin: with ``EVALFRAME_REQUIRE_REFERENCES=1``, a missing reference fails.

The conformance tests skip when a reference implementation cannot be imported
(``pytest.importorskip``, or a ``skipif`` whose reason says it "is not installed"), so a
user's clone without the test extra still runs. CI sets the variable: there, such a
skip means the environment lost a reference (a broken ``transformers`` import, say) and
parity silently went untested, so it is reported as a failure instead. Skips for
absent public data (``../shared``) are not affected.
"""

from __future__ import annotations

import os

import pytest

VARIABLE = "EVALFRAME_REQUIRE_REFERENCES"
#: What the skip reasons of a missing reference say.
MISSING = ("could not import", "is not installed")


def _missing_reference(report: pytest.CollectReport | pytest.TestReport) -> str | None:
    if not report.skipped or os.environ.get(VARIABLE) != "1":
        return None
    longrepr = report.longrepr
    text = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
    return text if any(marker in text for marker in MISSING) else None


def _fail(report: pytest.CollectReport | pytest.TestReport, reason: str) -> None:
    report.outcome = "failed"
    report.longrepr = f"{reason} ({VARIABLE}=1: a missing reference implementation is a failure)"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    reason = _missing_reference(report)
    if reason is not None:
        _fail(report, reason)


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    outcome = yield
    report = outcome.get_result()
    reason = _missing_reference(report)
    if reason is not None:
        _fail(report, reason)
