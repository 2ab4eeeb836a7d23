"""The collector paced by time (infra/gc_pacing.py): young collections every
tick, generation 1 every few, a full pass when none ran for a while (an
automatic one counts), and on a running server even with nothing to do."""

from __future__ import annotations

import asyncio
import gc
from pathlib import Path

from infra.gc_pacing import GcPacer
from tests.adapters.app_support import running_app


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_generations_by_tick_and_a_full_pass_when_due() -> None:
    clock = Clock()
    pacer = GcPacer(young_every=0.1, middle_every=3, full_every=60, collect=print, clock=clock)
    assert [pacer.generation_due() for _ in range(7)] == [0, 0, 1, 0, 0, 1, 0]
    clock.now += 60
    assert pacer.generation_due() == 2


async def test_it_collects_on_the_loop_and_stops() -> None:
    done: list[int] = []
    clock = Clock()
    pacer = GcPacer(
        young_every=0.01, middle_every=2, full_every=3600, collect=done.append, clock=clock
    )
    pacer.start()
    try:
        await asyncio.sleep(0.2)
        clock.now += 3600
        await asyncio.sleep(0.05)
    finally:
        pacer.stop()
    ran = len(done)
    await asyncio.sleep(0.05)
    assert len(done) == ran, "nothing after stop"
    assert ran >= 5 and 0 in done and 1 in done
    assert done.count(2) == 1, "one full pass once due, then the clock starts again"


async def test_an_automatic_full_pass_postpones_the_next_one() -> None:
    clock = Clock()
    pacer = GcPacer(full_every=60, collect=lambda g: None, clock=clock)
    pacer.start()
    try:
        clock.now += 59
        gc.collect()  # a full pass, as a burst of allocations would start one
        clock.now += 30
        assert pacer.generation_due() != 2
    finally:
        pacer.stop()


async def test_a_running_server_collects_young_objects_while_idle(tmp_path: Path) -> None:
    async with running_app(tmp_path):
        before = gc.get_stats()[0]["collections"]
        await asyncio.sleep(0.5)
        assert gc.get_stats()[0]["collections"] - before >= 3
