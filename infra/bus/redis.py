"""The Redis pub/sub event bus (scale-out): per-audience channels shared by
every server process.

One pub/sub connection per process: a channel is subscribed when its first
local subscriber arrives and unsubscribed when the last one leaves, and
messages fan out to bounded local queues (as in the in-process bus).

Redis going away never fails a move (the database is the source of truth):
a failed publish is kept in a bounded outbox and sent again after the
reconnect; the reader reconnects with backoff, subscribes again, and tells
every local subscriber :data:`~domain.ports.RESYNC` so it backfills from the log.
Messages travel as JSON (infra/codec.py), one Redis message per channel
and publish: a JSON array of that channel's messages, in order (a move's
events on a channel are one PUBLISH, not one each: issue #28). A reader
decodes a payload once when it comes again at once on another channel (the
public projection on each seat's channel).

On a Redis Cluster (``redis+cluster://``, docs/decisions/0068) the same
class uses sharded pub/sub (``SSUBSCRIBE``/``SPUBLISH``, infra/redis_cluster.py):
a game's channels share one hash slot (domain/channels.py). A master lost to
a failover (or a slot moved) costs only its channels: the reader subscribes
them again on the new owner, with backoff, and tells their subscribers, and
only theirs, to resync; publishes to it wait in the outbox meanwhile.
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter, deque
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager, suppress
from typing import Any

import orjson
from redis.asyncio.cluster import RedisCluster
from redis.exceptions import ConnectionError as RedisConnectionError

from domain.ports import RESYNC, BusMessage, Resync
from infra import codec
from infra.bus.memory import LocalSubscribers, QueueSubscription
from infra.redis_client import DISCONNECTS, close, subscriber
from infra.redis_cluster import ShardedPublisher, ShardedPubSub, ShardLost
from infra.work_meter import detached

log = logging.getLogger("mmk.bus")
OUTBOX_LIMIT = 10_000  # payloads: each a channel's messages of one publish
BACKOFF_MIN, BACKOFF_MAX = 0.05, 2.0
CONFIRM_TIMEOUT = 2.0


class RedisBus(LocalSubscribers):
    def __init__(self, url: str, prefix: str = "mmk:", queue_limit: int = 1000) -> None:
        super().__init__(queue_limit)
        # No retries inside redis-py: its pub/sub would reconnect and subscribe
        # again by itself, silently, and nobody would resync; this class does it.
        self._client = subscriber(url)
        self._url = url
        self._sharded: ShardedPublisher | None = None
        if isinstance(self._client, RedisCluster):
            self._sharded = ShardedPublisher(self._client, url)
        self._prefix = prefix
        self._pubsub: Any = None
        self._reader: asyncio.Task[None] | None = None
        self._outbox: deque[tuple[str, str]] = deque(maxlen=OUTBOX_LIMIT)
        self._waiting: Counter[str] = Counter()  # the outbox's messages by channel
        self._flush_lock = asyncio.Lock()
        self._flusher: asyncio.Task[None] | None = None
        self._ready: dict[str, asyncio.Event] = {}
        self._unsubscribing: set[asyncio.Task[None]] = set()
        self._lost: set[str] = set()  # on a cluster: channels of a lost master, to subscribe again
        self._lost_retry = 0.0  # loop time of the next try
        self._lost_backoff = BACKOFF_MIN
        self._ever_connected = False
        # the last payload read and its messages (shared: they never change)
        self._last_raw: bytes | str | None = None
        self._last_messages: list[BusMessage] = []
        self.connected = False
        self.reconnects = 0
        self.published = 0
        self.publish_failures = 0

    # ------------------------------------------------------------ publishing
    async def publish(self, messages: Sequence[tuple[str, BusMessage]]) -> None:
        """Never raises: what cannot be sent now waits in the outbox."""
        batch, counts = self._encoded(messages)
        if self._outbox:
            if self._sharded is None:  # Redis is away
                self._keep(batch)  # keep the order behind what is waiting
                return
            # a master is away: its channels wait, in order; the others go
            waiting = self._waiting
            if any(channel in waiting for channel, _ in batch):
                self._keep([item for item in batch if item[0] in waiting])
                batch = [item for item in batch if item[0] not in waiting]
                if not batch:
                    return
        try:
            unsent = await self._send(batch)
        except DISCONNECTS as e:
            log.warning("bus: publish failed (%s); %d payload(s) kept for later", e, len(batch))
            self._keep(batch)
            return
        kept = {channel for channel, _ in unsent}
        self.published += sum(n for channel, n in counts.items() if channel not in kept)
        if unsent:  # a cluster's master is away: its share waits
            log.warning("bus: publish failed; %d payload(s) kept for later", len(unsent))
            self._keep(unsent)

    def _encoded(
        self, messages: Sequence[tuple[str, BusMessage]]
    ) -> tuple[list[tuple[str, str]], dict[str, int]]:
        """One payload per channel, its messages in order, and how many
        messages each (prefixed) channel's holds; a message on several
        channels is converted once, and a list of them on several channels
        (the public projection) encoded once."""
        by_channel: dict[str, list[BusMessage]] = {}
        for channel, m in messages:
            by_channel.setdefault(channel, []).append(m)
        as_json: dict[int, Any] = {}
        encoded: dict[tuple[int, ...], str] = {}
        batch = []
        for channel, ms in by_channel.items():
            key = tuple(map(id, ms))
            data = encoded.get(key)
            if data is None:
                for m in ms:
                    if id(m) not in as_json:
                        as_json[id(m)] = codec.message_to_json(m)
                data = encoded[key] = orjson.dumps([as_json[i] for i in key]).decode()
            batch.append((self._prefix + channel, data))
        return batch, {self._prefix + channel: len(ms) for channel, ms in by_channel.items()}

    def _keep(self, batch: Sequence[tuple[str, str]]) -> None:
        self.publish_failures += 1  # every publish kept, not only the first one that failed
        batch = batch[-OUTBOX_LIMIT:]
        overflow = len(self._outbox) + len(batch) - OUTBOX_LIMIT
        if overflow > 0:  # the oldest go; subscribers still backfill from the log
            log.warning("bus: outbox full; %d oldest message(s) dropped", overflow)
            for _ in range(overflow):
                self._waiting[self._outbox.popleft()[0]] -= 1
            self._waiting = +self._waiting  # without the channels at 0
        self._outbox.extend(batch)
        self._waiting.update(channel for channel, _ in batch)
        if self._flusher is None or self._flusher.done():
            self._flusher = detached(self._flush_later())

    async def _flush_later(self) -> None:
        """Send the outbox once Redis answers again, also in a process that
        only publishes (a reader that is reconnecting sends it itself, after
        subscribing again)."""
        backoff = BACKOFF_MIN
        while self._outbox:
            await asyncio.sleep(backoff)
            backoff = min(backoff * 2, BACKOFF_MAX)
            with suppress(*DISCONNECTS):
                await self._flush_outbox(unless_reconnecting=True)

    def _reconnecting(self) -> bool:
        """The reader is subscribing again: it sends the outbox itself once
        its channels are live (sent before, a local subscriber would miss it)."""
        return self._reader is not None and not self._reader.done() and not self.connected

    async def _send(self, batch: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
        """What could not be sent (on a cluster, the share of a master that
        is away); raises when nothing was."""
        unsent: list[tuple[str, str]] = []
        if self._sharded is not None:
            unsent = await self._sharded.send(batch)
        else:
            async with self._client.pipeline(transaction=False) as pipe:
                for channel, data in batch:
                    pipe.publish(channel, data)
                await pipe.execute()
        return unsent

    async def _flush_outbox(self, *, unless_reconnecting: bool = False) -> None:
        """``unless_reconnecting``: nothing is sent while the reader is
        reconnecting, as seen once the lock is held (the reader's own flush,
        which held it, may have failed and sent it back to reconnecting)."""
        async with self._flush_lock:  # one flush at a time: none sent twice
            if unless_reconnecting and self._reconnecting():
                return
            while self._outbox:
                batch = [self._outbox[i] for i in range(min(500, len(self._outbox)))]
                unsent = await self._send(batch)
                kept = set(unsent)
                self.published += sum(len(orjson.loads(p[1])) for p in batch if p not in kept)
                for _ in batch:
                    self._outbox.popleft()
                self._waiting.subtract(channel for channel, _ in batch)
                self._waiting.update(channel for channel, _ in unsent)
                self._waiting = +self._waiting  # without the channels at 0
                if unsent:  # first again, in order
                    self._outbox.extendleft(reversed(unsent))
                    raise RedisConnectionError(f"{len(unsent)} message(s) still unsent")

    # ------------------------------------------------------------ subscribing
    @asynccontextmanager
    async def subscribe(self, channel: str) -> AsyncIterator[QueueSubscription]:
        """Entered once Redis confirmed the subscription (or, with Redis away,
        at once: the resync after the reconnect covers the gap; the first
        connection is waited for, within ``CONFIRM_TIMEOUT``)."""
        sub, subs = self._add(channel)
        try:  # a caller cancelled while this waits leaves nothing behind
            self._ensure_reader()
            if len(subs) == 1:
                await self._redis_subscribe(channel)
            else:
                await self._confirmed(channel)
            yield sub
        finally:
            self._remove(channel, sub)

    def _emptied(self, channel: str) -> None:
        self._ready.pop(channel, None)
        if self._pubsub is not None and self.connected:
            task = detached(self._redis_unsubscribe(channel))
            self._unsubscribing.add(task)  # a reference until it ends
            task.add_done_callback(self._unsubscribing.discard)

    async def _redis_subscribe(self, channel: str) -> None:
        self._ready[channel] = asyncio.Event()
        if self._pubsub is None or not self.connected:
            # the reader subscribes every channel when it (re)connects
            await self._confirmed(channel)
            return
        try:
            await self._pubsub.subscribe(self._prefix + channel)
        except DISCONNECTS as e:
            log.warning("bus: subscribe failed (%s); will retry on reconnect", e)
            if self._sharded is not None:  # its master alone may be away
                self._lose([channel])
            return
        await self._confirmed(channel)

    async def _confirmed(self, channel: str) -> None:
        ready = self._ready.get(channel)
        if ready is not None and (self.connected or not self._ever_connected):
            with suppress(TimeoutError):
                await asyncio.wait_for(ready.wait(), CONFIRM_TIMEOUT)

    async def _redis_unsubscribe(self, channel: str) -> None:
        pubsub = self._pubsub
        if channel in self._subs or pubsub is None:  # back again, or the connection went
            return
        with suppress(*DISCONNECTS):
            await pubsub.unsubscribe(self._prefix + channel)

    # ------------------------------------------------------------ the reader
    def _ensure_reader(self) -> None:
        if self._reader is None or self._reader.done():
            self._reader = detached(self._read_forever())

    async def _connect(self) -> None:
        """Subscribe every channel wanted, including those first wanted while
        this was under way (their subscribers left it to this reader: until
        ``connected`` is set, nobody else subscribes), then count as
        connected."""
        if isinstance(self._client, RedisCluster):
            self._pubsub = ShardedPubSub(self._client, self._url)
        else:
            self._pubsub = self._client.pubsub()
        await self._pubsub.ping()
        sent: set[str] = set()
        while missing := [c for c in self._subs if c not in sent]:
            await self._pubsub.subscribe(*(self._prefix + c for c in missing))
            sent.update(missing)
            unconfirmed = await self._await_confirmations(missing)
            if unconfirmed:  # not live: no resync may claim they are
                raise RedisConnectionError(f"{len(unconfirmed)} subscription(s) unconfirmed")
        self.connected = True  # no await since the last check: nothing was missed
        await self._flush_outbox()

    async def _await_confirmations(self, channels: Sequence[str]) -> list[str]:
        """Read until Redis confirmed each of ``channels`` still wanted (or
        none came for ``CONFIRM_TIMEOUT`` seconds), so that the resync that
        follows cannot race a subscription still in flight; messages that
        arrive meanwhile are delivered as usual. Returns those unconfirmed."""

        def unconfirmed() -> list[str]:
            return [c for c in channels if (r := self._ready.get(c)) and not r.is_set()]

        loop = asyncio.get_running_loop()
        deadline = loop.time() + CONFIRM_TIMEOUT
        while (left := unconfirmed()) and loop.time() < deadline:
            msg = await self._pubsub.get_message(timeout=max(0.0, deadline - loop.time()))
            if msg is not None and self._handle(msg) == "subscribe":
                deadline = loop.time() + CONFIRM_TIMEOUT  # progress: a slow Redis is no dead one
        return left

    async def _read_forever(self) -> None:
        backoff = BACKOFF_MIN
        loop = asyncio.get_running_loop()
        while True:
            try:
                if not self.connected:
                    await self._connect()
                    if self._ever_connected:
                        self.reconnects += 1
                        log.info("bus: reconnected to Redis")
                    self._ever_connected = True
                    backoff = BACKOFF_MIN
                    self._lost.clear()  # every channel was subscribed again
                    # whatever was published while nobody listened: backfill it
                    self._fan_out_all(RESYNC)
                wait = 1.0
                if self._lost:
                    wait = self._lost_retry - loop.time()
                    if wait <= 0:
                        await self._recover_lost()
                        continue
                msg = await self._pubsub.get_message(timeout=min(wait, 1.0))
                if msg is None:
                    continue
                self._handle(msg)
            except asyncio.CancelledError:
                raise
            except ShardLost as e:
                if not self.connected:  # while (re)connecting: all again
                    await self._drop_pubsub()
                    await asyncio.sleep(backoff)
                    backoff = min(backoff * 2, BACKOFF_MAX)
                    continue
                log.warning("bus: %s; subscribing them again", e)
                self._lose([c.removeprefix(self._prefix) for c in e.channels])
            except DISCONNECTS as e:
                if self.connected:
                    log.warning("bus: lost Redis (%s); reconnecting", e)
                self.connected = False
                for ready in self._ready.values():
                    ready.clear()
                await self._drop_pubsub()
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, BACKOFF_MAX)

    def _lose(self, channels: list[str]) -> None:
        """Channels of a cluster's master that is away: their subscribers wait
        (RESYNC once they are subscribed again on its successor)."""
        for channel in channels:
            ready = self._ready.get(channel)
            if ready is not None:
                ready.clear()
        if not self._lost:
            self._lost_retry = asyncio.get_running_loop().time() + self._lost_backoff
        self._lost.update(channels)

    async def _recover_lost(self) -> None:
        """Subscribe the lost channels still wanted on their masters of now;
        once confirmed, their subscribers backfill from the log. A failure
        puts them back, to be tried again after a longer wait."""
        wanted = [c for c in self._lost if c in self._subs]
        self._lost.clear()
        if not wanted:
            return
        try:
            await self._pubsub.ping()  # the slot map of now
            await self._pubsub.subscribe(*(self._prefix + c for c in wanted))
            unconfirmed = await self._await_confirmations(wanted)
        except ShardLost as e:  # the new master's connection failed too
            e.channels += [self._prefix + c for c in wanted]
            self._lost_backoff = min(self._lost_backoff * 2, BACKOFF_MAX)
            raise
        except DISCONNECTS as e:
            log.info("bus: subscribing %d channel(s) again failed (%s)", len(wanted), e)
            self._lost_backoff = min(self._lost_backoff * 2, BACKOFF_MAX)
            self._lose(wanted)
            return
        if unconfirmed:  # not live yet: tried again later, resynced then
            log.info("bus: %d channel(s) not confirmed; trying again", len(unconfirmed))
            self._lost_backoff = min(self._lost_backoff * 2, BACKOFF_MAX)
            self._lose(unconfirmed)
        else:
            self._lost_backoff = BACKOFF_MIN
        live = [c for c in wanted if c not in unconfirmed]
        if not live:
            return
        self.reconnects += 1
        log.info("bus: %d channel(s) subscribed again on their new master", len(live))
        for channel in live:  # whatever was published meanwhile: backfill it
            self._offer(channel, RESYNC)

    def _handle(self, msg: dict[str, Any]) -> object:
        """A message is delivered, a subscription confirmed; returns the kind."""
        kind = msg.get("type")
        if kind == "message":
            self._deliver(msg["channel"], msg["data"])
        elif kind == "subscribe":
            ready = self._ready.get(_text(msg["channel"]).removeprefix(self._prefix))
            if ready is not None:
                ready.set()
        return kind

    def _deliver(self, raw_channel: bytes | str, raw: bytes | str) -> None:
        channel = _text(raw_channel).removeprefix(self._prefix)
        if channel not in self._subs:
            return
        if raw == self._last_raw:  # the same payload on another channel: decoded once
            messages = self._last_messages
        else:
            try:
                messages = decoded(raw)
            except (ValueError, TypeError, KeyError) as e:  # not ours: say so, go on
                log.error("bus: dropped a malformed message on %s: %s", channel, e)
                return
            self._last_raw, self._last_messages = raw, messages
        for message in messages:
            self._offer(channel, message)

    def _fan_out_all(self, message: Resync) -> None:
        for channel in list(self._subs):
            self._offer(channel, message)

    async def _drop_pubsub(self) -> None:
        if self._pubsub is not None:
            with suppress(Exception):
                await self._pubsub.aclose()
        self._pubsub = None

    # ------------------------------------------------------------ the rest
    async def ping(self) -> bool:
        try:
            return bool(await self._client.ping())
        except DISCONNECTS:
            return False

    async def aclose(self) -> None:
        for task in (self._reader, self._flusher, *self._unsubscribing):
            if task is not None:
                task.cancel()
                with suppress(asyncio.CancelledError):
                    await task
        self.connected = False
        self._close_all()
        await self._drop_pubsub()
        if self._sharded is not None:
            await self._sharded.aclose()
        await close(self._client)


def decoded(raw: bytes | str) -> list[BusMessage]:
    """A payload's messages (:meth:`RedisBus.publish`); raises on anything
    else."""
    found = orjson.loads(raw)
    if not isinstance(found, list):
        raise TypeError(f"a payload is a JSON array, not {type(found).__name__}")
    return [codec.message_from_json(m) for m in found]


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value
