"""Cutting a batch of rows into slices of bounded text size, for kernels' working memory.

A kernel's temporary arrays grow with the text it is given, several times its size
(word ids, offsets, pair tables). Polars hands an elementwise kernel batches of about
100,000 rows on every thread at once, so a kernel that works on a batch in slices of a
few megabytes of text holds a few times that, whatever the batch and however long the
texts are.

Each slice has a fixed cost (a dozen polars calls, some of it holding the GIL, which
the other thread waits for), so the budget is a trade of speed for memory:
:data:`TEXT_SLICE_BYTES` by default, and the smaller :data:`STREAM_SLICE_BYTES` while
a plan streams to a file (:func:`streaming_slices`, used by :func:`evalframe.save`),
where a dump larger than memory goes and the kernels' working memory is most of what
the stream holds. The results are the same with any budget.

>>> import numpy as np
>>> byte_slices(np.array([3, 3, 3, 10, 1]), budget=6)
[(0, 1), (1, 1), (2, 1), (3, 1), (4, 1)]
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np

__all__ = [
    "STREAM_SLICE_BYTES",
    "TEXT_SLICE_BYTES",
    "byte_slices",
    "slice_budget",
    "streaming_slices",
]

#: The text a kernel works on at a time (bytes), by default. On 1M SQuAD rows in
#: memory, 8 MiB slices take 20% less time than 3 MiB ones and keep both cores busier
#: (CPU time 1.7-1.8x the wall time, against 1.55-1.6x).
TEXT_SLICE_BYTES = 8 << 20

#: The text a kernel works on at a time while a plan streams to a file: a SQuAD stream
#: of 1M rows peaks at 1.1-1.15x what polars alone needs at 2 MiB, 1.2-1.28x at 3 MiB
#: and 1.3x at 8 MiB, for 5% more time than at 3 MiB.
STREAM_SLICE_BYTES = 2 << 20

_streams = [0]  # saves streaming now, in any thread
_streams_lock = threading.Lock()


def slice_budget() -> int:
    """The bytes of text of one slice now: smaller while any plan streams to a file.

    >>> slice_budget() == TEXT_SLICE_BYTES
    True
    >>> with streaming_slices():
    ...     slice_budget() == STREAM_SLICE_BYTES
    True
    """
    return STREAM_SLICE_BYTES if _streams[0] else TEXT_SLICE_BYTES


@contextmanager
def streaming_slices() -> Iterator[None]:
    """Kernels cut their batches into :data:`STREAM_SLICE_BYTES` slices within the block.

    The kernels run in polars' threads, not in the caller's, so the setting is the
    process's while any such block runs (a concurrent in-memory query then works in
    smaller slices too, with the same results).
    """
    with _streams_lock:
        _streams[0] += 1
    try:
        yield
    finally:
        with _streams_lock:
            _streams[0] -= 1


def byte_slices(row_bytes: np.ndarray, budget: int | None = None) -> list[tuple[int, int]]:
    """``(offset, length)`` slices of consecutive rows, about ``budget`` bytes each or less.

    Each slice holds at most an equal share of the text, ``total / ceil(total / budget)``
    bytes (so no small slice is left over at the end), and so at most ``budget``; a row
    larger than that is a slice of its own. The slices cover every row, in order; no
    rows give no slices.

    Parameters
    ----------
    row_bytes
        The bytes of text of each row (non-negative integers).
    budget
        The most bytes one slice holds (at least 1); :func:`slice_budget` when None.

    Examples
    --------
    >>> byte_slices(np.array([1, 1, 1]), budget=100)
    [(0, 3)]
    >>> byte_slices(np.array([4, 4, 4, 4]), budget=10)  # two of 8 bytes, not 8 + 4 + 4
    [(0, 2), (2, 2)]
    >>> byte_slices(np.array([], dtype=np.int64))
    []
    """
    if budget is None:
        budget = slice_budget()
    if budget < 1:
        raise ValueError(f"budget must be at least 1 byte, got {budget}")
    sizes = np.asarray(row_bytes, dtype=np.int64)
    if sizes.size == 0:
        return []
    ends = np.cumsum(sizes)
    count = max(1, -(-int(ends[-1]) // budget))
    share = max(1, -(-int(ends[-1]) // count))  # at most budget: the slices' equal share
    slices: list[tuple[int, int]] = []
    start = 0
    while start < sizes.size:
        before = int(ends[start - 1]) if start else 0
        stop = max(int(np.searchsorted(ends, before + share, side="right")), start + 1)
        slices.append((start, stop - start))
        start = stop
    return slices
