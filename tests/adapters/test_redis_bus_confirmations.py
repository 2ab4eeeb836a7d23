"""The Redis bus's subscribe and its wait for Redis' confirmations, without
Redis (infra/bus/redis.py): a subscribe cancelled while it waits leaves no
subscriber behind, and channels subscribed again after a cluster's failover
are resynced only once their own subscription is confirmed (another
channel's confirmation does not count), the others tried again later."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from domain.ports import RESYNC
from infra.bus import redis as bus_module
from infra.bus.redis import RedisBus

NOWHERE = "redis://127.0.0.1:1/0"  # nothing listens: the reader keeps reconnecting
CLUSTER_NOWHERE = "redis+cluster://127.0.0.1:1/0"
DEADLINE = 5.0


async def until(check: Callable[[], bool], what: str) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + DEADLINE
    while not check():
        assert loop.time() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.01)


@pytest.fixture
async def bus() -> AsyncIterator[RedisBus]:
    made = RedisBus(NOWHERE, "mmk-test:")
    yield made
    await made.aclose()


async def _subscribe_and_hold(bus: RedisBus, channel: str) -> None:
    async with bus.subscribe(channel):
        await asyncio.Event().wait()  # until cancelled


async def test_a_first_subscribe_cancelled_while_waiting_leaves_nothing(bus: RedisBus) -> None:
    """Redis away: the first subscriber waits for the first connection; its
    caller leaves meanwhile, and the channel goes with it."""
    task = asyncio.create_task(_subscribe_and_hold(bus, "game:g"))
    await until(lambda: "game:g" in bus.channels(), "the subscriber added")
    assert not task.done(), "still waiting for the confirmation"
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert "game:g" not in bus.channels()
    assert "game:g" not in bus._ready


async def test_a_second_subscribe_cancelled_while_waiting_leaves_the_first(
    bus: RedisBus, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bus_module, "CONFIRM_TIMEOUT", 0.05)
    async with bus.subscribe("game:g"):  # entered unconfirmed, after the wait
        monkeypatch.setattr(bus_module, "CONFIRM_TIMEOUT", 60.0)
        task = asyncio.create_task(_subscribe_and_hold(bus, "game:g"))
        await until(lambda: bus.subscriber_count("game:g") == 2, "the second subscriber")
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert bus.subscriber_count("game:g") == 1
    assert "game:g" not in bus.channels()


class FakeShards:
    """A ``ShardedPubSub`` stand-in: confirms what ``confirm`` names, once
    asked to subscribe."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.confirm: list[str] = []
        self.subscribed: list[str] = []
        self._inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

    async def ping(self) -> bool:
        return True

    async def subscribe(self, *channels: str) -> None:
        self.subscribed += channels
        for channel in self.confirm:
            self._inbox.put_nowait({"type": "subscribe", "channel": self.prefix + channel})

    async def get_message(self, timeout: float = 0.0) -> dict[str, Any] | None:
        try:
            async with asyncio.timeout(timeout):
                return await self._inbox.get()
        except TimeoutError:
            return None

    async def aclose(self) -> None:
        pass


async def test_channels_of_a_lost_master_resync_only_once_their_own_subscription_is_confirmed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The lost channel's subscription is not confirmed, another's is (a
    first subscribe of another channel, meanwhile): no resync, and the lost
    channel is tried again; once confirmed, its subscribers resync."""
    monkeypatch.setattr(bus_module, "CONFIRM_TIMEOUT", 0.2)
    bus = RedisBus(CLUSTER_NOWHERE, "mmk-test:")
    fake = FakeShards("mmk-test:")
    bus._pubsub = fake
    bus.connected = True
    try:
        lost, _ = bus._add("game:lost")
        other, _ = bus._add("game:other")
        bus._ready["game:lost"], bus._ready["game:other"] = asyncio.Event(), asyncio.Event()
        bus._lose(["game:lost"])
        fake.confirm = ["game:other"]
        await bus._recover_lost()
        assert fake.subscribed == ["mmk-test:game:lost"]
        assert list(lost._items) == [], "no resync before the channel is live"
        assert bus._lost == {"game:lost"}, "tried again later"
        assert bus._lost_backoff > bus_module.BACKOFF_MIN

        fake.confirm = ["game:lost"]
        await bus._recover_lost()
        assert list(lost._items) == [RESYNC]
        assert not bus._lost and bus._lost_backoff == bus_module.BACKOFF_MIN
        assert list(other._items) == []
    finally:
        bus._pubsub = None
        bus.connected = False
        await bus.aclose()
