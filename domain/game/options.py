"""Game options (R3 formats, R7.0 ability trigger, R8.3 refill)."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum


class Format(Enum):
    """R3: where the deck comes from."""

    SINGLETON = "singleton"  # R3.1
    SEALED = "sealed"  # R3.2
    FORMER_SEALED = "former_sealed"  # R3.3


class AbilityTrigger(Enum):
    """R7.0: which plays trigger their house's ability."""

    LEAD_AND_RARE = "lead_and_rare"
    LEAD_ONLY = "lead_only"
    EVERY_CARD = "every_card"


class Pace(Enum):
    """Live, or correspondence: a game whose turns may last an hour or more
    (issue #25), played over days between other things, its players told of
    their turns by notifications rather than watching the table."""

    LIVE = "live"
    CORRESPONDENCE = "correspondence"


CORRESPONDENCE_TURN = 3600
"""The shortest turn time of a correspondence game, in seconds."""
CORRESPONDENCE_QUICK_PLAY = (86_400, 2 * 86_400)
"""A correspondence quick-play game's clock: a day a turn, two days of bank."""

MIN_SEATS = 3  # R2.1
MAX_SEATS = 8  # R2.1
HAND_SIZE = 10  # R4.2, R8.3
_SET_ONLY = {"set_only": True, "server": True}
"""As domain.game.events.SET_ONLY (which imports this module); ``server``:
an option of the server's (the time control), not of the rules."""


@dataclass(frozen=True, slots=True)
class GameOptions:
    """The rule variants of one game; defaults follow docs/rules.md. The time
    control (issue #15, docs/decisions/0046): ``turn_seconds`` per action
    (0: untimed), then each seat's ``bank_seconds`` once; a seat that times
    out ``timeouts_to_takeover`` times in a row is played by a bot."""

    format: Format = Format.SINGLETON
    ability_trigger: AbilityTrigger = AbilityTrigger.LEAD_AND_RARE
    refill_hands: bool = True
    # Written only when set (events.SET_ONLY): logs and golden files made
    # before clocks stay as they were.
    turn_seconds: int = field(default=0, metadata=_SET_ONLY)
    bank_seconds: int = field(default=0, metadata=_SET_ONLY)
    timeouts_to_takeover: int = field(default=2, metadata=_SET_ONLY)

    @property
    def timed(self) -> bool:
        return self.turn_seconds > 0

    @property
    def pace(self) -> Pace:
        if self.turn_seconds >= CORRESPONDENCE_TURN:
            return Pace.CORRESPONDENCE
        return Pace.LIVE
