"""Turn clocks (issue #15, docs/decisions/0046): a timed game's deadline,
each seat's bank, timeouts in a row, seats played by a bot, and the events
of these (all public: a clock tells no card).

A *wait* starts when a person's seat must act (lead, play, decision: the
engine's ``ActionRequired``). Its deadline is the start + ``turn_seconds`` +
the seat's bank. The Rat's message window is timed by the lead's deadline:
the window closes with the lead (R5.3), whoever makes it. Messages sent
while a seat waits do not restart its wait; a timeout's fallback answers
the wait, never with a message (docs/decisions/0050). When a wait ends, the time past
``turn_seconds`` is taken from the seat's bank. Pure: the caller gives the
time (one clock: the deciding instance's, see the decision record).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Annotated

from domain.bots.strategy import Strategy
from domain.errors import BadRequest
from domain.game.choice import Takeover
from domain.game.commands import Command, DeclineMessage, DeliverMessage, SendMessage
from domain.game.events import SEAT, ActionRequired, Event
from domain.game.legal import legal_actions
from domain.game.options import GameOptions
from domain.game.state import GameState
from domain.log import SeatCommand

MAX_TURN_SECONDS = 14 * 86_400  # correspondence play: a turn may last days (#25)
MAX_BANK_SECONDS = 14 * 86_400
MAX_TIMEOUTS_TO_TAKEOVER = 10
MESSAGE_COMMANDS = (SendMessage, DeliverMessage, DeclineMessage)
FALLBACK_BOT = Strategy.GREEDY
"""The strategy of a timed-out seat's fallback move (issue #15): at once,
in the timeout's transaction. A seat taken over is then played by
``Deps.takeover_bot`` (EXPERT by default, issue #26)."""


def fallback_moves(state: GameState, seat: int) -> list[Command]:
    """What a timeout may answer for ``seat``: the lead, play or decision its
    wait was for, never a message (docs/decisions/0050). The Rat who misses
    its lead with messages pending delivers none it did not choose: its lead
    closes the window and they expire (R5.3)."""
    return [c for c in legal_actions(state, seat) if not isinstance(c, MESSAGE_COMMANDS)]


@dataclass(frozen=True, slots=True)
class TurnTimedOut(Event):
    """A seat's deadline passed: the server moved for it (GREEDY, from its
    own view only)."""

    seat: Annotated[int, SEAT]


@dataclass(frozen=True, slots=True)
class SeatTakenOver(Event):
    """A bot plays this seat from now on: its player timed out too often in a
    row, or (``left``) left the running game."""

    seat: Annotated[int, SEAT]
    strategy: Annotated[Strategy, "How the bot plays"]
    left: Annotated[bool, "Its player left the running game (for good)"] = False


@dataclass(frozen=True, slots=True)
class SeatReclaimed(Event):
    """The seat's player plays it again (`reclaimSeat`), from the next action."""

    seat: Annotated[int, SEAT]


@dataclass(frozen=True, slots=True)
class DeadlineNear(Event):
    """The wait's deadline is near (a long turn: correspondence play): its
    seat must act by ``deadline`` or the server moves for it."""

    seat: Annotated[int, SEAT]
    deadline: Annotated[datetime, "When the wait times out"]


CLOCK_EVENTS: tuple[type[Event], ...] = (
    TurnTimedOut,
    SeatTakenOver,
    SeatReclaimed,
    DeadlineNear,
)


@dataclass(frozen=True, slots=True)
class WarnPolicy:
    """When a wait's ``DeadlineNear`` comes (issue #25): ``fraction`` of the
    wait or ``lead`` before its deadline, whichever is later; none when that
    is less than ``least`` before (a short turn: its clock is on screen)."""

    fraction: float = 0.1
    lead: timedelta = timedelta(hours=1)
    least: timedelta = timedelta(minutes=1)

    def warn_at(self, started: datetime, deadline: datetime) -> datetime | None:
        ahead = min((deadline - started) * self.fraction, self.lead)
        return None if ahead < self.least else deadline - ahead


"""Events the server logs of seats and clocks (no engine command causes them)."""


@dataclass(frozen=True, slots=True)
class TurnClock:
    """A running game's clocks. ``waiting``: the person's seat whose wait
    runs since ``started`` until ``deadline`` (None: no timed wait).
    ``banks``: seconds left per seat; ``timeouts``: timeouts in a row per
    seat; ``left``: seats whose player left the running game."""

    banks: tuple[float, ...]
    timeouts: tuple[int, ...]
    left: tuple[int, ...] = ()
    waiting: int | None = None
    started: datetime | None = None
    deadline: datetime | None = None
    warn_at: datetime | None = None  # the wait's DeadlineNear, until sent (#25)

    @property
    def due_at(self) -> datetime | None:
        """When the sweep must next look at the game: the warning, then the
        deadline (the stored, indexed time)."""
        if self.warn_at is not None and self.deadline is not None:
            return min(self.warn_at, self.deadline)
        return self.deadline

    @classmethod
    def new(cls, seats: int, options: GameOptions) -> TurnClock:
        return cls((float(options.bank_seconds),) * seats, (0,) * seats)

    def due(self, now: datetime) -> bool:
        return self.deadline is not None and self.deadline <= now


def check_time_control(options: GameOptions) -> None:
    """``createGame``'s time control: whole seconds in range; a bank needs a
    turn time (docs/clients.md "Turn clocks and takeovers")."""
    if not 0 <= options.turn_seconds <= MAX_TURN_SECONDS:
        raise BadRequest(f"turnSeconds is 0 (untimed) to {MAX_TURN_SECONDS}")
    if not 0 <= options.bank_seconds <= MAX_BANK_SECONDS:
        raise BadRequest(f"bankSeconds is 0 to {MAX_BANK_SECONDS}")
    if options.bank_seconds and not options.turn_seconds:
        raise BadRequest("bankSeconds needs turnSeconds (a timed game)")
    if not 1 <= options.timeouts_to_takeover <= MAX_TIMEOUTS_TO_TAKEOVER:
        raise BadRequest(f"timeoutsToTakeover is 1 to {MAX_TIMEOUTS_TO_TAKEOVER}")


def _set(values: tuple[float, ...], i: int, value: float) -> tuple[float, ...]:
    return (*values[:i], value, *values[i + 1 :])


def _set_int(values: tuple[int, ...], i: int, value: int) -> tuple[int, ...]:
    return (*values[:i], value, *values[i + 1 :])


def settle(
    clock: TurnClock,
    options: GameOptions,
    waiting_now: int | None,
    cause: object,
    timed_out: bool,
    now: datetime,
    warn: WarnPolicy | None = None,
) -> TurnClock:
    """The clock after a change: ``waiting_now`` is the person's seat that
    must act after it (None: none, or a bot's). A wait goes on through
    message commands and changes the engine did not cause (another seat
    taken over or reclaimed); otherwise the old wait ends (its overtime taken from
    the bank; a seat that acted itself has no timeouts in a row) and a new
    one starts, with a deadline of its own. A timeout always ends the wait
    it fired (docs/decisions/0050)."""
    if not options.timed:
        return clock
    command = cause.command if isinstance(cause, SeatCommand) else None
    if (
        clock.waiting is not None
        and clock.waiting == waiting_now
        and not timed_out
        and (cause is None or isinstance(command, MESSAGE_COMMANDS))
    ):
        return clock  # a message, or another seat taken over or reclaimed
    banks, timeouts = clock.banks, clock.timeouts
    w = clock.waiting
    if w is not None and clock.started is not None:
        over = (now - clock.started).total_seconds() - options.turn_seconds
        banks = _set(banks, w, 0.0 if timed_out else max(0.0, banks[w] - max(0.0, over)))
        if isinstance(cause, SeatCommand) and cause.seat == w and not timed_out:
            timeouts = _set_int(timeouts, w, 0)
    if waiting_now is None:
        return replace(clock, banks=banks, timeouts=timeouts, waiting=None, started=None,
                       deadline=None, warn_at=None)  # fmt: skip
    seconds = options.turn_seconds + banks[waiting_now]
    deadline = now + timedelta(seconds=seconds)
    return replace(
        clock,
        banks=banks,
        timeouts=timeouts,
        waiting=waiting_now,
        started=now,
        deadline=deadline,
        warn_at=None if warn is None else warn.warn_at(now, deadline),
    )


def stamp(
    events: list[Event], deadline: datetime | None, takeovers: Mapping[int, Takeover]
) -> list[Event]:
    """Every ``ActionRequired`` of a change, with the wait's deadline and,
    for a seat a bot took over from its player (``takeovers``: seat ->
    what its player may still do), the mark that its player is offered
    only that (docs/decisions/0050)."""
    if deadline is None and not takeovers:
        return events
    return [
        replace(e, deadline=deadline, taken_over=takeovers.get(e.seat))
        if isinstance(e, ActionRequired)
        else e
        for e in events
    ]


def as_served(event: Event, logged: Event) -> Event:
    """The engine's ``event`` with what the server added to the ``logged``
    one (its deadline, a takeover's mark): a replay, as its projections
    must match the log's (``mmk verify``)."""
    if isinstance(event, ActionRequired) and isinstance(logged, ActionRequired):
        return replace(event, deadline=logged.deadline, taken_over=logged.taken_over)
    return event
