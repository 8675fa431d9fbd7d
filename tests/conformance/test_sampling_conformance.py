"""lighteval's own fixtures for pass@k, G-pass@k, maj@k and avg@k, mapped onto evalframe.

The JSON files are lighteval's ``tests/unit/metrics/test_cases`` (copied to
``../shared/data/lighteval-test-cases``); the tests skip when that directory is absent.
Each case gives ``doc.choices`` + ``doc.gold_index``, ``model_response.text`` (one
string per generation), the metric parameters and ``expected_output`` with a tolerance.

Mapping: ``prediction`` = the texts; ``gold`` = ``choices[gold_index]`` for the *first*
gold index, because lighteval's ``SamplingMetric.default_sample_scoring`` compares with
``doc.get_golds()[0]`` only (evalframe's own list[str] gold means alternatives, a
documented divergence); ``strip_strings=True`` maps to ``normalizer="strip"``. lighteval's
``n`` parameter equals the number of texts in every case (asserted).

The ``*_letters``, ``*_math`` and ``*_latex`` variants score generations with
lighteval's extractive letter / math-verify / LaTeX matchers; they are mapped in
``lighteval_cases_letters.py`` and ``lighteval_cases_math.py`` (the ``extractor=`` and
``equivalence=`` options of these metrics, and ``letter_pass@k``) and run by
``test_lighteval_suite.py``.
"""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from evalframe.metrics import avg_at_k, g_pass_at_k, maj_at_k, mg_pass_at_k, pass_at_k

REPO_ROOT = Path(__file__).resolve().parents[2]
FIXTURES = REPO_ROOT.parent / "shared" / "data" / "lighteval-test-cases"

COVERED = ("pass_at_k.json", "g_pass_at_k.json", "maj_at_k.json", "avg_at_k.json")
EXTRACTIVE = (
    "pass_at_k_letters.json",
    "pass_at_k_math.json",
    "g_pass_at_k_math.json",
    "g_pass_at_k_latex.json",
    "avg_at_k_math.json",
)


def _cases(file: str) -> list[dict]:
    path = FIXTURES / file
    if not path.is_file():
        return []
    return json.loads(path.read_text())["test_cases"]


def _params(file: str):
    cases = _cases(file)
    if not cases:
        return [pytest.param(None, marks=pytest.mark.skip(reason=f"{FIXTURES} is absent"))]
    return [pytest.param(case, id=case["name"]) for case in cases]


def _frame(case: dict) -> pl.DataFrame:
    doc = case["doc"]
    indices = doc["gold_index"] if isinstance(doc["gold_index"], list) else [doc["gold_index"]]
    first_gold = doc["choices"][indices[0]]
    texts = case["model_response"]["text"]
    return pl.DataFrame({"prediction": [texts], "gold": [first_gold]},
                        schema={"prediction": pl.List(pl.String), "gold": pl.String})


def _normalizer(case: dict) -> str:
    return "strip" if case["metric_params"].get("strip_strings") else "none"


def _check_n(case: dict) -> None:
    n = case["metric_params"].get("n")
    assert n is None or n == len(case["model_response"]["text"])


@pytest.mark.parametrize("case", _params("pass_at_k.json"))
def test_pass_at_k_fixtures(case):
    _check_n(case)
    k = case["metric_params"]["k"]
    frame = _frame(case)
    got = frame.select(
        pass_at_k(prediction="prediction", gold="gold", k=k, normalizer=_normalizer(case))
    ).item()
    (expected,) = case["expected_output"].values()
    assert got == pytest.approx(expected, abs=case["tolerance"])


@pytest.mark.parametrize("case", _params("g_pass_at_k.json"))
def test_g_pass_at_k_fixtures(case):
    _check_n(case)
    params = case["metric_params"]
    k = params["k"]
    frame = _frame(case)
    options = {"prediction": "prediction", "gold": "gold", "k": k, "normalizer": _normalizer(case)}
    expected = case["expected_output"]
    for tau in params["thresholds"]:
        got = frame.select(g_pass_at_k(tau=tau, **options)).item()
        # lighteval names the output f"g-pass@{k}_{tau}" (tau as Python prints a float)
        assert got == pytest.approx(expected[f"g-pass@{k}_{tau}"], abs=case["tolerance"])
    got = frame.select(mg_pass_at_k(**options)).item()
    assert got == pytest.approx(expected[f"mg-pass@{k}"], abs=case["tolerance"])


@pytest.mark.parametrize("case", _params("maj_at_k.json"))
def test_maj_at_k_fixtures(case):
    k = case["metric_params"]["k"]
    got = _frame(case).select(
        maj_at_k("prediction", "gold", k=k, normalizer=_normalizer(case))
    ).item()
    (expected,) = case["expected_output"].values()
    assert got == pytest.approx(expected, abs=case["tolerance"])


@pytest.mark.parametrize("case", _params("avg_at_k.json"))
def test_avg_at_k_fixtures(case):
    k = case["metric_params"]["k"]
    got = _frame(case).select(
        avg_at_k("prediction", "gold", k=k, normalizer=_normalizer(case))
    ).item()
    (expected,) = case["expected_output"].values()
    assert got == pytest.approx(expected, abs=case["tolerance"])


@pytest.mark.parametrize("file", EXTRACTIVE)
def test_extractive_variants_are_mapped_in_the_lighteval_suite(file):
    from tests.conformance import lighteval_cases

    assert file in lighteval_cases.MAPPED, f"{file} is not mapped by the lighteval suite"
    assert file not in lighteval_cases.SKIPPED_FILES


def test_every_fixture_of_these_metrics_is_accounted_for():
    if not FIXTURES.is_dir():
        pytest.skip(f"{FIXTURES} is absent")
    prefixes = ("pass_at_k", "g_pass_at_k", "maj_at_k", "avg_at_k")
    present = {p.name for p in FIXTURES.glob("*.json") if p.name.startswith(prefixes)}
    assert present <= set(COVERED) | set(EXTRACTIVE), present - set(COVERED) - set(EXTRACTIVE)
