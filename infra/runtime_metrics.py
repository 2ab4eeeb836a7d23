"""The process's own health as Prometheus metrics: how late the event loop
runs its callbacks (a loop busy with one request delays every other client)
and how long the garbage collector stops the world, by generation.

Both are cheap: one timer callback every ``LAG_PERIOD_S`` and a ``gc``
callback around each collection.
"""

from __future__ import annotations

import asyncio
import gc
import time
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Histogram

LAG_PERIOD_S = 0.05
PAUSE_BUCKETS = (0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1.0)


class RuntimeMetrics:
    """Event-loop lag and GC pauses into ``registry``; :meth:`start` on the
    running loop, :meth:`stop` at shutdown."""

    def __init__(self, registry: CollectorRegistry, prefix: str = "mmk") -> None:
        self.lag = Histogram(
            f"{prefix}_event_loop_lag_seconds",
            f"How late a timer set every {LAG_PERIOD_S * 1000:.0f} ms ran on the event loop",
            buckets=PAUSE_BUCKETS,
            registry=registry,
        )
        self.gc_pause = Histogram(
            f"{prefix}_gc_pause_seconds",
            "Garbage-collector pauses, by generation collected",
            ["generation"],
            buckets=PAUSE_BUCKETS,
            registry=registry,
        )
        self.gc_collected = Counter(
            f"{prefix}_gc_collected_objects",
            "Objects the collector found unreachable (reference cycles), by generation",
            ["generation"],
            registry=registry,
        )
        self._pauses = [self.gc_pause.labels(str(g)) for g in range(3)]
        self._collected = [self.gc_collected.labels(str(g)) for g in range(3)]
        self._gc_started = 0.0
        self._handle: asyncio.TimerHandle | None = None
        self._due = 0.0

    def start(self) -> None:
        if self._gc_callback not in gc.callbacks:
            gc.callbacks.append(self._gc_callback)
        loop = asyncio.get_running_loop()
        self._due = loop.time() + LAG_PERIOD_S
        self._handle = loop.call_at(self._due, self._tick)

    def stop(self) -> None:
        if self._gc_callback in gc.callbacks:
            gc.callbacks.remove(self._gc_callback)
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None

    def _tick(self) -> None:
        loop = asyncio.get_running_loop()
        now = loop.time()
        self.lag.observe(max(0.0, now - self._due))
        self._due = now + LAG_PERIOD_S
        self._handle = loop.call_at(self._due, self._tick)

    def _gc_callback(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._gc_started = time.perf_counter()
            return
        generation = info.get("generation", 2)
        self._pauses[generation].observe(time.perf_counter() - self._gc_started)
        self._collected[generation].inc(info.get("collected", 0))
