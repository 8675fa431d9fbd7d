"""lighteval's helm_normalizer and gsm8k_normalizer as expressions.

Expected values are lighteval's semantics worked by hand (comments), plus a
property test against ``_helm_oracle``: the steps of
``lighteval.metrics.normalizations.helm_normalizer`` written out in plain Python
(lighteval itself is not installed: it pulls torch).
"""

from __future__ import annotations

import contextlib
import re
import string

import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

from evalframe.normalize import gsm8k_normalize, helm_normalize


def _helm_oracle(text: str) -> str:
    """helm_normalizer's documented steps: split on ' ' or '-', then per token lower,
    drop string.punctuation, str(float(t)) when float() accepts it, replace the
    articles by a space with Python's \\b, collapse whitespace; drop empty tokens."""
    punctuation = set(string.punctuation)
    kept = []
    for token in re.split(" |-", text):
        token = "".join(ch for ch in token.lower() if ch not in punctuation)
        with contextlib.suppress(ValueError):
            token = str(float(token))
        token = " ".join(re.sub(r"\b(a|an|the)\b", " ", token).split())
        if token:
            kept.append(token)
    return " ".join(kept).strip()


def _helm(values: list[str | None]) -> list[str | None]:
    series = pl.Series(values, dtype=pl.String)
    return pl.select(helm_normalize(pl.lit(series))).to_series().to_list()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # lower, punctuation removed, article dropped: "the cat!" -> "cat"
        ("The Cat!", "cat"),
        # hyphen splits tokens; '.' is punctuation so "1.5" -> "15" -> str(float) "15.0"
        ("Cat-Food 1.5 kg", "cat food 15.0 kg"),
        # leading zeros: float("007") = 7.0
        ("007", "7.0"),
        # exponent: float("1e3") = 1000.0; Infinity lowered -> float -> "inf"
        ("1E3 Infinity nan", "1000.0 inf nan"),
        # 17 digits: float rounds, repr uses an exponent
        ("12345678901234567", "1.2345678901234568e+16"),
        # Arabic-Indic digits are read by float()
        ("١٢", "12.0"),
        # commas are punctuation: "1,000,000" -> "1000000" -> "1000000.0"
        ("1,000,000", "1000000.0"),
        # only articles/punctuation -> ""
        ("a an the -- !!", ""),
        ("", ""),
        # tab inside a token: float("\t12\n") = 12.0; "x\t12" is not a float -> whitespace fix
        ("\t12\n x\t12", "12.0 x 12"),
        # final sigma: Python lowers the word-final Σ to ς
        ("ΑΣ-Α", "ας α"),
        # İ lowers to i + combining dot above (Python str.lower)
        ("İstanbul", "i̇stanbul"),
        # U+2212 minus is not ASCII punctuation and float() rejects it
        ("−5", "−5"),
    ],
)
def test_helm_normalize_hand_computed(text, expected):
    assert _helm([text]) == [expected]
    assert _helm_oracle(text) == expected


def test_helm_normalize_null_propagates():
    assert _helm(["The A", None]) == ["", None]


_alphabet = st.sampled_from(
    [*"aAnNtThHeE 0123456789-.,!'\t\n\x1c\u00a0\u3000eIifnΣσİ١", "the", "an", "inf", "1e5"]
)


@given(st.lists(st.lists(_alphabet, max_size=12).map("".join), min_size=1, max_size=20))
def test_helm_normalize_matches_lighteval_semantics(texts):
    assert _helm(texts) == [_helm_oracle(text) for text in texts]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # grade-school-math answer line; commas removed
        ("so the answer is\n#### 1,234", "1234"),
        # sign kept, first match wins, dots kept
        ("#### -3.50 then #### 7", "-3.50"),
        # no space after #### -> no match
        ("####5", "[invalid]"),
        ("", "[invalid]"),
        # the class accepts dots only
        ("#### ...", "..."),
    ],
)
def test_gsm8k_normalize_hand_computed(text, expected):
    result = pl.select(gsm8k_normalize(pl.lit(pl.Series([text, None])))).to_series().to_list()
    assert result == [expected, None]
