"""The in-process bus: per-audience channels, bounded queues, slow
subscribers dropped with a reason."""

from __future__ import annotations

import asyncio

import pytest

from domain.ports import SubscriptionClosed
from domain.records import GameStatus, LobbyUpdate
from infra.bus.memory import InProcessBus


def msg(n: int | str) -> LobbyUpdate:
    """A message, told apart by ``n``."""
    return LobbyUpdate(f"g{n}", GameStatus.LOBBY, 4, 1, 0)


async def test_a_subscriber_gets_only_its_channel_in_order() -> None:
    bus = InProcessBus()
    async with bus.subscribe("game:1:seat:0") as mine, bus.subscribe("game:1:seat:1") as theirs:
        await bus.publish(
            [
                ("game:1:seat:0", msg(1)),
                ("game:1:seat:1", msg("x")),
                ("game:1:seat:0", msg(2)),
            ]
        )
        it = aiter(mine)
        assert [await anext(it), await anext(it)] == [msg(1), msg(2)]
        assert await anext(aiter(theirs)) == msg("x")
    assert bus.subscriber_count() == 0


async def test_nothing_is_kept_for_a_channel_nobody_listens_to() -> None:
    bus = InProcessBus()
    await bus.publish([("lobby", msg(1))])
    async with bus.subscribe("lobby") as sub:
        await bus.publish([("lobby", msg(2))])
        assert await anext(aiter(sub)) == msg(2)


async def test_a_slow_subscriber_is_dropped_with_a_reason_and_others_go_on() -> None:
    bus = InProcessBus(queue_limit=10)
    async with bus.subscribe("c") as slow, bus.subscribe("c") as fast:
        it = aiter(fast)
        for n in range(25):
            await bus.publish([("c", msg(n))])
            assert await anext(it) == msg(n)
        with pytest.raises(SubscriptionClosed, match="slow subscriber"):
            await anext(aiter(slow))
        assert bus.subscriber_count("c") == 1 and bus.dropped == 1


async def test_a_waiting_subscriber_wakes_on_publish_and_on_close() -> None:
    bus = InProcessBus()
    async with bus.subscribe("c") as sub:
        waiting = asyncio.ensure_future(anext(aiter(sub)))
        await asyncio.sleep(0)
        assert not waiting.done()
        await bus.publish([("c", msg(1))])
        assert await asyncio.wait_for(waiting, 1) == msg(1)
        waiting = asyncio.ensure_future(anext(aiter(sub)))
        await asyncio.sleep(0)
        await bus.aclose()
        with pytest.raises(SubscriptionClosed, match="shutting down"):
            await asyncio.wait_for(waiting, 1)
