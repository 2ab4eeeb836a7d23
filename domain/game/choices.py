"""What a seat may do now (R5-R7), the one place it is worked out: one
:class:`Choice` per kind of command, with its options, never a cross
product (Stinky's gifts, discard-and-play and Hungry's take would list up to
~190 commands). Sending a message is a choice too (its text is free).

:func:`domain.game.legal.legal_actions` lists the commands these choices
stand for; the engine still checks every command it is sent.
"""

from __future__ import annotations

from domain.game.cards import MESSENGER_RATS, Card, sorted_cards, sorted_pile
from domain.game.choice import Choice, ChoiceKind, GiftOption
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


def choices(state: GameState, seat: int, sending: bool = True) -> tuple[Choice, ...]:
    """Every kind of command ``seat`` may send now, with its options
    (``sending``: SEND_MESSAGE among them; it stands for no command).

    Every change's ActionRequired carries them (the engine's hot path).
    Choices come in :class:`ChoiceKind`'s order: the trick's or the
    decision's, then SEND_MESSAGE, DELIVER_MESSAGE, DECLINE_MESSAGE.
    """
    if state.phase is _FINISHED or type(seat) is not int or not 0 <= seat < len(state.seats):
        return ()
    return choices_with_hand(state, seat, sorted_pile(tuple(state.seats[seat].hand)), sending)


def choices_with_hand(
    state: GameState, seat: int, hand: tuple[Card, ...], sending: bool = True
) -> tuple[Choice, ...]:
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
        if sending:
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


_DECISION_CHOICE: dict[str, ChoiceKind] = {k.value: ChoiceKind(k.value) for k in DecisionKind}
"""By the decision's value: an enum member hashes in Python, its value in C."""


def _decision_choices(
    state: GameState, d: Decision, hand: tuple[Card, ...], out: list[Choice]
) -> None:
    """R7.1-R7.6: the pending decision's options (listed in canonical order)."""
    kind = _DECISION_CHOICE[d.kind._value_]
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
