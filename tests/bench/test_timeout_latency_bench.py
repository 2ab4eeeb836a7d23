"""How late timeouts fire (issue #15, "Speed": within 1 s of their deadline
at p99 with 1,000 timed games), run by ``make bench``. PostgreSQL, one
process wired by the composition root (``build``), the in-process bus.

1,000 running 3-seat games of people who never move, ``turnSeconds`` 10:
every wait times out and its fallback move starts the next wait, about 100
timeouts a second. The games start over one turn's time (a steady load),
then each sweeper is measured for ``MEASURE`` seconds: a timeout's lateness
is from its wait's deadline to the moment its events are published (after
the commit). Measured, in one run:

- the sweeper as served (it wakes at the next deadline it read);
- the fixed-interval sweep it replaced (the same round every 1 s);
- reference: an in-memory timer (``loop.call_at`` at each deadline, armed
  when the wait is published) on the same loop and load: what a timer that
  is not durable would do.

Needs ``DATABASE_URL`` on PostgreSQL."""

from __future__ import annotations

import asyncio
import dataclasses
import os
import statistics
import time
from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from datetime import UTC, datetime

import pytest

from domain.clocks import TurnTimedOut
from domain.game.events import ActionRequired
from domain.game.options import GameOptions
from domain.log import LoggedEvent
from domain.ports import BusMessage, EventBus, Subscription
from domain.services.deps import Deps
from domain.services.games import NewGame, create_game, join_game, start_game
from domain.services.players import create_player
from domain.services.timeouts import deadline_round, sweep_deadlines
from domain.services.transaction import Request
from infra.bootstrap import build
from infra.deadline_sweeper import DeadlineSweeper
from infra.periodic import Periodic
from infra.settings import Settings
from tests.integration.databases import fresh_postgres

GAMES = 1_000
TURN = 10  # seconds
MEASURE = 20.0  # seconds per sweeper


def _p(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


class Stopwatch:
    """Wraps the bus: notes each wait's deadline as it is published and each
    timeout's lateness when its events are; arms the reference timer."""

    def __init__(self, bus: EventBus) -> None:
        self._bus = bus
        self.deadlines: dict[str, datetime] = {}
        self.late: list[float] | None = None  # the sweeper's, while measuring
        self.timer: list[float] | None = None  # the in-memory timer's

    def subscribe(self, channel: str) -> AbstractAsyncContextManager[Subscription]:
        return self._bus.subscribe(channel)

    async def publish(self, messages: Sequence[tuple[str, BusMessage]]) -> None:
        now = datetime.now(UTC)
        for channel, m in messages:
            if not channel.endswith(":public") or not isinstance(m, LoggedEvent):
                continue
            if isinstance(m.event, TurnTimedOut) and self.late is not None:
                due = self.deadlines.get(m.game_id)
                if due is not None:
                    self.late.append((now - due).total_seconds())
            elif isinstance(m.event, ActionRequired) and m.event.deadline is not None:
                self.deadlines[m.game_id] = m.event.deadline
                self._arm(m.event.deadline)
        await self._bus.publish(messages)

    def _arm(self, deadline: datetime) -> None:
        if self.timer is None:
            return
        loop = asyncio.get_running_loop()
        at = loop.time() + (deadline - datetime.now(UTC)).total_seconds()
        timer = self.timer
        loop.call_at(at, lambda: timer.append((datetime.now(UTC) - deadline).total_seconds()))


async def _lobby_games(deps: Deps, people: list[str]) -> list[str]:
    spec = NewGame(3, GameOptions(turn_seconds=TURN, timeouts_to_takeover=10), rat_seat=0)
    out = []
    for i in range(GAMES):
        gid = (await create_game(deps, Request(people[0], f"c{i}", {}), spec)).game_id
        for k, pid in enumerate(people[1:]):
            await join_game(deps, Request(pid, f"j{i}-{k}", {}), gid, None)
        out.append(gid)
    return out


async def _measure(watch: Stopwatch, sweeper: Periodic) -> tuple[list[float], list[float]]:
    watch.late, watch.timer = [], []
    sweeper.start()
    await asyncio.sleep(MEASURE)
    await sweeper.aclose()
    late, timer = watch.late, watch.timer
    watch.late = watch.timer = None
    return late, timer


async def _run(url: str) -> dict[str, tuple[list[float], list[float]]]:
    container = build(Settings.from_env({"DATABASE_URL": url, "MMK_LOG_LEVEL": "warning"}))
    watch = Stopwatch(container.deps.bus)
    deps = dataclasses.replace(container.deps, bus=watch)
    try:
        people = [(await create_player(deps, f"p{i}")).player.id for i in range(3)]
        games = await _lobby_games(deps, people)
        served = DeadlineSweeper(lambda: deadline_round(deps), deps.clock, 1.0)
        served.start()  # the games start over one turn's time, swept as they go
        started = time.perf_counter()
        for i, gid in enumerate(games):
            await start_game(deps, Request(people[0], f"s{i}", {}), gid)
            ahead = started + (i + 1) * TURN / GAMES - time.perf_counter()
            if ahead > 0:
                await asyncio.sleep(ahead)
        await served.aclose()
        out = {"served": await _measure(watch, served)}
        fixed = Periodic("fixed sweep", lambda: sweep_deadlines(deps), 1.0, "%d")
        out["fixed 1 s"] = await _measure(watch, fixed)
        return out
    finally:
        await container.aclose()


def test_timeouts_fire_within_a_second_of_their_deadline_with_1000_timed_games() -> None:
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith("postgresql"):
        pytest.fail("DATABASE_URL must name a PostgreSQL server")
    with fresh_postgres(url) as db:
        results = asyncio.run(_run(db))
    print(f"\n  {GAMES:,} timed games, turnSeconds {TURN}; lateness after the deadline (ms):")
    for name, (late, timer) in results.items():
        assert late and timer, f"{name}: nothing timed out"
        p99, ref = _p(late, 0.99) * 1e3, _p(timer, 0.99) * 1e3
        print(
            f"  {name:>9}: {len(late):,} timeouts in {MEASURE:g} s, "
            f"p50 {statistics.median(late) * 1e3:.1f}, p99 {p99:.1f}, max {max(late) * 1e3:.1f}"
            f" | in-memory timer p50 {statistics.median(timer) * 1e3:.1f}, p99 {ref:.1f}"
            f" | p99 ratio {p99 / max(ref, 0.001):.1f}x"
        )
    late = results["served"][0]
    assert min(late) >= 0, "a timeout fired before its deadline"
    assert _p(late, 0.99) < 1.0
