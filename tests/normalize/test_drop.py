"""The DROP normaliser: hand-computed cases (derivations in comments)."""

from __future__ import annotations

import polars as pl
import pytest

from evalframe.normalize import drop_fix_number, drop_is_number, drop_normalize, drop_tokens


def _apply(function, texts):
    return pl.select(function(pl.lit(pl.Series(texts, dtype=pl.String)))).to_series().to_list()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The Cat", "cat"),  # lower, article removed
        ("1,000", "1000.0"),  # not a float; punctuation removed -> '1000' -> str(1000.0)
        ("1_000", "1000.0"),  # float() accepts underscores between digits
        ("1e3", "1000.0"),
        ("١٢", "12.0"),  # Arabic-Indic digits are decimal digits for float()
        (" 12 ", "12.0"),  # one token '', '12', '' -> empties dropped
        ("NaN", "nan"),
        ("Infinity", "inf"),
        ("0.00001", "1e-05"),  # repr switches to exponent below 1e-4
        ("1e16", "1e+16"),
        ("1e15", "1000000000000000.0"),
        ("1.5%", "15.0"),  # '1.5%' is not a float; removing '.', '%' leaves '15'
        ("twenty-one", "twenty one"),  # '-' separates tokens
        ("-5", "5.0"),  # so no number is ever negative
        ("a-an-the", ""),
        ("the\tcat", "cat"),  # \t is not a separator; articles and whitespace fixed inside
        ("5\t6", "5 6"),  # one token, not a number: its words keep their text
        ("it's", "its"),
        ("", ""),
    ],
)
def test_normalize(text, expected):
    assert _apply(drop_normalize, [text]) == [expected]


def test_is_number_is_float_acceptance():
    texts = ["1_000", "1__000", "_1", "1_", "١٢", " 12 ", "\x1c12", "12\u3000", "1e3", "1e",
             ".5", "5.", ".", "nan", "-inf", "+Infinity", "infinit", "0x10", "1j", None]
    # Each by float(): accepted / ValueError.
    expected = [True, False, False, False, True, True, False, True, True, False,
                True, True, False, True, True, True, False, False, False, None]
    assert _apply(drop_is_number, texts) == expected


def test_fix_number_prints_like_repr():
    texts = ["7", "007", "1e-7", "123456789012345678", "0.1", "inf", "abc", None]
    assert _apply(drop_fix_number, texts) == [
        "7.0", "7.0", "1e-07", "1.2345678901234568e+17", "0.1", "inf", "abc", None
    ]


def test_tokens_are_a_set():
    out = pl.select(drop_tokens(pl.lit(pl.Series(["b a b", "", None]))).list.sort())
    assert out.to_series().to_list() == [["a", "b"], [], None]
