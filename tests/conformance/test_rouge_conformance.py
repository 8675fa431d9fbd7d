"""ROUGE against rouge-score 0.1.2 and lighteval 0.13.0's ``ROUGE``, row by row.

References:

- ``rouge_score.rouge_scorer.RougeScorer(types, use_stemmer=...)``: ``score(target,
  prediction)`` for one reference, ``score_multi(targets, prediction)`` for several (the
  reference with the best F-measure), and the mean of ``score`` over the references for
  ``aggregation="mean"`` (lighteval's ``np.mean``).
- lighteval's ``ROUGE`` class and ``bigbench_normalizer``, executed from the installed
  source files (lighteval's modules import torch at the top, which the test environment
  does not have: lighteval is installed with ``--no-deps``), as ``Metrics.rouge1`` ...
  ``Metrics.rouge_t5`` build them.

Scores are compared exactly (``==`` on floats); the issue's bound is 1e-12.
"""

from __future__ import annotations

import ast
import importlib.util
import logging
import random
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest

import evalframe as ef
from evalframe import metrics as M

rouge_scorer = pytest.importorskip(
    "rouge_score.rouge_scorer", reason="rouge-score is not installed"
)
pytest.importorskip("nltk", reason="nltk is not installed")
pytest.importorskip("rapidfuzz", reason="rapidfuzz is not installed")

TYPES = ["rouge1", "rouge2", "rougeL", "rougeLsum"]
FIELDS = ["precision", "recall", "fmeasure"]
FUNCTIONS = {"rouge1": M.rouge1, "rouge2": M.rouge2, "rougeL": M.rougeL, "rougeLsum": M.rougeLsum}


def reference(
    predictions: list[str], golds: list[str | list[str]], *, use_stemmer: bool, aggregation: str
) -> dict[tuple[str, str], list[float]]:
    scorer = rouge_scorer.RougeScorer(TYPES, use_stemmer=use_stemmer)
    out: dict[tuple[str, str], list[float]] = {(t, f): [] for t in TYPES for f in FIELDS}
    for prediction, gold in zip(predictions, golds, strict=True):
        targets = gold if isinstance(gold, list) else [gold]
        if aggregation == "max":
            best = scorer.score_multi(targets, prediction)
            values = {(t, f): getattr(best[t], f) for t in TYPES for f in FIELDS}
        else:
            each = [scorer.score(target, prediction) for target in targets]
            values = {
                (t, f): float(np.mean([getattr(s[t], f) for s in each]))
                for t in TYPES
                for f in FIELDS
            }
        for key, value in values.items():
            out[key].append(float(value))
    return out


def ours(
    predictions: list[str], golds: list[str | list[str]], *, use_stemmer: bool, aggregation: str
) -> dict[tuple[str, str], list[float]]:
    many = any(isinstance(g, list) for g in golds)
    gold = [g if isinstance(g, list) else [g] for g in golds] if many else golds
    frame = pl.DataFrame({"p": predictions, "g": gold})
    expressions = [
        FUNCTIONS[t]("p", "g", score=f, use_stemmer=use_stemmer, aggregation=aggregation).alias(
            f"{t}.{f}"
        )
        for t in TYPES
        for f in FIELDS
    ]
    scored = frame.lazy().select(expressions).collect()
    return {(t, f): scored[f"{t}.{f}"].to_list() for t in TYPES for f in FIELDS}


def assert_identical(predictions, golds, *, use_stemmer=True, aggregation="max") -> int:
    expected = reference(predictions, golds, use_stemmer=use_stemmer, aggregation=aggregation)
    got = ours(predictions, golds, use_stemmer=use_stemmer, aggregation=aggregation)
    for key in expected:
        bad = [i for i, (a, b) in enumerate(zip(got[key], expected[key], strict=True)) if a != b]
        assert not bad, (
            f"{key} differs on {len(bad)} rows; first: prediction={predictions[bad[0]]!r} "
            f"gold={golds[bad[0]]!r}: evalframe {got[key][bad[0]]!r}, rouge-score "
            f"{expected[key][bad[0]]!r}"
        )
    return len(predictions)


# --- adversarial inputs ---------------------------------------------------------------------

ADVERSARIAL: list[tuple[str, str | list[str]]] = [
    ("", ""), ("", "the cat"), ("the cat", ""), ("   ", "the cat"), (" \t\n ", "\n\n"),
    ("the cat sat", "the cat sat"), ("word", "word"), ("one", "two"), ("a", "a a a"),
    ("...!?", "—“”«»"), ("The cat, the hat; the bat!", "the-cat the_hat (the bat)"),
    ("東京は大きい。", "東京は小さい。"), ("日本語 only", "only"), ("中文", "中文"),
    ("Привет, мир!", "Привет мир"), ("мир peace", "peace мир"),
    ("e\u0301te\u0301 cafe\u0301", "été café"), ("naïve über", "naive uber"),
    ("İstanbul KELVIN", "i̇stanbul kelvin"), ("\u212a", "k"), ("straße", "strasse"),
    ("x " * 3000, "x " * 2999 + "y"), (("lorem ipsum dolor " * 300).strip(), "lorem " * 400),
    ("cats dogs runs", "cat dog run"), ("was has his", "wa ha hi"), ("eats eat", "eat eats"),
    ("ties ponies caresses", "tie poni caress"), ("feed agreed plastered", "feed agre plaster"),
    ("a\nb\nc", "c\nb\na"), ("the cat sat\non the mat", "on the mat\nthe cat sat"),
    ("\n\nthe cat\n\n", "the cat"), ("a b\n\nb a\n", "a b a b"), ("x\r\ny", "x y"),
    ("one\ntwo\nthree\nfour", "four three two one"), ("a a a\na a", "a\na\na"),
    ("The quick brown fox", ["The quick brown fox jumps", "quick fox", "brown"]),
    ("police killed the gunman", ["the gunman killed police", "police kill the gunman"]),
    ("a b c", ["", "x", "a b c"]), ("", ["", ""]), ("tie", ["tie x", "x tie"]),
    ("3.14 is pi, 2,000 or 2000", "pi is 3 14; 2000"), ("123 4567 89", "4567 89 123"),
    ("a.b.c.d", "a b c d"), ("it's John's", "it s john s"), ("U.S.A. and u.s.a", "usa"),
    ("\x00a\x00b", "a b"), ("tab\tseparated\twords", "tab separated words"),
    ("emoji 🙂 here 🚀", "emoji here"), ("mixed ĀāĂă latin", "mixed latin"),
]


@pytest.mark.parametrize("use_stemmer", [True, False])
@pytest.mark.parametrize("aggregation", ["max", "mean"])
def test_adversarial_inputs_equal_rouge_score(use_stemmer, aggregation):
    predictions = [p for p, _ in ADVERSARIAL]
    golds = [[g] if isinstance(g, str) else g for _, g in ADVERSARIAL]
    assert_identical(predictions, golds, use_stemmer=use_stemmer, aggregation=aggregation)


def test_string_gold_equals_one_reference():
    pairs = [(p, g) for p, g in ADVERSARIAL if isinstance(g, str)]
    assert_identical([p for p, _ in pairs], [g for _, g in pairs])


# --- random inputs --------------------------------------------------------------------------

_WORDS = (
    "the a of and to in is was it cat cats dog dogs running runs ran run eat eats eating "
    "agreed feed ponies caresses ties sky skies dying lying news series generously "
    "1 42 3.14 2,000 2024 U.S. it's don't café naïve über Привет мир 東京 日本 — “ ” ! ? , . ; "
    "İ K ß e\u0301 \u00a0 \t"
)
POOL = _WORDS.split(" ")
SEPARATORS = [" "] * 12 + ["\n", "  ", ", ", ". ", " . ", "\n\n"]


def random_text(rng: random.Random, longest: int) -> str:
    words = [rng.choice(POOL) for _ in range(rng.randint(0, longest))]
    return "".join(w + rng.choice(SEPARATORS) for w in words).rstrip(" ") if words else ""


def random_pairs(seed: int, rows: int, longest: int = 30, references: int = 3):
    rng = random.Random(seed)
    predictions = [random_text(rng, longest) for _ in range(rows)]
    golds = [
        [random_text(rng, longest) for _ in range(rng.randint(1, references))]
        for _ in range(rows)
    ]
    return predictions, golds


@pytest.mark.parametrize("use_stemmer", [True, False])
@pytest.mark.parametrize("aggregation", ["max", "mean"])
def test_random_pairs_equal_rouge_score(use_stemmer, aggregation):
    predictions, golds = random_pairs(seed=1 + use_stemmer, rows=1500)
    assert_identical(predictions, golds, use_stemmer=use_stemmer, aggregation=aggregation)


def test_random_single_references_with_near_copies():
    rng = random.Random(7)
    predictions, golds = [], []
    for _ in range(1500):
        gold = random_text(rng, 40)
        words = gold.split(" ")
        # a near copy: drop, swap and repeat words, or start over
        for _ in range(rng.randint(0, 4)):
            if words and rng.random() < 0.5:
                words.pop(rng.randrange(len(words)))
            elif len(words) > 1:
                i = rng.randrange(len(words) - 1)
                words[i], words[i + 1] = words[i + 1], words[i]
        prediction = " ".join(words) if rng.random() < 0.8 else random_text(rng, 40)
        predictions.append(prediction)
        golds.append(gold)
    assert_identical(predictions, golds)


def test_many_references_mean_is_numpy_mean():
    # np.mean sums pairwise: more than 8 references take its other branch
    predictions, golds = random_pairs(seed=11, rows=300, longest=12, references=20)
    assert_identical(predictions, golds, aggregation="mean")
    assert_identical(predictions, golds, aggregation="max")


def test_long_multi_sentence_summaries():
    rng = random.Random(5)
    predictions = ["\n".join(random_text(rng, 60) for _ in range(rng.randint(1, 8)))
                   for _ in range(120)]
    golds = ["\n".join(random_text(rng, 60) for _ in range(rng.randint(1, 8)))
             for _ in range(120)]
    assert_identical(predictions, golds)


def test_small_tables_in_many_chunks_give_the_same_scores(monkeypatch):
    from evalframe.metrics import rouge

    predictions, golds = random_pairs(seed=3, rows=400)
    expected = reference(predictions, golds, use_stemmer=True, aggregation="max")
    monkeypatch.setattr(rouge, "_CELL_BUDGET", 64)
    got = ours(predictions, golds, use_stemmer=True, aggregation="max")
    assert got[("rougeLsum", "fmeasure")] == expected[("rougeLsum", "fmeasure")]


def test_more_token_ids_than_code_points_falls_back_to_integer_sequences(monkeypatch):
    from evalframe.metrics import rouge

    predictions, golds = random_pairs(seed=4, rows=300)
    monkeypatch.setattr(rouge, "_MAX_CODE_POINT", 5)
    assert_identical(predictions, golds)


def test_engine_and_aggregate_reproduce_the_reference_mean():
    predictions, golds = random_pairs(seed=9, rows=200)
    frame = pl.DataFrame({"prediction": predictions, "gold": golds})
    scored = ef.score(frame, ["rouge1", "rougeLsum"])
    expected = reference(predictions, golds, use_stemmer=True, aggregation="max")
    assert scored["rouge1"].to_list() == expected[("rouge1", "fmeasure")]
    assert scored["rougeLsum"].to_list() == expected[("rougeLsum", "fmeasure")]
    table = ef.aggregate(scored, metrics=["rouge1"])
    assert table["value"].item() == pytest.approx(
        float(np.mean(expected[("rouge1", "fmeasure")])), rel=1e-12, abs=0
    )


# --- lighteval ------------------------------------------------------------------------------


def _load_lighteval() -> tuple[Any, Any] | None:
    spec = importlib.util.find_spec("lighteval")
    if spec is None or not spec.submodule_search_locations:
        return None
    root = Path(next(iter(spec.submodule_search_locations)))
    namespace: dict[str, Any] = {
        "np": np, "ABC": ABC, "abstractmethod": abstractmethod,
        "logger": logging.getLogger("lighteval"), "Callable": Any,
        "Doc": Any, "ModelResponse": Any,
        "as_list": lambda item: item if isinstance(item, list) else [item],
    }
    for path, names in (
        (root / "metrics" / "normalizations.py", {"bigbench_normalizer"}),
        (root / "metrics" / "metrics_sample.py", {"SampleLevelComputation", "ROUGE"}),
    ):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        body = [
            node
            for node in tree.body
            if isinstance(node, ast.ClassDef | ast.FunctionDef) and node.name in names
        ]
        assert {node.name for node in body} == names, path
        exec(compile(ast.Module(body=body, type_ignores=[]), str(path), "exec"), namespace)
    return namespace["ROUGE"], namespace["bigbench_normalizer"]


LOADED = _load_lighteval()
needs_lighteval = pytest.mark.skipif(LOADED is None, reason="lighteval is not installed")


class _Doc:
    def __init__(self, golds: list[str]):
        self._golds = golds

    def get_golds(self) -> list[str]:
        return self._golds


class _Response:
    def __init__(self, text: list[str]):
        self.final_text = text


@needs_lighteval
@pytest.mark.parametrize("rouge_type", TYPES)
def test_lighteval_rouge_metrics(rouge_type):
    # Metrics.rouge1 ... rougeLsum: ROUGE(type), no stemmer, np.mean over the golds
    rouge_class, _ = LOADED
    metric = rouge_class(rouge_type)
    predictions, golds = random_pairs(seed=21, rows=400)
    expected = [metric.compute(_Doc(g), _Response([p])) for p, g in zip(predictions, golds,
                                                                       strict=True)]
    frame = pl.DataFrame({"prediction": predictions, "gold": golds})
    request = f"{rouge_type}(use_stemmer=false, aggregation=mean)"
    got = ef.score(frame, {"x": request})["x"].to_list()
    assert got == [float(v) for v in expected]


@needs_lighteval
def test_lighteval_rouge_t5():
    rouge_class, bigbench = LOADED
    # Metrics.rouge_t5's sample-level function, as lighteval builds it
    metric = rouge_class(TYPES, bootstrap=True, normalize_gold=bigbench, normalize_pred=bigbench)
    rng = random.Random(13)
    predictions = [random_text(rng, 30) for _ in range(300)]
    golds = [[random_text(rng, 30) for _ in range(rng.randint(1, 3))] for _ in range(300)]
    predictions[:4] = ["a . b . c", "x . y", "The cat . The hat .", " . "]
    expected = [metric.compute(_Doc(g), _Response([p])) for p, g in zip(predictions, golds,
                                                                       strict=True)]
    frame = pl.DataFrame({"prediction": predictions, "gold": golds})
    for rouge_type in TYPES:
        got = ef.score(frame, {"x": f"rouge_t5(rouge_type={rouge_type})"})["x"].to_list()
        assert got == [float(e[rouge_type]) for e in expected], rouge_type
