"""lighteval's own metric test fixtures, replayed through evalframe.

Each case of ``../shared/data/lighteval-test-cases/*.json`` is one test: mapped cases
check every ``expected_output`` key at the case's absolute tolerance (as lighteval's
``AutomatedMetricTester`` does with ``pytest.approx(abs=tolerance)``); the others are
reported as skipped with the reason from ``lighteval_cases``. The mapping lives in
``tests/conformance/lighteval_cases.py``; ``docs/lighteval-coverage.md`` is generated
from it by ``scripts/gen_lighteval_coverage.py`` and must be up to date.
"""

from __future__ import annotations

import importlib.util
import math

import pytest

import evalframe as ef
from evalframe.metrics.registry import is_metric_name
from tests.conformance import lighteval_cases as mapping

pytestmark = pytest.mark.skipif(
    not mapping.FIXTURE_DIR.is_dir(),
    reason=f"{mapping.FIXTURE_DIR} is absent (a fresh clone): lighteval fixtures skipped",
)

CASES = mapping.all_cases() if mapping.FIXTURE_DIR.is_dir() else []
COVERAGE_DOC = mapping.REPO_ROOT / "docs" / "lighteval-coverage.md"
GENERATOR = mapping.REPO_ROOT / "scripts" / "gen_lighteval_coverage.py"


def test_every_fixture_file_and_case_is_mapped_or_skipped():
    mapping.check_complete()
    assert CASES, "no lighteval fixture cases found"


def test_completeness_check_fails_loudly_on_an_unknown_file(tmp_path):
    (tmp_path / "brand_new_metric.json").write_text('{"name": "x", "test_cases": []}')
    with pytest.raises(AssertionError, match="brand_new_metric.json"):
        mapping.check_complete(tmp_path)


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.id)
def test_lighteval_case(case):
    reason = mapping.skip_reason(case)
    if reason is not None:
        pytest.skip(reason)
    frame, checks = mapping.MAPPED[case.file](case)
    expected = case.data["expected_output"]
    if not isinstance(expected, dict):  # a corpus suite: one number, under its metric_name
        expected = {case.data["metric_name"]: expected}
    tolerance = case.data.get("tolerance", 1e-2)
    assert {check.key for check in checks} == set(expected), (
        f"{case.id}: the mapping covers keys {sorted(c.key for c in checks)} but lighteval "
        f"expects {sorted(expected)}"
    )
    for check in checks:
        assert is_metric_name(check.metric), (
            f"{case.id}: metric {check.metric!r} is mapped but not registered in evalframe"
        )
        # The whole pipeline, as users run it: score, then aggregate (the mean of one row
        # for a sample metric; the corpus formula over every row for a corpus metric).
        metric = {"__check": check.request()}
        scored = ef.score(frame, metric)
        value = ef.aggregate(scored, metrics=metric, bootstrap=2)["value"].item()
        assert value is not None and not math.isnan(value), f"{case.id}: {check.metric} -> {value}"
        assert value == pytest.approx(float(expected[check.key]), abs=tolerance), (
            f"{case.id}: {check.label()} gave {value}, lighteval expects "
            f"{check.key}={expected[check.key]} (abs tolerance {tolerance})"
        )


def test_coverage_doc_is_up_to_date():
    spec = importlib.util.spec_from_file_location("gen_lighteval_coverage", GENERATOR)
    assert spec is not None and spec.loader is not None
    generator = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generator)
    assert COVERAGE_DOC.read_text(encoding="utf-8") == generator.render(), (
        "docs/lighteval-coverage.md is stale; run `python scripts/gen_lighteval_coverage.py`"
    )
