"""The store of automatic persisted queries (Apollo APQ): query texts by the
sha256 of their text, so that clients may send the hash alone.

Each process keeps the recent ones (infra/fair_lru.py). With Redis, every
registration is also written there (``{<prefix>apq}:<sha256>``, with a TTL
that every read renews), so that any instance knows a hash any other
registered, and a miss in the process is looked up there. The server never
trusts a stored text blindly: a text whose hash is not its key is ignored.

Bounded per client as well as in total (issue #22, docs/decisions/0052): a
text belongs to the client that registered it (its IP; an IPv6 client's
/64), which may hold :data:`PER_CLIENT` of them; beyond, its own least
recently used one goes. When the store is full, the least recently used
text of the client holding the most goes. So one client cannot flush the
others' texts (a plain LRU of 512 let 700 registrations push out the first
one). The same rule holds in each process and, with Redis, across the
instances (the Lua scripts below: ``{<prefix>apq}-owner``, a hash of each
text's client; ``{<prefix>apq}-by:<client>``, a sorted set of its texts by
last use; ``{<prefix>apq}-counts``, a sorted set of the clients by texts held;
``{<prefix>apq}-total``). Their metadata is bounded by the store's size:
a text that expired is counted until its place is needed or its client
registers again.

[decision] Every key of the store carries one hash tag, ``{<prefix>apq}``
(docs/decisions/0068): the scripts read and write several of them at once,
which a Redis Cluster allows only within one hash slot. On a cluster the
store therefore lives on one shard, which is acceptable: it is small and
bounded (:data:`SHARED_KEPT` texts of at most 16 KB, and their metadata).

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

from infra.fair_lru import FairLRU
from infra.redis_client import DISCONNECTS, AnyRedis, close, fail_fast

log = logging.getLogger("mmk.apq")

KEPT = 512
"""Texts kept per process."""
SHARED_KEPT = 4096
"""Texts kept in Redis, for every instance (each at most ~16 KB, the
documents' length limit: ~64 MB at worst)."""
PER_CLIENT = 64
"""Texts one client may have registered: an app has tens of operations, and
its users mostly share them (a text is registered once for everyone)."""
UNKNOWN_CLIENT = "-"
QUIET_SECONDS = 30.0  # after a Redis failure, the next one is not logged for this long

_LUA_COMMON = """
local base = KEYS[1]
local owners, counts, total = base .. '-owner', base .. '-counts', base .. '-total'
local function held(c) return base .. '-by:' .. c end
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
"""
_REGISTER = (
    _LUA_COMMON
    + """
local sha, text, client = ARGV[1], ARGV[2], ARGV[3]
local ttl, per_client, size = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
local function forget(c, s)
  redis.call('DEL', base .. ':' .. s)
  redis.call('HDEL', owners, s)
  redis.call('ZREM', held(c), s)
  if tonumber(redis.call('ZINCRBY', counts, -1, c)) <= 0 then redis.call('ZREM', counts, c) end
  if tonumber(redis.call('DECR', total)) < 0 then redis.call('SET', total, 0) end
end
local function oldest(c)
  local found = redis.call('ZRANGE', held(c), 0, 0)[1]
  if found then forget(c, found) return end
  local n = tonumber(redis.call('ZSCORE', counts, c) or '0')  -- out of step: recount
  redis.call('ZREM', counts, c)
  redis.call('DECRBY', total, n)
end
local owner = redis.call('HGET', owners, sha)
if owner then
  if redis.call('EXPIRE', base .. ':' .. sha, ttl) == 1 then
    redis.call('ZADD', held(owner), now, sha)
    return 0
  end
  forget(owner, sha)
end
for _, s in ipairs(redis.call('ZRANGEBYSCORE', held(client), '-inf', now - ttl)) do
  forget(client, s)
end
if tonumber(redis.call('ZSCORE', counts, client) or '0') >= per_client then
  oldest(client)
elseif tonumber(redis.call('GET', total) or '0') >= size then
  local heaviest = redis.call('ZREVRANGE', counts, 0, 0)[1]
  if heaviest then oldest(heaviest) end
end
redis.call('SET', base .. ':' .. sha, text, 'EX', ttl)
redis.call('HSET', owners, sha, client)
redis.call('ZADD', held(client), now, sha)
redis.call('ZINCRBY', counts, 1, client)
redis.call('INCR', total)
return 1
"""
)
"""Registers a text (KEYS[1] ``{<prefix>apq}``; ARGV: sha256, text, client,
TTL, per client, size); a text kept already is renewed, its client kept."""
_READ = (
    _LUA_COMMON
    + """
local sha = ARGV[1]
local text = redis.call('GETEX', base .. ':' .. sha, 'EX', tonumber(ARGV[2]))
if not text then return nil end
local owner = redis.call('HGET', owners, sha)
if owner then redis.call('ZADD', held(owner), 'XX', now, sha) end
return {text, owner or ''}
"""
)
"""A text and its client (KEYS[1] ``{<prefix>apq}``; ARGV: sha256, TTL);
renews it."""


def sha256_of(query: str) -> str:
    """The APQ hash of a query text: sha256 of its UTF-8 bytes, lowercase hex."""
    return hashlib.sha256(query.encode()).hexdigest()


class PersistedQueries:
    """Query texts by hash: this process's, then Redis when given."""

    def __init__(
        self,
        redis_url: str | None = None,
        prefix: str = "mmk:",
        ttl: int = 86_400,
        size: int = KEPT,
        *,
        per_client: int = PER_CLIENT,
        shared_size: int = SHARED_KEPT,
    ) -> None:
        self._local: FairLRU[str, str] = FairLRU(size, min(per_client, size))
        self._ttl, self._per_client, self._shared_size = ttl, per_client, shared_size
        self._key = f"{{{prefix}apq}}"
        self._client: AnyRedis | None = None
        if redis_url:
            self._client = fail_fast(redis_url)
            self._register = self._client.register_script(_REGISTER)
            self._read = self._client.register_script(_READ)
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
            found = await self._read(keys=[self._key], args=[sha256, self._ttl])
        except DISCONNECTS as e:
            self._failed("read", e)
            return None
        if not found:
            return None
        raw, owner = found
        try:
            text = raw.decode() if isinstance(raw, bytes) else str(raw)
            client = owner.decode() if isinstance(owner, bytes) else str(owner)
        except UnicodeDecodeError:
            return None
        if sha256_of(text) != sha256:  # not written by us: never served
            return None
        self._local.put(sha256, text, client or UNKNOWN_CLIENT)
        return text

    def register(
        self, sha256: str, query: str, client: str = UNKNOWN_CLIENT
    ) -> asyncio.Task[None] | None:
        """Keep ``query`` (whose hash the caller has checked), registered by
        ``client`` (its IP key), here at once, and write it to Redis in the
        background; returns that write (None without Redis), which a caller
        may await before answering."""
        self._local.put(sha256, query, client)
        if self._client is None:
            return None
        task = asyncio.create_task(self._share(sha256, query, client))
        self._writes.add(task)
        task.add_done_callback(self._writes.discard)
        return task

    async def _share(self, sha256: str, query: str, client: str) -> None:
        assert self._client is not None
        limits = [self._ttl, self._per_client, self._shared_size]
        args: list[str | int] = [sha256, query, client, *limits]
        try:
            await self._register(keys=[self._key], args=args)
        except DISCONNECTS as e:
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
            await close(self._client)
