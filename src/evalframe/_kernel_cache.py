"""One kind of cache for the objects metrics hand to polars, kept so they can be shared.

Polars' common-subexpression elimination compares the Python functions inside
expressions by identity: two metrics of one request that normalise or extract the same
column share that work only when they hold the *same* function object. Every module that
builds such kernels (or the expressions around them) keeps them in a :class:`KernelCache`,
keyed by the settings they were built for, bounded by a budget and dropping the least
recently used first, so a long-lived process that scores with ever-new settings keeps a
bounded amount.

Every cache is listed in :data:`CACHES` (:func:`clear_all` empties them, for tests).

>>> cache = KernelCache("example", budget=2, listed=False)
>>> first = cache.get_or_build("a", lambda: object())
>>> cache.get_or_build("a", lambda: object()) is first
True
>>> for key in "bc":
...     _ = cache.get_or_build(key, object)
>>> "a" in cache, "c" in cache, len(cache)
(False, True, 2)
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

__all__ = ["CACHES", "KernelCache", "clear_all"]

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

#: Every kernel cache, by name.
CACHES: dict[str, KernelCache] = {}


def _one(key: object) -> int:
    return 1


class KernelCache(Generic[K, V]):
    """Objects built once per key, least recently used dropped first, within ``budget``.

    ``cost`` gives what an entry counts against the budget (1 each by default, so the
    budget is a number of entries; the shared-expression cache counts bytes of its keys).
    An entry that costs more than the whole budget is built but not kept.
    """

    def __init__(
        self,
        name: str,
        budget: int,
        cost: Callable[[K], int] = _one,
        *,
        listed: bool = True,
    ) -> None:
        self.name = name
        self.budget = budget
        self.cost = cost
        self.used = 0
        self._entries: OrderedDict[K, V] = OrderedDict()
        if listed:
            if name in CACHES:
                raise ValueError(f"a kernel cache named {name!r} exists already")
            CACHES[name] = self

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: object) -> bool:
        return key in self._entries

    def get(self, key: K) -> V | None:
        """The entry of ``key`` (now the most recently used), or None."""
        found = self._entries.get(key)
        if found is not None:
            self._entries.move_to_end(key)
        return found

    def put(self, key: K, value: V) -> V:
        """Keep ``value`` for ``key`` unless it alone exceeds the budget; returns it."""
        cost = self.cost(key)
        if cost > self.budget or key in self._entries:
            return value
        while self._entries and self.used + cost > self.budget:
            oldest, _ = self._entries.popitem(last=False)
            self.used -= self.cost(oldest)
        self._entries[key] = value
        self.used += cost
        return value

    def get_or_build(self, key: K, build: Callable[[], V]) -> V:
        """The entry of ``key``, built by ``build()`` and kept the first time."""
        found = self.get(key)
        return found if found is not None else self.put(key, build())

    def clear(self) -> None:
        self._entries.clear()
        self.used = 0


def clear_all() -> None:
    """Empty every listed cache."""
    for cache in CACHES.values():
        cache.clear()
