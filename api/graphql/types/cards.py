"""Cards (R1)."""

from __future__ import annotations

import strawberry

from domain.game import cards as domain
from domain.game.cards import CardKind, Design, House, catalogue


@strawberry.type(description="R1.2: a numbered suit card design.")
class CardDesign:
    id: strawberry.ID
    house: House
    value: int
    rare: bool

    @classmethod
    def from_domain(cls, d: Design) -> CardDesign:
        return cls(id=strawberry.ID(d.id), house=d.house, value=d.value, rare=d.rare)


@strawberry.type(description="A card instance (R1.5); value and rarity for numbered cards.")
class Card:
    id: strawberry.ID
    kind: CardKind
    house: House | None
    value: int | None
    rare: bool

    @classmethod
    def of(cls, card: domain.Card) -> Card:
        numbered = card.kind is CardKind.NUMBERED
        return cls(
            id=strawberry.ID(card),
            kind=card.kind,
            house=card.house,
            value=card.value if numbered else None,
            rare=card.rare,
        )


def cards(ids: tuple[domain.Card, ...] | list[domain.Card]) -> list[Card]:
    return [Card.of(c) for c in ids]


def catalogue_designs() -> list[CardDesign]:
    return [CardDesign.from_domain(d) for d in catalogue()]
