"""Events as the caller may see them (API.md "Events and resuming")."""

from __future__ import annotations

from datetime import datetime

import strawberry
from strawberry.scalars import JSON

from domain.game.events import Event
from domain.log import LoggedEvent
from domain.records import GameStatus
from domain.records import LobbyUpdate as DomainLobbyUpdate
from infra.codec import event_to_json


@strawberry.type(description="One event of a game, in the caller's projection (R11).")
class GameEvent:
    """No field reads the caller: a subscription frame of an event depends on
    its audience and the selection alone, so :mod:`api.graphql.frames` builds
    it once per audience (``frame_key``); ``data`` is encoded then, not for
    each subscriber."""

    game_id: strawberry.ID
    seq: int
    type: str
    at: datetime
    event: strawberry.Private[Event]
    frame_key: strawberry.Private[tuple[str, int] | None] = None

    @strawberry.field(description="The event's fields, as you may see them")
    def data(self) -> JSON:
        return JSON(event_to_json(self.event))

    @classmethod
    def from_domain(cls, e: LoggedEvent, audience: str | None = None) -> GameEvent:
        """``e`` as an audience sees it; ``audience`` (its channel), when
        given, marks every event of that audience and seq as one frame."""
        return cls(
            game_id=strawberry.ID(e.game_id),
            seq=e.seq,
            type=e.type,
            at=e.at,
            event=e.event,
            frame_key=None if audience is None else (audience, e.seq),
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

    @classmethod
    def from_domain(cls, u: DomainLobbyUpdate) -> LobbyUpdate:
        return cls(
            game_id=strawberry.ID(u.game_id),
            status=u.status,
            seat_count=u.seat_count,
            seats_taken=u.seats_taken,
            version=u.version,
        )
