r"""lighteval's math_normalizer as a polars normaliser: each step by hand.

The reference itself is called in ``tests/conformance/test_math_conformance.py``; here
every expected value is worked out from the steps of lighteval's function.
"""

from __future__ import annotations

import polars as pl
import pytest

from evalframe.normalize.math import math_normalize
from evalframe.normalize.table import resolve_normalizer


def normalized(*texts: str | None) -> list[str | None]:
    frame = pl.DataFrame({"t": list(texts)}, schema={"t": pl.String})
    return frame.select(math_normalize(pl.col("t")))["t"].to_list()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("no box at all", ""),  # step 1: no \boxed -> ''
        ("\\fbox{4}", ""),  # an \fbox is found, but only \boxed{...} is unwrapped
        ("\\boxed{1} then \\boxed{2}", "2"),  # the last box
        ("\\boxed{{a}{b}}", "{a}{b}"),  # braces balanced
        ("\\boxed{unbalanced", ""),  # never closed
        ("\\boxed 5", ""),  # no '}' closes the box
        ("x \\boxed 5{a}", "5{a}"),  # '\boxed ' form (closed by a brace): all after it
        ("\\boxed{\\dfrac{3}{4}}", "\\frac{3}{4}"),  # dfrac -> frac
        ("\\boxed{\\left( 1,2 \\right)}", "(1,2)"),  # \left \right and spaces removed
        ("\\boxed{90^\\circ}", "90"),
        ("\\boxed{\\$5}", "5"),
        ("\\boxed{10\\text{ cm}}", "10"),  # units from '\text{ ' on
        ("\\boxed{10\\text{cm}}", "10\\text{cm}"),  # without the space: kept
        ("\\boxed{50\\%}", "50"),
        ("\\boxed{.5}", "\\frac{1}{2}"),  # '0' prepended, then 0.5 -> \frac{1}{2}
        ("\\boxed{{.5}}", "{0.5}"),  # '{.' -> '{0.'
        ("\\boxed{x = 7}", "7"),  # a left side of <= 2 characters dropped
        ("\\boxed{xyz = 7}", "xyz=7"),  # a longer one kept (spaces still removed)
        ("\\boxed{a=b=c}", "a=b=c"),  # two '=': kept
        ("\\boxed{\\sqrt2}", "\\sqrt{2}"),
        ("\\boxed{\\frac12}", "\\frac{1}{2}"),
        ("\\boxed{\\frac1{72}}", "\\frac{1}{72}"),
        ("\\boxed{\\frac{a}b}", "\\frac{a}b"),  # braced first argument: left alone
        ("\\boxed{2/3}", "\\frac{2}{3}"),
        ("\\boxed{-2/3}", "\\frac{-2}{3}"),
        ("\\boxed{02/3}", "02/3"),  # int('02') prints as '2': not rewritten
        ("\\boxed{-0/3}", "-0/3"),  # int('-0') prints as '0'
        ("\\boxed{2/3/4}", "2/3/4"),
        ("\\boxed{}", ""),
    ],
)
def test_each_step(text, expected):
    assert normalized(text) == [expected]


def test_a_frac_with_one_character_after_it_leaves_the_text_unchanged():
    # _fix_fracs returns its input when a \frac is followed by a single character
    assert normalized("\\boxed{1 + \\frac1}") == ["1+\\frac1"]


@pytest.mark.parametrize("text", ["\\boxed{\\sqrt}", "\\boxed{\\frac}", "\\boxed{\\sqrt\\sqrt2}"])
def test_null_where_lighteval_raises(text):
    assert normalized(text) == [None]


def test_nulls_and_repeated_strings():
    assert normalized(None, "\\boxed{1/2}", None, "\\boxed{1/2}") == [
        None, "\\frac{1}{2}", None, "\\frac{1}{2}",
    ]


def test_in_the_normaliser_table():
    name, function = resolve_normalizer("exact_match", "math")
    assert name == "math" and function is math_normalize
