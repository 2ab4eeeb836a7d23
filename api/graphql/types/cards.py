"""Cards (R1)."""

from __future__ import annotations

import strawberry

from domain.game import cards as domain
from domain.game.cards import CardKind, Design, House, catalogue


@strawberry.type(
    description="R1.2: a numbered suit card design. Cache key: `id` (the same for everyone)."
)
class CardDesign:
    id: strawberry.ID = strawberry.field(description="The design id, `<house>-<value>`: `crazy-7`")
    house: House = strawberry.field(description="Its house, also its suit")
    value: int = strawberry.field(description="1 to 29 for commons, 30 to 32 for rares")
    rare: bool = strawberry.field(description="Whether the value is 30 or more (R1.2)")

    @classmethod
    def from_domain(cls, d: Design) -> CardDesign:
        return cls(id=strawberry.ID(d.id), house=d.house, value=d.value, rare=d.rare)


@strawberry.type(
    description="A card instance (R1.5). Cache key: `id`; every field follows from the id, "
    "so a card looks the same to everyone who may see it."
)
class Card:
    id: strawberry.ID = strawberry.field(
        description="The instance id, what mutations take: the design id (`crazy-7`), with a "
        "suffix in the sealed formats (`crazy-7#2`); `crazy-prize-1`, `crazy-house`, `rat`"
    )
    kind: CardKind = strawberry.field(description="Numbered, prize, assignment or the Rat card")
    house: House | None = strawberry.field(description="Its house (suit); null for the Rat card")
    value: int | None = strawberry.field(description="The number of a numbered card, else null")
    rare: bool = strawberry.field(description="A numbered card valued 30 or more (R1.2)")

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
