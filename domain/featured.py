"""Featured games: the live public games most worth watching, as a TV
channel of the site shows them (docs/decisions/0067)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from domain.records import GameSummary, Occupant

LIVE_FOR = timedelta(minutes=5)
"""A running game that changed within this is live; one idle longer (a
correspondence game between moves, a stalled one) is not featured."""

CANDIDATES = 200
"""The newest running public games looked at: a listing's rows, no state."""


@dataclass(frozen=True, slots=True)
class LiveGame:
    """A running public game's listing, with its people seated (not bots)
    and its last change."""

    summary: GameSummary
    people: int
    changed_at: datetime


def people(seats: Iterable[Occupant | None]) -> int:
    """The people playing: a seat a bot plays (its own, or one it took
    over from a player who left or timed out) does not count."""
    return sum(o is not None and not o.is_bot for o in seats)


def featured(games: Iterable[LiveGame], now: datetime, limit: int) -> list[GameSummary]:
    """The live games, busiest first: most people seated, then rated before
    unrated, then the latest change; the game id breaks a tie, so the
    order is total."""
    live = [g for g in games if now - g.changed_at <= LIVE_FOR]
    live.sort(
        key=lambda g: (-g.people, not g.summary.rated, -g.changed_at.timestamp(), g.summary.id)
    )
    return [g.summary for g in live[:limit]]
