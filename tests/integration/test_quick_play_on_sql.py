"""Quick play and rematch on SQLite and PostgreSQL (issue #15 parts 5-6,
docs/decisions/0048): racers for a last seat never both get it, the bot
fill is found by its stored time and fires once, a rematch is made once."""

from __future__ import annotations

import asyncio
from datetime import timedelta

from domain.game.engine import to_act
from domain.game.legal import legal_actions
from domain.game.options import Format
from domain.records import GameStatus
from domain.replay import replay_state
from domain.services.bots import drive_bots
from domain.services.deps import Deps
from domain.services.play import act
from domain.services.players import create_player
from domain.services.quick_play import fill_due_games, quick_play
from domain.services.rematch import rematch
from domain.services.transaction import Request
from infra.bus.memory import InProcessBus
from infra.db.state_codec import encode
from infra.db.uow import SqlUnitOfWorkFactory
from tests.fakes import FakeClock, FakeIds


def _deps(uow: SqlUnitOfWorkFactory, clock: FakeClock | None = None) -> Deps:
    return Deps(
        uow,
        asyncio.to_thread,
        InProcessBus(100_000),
        clock or FakeClock(),
        FakeIds(),
        lambda _: None,
    )


async def _people(deps: Deps, n: int, prefix: str = "p") -> list[str]:
    return [(await create_player(deps, f"{prefix}{i}")).player.id for i in range(n)]


async def _quick(deps: Deps, pid: str, fill: int | None = None) -> str:
    return (
        await quick_play(deps, Request(pid, "quickPlay", {}), 3, Format.SINGLETON, fill)
    ).game_id


async def test_racers_for_the_last_seat_never_both_get_it(uow: SqlUnitOfWorkFactory) -> None:
    deps = _deps(uow)
    a, b = await _people(deps, 2)
    gid = await _quick(deps, a)
    assert await _quick(deps, b) == gid
    racers = await _people(deps, 6, "r")
    got = await asyncio.gather(*(_quick(deps, r) for r in racers))
    with uow() as u:
        game = u.games.get(gid)
        assert game is not None and game.status is GameStatus.RUNNING
        winners = [r for r, g in zip(racers, got, strict=True) if g == gid]
        assert len(winners) == 1 and game.seat_of(winners[0]) == 2
        seated = 0
        for r, g in zip(racers, got, strict=True):
            other = u.games.get(g)
            assert other is not None and other.seat_of(r) is not None
            assert other.seats_taken <= other.seat_count
            seated += 1
        assert seated == len(racers)
        log = u.events.read(gid, 0, 1_000, None, causes=True)
        assert [e.seq for e in log] == list(range(1, game.last_seq + 1))
        replayed = replay_state(game, log)
        assert game.state is not None and replayed is not None
        assert encode(replayed) == encode(game.state)


async def test_a_due_bot_fill_is_found_by_its_time_and_fires_once(
    uow: SqlUnitOfWorkFactory,
) -> None:
    clock = FakeClock()
    deps = _deps(uow, clock)
    (a,) = await _people(deps, 1)
    gid = await _quick(deps, a, fill=20)
    assert await fill_due_games(deps) == 0
    clock.advance(timedelta(seconds=21))
    # two sweeps at once (two instances): one fills, the other finds nothing to do
    done = await asyncio.gather(fill_due_games(deps), fill_due_games(deps))
    assert sorted(done) == [0, 1]
    with uow() as u:
        game = u.games.get(gid)
        assert game is not None and game.status is GameStatus.RUNNING
        assert game.fill_bots_at is None and game.seats_taken == 3
        assert u.games.due_bot_fills(clock.now(), 10) == []
        assert u.games.open_quick_play("singleton/3", 10) == []


async def test_racing_rematches_make_one_game_with_kept_seats(uow: SqlUnitOfWorkFactory) -> None:
    deps = _deps(uow)
    a, b = await _people(deps, 2)
    gid = await _quick(deps, a, fill=0)
    assert await _quick(deps, b) == gid
    assert await fill_due_games(deps) == 1  # the fake clock moved on: due
    for _ in range(5_000):
        await drive_bots(deps, gid)
        with uow() as u:
            game = u.games.get(gid)
        assert game is not None and game.state is not None
        seat = to_act(game.state)
        if seat is None:
            break
        who = a if seat == 0 else b
        await act(deps, Request(who, "act", {}), gid, legal_actions(game.state, seat)[0])
    got = await asyncio.gather(
        *(rematch(deps, Request(p, "rematch", {}), gid) for p in (a, b, a, b))
    )
    assert len({r.game_id for r in got}) == 1
    with uow() as u:
        old = u.games.get(gid)
        new = u.games.get(got[0].game_id)
        log = u.events.read(gid, 0, 100_000, None)
    assert old is not None and new is not None and old.rematch_id == new.id
    assert [e.type for e in log][-2:] == ["GameEnded", "RematchOffered"]
    holder = new.seat_of(a) if new.seat_of(a) is not None else new.seat_of(b)
    assert holder is not None and new.seats_taken == 2  # the asker and a bot
    waiting = b if new.seat_of(a) is not None else a
    assert new.reserved[old.seat_of(waiting) or 0] == waiting
