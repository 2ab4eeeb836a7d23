"""What a stream may take (api/graphql/stream_limits.py, issue #22 item 3):
open subscriptions per token and per IP, the pace of replayed events per
connection, replays a minute per caller, and a caller's dry budgets ending
its streams."""

from __future__ import annotations

import time

import pytest
from graphql import GraphQLError

from api.graphql import stream_limits
from api.graphql.stream_limits import REPLAY_ROOM, Pace, ReplayMinute, Replays, Slots, gate
from infra.work_meter import Meter
from tests.adapters.test_rate_limit import FakeClock


def test_open_subscriptions_are_capped_per_token_and_per_ip() -> None:
    slots = Slots(per_token=2, per_ip=3)
    a1, a2 = slots.held("1.1.1.1", "a"), slots.held("1.1.1.1", "a")
    a1.__enter__()
    a2.__enter__()
    with pytest.raises(GraphQLError) as refused:
        slots.held("2.2.2.2", "a").__enter__()  # the token's third, from anywhere
    assert refused.value.extensions == {"code": "RATE_LIMITED", "retryAfter": 1.0}
    assert "2 open subscriptions per token" in refused.value.message
    with (
        slots.held("1.1.1.1", "b"),  # the address's third
        pytest.raises(GraphQLError, match="3 open subscriptions per address"),
    ):
        slots.held("1.1.1.1", None).__enter__()
    a1.__exit__(None, None, None)
    with slots.held("2.2.2.2", "a"):  # one ended: room again
        assert len(slots) == 2
    a2.__exit__(None, None, None)
    assert len(slots) == 0


def test_ipv6_callers_share_their_64() -> None:
    slots = Slots(per_token=0, per_ip=1)
    with slots.held("2001:db8::1", None), pytest.raises(GraphQLError):
        slots.held("2001:db8::2", None).__enter__()


def test_zero_is_no_cap() -> None:
    slots = Slots(0, 0)
    held = [slots.held("1.1.1.1", "t") for _ in range(100)]
    for h in held:
        h.__enter__()
    assert len(slots) == 100


def test_the_pace_lets_a_burst_through_then_spaces_events() -> None:
    clock = FakeClock()
    pace = Pace(10, clock)
    assert [pace.delay() for _ in range(10)] == [0.0] * 10
    assert pace.delay() == pytest.approx(0.1)
    assert pace.delay() == pytest.approx(0.2)  # each waits its turn
    clock.now += 10
    assert pace.delay() == 0.0
    assert Pace(0, clock).delay() == 0.0  # 0: no pace


async def test_a_replay_of_a_caller_whose_budgets_are_dry_ends_rate_limited() -> None:
    meter = Meter()
    await gate(meter, replayed=True)
    meter.dry_until = time.monotonic() + 4
    with pytest.raises(GraphQLError) as ended:
        await gate(Meter(parent=meter), replayed=True)
    assert ended.value.extensions is not None
    assert ended.value.extensions["code"] == "RATE_LIMITED"
    assert 3 < ended.value.extensions["retryAfter"] <= 4
    assert "afterSeq" in ended.value.message


def test_a_connection_replays_its_minute_then_is_refused_until_there_is_room_again() -> None:
    clock = FakeClock()
    pace = Pace(0, clock, minute=ReplayMinute(300, clock))  # 5 a second refill; no pace
    assert [pace.replay() for _ in range(300)] == [0.0] * 300
    wait = pace.replay()
    assert wait == pytest.approx(REPLAY_ROOM * 60 / 300)  # until 100 fit again, not 1
    clock.now += 1.0  # 5 back: still refused, the rest of the wait told
    assert pace.replay() == pytest.approx(wait - 1.0)
    clock.now += wait - 1.0
    assert [pace.replay() for _ in range(REPLAY_ROOM)] == [0.0] * REPLAY_ROOM
    assert pace.replay() > 0
    assert Pace(10, clock).replay() == 0.0  # 0: no cap


async def test_a_replay_past_its_connections_minute_ends_rate_limited_a_live_event_never() -> None:
    clock = FakeClock()
    pace = Pace(0, clock, minute=ReplayMinute(2, clock))
    await gate(None, pace, replayed=True)
    await gate(None, pace, replayed=True)
    with pytest.raises(GraphQLError) as ended:
        await gate(None, pace, replayed=True)
    assert ended.value.extensions is not None
    assert ended.value.extensions["code"] == "RATE_LIMITED"
    assert ended.value.extensions["retryAfter"] == pytest.approx(60.0)  # room for 2 (< 100)
    assert "afterSeq" in ended.value.message
    await gate(None, pace, replayed=False)  # live: never cut


async def test_a_live_event_is_sent_whatever_the_callers_budgets() -> None:
    meter = Meter()
    meter.dry_until = time.monotonic() + 4
    await gate(meter, None, replayed=False)
    with pytest.raises(GraphQLError):
        await gate(meter, None, replayed=True)


def test_a_callers_connections_share_its_replays_a_minute() -> None:
    """A caller that reconnects (or opens more sockets) starts with what it
    left, not a fresh minute; another token, or another address, has its own."""
    clock = FakeClock()
    replays = Replays(per_minute=150, clock=clock)
    first = Pace(0, clock, minute=replays.of("1.1.1.1", "t"))
    assert [first.replay() for _ in range(150)] == [0.0] * 150
    again = Pace(0, clock, minute=replays.of("1.1.1.1", "t"))  # a new connection
    assert again.dry() == 0.0  # not yet known dry: its first replayed event tells
    assert again.replay() == pytest.approx(REPLAY_ROOM * 60 / 150)
    assert again.dry() > 0  # the next subscription is refused before it reads
    for other in (replays.of("1.1.1.1", "u"), replays.of("2.2.2.2", "t")):
        assert other is not None
        assert Pace(0, clock, minute=other).replay() == 0.0
    assert replays.of("1.1.1.1", None) is not replays.of("1.1.1.2", None)  # anonymous: by IP
    assert Replays(0, clock).of("1.1.1.1", "t") is None  # 0: no cap


def test_the_callers_kept_are_bounded_and_a_dry_one_is_not_forgotten(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = FakeClock()
    monkeypatch.setattr(stream_limits, "CALLERS_KEPT", 3)
    replays = Replays(per_minute=10, clock=clock)
    dry = replays.of("9.9.9.9", None)
    assert dry is not None
    while not dry.take():
        pass
    for i in range(10):
        replays.of(f"1.1.1.{i}", None)  # each full: forgotten at no loss
        assert len(replays) <= 3
    assert replays.of("9.9.9.9", None) is dry  # still dry: kept
