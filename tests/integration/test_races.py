"""Races, retries and crashes through the real use cases on SQLite and
PostgreSQL (issue #3): the log never has a gap or a duplicate, the stored
state equals a replay of the log, and every loser gets a clear code."""

from __future__ import annotations

import asyncio
import multiprocessing
from collections import Counter

import pytest

from domain.errors import DomainError, ErrorCode
from domain.game.commands import Command, PlayCard
from domain.game.engine import to_act
from domain.game.legal import legal_actions
from domain.records import Refused
from domain.replay import replay_state
from domain.services.deps import Deps
from domain.services.games import NewGame, create_game, join_game, start_game
from domain.services.play import act
from domain.services.players import create_player
from domain.services.transaction import Request
from infra.bus.memory import InProcessBus
from infra.clock import SystemClock
from infra.db.engine import make_engine
from infra.db.migrate import upgrade
from infra.db.state_codec import encode
from infra.db.uow import SqlUnitOfWork, SqlUnitOfWorkFactory
from tests.fakes import FakeIds
from tests.integration.databases import fresh_postgres
from tests.integration.race_worker import run_process

# What a racer may be told: the move was not its own, no longer legal, lost
# the race, or came after the last move (the racers may finish the game).
CLEAR = {
    ErrorCode.NOT_YOUR_TURN,
    ErrorCode.ILLEGAL_ACTION,
    ErrorCode.CONFLICT,
    ErrorCode.GAME_FINISHED,
}


def _deps(uow: SqlUnitOfWorkFactory) -> Deps:
    return Deps(
        uow, asyncio.to_thread, InProcessBus(100_000), SystemClock(), FakeIds(), lambda _: None
    )


async def _four_people(deps: Deps) -> tuple[str, list[str]]:
    people = [(await create_player(deps, f"p{i}")).player.id for i in range(4)]
    gid = (await create_game(deps, Request(people[0], "c", {}), NewGame(4, rat_seat=0))).game_id
    for pid in people[1:]:
        await join_game(deps, Request(pid, "j", {}), gid, None)
    await start_game(deps, Request(people[0], "s", {}), gid)
    return gid, people


def _log_and_replay_agree(uow: SqlUnitOfWorkFactory, gid: str) -> int:
    with uow() as u:
        game = u.games.get(gid)
        log = u.events.read(gid, 0, 1_000_000, None, causes=True)
    assert game is not None and game.state is not None
    assert [e.seq for e in log] == list(range(1, game.last_seq + 1))
    replayed = replay_state(game, log)
    assert replayed is not None and encode(replayed) == encode(game.state)
    return game.version


async def test_many_tasks_racing_one_game_leave_a_gapless_log_that_replays(
    uow: SqlUnitOfWorkFactory,
) -> None:
    deps = _deps(uow)
    gid, people = await _four_people(deps)
    codes: Counter[str] = Counter()
    for _ in range(25):  # each round: every seat tries its first legal action at once

        def options() -> list[tuple[str, Command]]:
            with uow() as u:
                game = u.games.get(gid)
                assert game is not None and game.state is not None
                seat = to_act(game.state)
                if seat is None:
                    return []
                # the seat to act, twice with different cards, and everyone else too
                out = [(people[seat], c) for c in legal_actions(game.state, seat)[:2]]
                out += [
                    (people[s], legal_actions(game.state, seat)[0]) for s in range(4) if s != seat
                ]
                return out

        attempts = await deps.run(options)
        if not attempts:
            break
        results = await asyncio.gather(
            *(act(deps, Request(pid, "act", {}), gid, cmd) for pid, cmd in attempts),
            return_exceptions=True,
        )
        for r in results:
            if isinstance(r, DomainError):
                assert r.code in CLEAR, r
                codes[r.code.value] += 1
            else:
                assert not isinstance(r, BaseException), r
                codes["ok"] += 1
    version = _log_and_replay_agree(uow, gid)
    assert codes["ok"] >= 25 and codes["NOT_YOUR_TURN"] > 0
    assert version == 5 + codes["ok"]  # create, 3 joins, start, then one per accepted move


async def test_with_expected_version_only_one_racer_wins(uow: SqlUnitOfWorkFactory) -> None:
    deps = _deps(uow)
    gid, people = await _four_people(deps)
    with uow() as u:
        game = u.games.get(gid)
    assert game is not None and game.state is not None
    rat = game.state.rat
    text_requests = [
        Request(people[rat], "sendMessage", {"n": i}, expected_version=game.version)
        for i in range(6)
    ]
    from domain.game.commands import SendMessage

    results = await asyncio.gather(
        *(act(deps, r, gid, SendMessage(1, f"hello {i}")) for i, r in enumerate(text_requests)),
        return_exceptions=True,
    )
    winners = [r for r in results if not isinstance(r, BaseException)]
    losers = [r for r in results if isinstance(r, DomainError)]
    assert len(winners) == 1
    assert len(losers) == 5 and {e.code for e in losers} <= {
        ErrorCode.CONFLICT,
        ErrorCode.STALE_STATE,
    }
    _log_and_replay_agree(uow, gid)


async def test_a_retried_move_with_its_key_is_applied_once(uow: SqlUnitOfWorkFactory) -> None:
    deps = _deps(uow)
    gid, people = await _four_people(deps)
    with uow() as u:
        game = u.games.get(gid)
    assert game is not None and game.state is not None
    seat = to_act(game.state)
    assert seat is not None
    cmd = legal_actions(game.state, seat)[0]
    keyed = Request(people[seat], "playCard", {"c": 1}, idempotency_key="retry-1")
    results = await asyncio.gather(
        *(act(deps, keyed, gid, cmd) for _ in range(4)), return_exceptions=True
    )
    firsts = [r for r in results if not isinstance(r, BaseException)]
    assert firsts and all(r == firsts[0] for r in firsts)
    with uow() as u:
        after = u.games.get(gid)
    assert after is not None and after.version == game.version + 1
    again = await act(deps, keyed, gid, cmd)
    assert again == firsts[0]


async def test_twins_refused_at_once_all_get_the_one_kept_refusal(
    uow: SqlUnitOfWorkFactory,
) -> None:
    """Decision 0042: twins (one key, one input) refused at once each try to
    keep their refusal; one is kept and every twin answers with it."""
    deps = _deps(uow)
    gid, people = await _four_people(deps)
    with uow() as u:
        game = u.games.get(gid)
    assert game is not None and game.state is not None
    seat = to_act(game.state)
    assert seat is not None
    other = (seat + 1) % 4
    early = PlayCard(game.state.seats[other].hand[0])
    keyed = Request(people[other], "playCard", {"c": 1}, idempotency_key="early-1")
    results = await asyncio.gather(
        *(act(deps, keyed, gid, early) for _ in range(4)), return_exceptions=True
    )
    assert all(isinstance(e, DomainError) for e in results), results
    refusals = {(e.code, e.message) for e in results if isinstance(e, DomainError)}
    assert len(refusals) == 1 and next(iter(refusals))[0] is ErrorCode.NOT_YOUR_TURN
    with uow() as u:
        kept = u.idempotency.get(people[other], "early-1")
        after = u.games.get(gid)
    assert kept is not None and kept.result == Refused(*next(iter(refusals)))
    assert after is not None and after.version == game.version, "nothing applied"


class _CrashingSave(SqlUnitOfWork):
    """Appends the events, then dies before the game is saved."""

    def __enter__(self) -> _CrashingSave:
        super().__enter__()

        def crash(game: object, expected_version: int) -> None:
            raise RuntimeError("power cut between append and save")

        self.games.save = crash  # type: ignore[method-assign]
        return self


async def test_a_crash_between_append_and_save_leaves_neither(
    uow: SqlUnitOfWorkFactory,
) -> None:
    deps = _deps(uow)
    gid, people = await _four_people(deps)
    with uow() as u:
        before = u.games.get(gid)
    assert before is not None and before.state is not None
    seat = to_act(before.state)
    assert seat is not None
    cmd = legal_actions(before.state, seat)[0]
    crashing = Deps(
        lambda: _CrashingSave(uow.engine),
        deps.run,
        deps.bus,
        deps.clock,
        deps.ids,
        deps.schedule_bots,
    )
    with pytest.raises(RuntimeError):
        await act(crashing, Request(people[seat], "act", {}), gid, cmd)
    with uow() as u:
        after = u.games.get(gid)
        log = u.events.read(gid, 0, 10_000, None, causes=True)
    assert after is not None and after.version == before.version
    assert len(log) == before.last_seq
    await act(deps, Request(people[seat], "act", {}), gid, cmd)  # "restart" and continue
    _log_and_replay_agree(uow, gid)


def test_several_processes_race_on_postgresql(database_url: str) -> None:
    with fresh_postgres(database_url) as url:
        upgrade(url)
        engine = make_engine(url)
        uow = SqlUnitOfWorkFactory(engine)
        try:
            gid, people = asyncio.run(_four_people(_deps(uow)))
            ctx = multiprocessing.get_context("spawn")
            with ctx.Pool(3) as pool:
                outcomes = pool.starmap(run_process, [(url, gid, people, 40)] * 3)
            total: Counter[str] = Counter()
            for o in outcomes:
                total.update(o)
            assert total["ok"] > 0
            assert set(total) <= {"ok"} | {c.value for c in CLEAR}
            _log_and_replay_agree(uow, gid)
        finally:
            engine.dispose()
