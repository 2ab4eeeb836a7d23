"""A bounded cache that a flood of one-off keys cannot flush (issue #14):
the parsed documents of the GraphQL API, which an attacker could otherwise
evict with unique query texts, making every client's request a miss.

A new key waits in a small probation LRU. Asked for again there, it moves to
the main part; when the main part is full, it takes the place of the main
part's least recently used entry only if it has been asked for more often
(a simplified TinyLFU admission). Counts halve every ``size`` admissions, so
yesterday's favourites fade. One-off keys only ever churn the probation
part; what clients use keeps its place.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


@dataclass(slots=True)
class _Entry(Generic[V]):
    value: V
    count: int


class AdmissionCache(Generic[K, V]):
    """At most ``size`` kept entries plus ``probation`` new ones; safe to
    share between threads."""

    def __init__(self, size: int, probation: int) -> None:
        if size < 1 or probation < 1:
            raise ValueError("both parts hold at least one entry")
        self._size, self._probation_size = size, probation
        self._main: OrderedDict[K, _Entry[V]] = OrderedDict()
        self._probation: OrderedDict[K, _Entry[V]] = OrderedDict()
        self._admitted = 0
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        with self._lock:
            entry = self._main.get(key)
            if entry is not None:
                entry.count += 1
                self._main.move_to_end(key)
                return entry.value
            entry = self._probation.get(key)
            if entry is None:
                return None
            entry.count += 1
            self._promote(key, entry)
            return entry.value

    def put(self, key: K, value: V) -> None:
        """A new key goes to probation (a kept one gets the new value)."""
        with self._lock:
            kept = self._main.get(key)
            if kept is not None:
                kept.value = value
                return
            entry = self._probation.get(key)
            if entry is not None:
                entry.value = value
                self._probation.move_to_end(key)
                return
            self._probation[key] = _Entry(value, 1)
            if len(self._probation) > self._probation_size:
                self._probation.popitem(last=False)

    def _promote(self, key: K, entry: _Entry[V]) -> None:
        if len(self._main) >= self._size:
            victim_key = next(iter(self._main))
            if entry.count <= self._main[victim_key].count:
                self._probation.move_to_end(key)  # not yet: it stays on probation
                return
            del self._main[victim_key]
        del self._probation[key]
        self._main[key] = entry
        self._admitted += 1
        if self._admitted >= self._size:
            self._admitted = 0
            for kept in self._main.values():
                kept.count //= 2

    def __contains__(self, key: object) -> bool:
        return key in self._main or key in self._probation

    def __len__(self) -> int:
        return len(self._main) + len(self._probation)
