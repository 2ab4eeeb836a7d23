"""Game options (R3 formats, R7.0 ability trigger, R8.3 refill)."""

from __future__ import annotations

from dataclasses import dataclass
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


MIN_SEATS = 3  # R2.1
MAX_SEATS = 8  # R2.1
HAND_SIZE = 10  # R4.2, R8.3


@dataclass(frozen=True, slots=True)
class GameOptions:
    """The rule variants of one game; defaults follow RULES.md. The time
    control (issue #15, docs/decisions/0046): ``turn_seconds`` per action
    (0: untimed), then each seat's ``bank_seconds`` once; a seat that times
    out ``timeouts_to_takeover`` times in a row is played by a bot."""

    format: Format = Format.SINGLETON
    ability_trigger: AbilityTrigger = AbilityTrigger.LEAD_AND_RARE
    refill_hands: bool = True
    turn_seconds: int = 0
    bank_seconds: int = 0
    timeouts_to_takeover: int = 2

    @property
    def timed(self) -> bool:
        return self.turn_seconds > 0
