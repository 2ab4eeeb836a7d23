"""Turn clocks, timeouts, takeovers and coming back through the use cases,
on a fake clock (issue #15, docs/decisions/0046)."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest

from domain.bots.strategy import Strategy, bot_for
from domain.clocks import (
    MESSAGE_COMMANDS,
    SeatReclaimed,
    SeatTakenOver,
    TurnTimedOut,
    fallback_moves,
)
from domain.errors import DomainError, ErrorCode
from domain.fairness import bot_rng_state
from domain.game.commands import Command, SendMessage
from domain.game.engine import to_act
from domain.game.events import ActionRequired
from domain.game.legal import legal_actions
from domain.game.rng import Rng
from domain.game.views import player_view
from domain.log import SeatCommand
from domain.records import GameRecord, GameStatus
from domain.replay import replay_state
from domain.services.export import export_log
from domain.services.games import NewGame, create_game, leave_game
from domain.services.play import act
from domain.services.timeouts import reclaim_seat, sweep_deadlines, time_out
from domain.services.transaction import Tx
from domain.verify import verify
from infra.db.state_codec import encode
from infra.game_export import export_from_json, export_to_json
from tests.fakes import FakeUnitOfWork, Harness
from tests.usecases.conftest import expire, player, req, started_game

TURN = 10


async def _timed(h: Harness, **clock: int) -> tuple[str, list[str]]:
    """A started 3-seat game of 3 people, the Rat at seat 0, timed."""
    return await started_game(h, people=3, seats=3, rat_seat=0, **_options(**clock))


def _options(turn: int = TURN, bank: int = 0, takeover: int = 2) -> dict[str, object]:
    from domain.game.options import GameOptions

    return {
        "options": GameOptions(turn_seconds=turn, bank_seconds=bank, timeouts_to_takeover=takeover)
    }


def _game(h: Harness, gid: str) -> GameRecord:
    return h.store.games[gid]


def _waiting(h: Harness, gid: str) -> tuple[int, str]:
    game = _game(h, gid)
    assert game.state is not None
    seat = to_act(game.state)
    assert seat is not None
    occupant = game.seats[seat]
    assert occupant is not None and occupant.player_id is not None
    return seat, occupant.player_id


def _move(game: GameRecord, seat: int) -> Command:
    assert game.state is not None
    return next(c for c in legal_actions(game.state, seat) if not isinstance(c, MESSAGE_COMMANDS))


async def _play_once(h: Harness, gid: str) -> None:
    seat, pid = _waiting(h, gid)
    await act(h.deps, req(pid), gid, _move(_game(h, gid), seat))


def _last_action_required(h: Harness, gid: str) -> ActionRequired:
    events = [e.event for e in h.store.log(gid) if isinstance(e.event, ActionRequired)]
    return events[-1]


async def test_every_wait_has_a_deadline_carried_by_its_action_required(h: Harness) -> None:
    gid, _ = await _timed(h)
    for _ in range(12):  # leads and plays of several tricks
        game = _game(h, gid)
        clock = game.clock
        assert clock is not None and clock.waiting == _waiting(h, gid)[0]
        assert clock.started is not None and clock.deadline is not None
        assert clock.deadline == clock.started + timedelta(seconds=TURN)
        assert _last_action_required(h, gid).deadline == clock.deadline
        assert game.deadline == clock.deadline
        await _play_once(h, gid)


async def test_an_untimed_game_has_no_deadline(h: Harness) -> None:
    gid, _ = await started_game(h, people=3, seats=3, rat_seat=0)
    assert _game(h, gid).deadline is None
    assert _last_action_required(h, gid).deadline is None
    h.clock.advance(timedelta(days=1))
    assert await sweep_deadlines(h.deps) == 0


async def test_a_message_sent_while_a_seat_waits_does_not_restart_its_wait(h: Harness) -> None:
    gid, ids = await _timed(h)
    seat, _ = _waiting(h, gid)
    before = _game(h, gid).deadline
    other = next(i for i in range(3) if i != seat)
    h.clock.advance(timedelta(seconds=3))
    await act(h.deps, req(ids[other]), gid, SendMessage(seat, "hurry up"))
    assert _game(h, gid).deadline == before  # the message window is the lead's wait
    assert _last_action_required(h, gid).deadline == before


async def test_time_past_the_turn_comes_out_of_the_bank(h: Harness) -> None:
    gid, _ = await _timed(h, bank=30)
    seat, _ = _waiting(h, gid)
    clock = _game(h, gid).clock
    assert clock is not None and clock.banks == (30.0, 30.0, 30.0)
    assert clock.deadline == clock.started + timedelta(seconds=TURN + 30)  # type: ignore[operator]
    h.clock.advance(timedelta(seconds=TURN + 5))
    await _play_once(h, gid)
    banks = _game(h, gid).clock.banks  # type: ignore[union-attr]
    assert 24.9 < banks[seat] < 25.0
    assert [b for i, b in enumerate(banks) if i != seat] == [30.0, 30.0]


async def test_a_deadline_fires_once_with_the_greedy_move_from_the_seats_view(h: Harness) -> None:
    gid, _ = await _timed(h)
    seat, _ = _waiting(h, gid)
    h.clock.advance(timedelta(seconds=TURN - 1))
    assert await sweep_deadlines(h.deps) == 0  # not due yet
    before = _game(h, gid).clone()
    last = before.last_seq
    assert await expire(h, gid) == 1
    assert await sweep_deadlines(h.deps) == 0  # fired already: the next wait is not due
    new = [e for e in h.store.log(gid) if e.seq > last]
    assert new[0].event == TurnTimedOut(seat)
    assert before.state is not None
    rng = Rng(bot_rng_state(before.seed, before.salt, before.practice, before.version))
    greedy = bot_for(Strategy.GREEDY)(
        player_view(before.state, seat), fallback_moves(before.state, seat), rng
    )
    assert new[0].cause == SeatCommand(seat, greedy)
    clock = _game(h, gid).clock
    assert clock is not None and clock.timeouts[seat] == 1 and clock.waiting != seat
    assert _game(h, gid).seats[seat].bot is None  # type: ignore[union-attr]  # one timeout: no takeover


async def _timeouts_until_takeover(h: Harness, gid: str, seat: int) -> int:
    """Everyone else plays; ``seat`` times out; returns its timeouts."""
    n = 0
    while not any(isinstance(e.event, SeatTakenOver) for e in h.store.log(gid)):
        if _waiting(h, gid)[0] == seat:
            assert await expire(h, gid) == 1
            n += 1
        else:
            await _play_once(h, gid)
    return n


async def test_n_timeouts_in_a_row_hand_the_seat_to_a_bot_and_its_player_reclaims_it(
    h: Harness,
) -> None:
    gid, _ = await _timed(h)
    seat, pid = _waiting(h, gid)
    assert await _timeouts_until_takeover(h, gid, seat) == 2
    game = _game(h, gid)
    assert game.seats[seat] is not None
    assert (game.seats[seat].player_id, game.seats[seat].bot) == (pid, Strategy.EXPERT)  # type: ignore[union-attr]
    kinds = [type(e.event) for e in h.store.log(gid)]
    at = kinds.index(SeatTakenOver)
    assert kinds[at - 1] is TurnTimedOut  # in the change of the 2nd timeout
    with pytest.raises(DomainError) as refused:  # the bot plays it now
        await act(h.deps, req(pid), gid, _move(game, seat))
    assert refused.value.code is ErrorCode.ILLEGAL_ACTION
    result = await reclaim_seat(h.deps, req(pid), gid)
    assert result.events[0].event == SeatReclaimed(seat)
    assert [type(e.event) for e in result.events[1:]] == [ActionRequired]  # the wait, restated
    game = _game(h, gid)
    assert game.seats[seat].bot is None and game.clock.timeouts[seat] == 0  # type: ignore[union-attr]
    with pytest.raises(DomainError) as again:
        await reclaim_seat(h.deps, req(pid), gid)
    assert again.value.code is ErrorCode.ILLEGAL_ACTION
    for _ in range(30):  # plays on as a person: its turns wait for it again
        if _waiting(h, gid)[0] == seat:
            assert _game(h, gid).clock.waiting == seat  # type: ignore[union-attr]
        await _play_once(h, gid)


async def test_a_seat_taken_over_is_played_by_its_bot(h: Harness) -> None:
    gid, _ = await _timed(h, takeover=1)
    seat, _ = _waiting(h, gid)
    assert await expire(h, gid) == 1
    assert _game(h, gid).seats[seat].bot is Strategy.EXPERT  # type: ignore[union-attr]
    while _game(h, gid).status is GameStatus.RUNNING:
        if _waiting_or_none(h, gid) == seat:
            await h.drain()
            continue
        await _play_once(h, gid)
    game = _game(h, gid)
    assert game.deadline is None and game.clock.waiting is None  # type: ignore[union-attr]
    assert replay_state(game, h.store.log(gid)) is not None
    assert encode(replay_state(game, h.store.log(gid))) == encode(game.state)  # type: ignore[arg-type]
    exported = export_to_json(gid, export_log(FakeUnitOfWork(h.store), gid))
    _, log = export_from_json(json.loads(json.dumps(exported)))  # as `mmk verify FILE` reads it
    assert verify(log).commands > 0  # the clock events are skipped, deadlines ignored


def _waiting_or_none(h: Harness, gid: str) -> int | None:
    state = _game(h, gid).state
    return None if state is None else to_act(state)


async def test_leaving_a_running_game_hands_the_seat_to_a_bot_for_good(h: Harness) -> None:
    gid, ids = await _timed(h)
    result = await leave_game(h.deps, req(ids[2]), gid)
    assert result.events[0].event == SeatTakenOver(2, Strategy.EXPERT, left=True)
    assert [type(e.event) for e in result.events[1:]] == [ActionRequired]  # the wait, restated
    game = _game(h, gid)
    assert game.seats[2].player_id == ids[2] and game.clock.left == (2,)  # type: ignore[union-attr]
    for refused in (reclaim_seat(h.deps, req(ids[2]), gid), leave_game(h.deps, req(ids[2]), gid)):
        with pytest.raises(DomainError) as e:
            await refused
        assert e.value.code is ErrorCode.ILLEGAL_ACTION
    while _game(h, gid).status is GameStatus.RUNNING:  # the game still finishes
        if (s := _waiting_or_none(h, gid)) == 2:
            await h.drain()
        else:
            assert s is not None
            await _play_once(h, gid)
    outcome = _game(h, gid).state.outcome  # type: ignore[union-attr]
    assert outcome is not None and len(outcome.scores) == 3  # the seat still scores


async def test_two_sweeps_racing_log_one_timeout(h: Harness) -> None:
    gid, _ = await _timed(h)
    clock = _game(h, gid).clock
    assert clock is not None and clock.deadline is not None
    h.clock.advance(clock.deadline - h.clock.now() + timedelta(milliseconds=1))

    def rival() -> None:  # another instance fires the same deadline first
        h.store.fail_before_commit = None
        with FakeUnitOfWork(h.store) as uow:
            tx = Tx(h.deps, uow, None)
            game = tx.game(gid)
            tx.record(game, time_out(tx, game, h.deps.takeover_bot))
            tx.commit()

    h.store.fail_before_commit = rival
    assert await sweep_deadlines(h.deps) == 0  # lost the race; the retry finds it not due
    log = h.store.log(gid)
    assert sum(isinstance(e.event, TurnTimedOut) for e in log) == 1
    assert [e.seq for e in log] == list(range(1, len(log) + 1))


async def test_a_bad_time_control_is_refused_and_creates_nothing(h: Harness) -> None:
    from domain.game.options import GameOptions

    pid = await player(h)
    fortnight = 14 * 86_400  # correspondence play's longest turn and bank (#25)
    for options in (
        GameOptions(turn_seconds=-1),
        GameOptions(bank_seconds=60),
        GameOptions(turn_seconds=10, timeouts_to_takeover=0),
        GameOptions(turn_seconds=fortnight + 1),
        GameOptions(turn_seconds=60, bank_seconds=fortnight + 1),
    ):
        with pytest.raises(DomainError) as e:
            await create_game(h.deps, req(pid), NewGame(3, options))
        assert e.value.code is ErrorCode.BAD_INPUT
    assert not h.store.games
    longest = GameOptions(turn_seconds=fortnight, bank_seconds=fortnight)
    assert await create_game(h.deps, req(pid), NewGame(3, longest))


async def test_another_seat_taken_over_does_not_restart_the_wait(h: Harness) -> None:
    gid, ids = await _timed(h)
    seat, _ = _waiting(h, gid)
    before = _game(h, gid).deadline
    other = next(i for i in range(3) if i != seat)
    h.clock.advance(timedelta(seconds=3))
    await leave_game(h.deps, req(ids[other]), gid)
    assert _game(h, gid).deadline == before
