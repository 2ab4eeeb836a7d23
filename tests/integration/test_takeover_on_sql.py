"""A seat a bot took over, as SQLite and PostgreSQL keep its log
(docs/decisions/0050): the takeover's mark and the seat's offer survive the
per-audience rows, and a reclaim's restated wait carries its deadline."""

from __future__ import annotations

import asyncio
from datetime import timedelta

from domain.clocks import SeatReclaimed
from domain.game.choice import Takeover
from domain.game.events import ActionRequired
from domain.game.options import GameOptions
from domain.services.deps import Deps
from domain.services.games import NewGame, create_game, join_game, leave_game, start_game
from domain.services.players import create_player
from domain.services.timeouts import reclaim_seat, sweep_deadlines
from domain.services.transaction import Request
from infra.bus.memory import InProcessBus
from infra.db.uow import SqlUnitOfWorkFactory
from tests.fakes import FakeClock, FakeIds


def _req(pid: str) -> Request:
    return Request(pid, "op", {})


async def test_a_taken_over_seats_offer_and_a_reclaims_wait_survive_the_log(
    uow: SqlUnitOfWorkFactory,
) -> None:
    clock = FakeClock()
    deps = Deps(uow, asyncio.to_thread, InProcessBus(100_000), clock, FakeIds(), lambda _: None)
    people = [(await create_player(deps, f"p{i}")).player.id for i in range(3)]
    options = GameOptions(turn_seconds=5, timeouts_to_takeover=1)
    gid = (await create_game(deps, _req(people[0]), NewGame(3, options, rat_seat=0))).game_id
    for pid in people[1:]:
        await join_game(deps, _req(pid), gid, None)
    await start_game(deps, _req(people[0]), gid)
    clock.advance(timedelta(seconds=6))
    assert await sweep_deadlines(deps) == 1  # seat 0 (the Rat, to lead) taken over
    with uow() as u:
        deadline = u.games.get(gid).deadline  # type: ignore[union-attr]  # seat 1's wait
    reclaimed = await reclaim_seat(deps, _req(people[0]), gid)
    left = await leave_game(deps, _req(people[1]), gid)  # seat 1, to act: a bot's wait now
    with uow() as u:
        game = u.games.get(gid)
        mine = u.events.read(gid, 0, 1_000, 1)
        public = u.events.read(gid, 0, 1_000, None)
    assert game is not None and game.deadline is None and deadline is not None
    assert [type(e.event) for e in reclaimed.events] == [SeatReclaimed, ActionRequired]
    restated = next(e.event for e in public if e.seq == reclaimed.events[-1].seq)
    assert isinstance(restated, ActionRequired)
    assert (restated.seat, restated.deadline, restated.taken_over) == (1, deadline, None)
    seq = left.events[-1].seq
    own = next(e.event for e in mine if e.seq == seq)
    seen = next(e.event for e in public if e.seq == seq)
    assert isinstance(own, ActionRequired) and isinstance(seen, ActionRequired)
    assert (own.seat, own.taken_over, own.choices, own.deadline) == (1, Takeover.LEFT, (), None)
    assert own.hand  # the seat's own view
    assert (seen.taken_over, seen.choices, seen.hand) == (Takeover.LEFT, None, None)
