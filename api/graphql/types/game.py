"""A game as one caller may see it: lobby facts, the public table, and the
caller's own seat (``viewer``) when seated."""

from __future__ import annotations

from datetime import datetime

import strawberry

from api.graphql.types.table import Table
from api.graphql.types.viewer import Viewer
from domain.bots.strategy import Strategy
from domain.game.options import AbilityTrigger, Format
from domain.game.options import GameOptions as DomainOptions
from domain.records import GameStatus, GameSummary
from domain.services.queries import GameSnapshot, SeatInfo


@strawberry.type(description="Rule variants of a game (R3, R7.0, R8.3).")
class GameOptions:
    format: Format
    ability_trigger: AbilityTrigger
    refill_hands: bool

    @classmethod
    def from_domain(cls, o: DomainOptions) -> GameOptions:
        return cls(format=o.format, ability_trigger=o.ability_trigger, refill_hands=o.refill_hands)


@strawberry.type(description="Who sits in a seat (lobby facts, public).")
class SeatSlot:
    seat: int
    player_id: strawberry.ID | None
    player_name: str | None
    bot: Strategy | None

    @classmethod
    def from_domain(cls, s: SeatInfo) -> SeatSlot:
        return cls(
            seat=s.seat,
            player_id=strawberry.ID(s.player_id) if s.player_id else None,
            player_name=s.name,
            bot=s.bot,
        )


@strawberry.type(description="A game in the lobby listing.")
class GameSummaryType:
    id: strawberry.ID
    status: GameStatus
    host_id: strawberry.ID
    seat_count: int
    seats_taken: int
    options: GameOptions
    version: int
    created_at: datetime

    @classmethod
    def from_domain(cls, g: GameSummary) -> GameSummaryType:
        return cls(
            id=strawberry.ID(g.id),
            status=g.status,
            host_id=strawberry.ID(g.host),
            seat_count=g.seat_count,
            seats_taken=g.seats_taken,
            options=GameOptions.from_domain(g.options),
            version=g.version,
            created_at=g.created_at,
        )


@strawberry.type(
    description="A game: lobby facts, the public table once started, and "
    "``viewer``, the caller's own seat, when seated."
)
class Game:
    id: strawberry.ID
    status: GameStatus
    host_id: strawberry.ID
    seat_count: int
    seats: list[SeatSlot]
    rat_seat: int | None
    options: GameOptions
    version: int = strawberry.field(description="Send as expectedVersion to guard a move")
    last_seq: int = strawberry.field(description="The newest event's seq")
    created_at: datetime
    table: Table | None
    viewer: Viewer | None

    @classmethod
    def from_domain(cls, s: GameSnapshot) -> Game:
        g = s.summary
        viewer = None if s.viewer is None else Viewer.from_domain(s.viewer, s.legal_actions)
        return cls(
            id=strawberry.ID(g.id),
            status=g.status,
            host_id=strawberry.ID(g.host),
            seat_count=g.seat_count,
            seats=[SeatSlot.from_domain(x) for x in s.seats],
            rat_seat=s.rat_seat,
            options=GameOptions.from_domain(g.options),
            version=g.version,
            last_seq=s.last_seq,
            created_at=g.created_at,
            table=Table.from_domain(s.public) if s.public else None,
            viewer=viewer,
        )
