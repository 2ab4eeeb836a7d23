"""A bounded map whose entries belong to owners, each with a fair share:
the in-process store of automatic persisted queries (infra/persisted_queries.py),
where an owner is the client that registered the entry (issue #22,
docs/decisions/0052).

An owner holds at most ``per_owner`` entries: a new one beyond them takes the
place of that owner's own least recently used entry. When the whole map is
full, a new entry takes the place of the least recently used entry of the
owner holding the most (max-min fairness). So one owner, however many keys
it sends, only ever evicts its own entries, or those of an owner holding
more than it; a plain LRU let 700 registrations from one client push out
everyone else's.

Used from the event loop only (no lock).
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class FairLRU(Generic[K, V]):
    """At most ``size`` entries, at most ``per_owner`` of one owner's."""

    def __init__(self, size: int, per_owner: int) -> None:
        if not 1 <= per_owner <= size:
            raise ValueError("an owner holds at least one entry, and at most all")
        self.size, self.per_owner = size, per_owner
        self._values: dict[K, tuple[V, str]] = {}
        self._held: dict[str, OrderedDict[K, None]] = {}  # by owner, least recent first

    def get(self, key: K) -> V | None:
        """The value, now its owner's most recently used; None if not kept."""
        found = self._values.get(key)
        if found is None:
            return None
        value, owner = found
        self._held[owner].move_to_end(key)
        return value

    def put(self, key: K, value: V, owner: str) -> None:
        """Keep ``value``; a key already kept stays its first owner's."""
        found = self._values.get(key)
        if found is not None:
            self._values[key] = (value, found[1])
            self._held[found[1]].move_to_end(key)
            return
        held = self._held.get(owner)
        if held is not None and len(held) >= self.per_owner:
            self._evict(owner)
        elif len(self._values) >= self.size:
            self._evict(max(self._held, key=lambda o: len(self._held[o])))
        self._values[key] = (value, owner)
        self._held.setdefault(owner, OrderedDict())[key] = None

    def _evict(self, owner: str) -> None:
        """Forget ``owner``'s least recently used entry."""
        held = self._held[owner]
        key, _ = held.popitem(last=False)
        del self._values[key]
        if not held:
            del self._held[owner]

    def held_by(self, owner: str) -> int:
        held = self._held.get(owner)
        return 0 if held is None else len(held)

    def __contains__(self, key: object) -> bool:
        return key in self._values

    def __len__(self) -> int:
        return len(self._values)
