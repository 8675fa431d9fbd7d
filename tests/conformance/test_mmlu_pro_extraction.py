r"""MMLU-Pro's extractors against MMLU-Pro's own regex calls, and the published GPT-4o file.

The MMLU-Pro scripts are not a package (they import vllm, openai...), so the reference is
their regex calls transcribed here with Python ``re``, exactly as the scripts make them:

- ``evaluate_from_api.py`` (TIGER-AI-Lab/MMLU-Pro, commit 2a7ec7e4d36766256a1280e574c330d5537adfde)
  and ``evaluate_from_local.py`` (commit 7478e2681849424bff7c2787bda5f3c9abf98a62):
  ``extract_answer`` -> ``extract_again`` -> ``extract_final`` (``reference_current``);
- ``run_gpt4o.py`` (commit bfa90e1c730dd30cb6244fb5f8d93472bc5e2c5d): ``extract_answer``
  alone (``reference_answer_is``);
- ``evaluate_from_local.py`` / ``compute_accuracy.py`` (commit
  05c6997b92b6db9fe4379b0cab0649503a811ae6): the three steps with ``extract_final`` =
  ``re.search(r"[A-J](?=[^A-J]*$)", text)`` (``reference_last_capital``).

The GPT-4o results (``eval_results/gpt4o`` at commit ff991b5b7f14a383fd41da3987447ab6c08bf138,
``../shared/data/mmlu-pro/gpt4o``) carry the ``pred`` the run extracted from ``response``.
"""

from __future__ import annotations

import gzip
import json
import re
import sys

import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

from evalframe.extract.mmlu_pro import (
    mmlu_pro_answer_is,
    mmlu_pro_extract,
    mmlu_pro_last_capital,
)
from tests.extract.test_mmlu_pro import CASES


def _step_answer_is(text: str) -> str | None:
    match = re.search(r"answer is \(?([A-J])\)?", text)
    return match.group(1) if match else None


def _step_answer_colon(text: str) -> str | None:
    match = re.search(r".*[aA]nswer:\s*([A-J])", text)
    return match.group(1) if match else None


def _step_last_letter(text: str) -> str | None:
    match = re.search(r"\b[A-J]\b(?!.*\b[A-J]\b)", text, re.DOTALL)
    return match.group(0) if match else None


def _step_last_capital(text: str) -> str | None:
    match = re.search(r"[A-J](?=[^A-J]*$)", text)
    return match.group(0) if match else None


def _first(*values: str | None) -> str | None:
    return next((value for value in values if value is not None), None)


def _cascade(text: str, *steps) -> str | None:
    """The steps in order, each called only when the ones before found nothing (as the
    scripts' ``extract_answer`` -> ``extract_again`` -> ``extract_final`` calls)."""
    for step in steps:
        found = step(text)
        if found is not None:
            return found
    return None


def reference_current(text: str) -> str | None:
    return _cascade(text, _step_answer_is, _step_answer_colon, _step_last_letter)


def reference_answer_is(text: str) -> str | None:
    return _step_answer_is(text)


def reference_last_capital(text: str) -> str | None:
    return _cascade(text, _step_answer_is, _step_answer_colon, _step_last_capital)


PAIRS = [
    (mmlu_pro_extract, reference_current),
    (mmlu_pro_answer_is, reference_answer_is),
    (mmlu_pro_last_capital, reference_last_capital),
]
IDS = ["mmlu_pro", "mmlu_pro_answer_is", "mmlu_pro_last_capital"]


def _ours(function, texts: list[str | None]) -> list[str | None]:
    frame = pl.DataFrame({"response": texts}, schema={"response": pl.String})
    return frame.select(function("response").struct.field("extracted")).to_series().to_list()


def _mismatches(function, reference, texts: list[str]) -> list[tuple[str, str | None, str | None]]:
    ours = _ours(function, texts)
    return [
        (text, mine, theirs)
        for text, mine in zip(texts, ours, strict=True)
        if mine != (theirs := reference(text))
    ]


ADVERSARIAL = [
    "The answer is (B).", "The answer is B", "the answer is b", "The Answer is C", "answer is: B",
    "answer is (B", "answer is B)", "answer is (b)", "answer is  B", "answer is\nB",
    "answer is (K)",
    "answer is (B) or the answer is (C)", "Answer: A", "answer:B", "ANSWER: C", "Answer:\n\nD",
    "Answer: \x1cE", "Answer:\x1fF", "Answer:\u3000G", "Answer:\u00a0H", "Answer:\u200bI",
    "Answer: A, Answer: B\nAnswer: C", "x\nAnswer: a\nAnswer: J", "Final Answer: (C)",
    "A", "A.", "(A)", "[B]", "**C**", "I think D", "D or E", "A_", "_A", "A1", "1A", "AB",
    "A\u0301", "\u0301A", "B²", "²B", "½C", "C½", "D\u203f", "\u203fD", "ⅫE", "E\u0903",
    "éF", "Fé", "G٣", "٣G", "\uff21", "\u0391", "A\nB\n", "A\r\nB\r\n", "A\n", "\nA",
    "choose A\n\nbut maybe", "option K", "J", "", " ", "\n", "\r\n", "The answer is **A**.",
    "Therefore, the answer is (E). Note: option F", "a b c d", "A B C D E F G H I J",
    "The answer is $\\boxed{C}$", "答案是 B。", "答案：C", "Ответ: D", "Answer:\tE.",
]


@pytest.mark.parametrize(("function", "reference"), PAIRS, ids=IDS)
def test_adversarial(function, reference):
    texts = ADVERSARIAL + [case[0] for case in CASES if case[0] is not None]
    assert _mismatches(function, reference, texts) == []


@pytest.mark.parametrize(("function", "reference"), PAIRS, ids=IDS)
def test_null_response(function, reference):
    # the scripts raise TypeError on None; evalframe gives a null answer and a null rule
    frame = pl.DataFrame({"response": [None, "Answer: B"]}, schema={"response": pl.String})
    out = frame.select(function("response").alias("x")).unnest("x")
    assert out.row(0) == (None, None)
    assert out["extracted"][1] == reference("Answer: B")
    with pytest.raises(TypeError):
        reference(None)


_CODE_POINTS = [chr(c) for c in range(sys.maxunicode + 1) if not 0xD800 <= c <= 0xDFFF]


@pytest.mark.parametrize("template", ["{}A", "A{}", "Answer:{}C"])
def test_every_code_point_beside_a_letter(template):
    """Python's ``\\b`` (left and right of a letter) and ``\\s`` against ours, on each of the
    1,112,064 code points a Polars string can hold."""
    texts = [template.format(c) for c in _CODE_POINTS]
    steps = [_step_answer_is, _step_answer_colon, _step_last_letter, _step_last_capital]
    one, two, three, three_capital = ([step(text) for text in texts] for step in steps)
    references = {
        "mmlu_pro": list(map(_first, one, two, three)),
        "mmlu_pro_answer_is": one,
        "mmlu_pro_last_capital": list(map(_first, one, two, three_capital)),
    }
    for name, (function, _) in zip(IDS, PAIRS, strict=True):
        ours = _ours(function, texts)
        mismatches = [
            (text, mine, theirs)
            for text, mine, theirs in zip(texts, ours, references[name], strict=True)
            if mine != theirs
        ]
        assert mismatches[:5] == [], name


_PIECES = st.sampled_from([
    "answer is ", "answer is (", "Answer:", "answer: ", ")", "(", "**", " ", "  ", "\n", "\r\n",
    "\t", "\x1c", "\u3000", "A", "B", "E", "J", "K", "a", "j", "x", "_", "1", "²", "\u0301",
    "é", "\uff21", ".", ",", ":", "-", "The", "I", "Just", "option",
])


@given(st.lists(st.lists(_PIECES, max_size=14).map("".join), min_size=1, max_size=30))
def test_random_compositions(texts):
    for function, reference in PAIRS:
        assert _mismatches(function, reference, texts) == [], function.__name__


@pytest.fixture(scope="module")
def gpt4o(shared_data) -> pl.DataFrame:
    files = sorted((shared_data / "mmlu-pro" / "gpt4o").glob("*_result.json.gz"))
    rows = [row for path in files for row in json.loads(gzip.decompress(path.read_bytes()))]
    return pl.DataFrame(
        {"response": [row["response"] for row in rows], "pred": [row["pred"] for row in rows]},
        schema={"response": pl.String, "pred": pl.String},
    )


def test_gpt4o_pred_reproduced_on_every_row(gpt4o):
    assert gpt4o.height == 12_032
    assert gpt4o["pred"].null_count() == 571
    out = gpt4o.with_columns(mmlu_pro_answer_is("response").alias("x")).unnest("x")
    differ = out.filter(~pl.col("extracted").eq_missing(pl.col("pred")))
    assert differ.height == 0, differ.head(5)
    assert out["rule"].value_counts().sort("rule").rows() == [("answer_is", 11_461), ("none", 571)]


def test_gpt4o_file_is_not_the_three_step_cascade(gpt4o):
    # the current cascade would have found a letter in 492 of the 571 null rows
    out = gpt4o.with_columns(mmlu_pro_extract("response").alias("x")).unnest("x")
    assert out.filter(~pl.col("extracted").eq_missing(pl.col("pred"))).height == 492
    assert out.filter(pl.col("pred").is_not_null())["rule"].unique().to_list() == ["answer_is"]


@pytest.mark.parametrize(("function", "reference"), PAIRS, ids=IDS)
def test_gpt4o_responses_against_each_reference(gpt4o, function, reference):
    texts = gpt4o["response"].to_list()
    assert _mismatches(function, reference, texts) == []
