"""The caller's own seat (R11): what only that seat may see."""

from __future__ import annotations

import strawberry

from api.graphql.types.actions import LegalAction
from api.graphql.types.cards import Card, cards
from domain.game.commands import Command
from domain.game.state import MessageStatus
from domain.game.views import MessageView, PlayerView


@strawberry.type(description="A message this seat may read (R5.4).")
class Message:
    id: strawberry.ID
    trick: int
    from_seat: int
    to_seat: int
    status: MessageStatus
    text: str

    @classmethod
    def from_domain(cls, m: MessageView) -> Message:
        r = m.route
        return cls(
            id=strawberry.ID(r.id),
            trick=r.trick,
            from_seat=r.sender,
            to_seat=r.recipient,
            status=r.status,
            text=m.text,
        )


@strawberry.type(description="A card this seat played face down this trick (R7.3).")
class OwnFaceDownPlay:
    card: Card
    second_card: Card | None


@strawberry.type(description="The caller's seat: hand, peeks, messages, legal actions.")
class Viewer:
    seat: int
    hand: list[Card]
    face_down_plays: list[OwnFaceDownPlay]
    decision_cards: list[Card] = strawberry.field(
        description="The cards of your pending decision: Curious top cards or the Hungry "
        "deck list, in canonical order (R7.4, R7.6)"
    )
    messages: list[Message]
    message_targets: list[int] = strawberry.field(
        description="Seats you may message now (R5.1); empty outside the message window"
    )
    legal_actions: list[LegalAction]

    @classmethod
    def from_domain(cls, v: PlayerView, legal: tuple[Command, ...]) -> Viewer:
        trick = v.public.trick
        own = (
            []
            if trick is None
            else [
                OwnFaceDownPlay(
                    card=Card.of(p.card), second_card=Card.of(p.second) if p.second else None
                )
                for p in trick.plays
                if p.face_down and p.seat == v.seat and p.card
            ]
        )
        return cls(
            seat=v.seat,
            hand=cards(v.hand),
            face_down_plays=own,
            decision_cards=cards(v.decision_cards),
            messages=[Message.from_domain(m) for m in v.messages],
            message_targets=list(v.message_targets),
            legal_actions=[LegalAction.from_domain(c) for c in legal],
        )
