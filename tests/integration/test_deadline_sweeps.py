"""Turn deadlines on SQLite and PostgreSQL (docs/decisions/0046): the sweep
finds due games through the index, and two instances firing the same
deadline at the same moment log one timeout."""

from __future__ import annotations

import asyncio
import threading
from datetime import UTC, datetime, timedelta

from domain.clocks import TurnTimedOut
from domain.game.options import GameOptions
from domain.replay import replay_state
from domain.services.deps import Deps
from domain.services.games import NewGame, create_game, join_game, start_game
from domain.services.players import create_player
from domain.services.timeouts import sweep_deadlines
from domain.services.transaction import Request
from infra.bus.memory import InProcessBus
from infra.db.state_codec import encode
from infra.db.uow import SqlUnitOfWorkFactory
from tests.fakes import FakeIds

T0 = datetime(2026, 1, 1, tzinfo=UTC)


class RacingClock:
    """A set time; once ``race()`` is called, the first two readings in
    worker threads (the two firings' decisions) wait for each other, so
    both load the game before either commits."""

    def __init__(self) -> None:
        self.at = T0
        self._barrier: threading.Barrier | None = None
        self._waits = 0
        self._lock = threading.Lock()

    def now(self) -> datetime:
        barrier = self._barrier
        if barrier is not None and threading.current_thread() is not threading.main_thread():
            with self._lock:
                self._waits += 1
                wait = self._waits <= 2
            if wait:
                barrier.wait(timeout=10)
        return self.at

    def race(self) -> None:
        self._barrier = threading.Barrier(2)


def _deps(uow: SqlUnitOfWorkFactory, clock: RacingClock, ids: FakeIds) -> Deps:
    return Deps(uow, asyncio.to_thread, InProcessBus(100_000), clock, ids, lambda _: None)


async def _timed_game(deps: Deps) -> str:
    people = [(await create_player(deps, f"p{i}")).player.id for i in range(3)]
    spec = NewGame(3, GameOptions(turn_seconds=5), rat_seat=0)
    gid = (await create_game(deps, Request(people[0], "c", {}), spec)).game_id
    for pid in people[1:]:
        await join_game(deps, Request(pid, "j", {}), gid, None)
    await start_game(deps, Request(people[0], "s", {}), gid)
    return gid


async def test_a_due_deadline_is_found_and_fires_once_under_two_racing_sweeps(
    uow: SqlUnitOfWorkFactory, db_url: str
) -> None:
    """On PostgreSQL both firings load the game before either commits (the
    loser's save conflicts); SQLite serialises writers (BEGIN IMMEDIATE),
    so there the second finds the deadline fired."""
    clock, ids = RacingClock(), FakeIds()
    one, two = _deps(uow, clock, ids), _deps(uow, clock, ids)
    gid = await _timed_game(one)
    with uow() as u:
        game = u.games.get(gid)
        assert game is not None and game.deadline == T0 + timedelta(seconds=5)
        assert gid not in u.games.due_deadlines(T0 + timedelta(seconds=4), 10)
        assert gid in u.games.due_deadlines(T0 + timedelta(seconds=5), 10)
        # where the sweeper wakes up: the earliest deadline after a time
        assert u.games.next_deadline(T0) == T0 + timedelta(seconds=5)
        assert u.games.next_deadline(T0 + timedelta(seconds=5)) is None
    clock.at = T0 + timedelta(seconds=6)
    if not db_url.startswith("sqlite"):
        clock.race()
    fired = await asyncio.gather(sweep_deadlines(one), sweep_deadlines(two))
    assert sorted(fired) == [0, 1]
    with uow() as u:
        game = u.games.get(gid)
        events = u.events.read(gid, 0, 100_000, None, causes=True)
    assert game is not None and game.state is not None
    assert sum(isinstance(e.event, TurnTimedOut) for e in events) == 1
    assert [e.seq for e in events] == list(range(1, game.last_seq + 1))
    assert game.deadline == clock.at + timedelta(seconds=5)  # the next seat's wait
    replayed = replay_state(game, events)
    assert replayed is not None and encode(replayed) == encode(game.state)
