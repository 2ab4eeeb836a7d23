"""Revocation notices over Redis pub/sub (scale-out, docs/decisions/0053).

One channel, ``<prefix>tokens:revoked``. A message is
``<digest>|<instance>``: the token's digest (the SHA-256 the database keeps,
never the token, which is dead by then anyway) and the id of the instance
that announced it, which has told its own listeners already and ignores its
echo.

``announce`` tells this process's listeners first, then publishes with a
command that waits at most ``REDIS_TIMEOUT``; a notice that cannot be
published now is kept (bounded) and sent again with backoff.

[decision] The reader holds a pub/sub connection of its own, not the event
bus's: the bus carries a game's events, decoded by its codec and fanned out
to bounded per-subscriber queues, and a notice is none of that. Pub/sub
delivers at most once: a message published while a subscriber's connection
is down is lost to it, and an instance can die between its commit and its
publish. So the listeners are told ``missed`` (check every token in use
again) each time the channel is subscribed (again), and every ``recheck``
seconds whatever happens: a lost notice costs at most that long.

[decision] On a Redis Cluster (docs/decisions/0068) the channel is a shard
channel (``SPUBLISH``/``SSUBSCRIBE``, infra/redis_cluster.py): it lives on the
master owning its slot instead of being broadcast to every node, and a
failover is one more resubscription (then ``missed``), as for the bus.
"""

from __future__ import annotations

import asyncio
import logging
import re
import secrets
from collections import deque
from contextlib import suppress
from typing import Any

from redis.asyncio.cluster import RedisCluster

from infra.redis_client import DISCONNECTS, close, fail_fast, subscriber
from infra.redis_cluster import ShardedPubSub
from infra.revocations.memory import InProcessRevocations

log = logging.getLogger("mmk.revocations")
CHANNEL = "tokens:revoked"
PENDING_LIMIT = 10_000  # notices kept while Redis is away; the oldest go first
BACKOFF_MIN, BACKOFF_MAX = 0.05, 2.0
CONFIRM_TIMEOUT = 2.0  # seconds for Redis to confirm the subscription
_DIGEST = re.compile(r"[0-9a-f]{64}")


class RedisRevocations(InProcessRevocations):
    def __init__(self, url: str, prefix: str = "mmk:", recheck: float = 10.0) -> None:
        super().__init__()
        self._publisher = fail_fast(url)
        # No retries inside redis-py (its pub/sub would subscribe again by
        # itself, and nobody would check again); this class reconnects.
        self._subscriber = subscriber(url)
        self._url = url
        self._channel = prefix + CHANNEL
        self._recheck = recheck
        self.instance = secrets.token_hex(8)
        self._pending: deque[str] = deque(maxlen=PENDING_LIMIT)
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self.connected = False
        self.reconnects = 0
        self.publish_failures = 0

    # ------------------------------------------------------------ announcing
    async def announce(self, digest: str) -> None:
        """This process's listeners at once; the others through Redis (kept
        for later if it cannot be sent now). Never raises."""
        await super().announce(digest)
        message = f"{digest}|{self.instance}"
        if self._pending:  # behind what is waiting
            self._keep(message)
            return
        try:
            await self._publish(message)
        except DISCONNECTS as e:
            log.warning("revocations: publish failed (%s); the notice is kept for later", e)
            self._keep(message)

    def _keep(self, message: str) -> None:
        self.publish_failures += 1
        self._pending.append(message)
        flusher = self._tasks.get("flush")
        if flusher is None or flusher.done():
            self._spawn("flush", self._flush_later())

    async def _flush_later(self) -> None:
        backoff = BACKOFF_MIN
        while self._pending:
            await asyncio.sleep(backoff)
            backoff = min(backoff * 2, BACKOFF_MAX)
            with suppress(*DISCONNECTS):
                while self._pending:
                    await self._publish(self._pending[0])
                    self._pending.popleft()

    async def _publish(self, message: str) -> None:
        if isinstance(self._publisher, RedisCluster):
            await self._publisher.spublish(self._channel, message)
        else:
            await self._publisher.publish(self._channel, message)

    # ------------------------------------------------------------ listening
    def start(self) -> None:
        """The reader, and the periodic check (call inside the event loop)."""
        if "read" not in self._tasks:
            self._spawn("read", self._read_forever())
            self._spawn("tick", self._tick())

    def _spawn(self, name: str, work: Any) -> None:
        self._tasks[name] = asyncio.get_running_loop().create_task(work)

    async def _tick(self) -> None:
        while True:
            await asyncio.sleep(self._recheck)
            self._missed()

    async def _read_forever(self) -> None:
        backoff = BACKOFF_MIN
        ever = False
        pubsub: Any = None
        while True:
            try:
                if pubsub is None:
                    if isinstance(self._subscriber, RedisCluster):
                        pubsub = ShardedPubSub(self._subscriber, self._url)
                        await pubsub.ping()  # the slot map of now
                    else:
                        pubsub = self._subscriber.pubsub()
                    await self._subscribe(pubsub)
                    self.connected, backoff = True, BACKOFF_MIN
                    if ever:
                        self.reconnects += 1
                        log.info("revocations: subscribed again after losing Redis")
                    ever = True
                    # what was announced while this was not subscribed: check again
                    self._missed()
                msg = await pubsub.get_message(timeout=1.0)
                if msg is not None and msg.get("type") == "message":
                    self._heard(msg["data"])
            except asyncio.CancelledError:
                if pubsub is not None:
                    with suppress(Exception):
                        await pubsub.aclose()
                raise
            except DISCONNECTS as e:
                if self.connected:
                    log.warning("revocations: lost Redis (%s); reconnecting", e)
                self.connected = False
                if pubsub is not None:
                    with suppress(Exception):
                        await pubsub.aclose()
                pubsub = None
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, BACKOFF_MAX)

    async def _subscribe(self, pubsub: Any) -> None:
        """Subscribed once Redis confirmed it (a notice published later reaches us)."""
        await pubsub.subscribe(self._channel)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + CONFIRM_TIMEOUT
        while loop.time() < deadline:
            msg = await pubsub.get_message(timeout=max(0.0, deadline - loop.time()))
            if msg is not None and msg.get("type") == "subscribe":
                return
        raise TimeoutError("Redis did not confirm the subscription")

    def _heard(self, raw: bytes | str) -> None:
        text = raw.decode(errors="replace") if isinstance(raw, bytes) else raw
        digest, _, origin = text.partition("|")
        if not _DIGEST.fullmatch(digest):
            log.error("revocations: dropped a malformed notice (%d characters)", len(text))
            return
        if origin == self.instance:
            return  # told at once when announced
        self._tell(digest)

    # ------------------------------------------------------------ the rest
    async def aclose(self) -> None:
        for task in self._tasks.values():
            task.cancel()
        for task in self._tasks.values():
            with suppress(asyncio.CancelledError, Exception):
                await task
        self._tasks.clear()
        self.connected = False
        await super().aclose()
        await close(self._publisher)
        await close(self._subscriber)
