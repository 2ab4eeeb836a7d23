"""Cards and the catalogue (R1).

Ids: numbered design ``<house>-<value>`` (R1.2); assignment card
``<house>-house``; prize cards ``<house>-prize-<k>`` (k = 1..3, R1.3); the Rat
card ``rat`` (R1.4). In sealed formats numbered instances carry ``#<n>``
(R1.5).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from functools import cache, lru_cache


class House(Enum):
    """R1.1: the seven houses (also the suits), in canonical order."""

    CRAZY = "crazy"
    STINKY = "stinky"
    SLEEPY = "sleepy"
    HUNGRY = "hungry"
    NEEDY = "needy"
    CURIOUS = "curious"
    SASSY = "sassy"


HOUSES: tuple[House, ...] = tuple(House)
HOUSE_INDEX: dict[House, int] = {h: i for i, h in enumerate(HOUSES)}
COMMON_VALUES = range(1, 30)  # R1.2: 29 commons, 1-29
RARE_VALUES = range(30, 33)  # R1.2: 3 rares, 30-32
PRIZES_PER_HOUSE = 3  # R1.3
RAT_CARD = "rat"  # R1.4
MESSENGER_RATS = 3  # R1.4: hence at most 3 deliveries per trick (R5.2)


@dataclass(frozen=True, slots=True)
class Design:
    """A numbered suit card design (R1.2)."""

    id: str
    house: House
    value: int

    @property
    def rare(self) -> bool:
        return self.value >= RARE_VALUES.start


def design_id(house: House, value: int) -> str:
    return f"{house.value}-{value}"


def assignment_card(house: House) -> str:
    """R1.3: the card that gives a house player its identity."""
    return f"{house.value}-house"


def prize_card(house: House, k: int) -> str:
    """R1.3: prize card k (1..3) of a house."""
    return f"{house.value}-prize-{k}"


@cache
def catalogue() -> tuple[Design, ...]:
    """R1.2: all 224 numbered designs, houses in canonical order, by value."""
    return tuple(
        Design(design_id(h, v), h, v) for h in HOUSES for v in (*COMMON_VALUES, *RARE_VALUES)
    )


COMMON_DESIGNS: tuple[Design, ...] = tuple(d for d in catalogue() if not d.rare)
RARE_DESIGNS: tuple[Design, ...] = tuple(d for d in catalogue() if d.rare)
_BY_ID: dict[str, Design] = {d.id: d for d in catalogue()}
PRIZE_CARDS: tuple[str, ...] = tuple(
    prize_card(h, k) for h in HOUSES for k in range(1, PRIZES_PER_HOUSE + 1)
)
_PRIZE_HOUSE: dict[str, House] = {
    prize_card(h, k): h for h in HOUSES for k in range(1, PRIZES_PER_HOUSE + 1)
}


def design_of(card: str) -> Design:
    """The design of a numbered card instance (``crazy-7`` or ``crazy-7#2``)."""
    base, _, _ = card.partition("#")
    return _BY_ID[base]


@lru_cache(maxsize=8192)
def is_numbered(card: str) -> bool:
    """A numbered card instance id: a design id, with ``#n`` in sealed formats."""
    base, sep, n = card.partition("#")
    return base in _BY_ID and (not sep or (n.isdigit() and n[0] != "0"))


def prize_house(card: str) -> House:
    """R1.3: the house of a prize card."""
    return _PRIZE_HOUSE[card]


def sort_key(card: str) -> tuple[int, int, str]:
    """Canonical order: house (R1.1), then value, then instance id."""
    d = design_of(card)
    return (HOUSE_INDEX[d.house], d.value, card)


def sorted_cards(cards: list[str]) -> list[str]:
    """Cards in canonical order, so that a listing never reveals an order (R11)."""
    return sorted(cards, key=sort_key)
