"""Spectator counts across instances in Redis (issue #28).

``<prefix>game:{<game>}:spectators`` is a hash with one field per instance
that has spectators of the game: ``<count>:<expiry>``, the expiry in Redis's
own milliseconds (``TIME``, so the instances' clocks do not matter). Every
``interval`` seconds each instance writes the games watched here, and
removes its field of a game nobody watches here any more; a field it stops
refreshing (the instance died) counts no more once expired, and the key
expires once no instance refreshes it. A read is one script over one key:
the other instances' live fields summed, plus this instance's own count,
read live. Redis away never fails a read: the last known sum of the others
is used (none: 0), with the local count.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from contextlib import suppress

import redis.asyncio as aioredis

from infra.redis_client import DISCONNECTS, fail_fast
from infra.spectators.keys import spectators_key
from infra.spectators.local import LocalSpectators
from infra.work_meter import detached

log = logging.getLogger("mmk.spectators")
FRESH = 1.0
"""Seconds a read of the other instances' counts is reused (a screen that
polls costs Redis one read a second, at most, per game and instance)."""

_NOW = "local t = redis.call('TIME') local now = t[1] * 1000 + math.floor(t[2] / 1000) "
_LIVE = """
local function live(v)
  local at = string.find(v, ':', 1, true)
  if not at then return nil end
  local n, exp = tonumber(string.sub(v, 1, at - 1)), tonumber(string.sub(v, at + 1))
  if n and exp and exp > now then return n end
  return nil
end
"""
WRITE = (
    _NOW
    + _LIVE
    + """
local ttl = tonumber(ARGV[3])
if tonumber(ARGV[2]) > 0 then
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[2] .. ':' .. (now + ttl))
  redis.call('PEXPIRE', KEYS[1], ttl)
else
  redis.call('HDEL', KEYS[1], ARGV[1])
end
local all = redis.call('HGETALL', KEYS[1])
for i = 1, #all, 2 do
  if not live(all[i + 1]) then redis.call('HDEL', KEYS[1], all[i]) end
end
return 1
"""
)
READ = (
    _NOW
    + _LIVE
    + """
local all = redis.call('HGETALL', KEYS[1])
local sum = 0
for i = 1, #all, 2 do
  if all[i] ~= ARGV[1] then sum = sum + (live(all[i + 1]) or 0) end
end
return sum
"""
)


class RedisSpectators:
    def __init__(
        self, url: str, local: LocalSpectators, prefix: str = "mmk:", interval: float = 5.0
    ) -> None:
        """``interval``: seconds between two writes of this instance's
        counts; a field lives three intervals without one."""
        self._client = fail_fast(url, decode_responses=True)
        self._local, self._prefix = local, prefix
        self._interval = interval
        self._ttl_ms = max(1, int(3 * interval * 1000))
        self.instance = secrets.token_hex(8)
        self._written: dict[str, int] = {}  # game -> count last written
        self._others: dict[str, tuple[int, float]] = {}  # game -> (sum, loop time read)
        self._write = self._client.register_script(WRITE)
        self._read = self._client.register_script(READ)
        self._task: asyncio.Task[None] | None = None

    async def count(self, game_id: str) -> int:
        here = self._local.count(game_id)
        now = asyncio.get_running_loop().time()
        known = self._others.get(game_id)
        if known is not None and now - known[1] < FRESH:
            return here + known[0]
        try:
            others = int(
                await self._read(keys=[spectators_key(self._prefix, game_id)], args=[self.instance])
            )
        except DISCONNECTS as e:
            log.warning("spectators: counts of other instances not read (%s)", e)
            return here + (0 if known is None else known[0])
        if len(self._others) > 10_000:  # a bounded memo, not a store
            self._others.clear()
        self._others[game_id] = (others, now)
        return here + others

    async def publish(self) -> None:
        """Writes this instance's counts: every game watched here, and a
        removal for each game watched here at the last write but not now."""
        counts = self._local.all()
        await self._send(counts | {g: 0 for g in self._written if g not in counts})
        self._written = counts

    async def _send(self, changes: dict[str, int]) -> None:
        writes: list[tuple[list[str], list[str | int]]] = [
            ([spectators_key(self._prefix, g)], [self.instance, n, self._ttl_ms])
            for g, n in changes.items()
        ]
        client = self._client
        if not isinstance(client, aioredis.Redis):  # a cluster: keys on many shards
            for keys, args in writes:
                await self._write(keys=keys, args=args)
            return
        async with client.pipeline(transaction=False) as pipe:
            for keys, args in writes:
                await self._write(keys=keys, args=args, client=pipe)
            await pipe.execute()

    def start(self) -> None:
        if self._task is None:
            self._task = detached(self._loop())

    async def _loop(self) -> None:
        while True:
            try:
                await self.publish()
            except DISCONNECTS as e:  # the next beat writes it
                log.warning("spectators: counts not written (%s)", e)
            except Exception:
                log.exception("spectators: writing the counts failed; trying again later")
            await asyncio.sleep(self._interval)

    async def aclose(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None
        with suppress(*DISCONNECTS):  # leave no field for the others to count until it expires
            await self._send(dict.fromkeys(self._written, 0))
        self._written = {}
        await self._client.aclose()
