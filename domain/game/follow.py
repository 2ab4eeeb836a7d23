"""Which cards a seat may play now: follow rules (R6.2, R6.3) and Sassy (R7.7)."""

from __future__ import annotations

from functools import lru_cache

from domain.game.cards import Card, House
from domain.game.state import Trick

# Enum members read on every decision, bound once: Python 3.11 reads ``Phase.LEAD``
# through EnumType's __getattr__ hook, ~70 ns each time (docs/decisions/0037).
_SASSY = House.SASSY


def lead_suit(trick: Trick) -> House | None:
    """R6.2: the house of the lead card, once led."""
    return trick.plays[0].card.house if trick.plays else None


def playable(hand: list[Card], trick: Trick) -> list[Card]:
    """The cards of ``hand`` a PlayCard may name now.

    Leading: any card (R6.2). Under Sassy: only Sassy cards (R7.7; empty when
    the seat holds none, see :func:`sassy_stuck`). Otherwise lead-suit cards if
    any, else any card (R6.3).
    """
    if not trick.plays:
        return list(hand)
    suit = _SASSY if trick.sassy else trick.plays[0].card.house
    matching = [c for c in hand if c.house is suit]
    if matching or trick.sassy:
        return matching
    return list(hand)


def sassy_stuck(hand: list[Card], trick: Trick) -> bool:
    """R7.7: under Sassy with no Sassy card: pass, or discard and play."""
    return bool(trick.plays) and trick.sassy and not playable(hand, trick)


def playable_in_order(hand: tuple[Card, ...], trick: Trick) -> tuple[Card, ...]:
    """:func:`playable` of a hand in canonical order, as a tuple. Kept for
    the last hands seen: the seat to act is asked for its choices (every
    change's ActionRequired), then for its legal actions."""
    if not trick.plays:
        return hand
    return _playable_in_order(hand, trick.plays[0].card, trick.sassy)


_HANDS_KEPT = 256


@lru_cache(maxsize=_HANDS_KEPT)
def _playable_in_order(hand: tuple[Card, ...], lead: Card, sassy: bool) -> tuple[Card, ...]:
    suit = _SASSY if sassy else lead.house
    matching = tuple([c for c in hand if c.house is suit])
    return matching if matching or sassy else hand
