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


def test_unknown_name_suggests_and_lists_known():
    with pytest.raises(EvalframeError, match="did you mean 'squad_f1'.*Known metrics: .*squad_f1"):
        resolve("squad_f2")


@pytest.mark.parametrize(
    ("typo", "suggestion"),
    [("Squad_EM", "squad_em"), ("squad-em", "squad_em"), ("Pass@10", "pass@10"),
     ("G_pass@8_0.5", "g-pass@8_0.5"), ("exact-match", "exact_match")],
)
def test_case_and_dash_differences_are_suggested(typo, suggestion):
    with pytest.raises(EvalframeError, match=f"did you mean '{suggestion}'"):
        resolve(typo)


def test_names_of_other_tools_point_to_ours():
    with pytest.raises(EvalframeError, match="word_set_f1"):
        resolve("f1_score")


def test_corpus_metric_needs_statistics_and_reduce():
    from evalframe.metrics.reduce import Sums

    with pytest.raises(ValueError, match="needs a reduce"):
        register("corpus_x", roles=("prediction",), reference=Reference("a", "1", "f"),
                 description="x", level="corpus", function=lambda prediction: pl.lit(1.0))
    with pytest.raises(ValueError, match="needs statistics"):
        register("corpus_y", roles=("prediction",), reference=Reference("a", "1", "f"),
                 description="x", level="corpus", reduce=Sums("s", lambda sums: sums["a"]),
                 function=lambda prediction: pl.lit(1.0))


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
    assert table.columns == ["name", "level", "higher_is_better", "roles", "statistics",
                             "reduce", "options", "reference", "description"]
    exact = table.row(by_predicate=pl.col("name") == "exact_match", named=True)
    assert exact["statistics"] == "Float64" and exact["reduce"] == "mean"
    assert "ignore_case: bool = false" in exact["options"]


#: Names whose direction is not spelled by their ending, with the reason.
DIRECTION_EXCEPTIONS = {
    "brier_score": "lm-evaluation-harness's name (scikit-learn's brier_score_loss); lower is "
    "better",
}


@pytest.mark.parametrize("spec", all_metrics(), ids=lambda s: s.name)
def test_names_carry_direction(spec: MetricSpec):
    if spec.name in DIRECTION_EXCEPTIONS:
        assert not spec.higher_is_better
        return
    # lower is better: errors, losses, distances, perplexities, bits per byte, and TER
    # (translation edit rate, named as everyone names it)
    lower = spec.name.endswith(("_error", "_loss", "_distance")) or "perplexity" in spec.name or (
        spec.name in ("bits_per_byte", "ter")
    )
    assert spec.higher_is_better is not lower, spec.name


def test_every_corpus_metric_declares_statistics_and_a_reduce():
    for spec in all_metrics():
        if spec.level == "corpus":
            assert isinstance(spec.statistics, pl.Struct), spec.name
            assert spec.reduce is not None and not isinstance(spec.reduction({}), type(None))
        else:
            assert spec.statistics == pl.Float64, spec.name
