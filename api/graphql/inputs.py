"""Input types, and their checks into domain values (bad input is BAD_INPUT)."""

from __future__ import annotations

from collections.abc import Callable

import strawberry

from domain.errors import BadRequest
from domain.game.cards import Card
from domain.game.commands import (
    ChooseNeighbour,
    Command,
    Gift,
    GiveCard,
    GiveCards,
    HungryDiscard,
    HungryTake,
    PlaySecondCard,
    ReorderTop,
)
from domain.game.options import AbilityTrigger, Format, GameOptions
from domain.game.state import DecisionKind
from domain.records import Visibility
from domain.services.games import NewGame

MAX_KEY = 200
MAX_SEED = 100


@strawberry.input(description="A new game's lobby settings (R2-R4, R7.0, R8.3).")
class CreateGameInput:
    seat_count: int = strawberry.field(description="3 to 8 seats: the Rat and 2 to 7 houses")
    format: Format = strawberry.field(
        default=Format.SINGLETON, description="Where the deck comes from (R3)"
    )
    ability_trigger: AbilityTrigger = strawberry.field(
        default=AbilityTrigger.LEAD_AND_RARE,
        description="Which plays trigger their house's ability (R7.0)",
    )
    refill_hands: bool = strawberry.field(
        default=True, description="Seats draw back up to 10 cards after each trick (R8.3)"
    )
    seed: str | None = strawberry.field(
        default=None,
        description="Drawn by the server, secret until the game ends, when absent (R3.5); "
        "a chosen seed needs `practice: true` (else BAD_INPUT)",
    )
    rat_seat: int | None = strawberry.field(default=None, description="Random when absent")
    take_seat: bool = strawberry.field(default=True, description="The host sits at seat 0")
    practice: bool = strawberry.field(
        default=False,
        description="A practice (reproducible) game, marked so to everyone: the only kind "
        "whose seed the host may choose; its bots replay from the seed",
    )
    turn_seconds: int = strawberry.field(
        default=0,
        description="Seconds per action (lead, play, decision), up to 14 days (1209600: "
        "correspondence play); 0: untimed. A seat whose deadline passes is moved for "
        "(`TurnTimedOut`; docs/decisions/0046)",
    )
    bank_seconds: int = strawberry.field(
        default=0,
        description="Each seat's extra seconds, spent once the turn time is over (up to 14 days)",
    )
    timeouts_to_takeover: int = strawberry.field(
        default=2, description="Timeouts in a row (1 to 10) after which a bot plays the seat"
    )

    rated: bool = strawberry.field(
        default=False,
        description="A rated game (docs/ratings.md): its end changes its seats' ratings "
        "(`GameEnded.ratings`); the server deals it (no seed, not practice) and it starts with "
        "at least two people seated",
    )
    visibility: Visibility = strawberry.field(
        default=Visibility.PUBLIC,
        description="PUBLIC: listed, anyone sits; UNLISTED and PRIVATE: in no listing, seats "
        "by invitation or invite code, and a PRIVATE game unseen by anyone else "
        "(docs/decisions/0062). Fixed at creation",
    )

    def to_domain(self) -> NewGame:
        if self.seed is not None and not 1 <= len(self.seed) <= MAX_SEED:
            raise BadRequest(f"a seed has 1 to {MAX_SEED} characters")
        return NewGame(
            self.seat_count,
            GameOptions(
                self.format,
                self.ability_trigger,
                self.refill_hands,
                self.turn_seconds,
                self.bank_seconds,
                self.timeouts_to_takeover,
            ),
            self.seed,
            self.rat_seat,
            self.take_seat,
            self.practice,
            self.visibility,
            self.rated,
        )


@strawberry.input(description="One card to one seat (Stinky, R7.2).")
class GiftInput:
    to: int = strawberry.field(description="The neighbour's seat")
    card: strawberry.ID = strawberry.field(description="A card id from your hand")


def card_of(card_id: str) -> Card:
    """The card an id names; an id that names no card is ``BAD_INPUT``."""
    try:
        return Card(str(card_id))
    except ValueError:
        raise BadRequest(f"no card has the id {card_id!r}") from None


_ONE_CARD: dict[DecisionKind, Callable[[Card], Command]] = {
    DecisionKind.CRAZY_SECOND_CARD: PlaySecondCard,
    DecisionKind.HUNGRY_DISCARD: HungryDiscard,
    DecisionKind.HUNGRY_TAKE: HungryTake,
    DecisionKind.NEEDY_GIFT: GiveCard,
}
"""The decisions answered with one card, and their commands."""


@strawberry.input(
    description="The answer to your pending decision: `kind` and the "
    "field it needs (card, cards, seat or gifts)."
)
class DecisionInput:
    kind: DecisionKind = strawberry.field(description="The pending decision's kind")
    card: strawberry.ID | None = strawberry.field(
        default=None,
        description="For CRAZY_SECOND_CARD, HUNGRY_DISCARD, HUNGRY_TAKE and NEEDY_GIFT",
    )
    cards: list[strawberry.ID] | None = strawberry.field(
        default=None, description="For CURIOUS_ORDER: the looked-at cards, new top first"
    )
    seat: int | None = strawberry.field(
        default=None, description="For NEEDY_NEIGHBOUR: the neighbour who must give"
    )
    gifts: list[GiftInput] | None = strawberry.field(
        default=None, description="For STINKY_GIFTS: one card to each neighbour"
    )

    def to_domain(self) -> Command:
        k = self.kind
        if (one_card := _ONE_CARD.get(k)) is not None:
            if self.card is None:
                raise BadRequest(f"{k.name} needs card")
            return one_card(card_of(self.card))
        if k is DecisionKind.NEEDY_NEIGHBOUR:
            if self.seat is None:
                raise BadRequest("NEEDY_NEIGHBOUR needs seat")
            return ChooseNeighbour(self.seat)
        if k is DecisionKind.CURIOUS_ORDER:
            if self.cards is None:
                raise BadRequest("CURIOUS_ORDER needs cards")
            return ReorderTop(tuple(card_of(c) for c in self.cards))
        if self.gifts is None:
            raise BadRequest("STINKY_GIFTS needs gifts")
        return GiveCards(tuple(Gift(g.to, card_of(g.card)) for g in self.gifts))

    def fingerprint(self) -> dict[str, object]:
        return {
            "kind": self.kind.name,
            "card": self.card,
            "cards": self.cards,
            "seat": self.seat,
            "gifts": None if self.gifts is None else [[g.to, g.card] for g in self.gifts],
        }


def check_key(key: str | None) -> None:
    if key is not None and not (1 <= len(key) <= MAX_KEY and key.isprintable()):
        raise BadRequest(f"an idempotency key has 1 to {MAX_KEY} printable characters")


def check_version(version: int | None) -> None:
    if version is not None and version < 0:
        raise BadRequest("expectedVersion is 0 or more")
