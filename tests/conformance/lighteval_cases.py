"""How each case of lighteval's metric test fixtures maps onto evalframe.

lighteval's own metric suite (``tests/unit/metrics/test_cases/*.json``, copied to
``../shared/data/lighteval-test-cases``) gives, per case, a ``doc`` (``choices`` and
``gold_index``), a ``model_response`` (``text``: one string per sample) and the
``expected_output`` of one lighteval metric, with an absolute tolerance. Every
fixture file is either

- **mapped** (:data:`MAPPED`): a function turning a case into evalframe checks, each a
  registry name, extra options and the ``expected_output`` key it must reproduce; a
  mapped file may still skip single cases (:data:`SKIPPED_CASES`) with the reason; or
- **skipped** as a whole (:data:`SKIPPED_FILES`) with the reason.

:func:`coverage` lists every case with its status; ``scripts/gen_lighteval_coverage.py``
renders it as ``docs/lighteval-coverage.md``. A fixture file that is in neither table
makes :func:`check_complete` (and the conformance suite) fail.

The frame built for a case has one row and every column a mapped metric may read:
``prediction`` (``str`` for one sample, ``list[str]`` for several), ``gold`` (``list[str]``,
``[choices[i] for i in gold_index]``), and, for the sampling estimators, ``n``, ``c`` and
``passed``, judged as lighteval's sampling metrics judge a sample
(``SamplingMetric.default_sample_scoring``: the sample, optionally stripped, equals the
*first* gold).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from evalframe.metrics.request import option_literal

REPO_ROOT = Path(__file__).resolve().parents[2]
FIXTURE_DIR = REPO_ROOT.parent / "shared" / "data" / "lighteval-test-cases"


@dataclass(frozen=True)
class Check:
    """One evalframe metric reproducing one ``expected_output`` key of a case."""

    metric: str
    key: str
    options: Mapping[str, Any] = field(default_factory=dict)

    def request(self) -> str:
        """The metric request evalframe scores: ``metric(key=value, ...)``."""
        if not self.options:
            return self.metric
        inner = ", ".join(f"{key}={option_literal(value)}" for key, value in self.options.items())
        return f"{self.metric}({inner})"

    def label(self) -> str:
        return f"`{self.request()}`"


@dataclass(frozen=True)
class Case:
    file: str
    name: str
    data: Mapping[str, Any]

    @property
    def id(self) -> str:
        return f"{self.file.removesuffix('.json')}::{self.name}"


# --- skipped -----------------------------------------------------------------------------

_NEEDS_WEIGHTS = "needs model weights or a GPU ({what}); out of scope for a dataframe scorer"
_NOT_YET = "not implemented in evalframe yet ({what})"
_PLACEHOLDER = (
    "expected_output is a placeholder lighteval never compares: a sample case's compute_sample "
    "returns {{key: PerplexityCorpusMetricInput}}, which AutomatedMetricTester."
    "_compare_dict_outputs skips; the score of each case's one document is {what}"
)

SKIPPED_FILES: dict[str, str] = {
    "acc_golds_likelihood.json": _NOT_YET.format(
        what="acc_golds_likelihood: per-gold greedy-decoding flags from a model run"
    ),
    "bert_score.json": _NEEDS_WEIGHTS.format(what="BERTScore, roberta-large"),
    "bits_per_byte.json": _PLACEHOLDER.format(what="-(1.0 / 28 bytes) / log(2) = -0.052, not 1.0"),
    "bleurt.json": _NEEDS_WEIGHTS.format(what="BLEURT checkpoint"),
    "byte_perplexity.json": _PLACEHOLDER.format(what="exp(-1.0 / 30 bytes) = 0.967, not 1.0"),
    "extractiveness.json": _NEEDS_WEIGHTS.format(
        what="summarisation extractiveness needs a spaCy English model"
    ),
    "faithfulness.json": _NEEDS_WEIGHTS.format(what="SummaC with an NLI model"),
    "multi_f1_numeric.json": (
        "lighteval's multi_f1_numeric (CorpusLevelF1Score(average='micro', num_classes=3)) "
        "is the mean over the classes 0, 1, 2 of the micro F1 of the one-vs-rest booleans "
        "(gold == i, prediction == i), i.e. (1 + 2 * accuracy) / 3 when every label is in "
        "0..2: no scikit-learn average, so neither evalframe's f1 nor accuracy reproduces it"
    ),
    "prediction_perplexity.json": _PLACEHOLDER.format(
        what="exp(-1.0) = 0.368 (perplexity of ll = sum(logprobs)), not 1.0"
    ),
    "simpleqa_judge.json": _NEEDS_WEIGHTS.format(what="an LLM judge behind an API"),
    "target_perplexity.json": _PLACEHOLDER.format(
        what="exp(-logprobs[gold_index]): 1.105, 1.350, 1.105, 1.221, 1.221, "
        "not 1.5, 2.0, 0.0, 8.2 (the last, 1.2 +- 0.2, agrees by chance)"
    ),
}

#: Single cases of mapped files that evalframe deliberately does not reproduce.
SKIPPED_CASES: dict[tuple[str, str], str] = {
    ("avg_at_k.json", "Avg at K - Multiple Correct"): (
        "lighteval's sampling metrics judge a sample against the first gold only "
        "(default_sample_scoring uses doc.get_golds()[0]), so with golds London/Paris/Berlin "
        "the samples Paris, London, Berlin score 0, 1, 0 -> 0.33; evalframe treats every "
        "gold as an accepted alternative (max over golds) and gives 1.0 by design"
    ),
}


# --- mapped ------------------------------------------------------------------------------


def golds(case: Case) -> list[str]:
    """lighteval's ``Doc.get_golds()``: the choices at the gold index(es)."""
    doc = case.data["doc"]
    index = doc.get("gold_index", 0)
    indices = index if isinstance(index, list) else [index]
    return [doc["choices"][i] for i in indices]


def samples(case: Case) -> list[str]:
    return list(case.data["model_response"].get("text", []))


def _judged(case: Case, n: int | None, strip: bool) -> list[bool]:
    """lighteval's default sample scoring: each of the first ``n`` samples == golds[0]."""
    gold = golds(case)[0]
    texts = samples(case)[:n] if n is not None else samples(case)
    if strip:
        gold = gold.strip()
        texts = [text.strip() for text in texts]
    return [text == gold for text in texts]


def frame(case: Case, *, n: int | None = None, strip: bool = False) -> pl.DataFrame:
    """The one-row evalframe input for a case (see the module docstring)."""
    texts = samples(case)
    passed = _judged(case, n, strip)
    return pl.DataFrame(
        {
            "prediction": [texts[0] if len(texts) == 1 else texts],
            "gold": [golds(case)],
            "n": [len(passed)],
            "c": [sum(passed)],
            "passed": [passed],
        },
        schema_overrides={"passed": pl.List(pl.Boolean)},
    )


def _params(case: Case) -> dict[str, Any]:
    return dict(case.data.get("metric_params") or {})


def _exact_match(case: Case) -> tuple[pl.DataFrame, list[Check]]:
    # lighteval Metrics.exact_match = ExactMatches(strip_strings=True), key "em"
    return frame(case), [Check("exact_match", "em", {"strip": True})]


def _f1(case: Case) -> tuple[pl.DataFrame, list[Check]]:
    # lighteval Metrics.f1_score = F1_score() (set-of-words F1), key "f1"
    return frame(case), [Check("word_set_f1", "f1")]


def _drop(case: Case) -> tuple[pl.DataFrame, list[Check]]:
    # lighteval DropMetrics: prediction spans = model_response.text, gold alternatives =
    # doc.specific["golds_no_preprocessing"]; keys "em" and "f1"
    texts = samples(case)
    alternatives = list(case.data["doc"]["specific"]["golds_no_preprocessing"])
    data = pl.DataFrame(
        {"prediction": [texts[0] if len(texts) == 1 else texts], "gold": [alternatives]}
    )
    return data, [Check("drop_em", "em"), Check("drop_f1", "f1")]


def _pass_at_k(case: Case) -> tuple[pl.DataFrame, list[Check]]:
    # lighteval PassAtK(k, n): key "pass@k:k={k}&n={n}"; samples judged by exact match
    params = _params(case)
    k, n = params["k"], params.get("n")
    key = f"pass@k:k={k}&n={n}" if n is not None else f"pass@k:k={k}"
    return frame(case, n=n), [Check(f"pass@{k}", key)]


def _maj_at_k(case: Case) -> tuple[pl.DataFrame, list[Check]]:
    # lighteval MajAtK(k): the most frequent of the first k samples (ties: the first seen)
    # compared with the gold; key "maj@k:k={k}"
    k = _params(case)["k"]
    return frame(case, n=k), [Check(f"maj@{k}", f"maj@k:k={k}")]


def _avg_at_k(case: Case) -> tuple[pl.DataFrame, list[Check]]:
    # lighteval AvgAtK(k): mean exact match of the first k samples; key "avg@k:k={k}"
    k = _params(case)["k"]
    return frame(case, n=k), [Check(f"avg@{k}", f"avg@k:k={k}")]


def _g_pass_at_k(case: Case) -> tuple[pl.DataFrame, list[Check]]:
    # lighteval GPassAtK(k, n, thresholds, strip_strings): keys "g-pass@{k}_{tau}" for each
    # threshold and "mg-pass@{k}" (evalframe uses the same names)
    params = _params(case)
    k, n = params["k"], params.get("n")
    strip = bool(params.get("strip_strings", False))
    checks = [Check(f"g-pass@{k}_{tau}", f"g-pass@{k}_{tau}") for tau in params["thresholds"]]
    checks.append(Check(f"mg-pass@{k}", f"mg-pass@{k}"))
    return frame(case, n=n, strip=strip), checks


MAPPED: dict[str, Callable[[Case], tuple[pl.DataFrame, list[Check]]]] = {
    "exact_match.json": _exact_match,
    "f1_score.json": _f1,
    "drop.json": _drop,
    "pass_at_k.json": _pass_at_k,
    "maj_at_k.json": _maj_at_k,
    "avg_at_k.json": _avg_at_k,
    "g_pass_at_k.json": _g_pass_at_k,
}


def _merge_family_tables() -> None:
    """Add the mappings of the metric families' modules (``lighteval_cases_<family>.py``)."""
    import importlib

    for path in sorted(Path(__file__).parent.glob("lighteval_cases_*.py")):
        module = importlib.import_module(f"tests.conformance.{path.stem}")
        overlap = sorted(set(module.MAPPED) & set(MAPPED))
        if overlap:
            raise AssertionError(f"{path.name} maps files mapped elsewhere: {overlap}")
        MAPPED.update(module.MAPPED)
        SKIPPED_CASES.update(getattr(module, "SKIPPED_CASES", {}))


_merge_family_tables()


# --- enumeration -------------------------------------------------------------------------


def fixture_files(directory: Path = FIXTURE_DIR) -> list[Path]:
    return sorted(directory.glob("*.json"))


def load_cases(path: Path) -> list[Case]:
    suite = json.loads(path.read_text(encoding="utf-8"))
    return [Case(path.name, case["name"], case) for case in suite["test_cases"]]


def check_complete(directory: Path = FIXTURE_DIR) -> None:
    """Raise when a fixture file or case is neither mapped nor listed as skipped."""
    files = {path.name: path for path in fixture_files(directory)}
    unknown = sorted(set(files) - set(MAPPED) - set(SKIPPED_FILES))
    if unknown:
        raise AssertionError(
            f"lighteval fixture file(s) {unknown} are neither mapped (MAPPED) nor skipped "
            "with a reason (SKIPPED_FILES) in tests/conformance/lighteval_cases.py"
        )
    both = sorted(set(MAPPED) & set(SKIPPED_FILES))
    if both:
        raise AssertionError(f"fixture file(s) {both} are both mapped and skipped")
    for file, name in SKIPPED_CASES:
        if file not in MAPPED:
            raise AssertionError(f"skipped case {file}::{name} is not in a mapped file")
        if file in files and name not in {case.name for case in load_cases(files[file])}:
            raise AssertionError(f"skipped case {file}::{name} is no longer in the fixture")


def all_cases(directory: Path = FIXTURE_DIR) -> list[Case]:
    return [case for path in fixture_files(directory) for case in load_cases(path)]


def skip_reason(case: Case) -> str | None:
    if case.file in SKIPPED_FILES:
        return SKIPPED_FILES[case.file]
    return SKIPPED_CASES.get((case.file, case.name))


def coverage(directory: Path = FIXTURE_DIR) -> list[dict[str, str]]:
    """One row per fixture case: file, case, status (mapped/skipped), metrics or reason."""
    rows = []
    for case in all_cases(directory):
        reason = skip_reason(case)
        if reason is not None:
            rows.append({"file": case.file, "case": case.name, "status": "skipped",
                         "detail": reason})
            continue
        _, checks = MAPPED[case.file](case)
        detail = ", ".join(dict.fromkeys(check.label() for check in checks))
        rows.append({"file": case.file, "case": case.name, "status": "mapped", "detail": detail})
    return rows
