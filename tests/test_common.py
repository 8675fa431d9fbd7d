"""Invariants every registered metric must keep (in the spirit of scikit-learn's test_common).

Each metric is classified below by the shape of input it reads; a metric that is not
classified fails ``test_every_metric_is_classified``, so a new metric cannot skip these
checks.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable

import polars as pl
import pytest

import evalframe as ef
from evalframe import EvalframeError
from evalframe.metrics.registry import all_metrics

WORDS = ["the", "a", "Paris", "paris", "4", "four", "1,000", "1000", "-", "É", "été", "", " "]


def _text(rng: random.Random, words: int = 3) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, words)))


def text_frame(rng: random.Random) -> pl.DataFrame:
    """prediction: str; gold: list[str] (alternatives)."""
    predictions = [_text(rng) for _ in range(40)]
    golds = [[_text(rng) or "x" for _ in range(rng.randint(1, 3))] for _ in range(40)]
    predictions[3] = None
    return pl.DataFrame({"prediction": predictions, "gold": golds})


def count_frame(rng: random.Random) -> pl.DataFrame:
    """n, c: ints with 0 <= c <= n and n >= 100 so any k <= 100 is valid."""
    n = [rng.randint(100, 300) for _ in range(40)]
    c = [rng.randint(0, value) for value in n]
    n[3] = None
    return pl.DataFrame({"n": n, "c": c})


def generations_frame(rng: random.Random) -> pl.DataFrame:
    """prediction: list[str] of 16 generations; gold: str."""
    pool = ["4", "5", " 4", "four", "The answer"]
    predictions = [[rng.choice(pool) for _ in range(16)] for _ in range(40)]
    golds = [rng.choice(pool) for _ in range(40)]
    predictions[3] = None
    return pl.DataFrame({"prediction": predictions, "gold": golds})


def spans_frame(rng: random.Random) -> pl.DataFrame:
    """DROP: prediction list[str] of spans; gold list[list[str]] (alternatives x spans)."""
    pool = ["4", "four", "1,000", "1000.0", "the Bears", "bears", "New-York", ""]
    predictions = [[rng.choice(pool) for _ in range(rng.randint(1, 3))] for _ in range(40)]
    golds = [
        [
            [rng.choice(pool[:-1]) for _ in range(rng.randint(1, 2))]
            for _ in range(rng.randint(1, 2))
        ]
        for _ in range(40)
    ]
    predictions[3] = None
    return pl.DataFrame({"prediction": predictions, "gold": golds})


FRAMES: dict[str, Callable[[random.Random], pl.DataFrame]] = {
    "text": text_frame,
    "counts": count_frame,
    "generations": generations_frame,
    "spans": spans_frame,
}

#: registry name -> (a concrete name to score with, the input shape it reads)
CLASSIFIED: dict[str, tuple[str, str]] = {
    "exact_match": ("exact_match", "text"),
    "squad_em": ("squad_em", "text"),
    "squad_f1": ("squad_f1", "text"),
    "token_f1": ("token_f1", "text"),
    "pass@{k}": ("pass@10", "counts"),
    "maj@{k}": ("maj@8", "generations"),
    "avg@{k}": ("avg@8", "generations"),
    "g-pass@{k}_{tau}": ("g-pass@8_0.5", "generations"),
    "mg-pass@{k}": ("mg-pass@8", "generations"),
    "drop_em": ("drop_em", "spans"),
    "drop_f1": ("drop_f1", "spans"),
    "quasi_exact_match": ("quasi_exact_match", "text"),
    "prefix_exact_match": ("prefix_exact_match", "text"),
    "prefix_quasi_exact_match": ("prefix_quasi_exact_match", "text"),
    "suffix_exact_match": ("suffix_exact_match", "text"),
    "suffix_quasi_exact_match": ("suffix_quasi_exact_match", "text"),
    "f1_score": ("f1_score", "text"),
    "f1_score_quasi": ("f1_score_quasi", "text"),
    "quasi_exact_match_gsm8k": ("quasi_exact_match_gsm8k", "text"),
}

NULL_ROW = 3
SPECS = all_metrics()


def test_every_metric_is_classified():
    unclassified = sorted(spec.name for spec in SPECS if spec.name not in CLASSIFIED)
    assert not unclassified, f"classify these metrics in tests/test_common.py: {unclassified}"


def _case(spec) -> tuple[str, pl.DataFrame]:
    if spec.name not in CLASSIFIED:
        pytest.fail(f"{spec.name} is not classified")
    name, shape = CLASSIFIED[spec.name]
    return name, FRAMES[shape](random.Random(1234))


@pytest.fixture(params=SPECS, ids=[spec.name for spec in SPECS])
def case(request):
    return _case(request.param)


def test_float64_per_row_and_input_kept(case):
    name, frame = case
    scored = ef.score(frame, [name])
    assert scored.columns == [*frame.columns, name]
    assert scored.schema[name] == pl.Float64
    assert scored.drop(name).equals(frame)


def test_row_order_is_kept(case):
    name, frame = case
    forward = ef.score(frame, [name])[name]
    backward = ef.score(frame.reverse(), [name])[name].reverse()
    assert forward.equals(backward)


def test_nulls_propagate(case):
    name, frame = case
    scored = ef.score(frame, [name])[name]
    assert scored[NULL_ROW] is None
    assert scored.null_count() == 1, "only the row with a null input scores null"


def test_lazy_and_eager_identical(case):
    name, frame = case
    eager = ef.score(frame, [name])
    assert ef.score(frame.lazy(), [name]).collect().equals(eager)


def test_chunked_input_and_streaming_equal_one_batch(case):
    name, frame = case
    whole = ef.score(frame, [name])
    chunked = pl.concat([frame.slice(0, 7), frame.slice(7, 20), frame.slice(27)], rechunk=False)
    assert chunked.n_chunks() > 1
    assert ef.score(chunked, [name]).equals(whole)
    streamed = ef.score(chunked.lazy(), [name]).collect(engine="streaming")
    assert streamed.equals(whole)


def test_missing_role_raises(case):
    name, frame = case
    with pytest.raises(EvalframeError, match=re.escape(repr(name))):
        ef.score(frame.drop(frame.columns[-1]).drop(frame.columns[0]), [name])
