"""Sharded pub/sub on a Redis Cluster (Redis >= 7, docs/decisions/0068):
``SSUBSCRIBE`` on the master that owns each channel's hash slot,
``SPUBLISH`` routed the same way.

:class:`ShardedPubSub` looks like a plain redis-py ``PubSub`` to its reader
(``subscribe``, ``unsubscribe``, ``get_message`` giving ``message``,
``subscribe`` and ``unsubscribe`` entries), so the bus and the revocation
reader run one code path on one node or on a cluster. It holds one
connection per master it uses, each read by a task of its own into one
inbox.

[decision] It does not heal itself: a master's connection lost, or a
channel taken away by the cluster (an ``sunsubscribe`` nobody asked for: its
slot moved, its master became a replica), is raised by
:meth:`ShardedPubSub.get_message` as :class:`ShardLost`, naming the channels
it cost; the reader subscribes them again (the slot map read anew) and tells
their subscribers, and only theirs, to resync. redis-py's ``ClusterPubSub``
moves subscriptions by itself, silently, which would leave nobody to resync.
A subscribe that fails on a broken connection costs that master's other
channels too: they are raised as lost the same way. A subscribe cancelled
(its caller left) is still sent, whole, and never closes the connection.
A master's connection left without channels is closed at the next
:meth:`ShardedPubSub.ping` (the former master, after a failover).
"""

from __future__ import annotations

import asyncio
from collections import Counter, defaultdict
from collections.abc import Awaitable, Sequence
from contextlib import suppress
from typing import Any

import redis.asyncio as aioredis
from redis.asyncio.client import PubSub
from redis.asyncio.cluster import RedisCluster
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.crc import key_slot
from redis.exceptions import ConnectionError as RedisConnectionError

from infra.redis_client import (
    DISCONNECTS,
    HEALTH_CHECK,
    REDIS_TIMEOUT,
    cluster_url,
    node_url,
    read_slot_map,
)

Message = dict[str, Any]
Batch = Sequence[tuple[str, str]]
Ended = tuple[str, PubSub, BaseException]
"""In the inbox: a master's connection that broke (with the error)."""
KINDS = {"smessage": "message", "ssubscribe": "subscribe", "sunsubscribe": "unsubscribe"}


class ShardLost(RedisConnectionError):
    """Shard channels no longer subscribed: their master's connection broke,
    or the cluster moved them. A ``ConnectionError``: a reader that does not
    tell it apart subscribes everything again."""

    def __init__(self, reason: object, channels: Sequence[str] = ()) -> None:
        super().__init__(f"shard channels lost ({reason})")
        self.reason = reason
        self.channels = list(channels)


def _owner(cluster: RedisCluster, channel: str) -> str:
    """The name of the master serving ``channel``'s slot, as far as the slot
    map read last knows."""
    node = cluster.get_node_from_key(channel)
    if node is None:
        raise RedisConnectionError(f"no master serves {channel}")
    return str(node.name)


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


class ShardedPubSub:
    """Shard channels over a cluster, read as one ``PubSub``."""

    def __init__(self, cluster: RedisCluster, url: str) -> None:
        plain = cluster_url(url)
        assert plain is not None, "not a cluster URL"
        self._cluster = cluster
        self._url = plain
        self._clients: dict[str, aioredis.Redis] = {}
        self._links: dict[str, PubSub] = {}
        self._readers: dict[str, asyncio.Task[None]] = {}
        self._wanted: dict[str, asyncio.Event] = {}  # per link: it has channels to read
        self._sending: dict[str, asyncio.Lock] = {}  # per link: one (un)subscribe at a time
        self._node_of: dict[str, str] = {}  # channel -> the node it was subscribed on
        self._leaving: Counter[tuple[str, str]] = Counter()  # (node, channel) sunsubscribes
        self._inbox: asyncio.Queue[Message | BaseException | Ended] = asyncio.Queue()
        self._inflight: set[asyncio.Task[None]] = set()

    async def ping(self) -> bool:
        """Reads the slot map anew (after a failover it names the new
        masters); closes the connections left without channels."""
        await read_slot_map(self._cluster)
        for name in [n for n in self._links if self._idle(n)]:
            await self._drop(name)
        return True

    async def subscribe(self, *channels: str) -> None:
        """``SSUBSCRIBE`` each channel on its master. A broken connection
        raises, and its master's channels (these and the others) come out
        of :meth:`get_message` as :class:`ShardLost`."""
        by_node: dict[str, dict[int, list[str]]] = defaultdict(lambda: defaultdict(list))
        for channel in channels:
            name = _owner(self._cluster, channel)
            by_node[name][key_slot(channel.encode())].append(channel)
        for name, slots in by_node.items():
            groups = list(slots.values())  # one SSUBSCRIBE per slot (no CROSSSLOT)
            for group in groups:
                self._node_of.update(dict.fromkeys(group, name))
            # shielded: a caller that leaves does not cut a command in half
            # (its channels are then unsubscribed by whoever no longer wants them)
            task = asyncio.get_running_loop().create_task(self._ssubscribe(name, groups))
            self._inflight.add(task)
            task.add_done_callback(_settled)
            task.add_done_callback(self._inflight.discard)
            await asyncio.shield(task)

    async def _ssubscribe(self, name: str, groups: list[list[str]]) -> None:
        link = self._link(name)
        try:
            async with self._sending[name]:
                for group in groups:
                    await link.ssubscribe(*group)
        except DISCONNECTS as e:
            if self._links.get(name) is link:  # every channel of it is lost
                self._inbox.put_nowait((name, link, e))
            raise
        wanted = self._wanted.get(name) if self._links.get(name) is link else None
        if wanted is not None:
            wanted.set()

    async def unsubscribe(self, channel: str) -> None:
        name = self._node_of.pop(channel, None)
        if name is None or name not in self._links:
            return
        link, sending = self._links[name], self._sending[name]
        async with sending:  # after a subscribe of it still being sent
            if self._links.get(name) is link:
                self._leaving[name, channel] += 1
                await link.sunsubscribe(channel)

    async def get_message(self, timeout: float = 0.0) -> Message | None:
        """The next entry, or None after ``timeout`` seconds; raises what
        ended a connection, or a moved channel."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            try:
                item = self._inbox.get_nowait()
            except asyncio.QueueEmpty:
                try:
                    async with asyncio.timeout_at(deadline):
                        item = await self._inbox.get()
                except TimeoutError:
                    return None
            if not isinstance(item, tuple):
                if isinstance(item, BaseException):
                    raise item
                return item
            name, link, error = item  # a master's connection ended
            if self._links.get(name) is not link:
                continue  # one already dropped
            lost = [c for c, n in self._node_of.items() if n == name]
            for channel in lost:
                del self._node_of[channel]
            await self._drop(name)
            raise ShardLost(error, lost) from error

    def _idle(self, name: str) -> bool:
        """Whether a master's connection has no channel, none on its way."""
        sending = self._sending.get(name)
        return name not in self._node_of.values() and not (sending and sending.locked())

    async def _drop(self, name: str) -> None:
        """Close one master's connection; its channels are gone with it."""
        link, client = self._links.pop(name, None), self._clients.pop(name, None)
        self._wanted.pop(name, None)
        self._sending.pop(name, None)
        for key in [k for k in self._leaving if k[0] == name]:
            del self._leaving[key]
        reader = self._readers.pop(name, None)
        if reader is not None:
            reader.cancel()
            with suppress(asyncio.CancelledError, Exception):
                await reader
        if link is not None:
            with suppress(Exception):
                await link.aclose()  # type: ignore[no-untyped-call]
        if client is not None:
            with suppress(Exception):
                await client.aclose()

    def _link(self, name: str) -> PubSub:
        link = self._links.get(name)
        if link is None:
            host, _, port = name.rpartition(":")
            client = aioredis.from_url(
                node_url(self._url, host, int(port)),
                health_check_interval=HEALTH_CHECK,
                retry=Retry(NoBackoff(), 0),
            )
            self._clients[name] = client
            link = self._links[name] = client.pubsub()
            self._sending[name] = asyncio.Lock()
            wanted = self._wanted[name] = asyncio.Event()
            task = asyncio.get_running_loop().create_task(self._read(name, link, wanted))
            self._readers[name] = task
        return link

    async def _read(self, name: str, link: PubSub, wanted: asyncio.Event) -> None:
        try:
            while True:
                if not link.subscribed:  # every channel left: wait for one
                    wanted.clear()
                    await wanted.wait()
                    continue
                msg = await link.get_message(timeout=1.0)
                if msg is not None:
                    self._shape(name, msg)
        except asyncio.CancelledError:
            raise
        except DISCONNECTS as e:
            if self._links.get(name) is link:  # not dropped already
                self._inbox.put_nowait((name, link, e))
        except Exception as e:  # the reader raises it, as a plain PubSub's would
            self._inbox.put_nowait(e)

    def _shape(self, name: str, msg: Message) -> None:
        kind = KINDS.get(_text(msg["type"]))
        if kind is None:
            return
        if kind == "unsubscribe":
            key = (name, _text(msg["channel"]))
            if self._leaving[key] <= 0:  # not ours: the cluster moved it
                if self._node_of.get(key[1]) == name:
                    del self._node_of[key[1]]
                self._inbox.put_nowait(ShardLost(f"{key[1]} moved", [key[1]]))
                return
            self._leaving[key] -= 1
            if not self._leaving[key]:
                del self._leaving[key]
        self._inbox.put_nowait({**msg, "type": kind})

    async def aclose(self) -> None:
        inflight = list(self._inflight)
        for task in (*inflight, *self._readers.values()):
            task.cancel()
        for task in inflight:
            with suppress(asyncio.CancelledError, Exception):
                await task
        for task in self._readers.values():
            with suppress(asyncio.CancelledError, Exception):
                await task
        for link in self._links.values():
            with suppress(Exception):
                await link.aclose()  # type: ignore[no-untyped-call]
        for client in self._clients.values():
            with suppress(Exception):
                await client.aclose()
        self._readers.clear()
        self._wanted.clear()
        self._sending.clear()
        self._links.clear()
        self._clients.clear()


class ShardedPublisher:
    """``SPUBLISH`` over a cluster: each batch as one pipeline per master, on
    a plain connection to that master (redis-py's cluster pipeline costs
    more than the publish itself)."""

    def __init__(self, cluster: RedisCluster, url: str) -> None:
        plain = cluster_url(url)
        assert plain is not None, "not a cluster URL"
        self._cluster = cluster
        self._url = plain
        self._masters: dict[str, aioredis.Redis] = {}
        self._stale = True  # the slot map is read before the first send

    async def send(self, batch: Batch) -> list[tuple[str, str]]:
        """Each (channel, data), in order per master; returns what could
        not be sent, in order (all of it when the slot map cannot be had).
        A master that is away, or a slot that moved (``MOVED``), fails its
        share and has the slot map read again before the next send."""
        groups: dict[str, list[tuple[str, str]]] = defaultdict(list)
        node_of: dict[str, str] = {}
        try:
            if self._stale:  # first use, or a master was lost since
                await self._refresh()
            for channel, data in batch:
                name = node_of.get(channel)
                if name is None:
                    name = node_of[channel] = _owner(self._cluster, channel)
                groups[name].append((channel, data))
        except DISCONNECTS:
            self._stale = True
            return list(batch)
        if len(groups) == 1:  # the common case: one game's channels, one slot
            [(name, items)] = groups.items()
            results: list[BaseException | None] = [await _caught(self._send(name, items))]
        else:
            results = await asyncio.gather(
                *(_caught(self._send(name, items)) for name, items in groups.items())
            )
        failed = {name for name, error in zip(groups, results, strict=True) if error is not None}
        if failed:
            self._stale = True
        return [item for item in batch if node_of[item[0]] in failed]

    async def _refresh(self) -> None:
        await read_slot_map(self._cluster)
        self._stale = False
        masters = {node.name for node in self._cluster.get_primaries()}
        for name in [n for n in self._masters if n not in masters]:  # failed over
            with suppress(Exception):
                await self._masters.pop(name).aclose()

    async def _send(self, name: str, items: list[tuple[str, str]]) -> None:
        client = self._masters.get(name)
        if client is None:
            host, _, port = name.rpartition(":")
            client = self._masters[name] = aioredis.from_url(
                node_url(self._url, host, int(port)),
                socket_connect_timeout=REDIS_TIMEOUT,  # as the one-node bus: no command timeout
                retry=Retry(NoBackoff(), 0),
            )
        async with client.pipeline(transaction=False) as pipe:
            for channel, data in items:
                pipe.spublish(channel, data)
            await pipe.execute()

    async def aclose(self) -> None:
        for client in self._masters.values():
            with suppress(Exception):
                await client.aclose()
        self._masters.clear()


def _settled(task: asyncio.Task[None]) -> None:
    """A shielded subscribe's error, retrieved (its caller may have left;
    the inbox has it)."""
    if not task.cancelled():
        task.exception()


async def _caught(work: Awaitable[None]) -> BaseException | None:
    """None, or what Redis raised while away or moving (other errors raise)."""
    try:
        await work
    except DISCONNECTS as e:
        return e
    return None
