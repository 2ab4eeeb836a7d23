"""Answering a pending ability decision (R7.0b, R7.1-R7.6).

Every check runs before any change, so a refused answer changes nothing.
"""

from __future__ import annotations

from domain.game.abilities import require
from domain.game.cards import Card, House
from domain.game.commands import (
    ChooseNeighbour,
    DecisionCommand,
    GiveCard,
    GiveCards,
    HungryDiscard,
    HungryTake,
    PlaySecondCard,
    ReorderTop,
)
from domain.game.errors import IllegalAction
from domain.game.events import (
    CardDiscarded,
    CardGiven,
    CardTaken,
    Event,
    NeighbourChosen,
    SecondCardPlayed,
    TopReordered,
)
from domain.game.state import Decision, DecisionKind, GameState

EXPECTED: dict[DecisionKind, type] = {
    DecisionKind.CRAZY_SECOND_CARD: PlaySecondCard,
    DecisionKind.STINKY_GIFTS: GiveCards,
    DecisionKind.HUNGRY_DISCARD: HungryDiscard,
    DecisionKind.HUNGRY_TAKE: HungryTake,
    DecisionKind.NEEDY_NEIGHBOUR: ChooseNeighbour,
    DecisionKind.NEEDY_GIFT: GiveCard,
    DecisionKind.CURIOUS_ORDER: ReorderTop,
}


def _in_hand(hand: list[Card], card: Card) -> None:
    if card not in hand:
        raise IllegalAction("that card is not in your hand")


def answer(state: GameState, d: Decision, cmd: DecisionCommand, events: list[Event]) -> None:
    """Apply ``cmd`` to the pending decision ``d``; may chain another (R7.4, R7.5)."""
    _check(state, d, cmd)
    state.pending = None
    _effect(state, d, cmd, events)


def _check(state: GameState, d: Decision, cmd: DecisionCommand) -> None:
    """Every refusal, before any change."""
    if not isinstance(cmd, EXPECTED[d.kind]):
        raise IllegalAction(f"the pending decision is {d.kind.value}")
    hand = state.seats[d.seat].hand
    if isinstance(cmd, PlaySecondCard | HungryDiscard | GiveCard):
        _in_hand(hand, cmd.card)
    elif isinstance(cmd, GiveCards):
        _check_gifts(state, d.seat, hand, cmd)
    elif isinstance(cmd, HungryTake):
        if cmd.card not in state.rat_deck:
            raise IllegalAction("that card is not in the Rat Deck")
    elif isinstance(cmd, ChooseNeighbour):
        if cmd.seat not in state.neighbours(d.seat):
            raise IllegalAction("choose one of your two neighbours (R7.5)")
    elif sorted(cmd.cards) != sorted(d.cards):
        raise IllegalAction("reorder exactly the cards you looked at (R7.6)")


def _effect(state: GameState, d: Decision, cmd: DecisionCommand, events: list[Event]) -> None:
    hand = state.seats[d.seat].hand
    if isinstance(cmd, PlaySecondCard):
        _second_card(state, d.seat, cmd.card, events)
    elif isinstance(cmd, GiveCards):
        for g in sorted(cmd.gifts, key=lambda g: g.to):
            give(state, d.seat, g.to, g.card, House.STINKY, events)
    elif isinstance(cmd, HungryDiscard):
        hand.remove(cmd.card)
        state.discard.append(cmd.card)
        events.append(CardDiscarded(d.seat, cmd.card, House.HUNGRY))
        require(state, Decision(DecisionKind.HUNGRY_TAKE, d.seat, d.source), events)
    elif isinstance(cmd, HungryTake):
        state.rat_deck.remove(cmd.card)  # R7.4: the rest keeps its order
        hand.append(cmd.card)
        events.append(CardTaken(d.seat, len(state.rat_deck), cmd.card))
    elif isinstance(cmd, ChooseNeighbour):
        events.append(NeighbourChosen(d.seat, cmd.seat))
        if state.seats[cmd.seat].hand:  # R7.5: a neighbour with no cards gives nothing
            require(state, Decision(DecisionKind.NEEDY_GIFT, cmd.seat, d.seat), events)
    elif isinstance(cmd, GiveCard):
        give(state, d.seat, d.source, cmd.card, House.NEEDY, events)
    else:
        state.rat_deck[: len(d.cards)] = list(cmd.cards)  # R7.6
        events.append(TopReordered(d.seat, len(d.cards), cmd.cards))


def _second_card(state: GameState, seat: int, card: Card, events: list[Event]) -> None:
    """R7.1: any card, no follow rule, no trigger, face down if the first was."""
    trick = state.trick
    assert trick is not None
    play = trick.plays[-1]
    state.seats[seat].hand.remove(card)
    play.second = card
    events.append(SecondCardPlayed(seat, card, play.face_down))


def _check_gifts(state: GameState, seat: int, hand: list[Card], cmd: GiveCards) -> None:
    """R7.2: one card to each neighbour; with one card, to either neighbour."""
    left, right = state.neighbours(seat)
    cards = [g.card for g in cmd.gifts]
    targets = sorted(g.to for g in cmd.gifts)
    if len(hand) >= 2:
        if targets != sorted((left, right)):
            raise IllegalAction("give one card to each neighbour (R7.2)")
    elif len(cmd.gifts) != 1 or targets[0] not in (left, right):
        raise IllegalAction("give your last card to one neighbour (R7.2)")
    if any(cards.count(c) > hand.count(c) for c in cards):  # Counter(cards) <= Counter(hand)
        raise IllegalAction("give distinct cards from your hand (R7.2)")


def give(
    state: GameState, giver: int, to: int, card: Card, reason: House, events: list[Event]
) -> None:
    """A card moves hand to hand; only giver and receiver see which (R11)."""
    state.seats[giver].hand.remove(card)
    state.seats[to].hand.append(card)
    events.append(CardGiven(giver, to, reason, card))
