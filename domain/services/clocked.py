"""The turn clock of every recorded change (docs/decisions/0046): after the
rules changed a running game, its clock settles (bank spent, a new wait and
deadline) and the change's ``ActionRequired`` carry the deadline."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from domain.clocks import TurnClock, TurnTimedOut, settle, stamp
from domain.game.engine import to_act
from domain.game.events import Event
from domain.log import Cause
from domain.records import GameRecord, GameStatus


def person_to_act(game: GameRecord) -> int | None:
    """The seat the game waits for, if a person (not a bot) plays it."""
    if game.status is not GameStatus.RUNNING or game.state is None:
        return None
    seat = to_act(game.state)
    if seat is None:
        return None
    occupant = game.seats[seat]
    return None if occupant is None or occupant.is_bot else seat


def clock_of(game: GameRecord) -> TurnClock:
    """The game's clock (a fresh one for a game started before clocks)."""
    if game.clock is None:
        return TurnClock.new(game.seat_count, game.options)
    return game.clock


def clocked(
    game: GameRecord, events: Sequence[Event], cause: Cause | None, now: datetime
) -> Sequence[Event]:
    """Settle ``game``'s clock after ``events`` (in place); the events with
    the new deadline on their ``ActionRequired``."""
    if game.status is not GameStatus.RUNNING or game.state is None:
        return events
    timed_out = any(isinstance(e, TurnTimedOut) for e in events)
    waiting = person_to_act(game)
    if game.state.outcome is not None:
        waiting = None
    game.clock = settle(clock_of(game), game.options, waiting, cause, timed_out, now)
    return stamp(list(events), game.clock.deadline)
