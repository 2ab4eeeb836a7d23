"""The Redis pub/sub bus against a real Redis (no mocks): per-audience
channels across processes, one pub/sub connection per bus with
reference-counted channels, slow subscribers dropped, Redis going away
(outbox, reconnect, resync), game streams with no gap and no duplicate
across a Redis restart, and shutdown.

Every test uses its own channel prefix, so runs on a shared Redis do not
collide; the tests that stop Redis run their own private ``redis-server``.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AsyncExitStack, suppress
from pathlib import Path
from typing import Any

import pytest
import redis.asyncio as aioredis

from domain.game.engine import to_act
from domain.game.legal import legal_actions
from domain.log import LoggedEvent
from domain.ports import RESYNC, Resync, SubscriptionClosed
from domain.services.deps import Deps
from domain.services.games import NewGame, create_game, join_game, start_game
from domain.services.play import act
from domain.services.players import create_player
from domain.services.queries import read_events
from domain.services.streams import Heard, game_events
from domain.services.transaction import Request
from infra import codec
from infra.bus.redis import RedisBus, decoded
from infra.redis_client import DISCONNECTS
from tests.fakes import FakeClock, FakeIds, FakeUnitOfWork, Store, run_inline
from tests.integration.redis_support import (
    RECOVERING_TEST_TIMEOUT,
    RECOVERY_TIMEOUT,
    Collector,
    Message,
    PrivateRedis,
    eventually,
    note,
    number,
    stray_task_errors,
    with_query,
)

pytestmark = [pytest.mark.services, pytest.mark.timeout(30)]

BusFactory = Callable[..., RedisBus]


# ---------------------------------------------------------------- fixtures
no_stray_task_errors = pytest.fixture(autouse=True)(stray_task_errors)


@pytest.fixture
async def make_bus(prefix: str) -> AsyncIterator[BusFactory]:
    """Builds buses with this test's prefix; every one is closed afterwards."""
    buses: list[RedisBus] = []

    def make(url: str, queue_limit: int = 1000) -> RedisBus:
        bus = RedisBus(url, prefix, queue_limit)
        buses.append(bus)
        return bus

    yield make
    for bus in buses:
        await bus.aclose()


@pytest.fixture
def private_redis(redis_url: str, tmp_path: Path) -> Iterator[PrivateRedis]:
    """A redis-server of this test only (asks for ``redis_url`` so that these
    tests skip, or fail, exactly like the others when Redis is not there)."""
    server = PrivateRedis(tmp_path)
    server.start()
    try:
        yield server
    finally:
        server.stop()


async def _pubsub_clients(admin: aioredis.Redis, name: str) -> list[dict[str, Any]]:
    return [c for c in await admin.client_list(_type="pubsub") if c.get("name") == name]


async def _numsub(admin: aioredis.Redis, channels: list[str]) -> dict[str, int]:
    return {str(ch): int(n) for ch, n in await admin.pubsub_numsub(*channels)}


# ---------------------------------------------------------------- 1. channels
async def test_a_subscriber_gets_only_its_channel_in_publish_order(
    redis_url: str, make_bus: BusFactory
) -> None:
    """Two processes: one publishes, the other subscribes per audience."""
    publisher, subscriber = make_bus(redis_url), make_bus(redis_url)
    audiences = ["game:1:seat:0", "game:1:seat:1", "game:1:public"]
    async with AsyncExitStack() as stack:
        collectors = {
            ch: Collector(await stack.enter_async_context(subscriber.subscribe(ch)))
            for ch in audiences
        }
        # Published right after subscribing: nothing may be missed.
        for i in range(30):
            await publisher.publish(
                [(ch, note(ch, i)) for ch in [*audiences, "game:1:seat:2", "game:2:seat:0"]]
            )
        await publisher.publish([(ch, note(f"{ch}/end")) for ch in audiences])
        for ch, c in collectors.items():
            got = await c.wait_data(31)
            assert got == [*(note(ch, i) for i in range(30)), note(f"{ch}/end")]
            assert all(isinstance(m, Resync) for m in c.messages if m not in got)
        for c in collectors.values():
            await c.stop()
    assert subscriber.subscriber_count() == 0


async def test_a_publish_is_one_payload_a_channel_decoded_once_where_it_repeats(
    redis_url: str, make_bus: BusFactory, admin: aioredis.Redis, prefix: str
) -> None:
    """A publish's messages on one channel go as one Redis message, in order
    (a move's events: issue #28); the same payload on two channels is
    decoded once, its messages shared by both channels' subscribers."""
    publisher, subscriber = make_bus(redis_url), make_bus(redis_url)
    public, seat = "game:9:public", "game:9:seat:0"
    raw = admin.pubsub()
    async with AsyncExitStack() as stack:
        stack.push_async_callback(raw.aclose)
        await raw.subscribe(prefix + public, prefix + seat)
        async with asyncio.timeout(5):  # both confirmed before anything is published
            confirmed = 0
            while confirmed < 2:
                got = await raw.get_message(timeout=1.0)
                confirmed += got is not None and got["type"] == "subscribe"
        on = {
            ch: Collector(await stack.enter_async_context(subscriber.subscribe(ch)))
            for ch in (public, seat)
        }
        a, b, c = note("a"), note("b"), note("c")
        await publisher.publish(
            [(public, a), (seat, a), (public, b), (seat, b), ("game:9:seat:1", c)]
        )
        assert publisher.published == 5  # messages (the metric), in 3 payloads
        payloads: list[tuple[str, Any]] = []
        async with asyncio.timeout(5):
            while len(payloads) < 2:
                got = await raw.get_message(ignore_subscribe_messages=True, timeout=1.0)
                if got is not None:
                    payloads.append((got["channel"], json.loads(got["data"])))
        assert [ch for ch, _ in payloads] == [prefix + public, prefix + seat]
        assert [[number(m) for m in decoded(json.dumps(p))] for _, p in payloads] == [[0, 0]] * 2
        assert [len(p) for _, p in payloads] == [2, 2]
        got_public, got_seat = await on[public].wait_data(2), await on[seat].wait_data(2)
        assert got_public == got_seat == [a, b]
        assert all(x is y for x, y in zip(got_public, got_seat, strict=True))  # decoded once
        for collector in on.values():
            await collector.stop()


async def test_a_payload_not_ours_is_dropped_with_a_log_and_the_next_delivered(
    redis_url: str,
    make_bus: BusFactory,
    admin: aioredis.Redis,
    prefix: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    bus = make_bus(redis_url)
    channel = "game:9:public"
    async with bus.subscribe(channel) as sub:
        collector = Collector(sub)
        for bad in ('{"seq": 1}', "not json", "[1]"):
            await admin.publish(prefix + channel, bad)
        await bus.publish([(channel, note("ok"))])
        assert await collector.wait_data(1) == [note("ok")]
        await collector.stop()
    dropped = [r for r in caplog.records if "dropped a malformed message" in r.getMessage()]
    assert len(dropped) == 3


# ---------------------------------------------------------------- 2. one connection
async def test_one_pubsub_connection_and_reference_counted_channels(
    redis_url: str, make_bus: BusFactory, admin: aioredis.Redis, prefix: str
) -> None:
    name = f"mmk-test-{uuid.uuid4().hex[:12]}"
    bus = make_bus(with_query(redis_url, client_name=name))
    channels = [f"game:{i}:public" for i in range(50)]
    prefixed = [prefix + ch for ch in channels]
    async with AsyncExitStack() as stack:
        per_channel: dict[str, list[AsyncExitStack]] = {}
        collectors: dict[str, list[Collector]] = {}
        for i, ch in enumerate(channels):
            for _ in range(3 if i < 10 else 1):  # several local subscribers on some
                inner = AsyncExitStack()
                stack.push_async_callback(inner.aclose)
                sub = await inner.enter_async_context(bus.subscribe(ch))
                per_channel.setdefault(ch, []).append(inner)
                collectors.setdefault(ch, []).append(Collector(sub))
        assert bus.subscriber_count() == 10 * 3 + 40

        await eventually(
            lambda: _one_client_with(admin, name, subs=50), 5, "one pub/sub client, 50 channels"
        )
        assert (await _numsub(admin, prefixed)) == dict.fromkeys(prefixed, 1)

        # every local subscriber of a channel gets its messages
        publisher = make_bus(redis_url)
        await publisher.publish([(ch, note("n", i)) for i, ch in enumerate(channels)])
        for i, ch in enumerate(channels):
            for c in collectors[ch]:
                assert await c.wait_data(1) == [note("n", i)]

        # two of three leave: still subscribed; the last leaves: unsubscribed
        shared = channels[0]
        for inner in per_channel[shared][:2]:
            await inner.aclose()
        await asyncio.sleep(0.1)
        assert (await _numsub(admin, [prefix + shared]))[prefix + shared] == 1
        await per_channel[shared][2].aclose()
        await eventually(
            lambda: _channels_are(admin, prefix, set(prefixed[1:])), 5, "the channel unsubscribed"
        )
        # leaving and coming back at once keeps the channel subscribed
        async with bus.subscribe(shared) as again:
            back = Collector(again)
            await publisher.publish([(shared, note("back", 1))])
            assert await back.wait_data(1) == [note("back", 1)]
            await back.stop()
        async with bus.subscribe(shared) as again:
            back = Collector(again)
            await publisher.publish([(shared, note("back", 2))])
            assert await back.wait_data(1) == [note("back", 2)]
            await back.stop()
        assert len(await _pubsub_clients(admin, name)) == 1
        for cs in collectors.values():
            for c in cs:
                await c.stop()
    # every local subscriber gone: every channel unsubscribed, one connection still
    await eventually(lambda: _channels_are(admin, prefix, set()), 5, "every channel unsubscribed")
    assert bus.subscriber_count() == 0
    named = [c for c in await admin.client_list() if c.get("name") == name]
    assert len([c for c in named if int(c.get("sub", 0)) or "P" in c.get("flags", "")]) <= 1


async def _one_client_with(admin: aioredis.Redis, name: str, subs: int) -> bool:
    clients = await _pubsub_clients(admin, name)
    return len(clients) == 1 and int(clients[0]["sub"]) == subs


async def _channels_are(admin: aioredis.Redis, prefix: str, expected: set[str]) -> bool:
    return set(await admin.pubsub_channels(prefix + "*")) == expected


# ---------------------------------------------------------------- 3. slow subscriber
async def test_a_slow_subscriber_is_dropped_while_the_others_keep_receiving(
    redis_url: str, make_bus: BusFactory
) -> None:
    publisher, bus = make_bus(redis_url), make_bus(redis_url, queue_limit=3)
    async with bus.subscribe("game:1:public") as fast, bus.subscribe("game:1:public") as slow:
        reader = Collector(fast)
        for i in range(10):  # one at a time: the fast one is never behind
            await publisher.publish([("game:1:public", note("i", i))])
            await reader.wait_data(i + 1)
        assert reader.data == [note("i", i) for i in range(10)]
        with pytest.raises(SubscriptionClosed) as closed:
            await asyncio.wait_for(anext(aiter(slow)), 2)
        assert closed.value.reason.startswith("slow subscriber")
        assert "3 messages behind" in closed.value.reason
        assert bus.dropped == 1
        assert bus.subscriber_count("game:1:public") == 1
        await publisher.publish([("game:1:public", note("i", 10))])
        assert (await reader.wait_data(11))[-1] == note("i", 10)
        assert reader.closed is None
        await reader.stop()


# ---------------------------------------------------------------- 4. Redis away
@pytest.mark.timeout(RECOVERING_TEST_TIMEOUT)
async def test_redis_going_away_outbox_reconnect_and_resync(
    private_redis: PrivateRedis, make_bus: BusFactory
) -> None:
    url = private_redis.url
    pub = make_bus(url)  # publishes, and has a local subscriber
    solo = make_bus(url)  # a process that only publishes
    sub = make_bus(url)  # another process that only subscribes
    async with AsyncExitStack() as stack:
        local = Collector(await stack.enter_async_context(pub.subscribe("c")))
        remote = Collector(await stack.enter_async_context(sub.subscribe("c")))
        leaving = AsyncExitStack()
        await leaving.enter_async_context(sub.subscribe("gone"))
        await pub.publish([("c", note("n", 1))])
        await solo.publish([("c", note("n", 2))])
        for c in (local, remote):
            assert await c.wait_data(2) == [note("n", 1), note("n", 2)]
        resyncs = {id(c): c.resyncs() for c in (local, remote)}

        private_redis.stop()
        await eventually(lambda: not pub.connected and not sub.connected, 5, "the disconnect")
        await pub.publish([("c", note("n", 3))])  # must not raise: kept in the outbox
        await solo.publish([("c", note("n", 4))])
        assert _outbox(pub) == [(pub._prefix + "c", note("n", 3))]
        assert _outbox(solo) == [(solo._prefix + "c", note("n", 4))]
        assert pub.publish_failures >= 1 and solo.publish_failures >= 1
        assert pub.reconnects == sub.reconnects == 0
        # with Redis away, subscribing does not wait, and leaving is remembered
        started = time.monotonic()
        late = Collector(await stack.enter_async_context(sub.subscribe("late")))
        assert time.monotonic() - started < 0.5
        await leaving.aclose()

        private_redis.start()
        back = RECOVERY_TIMEOUT  # each bus reconnects (or flushes) on its own backoff
        # the local subscriber of the publishing process: resync, then the outbox
        await eventually(lambda: note("n", 3) in local.messages, back, "the outboxed message")
        after = local.messages[local.messages.index(note("n", 2)) + 1 :]
        assert after.index(RESYNC) < after.index(note("n", 3))
        # the other process: a resync after the reconnect (it backfills from the log)
        await eventually(lambda: remote.resyncs() > resyncs[id(remote)], back, "a resync")
        await eventually(lambda: not solo._outbox and not pub._outbox, back, "the outboxes sent")
        assert pub.reconnects >= 1 and sub.reconnects >= 1
        assert pub.connected and sub.connected
        await eventually(lambda: late.resyncs() >= 1, back, "a resync for the late subscriber")
        server = aioredis.from_url(url, decode_responses=True)
        try:  # subscribed again: what is subscribed now, not what was left
            expected = {pub._prefix + "c", pub._prefix + "late"}
            await eventually(lambda: _channels_are(server, pub._prefix, expected), 5, "channels")
        finally:
            await server.aclose()

        # live again, from every process
        await solo.publish([("c", note("n", 5)), ("late", note("n", 5))])
        await pub.publish([("c", note("n", 6))])
        assert await late.wait_data(1) == [note("n", 5)]
        for c in (local, remote):
            await eventually(_has(c, note("n", 6)), 5, "live messages")
            numbers = [number(m) for m in c.data]
            assert len(numbers) == len(set(numbers)), numbers  # no duplicate
            # each publisher's messages in its order; another process may miss
            # an outboxed one (sent before it subscribed again): its resync covers it
            for first, outboxed, last in ([1, 3, 6], [2, 4, 5]):
                seen = [n for n in numbers if n in (first, outboxed, last)]
                assert seen in ([first, outboxed, last], [first, last]), numbers
        # the publishing process's own subscriber missed nothing it published
        assert [number(m) for m in local.data if number(m) != 4] == [1, 2, 3, 5, 6]
        for c in (local, remote, late):
            await c.stop()


@pytest.mark.timeout(RECOVERING_TEST_TIMEOUT)
async def test_the_outbox_waits_for_the_reader_subscribing_again(
    private_redis: PrivateRedis, make_bus: BusFactory
) -> None:
    """While the reader reconnects, the flusher sends nothing, even once it
    holds the flush lock (the reader's own flush may have held it, failed on
    a connection from before, and gone back to reconnecting): sent before
    the channels are live again, the local subscriber would miss it. The
    reader sends it after subscribing again."""
    pub = make_bus(private_redis.url)
    async with pub.subscribe("c") as subscription:
        local = Collector(subscription)
        private_redis.stop()
        await eventually(lambda: not pub.connected, 5, "the disconnect")
        await pub.publish([("c", note("n", 1))])  # kept
        # Redis is away: a flush that tried to send would raise
        await pub._flush_outbox(unless_reconnecting=True)
        assert _outbox(pub) == [(pub._prefix + "c", note("n", 1))]
        with pytest.raises(DISCONNECTS):
            await pub._flush_outbox()
        assert _outbox(pub) == [(pub._prefix + "c", note("n", 1))]

        private_redis.start()
        await eventually(lambda: note("n", 1) in local.messages, RECOVERY_TIMEOUT, "the outbox")
        assert local.messages.index(RESYNC) < local.messages.index(note("n", 1))
        await local.stop()


def _outbox(bus: RedisBus) -> list[tuple[str, Message]]:
    """What waits in a bus's outbox, decoded."""
    return [(ch, m) for ch, data in bus._outbox for m in decoded(data)]


def _has(c: Collector, message: Message) -> Callable[[], bool]:
    return lambda: message in c.data


def _is_closed(c: Collector) -> Callable[[], bool]:
    return lambda: c.closed is not None


# ---------------------------------------------------------------- 5. use cases
def _deps(store: Store, bus: RedisBus) -> Deps:
    return Deps(
        uow=lambda: FakeUnitOfWork(store),
        run=run_inline,
        bus=bus,
        clock=FakeClock(),
        ids=FakeIds(),
        schedule_bots=lambda _game_id: None,
    )


async def _new_game(deps: Deps) -> tuple[str, list[str]]:
    ids = [(await create_player(deps, f"p{i}")).player.id for i in range(4)]
    game = await create_game(deps, Request(ids[0], "createGame", {}), NewGame(4))
    for pid in ids[1:]:
        await join_game(deps, Request(pid, "joinGame", {}), game.game_id, None)
    await start_game(deps, Request(ids[0], "startGame", {}), game.game_id)
    return game.game_id, ids


async def _play(deps: Deps, store: Store, gid: str, ids: list[str], moves: int) -> int:
    played = 0
    for _ in range(moves):
        state = store.games[gid].state
        assert state is not None
        seat = to_act(state)
        if seat is None or state.outcome is not None:
            break
        await act(deps, Request(ids[seat], "act", {}), gid, legal_actions(state, seat)[0])
        played += 1
    return played


class StreamReader:
    """Consumes a game stream in the background."""

    def __init__(self, stream: AsyncIterator[Heard]) -> None:
        self.events: list[LoggedEvent] = []
        self._stream = stream
        self._task = asyncio.get_running_loop().create_task(self._read())

    async def _read(self) -> None:
        with suppress(SubscriptionClosed):  # the bus closed at the end of a failed test
            async for _audience, e in self._stream:
                self.events.append(e)

    def upto(self, seq: int) -> Callable[[], bool]:
        return lambda: bool(self.events) and self.events[-1].seq >= seq

    async def stop(self) -> None:
        self._task.cancel()
        with suppress(asyncio.CancelledError):
            await self._task


async def _whole_log(deps: Deps, gid: str, player: str | None) -> list[LoggedEvent]:
    out: list[LoggedEvent] = []
    while True:
        page, more = await read_events(deps, gid, player, out[-1].seq if out else 0, 100)
        out += page
        if not more:
            return out


def _normal(events: list[LoggedEvent]) -> list[dict[str, Any]]:
    """The events as a client gets them (JSON)."""
    return [json.loads(json.dumps(codec.logged_to_json(e))) for e in events]


@pytest.mark.timeout(RECOVERING_TEST_TIMEOUT)
async def test_game_streams_lose_nothing_across_a_redis_restart(
    private_redis: PrivateRedis, make_bus: BusFactory
) -> None:
    store = Store()
    writer_bus, reader_bus = make_bus(private_redis.url), make_bus(private_redis.url)
    writer, reader = _deps(store, writer_bus), _deps(store, reader_bus)
    gid, ids = await _new_game(writer)
    # the streams are served by another process than the one the moves go to,
    # which only publishes
    seat_stream = StreamReader(game_events(reader, gid, ids[1], 0))
    public_stream = StreamReader(game_events(reader, gid, None, 0))
    streams = (seat_stream, public_stream)

    async def caught_up() -> None:
        last = store.games[gid].last_seq
        for s in streams:
            await eventually(s.upto(last), 10, f"the stream up to seq {last}")

    assert await _play(writer, store, gid, ids, 15) == 15
    await caught_up()

    private_redis.stop()
    await eventually(lambda: not reader_bus.connected, 5, "the disconnect")
    assert await _play(writer, store, gid, ids, 15) == 15  # moves commit with Redis away
    assert writer_bus.publish_failures >= 1
    private_redis.start()
    await caught_up()  # no move since the restart: the resync backfills

    # restarted again mid-game; moves go on right after the restart, and
    # after the streams' process is back (live messages only, then)
    private_redis.stop()
    await eventually(lambda: not reader_bus.connected, 5, "the disconnect")
    assert await _play(writer, store, gid, ids, 5) == 5
    private_redis.start()
    assert await _play(writer, store, gid, ids, 3) == 3
    await eventually(lambda: reader_bus.reconnects == 2, RECOVERY_TIMEOUT, "the reconnect")
    await caught_up()
    await _play(writer, store, gid, ids, 200)  # to the end of the game
    final = store.games[gid].state
    assert final is not None and final.outcome is not None
    await caught_up()
    await asyncio.sleep(0.2)  # nothing more arrives

    last = store.games[gid].last_seq
    for s, player in ((seat_stream, ids[1]), (public_stream, None)):
        assert [e.seq for e in s.events] == list(range(1, last + 1))  # no gap, no duplicate
        assert _normal(s.events) == _normal(await _whole_log(reader, gid, player))
    assert reader_bus.reconnects >= 2
    assert not writer_bus._outbox and writer_bus.publish_failures >= 1
    for s in streams:
        await s.stop()


# ---------------------------------------------------------------- 6. aclose
async def test_aclose_closes_local_subscriptions_and_releases_the_connection(
    redis_url: str, make_bus: BusFactory, admin: aioredis.Redis, prefix: str
) -> None:
    name = f"mmk-test-{uuid.uuid4().hex[:12]}"
    bus = make_bus(with_query(redis_url, client_name=name))  # closed again at the end
    await bus.publish([("warm-up", note("n", 0))])  # a publishing connection too
    async with AsyncExitStack() as stack:
        subs = [await stack.enter_async_context(bus.subscribe(ch)) for ch in ("a", "a", "b")]
        await eventually(lambda: _one_client_with(admin, name, subs=2), 5, "subscribed")
        readers = [Collector(s) for s in subs]  # waiting for messages
        await asyncio.sleep(0.05)
        await bus.aclose()
        for r in readers:
            await eventually(_is_closed(r), 2, "the close")
            assert r.closed == "the server is shutting down"
        assert bus.subscriber_count() == 0
        assert not bus.connected
    # leaving after the close is harmless; nothing of the bus is left in Redis
    await eventually(lambda: _no_client_named(admin, name), 5, "the bus's connections released")
    assert set(await admin.pubsub_channels(prefix + "*")) == set()


async def _no_client_named(admin: aioredis.Redis, name: str) -> bool:
    return not [c for c in await admin.client_list() if c.get("name") == name]


async def test_channels_first_wanted_while_the_bus_connects_are_subscribed_too(
    redis_url: str, make_bus: BusFactory, admin: aioredis.Redis, prefix: str
) -> None:
    """A fresh process gets many subscriptions at once (a worker just started):
    the ones that arrive while its pub/sub connection is being set up are left
    to that set-up, which must subscribe them all (it once subscribed only
    those wanted when it began, and the others never heard a live message)."""
    publisher, subscriber = make_bus(redis_url), make_bus(redis_url)
    channels = [f"game:{i}:public" for i in range(20)]
    async with AsyncExitStack() as stack:

        async def enter(ch: str, delay: float) -> Collector:
            await asyncio.sleep(delay)
            return Collector(await stack.enter_async_context(subscriber.subscribe(ch)))

        collectors = await asyncio.gather(*(enter(ch, i * 0.0005) for i, ch in enumerate(channels)))
        counts = await _numsub(admin, [prefix + ch for ch in channels])
        assert set(counts.values()) == {1}, counts
        await publisher.publish([(ch, note(ch)) for ch in channels])
        for ch, c in zip(channels, collectors, strict=True):
            assert await c.wait_data(1) == [note(ch)]
        for c in collectors:
            await c.stop()
