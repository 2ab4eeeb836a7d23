"""What each viewer may see (R11): the only way hidden information leaves
the state, besides event projections.

``spectator_view`` carries no hand card, no face-down card, no message text;
``player_view`` adds exactly what R11 gives one seat.
"""

from __future__ import annotations

from dataclasses import dataclass

from domain.game.cards import Card, House, sorted_cards, sorted_pile
from domain.game.errors import BadInput
from domain.game.follow import lead_suit
from domain.game.messaging import message_targets
from domain.game.options import GameOptions
from domain.game.scoring import scores
from domain.game.state import (
    DecisionKind,
    GameState,
    Message,
    MessageStatus,
    Outcome,
    Phase,
    Play,
)


@dataclass(frozen=True, slots=True)
class PlayView:
    """A play; ``card`` / ``second`` are None while face down to this viewer."""

    seat: int
    card: Card | None
    face_down: bool
    second: Card | None
    has_second: bool


@dataclass(frozen=True, slots=True)
class TrickView:
    number: int
    prize: Card
    trump: House
    leader: int
    lead_suit: House | None
    plays: tuple[PlayView, ...]
    passes: tuple[int, ...]
    skipped: tuple[int, ...]
    sleepy: bool
    sassy: bool


@dataclass(frozen=True, slots=True)
class SeatView:
    """Public facts of a seat (R11): hand size only."""

    seat: int
    house: House | None
    is_rat: bool
    hand_size: int
    won: tuple[Card, ...]
    prizes: tuple[Card, ...]
    score: int


@dataclass(frozen=True, slots=True)
class MessageRoute:
    """R5.4: that a message went A to B, and its status, is public."""

    id: str
    trick: int
    sender: int
    recipient: int
    status: MessageStatus


@dataclass(frozen=True, slots=True)
class MessageView:
    """A message this seat may read (R5.4)."""

    route: MessageRoute
    text: str


@dataclass(frozen=True, slots=True)
class PendingView:
    """Who must decide what (public)."""

    kind: DecisionKind
    seat: int
    source: int


@dataclass(frozen=True, slots=True)
class PublicView:
    """Everything every viewer may see (R11)."""

    version: int
    phase: Phase
    options: GameOptions
    seats: tuple[SeatView, ...]
    rat: int
    to_act: int | None
    trick: TrickView | None
    pending: PendingView | None
    rat_deck_size: int
    prize_pool_size: int
    discard: tuple[Card, ...]
    messages: tuple[MessageRoute, ...]
    outcome: Outcome | None


@dataclass(frozen=True, slots=True)
class PlayerView:
    """One seat's view: public facts plus its own hidden information."""

    seat: int
    public: PublicView
    hand: tuple[Card, ...]
    messages: tuple[MessageView, ...]
    decision_cards: tuple[Card, ...]  # Curious top cards / Hungry deck list (R11)
    message_targets: tuple[int, ...]


def _play_view(p: Play, viewer: int | None) -> PlayView:
    shown = not p.face_down or p.seat == viewer
    return PlayView(
        p.seat,
        p.card if shown else None,
        p.face_down,
        p.second if shown else None,
        p.second is not None,
    )


def _house(card: Card) -> House:
    assert card.house is not None  # every card but the Rat belongs to a house
    return card.house


def _route(m: Message) -> MessageRoute:
    return MessageRoute(m.id, m.trick, m.sender, m.recipient, m.status)


def _public(state: GameState, viewer: int | None) -> PublicView:
    t = state.trick
    trick = (
        None
        if t is None
        else TrickView(
            t.number,
            t.prize,
            _house(t.prize),
            t.leader,
            lead_suit(t),
            tuple(_play_view(p, viewer) for p in t.plays),
            tuple(t.passes),
            tuple(t.skipped),
            t.sleepy,
            t.sassy,
        )
    )
    pts = scores(state)
    d = state.pending
    return PublicView(
        version=state.version,
        phase=state.phase,
        options=state.options,
        seats=tuple(
            SeatView(i, s.house, i == state.rat, len(s.hand), tuple(s.won), tuple(s.prizes), pts[i])
            for i, s in enumerate(state.seats)
        ),
        rat=state.rat,
        to_act=None if state.phase is Phase.FINISHED else d.seat if d else state.turn,
        trick=trick,
        pending=PendingView(d.kind, d.seat, d.source) if d else None,
        rat_deck_size=len(state.rat_deck),
        prize_pool_size=len(state.prize_pool),
        discard=tuple(state.discard),
        messages=tuple(_route(m) for m in state.messages),
        outcome=state.outcome,
    )


def spectator_view(state: GameState) -> PublicView:
    """R11: what anyone may see; no hand, face-down card or message text."""
    return _public(state, None)


def _readable(state: GameState, seat: int, m: Message) -> bool:
    """R5.4: sender, Rat, and the recipient once delivered. [decision] A
    pending message is not yet the recipient's to read."""
    if seat in (m.sender, state.rat):
        return True
    return seat == m.recipient and m.status is MessageStatus.DELIVERED


def player_view(state: GameState, seat: int) -> PlayerView:
    """R11: what ``seat`` may see. A number that is not a seat of this game is
    refused (a negative index would otherwise show another seat's hand)."""
    if type(seat) is not int or not 0 <= seat < state.n:
        raise BadInput("not a seat of this game")
    d = state.pending
    cards: tuple[Card, ...] = ()
    if d is not None and d.seat == seat:
        if d.kind is DecisionKind.CURIOUS_ORDER:
            cards = tuple(sorted_cards(d.cards))
        elif d.kind is DecisionKind.HUNGRY_TAKE:
            cards = sorted_pile(tuple(state.rat_deck))
    return PlayerView(
        seat=seat,
        public=_public(state, seat),
        hand=sorted_pile(tuple(state.seats[seat].hand)),
        messages=tuple(
            MessageView(_route(m), m.text) for m in state.messages if _readable(state, seat, m)
        ),
        decision_cards=cards,
        message_targets=tuple(message_targets(state, seat)),
    )
