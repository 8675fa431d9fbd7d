"""exact_match against lm-eval-harness's exact_match_hf_evaluate, every option combination."""

from __future__ import annotations

import itertools
import random

import polars as pl
import pytest

from evalframe import metrics as M

lm_metrics = pytest.importorskip("lm_eval.api.metrics")

TEXTS = [
    "", " ", "  ", "a", "A", "a ", " a", "abc", "ABC", "Abc.", "a.b,c", "a b", "a  b", "42",
    "4 2", "answer: 42", "Answer: 42.", "The answer is 42", "the answer is 42!", "1,234",
    "1234", "$1,234.00", "#### 12", "12", "x\ty", "x\ny", "\x1cx", "a\x00", "a\x00\x00",
    "\x00a", "a\x00b", "ΑΣ", "ας", "ΟΔΟΣ.", "οδος", "Straße", "STRASSE", "ß", "é", "e\u0301",
    "É", "½", "²", "٣", "three", "“quoted”", '"quoted"', "it's", "its", "¿qué?", "que",
    "\u3000x", "x\u3000", "(a)", "[a]", "{a}", "a_b", "ab", "a-b", "—", "-", "\ua7cb", "ɤ",
]
# np.char.lower truncates a string that grows when lower-cased ("İ" -> "i̇") to the width
# of the numpy array: a documented divergence, tested separately below.
TEXTS_NO_GROWTH = [t for t in TEXTS if len(t.lower()) == len(t)]

REGEX_SETS = [(), (",",), (r"\s+",), ("^answer: ", r"\.$"), (r"[0-9]+", "a")]


def reference(prediction: str, gold: str, **options) -> float:
    result = lm_metrics.exact_match_hf_evaluate(
        predictions=[prediction], references=[gold], **options
    )
    return float(result["exact_match"])


@pytest.mark.parametrize(
    ("ignore_case", "ignore_punctuation", "ignore_numbers", "regexes"),
    list(itertools.product([False, True], [False, True], [False, True], REGEX_SETS)),
)
def test_all_option_combinations(ignore_case, ignore_punctuation, ignore_numbers, regexes):
    pairs = list(itertools.product(TEXTS_NO_GROWTH, repeat=2))
    frame = pl.DataFrame({"pred": [p for p, _ in pairs], "gold": [g for _, g in pairs]})
    options = {
        "ignore_case": ignore_case,
        "ignore_punctuation": ignore_punctuation,
        "ignore_numbers": ignore_numbers,
    }
    out = frame.select(
        M.exact_match("pred", "gold", regexes_to_ignore=regexes, **options)
    ).to_series().to_list()
    expected = [
        reference(p, g, regexes_to_ignore=list(regexes) or None, **options) for p, g in pairs
    ]
    mismatches = [(pairs[i], out[i], e) for i, e in enumerate(expected) if out[i] != e]
    assert not mismatches, mismatches[:5]


def test_best_alternative_is_max_of_reference():
    rng = random.Random(5)
    predictions = [rng.choice(TEXTS_NO_GROWTH) for _ in range(400)]
    golds = [[rng.choice(TEXTS_NO_GROWTH) for _ in range(rng.randint(1, 3))] for _ in range(400)]
    frame = pl.DataFrame({"pred": predictions, "gold": golds})
    out = frame.select(M.exact_match("pred", "gold", ignore_case=True)).to_series().to_list()
    for p, gs, got in zip(predictions, golds, out, strict=True):
        assert got == max(reference(p, g, ignore_case=True) for g in gs)


def test_divergence_lower_case_growth_is_not_truncated():
    # numpy: np.char.lower(["İX"]) -> ["i̇"] (cut to the array's width of 2).
    assert reference("İX", "i̇", ignore_case=True) == 1.0
    frame = pl.DataFrame({"pred": ["İX"], "gold": ["i̇x"]})
    assert frame.select(M.exact_match("pred", "gold", ignore_case=True)).item() == 1.0
    assert "İX".lower() == "i̇x"
