"""Presence in Redis against a real Redis (docs/decisions/0047): entries of
several instances, expiry when an instance dies without cleaning up (its
heartbeats stop), heartbeats that keep entries alive, the marks'
compare-and-swap, and a disconnect announced once across instances.

Every test uses its own key prefix, so runs on a shared Redis do not collide.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime, timedelta

import pytest
import redis.asyncio as aioredis

from domain.channels import presence_channel
from domain.ports import PresenceUnavailable
from domain.presence import Mark, PresenceChange
from domain.services.deps import Deps
from domain.services.games import NewGame, create_game, join_game, start_game
from domain.services.players import create_player
from domain.services.seat_presence import attending, review
from domain.services.transaction import Request
from infra.bus.redis import RedisBus
from infra.presence.redis import RedisPresence, decode, encode
from tests.fakes import FakeClock, FakeIds, FakeUnitOfWork, Store, run_inline
from tests.integration.redis_support import Collector, eventually, free_port

pytestmark = [pytest.mark.services, pytest.mark.timeout(30)]

Factory = Callable[..., RedisPresence]


@pytest.fixture
async def make(redis_url: str, prefix: str) -> AsyncIterator[Factory]:
    """Instances with this test's prefix; each closed afterwards."""
    made: list[RedisPresence] = []

    def build(ttl: float = 15.0) -> RedisPresence:
        p = RedisPresence(redis_url, prefix, ttl)
        made.append(p)
        return p

    yield build
    for p in made:
        await p.aclose()


async def test_a_player_is_online_while_any_instance_has_them(make: Factory) -> None:
    a, b = make(), make()
    await a.join("g1", "ann")
    await b.join("g1", "ann")
    await b.join("g1", "ann")  # two subscriptions on b
    await a.join("g2", "bob")
    assert await b.online("g1") == {"ann"}
    assert await a.online("g2") == {"bob"}
    await a.leave("g1", "ann")
    await b.leave("g1", "ann")
    assert await a.online("g1") == {"ann"}  # b still has one
    await b.leave("g1", "ann")
    assert await a.online("g1") == frozenset()
    await b.leave("g1", "ann")  # one leave too many changes nothing
    assert await a.online("g1") == frozenset()
    assert a.local_games() == {"g2"} and b.local_games() == set()


async def test_entries_of_an_instance_that_died_expire(
    make: Factory, admin: aioredis.Redis, prefix: str, redis_url: str
) -> None:
    """No cleanup, no heartbeat: the entry goes after its ttl, then the key."""
    survivor = make()
    dead = RedisPresence(redis_url, prefix, ttl=0.3)
    await dead.join("g1", "ann")
    await dead._client.aclose()  # the process is gone: no leave, no aclose, no heartbeat
    assert await survivor.online("g1") == {"ann"}
    await eventually(lambda: _offline(survivor, "g1"), 3, "the entry expired")
    await eventually(lambda: _gone(admin, f"{prefix}presence:{{g1}}"), 3, "the key expired")


async def test_who_is_online_and_the_marks_are_read_together(
    make: Factory, admin: aioredis.Redis, prefix: str, redis_url: str
) -> None:
    """``seen``: ``online`` and ``marks`` in one script, an expired entry
    dropped as ``online`` drops it, a mark not of ours left out as
    ``marks`` leaves it (issue #28: a review's one round trip)."""
    a, b = make(), make()
    dead = RedisPresence(redis_url, prefix, ttl=2.0)
    assert await a.seen("g1") == (frozenset(), {})
    await a.join("g1", "ann")
    await b.join("g1", "bob")
    await dead.join("g1", "cid")
    await dead._client.aclose()  # no heartbeat: cid's entry expires
    away = Mark(connected=True, away_since=datetime(2026, 1, 1, 12, tzinfo=UTC))
    assert await a.swap("g1", "ann", None, Mark(connected=True))
    assert await a.swap("g1", "dan", None, away)
    await admin.hset(f"{prefix}presence-marks:{{g1}}", "eve", "not a mark")
    online, marks = await b.seen("g1")
    assert online == {"ann", "bob", "cid"} == await b.online("g1")
    assert marks == {"ann": Mark(connected=True), "dan": away}
    await eventually(lambda: _offline_but(b, "g1", {"ann", "bob"}), 8, "cid's entry expired")
    assert (await b.seen("g1"))[0] == {"ann", "bob"}


async def _offline_but(p: RedisPresence, game_id: str, left: set[str]) -> bool:
    return (await p.seen(game_id))[0] == left


async def test_heartbeats_keep_entries_alive(make: Factory) -> None:
    live, other = make(ttl=0.3), make()
    await live.join("g1", "ann")
    for _ in range(8):  # 0.8 s: well past the ttl
        await asyncio.sleep(0.1)
        await live.heartbeat()
    assert await other.online("g1") == {"ann"}


async def test_a_clean_shutdown_removes_the_entries(make: Factory) -> None:
    leaving, other = make(), make()
    await leaving.join("g1", "ann")
    await leaving.aclose()
    assert await other.online("g1") == frozenset()


async def test_marks_are_swapped_only_from_what_they_are(make: Factory) -> None:
    a, b = make(), make()
    away = Mark(connected=True, away_since=datetime(2026, 1, 1, 12, tzinfo=UTC))
    assert await a.swap("g1", "ann", None, Mark(True))
    assert not await b.swap("g1", "ann", None, Mark(True))  # already set
    assert await b.swap("g1", "ann", Mark(True), away)
    assert not await a.swap("g1", "ann", Mark(True), Mark(False))
    assert (await a.seen("g1"))[1] == {"ann": away}
    assert await a.swap("g1", "ann", away, Mark(False))
    assert (await b.seen("g1"))[1] == {"ann": Mark(False)}


def test_marks_encode_and_decode() -> None:
    at = datetime(2026, 1, 1, 12, 30, tzinfo=UTC)
    for mark in (Mark(True), Mark(False), Mark(True, at)):
        assert decode(encode(mark)) == mark
    assert encode(None) == ""
    assert decode("1:not a time") is None and decode("x") is None


async def test_a_disconnect_is_announced_once_across_instances(
    make: Factory, redis_url: str, prefix: str
) -> None:
    """The player's instance and another review the game at once, after the
    grace: one announcement, heard by a subscriber on a third instance."""
    store, clock = Store(), FakeClock()
    buses = [RedisBus(redis_url, prefix) for _ in range(3)]
    a, b = (_deps(store, bus, make(), clock) for bus in buses[:2])
    try:
        gid, ids = await _new_game(a)
        async with buses[2].subscribe(presence_channel(gid)) as sub:
            heard = Collector(sub)
            async with attending(a, gid, ids[1]):
                await heard.wait_data(1)
            clock.advance(timedelta(seconds=14))
            assert await review(b, gid) == []
            clock.advance(timedelta(seconds=1))
            done = await asyncio.gather(review(a, gid), review(b, gid), review(a, gid))
            assert sorted(len(d) for d in done) == [0, 0, 1]
            got = await heard.wait_data(2)
            assert got == [PresenceChange(gid, 1, True), PresenceChange(gid, 1, False)]
            await asyncio.sleep(0.1)
            assert len(heard.data) == 2
            await heard.stop()
    finally:
        for bus in buses:
            await bus.aclose()


async def _offline(p: RedisPresence, game_id: str) -> bool:
    return not await p.online(game_id)


async def _gone(admin: aioredis.Redis, key: str) -> bool:
    return not await admin.exists(key)


def _deps(store: Store, bus: RedisBus, presence: RedisPresence, clock: FakeClock) -> Deps:
    return Deps(
        uow=lambda: FakeUnitOfWork(store),
        run=run_inline,
        bus=bus,
        clock=clock,
        ids=FakeIds(),
        schedule_bots=lambda _game_id: None,
        presence=presence,
        presence_grace=timedelta(seconds=15),
    )


async def _new_game(deps: Deps) -> tuple[str, list[str]]:
    ids = [(await create_player(deps, f"p{i}")).player.id for i in range(3)]
    game = await create_game(deps, Request(ids[0], "createGame", {}), NewGame(3))
    for pid in ids[1:]:
        await join_game(deps, Request(pid, "joinGame", {}), game.game_id, None)
    await start_game(deps, Request(ids[0], "startGame", {}), game.game_id)
    return game.game_id, ids


@pytest.mark.parametrize("scheme", ["redis", "redis+cluster"])
async def test_reads_with_redis_away_are_presence_unavailable(scheme: str) -> None:
    """What the callers catch (presence is best effort): a read of a store
    whose Redis does not answer says so, and writes log and carry on; also
    on a cluster (``RedisClusterException``: no node reachable)."""
    away = RedisPresence(f"{scheme}://127.0.0.1:{free_port()}/0")
    try:
        for read in (away.online("g"), away.seen("g"), away.swap("g", "p", None, Mark(True))):
            with pytest.raises(PresenceUnavailable):
                await read
        await away.join("g", "p")  # logged; the next heartbeat writes it
        await away.leave("g", "p")
    finally:
        await away.aclose()
