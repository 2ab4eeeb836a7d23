"""Presence and token revocation notices on a Redis Cluster (docs/decisions/0068),
against a local cluster (tests/redis_cluster.py): a game's presence keys
live in its hash slot, the heartbeat refreshes games spread over every
master, and notices go over a shard channel that survives a failover of its
master. (Rate limits and persisted queries run their own tests on the
cluster too: tests/integration/test_redis_rate_limit.py,
tests/adapters/test_persisted_queries.py.)
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime

import pytest

from domain.presence import Mark
from infra.presence.redis import RedisPresence
from infra.revocations.redis import CHANNEL, RedisRevocations
from tests.integration.redis_support import eventually, stray_task_errors
from tests.integration.test_redis_revocations import DIGEST, OTHER, Listener
from tests.redis_cluster import FAILOVER_TIMEOUT, LocalCluster, redis_cluster, slot_of

__all__ = ["redis_cluster"]  # the fixture

pytestmark = [pytest.mark.services, pytest.mark.timeout(90)]

NOTICE_TIMEOUT = 5.0
THIRD = "c" * 64  # a token digest
RECOVERY = FAILOVER_TIMEOUT + 10.0
TTL = 2.0  # seconds a presence entry lives unrefreshed: ample for a loaded machine


no_stray_task_errors = pytest.fixture(autouse=True)(stray_task_errors)


@pytest.fixture
def prefix() -> str:
    return f"test-{uuid.uuid4().hex[:12]}:"


@pytest.fixture
async def presences(
    redis_cluster: LocalCluster, prefix: str
) -> AsyncIterator[Callable[..., RedisPresence]]:
    made: list[RedisPresence] = []

    def build(ttl: float = 15.0) -> RedisPresence:
        p = RedisPresence(redis_cluster.url, prefix, ttl)
        made.append(p)
        return p

    yield build
    for p in made:
        await p.aclose()


@pytest.fixture
async def notices(
    redis_cluster: LocalCluster, prefix: str
) -> AsyncIterator[Callable[[], tuple[RedisRevocations, Listener]]]:
    made: list[RedisRevocations] = []

    def build() -> tuple[RedisRevocations, Listener]:
        n = RedisRevocations(redis_cluster.url, prefix, recheck=3600.0)
        listener = Listener()
        n.listen(listener)
        n.start()
        made.append(n)
        return n, listener

    yield build
    for n in made:
        await n.aclose()


# ---------------------------------------------------------------- presence
async def test_presence_across_instances_with_games_on_every_master(
    redis_cluster: LocalCluster, presences: Callable[..., RedisPresence], prefix: str
) -> None:
    by_master: dict[int, list[str]] = {}
    for g in (uuid.uuid4().hex for _ in range(300)):  # 12 random games may miss a master
        by_master.setdefault(redis_cluster.owner(slot_of(g)).port, []).append(g)
    assert len(by_master) == 3
    games = [g for mine in by_master.values() for g in mine[:4]]
    for g in games:
        assert slot_of(f"{prefix}presence:{{{g}}}") == slot_of(f"{prefix}presence-marks:{{{g}}}")
        assert slot_of(f"{prefix}presence:{{{g}}}") == slot_of(g), "the game's own slot"
    live, other = presences(ttl=TTL), presences()
    for g in games:
        await live.join(g, "ann")
    await other.join(games[0], "bob")
    loop = asyncio.get_running_loop()
    past_the_ttl = loop.time() + TTL * 1.5
    while loop.time() < past_the_ttl:  # kept by heartbeats far more often than the ttl
        await asyncio.sleep(TTL / 8)
        await live.heartbeat()
    for g in games:
        expected = {"ann", "bob"} if g == games[0] else {"ann"}
        assert await other.online(g) == expected, g
    await live.leave(games[1], "ann")
    assert await other.online(games[1]) == frozenset()
    away = Mark(connected=True, away_since=datetime(2026, 1, 1, 12, tzinfo=UTC))
    assert await live.swap(games[2], "ann", None, away)
    assert not await other.swap(games[2], "ann", None, Mark(True))
    assert (await other.seen(games[2]))[1] == {"ann": away}
    for g in games:  # both keys in one script: the game's slot, on its master
        assert (await other.seen(g))[0] == await other.online(g), g
    await live.aclose()  # a clean shutdown: its entries go, on every master
    for g in games[2:]:
        assert await other.online(g) == frozenset(), g


# ---------------------------------------------------------------- revocations
async def _subscribed(*pairs: tuple[RedisRevocations, Listener], misses: int = 1) -> None:
    for n, listener in pairs:

        def ready(n: RedisRevocations = n, listener: Listener = listener) -> bool:
            return n.connected and listener.misses >= misses

        await eventually(ready, RECOVERY, "the subscription")


async def test_notices_go_over_a_shard_channel_and_survive_its_masters_failover(
    redis_cluster: LocalCluster,
    notices: Callable[[], tuple[RedisRevocations, Listener]],
    prefix: str,
) -> None:
    a, b = notices(), notices()
    await _subscribed(a, b)
    channel = prefix + CHANNEL
    master = redis_cluster.owner(slot_of(channel))
    reply = master.ask("PUBSUB", "SHARDNUMSUB", channel)
    assert isinstance(reply, list) and int(reply[1]) == 2, reply
    await a[0].announce(DIGEST)
    await eventually(lambda: b[1].heard == [DIGEST], NOTICE_TIMEOUT, "the notice")

    redis_cluster.kill(master)
    try:
        await a[0].announce(OTHER)  # kept, sent again once a master answers
        assert a[1].heard == [DIGEST, OTHER], "this instance's listeners: at once"
        await asyncio.to_thread(redis_cluster.wait_failover, slot_of(channel), master)
        await _subscribed(a, b, misses=2)  # subscribed again: every token checked again
        await eventually(lambda: not a[0]._pending, RECOVERY, "the kept notice sent")
        # b heard it, or it went before b subscribed again: b's check covers it
        await a[0].announce(THIRD)
        await eventually(lambda: b[1].heard[-1:] == [THIRD], NOTICE_TIMEOUT, "a new notice")
        assert b[1].heard in ([DIGEST, OTHER, THIRD], [DIGEST, THIRD]), b[1].heard
        assert a[0].reconnects >= 1 and b[0].reconnects >= 1
    finally:
        await asyncio.to_thread(redis_cluster.revive, master)
