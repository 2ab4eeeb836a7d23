"""A game's event log: each event with its per-game seq, its time, and what
caused it (so the log replays, domain/replay.py)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from domain.game.cards import Card
from domain.game.commands import Command
from domain.game.events import Event


@dataclass(frozen=True, slots=True)
class SeatCommand:
    """The change was a seat's command (people and bots alike)."""

    seat: int
    command: Command


@dataclass(frozen=True, slots=True)
class GameStart:
    """The change was the start: the deal (R4) replays from the seed and, in
    Former Sealed (R3.3), the seats' collections."""

    collections: tuple[tuple[Card, ...], ...] | None


Cause = SeatCommand | GameStart


@dataclass(frozen=True, slots=True)
class LoggedEvent:
    """One event of a game's log: seq 1, 2, 3... per game. ``cause`` is on the
    first event of each change that the engine made, and is never shown to
    a client."""

    game_id: str
    seq: int
    at: datetime
    event: Event
    cause: Cause | None = None

    @property
    def type(self) -> str:
        """The event's kind, by name (``CardPlayed``)."""
        return type(self.event).__name__

    def seen_by(self, seat: int | None) -> LoggedEvent:
        """The event as ``seat`` (None: a spectator) may see it (R11), without
        its cause."""
        seen = self.event.seen_by(seat)
        if seen is self.event and self.cause is None:
            return self
        return LoggedEvent(self.game_id, self.seq, self.at, seen)


@dataclass(frozen=True, slots=True)
class ExportedEvent:
    """One logged event as each audience saw it, with its cause (on the
    first event of each change the engine made)."""

    seq: int
    at: datetime
    public: Event
    seats: tuple[Event, ...]  # seat s's projection (the public one if it has none of its own)
    cause: Cause | None = None

    @classmethod
    def of(cls, logged: LoggedEvent, seat_count: int) -> ExportedEvent:
        """A whole logged event, projected for every audience."""
        e = logged.event
        seats = tuple(e.seen_by(s) for s in range(seat_count))
        return cls(logged.seq, logged.at, e.seen_by(None), seats, logged.cause)
