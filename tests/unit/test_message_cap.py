"""The cap on messages a seat sends in one game (domain.game.messaging.MAX_SENT,
a [decision] where R5 sets no total): declined messages count, the cap is
per seat, and ``message_targets`` agrees with what ``send`` accepts."""

from __future__ import annotations

from domain.game.commands import DeclineMessage, SendMessage
from domain.game.messaging import MAX_SENT, message_targets
from domain.game.state import GameState, Message, MessageStatus
from tests.builders import make_state, refused, run

RAT, A, B, C = 0, 1, 2, 3


def table() -> GameState:
    return make_state(
        [["sleepy-1", "sleepy-5"], ["sleepy-2", "sleepy-6"], ["sleepy-3"], ["sleepy-4"]],
        rat=RAT,
        prize="sassy-prize-1",
    )


def send_and_decline(state: GameState, seat: int) -> None:
    run(state, (seat, SendMessage(B if seat != B else C, "again?")))
    run(state, (RAT, DeclineMessage(state.messages[-1].id)))


def test_a_seat_sends_at_most_max_sent_messages_in_a_game() -> None:
    state = table()
    for _ in range(MAX_SENT):
        assert message_targets(state, A) == [RAT, B, C]
        send_and_decline(state, A)  # R5.5 caps pending ones: declined ones free the slot
    assert message_targets(state, A) == []
    error = refused(state, A, SendMessage(B, "one more"), "ILLEGAL_ACTION")
    assert str(MAX_SENT) in error.message
    assert sum(m.sender == A for m in state.messages) == MAX_SENT
    # Other seats keep their own allowance.
    assert message_targets(state, C) == [RAT, A, B]
    send_and_decline(state, C)


def test_the_rat_has_the_same_cap() -> None:
    state = table()
    old = [Message(f"old{i}", 0, RAT, A, "earlier", MessageStatus.EXPIRED) for i in range(MAX_SENT)]
    state.messages.extend(old)
    assert message_targets(state, RAT) == []
    refused(state, RAT, SendMessage(A, "one more"), "ILLEGAL_ACTION")
    state.messages.pop()
    assert message_targets(state, RAT) == [A, B, C]
    run(state, (RAT, SendMessage(A, "the last one")))
    assert message_targets(state, RAT) == []
