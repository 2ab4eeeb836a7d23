"""``settle``, the clock after a change (docs/decisions/0046): every new
wait gets a fresh deadline; a timeout always ends the wait it fired, even
when its fallback leaves the same seat to act (docs/decisions/0050)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from domain.clocks import TurnClock, settle
from domain.game.cards import Card
from domain.game.commands import DeliverMessage, PlayCard, SendMessage
from domain.game.options import GameOptions
from domain.log import SeatCommand

OPTIONS = GameOptions(turn_seconds=4, timeouts_to_takeover=2)
T0 = datetime(2026, 1, 1, tzinfo=UTC)


def _waiting_for(seat: int) -> TurnClock:
    return settle(TurnClock.new(3, OPTIONS), OPTIONS, seat, None, False, T0)


def test_a_message_does_not_restart_the_wait() -> None:
    clock = _waiting_for(0)
    later = T0 + timedelta(seconds=2)
    sent = SeatCommand(1, SendMessage(2, "psst"))
    assert settle(clock, OPTIONS, 0, sent, False, later) == clock


def test_a_timeout_ends_the_wait_it_fired_whatever_its_cause() -> None:
    clock = _waiting_for(0)
    late = T0 + timedelta(seconds=5)
    for fallback in (DeliverMessage("m1"), PlayCard(Card("crazy-7"))):
        after = settle(clock, OPTIONS, 0, SeatCommand(0, fallback), True, late)
        assert after.waiting == 0 and after.started == late
        assert after.deadline == late + timedelta(seconds=4)  # a fresh deadline, not the passed one
