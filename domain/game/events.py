"""Events: what happened, with one projection per audience (R11).

``public`` is what spectators and every seat without a richer view see;
``private`` maps a seat to its complete projection where R11 lets that seat see
more. Projections are plain JSON-able dicts.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any

Projection = dict[str, Any]


class EventType(Enum):
    """Past-tense names of everything that can happen in a game."""

    GAME_STARTED = "GameStarted"
    TRICK_STARTED = "TrickStarted"
    MESSAGE_SENT = "MessageSent"
    MESSAGE_DELIVERED = "MessageDelivered"
    MESSAGE_DECLINED = "MessageDeclined"
    MESSAGE_EXPIRED = "MessageExpired"
    CARD_PLAYED = "CardPlayed"
    PASSED = "Passed"
    SEAT_SKIPPED = "SeatSkipped"
    CARD_DISCARDED = "CardDiscarded"
    ABILITY_TRIGGERED = "AbilityTriggered"
    DECISION_REQUIRED = "DecisionRequired"
    SECOND_CARD_PLAYED = "SecondCardPlayed"
    CARD_GIVEN = "CardGiven"
    CARD_TAKEN = "CardTaken"
    NEIGHBOUR_CHOSEN = "NeighbourChosen"
    TOP_REORDERED = "TopReordered"
    TRICK_WON = "TrickWon"
    CARDS_DRAWN = "CardsDrawn"
    GAME_ENDED = "GameEnded"


@dataclass(frozen=True, slots=True)
class Event:
    """One event: a type, its public projection, richer per-seat projections."""

    type: EventType
    public: Projection
    private: dict[int, Projection] = field(default_factory=dict)

    def for_seat(self, seat: int | None) -> Projection:
        """The projection a seat (or, with None, a spectator) may see."""
        if seat is None:
            return self.public
        return self.private.get(seat, self.public)
