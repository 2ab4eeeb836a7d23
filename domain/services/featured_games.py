"""Use case: the featured games, live public games busiest first (a
spectator's way in, like a site's TV channel; docs/decisions/0067)."""

from __future__ import annotations

from domain.errors import BadRequest
from domain.featured import CANDIDATES, featured
from domain.records import GameSummary
from domain.services.deps import Deps

MAX_FEATURED = 20


async def featured_games(deps: Deps, limit: int) -> list[GameSummary]:
    """At most ``limit`` (1 to 20) live public games, busiest first."""
    if not 1 <= limit <= MAX_FEATURED:
        raise BadRequest(f"first is 1 to {MAX_FEATURED}")

    def tx() -> list[GameSummary]:
        with deps.uow() as uow:
            return featured(uow.games.live(CANDIDATES), deps.clock.now(), limit)

    return await deps.run(tx)
