"""Cards (R1)."""

from __future__ import annotations

from enum import Enum

import strawberry

from domain.game.cards import (
    PRIZE_CARDS,
    RAT_CARD,
    Design,
    House,
    catalogue,
    design_of,
    is_numbered,
    prize_house,
)


@strawberry.enum(description="R1: what kind of card an id names.")
class CardKind(Enum):
    NUMBERED = "numbered"
    PRIZE = "prize"
    ASSIGNMENT = "assignment"
    RAT = "rat"


@strawberry.type(description="R1.2: a numbered suit card design.")
class CardDesign:
    id: strawberry.ID
    house: House
    value: int
    rare: bool

    @classmethod
    def from_domain(cls, d: Design) -> CardDesign:
        return cls(id=strawberry.ID(d.id), house=d.house, value=d.value, rare=d.rare)


_PRIZES = frozenset(PRIZE_CARDS)


@strawberry.type(description="A card instance (R1.5); value and rarity for numbered cards.")
class Card:
    id: strawberry.ID
    kind: CardKind
    house: House | None
    value: int | None
    rare: bool

    @classmethod
    def of(cls, card: str) -> Card:
        if is_numbered(card):
            d = design_of(card)
            return cls(
                id=strawberry.ID(card),
                kind=CardKind.NUMBERED,
                house=d.house,
                value=d.value,
                rare=d.rare,
            )
        if card in _PRIZES:
            return cls(
                id=strawberry.ID(card),
                kind=CardKind.PRIZE,
                house=prize_house(card),
                value=None,
                rare=False,
            )
        if card == RAT_CARD:
            return cls(
                id=strawberry.ID(card), kind=CardKind.RAT, house=None, value=None, rare=False
            )
        house = House(card.removesuffix("-house"))
        return cls(
            id=strawberry.ID(card), kind=CardKind.ASSIGNMENT, house=house, value=None, rare=False
        )


def cards(ids: tuple[str, ...] | list[str]) -> list[Card]:
    return [Card.of(c) for c in ids]


def catalogue_designs() -> list[CardDesign]:
    return [CardDesign.from_domain(d) for d in catalogue()]
