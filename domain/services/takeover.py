"""A seat a bot takes over (docs/decisions/0046), by a timeout or because its
player left the running game: the change to the game's record, shared by
the use cases that cause it."""

from __future__ import annotations

from dataclasses import replace

from domain.bots.strategy import Strategy
from domain.clocks import SeatTakenOver
from domain.game.errors import IllegalAction
from domain.game.events import Event
from domain.records import GameRecord, Occupant
from domain.services.clocked import clock_of


def take_over(game: GameRecord, seat: int, bot: Strategy, left: bool = False) -> SeatTakenOver:
    """A ``bot`` plays ``seat`` from now on; its player keeps the seat."""
    occupant = game.seats[seat]
    assert occupant is not None
    game.seats[seat] = Occupant(occupant.player_id, bot)
    if left:
        clock = clock_of(game)
        game.clock = replace(clock, left=tuple(sorted({*clock.left, seat})))
    return SeatTakenOver(seat, bot, left)


def leave_running(game: GameRecord, player_id: str, bot: Strategy) -> list[Event]:
    """``leaveGame`` while running: the seat goes to a bot at once, for good;
    it still scores and may win (docs/decisions/0046)."""
    seat = game.seat_of(player_id)
    if seat is None:
        raise IllegalAction("you hold no seat in this game")
    if seat in clock_of(game).left:
        raise IllegalAction("you left this game already")
    return [take_over(game, seat, bot, left=True)]
