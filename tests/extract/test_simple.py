"""boxed, gsm8k_answer, last_number: hand-computed cases (the references' own runs are in
tests/conformance/test_simple_extract_conformance.py)."""

from __future__ import annotations

import polars as pl
import pytest

from evalframe.extract import simple
from evalframe.extract.simple import boxed, gsm8k_answer, last_number
from evalframe.extract.table import EXTRACTION, EXTRACTORS


def run(function, texts):
    out = pl.DataFrame({"t": pl.Series(texts, dtype=pl.String)}).select(function("t"))
    assert out.to_series().dtype == EXTRACTION
    return [(row["extracted"], row["rule"]) for row in out.to_series().to_list()]


def test_registered():
    for name, function in [("boxed", boxed), ("gsm8k_answer", gsm8k_answer),
                           ("last_number", last_number)]:
        assert EXTRACTORS[name].function is function
        assert EXTRACTORS[name].reference


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # the last box, braces counted: "\boxed{" and the final "}" removed
        ("\\boxed{1} and \\boxed{x^{2}}", ("x^{2}", "boxed")),
        ("\\boxed{\\frac{1}{2}}.", ("\\frac{1}{2}", "boxed")),
        ("\\boxed{}", ("", "boxed")),
        # '\boxed ' anywhere: after the last '\boxed ' up to the first '$', other boxes aside
        ("$\\boxed 5$ then", ("5", "boxed_space")),
        ("\\boxed 7 then \\boxed{8}", ("7 then \\boxed{8}", "boxed_space")),
        ("\\boxed{8} then \\boxed 7$ x", ("7", "boxed_space")),
        ("\\boxed ", ("", "boxed_space")),
        # no \boxed: the last \fbox
        ("\\fbox{3}", ("3", "fbox")),
        ("\\fbox{3} \\boxed{4}", ("4", "boxed")),
        # braces that never balance, a '}' before any '{', a box the reference cannot unwrap
        ("\\boxed{3", (None, "none")),
        ("\\boxed}{{5}}", (None, "none")),
        ("\\boxed\n{5}", (None, "none")),
        ("\\boxedx{5}", (None, "none")),
        # the last \boxed decides even when it does not close (an earlier one would)
        ("\\boxed{a} \\boxed{b", (None, "none")),
        ("no box", (None, "none")),
        ("", (None, "none")),
        (None, (None, None)),
        ("\\boxed{ é ٣ 😀 }", (" é ٣ 😀 ", "boxed")),
        ("\\boxed{a\nb}\r\n", ("a\nb", "boxed")),
    ],
)
def test_boxed(text, expected):
    assert run(boxed, [text]) == [expected]


def test_only_deep_or_unbalanced_boxes_reach_python(monkeypatch):
    seen: list[str] = []
    original = simple._first_balanced

    def spy(tail: str):
        seen.append(tail)
        return original(tail)

    monkeypatch.setattr(simple, "_first_balanced", spy)
    deep = "\\boxed{{{{1}}}} ok"  # nested 4 deep: beyond the regex
    texts = ["plain", "\\boxed{1}", "\\boxed{a{b{c}}}", "also plain", "\\boxed 2", None,
             "x\\fbox{3}", deep, deep, "\\boxed{2", "\\boxed}{{5}}"]
    assert run(boxed, texts) == [
        (None, "none"), ("1", "boxed"), ("a{b{c}}", "boxed"), (None, "none"),
        ("2", "boxed_space"), (None, None), ("3", "fbox"), ("{{{1}}}", "boxed"),
        ("{{{1}}}", "boxed"), (None, "none"), (None, "none"),
    ]
    # once per distinct tail, and only the tails the column-wide regex leaves
    assert sorted(seen) == sorted([deep, "\\boxed{2", "\\boxed}{{5}}"])


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("so #### 1,234", ("1234", "gsm8k_answer")),
        ("#### 5 then #### 6", ("5", "gsm8k_answer")),  # re.search: the first
        ("#### -3.5", ("-3.5", "gsm8k_answer")),
        ("#### 1,000.50", ("1000.50", "gsm8k_answer")),
        ("#### .", (".", "gsm8k_answer")),
        ("##### 8", ("8", "gsm8k_answer")),  # '#### 8' starts at the second '#'
        ("####5", ("[invalid]", "none")),  # one space is required
        ("####  5", ("[invalid]", "none")),
        ("#### ٣", ("[invalid]", "none")),  # ASCII digits only
        ("#### +5", ("[invalid]", "none")),
        ("", ("[invalid]", "none")),
        (None, (None, None)),
    ],
)
def test_gsm8k_answer(text, expected):
    assert run(gsm8k_answer, [text]) == [expected]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1,000 apples or 2.5", ("2.5", "last_number")),
        ("x = -.5.", ("-.5", "last_number")),
        ("(1,2)", ("12", "last_number")),  # commas go before the search
        ("1.2.3", (".3", "last_number")),  # '1.2' then '.3'
        ("3.", ("3", "last_number")),
        ("+5", ("5", "last_number")),
        ("--5", ("-5", "last_number")),
        ("1e5", ("5", "last_number")),
        ("12ки34", ("1234", "last_number")),  # 'ки' removed first, as the reference does
        ("٣ and ٤", ("٤", "last_number")),
        ("7\n", ("7", "last_number")),
        ("no digits", ("", "none")),
        ("", ("", "none")),
        (None, (None, None)),
    ],
)
def test_last_number(text, expected):
    assert run(last_number, [text]) == [expected]


def test_extractors_take_expressions_and_keep_order():
    frame = pl.DataFrame({"t": ["a 1", None, "\\boxed{2}", "#### 3"]})
    upper = frame.select(last_number(pl.col("t").str.to_uppercase()))
    assert [r["extracted"] for r in upper.to_series().to_list()] == ["1", None, "2", "3"]
    backward = frame.reverse().select(boxed("t")).to_series().reverse()
    assert backward.equals(frame.select(boxed("t")).to_series())


def test_gsm8k_answer_agrees_with_the_gsm8k_normaliser():
    from evalframe.normalize import gsm8k_normalize

    texts = ["#### 1,000", "a #### -5 #### 6", "####5", "#### ٣", "", None, "#### ."]
    frame = pl.DataFrame({"t": texts})
    out = frame.select(
        gsm8k_answer("t").struct.field("extracted").alias("extractor"),
        gsm8k_normalize("t").alias("normaliser"),
    )
    assert out["extractor"].to_list() == out["normaliser"].to_list()
