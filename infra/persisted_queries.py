"""The store of automatic persisted queries (Apollo APQ): query texts by the
sha256 of their text, so that clients may send the hash alone.

Each process keeps the recent ones in an LRU (infra/lru.py). With Redis,
every registration is also written there (``<prefix>apq:<sha256>``, with a
TTL that every read renews, GETEX), so that any instance knows a hash any
other registered, and a miss in the LRU is looked up there. The server never
trusts a stored text blindly: a text whose hash is not its key is ignored.

[decision] Redis is a shared cache here, not a store of record: a query
missing from it (expired, evicted, Redis away) costs the client one round
trip (``PersistedQueryNotFound``, then it sends the text again). So Redis
failures are logged once as warnings and served as misses; registrations
wait at most ``infra.redis_client.REDIS_TIMEOUT`` seconds.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import time

import redis.asyncio as aioredis
from redis.exceptions import RedisError

from infra.lru import LRU
from infra.redis_client import fail_fast

log = logging.getLogger("mmk.apq")

KEPT = 512
"""Texts kept per process: a client app has tens of operations."""
QUIET_SECONDS = 30.0  # after a Redis failure, the next one is not logged for this long


def sha256_of(query: str) -> str:
    """The APQ hash of a query text: sha256 of its UTF-8 bytes, lowercase hex."""
    return hashlib.sha256(query.encode()).hexdigest()


class PersistedQueries:
    """Query texts by hash: this process's LRU, then Redis when given."""

    def __init__(
        self,
        redis_url: str | None = None,
        prefix: str = "mmk:",
        ttl: int = 86_400,
        size: int = KEPT,
    ) -> None:
        self._local: LRU[str, str] = LRU(size)
        self._ttl = ttl
        self._key = f"{prefix}apq:"
        self._client: aioredis.Redis | None = None
        if redis_url:
            self._client = fail_fast(redis_url)
        self._writes: set[asyncio.Task[None]] = set()
        self._quiet_until = 0.0

    @property
    def shared(self) -> bool:
        """Whether registrations reach the other instances (Redis)."""
        return self._client is not None

    async def get(self, sha256: str) -> str | None:
        """The text registered under ``sha256``, or None."""
        query = self._local.get(sha256)
        if query is not None or self._client is None:
            return query
        try:
            raw = await self._client.getex(self._key + sha256, ex=self._ttl)
        except (RedisError, OSError) as e:
            self._failed("read", e)
            return None
        if raw is None:
            return None
        try:
            text = raw.decode() if isinstance(raw, bytes) else str(raw)
        except UnicodeDecodeError:
            return None
        if sha256_of(text) != sha256:  # not written by us: never served
            return None
        self._local.put(sha256, text)
        return text

    def register(self, sha256: str, query: str) -> asyncio.Task[None] | None:
        """Keep ``query`` (whose hash the caller has checked) here at once, and
        write it to Redis in the background; returns that write (None without
        Redis), which a caller may await before answering."""
        self._local.put(sha256, query)
        if self._client is None:
            return None
        task = asyncio.create_task(self._share(sha256, query))
        self._writes.add(task)
        task.add_done_callback(self._writes.discard)
        return task

    async def _share(self, sha256: str, query: str) -> None:
        assert self._client is not None
        try:
            await self._client.set(self._key + sha256, query, ex=self._ttl)
        except (RedisError, OSError) as e:
            self._failed("write", e)

    def _failed(self, what: str, e: Exception) -> None:
        now = time.monotonic()
        if now >= self._quiet_until:
            log.warning(
                "persisted queries: Redis %s failed (%s); served from this process", what, e
            )
        self._quiet_until = now + QUIET_SECONDS

    def __len__(self) -> int:
        return len(self._local)

    async def aclose(self) -> None:
        for task in list(self._writes):
            task.cancel()
        if self._writes:
            await asyncio.gather(*self._writes, return_exceptions=True)
        if self._client is not None:
            await self._client.aclose()
