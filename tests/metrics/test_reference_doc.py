"""docs/metrics.md is generated from the registry and must be up to date."""

from __future__ import annotations

from pathlib import Path

from evalframe.metrics.reference_doc import render
from evalframe.metrics.registry import all_metrics

DOC = Path(__file__).resolve().parents[2] / "docs" / "metrics.md"


def test_metric_reference_is_current():
    assert DOC.read_text(encoding="utf-8") == render(), (
        "docs/metrics.md is stale: run python -m evalframe.metrics.reference_doc > docs/metrics.md"
    )


def test_every_metric_has_a_section():
    text = render()
    for spec in all_metrics():
        assert f"## {spec.name}\n" in text
        assert str(spec.reference) in text
