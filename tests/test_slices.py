"""Cutting batches into slices of bounded text."""

from __future__ import annotations

from itertools import pairwise

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from evalframe._slices import byte_slices


@given(st.lists(st.integers(0, 50), max_size=60), st.integers(1, 80))
def test_slices_cover_every_row_in_order_within_the_budget(sizes, budget):
    slices = byte_slices(np.array(sizes, dtype=np.int64), budget)
    covered = [row for offset, length in slices for row in range(offset, offset + length)]
    assert covered == list(range(len(sizes)))
    total = sum(sizes)
    share = max(1, -(-total // max(1, -(-total // budget))))  # ceil(total / slices needed)
    assert share <= budget
    for offset, length in slices:
        assert length >= 1
        part = sizes[offset : offset + length]
        assert sum(part) <= share or length == 1  # only a lone row may exceed the share
    # greedy: the next row would not have fitted in the slice before it
    for (offset, length), (after, _) in pairwise(slices):
        assert sum(sizes[offset : offset + length]) + sizes[after] > share


def test_rows_without_text_and_a_huge_row():
    assert byte_slices(np.zeros(5, dtype=np.int64), 1) == [(0, 5)]
    huge = byte_slices(np.array([1, 10**9, 1]), 10)
    assert huge[-1] == (2, 1) and sum(length for _, length in huge) == 3
    # equal shares: 4 x 4 bytes with a budget of 10 is 8 + 8, not 8 + 4 + 4
    assert byte_slices(np.array([4, 4, 4, 4]), 10) == [(0, 2), (2, 2)]


def test_a_budget_below_one_byte_is_refused():
    with pytest.raises(ValueError, match="at least 1 byte"):
        byte_slices(np.array([1]), 0)


def test_streaming_slices_lower_the_budget_while_any_block_runs():
    from evalframe._slices import (
        STREAM_SLICE_BYTES,
        TEXT_SLICE_BYTES,
        slice_budget,
        streaming_slices,
    )

    assert STREAM_SLICE_BYTES < TEXT_SLICE_BYTES
    assert slice_budget() == TEXT_SLICE_BYTES
    with streaming_slices():
        with streaming_slices():  # nested (two saves at once)
            assert slice_budget() == STREAM_SLICE_BYTES
        assert slice_budget() == STREAM_SLICE_BYTES
    assert slice_budget() == TEXT_SLICE_BYTES
    with pytest.raises(RuntimeError), streaming_slices():
        raise RuntimeError("a failed save")
    assert slice_budget() == TEXT_SLICE_BYTES


def test_streaming_slices_hold_across_threads():
    """Kernels run in polars' threads: a block in one thread sets the budget for all."""
    import threading

    from evalframe._slices import STREAM_SLICE_BYTES, slice_budget, streaming_slices

    seen = []
    with streaming_slices():
        worker = threading.Thread(target=lambda: seen.append(slice_budget()))
        worker.start()
        worker.join()
    assert seen == [STREAM_SLICE_BYTES]


def test_default_budget_slices_by_the_text_budget():
    from evalframe._slices import TEXT_SLICE_BYTES, streaming_slices

    sizes = np.full(6, TEXT_SLICE_BYTES // 2)
    assert byte_slices(sizes) == [(0, 2), (2, 2), (4, 2)]  # two rows fill a slice
    with streaming_slices():  # a row is more than the streaming budget: one row a slice
        assert byte_slices(sizes) == [(i, 1) for i in range(6)]
