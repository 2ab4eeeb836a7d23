"""Seat presence as clients see it (docs/decisions/0047): public, ephemeral
(not in the event log: no ``seq``)."""

from __future__ import annotations

import strawberry

from domain.presence import PresenceChange


@strawberry.type(
    description="Whether a seat's player is connected (a live subscription to the game, on "
    "any instance); `false` only after the grace period (MMK_PRESENCE_GRACE). Not an event "
    "of the log: no `seq`. No cache key: a value of the `seatPresence` stream."
)
class PresenceChanged:
    game_id: strawberry.ID = strawberry.field(description="The game")
    seat: int = strawberry.field(description="The seat whose player it is about")
    connected: bool = strawberry.field(description="Whether its player is connected now")

    @classmethod
    def from_domain(cls, c: PresenceChange) -> PresenceChanged:
        return cls(game_id=strawberry.ID(c.game_id), seat=c.seat, connected=c.connected)
