"""Measured work charged to the cost budgets after the fact (issue #22,
docs/decisions/0049).

A request's estimate is reserved before it runs (api/graphql/limits.py);
what its :class:`~infra.work_meter.Meter` then measured is settled here: the
difference is charged to the caller's token and IP budgets, or given back.
A request is settled when it ends; a WebSocket connection or an HTTP stream
every :data:`INTERVAL` while it is open, and when it ends. Settling marks
the callers whose budgets ran dry (``Meter.dry_until``), so that their
streams stop before the next event.

With the in-process limiter a request is settled at once; with Redis, the
settlements of an interval go in one script call (one round trip), with the
charges the limiter took on its view of the budgets (docs/decisions/0074).
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import Callable
from typing import TypeVar

from infra.rate_limit import QUERY, LocalLimiter, RateLimiter, Settlement
from infra.work_meter import DEAR_FOR, Meter, detached, forgiven

log = logging.getLogger("mmk.rate_limit")

INTERVAL = 0.25
"""Seconds between settlements of open connections and streams."""
DRY_KEPT = 10_000
"""Callers whose budgets ran dry (or whose requests were dear) a settler
remembers."""
DEAR_SHARE = 0.05
"""The share of the event loop a caller's queries may take, over about the
last second, before its next ones wait their turn from their first step
(docs/decisions/0055): a player looking at its table a few times a second
takes well under 1 %; a client sending dear documents as fast as they are
answered takes tens of percent, and is known after a tenth of a second."""
USAGE_HALF_LIFE = 0.5
"""Seconds after which a caller's measured loop time counts half."""
DEAR_LEVEL = DEAR_SHARE * USAGE_HALF_LIFE / math.log(2)
"""The decayed loop seconds that a caller steadily at DEAR_SHARE holds."""


Caller = tuple[str | None, str | None]
"""A caller: its client IP and its bearer token."""
V = TypeVar("V")


def _kept(memory: dict[Caller, V], caller: Caller, value: V) -> None:
    """``caller``'s value remembered; a full memory (:data:`DRY_KEPT`) is
    emptied first to make room for a new caller."""
    if len(memory) >= DRY_KEPT and caller not in memory:
        memory.clear()
    memory[caller] = value


class Settler:
    """Settles meters against one limiter's cost budgets."""

    def __init__(
        self,
        limiter: RateLimiter,
        interval: float = INTERVAL,
        clock: Callable[[], float] = time.monotonic,
        *,
        hold: bool = False,
    ) -> None:
        """``hold``: dear steps wait their turn (MMK_HOLD_DEAR_STEPS): the
        settler remembers dear callers and lets held connections go."""
        self.limiter = limiter
        self.hold = hold
        self.interval = interval
        self._clock = clock
        self._open: set[Meter] = set()
        self._ended: list[Meter] = []
        self._task: asyncio.Task[None] | None = None
        self._local = limiter if isinstance(limiter, LocalLimiter) else None
        self._dry: dict[Caller, float] = {}
        self._dear: dict[Caller, float] = {}
        # each caller's queries' loop time, decayed by USAGE_HALF_LIFE: (level, at)
        self._usage: dict[Caller, tuple[float, float]] = {}

    def dry_for(self, ip: str | None, token: str | None) -> float:
        """Seconds until this caller's budgets have room again, as their last
        settlement found them (0.0: room, or not known)."""
        until = self._dry.get((ip, token))
        if until is None:
            return 0.0
        left = until - self._clock()
        if left <= 0:
            del self._dry[(ip, token)]
            return 0.0
        return left

    def dear(self, ip: str | None, token: str | None) -> bool:
        """Whether this caller's queries took over :data:`DEAR_SHARE` of the
        loop lately (within DEAR_FOR of when they were found to)."""
        until = self._dear.get((ip, token))
        if until is None:
            return False
        if until <= self._clock():
            del self._dear[(ip, token)]
            return False
        return True

    def _dried(self, meter: Meter, wait: float) -> None:
        meter.dry_until = self._clock() + wait if wait > 0 else 0.0
        if wait > 0:
            _kept(self._dry, (meter.ip, meter.token), meter.dry_until)

    def open(self, meter: Meter) -> None:
        """A caller's request or connection starts (settled while it lasts)."""
        self._open.add(meter)
        if self._task is None:
            self._task = detached(self._run())

    def close(self, meter: Meter) -> None:
        """It ended: settled now (in process) or with the next round."""
        self._open.discard(meter)
        if self.hold and meter.demotable:
            self._used((meter.ip, meter.token), meter.seconds)
        local = self._local
        if local is None:
            self._ended.append(meter)
            return
        units = meter.units - meter.charged
        if units:
            meter.charged += units
            self._dried(meter, local.force(local.keys(QUERY, meter.ip, meter.token), units))

    def _used(self, caller: Caller, seconds: float) -> None:
        """A query of ``caller`` took ``seconds`` of the loop: past
        :data:`DEAR_LEVEL` of recent use, its next requests are held."""
        now = self._clock()
        level, at = self._usage.get(caller, (0.0, now))
        level = level * 0.5 ** ((now - at) / USAGE_HALF_LIFE) + seconds
        _kept(self._usage, caller, (level, now))
        if level > DEAR_LEVEL:
            _kept(self._dear, caller, now + DEAR_FOR)

    def _due(self, meters: list[Meter]) -> tuple[list[Settlement], list[Meter]]:
        items: list[Settlement] = []
        charged: list[Meter] = []
        for meter in meters:
            units = meter.units - meter.charged
            if units:
                meter.charged += units
                items.append((QUERY, meter.ip, meter.token, units))
                charged.append(meter)
        return items, charged

    def _mark(self, meters: list[Meter], waits: list[float]) -> None:
        for meter, wait in zip(meters, waits, strict=True):
            self._dried(meter, wait)

    async def settle(self) -> None:
        """One round: the open meters' new work, and the ended ones'; an
        open connection held from the start past its time is let go."""
        if self.hold:
            now = time.monotonic()
            for meter in self._open:
                forgiven(meter, now)
        meters = [*self._open, *self._ended]
        self._ended.clear()
        items, charged = self._due(meters)
        if items or self.limiter.owes():
            self._mark(charged, await self.limiter.settle(items))

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self.interval)
            try:
                await self.settle()
            except Exception:  # a budget failure must not end the settling
                log.exception("settling measured costs failed; the next round tries again")

    async def aclose(self) -> None:
        """Stops the rounds after a last one."""
        if self._task is not None:
            self._task.cancel()
            self._task = None
        await self.settle()
