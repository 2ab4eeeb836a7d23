"""``CommittedReads`` on PostgreSQL: a game, or a token's session, read in
the event loop with no worker thread (issue #28, docs/decisions/0073).

Each is read as the repositories read it, on
:class:`~infra.db.async_reads.AsyncReads`: a game's version, then the
instance's :class:`~infra.db.game_cache.GameCache` when it holds that
version (a copy), else the row, decoded and cached
(:meth:`SqlGameRepository.get <infra.db.repositories.SqlGameRepository.get>`);
a session with its player's name (``by_token_hash``).
"""

from __future__ import annotations

from domain.records import GameRecord, Player, SessionRecord
from infra.db import mappers as m
from infra.db.async_reads import AsyncReads
from infra.db.game_cache import GameCache
from infra.db.repositories import GAME_BY_ID, GAME_VERSION, SESSION_BY_HASH


class AsyncCommittedReads:
    """``domain.ports.CommittedReads`` over async reads and the game cache."""

    def __init__(self, reads: AsyncReads, cache: GameCache | None) -> None:
        self.reads, self._cache = reads, cache

    async def game(self, game_id: str) -> GameRecord | None:
        key = {"id": game_id}
        if self._cache is not None:
            found = await self.reads.first(GAME_VERSION, key)
            if found is None:
                return None
            cached = self._cache.get(game_id, found["version"])
            if cached is not None:
                return cached
        row = await self.reads.first(GAME_BY_ID, key)
        if row is None:
            return None
        game = m.game_from_row(row)
        if self._cache is not None:
            self._cache.put(game.clone())  # committed; the caller changes its own
        return game

    async def session(self, token_hash: str) -> tuple[Player, SessionRecord, str] | None:
        found = await self.reads.first(SESSION_BY_HASH, {"h": token_hash})
        return None if found is None else m.session_found(found)
