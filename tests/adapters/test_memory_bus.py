"""The in-process bus: per-audience channels, bounded queues, slow
subscribers dropped with a reason."""

from __future__ import annotations

import asyncio

import pytest

from domain.ports import SubscriptionClosed
from infra.bus.memory import InProcessBus


async def test_a_subscriber_gets_only_its_channel_in_order() -> None:
    bus = InProcessBus()
    async with bus.subscribe("game:1:seat:0") as mine, bus.subscribe("game:1:seat:1") as theirs:
        await bus.publish(
            [
                ("game:1:seat:0", {"n": 1}),
                ("game:1:seat:1", {"n": "x"}),
                ("game:1:seat:0", {"n": 2}),
            ]
        )
        it = aiter(mine)
        assert [await anext(it), await anext(it)] == [{"n": 1}, {"n": 2}]
        assert await anext(aiter(theirs)) == {"n": "x"}
    assert bus.subscriber_count() == 0


async def test_nothing_is_kept_for_a_channel_nobody_listens_to() -> None:
    bus = InProcessBus()
    await bus.publish([("lobby", {"n": 1})])
    async with bus.subscribe("lobby") as sub:
        await bus.publish([("lobby", {"n": 2})])
        assert await anext(aiter(sub)) == {"n": 2}


async def test_a_slow_subscriber_is_dropped_with_a_reason_and_others_go_on() -> None:
    bus = InProcessBus(queue_limit=10)
    async with bus.subscribe("c") as slow, bus.subscribe("c") as fast:
        it = aiter(fast)
        for n in range(25):
            await bus.publish([("c", {"n": n})])
            assert await anext(it) == {"n": n}
        with pytest.raises(SubscriptionClosed, match="slow subscriber"):
            await anext(aiter(slow))
        assert bus.subscriber_count("c") == 1 and bus.dropped == 1


async def test_a_waiting_subscriber_wakes_on_publish_and_on_close() -> None:
    bus = InProcessBus()
    async with bus.subscribe("c") as sub:
        waiting = asyncio.ensure_future(anext(aiter(sub)))
        await asyncio.sleep(0)
        assert not waiting.done()
        await bus.publish([("c", {"n": 1})])
        assert await asyncio.wait_for(waiting, 1) == {"n": 1}
        waiting = asyncio.ensure_future(anext(aiter(sub)))
        await asyncio.sleep(0)
        await bus.aclose()
        with pytest.raises(SubscriptionClosed, match="shutting down"):
            await asyncio.wait_for(waiting, 1)
