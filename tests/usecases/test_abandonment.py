"""Abandoned games (issue #22 part 7, docs/decisions/0051), on a fake clock:
the last person out ends a game at once; an idle lobby, an idle untimed
game and an empty room nobody comes back to are swept; each ends once with
``GameEnded`` (termination ``ABANDONED``), which every audience's stream
gets as its last event."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable
from dataclasses import replace
from datetime import timedelta

import pytest

from domain.abandonment import AbandonPolicy
from domain.bots.strategy import Strategy
from domain.channels import LOBBY
from domain.clocks import SeatTakenOver
from domain.errors import DomainError, ErrorCode
from domain.fairness import commitment
from domain.game.commands import Pass
from domain.game.events import GameEnded, GameStarted
from domain.game.invariants import card_counts, check
from domain.game.legal import legal_actions
from domain.game.options import GameOptions
from domain.game.state import Phase, Termination
from domain.log import LoggedEvent
from domain.records import GameStatus, LobbyUpdate
from domain.replay import replay_state
from domain.services.abandonment import end_if_due, sweep_abandoned
from domain.services.export import export_log
from domain.services.games import NewGame, add_bot, create_game, join_game, leave_game, start_game
from domain.services.play import act
from domain.services.rematch import rematch
from domain.services.streams import game_events
from domain.services.timeouts import reclaim_seat
from domain.services.transaction import Tx
from infra.db.state_codec import encode
from tests.fakes import FakeUnitOfWork, Harness, harness
from tests.usecases.conftest import expire, player, req, started_game

POLICY = AbandonPolicy(idle=timedelta(days=2), empty=timedelta(minutes=10))
TIMED = GameOptions(turn_seconds=10, timeouts_to_takeover=1)


@pytest.fixture
def h() -> Harness:
    base = harness()
    return replace(base, deps=replace(base.deps, abandon=POLICY))


async def _refused(code: ErrorCode, call: Awaitable[object]) -> DomainError:
    with pytest.raises(DomainError) as e:
        await call
    assert e.value.code is code, e.value.message
    return e.value


def _ends(h: Harness, gid: str) -> list[GameEnded]:
    """The game's end events (one, once it ended)."""
    return [e.event for e in h.store.log(gid) if isinstance(e.event, GameEnded)]


def _abandoned(h: Harness, gid: str) -> GameEnded:
    game = h.store.games[gid]
    assert game.status is GameStatus.ABANDONED and game.abandon_at is None
    assert game.deadline is None and game.fill_bots_at is None
    (end,) = _ends(h, gid)
    assert end.termination is Termination.ABANDONED and end.winners == ()
    assert h.store.log(gid)[-1].event == end  # its last event
    return end


async def _sweep_at(h: Harness, delta: timedelta) -> int:
    h.clock.advance(delta)
    return await sweep_abandoned(h.deps)


async def _drain_stream(stream: AsyncIterator[tuple[str, LoggedEvent]]) -> list[LoggedEvent]:
    return [e async for _, e in stream]


async def test_the_last_person_out_of_a_lobby_ends_it(h: Harness) -> None:
    ann, bob = await player(h, "ann"), await player(h, "bob")
    gid = (await create_game(h.deps, req(ann), NewGame(4))).game_id
    await add_bot(h.deps, req(ann), gid, Strategy.GREEDY, None)
    await join_game(h.deps, req(bob), gid, None)
    await leave_game(h.deps, req(ann), gid)  # the host leaves; bob still waits
    assert h.store.games[gid].status is GameStatus.LOBBY
    async with h.bus.subscribe(LOBBY) as lobby:
        last = await leave_game(h.deps, req(bob), gid)
        note = await anext(aiter(lobby))
    assert [e.type for e in last.events] == ["SeatLeft", "GameEnded"]
    end = _abandoned(h, gid)
    assert end.scores == () and end.seed is None and end.salt is None  # never dealt
    assert isinstance(note, LobbyUpdate) and note.status is GameStatus.ABANDONED
    e = await _refused(ErrorCode.ILLEGAL_ACTION, join_game(h.deps, req(ann), gid, None))
    assert "abandoned" in e.message
    e = await _refused(ErrorCode.ILLEGAL_ACTION, start_game(h.deps, req(ann), gid))
    assert "abandoned" in e.message
    assert await _sweep_at(h, POLICY.idle * 2) == 0  # over: never swept


async def test_a_lobby_left_alone_is_swept_once(h: Harness) -> None:
    ann = await player(h)
    gid = (await create_game(h.deps, req(ann), NewGame(3))).game_id
    game = h.store.games[gid]
    assert game.abandon_at == game.updated_at + POLICY.idle
    assert await _sweep_at(h, POLICY.idle - timedelta(seconds=1)) == 0
    await join_game(h.deps, req(await player(h, "bob")), gid, None)  # a change: later again
    assert await _sweep_at(h, timedelta(seconds=2)) == 0
    assert await _sweep_at(h, POLICY.idle) == 1
    _abandoned(h, gid)
    assert await sweep_abandoned(h.deps) == 0  # once


async def test_an_untimed_game_left_alone_ends_with_every_card_in_place(h: Harness) -> None:
    gid, ids = await started_game(h, people=3, seats=4, rat_seat=0)
    game = h.store.games[gid]
    assert game.state is not None
    seat = game.state.turn
    await act(h.deps, req(ids[seat]), gid, legal_actions(game.state, seat)[0])  # a lead
    game = h.store.games[gid]
    assert game.state is not None and game.state.trick and game.state.trick.plays
    cards = card_counts(game.state)
    assert game.abandon_at == game.updated_at + POLICY.idle
    ann = ids[0]
    streams = {}  # every audience, live: each has had the game's last event so far
    for who in (None, *ids):
        stream = game_events(h.deps, gid, who, game.last_seq - 1, await_rematch=True)
        assert (await asyncio.wait_for(anext(stream), 2))[1].seq == game.last_seq
        streams[who] = stream
    assert await _sweep_at(h, POLICY.idle + timedelta(seconds=1)) == 1
    end = _abandoned(h, gid)
    game = h.store.games[gid]
    state = game.state
    assert state is not None and state.phase is Phase.FINISHED and state.trick is None
    check(state)
    assert card_counts(state) == cards  # the trick undone: its cards back where they were
    assert state.outcome is not None and state.outcome.termination is Termination.ABANDONED
    assert end.scores == state.outcome.scores and len(end.scores) == 4
    started = next(e.event for e in h.store.log(gid) if isinstance(e.event, GameStarted))
    assert end.seed is not None and end.salt is not None  # revealed, as at every end
    assert commitment(end.seed, end.salt) == started.seed_commitment
    replayed = replay_state(game, h.store.log(gid))  # the log tells the same story
    assert replayed is not None and encode(replayed) == encode(state)
    for who, stream in streams.items():  # every audience gets the end, then the stream ends
        got = await asyncio.wait_for(_drain_stream(stream), 2)
        assert [e.type for e in got] == ["GameEnded"], who
    e = await _refused(ErrorCode.GAME_FINISHED, act(h.deps, req(ann), gid, Pass()))
    assert "abandoned" in e.message
    await _refused(ErrorCode.ILLEGAL_ACTION, rematch(h.deps, req(ann), gid))
    with FakeUnitOfWork(h.store) as uow, pytest.raises(DomainError) as refused:
        export_log(uow, gid)
    assert refused.value.code is ErrorCode.BAD_INPUT and "abandoned" in refused.value.message
    assert await sweep_abandoned(h.deps) == 0


async def test_the_last_person_out_of_a_running_game_ends_it_at_once(h: Harness) -> None:
    gid, ids = await started_game(h, people=2, seats=3)
    await leave_game(h.deps, req(ids[1]), gid)
    assert h.store.games[gid].status is GameStatus.RUNNING  # a person still plays
    last = await leave_game(h.deps, req(ids[0]), gid)
    taken, ended = (e.event for e in last.events)
    assert taken == SeatTakenOver(0, Strategy.EXPERT, left=True) and isinstance(ended, GameEnded)
    _abandoned(h, gid)
    assert await h.drain() == 0  # no bot plays on for nobody


async def test_an_empty_room_waits_for_a_reclaim_then_ends(h: Harness) -> None:
    """One person and two bots, timed: the person times out into a takeover;
    the bots then wait (no move for nobody) until the person reclaims the
    seat, or ``empty`` passes."""
    gid, (ann,) = await started_game(h, people=1, seats=3, rat_seat=0, options=TIMED)
    assert await expire(h, gid) == 1  # seat 0 taken over at its first timeout
    game = h.store.games[gid]
    assert game.seats[0] is not None and game.seats[0].is_bot and game.deadline is None
    assert await h.drain() == 0 and h.store.games[gid].version == game.version
    assert game.abandon_at == game.updated_at + POLICY.empty
    assert await _sweep_at(h, POLICY.empty - timedelta(seconds=1)) == 0
    await reclaim_seat(h.deps, req(ann), gid)
    assert h.store.games[gid].abandon_at is None  # timed, someone plays: deadlines drive it
    await h.drain()  # the bots move on to the person's next wait
    assert await expire(h, gid) == 1
    assert await _sweep_at(h, POLICY.empty) == 1
    _abandoned(h, gid)
    state = h.store.games[gid].state
    assert state is not None
    check(state)


async def test_a_game_of_bots_alone_plays_to_its_end(h: Harness) -> None:
    host = await player(h)
    gid = (await create_game(h.deps, req(host), NewGame(3, take_seat=False))).game_id
    for _ in range(3):
        await add_bot(h.deps, req(host), gid, Strategy.GREEDY, None)
    await start_game(h.deps, req(host), gid)
    await h.drain()
    assert h.store.games[gid].status is GameStatus.FINISHED
    assert _ends(h, gid)[0].termination is not Termination.ABANDONED


async def test_two_sweeps_racing_end_a_game_once(h: Harness) -> None:
    gid, _ = await started_game(h, people=2, seats=3)
    h.clock.advance(POLICY.idle + timedelta(seconds=1))

    def rival() -> None:  # another instance ends the same game first
        h.store.fail_before_commit = None
        with FakeUnitOfWork(h.store) as uow:
            tx = Tx(h.deps, uow, None)
            game = tx.game(gid)
            tx.record(game, end_if_due(tx, game))
            tx.commit()

    h.store.fail_before_commit = rival
    assert await sweep_abandoned(h.deps) == 0  # lost the race; the retry finds it over
    _abandoned(h, gid)
    log = h.store.log(gid)
    assert [e.seq for e in log] == list(range(1, len(log) + 1))
