"""A finished game's replay (docs/decisions/0067): each step's event as the
public and each seat saw it, the same event types as the streams'."""

from __future__ import annotations

from datetime import datetime

import strawberry

from api.graphql.types.event_kinds import typed
from api.graphql.types.game_event import GameEvent
from domain.game.events import Event
from domain.log import ExportedEvent, LoggedEvent
from domain.services.game_replay import ReplayPage as DomainReplayPage

NOT_NORMALIZED = (
    "No cache key: one replay holds several audiences' projections of each `seq`, so its "
    "events must not be normalized by `gameId` and `seq` (Apollo: fetch it with "
    '`fetchPolicy: "no-cache"`).'
)


@strawberry.type(
    description=f"One event of a finished game, as every audience saw it. {NOT_NORMALIZED}"
)
class ReplayStep:
    seq: int = strawberry.field(description="The event's place in the game's log")
    at: datetime = strawberry.field(description="When it happened")
    public: GameEvent = strawberry.field(description="The event as a spectator saw it")
    seats: list[GameEvent] = strawberry.field(
        description="The event as each seat saw it, by seat number (R11): a seat's hand and "
        "private cards are in its own"
    )


@strawberry.type(description=f"A page of a finished game's replay, oldest first. {NOT_NORMALIZED}")
class ReplayPage:
    steps: list[ReplayStep] = strawberry.field(description="The steps of this page")
    has_more: bool = strawberry.field(description="Whether more steps follow")
    last_seq: int = strawberry.field(description="Go on with afterSeq = this")
    seat_count: int = strawberry.field(description="The game's seats (R2.1)")

    @classmethod
    def from_domain(cls, page: DomainReplayPage, after_seq: int) -> ReplayPage:
        def event(e: ExportedEvent, seen: Event) -> GameEvent:
            return typed(LoggedEvent(page.game_id, e.seq, e.at, seen))

        steps = [
            ReplayStep(
                seq=e.seq,
                at=e.at,
                public=event(e, e.public),
                seats=[event(e, s) for s in e.seats],
            )
            for e in page.steps
        ]
        return cls(
            steps=steps,
            has_more=page.has_more,
            last_seq=steps[-1].seq if steps else after_seq,
            seat_count=page.seat_count,
        )
