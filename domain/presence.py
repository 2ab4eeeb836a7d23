"""Seat presence (issue #15 part 4, docs/decisions/0047): whether a seated
player has a live subscription to their game, announced with a grace
period. Ephemeral: never in the game's event log, no ``seq``."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True, slots=True)
class Mark:
    """The last presence announced for a player of a game, shared by every
    instance: ``connected`` as announced; ``away_since`` set while an
    announced-connected player has no live subscription (the grace runs)."""

    connected: bool
    away_since: datetime | None = None


@dataclass(frozen=True, slots=True)
class PresenceChange:
    """Announced on the game's presence channel: a seat's player connected,
    or stayed away past the grace period."""

    game_id: str
    seat: int
    connected: bool
