"""The cyclic collector paced by time, not by allocation counts
(docs/decisions/0039).

CPython starts a young collection when allocations minus deallocations pass
a threshold. Under steady play the old die as fast as the young are born
(subscriptions end, games finish, caches turn over), so that count hardly
moves while the young generation fills: at 2,400 connections a young
collection came every ~6 s and walked ~100,000 objects, 20-50 ms each, the
longest stalls of the event loop (issue #13). Here a collection runs every
``YOUNG_EVERY_S`` from the loop, between callbacks: generation 0, and every
``MIDDLE_EVERY``-th time generation 1 as well, each over what the last few
hundred milliseconds left alive (a few milliseconds). The thresholds stay as
a backstop for bursts. A full pass runs when none has for ``FULL_EVERY_S``,
so that cycles which reached the old generation are still freed.
"""

from __future__ import annotations

import asyncio
import gc
import time
from collections.abc import Callable
from typing import Any

YOUNG_EVERY_S = 0.1
MIDDLE_EVERY = 5
FULL_EVERY_S = 600.0


class GcPacer:
    """Runs the collector on the event loop's clock; :meth:`start` on the
    running loop, :meth:`stop` at shutdown."""

    def __init__(
        self,
        young_every: float = YOUNG_EVERY_S,
        middle_every: int = MIDDLE_EVERY,
        full_every: float = FULL_EVERY_S,
        collect: Callable[[int], Any] = gc.collect,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.young_every, self.middle_every, self.full_every = young_every, middle_every, full_every
        self._collect, self._clock = collect, clock
        self._ticks = 0
        self._last_full = clock()
        self._handle: asyncio.TimerHandle | None = None

    def start(self) -> None:
        if self._seen_full not in gc.callbacks:
            gc.callbacks.append(self._seen_full)
        self._last_full = self._clock()
        self._handle = asyncio.get_running_loop().call_later(self.young_every, self._tick)

    def stop(self) -> None:
        if self._seen_full in gc.callbacks:
            gc.callbacks.remove(self._seen_full)
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None

    def generation_due(self) -> int:
        """The generation this tick collects (and counts the tick)."""
        self._ticks += 1
        if self._clock() - self._last_full >= self.full_every:
            return 2
        return 1 if self._ticks % self.middle_every == 0 else 0

    def _tick(self) -> None:
        generation = self.generation_due()
        self._collect(generation)
        if generation == 2:
            self._last_full = self._clock()
        self._handle = asyncio.get_running_loop().call_later(self.young_every, self._tick)

    def _seen_full(self, phase: str, info: dict[str, Any]) -> None:
        """A full pass of the collector's own (a burst) counts as ours."""
        if phase == "stop" and info.get("generation") == 2:
            self._last_full = self._clock()
