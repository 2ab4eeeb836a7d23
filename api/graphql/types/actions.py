"""What the viewer may do now (docs/clients.md "From a choice to a mutation"): structured choices
(one per kind of command, with its options) and, deprecated, the exact list
of commands in a form a client sends back as is."""

from __future__ import annotations

from typing import Any

import strawberry
from strawberry.scalars import JSON

from api.graphql.types.cards import Card, cards
from domain.game.choice import Choice, ChoiceKind
from domain.game.commands import (
    ChooseNeighbour,
    Command,
    DeclineMessage,
    DeliverMessage,
    DiscardAndPlay,
    GiveCard,
    GiveCards,
    HungryDiscard,
    HungryTake,
    Pass,
    PlayCard,
    PlaySecondCard,
    ReorderTop,
    SendMessage,
)
from domain.game.state import DecisionKind

MUTATION_OF: dict[ChoiceKind, str] = {
    ChoiceKind.PLAY_CARD: "playCard",
    ChoiceKind.PASS: "pass",
    ChoiceKind.DISCARD_AND_PLAY: "discardAndPlay",
    ChoiceKind.SEND_MESSAGE: "sendMessage",
    ChoiceKind.DELIVER_MESSAGE: "deliverMessage",
    ChoiceKind.DECLINE_MESSAGE: "declineMessage",
    ChoiceKind.RECLAIM_SEAT: "reclaimSeat",
}
"""The mutation of each kind; any other (a decision) is ``resolveDecision``."""


@strawberry.type(
    description="One card to one seat (R7.2). No cache key: a value inside its parent."
)
class Gift:
    to: int = strawberry.field(description="The seat given to")
    card: strawberry.ID = strawberry.field(description="The card given")


def mutation_and_arguments(cmd: Command) -> tuple[str, dict[str, Any]]:
    """The mutation to call and its arguments (besides gameId, idempotencyKey
    and expectedVersion), exactly as the schema takes them."""
    if isinstance(cmd, PlayCard):
        return "playCard", {"card": cmd.card}
    if isinstance(cmd, Pass):
        return "pass", {}
    if isinstance(cmd, DiscardAndPlay):
        return "discardAndPlay", {"discard": cmd.discard, "card": cmd.card}
    if isinstance(cmd, DeliverMessage):
        return "deliverMessage", {"messageId": cmd.message_id}
    if isinstance(cmd, DeclineMessage):
        return "declineMessage", {"messageId": cmd.message_id}
    if isinstance(cmd, SendMessage):
        return "sendMessage", {"to": cmd.to, "text": cmd.text}
    decision: dict[str, Any] = {"kind": DecisionKind(cmd.KIND.value).name}
    if isinstance(cmd, PlaySecondCard | HungryDiscard | HungryTake | GiveCard):
        decision["card"] = cmd.card
    elif isinstance(cmd, ChooseNeighbour):
        decision["seat"] = cmd.seat
    elif isinstance(cmd, GiveCards):
        decision["gifts"] = [{"to": g.to, "card": g.card} for g in cmd.gifts]
    elif isinstance(cmd, ReorderTop):
        decision["cards"] = list(cmd.cards)
    return "resolveDecision", {"decision": decision}


@strawberry.type(
    description="One command the viewer may send now, exactly: call ``mutation`` with "
    "``arguments`` (plus gameId). Anything not listed is refused. (Deprecated with "
    "Viewer.legalActions: some decisions list ~190 of these; Viewer.choices is structured.)"
    " No cache key: a value inside its parent."
)
class LegalAction:
    kind: ChoiceKind = strawberry.field(description="What it does")
    mutation: str = strawberry.field(description="The mutation to call")
    arguments: JSON = strawberry.field(description="Its arguments, besides gameId")
    card: strawberry.ID | None = strawberry.field(default=None, description="Its card")
    discard: strawberry.ID | None = strawberry.field(default=None, description="Its discard")
    seat: int | None = strawberry.field(default=None, description="Its seat")
    cards: list[strawberry.ID] | None = strawberry.field(default=None, description="Its cards")
    gifts: list[Gift] | None = strawberry.field(default=None, description="Its gifts")
    message_id: strawberry.ID | None = strawberry.field(default=None, description="Its message")

    @classmethod
    def from_domain(cls, cmd: Command) -> LegalAction:
        mutation, args = mutation_and_arguments(cmd)
        out = cls(kind=cmd.KIND, mutation=mutation, arguments=JSON(args))
        card = getattr(cmd, "card", None)
        out.card = strawberry.ID(card) if isinstance(card, str) else None
        discard = getattr(cmd, "discard", None)
        out.discard = strawberry.ID(discard) if isinstance(discard, str) else None
        if isinstance(cmd, ChooseNeighbour):
            out.seat = cmd.seat
        if isinstance(cmd, ReorderTop):
            out.cards = [strawberry.ID(c) for c in cmd.cards]
        if isinstance(cmd, GiveCards):
            out.gifts = [Gift(to=g.to, card=strawberry.ID(g.card)) for g in cmd.gifts]
        if isinstance(cmd, DeliverMessage | DeclineMessage):
            out.message_id = strawberry.ID(cmd.message_id)
        return out


@strawberry.type(
    description="R7.2: a neighbour, and the cards it may be given."
    " No cache key: a value inside its parent."
)
class GiftOption:
    to: int = strawberry.field(description="The neighbour's seat")
    cards: list[Card] = strawberry.field(description="The cards it may be given")


@strawberry.type(
    description="One kind of command the viewer may send now, with its options, never a "
    "cross product; the server checks exactly what is sent. ``cards``: the card to name "
    "(for DISCARD_AND_PLAY the card to play; for CURIOUS_ORDER all of them, in any order); "
    "``discards``: DISCARD_AND_PLAY's card to discard (another than the one played); "
    "``seats``: NEEDY_NEIGHBOUR's neighbour or SEND_MESSAGE's recipient; ``gifts`` and "
    "``giftCount``: STINKY_GIFTS gives giftCount distinct cards, one to each of that many "
    "listed neighbours; ``messageIds``: the message to deliver or decline."
    " No cache key: a value inside its parent."
)
class ActionChoice:
    kind: ChoiceKind = strawberry.field(description="What it does")
    cards: list[Card] = strawberry.field(description="Cards to choose from (see the type)")
    discards: list[Card] = strawberry.field(description="DISCARD_AND_PLAY: cards to discard")
    seats: list[int] = strawberry.field(description="Seats to choose from")
    gifts: list[GiftOption] = strawberry.field(description="STINKY_GIFTS: per neighbour")
    gift_count: int = strawberry.field(description="STINKY_GIFTS: how many gifts to give")
    message_ids: list[strawberry.ID] = strawberry.field(description="Messages to choose from")

    @strawberry.field(description="The mutation to call (decisions: resolveDecision)")
    def mutation(self) -> str:
        return MUTATION_OF.get(self.kind, "resolveDecision")

    @classmethod
    def from_domain(cls, c: Choice) -> ActionChoice:
        return cls(
            kind=c.kind,
            cards=cards(c.cards),
            discards=cards(c.discards),
            seats=list(c.seats),
            gifts=[GiftOption(to=g.to, cards=cards(g.cards)) for g in c.gifts],
            gift_count=c.gift_count,
            message_ids=[strawberry.ID(i) for i in c.message_ids],
        )
