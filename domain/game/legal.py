"""``legal_actions``: exactly the commands a seat may send now (R5-R7).

Cards are listed in canonical order, never in deal or deck order (R11).
The one exception: sending a message takes free text, so it is offered as
:func:`domain.game.messaging.message_targets` (who may be messaged now), not
as commands. [decision]
"""

from __future__ import annotations

from itertools import permutations

from domain.game.cards import MESSENGER_RATS, Card, sorted_cards
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
from domain.game.follow import playable, sassy_stuck
from domain.game.messaging import delivered_this_trick
from domain.game.state import Decision, DecisionKind, GameState, MessageStatus, Phase


def legal_actions(state: GameState, seat: int) -> list[Command]:
    """Every command ``seat`` may send now; anything else is refused."""
    if state.phase is Phase.FINISHED or type(seat) is not int or not 0 <= seat < state.n:
        return []
    out: list[Command] = []
    d = state.pending
    if d is not None:
        if d.seat == seat:
            out.extend(_decision_options(state, d))
    elif seat == state.turn:
        out.extend(_trick_options(state, seat))
    if state.phase is Phase.LEAD and seat == state.rat:
        out.extend(_messenger_options(state))
    return out


def _trick_options(state: GameState, seat: int) -> list[Command]:
    trick = state.trick
    assert trick is not None
    hand = sorted_cards(state.seats[seat].hand)
    if sassy_stuck(hand, trick):  # R7.7
        out: list[Command] = [Pass()]
        if len(hand) >= 2:
            out.extend(DiscardAndPlay(x, y) for x in hand for y in hand if x != y)
        return out
    return [PlayCard(c) for c in playable(hand, trick)]


def _messenger_options(state: GameState) -> list[Command]:
    """R5.2: the Rat delivers (while under 3 deliveries) or declines."""
    pending = [m.id for m in state.messages if m.status is MessageStatus.PENDING]
    out: list[Command] = []
    if delivered_this_trick(state) < MESSENGER_RATS:
        out.extend(DeliverMessage(i) for i in pending)
    out.extend(DeclineMessage(i) for i in pending)
    return out


def _decision_options(state: GameState, d: Decision) -> list[Command]:
    hand = sorted_cards(state.seats[d.seat].hand)
    kind = d.kind
    if kind is DecisionKind.CRAZY_SECOND_CARD:
        return [PlaySecondCard(c) for c in hand]
    if kind is DecisionKind.HUNGRY_DISCARD:
        return [HungryDiscard(c) for c in hand]
    if kind is DecisionKind.NEEDY_GIFT:
        return [GiveCard(c) for c in hand]
    if kind is DecisionKind.HUNGRY_TAKE:
        return [HungryTake(c) for c in sorted_cards(state.rat_deck)]
    if kind is DecisionKind.NEEDY_NEIGHBOUR:
        return [ChooseNeighbour(s) for s in sorted(set(state.neighbours(d.seat)))]
    if kind is DecisionKind.CURIOUS_ORDER:  # listed in canonical order, not deck order
        return [ReorderTop(p) for p in permutations(sorted_cards(d.cards))]
    return _gift_options(state, d.seat, hand)


def _gift_options(state: GameState, seat: int, hand: list[Card]) -> list[Command]:
    """R7.2: a card for each neighbour, gifts listed by receiving seat."""
    lo, hi = sorted(state.neighbours(seat))
    if len(hand) == 1:
        return [GiveCards((Gift(s, hand[0]),)) for s in (lo, hi)]
    return [GiveCards((Gift(lo, x), Gift(hi, y))) for x in hand for y in hand if x != y]
