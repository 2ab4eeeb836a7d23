"""Caps and abandonment on SQLite and PostgreSQL (issue #22 part 7,
docs/decisions/0051): the counting queries count what the rules count, two
creations racing for a host's last place never both pass (the claimed
player row), and the abandonment sweep finds a game by its stored time and
ends it once under two racing sweeps."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from dataclasses import replace
from datetime import timedelta
from types import TracebackType
from typing import Any

import pytest

from domain.caps import Caps
from domain.errors import DomainError, ErrorCode
from domain.game.events import GameEnded
from domain.game.options import Format, GameOptions
from domain.game.state import Termination
from domain.records import GameStatus
from domain.replay import replay_state
from domain.services.abandonment import sweep_abandoned
from domain.services.boosters import open_booster_pack
from domain.services.deps import Deps
from domain.services.games import NewGame, create_game, join_game, leave_game, start_game
from domain.services.players import create_player
from domain.services.quick_play import quick_play
from domain.services.transaction import Request
from infra.bus.memory import InProcessBus
from infra.db.state_codec import encode
from infra.db.uow import SqlUnitOfWork, SqlUnitOfWorkFactory
from tests.fakes import FakeClock, FakeIds
from tests.integration.test_deadline_sweeps import RacingClock

WAIT_AT_THE_COUNT = 1.0  # seconds a racer waits for the other after counting


def _deps(uow: Any, clock: Any = None, caps: Caps | None = None, ids: Any = None) -> Deps:
    deps = Deps(
        uow,
        asyncio.to_thread,
        InProcessBus(100_000),
        clock or FakeClock(),
        ids or FakeIds(),
        lambda _: None,
    )
    return deps if caps is None else replace(deps, caps=caps)


def _req(pid: str, op: str = "op") -> Request:
    return Request(pid, op, {})


async def _people(deps: Deps, n: int) -> list[str]:
    return [(await create_player(deps, f"p{i}")).player.id for i in range(n)]


async def test_the_counts_are_what_the_caps_count(uow: SqlUnitOfWorkFactory) -> None:
    deps = _deps(uow, caps=Caps(0, 0, 0))
    ann, bob, cy = await _people(deps, 3)
    sealed = NewGame(3, GameOptions(format=Format.SEALED))  # its start opens a pack each
    lobbies = [(await create_game(deps, _req(ann), sealed)).game_id]
    lobbies += [(await create_game(deps, _req(ann), NewGame(3))).game_id for _ in range(2)]
    await create_game(deps, _req(ann), NewGame(3, take_seat=False))  # hosted, seated nowhere
    await create_game(deps, _req(bob), NewGame(3))  # bob's
    for pid in (bob, cy):  # one lobby starts: no longer open
        await join_game(deps, _req(pid), lobbies[0], None)
    await start_game(deps, _req(ann), lobbies[0])
    mine = (await quick_play(deps, _req(ann), 3, Format.SINGLETON, None)).game_id
    theirs = (await quick_play(deps, _req(bob), 4, Format.SINGLETON, None)).game_id
    await quick_play(deps, _req(ann), 4, Format.SINGLETON, None)  # a seat in bob's game
    await quick_play(deps, _req(cy), 5, Format.SEALED, None)
    started = (await quick_play(deps, _req(cy), 3, Format.SINGLETON, None)).game_id
    assert started == mine  # cy joins ann's
    await quick_play(deps, _req(bob), 3, Format.SINGLETON, None)  # full: it starts
    now = deps.clock.now()
    for _ in range(3):
        await open_booster_pack(deps, _req(ann, "openBoosterPack"))
    with uow() as u:
        assert u.games.open_lobbies(ann) == 3  # quick-play games and a started one aside
        assert u.games.open_lobbies(bob) == 1 and u.games.open_lobbies(cy) == 0
        assert u.games.quick_play_waits(ann) == 1  # bob's 4-seat game; her own started
        assert u.games.quick_play_waits(bob) == 1 and u.games.quick_play_waits(cy) == 1
        got = u.games.get(theirs)
        assert got is not None and got.seat_of(ann) == 1
        opened = u.boosters.opened_since(ann, now, 10)  # her Sealed game's pack aside
        assert len(opened) == 3 and opened == sorted(opened, reverse=True)
        assert u.boosters.opened_since(ann, now, 2) == opened[:2]
        assert u.boosters.opened_since(ann, opened[1], 10) == opened[:1]
        assert len(u.boosters.of_player(bob)) == 1  # the Sealed game's
        assert u.boosters.opened_since(bob, now - timedelta(days=1), 10) == []


class _WaitAfterCounting:
    """A unit of work whose count of open lobbies waits (up to
    :data:`WAIT_AT_THE_COUNT`) for the other racer to have counted too:
    without the claim of the player, both count the same and both create."""

    def __init__(self, factory: SqlUnitOfWorkFactory, barrier: threading.Barrier) -> None:
        self._uow = factory()
        self._barrier = barrier

    def __enter__(self) -> SqlUnitOfWork:
        u = self._uow.__enter__()
        count = u.games.open_lobbies
        barrier = self._barrier

        def counted(host: str) -> int:
            n = count(host)
            # the other may be held at the claim: then this one goes first
            with contextlib.suppress(threading.BrokenBarrierError):
                barrier.wait(WAIT_AT_THE_COUNT)
            return n

        setattr(u.games, "open_lobbies", counted)  # noqa: B010 (an instance's method)
        return u

    def __exit__(
        self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._uow.__exit__(t, e, tb)


async def test_two_creations_for_the_last_place_never_both_pass(uow: SqlUnitOfWorkFactory) -> None:
    caps = Caps(open_games=2)
    setup = _deps(uow, caps=caps)
    (host,) = await _people(setup, 1)
    await create_game(setup, _req(host), NewGame(3))
    barrier = threading.Barrier(2)
    racing = _deps(lambda: _WaitAfterCounting(uow, barrier), caps=caps, ids=setup.ids)
    results = await asyncio.gather(
        *(create_game(racing, _req(host), NewGame(3)) for _ in range(2)), return_exceptions=True
    )
    refused = [r for r in results if isinstance(r, DomainError)]
    assert len(refused) == 1 and refused[0].code is ErrorCode.ILLEGAL_ACTION, results
    with uow() as u:
        assert u.games.open_lobbies(host) == 2


async def test_a_lobby_left_alone_is_found_by_its_time_and_ended_once(
    uow: SqlUnitOfWorkFactory, db_url: str
) -> None:
    clock = RacingClock()
    one, two = _deps(uow, clock), _deps(uow, clock)
    ann, bob = await _people(one, 2)
    gid = (await create_game(one, _req(ann), NewGame(3))).game_id
    await join_game(one, _req(bob), gid, None)
    idle = one.abandon.idle
    with uow() as u:
        game = u.games.get(gid)
        assert game is not None and game.abandon_at == clock.at + idle
        assert u.games.due_abandonments(clock.at + idle - timedelta(seconds=1), 10) == []
        assert u.games.due_abandonments(clock.at + idle, 10) == [gid]
    clock.at += idle + timedelta(seconds=1)
    if not db_url.startswith("sqlite"):
        clock.race()  # both sweeps load the game before either commits
    ended = await asyncio.gather(sweep_abandoned(one), sweep_abandoned(two))
    assert sorted(ended) == [0, 1]
    with uow() as u:
        game = u.games.get(gid)
        log = u.events.read(gid, 0, 1_000, None)
        assert u.games.due_abandonments(clock.at + idle * 2, 10) == []
    assert game is not None and game.status is GameStatus.ABANDONED and game.abandon_at is None
    assert [e.seq for e in log] == list(range(1, game.last_seq + 1))
    ends = [e.event for e in log if isinstance(e.event, GameEnded)]
    assert len(ends) == 1 and ends[0].termination is Termination.ABANDONED


async def test_an_abandoned_game_reads_back_as_it_was_stored(uow: SqlUnitOfWorkFactory) -> None:
    """A running game every person left: abandoned at once; the status, the
    outcome and the log read back, and the log replays to the state."""
    deps = _deps(uow)
    ann, bob, cy = await _people(deps, 3)
    gid = (await create_game(deps, _req(ann), NewGame(3))).game_id
    for pid in (bob, cy):
        await join_game(deps, _req(pid), gid, None)
    await start_game(deps, _req(ann), gid)
    for pid in (ann, bob, cy):
        await leave_game(deps, _req(pid), gid)
    with uow() as u:
        game = u.games.get(gid)
        log = u.events.read(gid, 0, 1_000, None, causes=True)
        page = u.games.page(GameStatus.ABANDONED, None, 10)
    assert game is not None and game.status is GameStatus.ABANDONED
    assert game.state is not None and game.state.outcome is not None
    assert game.state.outcome.termination is Termination.ABANDONED
    assert [g.id for g in page.items] == [gid]
    replayed = replay_state(game, log)
    assert replayed is not None and encode(replayed) == encode(game.state)
    with pytest.raises(DomainError) as e:
        await leave_game(deps, _req(ann), gid)
    assert e.value.code is ErrorCode.ILLEGAL_ACTION
