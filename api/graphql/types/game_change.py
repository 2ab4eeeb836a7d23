"""What a game mutation returns: the change made, or why nothing was."""

from __future__ import annotations

from typing import Annotated

import strawberry

from api.graphql.context import Info
from api.graphql.types.events import GameEvent, typed
from api.graphql.types.game import Game
from api.graphql.types.keys import key
from api.graphql.types.refusal import Refusal
from domain.records import MutationResult
from domain.services import queries


@strawberry.type(
    description="A change made: the game's new version, the events as you see them, and the "
    "game after it. Cache key: `id`; only the caller who made the change gets it (a repeat "
    "with the same `idempotencyKey` gets the same)."
)
class GameChange:
    id: strawberry.ID = strawberry.field(
        description="`<gameId>:<version>`: each accepted change makes one version"
    )
    version: int = strawberry.field(description="The game's version after the change")
    game_id: strawberry.ID = strawberry.field(description="The game changed")
    result: strawberry.Private[MutationResult]

    @strawberry.field(description="The events of this change, as you see them")
    def events(self) -> list[GameEvent]:
        return [typed(e) for e in self.result.events]

    @strawberry.field(description="The game as it is now, as you may see it")
    async def game(self, info: Info) -> Game:
        player = await info.context.player()
        snap = await queries.get_game(
            info.context.deps, self.game_id, player.id if player else None, changed_to=self.version
        )
        return Game.from_domain(snap)

    @classmethod
    def from_domain(cls, r: MutationResult) -> GameChange:
        return cls(
            id=key(r.game_id, r.version),
            version=r.version,
            game_id=strawberry.ID(r.game_id),
            result=r,
        )


GameChangeResult = Annotated[
    GameChange | Refusal,
    strawberry.union("GameChangeResult", description="The change made, or why nothing was."),
]
