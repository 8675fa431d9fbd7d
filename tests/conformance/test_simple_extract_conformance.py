"""``boxed``, ``gsm8k_answer``, ``last_number`` against their references, row for row.

- ``boxed``: lm-evaluation-harness 0.4.13's ``remove_boxed(last_boxed_only_string(x))``.
  ``tasks/minerva_math/utils.py`` asserts a pinned antlr4 at import, so its two functions
  are executed from the installed file's own source (``ast``); ``hendrycks_math/utils.py``
  is imported as it is. Where the reference raises (``remove_boxed``'s ``assert`` on a box
  that does not start with ``\\boxed{``, or ``None`` from ``last_boxed_only_string``), the
  expected value is evalframe's documented one: a ``\\fbox{...}`` box's content, else null.
- ``gsm8k_answer``: lighteval 0.13.0's ``gsm8k_normalizer`` (OpenAI grade-school-math's
  ``extract_answer``, which imports torch and is not installable: lighteval copies it).
- ``last_number``: Qwen2.5-Math's branch is not installable (its module imports
  latex2sympy2, word2number and a local ``utils``); the expected value is the branch's own
  expression, ``re.findall(r"-?\\d*\\.?\\d+", text.replace("ки", "").replace(",", ""))``,
  run by Python's ``re`` (the semantics the Rust translation must match), plus
  hand-computed cases in ``tests/extract/test_simple.py``.
"""

from __future__ import annotations

import ast
import gzip
import importlib.util
import json
import random
import re
from collections.abc import Callable
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalframe.extract.simple import boxed, gsm8k_answer, last_number
from tests.conformance._lighteval_import import import_lighteval


def _lm_eval_root() -> Path | None:
    spec = importlib.util.find_spec("lm_eval")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def _functions(path: Path, names: set[str]) -> dict[str, Callable]:
    """The top-level functions ``names`` of ``path``, executed from its source."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    body = [node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name in names]
    assert {node.name for node in body} == names, f"{path}: {names} not all found"
    namespace: dict = {}
    exec(compile(ast.Module(body=body, type_ignores=[]), str(path), "exec"), namespace)
    return {name: namespace[name] for name in names}


ROOT = _lm_eval_root()
needs_lm_eval = pytest.mark.skipif(ROOT is None, reason="lm-eval is not installed")


def _minerva() -> tuple[Callable, Callable]:
    found = _functions(
        ROOT / "tasks" / "minerva_math" / "utils.py", {"last_boxed_only_string", "remove_boxed"}
    )
    return found["last_boxed_only_string"], found["remove_boxed"]


def reference_boxed(text: str | None, last_boxed_only_string, remove_boxed):
    """(extracted, rule) as the reference gives it, where it gives one."""
    if text is None:
        return None, None
    box = last_boxed_only_string(text)
    if box is None:
        return None, "none"
    try:
        answer = remove_boxed(box)
    except AssertionError:  # the reference has no answer: evalframe's documented choice
        return (box[len("\\fbox{"):-1], "fbox") if box.startswith("\\fbox{") else (None, "none")
    return answer, "boxed_space" if "\\boxed " in text else "boxed"


def run(function, texts: list[str | None]) -> list[tuple[str | None, str | None]]:
    out = pl.DataFrame({"t": pl.Series(texts, dtype=pl.String)}).select(function("t"))
    return [(row["extracted"], row["rule"]) for row in out.to_series().to_list()]


ADVERSARIAL_BOXES = [
    "", None, "no box at all", "\\boxed{5}", "The answer is $\\boxed{5}$.",
    "\\boxed{1} and then \\boxed{2}", "\\boxed{\\frac{1}{2}}", "\\boxed{{a}{b}}",
    "\\boxed{a{b}c}d}", "\\boxed{unbalanced", "\\boxed{a}}}", "}}\\boxed{x}",
    "\\boxed 5", "$\\boxed 5$ and 6", "\\boxed 7 then \\boxed{8}", "\\boxed{8} then \\boxed 7$",
    "\\boxed \\boxed 9", "\\boxed ", "\\fbox{3}", "\\fbox{3} \\boxed{4}", "\\boxed{4} \\fbox{3}",
    "\\fbox{un", "\\fbox 2", "\\boxed\n{5}", "\\boxedx{5}", "\\boxed}{{5}}", "\\boxed{}",
    "\\boxed{ é ٣ 😀 }", "line\n\\boxed{a\nb}\nend", "\\boxed{5}\r\n", "\\\\boxed{6}",
    "\\boxed{\\boxed{7}}", "\\boxed{1}{2}", "x \\boxed{$}$", "\\boxed{a} \\boxed{b",
    "\\fbox{a}\\fbox{b", "\\boxe{5}", "\\boxed{\\text{yes}}.", "\\fbox\n{1}",
    # nesting around the depth the column-wide regex takes (3) and beyond
    "\\boxed{{{a}}}", "\\boxed{{{{a}}}}", "\\boxed{{{{a}}}", "\\boxed{{a}b{c{d}}}}",
    "\\fbox{{{{x}}}}", "\\boxed{a{b{c{d{e}}}}} f", "\\boxed{}{}}", "\\boxed{{}{}{{}}}",
]


@needs_lm_eval
def test_boxed_equals_minerva_math_on_adversarial_text():
    last, remove = _minerva()
    expected = [reference_boxed(text, last, remove) for text in ADVERSARIAL_BOXES]
    assert run(boxed, ADVERSARIAL_BOXES) == expected


@needs_lm_eval
def test_hendrycks_math_has_the_same_functions():
    from lm_eval.tasks.hendrycks_math import utils as hendrycks

    last, remove = _minerva()
    texts = [text for text in ADVERSARIAL_BOXES if text is not None]
    assert [hendrycks.last_boxed_only_string(t) for t in texts] == [last(t) for t in texts]
    for text in texts:
        box = last(text)
        if box is None:
            continue
        outcomes = []
        for function in (remove, hendrycks.remove_boxed):
            try:
                outcomes.append(function(box))
            except AssertionError:
                outcomes.append(AssertionError)
        assert outcomes[0] == outcomes[1], text


TOKENS = ["\\boxed", "\\fbox", "\\boxed ", "\\boxed{", "{", "}", " ", "$", "a", "1", "\n", "é",
          "٣", "\\", "x", "\r\n"]


@needs_lm_eval
@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.sampled_from(TOKENS), max_size=14).map("".join), max_size=30))
def test_boxed_equals_minerva_math_on_random_text(texts):
    last, remove = _minerva()
    assert run(boxed, texts) == [reference_boxed(text, last, remove) for text in texts]


@needs_lm_eval
def test_boxed_on_many_distinct_and_repeated_texts():
    last, remove = _minerva()
    rng = random.Random(7)
    pool = ["".join(rng.choice(TOKENS) for _ in range(rng.randint(0, 16))) for _ in range(3000)]
    texts = [rng.choice(pool) for _ in range(20000)]
    frame = pl.DataFrame({"t": texts})
    chunked = pl.concat([frame.slice(0, 5000), frame.slice(5000)], rechunk=False)
    out = chunked.lazy().select(boxed("t")).collect(engine="streaming").to_series().to_list()
    assert [(r["extracted"], r["rule"]) for r in out] == [
        reference_boxed(text, last, remove) for text in texts
    ]


def _gsm8k_normalizer() -> Callable[[str], str]:
    module = import_lighteval("lighteval.metrics.normalizations")
    if module is None:
        pytest.skip("lighteval is not installed")
    return module.gsm8k_normalizer


GSM8K_TEXTS = [
    "", "#### 5", "####5", "#### -5", "#### --5", "#### +5", "#### 1,000", "#### 1,000.50",
    "#### .", "#### ,", "#### -", "#### ٣", "#### 5 #### 6", "text #### 7\n", "##### 8",
    "#### 9abc", "####  10", "#### 1.2.3", "\n#### 4\r\n", "#### $5", "a\n#### 3\n#### 4",
    "#### -,", "#### 12,345,678", "#### 0x10", "####\t5", "#### 𝟓",
]


def test_gsm8k_answer_equals_lighteval_gsm8k_normalizer():
    normalizer = _gsm8k_normalizer()
    expected = [
        (normalizer(text), "none" if normalizer(text) == "[invalid]" else "gsm8k_answer")
        for text in GSM8K_TEXTS
    ]
    assert run(gsm8k_answer, [*GSM8K_TEXTS, None]) == [*expected, (None, None)]


@settings(max_examples=300, deadline=None)
@given(st.lists(
    st.lists(st.sampled_from(["#", "####", "#### ", " ", "-", "1", "٣", ",", ".", "a", "\n"]),
             max_size=10).map("".join),
    max_size=30,
))
def test_gsm8k_answer_equals_lighteval_on_random_text(texts):
    normalizer = _gsm8k_normalizer()
    assert [answer for answer, _ in run(gsm8k_answer, texts)] == [normalizer(t) for t in texts]


_QWEN_LAST_NUMBER = re.compile(r"-?\d*\.?\d+")


def qwen_last_number(text: str | None) -> str | None:
    """The branch's expression, run by Python's ``re`` (see the module docstring)."""
    if text is None:
        return None
    found = _QWEN_LAST_NUMBER.findall(text.replace("\u043a\u0438", "").replace(",", ""))
    return found[-1] if found else ""


NUMBER_TOKENS = ["1", "2", "0", "٣", "𑽐", "𝟓", ".", ",", "-", "+", " ", "\n", "a", "ки", "к",
                 "и", "e", "$", "%", "/", "²"]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.lists(st.sampled_from(NUMBER_TOKENS), max_size=12).map("".join), max_size=30))
def test_last_number_equals_the_reference_expression(texts):
    assert [answer for answer, _ in run(last_number, texts)] == [
        qwen_last_number(t) for t in texts
    ]


def test_last_number_uses_pythons_digits_not_rusts():
    # U+11F50 (Kawi digit zero) is a digit for Rust's newer Unicode tables; what decides
    # is the running Python's re
    kawi = "\U00011f50"
    assert run(last_number, [f"x {kawi} y"]) == [
        (qwen_last_number(f"x {kawi} y"), "last_number" if qwen_last_number(f"x {kawi} y")
         else "none")
    ]


def test_real_gsm8k_golds(shared_data):
    normalizer = _gsm8k_normalizer()
    path = shared_data / "lm-eval-olot-fixture" / "samples_gsm8k_2025-04-30T18-24-41.082644.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    texts = [row["target"] for row in rows] + [row["resps"][0][0] for row in rows]
    answers = [answer for answer, _ in run(gsm8k_answer, texts)]
    assert answers == [normalizer(text) for text in texts]
    assert answers[: len(rows)] == ["18", "3", "70000"]


@needs_lm_eval
def test_real_mmlu_pro_responses(shared_data):
    """GPT-4o's 1,351 MMLU-Pro math chains of thought (100 with a \\boxed)."""
    last, remove = _minerva()
    path = shared_data / "mmlu-pro" / "gpt4o" / "math_result.json.gz"
    texts = [row["response"] for row in json.loads(gzip.decompress(path.read_bytes()))]
    assert run(boxed, texts) == [reference_boxed(t, last, remove) for t in texts]
    assert [answer for answer, _ in run(last_number, texts)] == [
        qwen_last_number(t) for t in texts
    ]
