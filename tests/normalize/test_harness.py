"""harness_normalize and strip against the Python operations lm-eval and lighteval run."""

from __future__ import annotations

import re
import string

import numpy as np
import polars as pl

from evalframe.normalize.harness import harness_normalize, python_regex, strip

TEXTS = ["", " a ", "Hello, World!", "1,234.5", "ΑΣ", "a\x00", "\x1cx\x1d", "\u3000y\u3000",
         "\u200bz", "Straße 42", "“q”", "x\x85"]


def harness_steps(text, *, regexes=(), case=False, punct=False, numbers=False):
    """The steps of lm_eval.api.metrics.exact_match_hf_evaluate on one string."""
    for pattern in regexes:
        text = re.sub(pattern, "", text)
    array = np.asarray([text])
    if case:
        array = np.char.lower(array)
    if punct:
        array = np.char.translate(array, table=str.maketrans("", "", string.punctuation))
    if numbers:
        array = np.char.translate(array, table=str.maketrans("", "", string.digits))
    return str(array[0])


def test_each_option_matches_the_harness_steps():
    frame = pl.DataFrame({"t": TEXTS})
    for case in (False, True):
        for punct in (False, True):
            for numbers in (False, True):
                got = frame.select(
                    harness_normalize("t", ignore_case=case, ignore_punctuation=punct,
                                      ignore_numbers=numbers, regexes_to_ignore=[r"\s+", ","])
                )["t"].to_list()
                want = [harness_steps(t, regexes=[r"\s+", ","], case=case, punct=punct,
                                      numbers=numbers) for t in TEXTS]
                assert got == want


def test_trailing_nul_is_dropped_like_numpy():
    assert pl.select(harness_normalize(pl.lit("a\x00\x00"))).item() == "a"
    assert str(np.asarray(["a\x00\x00"])[0]) == "a"


def test_python_regex_classes():
    assert re.fullmatch(r"\s", "\x1c") and pl.select(
        pl.lit("\x1c").str.contains("^" + python_regex(r"\s") + "$")).item()
    assert not re.fullmatch(r"\w", "\u0301")
    assert not pl.select(pl.lit("\u0301").str.contains(python_regex(r"^\w$"))).item()
    assert pl.select(pl.lit("a,\x1c").str.replace_all(python_regex(r"[\s,]"), "")).item() == "a"


def test_strip_is_python_str_strip():
    frame = pl.DataFrame({"t": [*TEXTS, None]})
    assert frame.select(strip("t"))["t"].to_list() == [t.strip() for t in TEXTS] + [None]
