"""The game's seeded random number generator (R3.5).

SplitMix64: its whole state is one 64-bit integer, so it is stored in the game
state and serialised with it, and the same seed gives the same game on every
Python version (``random.Random`` guarantees neither).
"""

from __future__ import annotations

from collections.abc import MutableSequence, Sequence
from typing import TypeVar

T = TypeVar("T")

_MASK = (1 << 64) - 1
_GAMMA = 0x9E3779B97F4A7C15


_LIMITS: dict[int, int] = {}
"""``below``'s rejection bound for each small ``n`` seen (cards, seats, legal actions)."""
_LIMITS_KEPT = 4096


def _limit(n: int) -> int:
    limit = (1 << 64) - ((1 << 64) % n)
    if len(_LIMITS) < _LIMITS_KEPT:
        _LIMITS[n] = limit
    return limit


class Rng:
    """A small deterministic PRNG; ``state`` is its complete state."""

    __slots__ = ("state",)

    def __init__(self, state: int) -> None:
        self.state = state & _MASK

    def next64(self) -> int:
        self.state = (self.state + _GAMMA) & _MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
        return z ^ (z >> 31)

    def below(self, n: int) -> int:
        """A uniform integer in [0, n), without modulo bias. (:meth:`next64`
        inlined, the bound kept per ``n``: every shuffle and bot pick calls it.)"""
        limit = _LIMITS.get(n)
        if limit is None:
            if n <= 0:
                raise ValueError("n must be positive")
            limit = _limit(n)
        while True:
            z = self.state = (self.state + _GAMMA) & _MASK
            z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
            z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
            x = z ^ (z >> 31)
            if x < limit:
                return x % n

    def choice(self, items: Sequence[T]) -> T:
        return items[self.below(len(items))]

    def shuffle(self, items: MutableSequence[T]) -> None:
        """Fisher-Yates, in place: ``j = self.below(i + 1)`` for each ``i``
        from the end, inlined (a deal shuffles ~200 cards)."""
        z = self.state
        for i in range(len(items) - 1, 0, -1):
            n = i + 1
            limit = _LIMITS.get(n) or _limit(n)
            while True:
                s = z = (z + _GAMMA) & _MASK
                s = ((s ^ (s >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
                s = ((s ^ (s >> 27)) * 0x94D049BB133111EB) & _MASK
                x = s ^ (s >> 31)
                if x < limit:
                    break
            j = x % n
            items[i], items[j] = items[j], items[i]
        self.state = z


def seed_state(seed: int | str) -> int:
    """Turn a user seed (int or text) into an initial 64-bit state."""
    if isinstance(seed, int):
        return seed & _MASK
    h = 0xCBF29CE484222325  # FNV-1a over the UTF-8 bytes
    for b in seed.encode():
        h = ((h ^ b) * 0x100000001B3) & _MASK
    return h
