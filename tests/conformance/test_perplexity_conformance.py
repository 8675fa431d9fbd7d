"""The perplexity family against lm-evaluation-harness 0.4.13's own functions.

References: ``lm_eval.api.metrics`` (``weighted_perplexity``, ``bits_per_byte``,
``perplexity``) and ``lm_eval.api.task`` (``PerplexityTask.process_results`` with its
``count_words`` / ``count_bytes``, which ``ConfigurableTask`` shares through ``Task``).
Each document is handed to the harness exactly as a ``loglikelihood_rolling`` task hands
it: ``process_results(doc, (loglikelihood,))`` gives the per-document items, and the
aggregation functions reduce the list of items. evalframe's side is the statistics
expression, column sums and the reduction's formula (and ``ef.score`` + ``ef.aggregate``).
Counts must be equal; scores agree to 1e-9 relative (they differ only in summation
order: the harness adds left to right, polars in blocks).

Also lighteval's ``word_perplexity.json`` corpus fixtures, through
``tests/conformance/lighteval_cases_perplexity.py``.
"""

from __future__ import annotations

import math
import random

import numpy as np
import polars as pl
import pytest

import evalframe as ef
from evalframe.metrics.perplexity import count_bytes, count_words
from evalframe.metrics.registry import resolve
from evalframe.normalize._python_text import whitespace_characters
from tests.conformance import lighteval_cases as mapping
from tests.conformance import lighteval_cases_perplexity as perplexity_cases

lm_metrics = pytest.importorskip("lm_eval.api.metrics", reason="lm-eval is not installed")
lm_task = pytest.importorskip("lm_eval.api.task", reason="lm-eval is not installed")


class _Task(lm_task.PerplexityTask):
    """A concrete PerplexityTask without a dataset: only process_results is called."""

    def has_test_docs(self) -> bool:
        return True

    def has_validation_docs(self) -> bool:
        return False


TASK = object.__new__(_Task)

RTOL = 1e-9

#: Characters that look like, or sit next to, whitespace in Unicode or UTF-8.
LOOKALIKES = [
    "\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u180e", "\u00ad", "\u2027", "\u202a",
    "\u205e", "\u2030", "\u3001", "\u1681", "\u167f", "\u00c2", "\u0080", "\u00bf", "\x00",
    "\x08", "\x0e", "\x1b", "\x7f", "\u2018", "\u2019", "\u201c", "\u201d", "\u2014", "\u2026",
]
WORDS = ["the", "a", "é", "naïve", "東京", "日本語", "Привет", "🙂", "👩‍🔬", "x̃", "ﬁ", "Ⅻ", "١٢"]


def adversarial_docs() -> list[str]:
    ws = whitespace_characters()
    docs = ["", " ", "  ", "a", " a", "a ", " a ", "\n", "\n\n", "a\n", "\ta\t", "a b c"]
    docs += [f"a{ch}b" for ch in ws] + [f"{ch}" for ch in ws] + [f"{ch}a{ch}" for ch in ws]
    docs += [f"a{ch}b" for ch in LOOKALIKES] + [f"{ch}{ch}" for ch in LOOKALIKES]
    docs += [ws, ws + "x" + ws, "".join(LOOKALIKES), " ".join(WORDS), "\u3000".join(WORDS)]
    docs += ["x" * 63 + " " + "y", "é" * 40 + "\u00a0" * 3 + "z", " " * 200, "w " * 500]
    return docs


def random_docs(rng: random.Random, count: int) -> list[str]:
    ws = list(whitespace_characters())
    pieces = WORDS + LOOKALIKES
    docs = []
    for _ in range(count):
        parts = []
        for _ in range(rng.randint(0, 30)):
            roll = rng.random()
            if roll < 0.55:
                parts.append(rng.choice(WORDS))
            elif roll < 0.80:
                parts.append(" ")
            elif roll < 0.95:
                parts.append("".join(rng.choice(ws) for _ in range(rng.randint(1, 3))))
            else:
                parts.append(rng.choice(pieces))
        docs.append("".join(parts))
    return docs


def random_loglikelihoods(rng: random.Random, count: int) -> list[float]:
    """Negative log-likelihoods over many magnitudes, from 1e-300 to 1e3, and exact zeros.

    (Up to 1e3 per document, so that no mean per document exceeds ~709 and lm-eval's
    ``math.exp`` does not overflow; overflow has its own test.)
    """
    out = []
    for _ in range(count):
        roll = rng.random()
        if roll < 0.02:
            out.append(-0.0)
        elif roll < 0.05:
            out.append(-(10.0 ** rng.uniform(-300, -1)))
        else:
            out.append(-(10.0 ** rng.uniform(-1, 3)))
    return out


def empty_documents_score_zero(docs: list[str], loglikelihoods: list[float]) -> list[float]:
    """Log-likelihood 0 for empty documents, as lm-eval scores them (no token windows).

    evalframe refuses a log-likelihood on 0 bytes (see ``test_impossible_values_...``).
    """
    return [0.0 if doc == "" else ll for doc, ll in zip(docs, loglikelihoods, strict=True)]


def lm_eval_items(docs: list[str], loglikelihoods: list[float]) -> dict[str, list]:
    """What the harness aggregates: process_results of each document, by metric."""
    items: dict[str, list] = {"word_perplexity": [], "byte_perplexity": [], "bits_per_byte": []}
    for doc, ll in zip(docs, loglikelihoods, strict=True):
        for metric, item in TASK.process_results(doc, (ll,)).items():
            items[metric].append(item)
    return items


def lm_eval_scores(docs: list[str], loglikelihoods: list[float]) -> dict[str, float]:
    items = lm_eval_items(docs, loglikelihoods)
    return {
        "word_perplexity": lm_metrics.weighted_perplexity(items["word_perplexity"]),
        "byte_perplexity": lm_metrics.weighted_perplexity(items["byte_perplexity"]),
        "bits_per_byte": lm_metrics.bits_per_byte(items["bits_per_byte"]),
        "perplexity": lm_metrics.perplexity(loglikelihoods),
    }


def evalframe_scores(docs: list[str], loglikelihoods: list[float]) -> dict[str, float]:
    frame = pl.DataFrame(
        {"loglikelihood": loglikelihoods, "text": docs},
        schema={"loglikelihood": pl.Float64, "text": pl.String},
    )
    names = ["word_perplexity", "byte_perplexity", "bits_per_byte", "perplexity"]
    out = {}
    for name in names:
        spec, _ = resolve(name)
        columns = {"loglikelihood": "loglikelihood"}
        if name != "perplexity":
            columns["text"] = "text"
        stats = frame.select(spec.function(**columns).alias("s"))["s"].struct.unnest()
        sums = {field: np.array([stats[field].sum()]) for field in stats.columns}
        out[name] = float(spec.reduction().formula(sums)[0])
    return out


def assert_close(ours: float, reference: float, what: str) -> None:
    if math.isnan(reference):
        assert math.isnan(ours), f"{what}: {ours} vs NaN"
    elif math.isinf(reference):
        assert ours == reference, f"{what}: {ours} vs {reference}"
    else:
        assert ours == pytest.approx(reference, rel=RTOL, abs=0.0), f"{what}: {ours} vs {reference}"


# --- counts ------------------------------------------------------------------------------


def _counts(docs: list[str]) -> tuple[list[int], list[int]]:
    series = pl.Series(docs, dtype=pl.String)
    frame = pl.select(
        count_words(pl.lit(series)).alias("w"), count_bytes(pl.lit(series)).alias("b")
    )
    return frame["w"].to_list(), frame["b"].to_list()


def test_counts_equal_lm_eval_on_adversarial_documents():
    docs = adversarial_docs()
    ours_words, ours_bytes = _counts(docs)
    for doc, w, b in zip(docs, ours_words, ours_bytes, strict=True):
        assert w == lm_task.PerplexityTask.count_words(doc), repr(doc)
        assert w == lm_task.ConfigurableTask.count_words(doc), repr(doc)
        assert b == lm_task.PerplexityTask.count_bytes(doc), repr(doc)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_statistics_equal_process_results_on_random_documents(seed):
    rng = random.Random(seed)
    docs = random_docs(rng, 3000)
    loglikelihoods = empty_documents_score_zero(docs, random_loglikelihoods(rng, 3000))
    frame = pl.DataFrame({"loglikelihood": loglikelihoods, "text": docs})
    scored = ef.score(frame, ["word_perplexity", "byte_perplexity", "bits_per_byte"])
    items = lm_eval_items(docs, loglikelihoods)
    for metric, field in [
        ("word_perplexity", "n_words"),
        ("byte_perplexity", "n_bytes"),
        ("bits_per_byte", "n_bytes"),
    ]:
        rows = scored[metric].to_list()
        assert [(row["loglikelihood"], row[field]) for row in rows] == items[metric]


# --- scores ------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [10, 11, 12, 13])
def test_scores_equal_lm_eval_on_thousands_of_random_rows(seed):
    rng = random.Random(seed)
    docs = random_docs(rng, 4000)
    loglikelihoods = empty_documents_score_zero(docs, random_loglikelihoods(rng, 4000))
    reference = lm_eval_scores(docs, loglikelihoods)
    ours = evalframe_scores(docs, loglikelihoods)
    for name in reference:
        assert_close(ours[name], reference[name], name)
    # the same through the public pipeline
    frame = pl.DataFrame({"loglikelihood": loglikelihoods, "text": docs})
    table = ef.aggregate(ef.score(frame, list(reference)), bootstrap=2)
    for name, value in zip(table["metric"], table["value"], strict=True):
        assert_close(value, reference[name], f"aggregate {name}")


def test_token_perplexity_is_weighted_perplexity_over_tokens():
    rng = random.Random(4)
    loglikelihoods = random_loglikelihoods(rng, 5000)
    tokens = [rng.randint(0, 2048) for _ in loglikelihoods]
    # a row of no tokens predicted nothing: log-likelihood 0
    loglikelihoods = [0.0 if n == 0 else ll for ll, n in zip(loglikelihoods, tokens, strict=True)]
    reference = lm_metrics.weighted_perplexity(list(zip(loglikelihoods, tokens, strict=True)))
    frame = pl.DataFrame({"loglikelihood": loglikelihoods, "n_tokens": tokens})
    value = ef.aggregate(ef.score(frame, ["token_perplexity"]), bootstrap=2)["value"].item()
    assert_close(value, reference, "token_perplexity")


@pytest.mark.parametrize(
    ("loglikelihoods", "docs"),
    [
        ([-1e-300, -5e-324, -0.0], ["a", "b c", ""]),  # tiny: perplexity 1.0
        ([-1e-300, -2.5e-308], ["x", "y"]),
        ([-700.0, -1e-3], ["ab", "cd"]),  # near the overflow threshold per byte
        ([-1.0, -math.inf], ["a", "b"]),  # -inf: inf in both
        ([-5.0, -5.0, -5.0, 0.0, -5.0, -5.0, -5.0],
         ["\u3000", "\x1c", "\u00a0\u00a0", "", " a ", "東京", "👩‍🔬"]),
        ([1e-6, 4e-7, -2.0], ["rounding", "above", "zero"]),  # tolerated, summed as given
    ],
)
def test_adversarial_loglikelihoods_equal_lm_eval(loglikelihoods, docs):
    reference = lm_eval_scores(docs, loglikelihoods)
    ours = evalframe_scores(docs, loglikelihoods)
    for name in reference:
        assert_close(ours[name], reference[name], name)


@pytest.mark.parametrize(
    ("loglikelihoods", "docs", "what"),
    [
        ([-1.0, math.inf], ["a", "b"], "a loglikelihood above 0"),  # lm-eval: 0.0
        ([-math.inf, math.inf], ["a", "b"], "a loglikelihood above 0"),  # lm-eval: NaN
        ([-1.0, math.nan, -3.0], ["a", "b", "c"], "a NaN loglikelihood"),  # lm-eval: NaN
        ([1.5, 0.3], ["positive", "log-likelihoods"], "a loglikelihood above 0"),
    ],
)
def test_impossible_values_lm_eval_scores_evalframe_refuses(loglikelihoods, docs, what):
    reference = lm_eval_scores(docs, loglikelihoods)
    # lm-eval gives a number (or NaN), here below 1 for the positive log-likelihoods
    assert all(isinstance(value, float) for value in reference.values())
    if loglikelihoods == [1.5, 0.3]:
        assert reference["word_perplexity"] == math.exp(-1.8 / 2) < 1
    frame = pl.DataFrame({"loglikelihood": loglikelihoods, "text": docs})
    for name in reference:
        with pytest.raises(ef.EvalframeError, match=what):
            ef.score(frame, [name])


def test_an_empty_document_with_a_loglikelihood_lm_eval_scores_evalframe_refuses():
    # lm-eval's own pipeline gives an empty document 0.0 (get_rolling_token_windows yields
    # nothing); -2 on 0 bytes only inflates the others' perplexity there
    items = lm_eval_items(["abc", ""], [-1.0, -2.0])
    assert lm_metrics.weighted_perplexity(items["byte_perplexity"]) == math.exp(3 / 3)
    frame = pl.DataFrame({"loglikelihood": [-1.0, -2.0], "text": ["abc", ""]})
    with pytest.raises(ef.EvalframeError, match="n_bytes = 0 with a log-likelihood other"):
        ef.score(frame, ["byte_perplexity"])


def test_overflow_lm_eval_raises_evalframe_gives_inf():
    docs, loglikelihoods = ["x"], [-1000.0]  # 1 word, 1 byte, 1 document
    with pytest.raises(OverflowError):
        lm_metrics.weighted_perplexity(lm_eval_items(docs, loglikelihoods)["word_perplexity"])
    with pytest.raises(OverflowError):
        lm_metrics.weighted_perplexity(lm_eval_items(docs, loglikelihoods)["byte_perplexity"])
    with pytest.raises(OverflowError):
        lm_metrics.perplexity(loglikelihoods)
    ours = evalframe_scores(docs, loglikelihoods)
    assert ours["word_perplexity"] == ours["byte_perplexity"] == ours["perplexity"] == math.inf
    # bits per byte has no exp: the same number in both
    assert_close(ours["bits_per_byte"], lm_metrics.bits_per_byte([(-1000.0, 1)]), "bits")


def test_no_bytes_lm_eval_raises_evalframe_gives_nan():
    items = lm_eval_items(["", ""], [0.0, 0.0])
    with pytest.raises(ZeroDivisionError):
        lm_metrics.weighted_perplexity(items["byte_perplexity"])
    with pytest.raises(ZeroDivisionError):
        lm_metrics.bits_per_byte(items["bits_per_byte"])
    ours = evalframe_scores(["", ""], [0.0, 0.0])
    assert math.isnan(ours["byte_perplexity"]) and math.isnan(ours["bits_per_byte"])
    # ...while each empty document is one word in lm-eval's count
    assert_close(
        ours["word_perplexity"], lm_metrics.weighted_perplexity(items["word_perplexity"]), "w"
    )


def test_no_rows_lm_eval_raises_evalframe_gives_nan():
    with pytest.raises(ValueError):
        lm_metrics.weighted_perplexity([])
    with pytest.raises(ZeroDivisionError):
        lm_metrics.perplexity([])
    formula = resolve("word_perplexity")[0].reduction().formula
    assert math.isnan(formula({"loglikelihood": np.zeros(1), "n_words": np.zeros(1)})[0])


# --- lighteval fixtures ------------------------------------------------------------------

needs_fixtures = pytest.mark.skipif(
    not mapping.FIXTURE_DIR.is_dir(),
    reason=f"{mapping.FIXTURE_DIR} is absent (a fresh clone): lighteval fixtures skipped",
)


def _fixture_cases(file: str) -> list[mapping.Case]:
    if not mapping.FIXTURE_DIR.is_dir():
        return []
    return mapping.load_cases(mapping.FIXTURE_DIR / file)


@needs_fixtures
@pytest.mark.parametrize(
    "case", _fixture_cases("word_perplexity.json"), ids=lambda case: case.id
)
def test_lighteval_word_perplexity_fixture(case):
    frame, checks = perplexity_cases.MAPPED[case.file](case)
    assert frame.height == len(case.data["docs"]) > 1
    (check,) = checks
    assert check.metric == "word_perplexity" and check.key == case.data["metric_name"]
    spec, _ = resolve(check.metric)
    stats = frame.select(spec.function(loglikelihood="loglikelihood", text="text").alias("s"))
    fields = stats["s"].struct.unnest()
    sums = {field: np.array([fields[field].sum()]) for field in fields.columns}
    value = float(spec.reduction().formula(sums)[0])
    expected = case.data["expected_output"]
    assert value == pytest.approx(expected, abs=case.data.get("tolerance", 1e-2))
    # and lm-eval's weighted_perplexity of the same items, to float precision
    words = [lm_task.PerplexityTask.count_words(text) for text in frame["text"]]
    items = list(zip(frame["loglikelihood"].to_list(), words, strict=True))
    assert value == pytest.approx(lm_metrics.weighted_perplexity(items), rel=1e-12)


def test_lighteval_low_perplexity_case_by_hand():
    # sum of logprobs -0.7, -0.6, -0.4 = -1.7; words 4 + 5 + 2 = 11; exp(1.7 / 11)
    frame = pl.DataFrame(
        {
            "loglikelihood": [-0.7, -0.6, -0.4],
            "text": ["The quick brown fox", "It is a beautiful day", "Hello world"],
        }
    )
    table = ef.aggregate(ef.score(frame, ["word_perplexity"]), bootstrap=2)
    assert table["value"].item() == pytest.approx(math.exp(1.7 / 11), rel=1e-12)
    assert table["value"].item() == pytest.approx(1.1671273280939887, abs=1e-12)


@needs_fixtures
@pytest.mark.parametrize(
    ("file", "score"),
    [
        # (what evalframe gives for the case's one document, as lighteval prepares it)
        ("byte_perplexity.json", lambda case: math.exp(-1.0 / 30)),
        ("bits_per_byte.json", lambda case: -(1.0 / 28) / math.log(2)),
        ("prediction_perplexity.json", lambda case: math.exp(-1.0)),
        (
            "target_perplexity.json",
            lambda case: math.exp(
                -case.data["model_response"]["logprobs"][case.data["doc"]["gold_index"]]
            ),
        ),
    ],
)
def test_skipped_lighteval_perplexity_fixtures_hold_placeholders(file, score):
    """The skip reason: these expected outputs are not the scores of their inputs."""
    assert file in mapping.SKIPPED_FILES and file not in mapping.MAPPED
    for case in _fixture_cases(file):
        ((_, expected),) = case.data["expected_output"].items()
        query = case.data["doc"]["query"]
        logprobs = case.data["model_response"]["logprobs"]
        if file in ("byte_perplexity.json", "bits_per_byte.json"):
            assert len(query.encode("utf-8")) == (30 if file.startswith("byte") else 28)
            assert math.fsum(logprobs) == 1.0
        value = score(case)
        agrees = value == pytest.approx(expected, abs=case.data["tolerance"])
        # one of the five target_perplexity placeholders (1.2 +- 0.2) is near 1.221 by chance
        by_chance = case.id == "target_perplexity::Target Perplexity - Mixed Confidence"
        assert agrees == by_chance, (case.id, value, expected)
