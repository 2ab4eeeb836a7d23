"""What a seat may do now, structured (API.md "legalActions"): one
:class:`Choice` per kind of command, with its options, never a cross
product (Stinky's gifts, discard-and-play and Hungry's take would list up to
~190 commands). Sending a message is a choice too (its text is free).

:func:`choices` and :func:`domain.game.legal.legal_actions` say the same
thing: :func:`commands` expands a choice into exactly the commands it
stands for, and the engine still checks every command it is sent.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import permutations

from domain.game.cards import MESSENGER_RATS, Card, sorted_cards, sorted_pile
from domain.game.choice import Choice, ChoiceKind, GiftOption
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
from domain.game.messaging import delivered_this_trick, message_targets
from domain.game.state import Decision, DecisionKind, GameState, MessageStatus, Phase

# Enum members read on every decision, bound once: Python 3.11 reads ``Phase.LEAD``
# through EnumType's __getattr__ hook, ~70 ns each time (docs/decisions/0037).
_FINISHED = Phase.FINISHED
_LEAD = Phase.LEAD
_PENDING = MessageStatus.PENDING
_NEEDY_NEIGHBOUR = DecisionKind.NEEDY_NEIGHBOUR
_CURIOUS_ORDER = DecisionKind.CURIOUS_ORDER
_HUNGRY_TAKE = DecisionKind.HUNGRY_TAKE
_STINKY_GIFTS = DecisionKind.STINKY_GIFTS
_PLAY_CARD = ChoiceKind.PLAY_CARD
_PASS = ChoiceKind.PASS
_DISCARD_AND_PLAY = ChoiceKind.DISCARD_AND_PLAY
_SEND_MESSAGE = ChoiceKind.SEND_MESSAGE
_DELIVER_MESSAGE = ChoiceKind.DELIVER_MESSAGE
_DECLINE_MESSAGE = ChoiceKind.DECLINE_MESSAGE

OneCard = PlayCard | PlaySecondCard | HungryDiscard | HungryTake | GiveCard
_ONE_CARD: dict[type[OneCard], ChoiceKind] = {
    PlayCard: ChoiceKind.PLAY_CARD,
    PlaySecondCard: ChoiceKind.CRAZY_SECOND_CARD,
    HungryDiscard: ChoiceKind.HUNGRY_DISCARD,
    HungryTake: ChoiceKind.HUNGRY_TAKE,
    GiveCard: ChoiceKind.NEEDY_GIFT,
}


def choices(state: GameState, seat: int) -> tuple[Choice, ...]:
    """Every kind of command ``seat`` may send now, with its options.

    Worked out from the state, not by grouping :func:`~domain.game.legal.legal_actions`'s list
    (every change's ActionRequired carries them, so they are on the engine's
    hot path); ``tests/property/test_choices.py`` checks that the two agree.
    Choices come in :class:`ChoiceKind`'s order: the trick's or the
    decision's, then SEND_MESSAGE, DELIVER_MESSAGE, DECLINE_MESSAGE.
    """
    if state.phase is _FINISHED or type(seat) is not int or not 0 <= seat < len(state.seats):
        return ()
    return choices_with_hand(state, seat, sorted_pile(tuple(state.seats[seat].hand)))


def choices_with_hand(state: GameState, seat: int, hand: tuple[Card, ...]) -> tuple[Choice, ...]:
    """:func:`choices` for a seat of this game, given its hand in canonical
    order (``awaiting`` sorts it once for both the hand and the choices)."""
    phase = state.phase
    if phase is _FINISHED:
        return ()
    out: list[Choice] = []
    d = state.pending
    if d is not None:
        if d.seat == seat:
            _decision_choices(state, d, hand, out)
    elif seat == state.turn:
        _trick_choices(state, hand, out)
    if phase is _LEAD:  # the message window (message_targets is empty outside it)
        targets = message_targets(state, seat)
        if targets:
            out.append(Choice(_SEND_MESSAGE, seats=tuple(targets)))
        if seat == state.rat:
            _messenger_choices(state, out)
    return tuple(out)


def _trick_choices(state: GameState, hand: tuple[Card, ...], out: list[Choice]) -> None:
    """R6.2, R6.3; R7.7: a seat under Sassy with no Sassy card passes, or
    discards one card and plays another."""
    trick = state.trick
    assert trick is not None
    cards = playable_in_order(hand, trick)
    if trick.plays and trick.sassy and not cards:  # sassy_stuck
        out.append(Choice(_PASS))
        if len(hand) >= 2:
            out.append(Choice(_DISCARD_AND_PLAY, cards=hand, discards=hand))
    elif cards:
        out.append(Choice(_PLAY_CARD, cards))


_DECISION_CHOICE: dict[DecisionKind, ChoiceKind] = {k: ChoiceKind(k.value) for k in DecisionKind}


def _decision_choices(
    state: GameState, d: Decision, hand: tuple[Card, ...], out: list[Choice]
) -> None:
    """R7.1-R7.6: the pending decision's options (listed in canonical order)."""
    kind = _DECISION_CHOICE[d.kind]
    if d.kind is _NEEDY_NEIGHBOUR:
        out.append(Choice(kind, seats=tuple(sorted(set(state.neighbours(d.seat))))))
    elif d.kind is _CURIOUS_ORDER:  # the cards to put back, in any order
        out.append(Choice(kind, cards=tuple(sorted_cards(d.cards))))
    elif d.kind is _HUNGRY_TAKE:
        if state.rat_deck:
            out.append(Choice(kind, sorted_pile(tuple(state.rat_deck))))
    elif hand:
        if d.kind is _STINKY_GIFTS:  # R7.2: a card to each neighbour
            seats = sorted(set(state.neighbours(d.seat)))
            count = 1 if len(hand) == 1 else 2
            gifts = tuple(GiftOption(to, hand) for to in seats)
            out.append(Choice(kind, gifts=gifts, gift_count=count))
        else:  # Crazy's second card, Hungry's discard, Needy's gift
            out.append(Choice(kind, hand))


def _messenger_choices(state: GameState, out: list[Choice]) -> None:
    """R5.2: the Rat delivers (while under 3 deliveries) or declines."""
    pending = tuple(m.id for m in state.messages if m.status is _PENDING)
    if pending:
        if delivered_this_trick(state) < MESSENGER_RATS:
            out.append(Choice(_DELIVER_MESSAGE, message_ids=pending))
        out.append(Choice(_DECLINE_MESSAGE, message_ids=pending))


def commands(choice: Choice) -> Iterator[Command]:
    """The commands ``choice`` stands for (a message: none, its text is free;
    RECLAIM_SEAT: none, it is the server's ``reclaimSeat``, not the engine's)."""
    k = choice.kind
    if k is ChoiceKind.PASS:
        yield Pass()
    elif k is ChoiceKind.DISCARD_AND_PLAY:
        yield from (DiscardAndPlay(d, c) for d in choice.discards for c in choice.cards if d != c)
    elif k is ChoiceKind.NEEDY_NEIGHBOUR:
        yield from (ChooseNeighbour(s) for s in choice.seats)
    elif k is ChoiceKind.CURIOUS_ORDER:
        yield from (ReorderTop(p) for p in permutations(choice.cards))
    elif k is ChoiceKind.STINKY_GIFTS:
        yield from _gift_commands(choice)
    elif k is ChoiceKind.DELIVER_MESSAGE:
        yield from (DeliverMessage(i) for i in choice.message_ids)
    elif k is ChoiceKind.DECLINE_MESSAGE:
        yield from (DeclineMessage(i) for i in choice.message_ids)
    elif k is not ChoiceKind.SEND_MESSAGE and k is not ChoiceKind.RECLAIM_SEAT:
        command = next(cls for cls, kind in _ONE_CARD.items() if kind is k)
        yield from (command(c) for c in choice.cards)


def _gift_commands(choice: Choice) -> Iterator[Command]:
    if choice.gift_count == 1:
        for option in choice.gifts:
            yield from (GiveCards((Gift(option.to, c),)) for c in option.cards)
        return
    first, second = choice.gifts
    for x in first.cards:
        for y in second.cards:
            if x != y:
                yield GiveCards((Gift(first.to, x), Gift(second.to, y)))
