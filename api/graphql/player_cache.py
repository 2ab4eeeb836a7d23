"""Players by token hash, kept in memory for a few seconds: a hit saves the
authentication query on every request. A token rotated or revoked on this
instance is forgotten at once; on another instance its entry lives at most
:data:`TTL` seconds more (docs/decisions/0041)."""

from __future__ import annotations

import time
from collections.abc import Callable

from domain.records import Player
from domain.services.auth import token_hash
from infra.lru import LRU

DEFAULT_SIZE = 10_000
TTL = 5.0  # seconds another instance may still accept a rotated or revoked token


def monotonic() -> float:
    """The clock of the TTLs (a seam for tests)."""
    return time.monotonic()


class PlayerCache:
    """Known tokens' players (unknown tokens are never kept), each for ``ttl``."""

    def __init__(
        self,
        size: int = DEFAULT_SIZE,
        ttl: float = TTL,
        clock: Callable[[], float] = monotonic,
    ) -> None:
        self._players: LRU[str, tuple[Player, float]] = LRU(size)
        self._ttl, self._clock = ttl, clock

    def get(self, token: str) -> Player | None:
        found = self._players.get(token_hash(token))
        if found is None or found[1] <= self._clock():
            return None
        return found[0]

    def put(self, token: str, player: Player) -> None:
        self._players.put(token_hash(token), (player, self._clock() + self._ttl))

    def forget(self, token: str) -> None:
        """The token was rotated or revoked here: never serve it again."""
        self._players.pop(token_hash(token))
