"""``CommittedReads`` on PostgreSQL: a game, or a token's session, read in
the event loop with no worker thread (issue #28, docs/decisions/0073).

Each is read on :class:`~infra.db.async_reads.AsyncReads`: a game the instance's
:class:`~infra.db.game_cache.GameCache` holds in one round trip, its version
and its row only when that changed (``GAME_IF_CHANGED``); the cached copy
when it did not; else the row, decoded and cached, as
:meth:`SqlGameRepository.get <infra.db.repositories.SqlGameRepository.get>`
reads it in two (a unit of work's version read is also its check); a
session with its player's name (``by_token_hash``).
"""

from __future__ import annotations

from domain.records import GameRecord, Player, SessionRecord
from infra.db import mappers as m
from infra.db.async_reads import AsyncReads
from infra.db.game_cache import GameCache
from infra.db.repositories import GAME_BY_ID, GAME_IF_CHANGED, SESSION_BY_HASH


class AsyncCommittedReads:
    """``domain.ports.CommittedReads`` over async reads and the game cache."""

    def __init__(self, reads: AsyncReads, cache: GameCache | None) -> None:
        self.reads, self._cache = reads, cache

    async def game(self, game_id: str) -> GameRecord | None:
        cache = self._cache
        if cache is not None and (kept := cache.version_of(game_id)) is not None:
            # one round trip: the version, and the row only if it changed
            row = await self.reads.first(GAME_IF_CHANGED, {"id": game_id, "kept": kept})
            if row is not None and row["version"] == kept:
                cached = cache.get(game_id, kept)
                if cached is not None:
                    return cached
                # the copy was replaced meanwhile by a later one: read the row
                row = await self.reads.first(GAME_BY_ID, {"id": game_id})
        else:
            row = await self.reads.first(GAME_BY_ID, {"id": game_id})
        if row is None:
            return None
        game = m.game_from_row(row)
        if cache is not None:
            cache.put(game.clone())  # committed; the caller changes its own
        return game

    async def session(self, token_hash: str) -> tuple[Player, SessionRecord, str] | None:
        found = await self.reads.first(SESSION_BY_HASH, {"h": token_hash})
        return None if found is None else m.session_found(found)
