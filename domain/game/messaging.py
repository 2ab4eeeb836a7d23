"""Messengers: table talk through the Rat (R5)."""

from __future__ import annotations

from domain.game.cards import MESSENGER_RATS
from domain.game.errors import BadInput, IllegalAction, NotFound
from domain.game.events import (
    Event,
    MessageDeclined,
    MessageDelivered,
    MessageExpired,
    MessageSent,
)
from domain.game.state import GameState, Message, MessageStatus, Phase

# Enum members read on every decision, bound once: Python 3.11 reads ``Phase.LEAD``
# through EnumType's __getattr__ hook, ~70 ns each time (docs/decisions/0037).
_LEAD = Phase.LEAD
_PENDING = MessageStatus.PENDING
_DELIVERED = MessageStatus.DELIVERED
_DECLINED = MessageStatus.DECLINED
_EXPIRED = MessageStatus.EXPIRED

MAX_TEXT = 280  # R5.1
MAX_PENDING = 3  # R5.5
MAX_SENT = 60
"""Messages a seat may send in one game. [decision] docs/rules.md sets no total;
60 is ~3 for each of a game's tricks (21 prize cards, R4.4), and bounds what
a game keeps: every message stays in its state and its event log."""


def window_open(state: GameState) -> bool:
    """R5.1/R5.3: open from the prize reveal until the lead card is played."""
    return state.phase is _LEAD


def delivered_this_trick(state: GameState) -> int:
    number = state.trick.number if state.trick else -1
    return sum(1 for m in state.messages if m.trick == number and m.status is _DELIVERED)


def pending_of(state: GameState, seat: int) -> int:
    return sum(1 for m in state.messages if m.sender == seat and m.status is _PENDING)


def sent_by(state: GameState, seat: int) -> int:
    return sum(1 for m in state.messages if m.sender == seat)


def can_send(state: GameState, seat: int) -> bool:
    """R5.2/R5.5: window open, under the pending limit (the Rat: under the
    delivery limit, since its messages are delivered at once), and under
    :data:`MAX_SENT`."""
    if not state.messages:  # nothing sent, pending or delivered yet: only the window counts
        return window_open(state)
    if not window_open(state) or sent_by(state, seat) >= MAX_SENT:
        return False
    if seat == state.rat:
        return delivered_this_trick(state) < MESSENGER_RATS
    return pending_of(state, seat) < MAX_PENDING


def message_targets(state: GameState, seat: int) -> list[int]:
    """The seats ``seat`` may message now (R5.1, R5.5: never itself); none
    for a number that is not a seat of this game."""
    if state.phase is not _LEAD:  # window_open, asked first: the common answer
        return []
    if type(seat) is not int or not 0 <= seat < len(state.seats) or not can_send(state, seat):
        return []
    return [s for s in range(state.n) if s != seat]


def _readers(*seats: int) -> tuple[int, ...]:
    """R5.4: who reads a message's text (each seat once)."""
    return tuple(dict.fromkeys(seats))


def send(state: GameState, seat: int, to: int, text: str, events: list[Event]) -> None:
    """R5.1-R5.2, R5.5. [decision] Text of only white space is refused. A
    message to the Rat is pending like any other and counts as a delivery."""
    if not 0 <= to < state.n:
        raise BadInput(f"seat {to} is not a seat of this game")
    if to == seat:
        raise IllegalAction("a message to oneself is refused (R5.5)")
    if not 1 <= len(text) <= MAX_TEXT or not text.strip():
        raise BadInput(f"a message has 1 to {MAX_TEXT} characters, not only spaces (R5.1)")
    if not window_open(state):
        raise IllegalAction("messages are sent before the trick's lead card (R5.1)")
    if seat == state.rat:
        if delivered_this_trick(state) >= MESSENGER_RATS:
            raise IllegalAction("3 messages were delivered this trick already (R5.2)")
    elif pending_of(state, seat) >= MAX_PENDING:
        raise IllegalAction("you have 3 pending messages already (R5.5)")
    if sent_by(state, seat) >= MAX_SENT:
        raise IllegalAction(f"a seat sends at most {MAX_SENT} messages in a game")
    state.message_counter += 1
    assert state.trick is not None
    m = Message(f"m{state.message_counter}", state.trick.number, seat, to, text, _PENDING)
    state.messages.append(m)
    events.append(MessageSent(m.id, m.trick, seat, to, m.status, m.text, _readers(seat, state.rat)))
    if seat == state.rat:  # R5.2: the Rat's own messages go straight to delivery
        _deliver(state, m, events)


def _find_pending(state: GameState, seat: int, message_id: str) -> Message:
    if seat != state.rat:
        raise IllegalAction("only the Rat delivers or declines messages (R5.2)")
    for m in state.messages:
        if m.id == message_id:
            if m.status is not _PENDING:
                raise IllegalAction(f"message {message_id} is {m.status.value}, not pending")
            if not window_open(state):
                raise IllegalAction("the message window is closed (R5.3)")
            return m
    raise NotFound(f"no message {message_id} in this game")


def deliver(state: GameState, seat: int, message_id: str, events: list[Event]) -> None:
    """R5.2: at most 3 deliveries per trick."""
    m = _find_pending(state, seat, message_id)
    if delivered_this_trick(state) >= MESSENGER_RATS:
        raise IllegalAction("3 messages were delivered this trick already (R5.2)")
    _deliver(state, m, events)


def _deliver(state: GameState, m: Message, events: list[Event]) -> None:
    m.status = _DELIVERED
    readers = _readers(m.sender, m.recipient, state.rat)
    events.append(MessageDelivered(m.id, m.trick, m.sender, m.recipient, m.status, m.text, readers))


def decline(state: GameState, seat: int, message_id: str, events: list[Event]) -> None:
    """R5.2: the Rat declines."""
    m = _find_pending(state, seat, message_id)
    m.status = _DECLINED
    events.append(MessageDeclined(m.id, m.trick, m.sender, m.recipient, m.status))


def expire(state: GameState, events: list[Event]) -> None:
    """R5.3: the lead card closes the window; pending messages expire."""
    for m in state.messages:
        if m.status is _PENDING:
            m.status = _EXPIRED
            events.append(MessageExpired(m.id, m.trick, m.sender, m.recipient, m.status))
