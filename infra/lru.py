"""A bounded map that forgets its least recently used entries: the one LRU
behind the server's caches (games, players, validation results, frames)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class LRU(Generic[K, V]):
    """At most ``size`` entries; safe to share between threads. ``hits``
    counts the lookups that found their key."""

    def __init__(self, size: int) -> None:
        if size < 1:
            raise ValueError("an LRU holds at least one entry")
        self._size = size
        self._entries: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0

    def get(self, key: K) -> V | None:
        with self._lock:
            value = self._entries.get(key)
            if value is not None:
                self._entries.move_to_end(key)
                self.hits += 1
            return value

    def put(self, key: K, value: V, replaces: Callable[[V], bool] | None = None) -> None:
        """Keep ``value`` under ``key``; when ``replaces`` is given, only if it
        says yes of the value kept (decided under the lock, with the put)."""
        with self._lock:
            kept = self._entries.get(key)
            if kept is not None and replaces is not None and not replaces(kept):
                return
            self._entries[key] = value
            self._entries.move_to_end(key)
            if len(self._entries) > self._size:
                self._entries.popitem(last=False)

    def pop(self, key: K) -> None:
        """Forget ``key``, if kept."""
        with self._lock:
            self._entries.pop(key, None)

    def __len__(self) -> int:
        return len(self._entries)
