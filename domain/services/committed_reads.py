"""Lone reads of what is committed: one game, or a token's session, read on
its own and written by no one here (issue #28, docs/decisions/0073).
Through ``Deps.committed`` where the adapter has it (PostgreSQL: in the
event loop, no worker thread), else each in a unit of work of its own."""

from __future__ import annotations

from domain.records import GameRecord, Player, SessionRecord
from domain.services.deps import Deps


async def committed_game(deps: Deps, game_id: str) -> GameRecord | None:
    """The game as last committed (the caller's copy), or None."""
    if deps.committed is not None:
        return await deps.committed.game(game_id)

    def tx() -> GameRecord | None:
        with deps.uow() as uow:
            return uow.games.get(game_id)

    return await deps.run(tx)


async def committed_session(deps: Deps, digest: str) -> tuple[Player, SessionRecord, str] | None:
    """The session of the token hashed to ``digest``, its player and its
    stored hash (``PlayerRepository.by_token_hash``), or None."""
    if deps.committed is not None:
        return await deps.committed.session(digest)

    def tx() -> tuple[Player, SessionRecord, str] | None:
        with deps.uow() as uow:
            return uow.players.by_token_hash(digest)

    return await deps.run(tx)
