"""The multiset overlap kernel against collections.Counter, short and long texts."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from evalframe.metrics._token_f1 import overlap_counts


@pytest.mark.parametrize(
    ("max_pred", "max_alt"),
    [(3, 3), (4, 5), (10, 12), (33, 17), (80, 6), (5, 80), (90, 90)],  # every length class
)
def test_overlap_counts_match_counter(max_pred, max_alt):
    rng = np.random.default_rng(max_pred * 100 + max_alt)
    n = 4000
    texts = [rng.integers(0, int(rng.integers(1, 12)), int(rng.integers(1, max_pred + 1)))
             for _ in range(n)]
    texts += [rng.integers(0, 12, int(rng.integers(1, max_alt + 1))) for _ in range(n)]
    for i in range(0, n, 4):  # copies: equal sequences
        texts[n + i] = texts[i].copy()
    for i in range(1, n, 8):  # the same words in another order
        texts[n + i] = texts[i][::-1].copy()
    lengths = np.array([t.size for t in texts])
    starts = np.cumsum(lengths) - lengths
    same, exact = overlap_counts(
        np.concatenate(texts), starts[:n], lengths[:n], starts[n:], lengths[n:]
    )
    expected = [sum((Counter(texts[i].tolist()) & Counter(texts[n + i].tolist())).values())
                for i in range(n)]
    assert same.tolist() == expected
    assert exact.tolist() == [texts[i].tolist() == texts[n + i].tolist() for i in range(n)]


def test_overlap_counts_of_no_pairs():
    empty = np.zeros(0, dtype=np.int64)
    same, exact = overlap_counts(empty, empty, empty, empty, empty)
    assert same.size == 0 and exact.size == 0
