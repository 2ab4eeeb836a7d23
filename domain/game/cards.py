"""Cards and the catalogue (R1).

Ids: numbered design ``<house>-<value>`` (R1.2); assignment card
``<house>-house``; prize cards ``<house>-prize-<k>`` (k = 1..3, R1.3); the Rat
card ``rat`` (R1.4). In sealed formats numbered instances carry ``#<n>``
(R1.5). A :class:`Card` is such an id, parsed once.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum
from functools import cache, lru_cache
from operator import attrgetter
from typing import Any, NoReturn


class House(Enum):
    """R1.1: the seven houses (also the suits), in canonical order."""

    CRAZY = "crazy"
    STINKY = "stinky"
    SLEEPY = "sleepy"
    HUNGRY = "hungry"
    NEEDY = "needy"
    CURIOUS = "curious"
    SASSY = "sassy"


class CardKind(Enum):
    """R1: what a card is."""

    NUMBERED = "numbered"  # R1.2, R1.5
    PRIZE = "prize"  # R1.3
    ASSIGNMENT = "assignment"  # R1.3
    RAT = "rat"  # R1.4


HOUSES: tuple[House, ...] = tuple(House)
HOUSE_INDEX: dict[House, int] = {h: i for i, h in enumerate(HOUSES)}
COMMON_VALUES = range(1, 30)  # R1.2: 29 commons, 1-29
RARE_VALUES = range(30, 33)  # R1.2: 3 rares, 30-32
PRIZES_PER_HOUSE = 3  # R1.3
RAT_CARD = "rat"  # R1.4
MESSENGER_RATS = 3  # R1.4: hence at most 3 deliveries per trick (R5.2)
_PARSED_KEPT = 8192  # parsed ids kept: a game uses at most a few hundred
_TEXT_BASE = 0x41  # order_text's first two characters: "A" + house index + 1, "A" + value
_TEXT_VALUES = 64  # values it can encode (designs go to 32)


class Card(str):
    """One card: its id, with what the id says parsed once (python-chess's
    ``Move`` is the model): ``Card("crazy-7#2").house is House.CRAZY``.

    A ``Card`` is a ``str`` subclass, so it compares, hashes, sorts and
    serialises as its id, at the speed of a ``str`` (docs/decisions). Build
    one with ``Card(id)``, which refuses an id that names no card
    (``ValueError``). Immutable; ``repr`` is ``Card('crazy-7#2')``.
    """

    kind: CardKind
    house: House | None  # None for the Rat card
    value: int  # R1.2: a numbered card's design value; 0 for the others
    design: str  # a numbered card's design id (``crazy-7``); else the id itself
    order: tuple[int, int, str]  # canonical order: house (R1.1), value, id
    house_index: int  # the house's place in HOUSES (R1.1); -1 for the Rat card
    order_text: str  # ``order`` as one string that sorts the same (see _made)

    def __new__(cls, card_id: str) -> Card:
        return _parse(card_id)

    @property
    def numbered(self) -> bool:
        return self.kind is CardKind.NUMBERED

    @property
    def rare(self) -> bool:
        """R1.2: designs 30-32 are rare."""
        return self.value >= RARE_VALUES.start

    def __repr__(self) -> str:
        return f"Card({str.__repr__(self)})"

    def __setattr__(self, name: str, value: object) -> NoReturn:
        raise AttributeError("a Card is immutable")

    def __delattr__(self, name: str) -> NoReturn:
        raise AttributeError("a Card is immutable")

    def __reduce__(self) -> tuple[Any, ...]:
        return (Card, (str(self),))

    def __copy__(self) -> Card:
        return self

    def __deepcopy__(self, memo: object) -> Card:
        return self


def _made(card_id: str, kind: CardKind, house: House | None, value: int, design: str) -> Card:
    card = str.__new__(Card, card_id)
    index = -1 if house is None else HOUSE_INDEX[house]
    order = (index, value, card_id)
    # ``order`` as a str: a character for the house, one for the value, then
    # the id. Each part has a fixed width and keeps its order, so strings and
    # tuples sort alike, and sorting str keys is several times faster.
    assert 0 <= value < _TEXT_VALUES
    text = f"{chr(_TEXT_BASE + 1 + index)}{chr(_TEXT_BASE + value)}{card_id}"
    attributes = {
        "kind": kind,
        "house": house,
        "value": value,
        "design": design,
        "order": order,
        "house_index": index,
        "order_text": text,
    }
    for name, v in attributes.items():
        object.__setattr__(card, name, v)
    return card


@lru_cache(maxsize=_PARSED_KEPT)
def _parse(card_id: str) -> Card:
    if type(card_id) is Card:
        return card_id
    if not isinstance(card_id, str):
        raise TypeError(f"a card id is a string, not {type(card_id).__name__}")
    base, sep, n = card_id.partition("#")
    design = _DESIGNS.get(base)
    if design is not None:
        if sep and not (n.isascii() and n.isdigit() and n[0] != "0"):
            raise ValueError(f"no card has the id {card_id!r}")
        return _made(card_id, CardKind.NUMBERED, design.house, design.value, base)
    if not sep:
        if (house := _PRIZE_HOUSE.get(card_id)) is not None:
            return _made(card_id, CardKind.PRIZE, house, 0, card_id)
        if (house := _ASSIGNMENT_HOUSE.get(card_id)) is not None:
            return _made(card_id, CardKind.ASSIGNMENT, house, 0, card_id)
        if card_id == RAT_CARD:
            return _made(card_id, CardKind.RAT, None, 0, card_id)
    raise ValueError(f"no card has the id {card_id!r}")


def is_card(card_id: object) -> bool:
    """Whether ``card_id`` is a string that names a card."""
    try:
        Card(card_id)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return False
    return True


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


def assignment_card(house: House) -> Card:
    """R1.3: the card that gives a house player its identity."""
    return Card(f"{house.value}-house")


def prize_card(house: House, k: int) -> Card:
    """R1.3: prize card k (1..3) of a house."""
    return Card(f"{house.value}-prize-{k}")


@cache
def catalogue() -> tuple[Design, ...]:
    """R1.2: all 224 numbered designs, houses in canonical order, by value."""
    return tuple(
        Design(design_id(h, v), h, v) for h in HOUSES for v in (*COMMON_VALUES, *RARE_VALUES)
    )


_DESIGNS: dict[str, Design] = {d.id: d for d in catalogue()}
_PRIZE_HOUSE: dict[str, House] = {
    f"{h.value}-prize-{k}": h for h in HOUSES for k in range(1, PRIZES_PER_HOUSE + 1)
}
_ASSIGNMENT_HOUSE: dict[str, House] = {f"{h.value}-house": h for h in HOUSES}
COMMON_DESIGNS: tuple[Design, ...] = tuple(d for d in catalogue() if not d.rare)
RARE_DESIGNS: tuple[Design, ...] = tuple(d for d in catalogue() if d.rare)
DESIGN_CARDS: tuple[Card, ...] = tuple(Card(d.id) for d in catalogue())
"""R3.1: every design once, as the cards of a Singleton deck, in canonical order."""
PRIZE_CARDS: tuple[Card, ...] = tuple(
    prize_card(h, k) for h in HOUSES for k in range(1, PRIZES_PER_HOUSE + 1)
)
ASSIGNMENT_CARDS: tuple[Card, ...] = tuple(assignment_card(h) for h in HOUSES)
THE_RAT: Card = Card(RAT_CARD)


def is_design(card_id: object) -> bool:
    """Whether ``card_id`` is a numbered design's id (R1.2: no ``#n``)."""
    return isinstance(card_id, str) and card_id in _DESIGNS


def sort_key(card: Card) -> tuple[int, int, str]:
    """Canonical order: house (R1.1), then value, then instance id."""
    return card.order


_ORDER_TEXT = attrgetter("order_text")
_PILES_KEPT = 256  # the hands of a few games at once, and their Rat Decks


def sorted_cards(cards: Iterable[Card]) -> list[Card]:
    """Cards in canonical order, so that a listing never reveals an order (R11).
    (Sorted by ``order_text``, which sorts as :func:`sort_key`.)"""
    return sorted(cards, key=_ORDER_TEXT)


@lru_cache(maxsize=_PILES_KEPT)
def sorted_pile(cards: tuple[Card, ...]) -> tuple[Card, ...]:
    """:func:`sorted_cards` as a tuple, kept for the last piles seen. The
    same pile is listed several times in a row: the seat to act's hand in
    its ActionRequired, its legal actions and its view; a Hungry take's Rat
    Deck (~200 cards) in its event, choice, legal actions and view (R7.4,
    R11). Looking a pile up costs a fraction of sorting it (a tenth for the
    Rat Deck)."""
    return tuple(sorted(cards, key=_ORDER_TEXT))
