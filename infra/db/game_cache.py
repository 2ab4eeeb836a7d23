"""Committed games kept in memory by id and version, behind the game
repository: a read of a game still at the cached version (its version is
always read from the database, so another process's change is never missed)
skips reading and decoding its state."""

from __future__ import annotations

from domain.records import GameRecord
from infra.lru import LRU

DEFAULT_SIZE = 2_048


class GameCache:
    """Committed game records; each is kept as given (its giver no longer
    changes it) and handed out as a copy, so a cached record never changes."""

    def __init__(self, size: int = DEFAULT_SIZE) -> None:
        self._games: LRU[str, GameRecord] = LRU(size)
        self.hits = 0  # copies served

    def get(self, game_id: str, version: int) -> GameRecord | None:
        """A copy of the game, if the cached one is at ``version``."""
        game = self._games.get(game_id)
        if game is None or game.version != version:
            return None
        self.hits += 1
        return game.clone()

    def version_of(self, game_id: str) -> int | None:
        """The version of the game kept, if any (no copy made)."""
        game = self._games.get(game_id)
        return None if game is None else game.version

    def put(self, game: GameRecord) -> None:
        """Only committed records: a rolled-back change must never be served.
        A record older than the one kept (two commits' puts out of order)
        is not kept."""
        self._games.put(game.id, game, replaces=lambda kept: kept.version <= game.version)
