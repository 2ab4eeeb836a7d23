"""Legal actions in a form a client sends back as is (API.md)."""

from __future__ import annotations

from enum import Enum
from typing import Any

import strawberry
from strawberry.scalars import JSON

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


@strawberry.enum(description="What a legal action does.")
class ActionKind(Enum):
    PLAY_CARD = "PlayCard"
    PASS = "Pass"
    DISCARD_AND_PLAY = "DiscardAndPlay"
    DELIVER_MESSAGE = "DeliverMessage"
    DECLINE_MESSAGE = "DeclineMessage"
    PLAY_SECOND_CARD = "PlaySecondCard"
    GIVE_CARDS = "GiveCards"
    HUNGRY_DISCARD = "HungryDiscard"
    HUNGRY_TAKE = "HungryTake"
    CHOOSE_NEIGHBOUR = "ChooseNeighbour"
    GIVE_CARD = "GiveCard"
    REORDER_TOP = "ReorderTop"


@strawberry.type(description="One card to one seat (R7.2).")
class Gift:
    to: int
    card: strawberry.ID


DECISION_OF: dict[type, DecisionKind] = {
    PlaySecondCard: DecisionKind.CRAZY_SECOND_CARD,
    GiveCards: DecisionKind.STINKY_GIFTS,
    HungryDiscard: DecisionKind.HUNGRY_DISCARD,
    HungryTake: DecisionKind.HUNGRY_TAKE,
    ChooseNeighbour: DecisionKind.NEEDY_NEIGHBOUR,
    GiveCard: DecisionKind.NEEDY_GIFT,
    ReorderTop: DecisionKind.CURIOUS_ORDER,
}


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
    decision: dict[str, Any] = {"kind": DECISION_OF[type(cmd)].name}
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
    description="Something the viewer may do now: call ``mutation`` with "
    "``arguments`` (plus gameId). Anything not listed is refused."
)
class LegalAction:
    kind: ActionKind
    mutation: str
    arguments: JSON
    card: strawberry.ID | None = None
    discard: strawberry.ID | None = None
    seat: int | None = None
    cards: list[strawberry.ID] | None = None
    gifts: list[Gift] | None = None
    message_id: strawberry.ID | None = None

    @classmethod
    def from_domain(cls, cmd: Command) -> LegalAction:
        mutation, args = mutation_and_arguments(cmd)
        out = cls(kind=ActionKind(type(cmd).__name__), mutation=mutation, arguments=JSON(args))
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
