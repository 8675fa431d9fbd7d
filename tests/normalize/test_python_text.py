"""Tests for evalframe.normalize._python_text."""

from __future__ import annotations

import polars as pl

from evalframe.normalize._python_text import lower


def test_lower_mixed_ascii_and_disagreeing_rows():
    # Rows with characters polars lower-cases differently (Unicode 16 letters) take
    # Python's str.lower; ASCII rows and other non-ASCII rows keep polars' result.
    texts = ["ABC", "\ua7cbX", "ΟΔΟΣ", None, "\U00010d50", "İ", ""]
    out = pl.select(lower(pl.lit(pl.Series(texts, dtype=pl.String)))).to_series().to_list()
    assert out == [None if t is None else t.lower() for t in texts]


def test_lower_returns_the_same_expression_for_the_same_input():
    # Needed for polars' common-subexpression elimination to share the kernel.
    assert lower(pl.col("x")) is lower(pl.col("x"))
    assert lower(pl.col("x")) is not lower(pl.col("y"))
