"""Game commands through the use cases: roles, versions, idempotency,
races, crash safety, bots (issue #3)."""

from __future__ import annotations

import pytest

from domain.bots.strategy import Strategy
from domain.errors import DomainError, ErrorCode
from domain.game.commands import PlayCard, SendMessage
from domain.game.engine import to_act
from domain.game.legal import legal_actions
from domain.records import GameStatus
from domain.replay import replay_state
from domain.services.games import NewGame, add_bot, create_game, start_game
from domain.services.play import act, seat_command
from domain.services.transaction import Request
from infra.db.state_codec import encode
from tests.fakes import FakeUnitOfWork, Harness
from tests.usecases.conftest import player, req, started_game


def _seat_to_act(h: Harness, gid: str) -> tuple[int, str]:
    game = h.store.games[gid]
    assert game.state is not None
    seat = to_act(game.state)
    assert seat is not None
    occupant = game.seats[seat]
    assert occupant is not None and occupant.player_id is not None
    return seat, occupant.player_id


async def _person_to_act(h: Harness, people: int = 4) -> tuple[str, int, str]:
    gid, _ = await started_game(h, people=people, seats=people, rat_seat=0)
    seat, pid = _seat_to_act(h, gid)
    return gid, seat, pid


def _first_play(h: Harness, gid: str, seat: int) -> PlayCard:
    state = h.store.games[gid].state
    assert state is not None
    cmd = legal_actions(state, seat)[0]
    assert isinstance(cmd, PlayCard)
    return cmd


async def _refused(code: ErrorCode, coro: object) -> None:
    with pytest.raises(DomainError) as e:
        await coro  # type: ignore[misc]
    assert e.value.code is code, e.value.message


async def test_a_seat_plays_and_the_caller_sees_its_own_projection(h: Harness) -> None:
    gid, seat, pid = await _person_to_act(h)
    before = h.store.games[gid]
    result = await act(h.deps, req(pid), gid, _first_play(h, gid, seat))
    assert result.version == before.version + 1
    assert next(e.seq for e in result.events) == before.last_seq + 1
    assert result.events[0].type == "CardPlayed"


async def test_roles_and_phases_give_the_right_codes(h: Harness) -> None:
    gid, seat, pid = await _person_to_act(h)
    state = h.store.games[gid].state
    assert state is not None
    other = next(o.player_id for i, o in enumerate(h.store.games[gid].seats) if i != seat and o)
    stranger = await player(h, "stranger")
    cmd = _first_play(h, gid, seat)
    await _refused(ErrorCode.FORBIDDEN, act(h.deps, req(stranger), gid, cmd))
    assert other is not None
    await _refused(ErrorCode.NOT_YOUR_TURN, act(h.deps, req(other), gid, cmd))
    await _refused(ErrorCode.NOT_FOUND, act(h.deps, req(pid), "missing", cmd))
    lobby = (await create_game(h.deps, req(pid), NewGame(3))).game_id
    await _refused(ErrorCode.GAME_NOT_STARTED, act(h.deps, req(pid), lobby, cmd))


async def test_expected_version_mismatch_is_stale_and_changes_nothing(h: Harness) -> None:
    gid, seat, pid = await _person_to_act(h)
    before = h.store.games[gid]
    stale = Request(pid, "playCard", {}, expected_version=before.version - 1)
    await _refused(ErrorCode.STALE_STATE, act(h.deps, stale, gid, _first_play(h, gid, seat)))
    after = h.store.games[gid]
    assert after.version == before.version and after.last_seq == before.last_seq
    fresh = Request(pid, "playCard", {}, expected_version=before.version)
    assert (await act(h.deps, fresh, gid, _first_play(h, gid, seat))).version == before.version + 1


async def test_a_retried_move_with_the_same_key_is_applied_once(h: Harness) -> None:
    gid, seat, pid = await _person_to_act(h)
    cmd = _first_play(h, gid, seat)
    key = Request(pid, "playCard", {"card": cmd.card}, idempotency_key="k1")
    first = await act(h.deps, key, gid, cmd)
    seq_after_first = h.store.games[gid].last_seq
    again = await act(h.deps, key, gid, cmd)
    assert again == first
    assert h.store.games[gid].last_seq == seq_after_first


async def test_the_same_key_with_other_input_is_refused(h: Harness) -> None:
    gid, seat, pid = await _person_to_act(h)
    cmd = _first_play(h, gid, seat)
    await act(h.deps, Request(pid, "playCard", {"card": cmd.card}, idempotency_key="k"), gid, cmd)
    other = Request(pid, "playCard", {"card": "crazy-1"}, idempotency_key="k")
    await _refused(ErrorCode.IDEMPOTENCY_KEY_REUSED, act(h.deps, other, gid, cmd))


def _commit_elsewhere(h: Harness, gid: str, pid: str, cmd: SendMessage | PlayCard) -> None:
    """Another process commits ``cmd`` by ``pid`` (on the same store)."""
    with FakeUnitOfWork(h.store) as uow:
        game = uow.games.get(gid)
        assert game is not None
        version = game.version
        change = seat_command(game, pid, cmd)
        uow.events.append(game.record(change.events, change.cause, h.deps.clock.now()))
        uow.games.save(game, version)
        uow.commit()


def _race_once(h: Harness, gid: str, rat_pid: str) -> None:
    """Before the next commit, another writer commits a change to the game."""

    def interloper() -> None:
        h.store.fail_before_commit = None
        _commit_elsewhere(h, gid, rat_pid, SendMessage(1, "hello"))

    h.store.fail_before_commit = interloper


async def test_a_writer_that_lost_the_race_reruns_on_the_fresh_state(h: Harness) -> None:
    gid, seat, pid = await _person_to_act(h)
    _race_once(h, gid, pid)  # the Rat (seat 0) is to act and sends a message first
    before = h.store.games[gid].last_seq
    result = await act(h.deps, req(pid), gid, _first_play(h, gid, seat))
    events = sorted(e.seq for (g, _), e in h.store.events.items() if g == gid)
    assert events == list(range(1, len(events) + 1))  # no gap, no duplicate
    # after the racer's MessageSent, MessageDelivered and ActionRequired
    assert result.events[0].seq == before + 4


async def test_with_expected_version_the_loser_gets_conflict(h: Harness) -> None:
    gid, seat, pid = await _person_to_act(h)
    version = h.store.games[gid].version
    _race_once(h, gid, pid)
    req_v = Request(pid, "playCard", {}, expected_version=version)
    await _refused(ErrorCode.CONFLICT, act(h.deps, req_v, gid, _first_play(h, gid, seat)))
    assert h.store.games[gid].version == version + 1  # only the interloper's change


async def test_a_failure_before_commit_leaves_no_event_and_no_state(h: Harness) -> None:
    gid, seat, pid = await _person_to_act(h)
    before = encode(h.store.games[gid].state)  # type: ignore[arg-type]
    n_events = len(h.store.events)

    def crash() -> None:
        raise RuntimeError("power cut")

    h.store.fail_before_commit = crash
    with pytest.raises(RuntimeError):
        await act(h.deps, req(pid), gid, _first_play(h, gid, seat))
    assert len(h.store.events) == n_events
    assert encode(h.store.games[gid].state) == before  # type: ignore[arg-type]
    h.store.fail_before_commit = None
    await act(h.deps, req(pid), gid, _first_play(h, gid, seat))  # play continues


@pytest.mark.parametrize("seats", [3, 5, 8])
async def test_a_bots_only_game_runs_to_the_end_and_replays(h: Harness, seats: int) -> None:
    host = await player(h)
    gid = (await create_game(h.deps, req(host), NewGame(seats, take_seat=False))).game_id
    for i in range(seats):
        await add_bot(h.deps, req(host), gid, list(Strategy)[i % 2], None)
    await start_game(h.deps, req(host), gid)
    assert await h.drain() > 0
    game = h.store.games[gid]
    assert game.status is GameStatus.FINISHED
    log = h.store.log(gid)
    assert [e.seq for e in log] == list(range(1, game.last_seq + 1))
    replayed = replay_state(game, log)
    assert replayed is not None and game.state is not None
    assert encode(replayed) == encode(game.state)


async def test_bots_wait_for_a_person_and_resume_after_them(h: Harness) -> None:
    gid, ids = await started_game(h, people=1, seats=4, rat_seat=1)
    await h.drain()
    game = h.store.games[gid]
    assert game.state is not None and to_act(game.state) == 0  # the person
    await act(h.deps, req(ids[0]), gid, legal_actions(game.state, 0)[0])
    await h.drain()
    game = h.store.games[gid]
    assert game.state is not None
    assert game.status is GameStatus.FINISHED or to_act(game.state) == 0


async def test_stalled_bots_are_resumed_by_any_instance(h: Harness) -> None:
    """An instance that died mid-game leaves a bot to act; a sweep elsewhere
    finds the game and its bots play on (issue #5)."""
    from domain.services.bots import resume_stalled_bots

    host = await player(h)
    gid = (await create_game(h.deps, req(host), NewGame(3, take_seat=False))).game_id
    for _ in range(3):
        await add_bot(h.deps, req(host), gid, Strategy.RANDOM, None)
    await start_game(h.deps, req(host), gid)
    h.scheduled.clear()  # the instance that would have driven the bots is gone
    assert await resume_stalled_bots(h.deps, idle_seconds=3600) == 0  # not idle long enough
    assert await resume_stalled_bots(h.deps, idle_seconds=0) == 1
    await h.drain()
    assert h.store.games[gid].status is GameStatus.FINISHED
    assert await resume_stalled_bots(h.deps, idle_seconds=0) == 0
