"""What each viewer may see (R11): the only way hidden information leaves
the state, besides event projections.

``spectator_view`` carries no hand card, no face-down card, no message text;
``player_view`` adds exactly what R11 gives one seat. Each copies, when it
is made, what its viewer may see as immutable values; the costly fields are
built from that copy on their first read (:mod:`domain.game.view_types`,
docs/decisions/0037).
"""

from __future__ import annotations

from typing import Any

from domain.game.cards import Card, House, sorted_cards, sorted_pile
from domain.game.errors import BadInput
from domain.game.messaging import message_targets
from domain.game.scoring import pile_score
from domain.game.state import DecisionKind, GameState, MessageStatus, Phase
from domain.game.view_types import MessageRoute as MessageRoute
from domain.game.view_types import MessageView as MessageView
from domain.game.view_types import PendingView as PendingView
from domain.game.view_types import PlayerView as PlayerView
from domain.game.view_types import PlayView as PlayView
from domain.game.view_types import PublicView as PublicView
from domain.game.view_types import SeatView as SeatView
from domain.game.view_types import TrickView as TrickView
from domain.game.view_types import lazy

# Enum members read on every view, bound once (Python 3.11 reads ``Phase.FINISHED``
# through EnumType's __getattr__ hook, ~70 ns each time; docs/decisions/0037).
_FINISHED = Phase.FINISHED
_DELIVERED = MessageStatus.DELIVERED
_CURIOUS_ORDER = DecisionKind.CURIOUS_ORDER
_HUNGRY_TAKE = DecisionKind.HUNGRY_TAKE

_Play = tuple[int, Card, bool, Card | None]  # seat, card, face down, Crazy second card
_Message = tuple[str, int, int, int, MessageStatus, str]  # id, trick, from, to, status, text


class _Seen:
    """What one viewer (a seat, or None: a spectator) may see of a state,
    copied as immutable values when its view is made; :meth:`build` makes a
    :class:`PlayerView` field out of it, :meth:`public` a :class:`PublicView`."""

    __slots__ = (
        "discard",
        "messages",
        "options",
        "outcome",
        "pending",
        "phase",
        "prize_pool_size",
        "rat",
        "rat_deck_size",
        "seats",
        "to_act",
        "trick",
        "version",
        "viewer",
    )

    def __init__(self, state: GameState, viewer: int | None) -> None:
        d, t = state.pending, state.trick
        self.viewer = viewer
        self.version, self.phase, self.options = state.version, state.phase, state.options
        self.rat, self.outcome = state.rat, state.outcome
        self.to_act = None if state.phase is _FINISHED else d.seat if d else state.turn
        self.rat_deck_size, self.prize_pool_size = len(state.rat_deck), len(state.prize_pool)
        self.discard = tuple(state.discard)
        self.seats = tuple(
            [(s.house, len(s.hand), tuple(s.won), tuple(s.prizes)) for s in state.seats]
        )
        self.trick = (
            None
            if t is None
            else (
                t.number,
                t.prize,
                t.leader,
                tuple([(p.seat, p.card, p.face_down, p.second) for p in t.plays]),
                tuple(t.passes),
                tuple(t.skipped),
                t.sleepy,
                t.sassy,
            )
        )
        self.pending = None if d is None else (d.kind, d.seat, d.source)
        self.messages: tuple[_Message, ...] = tuple(
            [(m.id, m.trick, m.sender, m.recipient, m.status, m.text) for m in state.messages]
        )

    def public(self) -> PublicView:
        return lazy(
            PublicView,
            _PublicPart(self),
            version=self.version,
            phase=self.phase,
            options=self.options,
            rat=self.rat,
            to_act=self.to_act,
            rat_deck_size=self.rat_deck_size,
            prize_pool_size=self.prize_pool_size,
            discard=self.discard,
            outcome=self.outcome,
        )

    def build(self, name: str) -> Any:
        """A :class:`PlayerView` field: ``public`` or ``messages`` (R5.4)."""
        if name == "public":
            return self.public()
        if name == "messages":
            seat, rat = self.viewer, self.rat
            return tuple(
                [
                    MessageView(MessageRoute(i, trick, sender, to, status), text)
                    for i, trick, sender, to, status, text in self.messages
                    if _readable(seat, rat, sender, to, status)
                ]
            )
        raise AttributeError(name)

    def seat_views(self) -> tuple[SeatView, ...]:
        rat = self.rat
        return tuple(
            [
                SeatView(i, house, i == rat, size, won, prizes, pile_score(won, prizes))
                for i, (house, size, won, prizes) in enumerate(self.seats)
            ]
        )

    def trick_view(self) -> TrickView | None:
        if self.trick is None:
            return None
        number, prize, leader, plays, passes, skipped, sleepy, sassy = self.trick
        return TrickView(
            number,
            prize,
            _house(prize),
            leader,
            plays[0][1].house if plays else None,  # lead_suit
            tuple([_play_view(p, self.viewer) for p in plays]),
            passes,
            skipped,
            sleepy,
            sassy,
        )


class _PublicPart:
    """Builds a :class:`PublicView`'s costly fields from a :class:`_Seen`."""

    __slots__ = ("seen",)

    def __init__(self, seen: _Seen) -> None:
        self.seen = seen

    def build(self, name: str) -> Any:
        seen = self.seen
        if name == "seats":
            return seen.seat_views()
        if name == "trick":
            return seen.trick_view()
        if name == "pending":
            return None if seen.pending is None else PendingView(*seen.pending)
        if name == "messages":
            return tuple([MessageRoute(*m[:5]) for m in seen.messages])
        raise AttributeError(name)


def _play_view(p: _Play, viewer: int | None) -> PlayView:
    seat, card, face_down, second = p
    shown = not face_down or seat == viewer
    return PlayView(
        seat, card if shown else None, face_down, second if shown else None, second is not None
    )


def _house(card: Card) -> House:
    assert card.house is not None  # every card but the Rat belongs to a house
    return card.house


def spectator_view(state: GameState) -> PublicView:
    """R11: what anyone may see; no hand, face-down card or message text."""
    return _Seen(state, None).public()


def _readable(seat: int | None, rat: int, sender: int, to: int, status: MessageStatus) -> bool:
    """R5.4: sender, Rat, and the recipient once delivered. [decision] A
    pending message is not yet the recipient's to read."""
    if seat in (sender, rat):
        return True
    return seat == to and status is _DELIVERED


def player_view(state: GameState, seat: int) -> PlayerView:
    """R11: what ``seat`` may see. A number that is not a seat of this game is
    refused (a negative index would otherwise show another seat's hand)."""
    if type(seat) is not int or not 0 <= seat < len(state.seats):
        raise BadInput("not a seat of this game")
    d = state.pending
    cards: tuple[Card, ...] = ()
    if d is not None and d.seat == seat:
        if d.kind is _CURIOUS_ORDER:
            cards = tuple(sorted_cards(d.cards))
        elif d.kind is _HUNGRY_TAKE:
            cards = sorted_pile(tuple(state.rat_deck))
    return lazy(
        PlayerView,
        _Seen(state, seat),
        seat=seat,
        hand=sorted_pile(tuple(state.seats[seat].hand)),
        decision_cards=cards,
        message_targets=tuple(message_targets(state, seat)),
    )
