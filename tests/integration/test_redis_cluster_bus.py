"""The Redis bus on a Redis Cluster (docs/decisions/0068), against a local
cluster of three masters and three replicas (tests/redis_cluster.py): a
game's channels share one hash slot while games spread over the shards;
sharded pub/sub per audience, for the lobby and players' channels too;
unsubscribing; and a master lost to a failover, or handed over by a manual
one, costs subscribers a resync and loses no publish.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack
from typing import Any

import pytest
from redis.asyncio.client import PubSub
from redis.exceptions import ConnectionError as RedisConnectionError

from domain.channels import LOBBY, game_channel, notice_channel, presence_channel
from domain.ports import RESYNC
from infra.bus.redis import RedisBus
from infra.redis_client import cluster_url
from tests.integration.redis_support import Collector, eventually, note, number, stray_task_errors
from tests.redis_cluster import (
    FAILOVER_TIMEOUT,
    ClusterNode,
    LocalCluster,
    redis_cluster,
    slot_of,
)

__all__ = ["redis_cluster"]  # the fixture

pytestmark = [pytest.mark.services, pytest.mark.timeout(90)]

BusFactory = Callable[[], RedisBus]
RECOVERY = FAILOVER_TIMEOUT + 10.0  # a failover, then the bus's backoff and resubscription


no_stray_task_errors = pytest.fixture(autouse=True)(stray_task_errors)


@pytest.fixture
def prefix() -> str:
    return f"test-{uuid.uuid4().hex[:12]}:"


@pytest.fixture
async def make_bus(redis_cluster: LocalCluster, prefix: str) -> AsyncIterator[BusFactory]:
    """Buses (as server processes) on the cluster; closed afterwards."""
    buses: list[RedisBus] = []

    def make() -> RedisBus:
        bus = RedisBus(redis_cluster.url, prefix)
        buses.append(bus)
        return bus

    yield make
    for bus in buses:
        await bus.aclose()


def shard_subscribers(cluster: LocalCluster, channel: str) -> int:
    """``PUBSUB SHARDNUMSUB`` of ``channel`` on the master serving its slot."""
    reply = cluster.owner(slot_of(channel)).ask("PUBSUB", "SHARDNUMSUB", channel)
    assert isinstance(reply, list), reply
    return int(reply[1])


def plain_subscribers(cluster: LocalCluster, channel: str) -> int:
    reply = cluster.owner(slot_of(channel)).ask("PUBSUB", "NUMSUB", channel)
    assert isinstance(reply, list), reply
    return int(reply[1])


# ---------------------------------------------------------------- 1. names
def test_a_games_channels_hash_to_one_slot_and_games_spread(redis_cluster: LocalCluster) -> None:
    games = [uuid.uuid4().hex for _ in range(60)]
    for game in games:
        names = [game_channel(game, None), presence_channel(game)]
        names += [game_channel(game, seat) for seat in range(8)]
        slots = {slot_of("mmk:" + name) for name in names}
        assert slots == {slot_of(game)}, names
    owners = {redis_cluster.owner(slot_of(game)).port for game in games}
    players = {redis_cluster.owner(slot_of(notice_channel(uuid.uuid4().hex))).port for _ in games}
    assert len(owners) == 3 and len(players) == 3, "games and players spread over the masters"
    assert cluster_url("redis+cluster://h:7000/0") == "redis://h:7000/0"
    assert cluster_url("rediss+cluster://u:p@h:7000") == "rediss://u:p@h:7000"
    assert cluster_url("redis://h:6379/0") is None


# ---------------------------------------------------------------- 2. audiences
async def test_each_audience_gets_its_own_channel_in_order_over_sharded_pubsub(
    redis_cluster: LocalCluster, make_bus: BusFactory, prefix: str
) -> None:
    """Two processes: one publishes to every audience of two games, the
    lobby and two players; the other's subscribers get their channel only,
    in publish order, through shard channels (``SHARDNUMSUB``, no plain
    subscriber)."""
    publisher, subscriber = make_bus(), make_bus()
    game, other = uuid.uuid4().hex, uuid.uuid4().hex
    ann, bob = uuid.uuid4().hex, uuid.uuid4().hex
    wanted = [
        game_channel(game, 0),
        game_channel(game, 1),
        game_channel(game, None),
        presence_channel(game),
        LOBBY,
        notice_channel(ann),
    ]
    unwanted = [game_channel(game, 2), game_channel(other, 0), notice_channel(bob)]
    async with AsyncExitStack() as stack:
        collectors = {
            ch: Collector(await stack.enter_async_context(subscriber.subscribe(ch)))
            for ch in wanted
        }
        for ch in wanted:
            assert shard_subscribers(redis_cluster, prefix + ch) == 1, ch
            assert plain_subscribers(redis_cluster, prefix + ch) == 0, ch
        for i in range(20):
            await publisher.publish([(ch, note(ch, i)) for ch in [*wanted, *unwanted]])
        for ch, c in collectors.items():
            got = await c.wait_data(20)
            assert got == [note(ch, i) for i in range(20)], ch
            assert c.resyncs() <= 1  # the first connection's
        for c in collectors.values():
            await c.stop()
    assert publisher.published == 20 * 9 and publisher.publish_failures == 0


async def test_leaving_unsubscribes_the_shard_channel_and_coming_back_works(
    redis_cluster: LocalCluster, make_bus: BusFactory, prefix: str
) -> None:
    bus, publisher = make_bus(), make_bus()
    channel = game_channel(uuid.uuid4().hex, None)
    async with bus.subscribe(channel), bus.subscribe(channel):
        assert shard_subscribers(redis_cluster, prefix + channel) == 1  # counted here
    await eventually(
        lambda: shard_subscribers(redis_cluster, prefix + channel) == 0, 5, "unsubscribed"
    )
    async with bus.subscribe(channel) as sub:
        c = Collector(sub)
        await publisher.publish([(channel, note("back", 1))])
        assert [number(m) for m in await c.wait_data(1)] == [1]
        await c.stop()
    assert bus.reconnects == 0, "our own sunsubscribe is no moved channel"


# ---------------------------------------------------------------- 3. failover
async def test_a_dead_master_is_failed_over_its_subscribers_resync_and_the_outbox_is_sent(
    redis_cluster: LocalCluster, make_bus: BusFactory, prefix: str
) -> None:
    """The master of a game's slot is SIGKILLed. The subscribing bus notices
    (its connection to that master breaks); a publish meanwhile waits in the
    outbox and goes once the replica took over; the game's subscriber is
    subscribed again there and told to resync (the kept message comes live,
    or through the resync's backfill when it went first), then gets new
    ones. A game on another master is not told to resync, and its messages
    do not wait behind the kept one. The master is the
    node ``REDIS_URL`` names, while it is one: the buses then find the
    cluster through the others."""
    publisher, subscriber = make_bus(), make_bus()
    named = redis_cluster.nodes[0]
    games = [uuid.uuid4().hex for _ in range(200)]
    master = named if redis_cluster.role(named) == "master" else redis_cluster.owner(0)
    game = next(g for g in games if redis_cluster.owner(slot_of(g)) is master)
    elsewhere = next(g for g in games if redis_cluster.owner(slot_of(g)) is not master)
    channel, other_channel = game_channel(game, None), game_channel(elsewhere, 0)
    async with (
        subscriber.subscribe(channel) as sub,
        subscriber.subscribe(other_channel) as other_sub,
    ):
        c, other = Collector(sub), Collector(other_sub)
        await publisher.publish([(channel, note(game, 1)), (other_channel, note(elsewhere, 1))])
        await c.wait_data(1)
        await other.wait_data(1)
        resyncs = c.resyncs(), other.resyncs()
        redis_cluster.kill(master)
        try:
            await eventually(lambda: subscriber._lost == {channel}, 5, "the bus noticed")
            assert subscriber.connected, "the other masters' channels stay subscribed"
            await publisher.publish([(channel, note(game, 2))])  # the master is dead
            assert publisher.publish_failures >= 1
            # another master's channel does not wait behind the kept message
            await publisher.publish([(other_channel, note(elsewhere, 2))])
            assert [ch for ch, _ in publisher._outbox] == [prefix + channel]
            assert [number(m) for m in await other.wait_data(2)] == [1, 2]
            promoted = await asyncio.to_thread(redis_cluster.wait_failover, slot_of(game), master)
            assert promoted is not master
            await eventually(lambda: c.resyncs() > resyncs[0], RECOVERY, "a resync")
            await eventually(lambda: not publisher._outbox, RECOVERY, "the outbox sent")
            await publisher.publish([(channel, note(game, 3)), (other_channel, note(elsewhere, 3))])
            got = [number(m) for m in await c.wait_data(2, RECOVERY) if number(m) != 2]
            assert got == [1, 3], c.messages
            after = c.messages[c.messages.index(note(game, 1)) + 1 :]
            assert after.index(RESYNC) < after.index(note(game, 3))
            assert [number(m) for m in await other.wait_data(3)] == [1, 2, 3]
            assert other.resyncs() == resyncs[1], "another master's game is not disturbed"
            assert shard_subscribers(redis_cluster, prefix + channel) == 1
            assert subscriber.reconnects >= 1 and subscriber.connected
            await c.stop()
            await other.stop()
        finally:
            await asyncio.to_thread(redis_cluster.revive, master)


async def test_a_manual_failover_moves_the_channel_and_subscribers_resync(
    redis_cluster: LocalCluster, make_bus: BusFactory, prefix: str
) -> None:
    """``CLUSTER FAILOVER`` on the replica: the old master, now a replica,
    drops the shard channel (an ``sunsubscribe`` nobody asked for); the bus
    subscribes on the new master and tells the subscriber to resync."""
    publisher, subscriber = make_bus(), make_bus()
    game = uuid.uuid4().hex
    channel = game_channel(game, 3)
    old = redis_cluster.owner(slot_of(game))
    async with subscriber.subscribe(channel) as sub:
        c = Collector(sub)
        replica = next(
            n
            for n in redis_cluster.nodes
            if redis_cluster.role(n) == "slave" and _master_port(n) == old.port
        )
        await publisher.publish([(channel, note(game, 1))])
        assert [number(m) for m in await c.wait_data(1, RECOVERY)] == [1]
        resyncs = c.resyncs()  # the first connection's, by now
        assert replica.ask("CLUSTER", "FAILOVER") in (b"OK", "OK", True)
        await eventually(
            lambda: redis_cluster.owner(slot_of(game)) is replica, FAILOVER_TIMEOUT, "handed over"
        )
        await eventually(lambda: c.resyncs() > resyncs, RECOVERY, "a resync")
        await eventually(
            lambda: shard_subscribers(redis_cluster, prefix + channel) == 1, RECOVERY, "moved"
        )
        await publisher.publish([(channel, note(game, 2))])
        assert [number(m) for m in await c.wait_data(2, RECOVERY)] == [1, 2]
        # the former master's connection, left without channels, is closed
        links = subscriber._pubsub._links
        await eventually(lambda: f"127.0.0.1:{old.port}" not in links, RECOVERY, "closed")
        await c.stop()
    await asyncio.to_thread(redis_cluster.wait_healthy)


# ---------------------------------------------------------------- 4. a subscribe that fails
async def _hold(bus: RedisBus, channel: str) -> None:
    async with bus.subscribe(channel):
        await asyncio.Event().wait()  # until cancelled


def _two_games_on_one_master(cluster: LocalCluster) -> tuple[str, str]:
    games = [uuid.uuid4().hex for _ in range(200)]
    master = cluster.owner(slot_of(games[0]))
    second = next(g for g in games[1:] if cluster.owner(slot_of(g)) is master)
    return games[0], second


async def test_a_subscribe_cancelled_while_it_is_sent_spares_the_masters_other_channels(
    redis_cluster: LocalCluster,
    make_bus: BusFactory,
    prefix: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A client leaves while its channel's ``SSUBSCRIBE`` is on its way (to a
    master that serves another channel here already): the other channel
    keeps its connection, its messages, and needs no resync; the left one
    is unsubscribed once sent."""
    publisher, subscriber = make_bus(), make_bus()
    first, second = _two_games_on_one_master(redis_cluster)
    channel, left = game_channel(first, None), game_channel(second, None)
    async with subscriber.subscribe(channel) as sub:
        c = Collector(sub)
        await publisher.publish([(channel, note(first, 1))])
        await c.wait_data(1)
        resyncs = c.resyncs()
        entered, release = asyncio.Event(), asyncio.Event()
        real = PubSub.ssubscribe

        async def held(self: PubSub, *args: Any, **kwargs: Any) -> Any:
            entered.set()
            await release.wait()
            return await real(self, *args, **kwargs)

        monkeypatch.setattr(PubSub, "ssubscribe", held)
        task = asyncio.create_task(_hold(subscriber, left))
        await asyncio.wait_for(entered.wait(), 5)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        monkeypatch.setattr(PubSub, "ssubscribe", real)
        release.set()
        await eventually(lambda: prefix + left not in subscriber._pubsub._node_of, 5, "left")
        await eventually(
            lambda: shard_subscribers(redis_cluster, prefix + left) == 0, 5, "unsubscribed"
        )
        await publisher.publish([(channel, note(first, 2))])
        assert [number(m) for m in await c.wait_data(2)] == [1, 2]
        assert c.resyncs() == resyncs, "nothing was lost"
        assert shard_subscribers(redis_cluster, prefix + channel) == 1
        await c.stop()


async def test_a_subscribe_that_meets_a_broken_connection_resyncs_the_masters_other_channels(
    redis_cluster: LocalCluster,
    make_bus: BusFactory,
    prefix: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The subscribing task is the first to see its master's connection
    broken (a failover): the master's other channel here is reported lost
    too, subscribed again and resynced, as is the new one."""
    publisher, subscriber = make_bus(), make_bus()
    first, second = _two_games_on_one_master(redis_cluster)
    channel, new = game_channel(first, None), game_channel(second, None)
    async with subscriber.subscribe(channel) as sub:
        c = Collector(sub)
        await publisher.publish([(channel, note(first, 1))])
        await c.wait_data(1)
        resyncs = c.resyncs()
        real = PubSub.ssubscribe

        async def broken(self: PubSub, *args: Any, **kwargs: Any) -> Any:
            monkeypatch.setattr(PubSub, "ssubscribe", real)  # once
            raise RedisConnectionError("Connection closed by server.")

        monkeypatch.setattr(PubSub, "ssubscribe", broken)
        async with subscriber.subscribe(new) as new_sub:
            n = Collector(new_sub)
            await eventually(lambda: c.resyncs() > resyncs, 10, "a resync")
            await eventually(lambda: n.resyncs() >= 1, 10, "a resync of the new channel")
            await eventually(lambda: not subscriber._lost, 10, "subscribed again")
            await publisher.publish([(channel, note(first, 2)), (new, note(second, 1))])
            assert [number(m) for m in await c.wait_data(2)] == [1, 2]
            assert [number(m) for m in await n.wait_data(1)] == [1]
            await n.stop()
        await c.stop()


def _master_port(replica: ClusterNode) -> int | None:
    reply = replica.ask("ROLE")
    if isinstance(reply, list) and len(reply) > 2:
        return int(reply[2])
    return None
