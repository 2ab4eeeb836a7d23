"""The deadline sweeper wakes at the next deadline it read, not a whole
interval later (docs/decisions/0046; issue #15 "timeouts fire within 1 s of
their deadline"), and still looks every interval for deadlines set
elsewhere."""

from __future__ import annotations

import asyncio
import dataclasses
from datetime import UTC, datetime, timedelta

from domain.clocks import TurnTimedOut
from domain.game.options import GameOptions
from domain.services.timeouts import DeadlineRound, deadline_round
from infra.clock import SystemClock
from infra.deadline_sweeper import DeadlineSweeper
from tests.fakes import harness
from tests.usecases.conftest import started_game

NOW = datetime(2026, 1, 1, tzinfo=UTC)


class StillClock:
    def now(self) -> datetime:
        return NOW


def _after(last: DeadlineRound, interval: float = 5.0) -> float:
    sweeper = DeadlineSweeper(lambda: asyncio.sleep(0, last), StillClock(), interval)

    async def one_round() -> float:
        await sweeper._round()
        return sweeper.pause()

    return asyncio.run(one_round())


def test_the_pause_runs_to_the_next_deadline_within_the_interval() -> None:
    assert _after(DeadlineRound(0, False, NOW + timedelta(seconds=0.25))) == 0.25
    assert _after(DeadlineRound(3, False, NOW + timedelta(seconds=60))) == 5.0
    assert _after(DeadlineRound(0, False, None)) == 5.0  # nothing timed: look again later
    assert _after(DeadlineRound(0, False, NOW - timedelta(seconds=1))) == 0.0  # passed meanwhile
    assert _after(DeadlineRound(100, True, NOW + timedelta(seconds=3))) == 0.0  # a full batch


async def test_a_deadline_fires_when_it_passes_not_at_the_next_interval() -> None:
    """With a 30 s interval, a fixed-interval sweep would fire a deadline
    1 s away only after 30 s; this one wakes for it."""
    clock, h = SystemClock(), harness()
    real = dataclasses.replace(h, deps=dataclasses.replace(h.deps, clock=clock))
    gid, _ = await started_game(
        real, people=3, seats=3, rat_seat=0, options=GameOptions(turn_seconds=1)
    )
    deadline = real.store.games[gid].deadline
    assert deadline is not None
    sweeper = DeadlineSweeper(lambda: deadline_round(real.deps), clock, interval=30)
    sweeper.start()
    try:
        async with asyncio.timeout(10):
            while not any(isinstance(e.event, TurnTimedOut) for e in real.store.log(gid)):
                await asyncio.sleep(0.02)
    finally:
        await sweeper.aclose()
    fired = next(e for e in real.store.log(gid) if isinstance(e.event, TurnTimedOut))
    late = (fired.at - deadline).total_seconds()
    assert 0 <= late < 5, f"fired {late:.3f} s after the deadline"
