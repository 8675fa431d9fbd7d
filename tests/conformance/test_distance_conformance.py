"""String distances against lighteval's ``StringDistance`` and nltk, row by row.

References:

- lighteval 0.13.0 ``StringDistance`` (``metrics/metrics_sample.py``), instantiated as its
  ``copyright`` metric builds it and called on every row. lighteval's module imports
  torch and transformers at the top, which the test environment does not have (lighteval
  is installed with ``--no-deps``), so the class definitions are executed from the
  installed source file with numpy, nltk's ``edit_distance`` and
  ``TreebankWordTokenizer``, and lighteval's own ``Doc``.
- nltk's ``TreebankWordTokenizer().tokenize`` for :func:`treebank_tokenize`.
- a plain dynamic-programming Levenshtein written here for the word and character
  variants.

Distances are compared exactly (``==`` on floats).
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

nltk_distance = pytest.importorskip("nltk.metrics.distance", reason="nltk is not installed")
nltk_treebank = pytest.importorskip("nltk.tokenize.treebank", reason="nltk is not installed")


def _load_string_distance() -> tuple[Any, Any] | None:
    spec = importlib.util.find_spec("lighteval")
    if spec is None or not spec.submodule_search_locations:
        return None
    from lighteval.tasks.requests import Doc
    from lighteval.utils.utils import as_list

    path = Path(next(iter(spec.submodule_search_locations))) / "metrics" / "metrics_sample.py"
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = {"SampleLevelComputation", "StringDistance"}
    body = [node for node in tree.body if isinstance(node, ast.ClassDef) and node.name in names]
    assert {node.name for node in body} == names
    namespace: dict[str, Any] = {
        "np": np, "ABC": ABC, "abstractmethod": abstractmethod, "as_list": as_list,
        "Doc": Doc, "ModelResponse": object, "logger": logging.getLogger("lighteval"),
        "edit_distance": nltk_distance.edit_distance,
        "TreebankWordTokenizer": nltk_treebank.TreebankWordTokenizer,
    }
    exec(compile(ast.Module(body=body, type_ignores=[]), str(path), "exec"), namespace)
    return namespace["StringDistance"], Doc


LOADED = _load_string_distance()
needs_lighteval = pytest.mark.skipif(LOADED is None, reason="lighteval is not installed")


class Response:
    """The field of lighteval's ``ModelResponse`` ``StringDistance`` reads."""

    def __init__(self, text: list[str]):
        self.text = text
        self.text_post_processed = None

    @property
    def final_text(self) -> list[str]:
        return self.text_post_processed if self.text_post_processed is not None else self.text


def lighteval_values(predictions: list[str | list[str]], golds: list[str | list[str]],
                     strip: bool = True) -> dict[str, list[float]]:
    string_distance, doc_type = LOADED
    names = ["longest_common_prefix_length", "edit_distance", "edit_similarity"]
    metric = string_distance(metric_types=names, strip_prediction=strip)
    out: dict[str, list[float]] = {name: [] for name in names}
    for prediction, gold in zip(predictions, golds, strict=True):
        choices = gold if isinstance(gold, list) else [gold]
        samples = prediction if isinstance(prediction, list) else [prediction]
        doc = doc_type(query="", choices=choices, gold_index=list(range(len(choices))))
        result = metric.compute(doc=doc, model_response=Response(samples))
        for name in names:
            out[name].append(result[name])
    return out


# --- inputs ------------------------------------------------------------------------------

ATOMS = [
    "cannot", "CANNOT", "Cannot", "wanna", "gonna", "gimme", "'tis", "'Twas", "d'ye", "more'n",
    "lemme", "gotta", "don't", "it's", "I'm", "they'll", "we're", "you've", "N'T", "'s", "'",
    "''", '"', "``", "(", ")", "[", "]", "{", "}", "<", ">", "a", "b", "1", "2,000", "3:4",
    "a:b", ",", ":", ".", "...", "..", "end.", "x.)", 'y."', "z.'", ";", "@", "#", "$", "%",
    "&", "?", "!", "--", "-", "\n", "\t", "\x1c", "\x1f", "\x85", "\u00a0", "\u3000",
    "\u2028", "é", "e\u0301", "\u0301", "ſ", "İ", "ı", "K", "ǅ", "٣", "\u0660",
    "\U0001d7ce", "東京", "日本語", "Привет", "мир", "—", "“", "”", "’", "«", "»", "¿", "¡",
    "\x00", "a\x00", "", "'t", "'T", "tis", "TWAS", "is", "'tis'", "'twas", "can", "not", "x'tis",
    "_", "cannot_", "München", "naïve", "Ωμέγα",
]
SEPARATORS = [" ", " ", " ", "", "\n", "  ", "\t", "\x1c", "\u00a0", "\u3000"]

ADVERSARIAL: list[tuple[str, str]] = [
    ("", ""), ("", "abc"), ("abc", ""), ("   ", "abc"), (" \t\n", ""), ("\x1c", "a"),
    ("a", "a"), ("word", "word"), ("one", "two"), ("  padded  ", "padded out"),
    ("Once upon a time", "Once upon a time"),
    ("Once upon a time there was a dragon", "Once upon a time there was a princess"),
    ("東京は大きい。", "東京は小さい。"), ("Привет, мир!", "Привет, мир."),
    ("e\u0301te\u0301", "été"), ("café naïve", "cafe naive"), ("“quoted” — yes…", "“quoted” —"),
    ("cannot cannot cannot", "can not can not"), (" 'tis 'tis'tis", "'tis"),
    ("wanna wanna\x85wanna", "wanna"), ("a\x00 b", "a b"), ("\x00", ""),
    ("x " * 600, "x " * 599 + "y"), (("lorem ipsum dolor " * 200).strip(), "lorem " * 500),
    ("a" * 50000, "a" * 49999 + "b"), ("日本語" * 5000, "日本語" * 4000),
    ("He said, \"don't\" (twice).", "He said, \"do not\" (twice)."),
    ("end.\n", "end.\n\n"), ("a,\n", "a,"), ("3:4, 5,000.", "3 : 4 , 5,000 ."),
]


def random_text(rng: random.Random, low: int = 0, high: int = 12) -> str:
    count = rng.randint(low, high)
    return "".join(rng.choice(ATOMS) + rng.choice(SEPARATORS) for _ in range(count))


def random_pairs(seed: int, count: int) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    pairs = []
    for _ in range(count):
        gold = random_text(rng, 1, 15)
        if rng.random() < 0.4:  # a prediction that copies the gold for a while, then drifts
            cut = rng.randint(0, len(gold))
            prediction = gold[:cut] + random_text(rng, 0, 5)
        else:
            prediction = random_text(rng)
        pairs.append((prediction, gold))
    return pairs


# --- Treebank ------------------------------------------------------------------------------


def test_treebank_tokens_equal_nltk():
    rng = random.Random(11)
    texts = [text for pair in ADVERSARIAL for text in pair]
    texts += [random_text(rng, 1, 14) for _ in range(20000)]
    tokenizer = nltk_treebank.TreebankWordTokenizer()
    want = [tokenizer.tokenize(text) for text in texts]
    got = pl.DataFrame({"text": texts}).select(M.treebank_tokenize("text"))["text"].to_list()
    mismatches = [(t, w, g) for t, w, g in zip(texts, want, got, strict=True) if w != g]
    assert not mismatches, f"{len(mismatches)} texts differ, first: {mismatches[0]!r}"


# --- lighteval's StringDistance ------------------------------------------------------------


def _evalframe(frame: pl.DataFrame, **options: Any) -> dict[str, list[float]]:
    return frame.select(
        M.longest_common_prefix_length("prediction", "gold", **options)
        .alias("longest_common_prefix_length"),
        M.edit_distance("prediction", "gold", **options).alias("edit_distance"),
        M.edit_similarity("prediction", "gold", **options).alias("edit_similarity"),
    ).to_dict(as_series=False)


def _assert_equal(got: dict[str, list[float]], want: dict[str, list[float]], inputs) -> None:
    for name, values in want.items():
        bad = [i for i, (g, w) in enumerate(zip(got[name], values, strict=True)) if g != w]
        assert not bad, (
            f"{name}: {len(bad)} rows differ; first row {bad[0]}: {inputs[bad[0]]!r} gives "
            f"{got[name][bad[0]]}, lighteval {values[bad[0]]}"
        )


@needs_lighteval
@pytest.mark.parametrize("strip", [True, False])
def test_adversarial_and_random_pairs_equal_lighteval(strip):
    pairs = ADVERSARIAL + random_pairs(seed=5, count=3000)
    predictions = [p for p, _ in pairs]
    golds = [g for _, g in pairs]
    want = lighteval_values(predictions, golds, strip=strip)
    got = _evalframe(pl.DataFrame({"prediction": predictions, "gold": golds}),
                     strip_prediction=strip)
    _assert_equal(got, want, pairs)


@needs_lighteval
def test_several_samples_and_golds_equal_lighteval():
    rng = random.Random(8)
    predictions, golds = [], []
    for _ in range(800):
        base = random_text(rng, 2, 12)
        golds.append([base] + [random_text(rng, 1, 8) for _ in range(rng.randint(0, 2))])
        predictions.append([
            base[: rng.randint(0, len(base))] + random_text(rng, 0, 3)
            for _ in range(rng.randint(1, 4))
        ])
    want = lighteval_values(predictions, golds)
    got = _evalframe(pl.DataFrame({"prediction": predictions, "gold": golds}))
    _assert_equal(got, want, list(zip(predictions, golds, strict=True)))


@needs_lighteval
def test_the_engine_and_aggregate_agree_with_lighteval():
    pairs = random_pairs(seed=21, count=500)
    frame = pl.DataFrame({"prediction": [p for p, _ in pairs], "gold": [g for _, g in pairs]})
    want = lighteval_values(frame["prediction"].to_list(), frame["gold"].to_list())
    names = ["edit_distance", "edit_similarity", "longest_common_prefix_length"]
    scored = ef.score(frame, names)
    for name in names:
        assert scored[name].to_list() == want[name]
    table = ef.aggregate(scored, metrics=names)
    for name in names:
        value = table.filter(pl.col("metric") == name)["value"].item()
        assert value == pytest.approx(float(np.mean(want[name])), rel=1e-12)


def test_more_tokens_than_nltk_allows_is_computed():
    # nltk 3.10's edit_distance refuses inputs longer than MAX_DISTANCE_INPUT_LEN (2000)
    # tokens, so lighteval raises ValueError there; evalframe gives the distance.
    size = nltk_distance.MAX_DISTANCE_INPUT_LEN + 1
    with pytest.raises(ValueError, match="MAX_DISTANCE_INPUT_LEN"):
        nltk_distance.edit_distance(["x"] * size, ["y"] * size)
    frame = pl.DataFrame({"prediction": ["x " * size, "x " * size],
                          "gold": ["x " * size, "y " * size]})
    got = _evalframe(frame)
    assert got["edit_distance"] == [0.0, float(size)]
    assert got["edit_similarity"] == [1.0, 0.0]
    assert got["longest_common_prefix_length"] == [float(size), 0.0]


# --- plain variants ------------------------------------------------------------------------


def levenshtein(a: list[str] | str, b: list[str] | str) -> int:
    previous = list(range(len(b) + 1))
    for i, x in enumerate(a, start=1):
        current = [i]
        for j, y in enumerate(b, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (x != y)))
        previous = current
    return previous[-1]


def similarity(a, b) -> float:
    longest = max(len(a), len(b))
    return 1.0 if longest == 0 else 1.0 - levenshtein(a, b) / longest


def test_plain_variants_equal_a_plain_levenshtein():
    rng = random.Random(3)
    pairs = [pair for pair in ADVERSARIAL if len(pair[0]) < 500 and len(pair[1]) < 500]
    pairs += random_pairs(seed=9, count=2000)
    predictions, golds = [], []
    for prediction, gold in pairs:  # some rows with several samples and alternatives
        if rng.random() < 0.2:
            predictions.append([prediction, random_text(rng, 0, 4)])
            golds.append([gold, random_text(rng, 0, 4), prediction[:3]])
        else:
            predictions.append([prediction])
            golds.append([gold])
    frame = pl.DataFrame({"prediction": predictions, "gold": golds})
    got = frame.select(
        M.word_edit_distance("prediction", "gold").alias("wd"),
        M.word_edit_similarity("prediction", "gold").alias("ws"),
        M.char_edit_distance("prediction", "gold").alias("cd"),
        M.char_edit_similarity("prediction", "gold").alias("cs"),
    ).to_dict(as_series=False)
    for i, (samples, alternatives) in enumerate(zip(predictions, golds, strict=True)):
        combos = [(p, g) for p in samples for g in alternatives]
        assert got["wd"][i] == min(levenshtein(p.split(), g.split()) for p, g in combos), i
        assert got["ws"][i] == max(similarity(p.split(), g.split()) for p, g in combos), i
        assert got["cd"][i] == min(levenshtein(p, g) for p, g in combos), i
        assert got["cs"][i] == max(similarity(p, g) for p, g in combos), i
