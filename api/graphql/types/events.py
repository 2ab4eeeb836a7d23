"""Events as the caller may see them (docs/clients.md "Resuming"): the
``GameEvent`` interface and its types (game_event.py, event_kinds.py), a
page of the log, lobby updates."""

from __future__ import annotations

import strawberry

from api.graphql.types.event_kinds import ALL_TYPES, typed
from api.graphql.types.game_event import GameEvent
from domain.records import GameStatus
from domain.records import LobbyUpdate as DomainLobbyUpdate

__all__ = ["ALL_TYPES", "GameEvent", "GameEventPage", "LobbyUpdate", "typed"]


@strawberry.type(
    description="A page of the event log, oldest first. No cache key: a value inside its parent."
)
class GameEventPage:
    events: list[GameEvent] = strawberry.field(description="The events, as you may see them")
    has_more: bool = strawberry.field(description="Whether more events follow")
    last_seq: int = strawberry.field(description="Resume with afterSeq = this")


@strawberry.type(
    description="A lobby change: a game created, filling, started or finished."
    " No cache key: a value inside its parent."
)
class LobbyUpdate:
    game_id: strawberry.ID = strawberry.field(description="The game")
    status: GameStatus = strawberry.field(description="Its status now")
    seat_count: int = strawberry.field(description="Its seats")
    seats_taken: int = strawberry.field(description="Seats taken now")
    version: int = strawberry.field(description="Its version now")

    @classmethod
    def from_domain(cls, u: DomainLobbyUpdate) -> LobbyUpdate:
        return cls(
            game_id=strawberry.ID(u.game_id),
            status=u.status,
            seat_count=u.seat_count,
            seats_taken=u.seats_taken,
            version=u.version,
        )
