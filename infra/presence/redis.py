"""Presence in Redis (scale-out, docs/decisions/0047).

``<prefix>presence:{<game>}`` is a sorted set with one member
``<instance>|<player>`` per instance where the player has a live
subscription to the game; its score is when the entry expires (Redis's own
clock, ``TIME``, so instances' clocks do not matter). Each instance
refreshes its entries every heartbeat; an instance that dies without
cleaning up loses them ``ttl`` later, and the key itself expires once no
instance refreshes it. ``<prefix>presence-marks:{<game>}`` is a hash of the
players' last announced marks, swapped by a script (compare-and-set).

The game id in braces is the game's Redis Cluster hash tag (docs/decisions/0068):
a game's presence lives on the shard of its channels. On a cluster the
heartbeat's scripts go one call per game (redis-py refuses scripts in a
cluster pipeline), at most :data:`CONCURRENT` at once.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime

from redis.asyncio.cluster import RedisCluster

from domain.ports import PresenceUnavailable
from domain.presence import Mark
from infra.redis_client import AWAY, DISCONNECTS, close, fail_fast

log = logging.getLogger("mmk.presence")
UNREACHABLE = AWAY
"""What a read raises while Redis is away (not a bug, such as a script error)."""
MARKS_TTL_MS = 86_400_000  # a game's marks outlive its last refresh by a day
CONCURRENT = 64  # a heartbeat's script calls in flight at once, on a cluster

_NOW = "local t = redis.call('TIME') local now = t[1] * 1000 + math.floor(t[2] / 1000) "
REFRESH = (
    _NOW
    + """
local ttl = tonumber(ARGV[1])
for i = 2, #ARGV do redis.call('ZADD', KEYS[1], now + ttl, ARGV[i]) end
if redis.call('PTTL', KEYS[1]) < ttl then redis.call('PEXPIRE', KEYS[1], ttl) end
return 1
"""
)
_LIVE = _NOW + "redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now) "
"""The entries of KEYS[1] that have not expired (the others dropped)."""
ONLINE = _LIVE + "return redis.call('ZRANGE', KEYS[1], 0, -1)"
SEEN = _LIVE + "return {redis.call('ZRANGE', KEYS[1], 0, -1), redis.call('HGETALL', KEYS[2])}"
SWAP = """
local cur = redis.call('HGET', KEYS[1], ARGV[1])
if (cur == false and ARGV[2] == '') or cur == ARGV[2] then
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
  redis.call('PEXPIRE', KEYS[1], ARGV[4])
  return 1
end
return 0
"""


def encode(mark: Mark | None) -> str:
    """``1`` connected, ``1:<iso time>`` away since, ``0`` gone; ``""`` none."""
    if mark is None:
        return ""
    if not mark.connected:
        return "0"
    return "1" if mark.away_since is None else f"1:{mark.away_since.isoformat()}"


def decode(text: str) -> Mark | None:
    if text == "0":
        return Mark(connected=False)
    if text == "1":
        return Mark(connected=True)
    if text.startswith("1:"):
        try:
            return Mark(connected=True, away_since=datetime.fromisoformat(text[2:]))
        except ValueError:
            pass
    return None  # not ours: as if unmarked


def _players(members: list[str]) -> frozenset[str]:
    """The players of entries ``<instance>|<player>``."""
    return frozenset(m.split("|", 1)[1] for m in members if "|" in m)


@contextmanager
def _reachable() -> Iterator[None]:
    """Redis away is :class:`~domain.ports.PresenceUnavailable` (other
    errors, such as a script's, stay what they are)."""
    try:
        yield
    except UNREACHABLE as e:
        raise PresenceUnavailable(str(e)) from e


class RedisPresence:
    def __init__(self, url: str, prefix: str = "mmk:", ttl: float = 15.0) -> None:
        """``ttl``: seconds an entry lives without a heartbeat."""
        self._client = fail_fast(url, decode_responses=True)
        self._prefix = prefix
        self._ttl_ms = max(1, int(ttl * 1000))
        self.instance = secrets.token_hex(8)
        self._live: dict[str, Counter[str]] = {}
        self._refresh = self._client.register_script(REFRESH)
        self._online = self._client.register_script(ONLINE)
        self._swap = self._client.register_script(SWAP)
        self._seen = self._client.register_script(SEEN)

    def _entries(self, game_id: str) -> str:
        return f"{self._prefix}presence:{{{game_id}}}"

    def _marks(self, game_id: str) -> str:
        return f"{self._prefix}presence-marks:{{{game_id}}}"

    def _member(self, player_id: str) -> str:
        return f"{self.instance}|{player_id}"

    async def join(self, game_id: str, player_id: str) -> None:
        live = self._live.setdefault(game_id, Counter())
        live[player_id] += 1
        if live[player_id] == 1:
            try:
                await self._refresh(
                    keys=[self._entries(game_id)], args=[self._ttl_ms, self._member(player_id)]
                )
            except DISCONNECTS as e:  # the next heartbeat writes it
                log.warning("presence: join not written (%s)", e)

    async def leave(self, game_id: str, player_id: str) -> None:
        live = self._live.get(game_id)
        if live is None or live[player_id] <= 0:
            return
        live[player_id] -= 1
        if live[player_id] > 0:
            return
        del live[player_id]
        if not live:
            del self._live[game_id]
        try:
            await self._client.zrem(self._entries(game_id), self._member(player_id))
        except DISCONNECTS as e:  # it expires by itself
            log.warning("presence: leave not written (%s)", e)

    async def online(self, game_id: str) -> frozenset[str]:
        with _reachable():
            return _players(await self._online(keys=[self._entries(game_id)]))

    async def seen(self, game_id: str) -> tuple[frozenset[str], dict[str, Mark]]:
        """One script: the entries (the expired dropped) and the marks; a
        game's two keys share its hash tag, so also on a cluster."""
        with _reachable():
            members, flat = await self._seen(keys=[self._entries(game_id), self._marks(game_id)])
        marks = {
            p: m
            for p, text in zip(flat[::2], flat[1::2], strict=True)
            if (m := decode(text)) is not None
        }
        return _players(members), marks

    async def swap(self, game_id: str, player_id: str, old: Mark | None, new: Mark) -> bool:
        with _reachable():
            done = await self._swap(
                keys=[self._marks(game_id)],
                args=[player_id, encode(old), encode(new), MARKS_TTL_MS],
            )
        return bool(done)

    def local_games(self) -> set[str]:
        """Games with a live subscription here (the keeper reviews them)."""
        return set(self._live)

    async def heartbeat(self) -> None:
        """Refresh this instance's entries (one pipeline; on a cluster, one
        script call per game); never raises (but when cancelled)."""
        if not self._live:
            return
        if isinstance(self._client, RedisCluster):
            await self._heartbeat_sharded()
            return
        try:
            async with self._client.pipeline(transaction=False) as pipe:
                for game_id, live in self._live.items():
                    members = [self._member(p) for p in live]
                    await self._refresh(
                        keys=[self._entries(game_id)], args=[self._ttl_ms, *members], client=pipe
                    )
                await pipe.execute()
        except DISCONNECTS as e:
            log.warning("presence: heartbeat failed (%s)", e)
        except Exception:
            log.exception("presence: heartbeat failed")

    async def _heartbeat_sharded(self) -> None:
        async def refresh(game_id: str, members: list[str]) -> None:
            await self._refresh(keys=[self._entries(game_id)], args=[self._ttl_ms, *members])

        work = [(g, [self._member(p) for p in live]) for g, live in self._live.items()]
        failed: BaseException | None = None
        for at in range(0, len(work), CONCURRENT):
            results = await asyncio.gather(
                *(refresh(g, m) for g, m in work[at : at + CONCURRENT]), return_exceptions=True
            )
            for result in results:
                if isinstance(result, DISCONNECTS):
                    failed = result
                elif isinstance(result, Exception):  # a bug: said, and the others go on
                    log.error("presence: heartbeat failed", exc_info=result)
                elif isinstance(result, BaseException):  # cancelled
                    raise result
        if failed is not None:
            log.warning("presence: heartbeat failed (%s)", failed)

    def forget(self, game_id: str) -> None:
        """Marks expire in Redis by themselves."""

    async def ping(self) -> bool:
        try:
            return bool(await self._client.ping())
        except DISCONNECTS:
            return False

    async def aclose(self) -> None:
        """Remove this instance's entries (a clean shutdown), then disconnect."""
        try:
            async with self._client.pipeline(transaction=False) as pipe:
                for game_id, live in self._live.items():
                    pipe.zrem(self._entries(game_id), *(self._member(p) for p in live))
                await pipe.execute()
        except DISCONNECTS as e:
            log.warning("presence: entries not removed at shutdown (%s); they expire", e)
        self._live.clear()
        await close(self._client)
