"""The turn clock of every recorded change (docs/decisions/0046): after the
rules changed a running game, its clock settles (bank spent, a new wait and
deadline) and the change's ``ActionRequired`` carry the deadline. Every
change of a running game that leaves it waiting ends with the wait's
``ActionRequired`` (a change of seats restates it), and a seat a bot took
over from its player is marked there: its player is offered only to take
it back (docs/decisions/0050)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from domain.clocks import TurnClock, TurnTimedOut, WarnPolicy, settle, stamp
from domain.game.choice import Takeover
from domain.game.engine import awaiting, to_act
from domain.game.events import ActionRequired, Event
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


def takeover_of(game: GameRecord, seat: int) -> Takeover | None:
    """Whether a bot plays ``seat`` for its player, and whether the player
    may take it back (None: a person plays it, or a bot seated as such)."""
    occupant = game.seats[seat]
    if occupant is None or occupant.bot is None or occupant.player_id is None:
        return None
    return Takeover.LEFT if seat in clock_of(game).left else Takeover.RECLAIMABLE


def clocked(
    game: GameRecord,
    events: Sequence[Event],
    cause: Cause | None,
    now: datetime,
    warn: WarnPolicy | None = None,
) -> Sequence[Event]:
    """Settle ``game``'s clock after ``events`` (in place); the events, ended
    with the wait's ``ActionRequired`` if the game still waits (the engine's,
    or the current one restated), each with the new deadline and the mark of
    a seat a bot took over."""
    state = game.state
    if game.status is not GameStatus.RUNNING or state is None:
        return events
    out = list(events)
    if state.outcome is None and not (out and isinstance(out[-1], ActionRequired)):
        wait = awaiting(state)
        if wait is not None:
            out.append(wait)
    timed_out = any(isinstance(e, TurnTimedOut) for e in out)
    waiting = person_to_act(game)
    if state.outcome is not None:
        waiting = None
    game.clock = settle(clock_of(game), game.options, waiting, cause, timed_out, now, warn)
    takeovers = {s: t for s in range(game.seat_count) if (t := takeover_of(game, s)) is not None}
    return stamp(out, game.clock.deadline, takeovers)
