"""Players by token hash, kept in memory for a few seconds: a hit saves the
authentication query on every request. A token rotated or revoked is
forgotten as soon as this instance hears of it (at once on the instance
that did it, a Redis pub/sub hop later on the others); a notice that is
lost leaves its entry at most :data:`TTL` seconds more
(docs/decisions/0041, 0053)."""

from __future__ import annotations

import time
from collections.abc import Callable

from domain.records import Player
from domain.services.auth import token_hash
from infra.lru import LRU

DEFAULT_SIZE = 10_000
TTL = 5.0  # seconds an instance that missed a revocation may still accept the token


def monotonic() -> float:
    """The clock of the TTLs (a seam for tests)."""
    return time.monotonic()


class PlayerCache:
    """Known tokens' players (unknown tokens are never kept), each for ``ttl``.

    ``epoch`` counts what was forgotten: a player read from the database
    while a token was forgotten is not kept (:meth:`put` with the epoch read
    before), so a read that began before a revocation cannot bring its
    token back."""

    def __init__(
        self,
        size: int = DEFAULT_SIZE,
        ttl: float = TTL,
        clock: Callable[[], float] = monotonic,
    ) -> None:
        self._players: LRU[str, tuple[Player, float]] = LRU(size)
        self._ttl, self._clock = ttl, clock
        self.epoch = 0

    def get(self, token: str) -> Player | None:
        found = self._players.get(token_hash(token))
        if found is None or found[1] <= self._clock():
            return None
        return found[0]

    def put(
        self, token: str, player: Player, epoch: int | None = None, for_at_most: float | None = None
    ) -> None:
        """Keep the token's player (for its TTL, or ``for_at_most`` seconds
        if fewer: a JWT's time left); when ``epoch`` is given, only if
        nothing was forgotten since it was read."""
        if epoch is not None and epoch != self.epoch:
            return
        ttl = self._ttl if for_at_most is None else min(self._ttl, for_at_most)
        if ttl > 0:
            self._players.put(token_hash(token), (player, self._clock() + ttl))

    def forget(self, token: str) -> None:
        """The token was rotated or revoked: never serve it again."""
        self.forget_digest(token_hash(token))

    def forget_digest(self, digest: str) -> None:
        """The same, by the token's :func:`token_hash`."""
        self.epoch += 1
        self._players.pop(digest)
