"""The registry: specs, parameterised names, listing."""

from __future__ import annotations

import polars as pl
import pytest

import evalframe as ef
from evalframe import EvalframeError
from evalframe.metrics.registry import (
    MetricSpec,
    Reference,
    all_metrics,
    is_metric_name,
    register,
    resolve,
)
from evalframe.schema import ROLES


def test_parameterised_name_resolves_with_parameters():
    spec, params = resolve("pass@100")
    assert spec.name == "pass@{k}" and params == {"k": 100}
    assert not is_metric_name("pass@")
    assert not is_metric_name("pass@10x")


def test_unknown_name_lists_known():
    with pytest.raises(EvalframeError, match="known metrics: .*squad_f1"):
        resolve("squad_f2")


def test_duplicate_registration_is_refused():
    spec = all_metrics()[0]
    with pytest.raises(ValueError, match="registered twice"):
        register(spec.name, roles=("prediction",), reference=spec.reference,
                 description="x", function=lambda prediction: pl.lit(1.0))


@pytest.mark.parametrize("spec", all_metrics(), ids=lambda s: s.name)
def test_every_spec_is_complete(spec: MetricSpec):
    assert isinstance(spec.reference, Reference)
    assert spec.reference.package and spec.reference.version and spec.reference.function
    assert spec.description and spec.description[0].isupper()
    assert spec.level in ("sample", "corpus")
    assert all(role in ROLES for role in spec.roles())
    assert spec.function.__doc__ and ">>>" in spec.function.__doc__, "docstring needs an example"
    assert spec.edge_rules, "edge rules must be spelled out"


def test_list_metrics_matches_registry():
    table = ef.list_metrics()
    assert table["name"].to_list() == [spec.name for spec in all_metrics()]
    assert table.columns == ["name", "level", "higher_is_better", "roles", "reference",
                             "description"]
