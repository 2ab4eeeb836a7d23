"""Players by token hash, kept in memory: a player never changes once
created, so a hit saves the authentication query on every request."""

from __future__ import annotations

from collections import OrderedDict

from domain.records import Player
from domain.services.auth import token_hash

DEFAULT_SIZE = 10_000


class PlayerCache:
    """A bounded LRU of known tokens (unknown ones are never kept)."""

    def __init__(self, size: int = DEFAULT_SIZE) -> None:
        self._size = size
        self._players: OrderedDict[str, Player] = OrderedDict()

    def get(self, token: str) -> Player | None:
        key = token_hash(token)
        player = self._players.get(key)
        if player is not None:
            self._players.move_to_end(key)
        return player

    def put(self, token: str, player: Player) -> None:
        self._players[token_hash(token)] = player
        if len(self._players) > self._size:
            self._players.popitem(last=False)
