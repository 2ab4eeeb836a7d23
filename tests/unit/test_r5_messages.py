"""R5: messengers — sending, delivery through the Rat, limits, expiry, privacy."""

from __future__ import annotations

import pytest

from domain.game.cards import Card
from domain.game.commands import DeclineMessage, DeliverMessage, PlayCard, SendMessage
from domain.game.events import (
    ActionRequired,
    CardPlayed,
    Event,
    MessageDeclined,
    MessageDelivered,
    MessageExpired,
    MessageSent,
)
from domain.game.legal import legal_actions
from domain.game.messaging import message_targets
from domain.game.state import GameState, MessageStatus
from domain.game.views import player_view, spectator_view
from infra.codec import event_to_json
from tests.builders import make_state, of_type, one, refused, run

RAT, A, B, C = 0, 1, 2, 3
SECRET = "meet me at the sassy 31"


def table() -> GameState:
    """4 seats, the Rat (seat 0) to lead trick 1; a Sleepy lead asks for no decision."""
    return make_state(
        [["sleepy-1", "sleepy-5"], ["sleepy-2", "sleepy-6"], ["sleepy-3"], ["sleepy-4"]],
        rat=RAT,
        prize="sassy-prize-1",
    )


def status(state: GameState, message_id: str) -> MessageStatus:
    return next(m.status for m in state.messages if m.id == message_id)


def send(state: GameState, seat: int, to: int, text: str = SECRET) -> str:
    event = one(run(state, (seat, SendMessage(to, text))), MessageSent)
    return event.seen_by(None).message_id


# ---------------------------------------------------------------- R5.1
@pytest.mark.parametrize("length", [1, 280])
def test_r5_1_text_of_1_to_280_characters_is_accepted(length: int) -> None:
    state = table()
    send(state, A, B, "x" * length)
    assert state.messages[0].text == "x" * length


@pytest.mark.parametrize("text", ["", "x" * 281])
def test_r5_1_empty_or_longer_than_280_is_refused(text: str) -> None:
    refused(table(), A, SendMessage(B, text), "BAD_INPUT")


def test_r5_1_text_of_only_spaces_is_refused() -> None:
    # [decision] of the engine: blank text counts as empty
    refused(table(), A, SendMessage(B, "   "), "BAD_INPUT")


def test_r5_1_to_a_seat_outside_the_game_is_refused() -> None:
    refused(table(), A, SendMessage(4, "hi"), "BAD_INPUT")


def test_r5_1_any_seat_may_send_in_the_window_not_only_the_leader() -> None:
    state = table()
    for seat in (A, B, C):
        send(state, seat, RAT if seat != A else B)
    assert len(state.messages) == 3
    assert message_targets(state, C) == [RAT, A, B]


def test_r5_1_r5_3_no_message_after_the_lead_card() -> None:
    state = table()
    run(state, (RAT, PlayCard(Card("sleepy-1"))))
    refused(state, A, SendMessage(B, "too late"), "ILLEGAL_ACTION")
    refused(state, RAT, SendMessage(B, "too late"), "ILLEGAL_ACTION")
    assert message_targets(state, A) == []


# ---------------------------------------------------------------- R5.2
def test_r5_2_a_message_goes_to_the_rat_as_pending() -> None:
    state = table()
    mid = send(state, A, B)
    assert status(state, mid) is MessageStatus.PENDING
    assert DeliverMessage(mid) in legal_actions(state, RAT)
    assert DeclineMessage(mid) in legal_actions(state, RAT)


def test_r5_2_the_rat_delivers_a_pending_message() -> None:
    state = table()
    mid = send(state, A, B)
    events = run(state, (RAT, DeliverMessage(mid)))
    assert status(state, mid) is MessageStatus.DELIVERED
    assert one(events, MessageDelivered).seen_by(None).to_seat == B


def test_r5_2_the_rat_declines_a_pending_message() -> None:
    state = table()
    mid = send(state, A, B)
    events = run(state, (RAT, DeclineMessage(mid)))
    assert status(state, mid) is MessageStatus.DECLINED
    assert one(events, MessageDeclined).seen_by(None).status is MessageStatus.DECLINED
    refused(state, RAT, DeliverMessage(mid), "ILLEGAL_ACTION")  # no longer pending


def test_r5_2_only_the_rat_delivers_or_declines() -> None:
    state = table()
    mid = send(state, A, B)
    refused(state, B, DeliverMessage(mid), "ILLEGAL_ACTION")
    refused(state, A, DeclineMessage(mid), "ILLEGAL_ACTION")
    assert legal_actions(state, B) == []


def test_r5_2_delivering_an_unknown_message_is_not_found() -> None:
    refused(table(), RAT, DeliverMessage("m99"), "NOT_FOUND")


def test_r5_2_the_rats_own_message_is_delivered_at_once() -> None:
    state = table()
    events = run(state, (RAT, SendMessage(B, SECRET)))
    assert [type(e) for e in events] == [MessageSent, MessageDelivered, ActionRequired]
    assert state.messages[0].status is MessageStatus.DELIVERED


def test_r5_2_at_most_3_deliveries_per_trick_including_the_rats_own() -> None:
    state = table()
    run(state, (RAT, SendMessage(A, "rat speaks")))
    m1, m2, m3 = send(state, A, B), send(state, B, C), send(state, C, A)
    run(state, (RAT, DeliverMessage(m1)), (RAT, DeliverMessage(m2)))
    refused(state, RAT, DeliverMessage(m3), "ILLEGAL_ACTION")  # the 4th delivery
    refused(state, RAT, SendMessage(A, "one more"), "ILLEGAL_ACTION")
    assert DeliverMessage(m3) not in legal_actions(state, RAT)
    assert message_targets(state, RAT) == []
    run(state, (RAT, DeclineMessage(m3)))  # declining is still allowed


def test_r5_2_three_deliveries_by_the_rat_alone_fill_the_trick() -> None:
    state = table()
    for to in (A, B, C):
        run(state, (RAT, SendMessage(to, "hi")))
    mid = send(state, A, B)
    refused(state, RAT, DeliverMessage(mid), "ILLEGAL_ACTION")


def test_r5_2_the_delivery_count_starts_again_each_trick() -> None:
    state = table()
    for to in (A, B, C):
        run(state, (RAT, SendMessage(to, "hi")))
    run(
        state,
        (RAT, PlayCard(Card("sleepy-1"))),
        (A, PlayCard(Card("sleepy-2"))),
        (B, PlayCard(Card("sleepy-3"))),
        (C, PlayCard(Card("sleepy-4"))),
    )
    assert state.trick is not None and state.trick.number == 2
    leader = state.turn
    mid = send(state, (leader + 1) % 4, leader)
    run(state, (RAT, DeliverMessage(mid)))
    assert status(state, mid) is MessageStatus.DELIVERED


# ---------------------------------------------------------------- R5.3
def test_r5_3_pending_messages_expire_when_the_lead_card_is_played() -> None:
    state = table()
    m1, m2 = send(state, A, B), send(state, C, A)
    m3 = send(state, B, C)
    run(state, (RAT, DeliverMessage(m3)))
    events = run(state, (RAT, PlayCard(Card("sleepy-1"))))
    expired = of_type(events, MessageExpired)
    public = [e.seen_by(None) for e in expired]
    assert [(e.message_id, e.from_seat) for e in public] == [(m1, A), (m2, C)]
    assert events.index(expired[-1]) < events.index(one(events, CardPlayed))
    assert status(state, m1) is status(state, m2) is MessageStatus.EXPIRED
    assert status(state, m3) is MessageStatus.DELIVERED
    assert legal_actions(state, RAT) == []  # nothing left to deliver


# ---------------------------------------------------------------- R5.5
def test_r5_5_a_message_to_oneself_is_refused() -> None:
    state = table()
    refused(state, A, SendMessage(A, "note to self"), "ILLEGAL_ACTION")
    refused(state, RAT, SendMessage(RAT, "note to self"), "ILLEGAL_ACTION")
    assert A not in message_targets(state, A)


def test_r5_5_at_most_3_pending_messages_per_seat() -> None:
    state = table()
    ids = [send(state, A, to) for to in (B, C, RAT)]
    refused(state, A, SendMessage(B, "fourth"), "ILLEGAL_ACTION")
    assert message_targets(state, A) == []
    send(state, B, A)  # another seat is not limited by A's messages
    run(state, (RAT, DeclineMessage(ids[0])))
    send(state, A, B)  # a slot is free again


def test_r5_5_delivered_messages_do_not_count_as_pending() -> None:
    state = table()
    ids = [send(state, A, to) for to in (B, C, RAT)]
    run(state, (RAT, DeliverMessage(ids[0])))
    send(state, A, B)


# ---------------------------------------------------------------- R5.4 privacy
def texts_seen(event: Event) -> dict[object, bool]:
    """Which audience (seat or None for spectators) sees the text."""
    return {who: "text" in event_to_json(event.seen_by(who)) for who in (None, RAT, A, B, C)}


def test_r5_4_sent_event_text_for_sender_and_rat_only() -> None:
    state = table()
    sent = one(run(state, (A, SendMessage(B, SECRET))), MessageSent)
    assert texts_seen(sent) == {None: False, RAT: True, A: True, B: False, C: False}
    assert event_to_json(sent.seen_by(None)) == {
        "messageId": "m1",
        "trick": 1,
        "fromSeat": A,
        "toSeat": B,
        "status": "pending",
    }
    assert sent.seen_by(A).text == SECRET


def test_r5_4_delivered_event_text_for_sender_recipient_and_rat() -> None:
    state = table()
    mid = send(state, A, B)
    delivered = one(run(state, (RAT, DeliverMessage(mid))), MessageDelivered)
    assert texts_seen(delivered) == {None: False, RAT: True, A: True, B: True, C: False}
    assert delivered.seen_by(B).text == SECRET


def test_r5_4_rats_own_message_text_for_rat_and_recipient_only() -> None:
    state = table()
    events = run(state, (RAT, SendMessage(C, SECRET)))
    sent, delivered, _ = events  # and the ActionRequired of the seat to lead
    assert texts_seen(sent) == {None: False, RAT: True, A: False, B: False, C: False}
    assert texts_seen(delivered) == {None: False, RAT: True, A: False, B: False, C: True}


def test_r5_4_declined_and_expired_events_carry_no_text() -> None:
    state = table()
    m1, _ = send(state, A, B), send(state, C, B)
    events = run(state, (RAT, DeclineMessage(m1)), (RAT, PlayCard(Card("sleepy-1"))))
    for e in [
        *of_type(events, MessageDeclined),
        *of_type(events, MessageExpired),
    ]:
        assert not any(texts_seen(e).values())


def readers(state: GameState) -> set[int]:
    return {
        s for s in range(state.n) if any(m.text == SECRET for m in player_view(state, s).messages)
    }


def test_r5_4_views_text_for_sender_rat_and_recipient_once_delivered() -> None:
    state = table()
    mid = send(state, A, B)
    assert readers(state) == {A, RAT}
    run(state, (RAT, DeliverMessage(mid)))
    assert readers(state) == {A, B, RAT}
    run(state, (RAT, PlayCard(Card("sleepy-1"))))
    assert readers(state) == {A, B, RAT}  # delivered text stays readable


def test_r5_4_declined_message_is_never_readable_by_the_recipient() -> None:
    state = table()
    mid = send(state, A, B)
    run(state, (RAT, DeclineMessage(mid)))
    assert readers(state) == {A, RAT}


def test_r5_4_route_and_status_are_public_text_is_not() -> None:
    state = table()
    mid = send(state, A, B)
    run(state, (RAT, DeliverMessage(mid)))
    spectator = spectator_view(state)
    route = spectator.messages[0]
    assert (route.id, route.sender, route.recipient, route.status) == (
        mid,
        A,
        B,
        MessageStatus.DELIVERED,
    )
    assert SECRET not in repr(spectator)
    assert SECRET not in repr(player_view(state, C))
    assert player_view(state, C).public.messages == spectator.messages
