"""``legal_actions``: exactly the commands a seat may send now (R5-R7).

Cards are listed in canonical order, never in deal or deck order (R11).
The one exception: sending a message takes free text, so it is offered as
:func:`domain.game.messaging.message_targets` (who may be messaged now), not
as commands. [decision]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache
from itertools import permutations

from domain.game.cards import MESSENGER_RATS, Card, sorted_cards, sorted_pile
from domain.game.commands import (
    ChooseNeighbour,
    Command,
    DeclineMessage,
    DeliverMessage,
    DiscardAndPlay,
    Gift,
    GiveCard,
    GiveCards,
    HungryDiscard,
    HungryTake,
    Pass,
    PlayCard,
    PlaySecondCard,
    ReorderTop,
)
from domain.game.follow import playable_in_order
from domain.game.messaging import delivered_this_trick
from domain.game.state import Decision, DecisionKind, GameState, MessageStatus, Phase

# Enum members read on every decision, bound once: Python 3.11 reads ``Phase.LEAD``
# through EnumType's __getattr__ hook, ~70 ns each time (docs/decisions/0037).
_FINISHED = Phase.FINISHED
_LEAD = Phase.LEAD
_PENDING = MessageStatus.PENDING
_HUNGRY_TAKE = DecisionKind.HUNGRY_TAKE
_NEEDY_NEIGHBOUR = DecisionKind.NEEDY_NEIGHBOUR
_CURIOUS_ORDER = DecisionKind.CURIOUS_ORDER
_CRAZY_SECOND_CARD = DecisionKind.CRAZY_SECOND_CARD
_HUNGRY_DISCARD = DecisionKind.HUNGRY_DISCARD
_NEEDY_GIFT = DecisionKind.NEEDY_GIFT

_KEPT = 8192  # commands kept per kind: a game names at most a few hundred cards


class _ByCard:
    """One command per card, kept: commands are immutable values, so the
    same one may be listed again (a Hungry take lists the whole Rat Deck, R7.4).
    Keyed by the card, never by a state, so nothing kept goes stale
    (docs/decisions/0037); emptied when it holds :data:`_KEPT`. A listing
    looks each card up in a dict, ~2x cheaper than an ``lru_cache`` hit."""

    __slots__ = ("_made", "_make")

    def __init__(self, make: Callable[[Card], Command]) -> None:
        self._make = make
        self._made: dict[Card, Command] = {}

    def listing(self, cards: Sequence[Card]) -> list[Command]:
        """The command of each of ``cards``, in their order."""
        made = self._made
        try:
            return list(map(made.__getitem__, cards))
        except KeyError:  # a card not seen yet: make what is missing, once
            if len(made) >= _KEPT:
                made.clear()
            for card in cards:
                if card not in made:
                    made[card] = self._make(card)
            return list(map(made.__getitem__, cards))


_play_cards = _ByCard(PlayCard)
_second_cards = _ByCard(PlaySecondCard)
_hungry_discards = _ByCard(HungryDiscard)
_hungry_takes = _ByCard(HungryTake)
_give_cards = _ByCard(GiveCard)
_gift: Callable[[int, Card], Gift] = lru_cache(maxsize=_KEPT)(Gift)
"""One Gift instance per (seat, card), kept as the commands above."""


def legal_actions(state: GameState, seat: int) -> list[Command]:
    """Every command ``seat`` may send now; anything else is refused."""
    if state.phase is _FINISHED or type(seat) is not int or not 0 <= seat < len(state.seats):
        return []
    d = state.pending
    if d is not None:
        out = _decision_options(state, d) if d.seat == seat else []
    else:
        out = _trick_options(state, seat) if seat == state.turn else []
    if state.phase is _LEAD and seat == state.rat:
        out.extend(_messenger_options(state))
    return out


def _trick_options(state: GameState, seat: int) -> list[Command]:
    trick = state.trick
    assert trick is not None
    hand = sorted_pile(tuple(state.seats[seat].hand))
    cards = playable_in_order(hand, trick)
    if trick.plays and trick.sassy and not cards:  # sassy_stuck (R7.7)
        out: list[Command] = [Pass()]
        if len(hand) >= 2:
            out += [DiscardAndPlay(x, y) for x in hand for y in hand if x != y]
        return out
    return _play_cards.listing(cards)


def _messenger_options(state: GameState) -> list[Command]:
    """R5.2: the Rat delivers (while under 3 deliveries) or declines."""
    pending = [m.id for m in state.messages if m.status is _PENDING]
    out: list[Command] = []
    if pending:
        if delivered_this_trick(state) < MESSENGER_RATS:
            out.extend(DeliverMessage(i) for i in pending)
        out.extend(DeclineMessage(i) for i in pending)
    return out


def _decision_options(state: GameState, d: Decision) -> list[Command]:
    kind = d.kind
    if kind is _HUNGRY_TAKE:
        return _hungry_takes.listing(sorted_pile(tuple(state.rat_deck)))
    if kind is _NEEDY_NEIGHBOUR:
        return [ChooseNeighbour(s) for s in sorted(set(state.neighbours(d.seat)))]
    if kind is _CURIOUS_ORDER:  # listed in canonical order, not deck order
        return [ReorderTop(p) for p in permutations(sorted_cards(d.cards))]
    hand = sorted_pile(tuple(state.seats[d.seat].hand))
    if kind is _CRAZY_SECOND_CARD:
        return _second_cards.listing(hand)
    if kind is _HUNGRY_DISCARD:
        return _hungry_discards.listing(hand)
    if kind is _NEEDY_GIFT:
        return _give_cards.listing(hand)
    return _gift_options(state, d.seat, hand)


def _gift_options(state: GameState, seat: int, hand: tuple[Card, ...]) -> list[Command]:
    """R7.2: a card for each neighbour, gifts listed by receiving seat."""
    lo, hi = sorted(state.neighbours(seat))
    if len(hand) == 1:
        return [GiveCards((_gift(s, hand[0]),)) for s in (lo, hi)]
    to_lo = [_gift(lo, x) for x in hand]
    to_hi = [_gift(hi, y) for y in hand]
    return [
        GiveCards((gx, gy))
        for x, gx in zip(hand, to_lo, strict=True)
        for y, gy in zip(hand, to_hi, strict=True)
        if x != y
    ]
