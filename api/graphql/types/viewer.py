"""The caller's own seat (R11): what only that seat may see.

Cache identity: a seat's private state is keyed by its seat
(``<gameId>:<seat>``), never by the game alone, so two audiences' different
content never shares a key."""

from __future__ import annotations

import strawberry

from api.graphql.types.actions import ActionChoice, LegalAction
from api.graphql.types.cards import Card, cards
from api.graphql.types.keys import key
from api.graphql.types.table import MessageRoute
from domain.game.views import MessageView, PlayerView
from domain.services.queries import GameSnapshot


@strawberry.type(
    description="A message this seat may read (R5.4): its sender, its recipient once "
    "delivered, and the Rat. Cache key: `id`."
)
class Message(MessageRoute):
    text: str = strawberry.field(description="What the sender wrote (1 to 280 characters)")

    @classmethod
    def of(cls, game_id: str, m: MessageView) -> Message:
        return cls.from_domain(game_id, m.route, text=m.text)


@strawberry.type(
    description="A card this seat played face down this trick (R7.3). No cache key: a value "
    "inside its `Viewer`."
)
class OwnFaceDownPlay:
    card: Card = strawberry.field(description="The card played face down")
    second_card: Card | None = strawberry.field(
        description="A Crazy second card played face down with it (R7.1)"
    )


@strawberry.type(
    description="The caller's seat: hand, peeks, messages, legal actions. Cache key: `id`, "
    "per seat: whoever holds the seat sees the same."
)
class Viewer:
    """Built on demand from the snapshot: a field not asked for costs nothing
    (a seat's turn query asks for ``choices``, not ~190 legal actions)."""

    game_id: strawberry.Private[str]
    snapshot: strawberry.Private[GameSnapshot]

    @property
    def _view(self) -> PlayerView:
        view = self.snapshot.viewer
        assert view is not None  # Game.viewer makes a Viewer only for a seat
        return view

    @strawberry.field(description="`<gameId>:<seat>`")
    def id(self) -> strawberry.ID:
        return key(self.game_id, self._view.seat)

    @strawberry.field(description="Your seat number")
    def seat(self) -> int:
        return self._view.seat

    @strawberry.field(description="Your hand, in canonical order")
    def hand(self) -> list[Card]:
        return cards(self._view.hand)

    @strawberry.field(description="Your face-down plays of this trick, which only you see (R7.3)")
    def face_down_plays(self) -> list[OwnFaceDownPlay]:
        v = self._view
        trick = v.public.trick
        if trick is None:
            return []
        return [
            OwnFaceDownPlay(
                card=Card.of(p.card), second_card=Card.of(p.second) if p.second else None
            )
            for p in trick.plays
            if p.face_down and p.seat == v.seat and p.card
        ]

    @strawberry.field(
        description="The cards of your pending decision: Curious top cards or the Hungry "
        "deck list, in canonical order (R7.4, R7.6)"
    )
    def decision_cards(self) -> list[Card]:
        return cards(self._view.decision_cards)

    @strawberry.field(description="The messages you may read, oldest first (R5.4)")
    def messages(self) -> list[Message]:
        return [Message.of(self.game_id, m) for m in self._view.messages]

    @strawberry.field(
        description="Seats you may message now (R5.1); empty outside the message window "
        "and while a bot plays your seat",
        deprecation_reason="Use choices (SEND_MESSAGE)",
    )
    def message_targets(self) -> list[int]:
        return list(self.snapshot.message_targets)

    @strawberry.field(
        description="Every command you may send now, exactly (some decisions: ~190 of them); "
        "none while a bot plays your seat",
        deprecation_reason="Use choices: structured, messages included",
    )
    def legal_actions(self) -> list[LegalAction]:
        return [LegalAction.from_domain(c) for c in self.snapshot.legal_actions]

    @strawberry.field(
        description="What you may send now, one choice per kind of command with its options "
        "(messages included); anything else is refused. While a bot plays your seat (it "
        "took it over): only RECLAIM_SEAT, or nothing once you left the game "
        "(docs/decisions/0050)"
    )
    def choices(self) -> list[ActionChoice]:
        return [ActionChoice.from_domain(c) for c in self.snapshot.choices]
