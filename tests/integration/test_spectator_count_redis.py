"""Spectator counts across instances in Redis (issue #28): two instances'
counts sum, an instance that stops refreshing drops out once its field
expires, one that closes removes its field at once, and Redis away never
fails a read. Each "instance" is its own in-process bus and counter; every
test uses its own key prefix."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack

import pytest
import redis.asyncio as aioredis

from domain.channels import game_channel
from infra.bus.memory import InProcessBus
from infra.spectators.keys import spectators_key
from infra.spectators.local import LocalSpectators, bus_channels
from infra.spectators.redis import RedisSpectators
from tests.integration.redis_support import eventually, free_port

pytestmark = [pytest.mark.services, pytest.mark.timeout(30)]

Instance = tuple[InProcessBus, RedisSpectators]
Factory = Callable[..., Instance]


@pytest.fixture
async def make(redis_url: str, prefix: str) -> AsyncIterator[Factory]:
    made: list[RedisSpectators] = []

    def build(interval: float = 5.0, url: str = redis_url) -> Instance:
        bus = InProcessBus()
        counts = RedisSpectators(url, LocalSpectators(bus, bus_channels(bus)), prefix, interval)
        made.append(counts)
        return bus, counts

    yield build
    for counts in made:
        await counts.aclose()


async def watch(stack: AsyncExitStack, bus: InProcessBus, game_id: str, n: int) -> None:
    for _ in range(n):
        await stack.enter_async_context(bus.subscribe(game_channel(game_id, None)))


async def test_two_instances_counts_sum_and_a_closed_one_leaves_at_once(make: Factory) -> None:
    (bus_a, a), (bus_b, b) = make(), make()
    async with AsyncExitStack() as stack:
        await watch(stack, bus_a, "g1", 3)
        await watch(stack, bus_b, "g1", 2)
        await watch(stack, bus_b, "g2", 1)
        await stack.enter_async_context(bus_b.subscribe(game_channel("g1", 0)))  # a seat
        assert await a.count("g1") == 3  # B has not written yet: A's own, read live
        await b.publish()
        await a.publish()
        # A's read of the others was just cached; B reads afresh
        assert await b.count("g1") == 5 and await b.count("g2") == 1
        await eventually(lambda: _is(a.count("g1"), 5), what="A to see B's spectators")
        await b.aclose()
        await eventually(lambda: _is(a.count("g1"), 3), what="B's field removed")


async def test_an_instance_that_stops_refreshing_drops_out_when_its_field_expires(
    make: Factory, admin: aioredis.Redis, prefix: str
) -> None:
    (_, a), (bus_b, b) = make(), make(interval=0.2)  # B's field lives 0.6 s
    async with AsyncExitStack() as stack:
        await watch(stack, bus_b, "g1", 4)
        await b.publish()  # then never again: as if B died
        await eventually(lambda: _is(a.count("g1"), 4), what="A to see B's spectators")
        await eventually(lambda: _is(a.count("g1"), 0), what="B's field to expire")
        await eventually(
            lambda: _gone(admin, spectators_key(prefix, "g1")), what="the key to expire"
        )


async def test_a_game_nobody_watches_any_more_is_removed_at_the_next_write(
    make: Factory, admin: aioredis.Redis, prefix: str
) -> None:
    (_, a), (bus_b, b) = make(), make()
    key = spectators_key(prefix, "g1")
    async with AsyncExitStack() as stack:
        await watch(stack, bus_b, "g1", 2)
        await b.publish()
        assert set(await admin.hkeys(key)) == {b.instance}
    await b.publish()
    assert await admin.exists(key) == 0
    assert await a.count("g1") == 0


async def test_the_key_has_the_game_as_its_hash_tag(prefix: str) -> None:
    assert spectators_key(prefix, "abc") == f"{prefix}game:{{abc}}:spectators"


async def test_redis_away_never_fails_a_read(make: Factory) -> None:
    bus, counts = make(url=f"redis://127.0.0.1:{free_port()}/0")  # nothing listens there
    async with AsyncExitStack() as stack:
        await watch(stack, bus, "g1", 2)
        assert await counts.count("g1") == 2


async def _is(count: Awaitable[int], expected: int) -> bool:
    return await count == expected


async def _gone(admin: aioredis.Redis, key: str) -> bool:
    return bool(await admin.exists(key) == 0)
