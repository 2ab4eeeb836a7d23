"""Players by token hash, kept in memory: a player never changes once
created, so a hit saves the authentication query on every request."""

from __future__ import annotations

from domain.records import Player
from domain.services.auth import token_hash
from infra.lru import LRU

DEFAULT_SIZE = 10_000


class PlayerCache:
    """Known tokens' players (unknown tokens are never kept)."""

    def __init__(self, size: int = DEFAULT_SIZE) -> None:
        self._players: LRU[str, Player] = LRU(size)

    def get(self, token: str) -> Player | None:
        return self._players.get(token_hash(token))

    def put(self, token: str, player: Player) -> None:
        self._players.put(token_hash(token), player)
