"""Rate limits per bearer token and per client IP (issue #6, docs/operations.md
"Limits": ``RATE_LIMITED``): GCRA, the generic cell rate algorithm.

Each key keeps one number, its *theoretical arrival time* (TAT). A rate of
``limit`` per ``period`` spaces requests ``period / limit`` apart and lets a
burst of up to ``limit`` through at once: a request of cost ``n`` at ``now``
moves the TAT to ``max(TAT, now) + n * interval`` and is allowed when that is
at most ``now + period``. A refused request changes nothing and learns how
long to wait. A request checks its IP key and its token key together: it is
allowed, and charged to both, only when both allow it.

:class:`LocalLimiter` keeps the TATs in a dict (one process);
:class:`RedisLimiter` keeps them in Redis, checked and charged by one Lua
script (atomic, one round trip, Redis' own clock), so that every server
instance shares the limits; the work budget is checked on each instance's
view of it, which every settlement round brings back (docs/decisions/0074).
[decision] When Redis fails, the limits stay on, per process (the local
limiter) for a few seconds before Redis is tried again: a Redis outage
neither stops play nor lifts the limits.

[decision] A token is keyed by a digest of it (no secret in memory or in
Redis keys; no database lookup before the limit); an IPv6 client by its /64
(one subscriber line), an IPv4 client by its address. pyrate-limiter (a
schemathesis dependency) was not used: its Redis bucket logs every request
in a sorted set (memory per key grows with the limit), checks one key per
call and gives no retry time.
"""

from __future__ import annotations

import hashlib
import ipaddress
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final, Literal, Protocol

from infra.redis_client import DISCONNECTS, close, fail_fast

log = logging.getLogger("mmk.rate_limit")

PERIOD = 60.0  # seconds: limits are set per minute
FALLBACK_SECONDS = 5.0  # per-process limits this long after a Redis failure
SLACK = 1e-6
"""Seconds of float rounding a budget's check forgives (a request that fits
exactly was refused now and then: ``now + 60 - now - 60`` is not 0.0)."""
KEYS_KEPT = 10_000
"""Callers whose budget keys a process limiter keeps worked out."""
MAX_DEBT = PERIOD
"""Work charged after the fact may run a budget this far into debt (a caller
then waits up to this long past a full period); more is forgiven."""
VIEW_FRESH = 1.0
"""Seconds a Redis limiter trusts its view of a work budget after a
settlement round brought it back (docs/decisions/0074): four rounds."""
VIEW_KEPT = 50_000
"""Work budget keys a Redis limiter's view holds before it drops the stale
ones."""


Kind = Literal["m", "s", "q", "k"]
"""What is limited; each kind has its own budgets (plain strings: cheap)."""
MUTATION: Final = "m"
SUBSCRIPTION: Final = "s"
QUERY: Final = "q"
"""A query's budget counts its estimated cost (api/graphql/cost.py), not requests."""
SERVICE: Final = "k"
"""A service key's calls (issue #24): each root field of its operations, its
own budget per key instead of a player's mutations' (its IP's is the
mutations' per IP)."""


@dataclass(frozen=True, slots=True)
class Limits:
    """Requests per minute, per token and per IP, by kind (a query's cost
    units, not requests); 0 is off."""

    mutations_per_token: int = 0
    mutations_per_ip: int = 0
    subscriptions_per_token: int = 0
    subscriptions_per_ip: int = 0
    query_cost_per_token: int = 0
    query_cost_per_ip: int = 0
    cost_burst: float = PERIOD
    """Seconds of a cost budget's rate a caller may spend at once (GCRA's
    tolerance); the request budgets' burst is their minute's count."""
    service_calls_per_key: int = 0

    @property
    def queries_limited(self) -> bool:
        return bool(self.query_cost_per_token or self.query_cost_per_ip)

    @property
    def off(self) -> bool:
        return not (
            self.mutations_per_token
            or self.mutations_per_ip
            or self.subscriptions_per_token
            or self.subscriptions_per_ip
            or self.service_calls_per_key
            or self.queries_limited
        )

    def tolerance(self, kind: Kind) -> float:
        """How far (seconds) a key's TAT may run ahead of now."""
        return min(PERIOD, self.cost_burst) if kind == QUERY else PERIOD

    def of(self, kind: Kind) -> tuple[int, int]:
        """(per IP, per token) of ``kind``."""
        if kind == MUTATION:
            return self.mutations_per_ip, self.mutations_per_token
        if kind == QUERY:
            return self.query_cost_per_ip, self.query_cost_per_token
        if kind == SERVICE:
            return self.mutations_per_ip, self.service_calls_per_key
        return self.subscriptions_per_ip, self.subscriptions_per_token


Settlement = tuple[Kind, str | None, str | None, int]
"""Work measured after the fact: kind, IP, token and the units to charge
(negative: a refund of what was reserved and not used)."""


class RateLimiter(Protocol):
    """Checks and charges one request; returns 0.0 when it may go, else the
    seconds to wait before it would be allowed. ``need``: room the budgets
    must have for it to go, when more than it is charged now (an estimate
    whose measured cost is charged after the fact). ``settle`` charges measured
    work whatever the budgets hold (docs/decisions/0049) and returns, per
    settlement, the seconds until its budgets have room again."""

    limits: Limits

    async def check(
        self, kind: Kind, ip: str | None, token: str | None, cost: int = 1, need: int = 0
    ) -> float: ...

    async def settle(self, items: Sequence[Settlement]) -> list[float]: ...

    def owes(self) -> bool:
        """Whether charges wait for the next settlement (then it is due even
        with no measured work to settle)."""
        ...

    async def aclose(self) -> None: ...


def token_key(token: str) -> str:
    """A short digest of a bearer token, never the token itself."""
    return hashlib.blake2b(token.encode(), digest_size=12).hexdigest()


def ip_key(ip: str) -> str:
    """The client's address; an IPv6 one as its /64."""
    if ":" not in ip:
        return ip
    try:
        return str(ipaddress.IPv6Network((ip, 64), strict=False))
    except ValueError:
        return ip


Budget = tuple[str, int, float]  # (key, limit per PERIOD, tolerance in seconds)


def budgets(
    limits: Limits, kind: Kind, ip: str | None, token: str | None, digest: bool = True
) -> list[Budget]:
    """The keys one request is charged to (the IP's, the token's), with their
    limits and tolerance; ``digest=False`` keys a token by itself (in process
    memory only)."""
    per_ip, per_token = limits.of(kind)
    tolerance = limits.tolerance(kind)
    out: list[Budget] = []
    if per_ip:
        out.append((kind + ":ip:" + ip_key(ip or "-"), per_ip, tolerance))
    if per_token and token:
        key = kind + ":tk:" + (token_key(token) if digest else token)
        out.append((key, per_token, tolerance))
    return out


def burst(limit: int, tolerance: float) -> float:
    """The units a key of ``limit`` a period and ``tolerance`` seconds takes
    at once: what one charge costs at most."""
    return tolerance * limit / PERIOD


def gcra(
    keys: Sequence[Budget], tats: Sequence[float], cost: int, need: int, now: float
) -> tuple[float, list[float]]:
    """One GCRA step over ``keys`` whose TATs are ``tats`` (one in the past
    counts as ``now``): the seconds until all have room for ``need`` and
    ``cost`` (0.0, or within :data:`SLACK`: they have), and each key's TAT
    once charged ``cost``, a burst at most."""
    wait = 0.0
    new: list[float] = []
    gate = need if need > cost else cost
    for (_, limit, tolerance), tat in zip(keys, tats, strict=True):
        if tat < now:
            tat = now
        interval = PERIOD / limit
        most = burst(limit, tolerance)
        over = tat + (gate if gate < most else most) * interval - now - tolerance
        if over > wait:
            wait = over
        new.append(tat + (cost if cost < most else most) * interval)
    return wait, new


class LocalLimiter:
    """GCRA in one process; ``clock`` is monotonic seconds (tests pass a fake)."""

    SWEEP_AT = 50_000  # keys kept before expired ones are dropped

    def __init__(self, limits: Limits, clock: Callable[[], float] = time.monotonic) -> None:
        self.limits = limits
        self._clock = clock
        self._tats: dict[str, float] = {}
        self._sweep_at = self.SWEEP_AT
        self._keys: dict[tuple[Kind, str | None, str | None], list[Budget]] = {}

    async def check(
        self, kind: Kind, ip: str | None, token: str | None, cost: int = 1, need: int = 0
    ) -> float:
        return self.check_now(kind, ip, token, cost, need)

    def check_now(
        self, kind: Kind, ip: str | None, token: str | None, cost: int = 1, need: int = 0
    ) -> float:
        """:meth:`check` without a coroutine (the API's in-process fast path)."""
        return self.hit(self.keys(kind, ip, token), cost, need)

    def keys(self, kind: Kind, ip: str | None, token: str | None) -> list[Budget]:
        """:func:`budgets` of one caller, kept (most callers come again soon)."""
        found = self._keys.get((kind, ip, token))
        if found is None:
            if len(self._keys) >= KEYS_KEPT:
                self._keys.clear()
            found = self._keys[(kind, ip, token)] = budgets(
                self.limits, kind, ip, token, digest=False
            )
        return found

    def hit(self, keys: Sequence[Budget], cost: int, need: int = 0) -> float:
        """Charge ``cost`` to every key if all have room for it (and for
        ``need``); else the wait, in seconds."""
        now = self._clock()
        tats = self._tats
        wait, new = gcra(keys, [tats.get(key, now) for key, _, _ in keys], cost, need, now)
        if wait > SLACK:
            return wait
        for (key, _, _), tat in zip(keys, new, strict=True):
            tats[key] = tat
        if len(tats) > self._sweep_at:
            self._sweep(now)
        return 0.0

    def settle_now(self, items: Sequence[Settlement]) -> list[float]:
        """:meth:`settle` without a coroutine."""
        return [self.force(self.keys(kind, ip, token), units) for kind, ip, token, units in items]

    async def settle(self, items: Sequence[Settlement]) -> list[float]:
        return self.settle_now(items)

    def force(self, keys: Sequence[Budget], units: int) -> float:
        """Charge ``units`` to every key whatever it holds (a debt of at most
        :data:`MAX_DEBT`; negative units give back, down to a full budget);
        the seconds until the dearest key has room again."""
        now = self._clock()
        tats = self._tats
        wait = 0.0
        for key, limit, tolerance in keys:
            tat = tats.get(key, now)
            if tat < now:
                tat = now
            tat = min(tat + units * PERIOD / limit, now + tolerance + MAX_DEBT)
            if tat <= now:
                tats.pop(key, None)
                continue
            tats[key] = tat
            if tat - now - tolerance > wait:
                wait = tat - now - tolerance
        return wait if wait > SLACK else 0.0

    def owes(self) -> bool:
        return False  # every charge is taken at once

    def _sweep(self, now: float) -> None:
        """Drop keys whose TAT has passed (they act as new ones)."""
        self._tats = {k: t for k, t in self._tats.items() if t > now}
        self._sweep_at = max(self.SWEEP_AT, 2 * len(self._tats))

    def __len__(self) -> int:
        return len(self._tats)

    async def aclose(self) -> None:
        self._tats.clear()


# KEYS: the budgets' keys. ARGV[1]: the cost; ARGV[1 + i]: key i's limit per
# period; then the period, the room needed (at least the cost) and each
# key's tolerance. Times in microseconds, Redis' clock; returns 0 (allowed
# and charged) or the microseconds to wait (nothing charged).
_GCRA = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local period = tonumber(ARGV[2 + #KEYS])
local cost = tonumber(ARGV[1])
local need = math.max(cost, tonumber(ARGV[3 + #KEYS]))
local wait = 0
local tats = {}
for i, key in ipairs(KEYS) do
  local limit = tonumber(ARGV[1 + i])
  local tolerance = tonumber(ARGV[3 + #KEYS + i])
  local interval = period / limit
  local most = tolerance / interval
  local tat = tonumber(redis.call('GET', key) or now)
  if tat < now then tat = now end
  local over = tat + math.min(need, most) * interval - now - tolerance
  if over > wait then wait = over end
  tats[i] = tat + math.min(cost, most) * interval
end
if wait > 1 then return math.ceil(wait) end  -- 1 us: float rounding
for i, key in ipairs(KEYS) do
  local ttl = math.ceil((tats[i] - now) / 1000)
  if ttl > 0 then  -- a free call on a fresh key leaves nothing to keep (PX 0 is an error)
    redis.call('SET', key, string.format('%.0f', tats[i]), 'PX', ttl)
  end
end
return 0
"""


# KEYS: the budgets' keys. ARGV[1]: the period, ARGV[2]: the debt a TAT may
# carry past its tolerance; then per key its units (negative: a refund), its
# limit and its tolerance. Times in microseconds, Redis' clock; returns per
# key how far its TAT is ahead of now (0: a full budget); it has room again
# once that is within its tolerance.
_SETTLE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local period = tonumber(ARGV[1])
local debt = tonumber(ARGV[2])
local out = {}
for i, key in ipairs(KEYS) do
  local units = tonumber(ARGV[3 * i])
  local limit = tonumber(ARGV[1 + 3 * i])
  local tolerance = tonumber(ARGV[2 + 3 * i])
  local tat = tonumber(redis.call('GET', key) or now)
  if tat < now then tat = now end
  tat = math.min(tat + units * period / limit, now + tolerance + debt)
  if tat <= now then
    redis.call('DEL', key)
    out[i] = 0
  else
    redis.call('SET', key, string.format('%.0f', tat), 'PX', math.ceil((tat - now) / 1000))
    out[i] = math.ceil(tat - now)
  end
end
return out
"""


class RedisLimiter:
    """GCRA in Redis, shared by every server instance on it: one script call
    (one round trip) per checked request, but for the work budget on a fresh
    view (below). Keys: ``{<prefix>rl}:<kind>:ip:..``
    and ``{<prefix>rl}:<kind>:tk:..``, each expiring when its budget is full
    again.

    [decision] One hash tag for every budget (docs/decisions/0068): a request
    is checked and charged on its IP's and its token's budgets by one script,
    and a settlement on many callers', which a Redis Cluster allows only
    within one hash slot. On a cluster the budgets therefore live on one
    shard: one short string per recent caller and kind, each expiring within
    about a minute of its last use.

    [decision] The work budget (:data:`QUERY`) is checked against this
    instance's view of it while the view is fresh (docs/decisions/0074):
    each settlement round brings back the budgets it charged, as Redis holds
    them; a request whose keys were all seen within :data:`VIEW_FRESH` is
    checked and charged here, its charge sent with the next round. The work
    budget is charged after the fact anyway; the other kinds (counts of
    mutations, subscriptions, service calls) stay one round trip each."""

    def __init__(
        self,
        url: str,
        prefix: str,
        limits: Limits,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.limits = limits
        self._prefix = f"{{{prefix}rl}}:"
        self._client = fail_fast(url)
        self._script = self._client.register_script(_GCRA)
        self._settle = self._client.register_script(_SETTLE)
        self._period_us = str(int(PERIOD * 1_000_000))
        self.fallback = LocalLimiter(limits, clock)
        self._clock = clock
        self._down_until = 0.0
        # the work budget's keys as the last round found them: (TAT, when),
        # local monotonic seconds, this instance's charges since included
        self._view: dict[str, tuple[float, float]] = {}
        # charges taken on the view, for the next round: key -> (units, budget)
        self._owed: dict[str, tuple[int, Budget]] = {}
        self._prune_at = VIEW_KEPT

    async def check(
        self, kind: Kind, ip: str | None, token: str | None, cost: int = 1, need: int = 0
    ) -> float:
        keys = budgets(self.limits, kind, ip, token)
        if not keys:
            return 0.0
        if self._down_until and self._clock() < self._down_until:
            return self.fallback.hit(keys, cost, need)
        if kind == QUERY:
            wait = self._on_view(keys, cost, need)
            if wait is not None:
                return wait
        args = [
            str(cost),
            *(str(limit) for _, limit, _ in keys),
            self._period_us,
            str(need),
            *(str(int(tolerance * 1_000_000)) for _, _, tolerance in keys),
        ]
        try:
            wait_us = await self._script(keys=[self._prefix + k for k, _, _ in keys], args=args)
        except DISCONNECTS as e:
            if not self._down_until:
                log.warning("rate limits: Redis failed (%s); per-process limits for now", e)
            self._down_until = self._clock() + FALLBACK_SECONDS
            return self.fallback.hit(keys, cost, need)
        if self._down_until:
            log.info("rate limits: Redis is back")
            self._down_until = 0.0
        return int(wait_us) / 1_000_000

    def _on_view(self, keys: Sequence[Budget], cost: int, need: int) -> float | None:
        """The check on the view (None: a key is not in it, or not fresh):
        :func:`gcra` as in process, the charge owed to Redis."""
        now = self._clock()
        view = self._view
        tats: list[float] = []
        for key, _, _ in keys:
            seen = view.get(key)
            if seen is None or now - seen[1] > VIEW_FRESH:
                return None
            tats.append(seen[0])
        wait, new = gcra(keys, tats, cost, need, now)
        if wait > SLACK:
            return wait
        owed = self._owed
        for budget, tat in zip(keys, new, strict=True):
            key, limit, tolerance = budget
            units = owed[key][0] if key in owed else 0
            view[key] = (tat, view[key][1])
            owed[key] = (units + min(cost, int(burst(limit, tolerance))), budget)  # as gcra
        return 0.0

    def owes(self) -> bool:
        return bool(self._owed)

    async def settle(self, items: Sequence[Settlement]) -> list[float]:
        """Every settlement, and the charges owed, in one script call (one
        round trip); what it finds of the work budget's keys is the view."""
        keyed = [budgets(self.limits, kind, ip, token) for kind, ip, token, _ in items]
        owed, self._owed = self._owed, {}
        if not any(keyed) and not owed:
            return [0.0] * len(items)
        if self._down_until and self._clock() < self._down_until:
            return self._settle_here(keyed, items, owed)
        names: list[str] = []
        args = [self._period_us, str(int(MAX_DEBT * 1_000_000))]
        # what was owed first: a request's refund comes after its reservation
        charged: list[tuple[Budget, int]] = [(budget, units) for units, budget in owed.values()]
        for keys, (_, _, _, units) in zip(keyed, items, strict=True):
            charged += [(budget, units) for budget in keys]
        for (key, limit, tolerance), units in charged:
            names.append(self._prefix + key)
            args += [str(units), str(limit), str(int(tolerance * 1_000_000))]
        # cancelled while it waits for the reply (the Settler's aclose), the
        # call went and Redis charged it: what was owed is not owed again
        try:
            ahead_us = await self._settle(keys=names, args=args)
        except DISCONNECTS as e:
            if not self._down_until:
                log.warning("rate limits: Redis failed (%s); per-process limits for now", e)
            self._down_until = self._clock() + FALLBACK_SECONDS
            return self._settle_here(keyed, items, owed)
        now = self._clock()
        waits: dict[str, float] = {}
        for ((key, _, tolerance), _), ahead in zip(charged, ahead_us, strict=True):
            seconds = int(ahead) / 1_000_000
            waits[key] = max(0.0, seconds - tolerance)
            if key.startswith(QUERY + ":"):
                self._seen(key, now + seconds, now)
        return [max((waits[k] for k, _, _ in keys), default=0.0) for keys in keyed]

    def _seen(self, key: str, tat: float, now: float) -> None:
        """A work budget's key as Redis holds it, plus what this instance
        charged on the view since the round went (owed again)."""
        again = self._owed.get(key)
        if again is not None:
            units, (_, limit, _) = again
            tat += units * PERIOD / limit
        if len(self._view) >= self._prune_at and key not in self._view:
            self._view = {k: v for k, v in self._view.items() if now - v[1] <= VIEW_FRESH}
            self._prune_at = max(VIEW_KEPT, 2 * len(self._view))
        self._view[key] = (tat, now)

    def _settle_here(
        self,
        keyed: list[list[Budget]],
        items: Sequence[Settlement],
        owed: dict[str, tuple[int, Budget]],
    ) -> list[float]:
        """Redis is away: this process's limits take the settlements and
        what was owed; the view is dropped (checked afresh once it is back)."""
        for units, budget in owed.values():
            self.fallback.force([budget], units)
        self._view.clear()
        return [self.fallback.force(keys, item[3]) for keys, item in zip(keyed, items, strict=True)]

    async def aclose(self) -> None:
        await close(self._client)


def build_limiter(limits: Limits, redis_url: str | None, prefix: str) -> RateLimiter | None:
    """None when every limit is off (the API then pays nothing)."""
    if limits.off:
        return None
    if redis_url:
        return RedisLimiter(redis_url, prefix, limits)
    return LocalLimiter(limits)
