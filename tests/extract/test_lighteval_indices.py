"""lighteval's index extraction: hand-computed cases, Python semantics, the factory.

lighteval's own runs on adversarial, random and real responses are in
``tests/conformance/test_lighteval_indices_conformance.py``; here each expected value is
worked out by hand from the cascade (priorities 0 ... 300, lowest with a match wins, the
last match of that pattern).
"""

from __future__ import annotations

import re

import polars as pl
import pytest

from evalframe import EvalframeError
from evalframe.extract import lighteval_indices as module
from evalframe.extract.lighteval_indices import (
    ENGLISH,
    IndexLiterals,
    index_labels,
    index_patterns,
    indices_extraction,
)
from evalframe.extract.table import EXTRACTION, EXTRACTORS, answer_of, resolve_extractor
from evalframe.normalize._python_text import all_characters

GPQA = EXTRACTORS["lighteval_letters"]
ANCHORED = EXTRACTORS["lighteval_letters_anchored"]


def run(extractor, texts):
    out = pl.DataFrame({"t": pl.Series(texts, dtype=pl.String)}).select(extractor("t"))
    assert out.to_series().dtype == EXTRACTION
    return [(row["extracted"], row["rule"]) for row in out.to_series().to_list()]


def test_registered_with_references():
    assert GPQA.name == "lighteval_letters" and ANCHORED.name == "lighteval_letters_anchored"
    assert "try_extract_without_anchor=True" in GPQA.reference
    assert "try_extract_without_anchor=False" in ANCHORED.reference
    assert resolve_extractor("m", "lighteval_letters")[1] is GPQA.function


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # 0: "final answer is" + label + "I hope" beats everything after it
        ("Answer: A. The final answer is C. I hope it is correct.",
         ("C", "final_answer_i_hope")),
        # 50: "final answer ... is" (up to 100 characters between), then a label
        ("Final answer to this is (B)", ("B", "final_answer_is")),
        # 100: the answer word, a colon, then a delimited label; the last such match wins
        ("Answer: B\nAnswer: D", ("D", "answer_colon")),
        # "**" between the word and the colon: no "answer\s?:" but the answer word (150)
        ("**Answer**: **C**", ("C", "answer")),
        # 150: the answer word without a colon
        ("the answer is (D).", ("D", "answer")),
        # 200: a label at the start of the text (before 210: the line start)
        ("A. yes\nB.", ("A", "text_start")),
        # 210: a label right after a newline (the start has a space: not 200)
        (" A. yes\nB.", ("B", "line_start")),
        # 250: a delimited label anywhere (unanchored only); the last match
        ("between B and C, say", ("C", "delimited")),
        # 300: a bare label, even inside a word: the last capital A-D of "CAB"
        ("see CAB", ("B", "bare")),
        # E is no label of four choices, but the bare pattern finds the A of "Answer"
        ("Answer: E", ("A", "bare")),
        # lower case is no label
        ("answer: b", (None, "none")),
        ("", (None, "none")),
        (None, (None, None)),
    ],
)
def test_cascade_hand_cases(text, expected):
    assert run(GPQA, [text]) == [expected]


def test_anchored_config_has_no_unanchored_rules():
    assert run(ANCHORED, ["between B and C, say", "see CAB", "A. yes", "Answer: E"]) == [
        (None, "none"), (None, "none"), ("A", "text_start"), (None, "none"),
    ]


def test_python_whitespace_case_folding_and_end_of_text():
    texts = [
        # \x1c is Python whitespace (not Rust's): "\s?:" reads "\x1c:" -> answer_colon
        "Answer\x1c: B",
        # Python's (?i:i) also matches İ (U+0130) and ı (U+0131): "fİnal answer ıs" ...
        "fİnal answer is C",
        # ... but "is" after the lazy part is case-sensitive: "final answer İS" is not 50
        "final answer İS C",
        # Python's $ also matches before a final newline, not before two
        "Answer: B\n",
        "Answer: B\n\n",
    ]
    assert run(ANCHORED, texts) == [
        ("B", "answer_colon"),
        ("C", "final_answer_is"),
        ("C", "answer"),
        ("B", "answer_colon"),
        (None, "none"),
    ]


@pytest.mark.slow
def test_case_folded_letters_match_python_on_every_code_point():
    everything = pl.Series(list(all_characters()))
    for letter in sorted(set("final answer is")):
        python = set(re.findall(f"(?i:{re.escape(letter)})", all_characters()))
        rust = set(everything.filter(
            everything.str.contains(f"^{module._folded(letter)}$")
        ).to_list())
        assert rust == python, letter
    assert set(re.findall("(?i:i)", all_characters())) == {"i", "I", "İ", "ı"}


def test_labels_and_patterns():
    assert index_labels("NativeLetters", 4) == ("A", "B", "C", "D")
    assert index_labels("Letters", 30)[-1] == "Z"
    assert index_labels("Numbers", 12)[-3:] == ("10", "11", "12")
    rules = [pattern.rule for pattern in index_patterns(try_extract_without_anchor=True)]
    assert rules[-2:] == ["delimited", "bare"]
    no_final = IndexLiterals(language="xx", final_answer=False)
    assert [p.priority for p in index_patterns(literals=no_final)] == [100, 150, 200, 210]


def test_numbers_prefer_the_longer_label_only_when_delimited():
    numbers = indices_extraction("Numbers", 12, True)
    # "Answer: 12": "1" is tried first but needs a delimiter after it, so "12" is taken;
    # "Answer: 13": no label 13 and no delimited label -> bare labels: "1" then "3", and
    # the match that ends last wins: "3"
    assert run(numbers, ["Answer: 12", "Answer: 13", "Answer: (10)"]) == [
        ("12", "answer_colon"), ("3", "bare"), ("10", "answer_colon"),
    ]


def test_factory_names_caches_and_validates():
    made = indices_extraction("Letters", 5, True)
    assert made is indices_extraction("Letters", 5, True)
    assert made.name == (
        "indices_extraction(prefix='Letters',n_choices=5,try_extract_without_anchor=True)"
    )
    other = IndexLiterals(language="zh", answer="答案", full_stop="。", comma="，",
                          colon="：", sentence_space="", final_answer=False)
    assert indices_extraction(literals=other).name.endswith(",language='zh')")
    assert run(indices_extraction(literals=other), ["答案：B", "答案: (C)。"]) == [
        ("B", "answer_colon"), ("C", "answer_colon"),
    ]
    with pytest.raises(EvalframeError, match="n_choices=0 is invalid"):
        indices_extraction("Letters", 0)
    with pytest.raises(EvalframeError, match="prefix='Roman' is invalid"):
        indices_extraction("Roman", 4)
    assert ENGLISH.answer == "answer"


def test_answer_of_on_generations():
    frame = pl.DataFrame({"gens": [["Answer: B", "no", "(C)"], [], None]})
    got = frame.select(answer_of(pl.col("gens"), "m", "lighteval_letters"))["gens"].to_list()
    assert got == [["B", None, "C"], [], None]
