"""Events as the caller may see them (API.md "Events and resuming")."""

from __future__ import annotations

from datetime import datetime

import strawberry
from strawberry.scalars import JSON

from domain.records import GameStatus
from domain.services.results import EventView


@strawberry.type(description="One event of a game, in the caller's projection (R11).")
class GameEvent:
    """Plain data only (no resolver reads the caller): a subscription frame of
    an event depends on its audience and the selection alone, so
    :mod:`api.graphql.frames` builds it once per audience (``frame_key``)."""

    game_id: strawberry.ID
    seq: int
    type: str
    at: datetime
    data: JSON
    frame_key: strawberry.Private[tuple[str, int] | None] = None

    @classmethod
    def from_domain(cls, e: EventView) -> GameEvent:
        return cls(
            game_id=strawberry.ID(e.game_id),
            seq=e.seq,
            type=e.type,
            at=datetime.fromisoformat(e.at),
            data=JSON(e.data),
            frame_key=None if e.audience is None else (e.audience, e.seq),
        )


@strawberry.type(description="A page of the event log, oldest first.")
class GameEventPage:
    events: list[GameEvent]
    has_more: bool
    last_seq: int = strawberry.field(description="Resume with afterSeq = this")


@strawberry.type(description="A lobby change: a game created, filling, started or finished.")
class LobbyUpdate:
    game_id: strawberry.ID
    status: GameStatus
    seat_count: int
    seats_taken: int
    version: int
