"""The stream tells the truth about who must act and by when (issue #22,
docs/decisions/0050): a seat a bot plays is offered nothing but taking it
back; every change of a running game ends with the wait's
``ActionRequired`` and its deadline; a timeout answers what its deadline
was for (the lead, never a message the Rat did not choose), and every new
wait gets a fresh deadline."""

from __future__ import annotations

import json
from datetime import timedelta
from itertools import pairwise

import pytest

from domain.clocks import SeatReclaimed, SeatTakenOver, TurnTimedOut, fallback_moves
from domain.errors import DomainError, ErrorCode
from domain.game.choice import Choice, ChoiceKind
from domain.game.choices import choices
from domain.game.commands import PlayCard, SendMessage
from domain.game.engine import to_act
from domain.game.events import (
    ActionRequired,
    CardPlayed,
    MessageDelivered,
    MessageExpired,
)
from domain.game.options import GameOptions
from domain.game.state import MessageStatus, Phase
from domain.log import LoggedEvent, SeatCommand
from domain.records import GameRecord, GameStatus
from domain.services.export import export_log
from domain.services.games import leave_game
from domain.services.play import act
from domain.services.queries import get_game, read_events
from domain.services.timeouts import reclaim_seat, sweep_deadlines
from domain.verify import verify
from infra.game_export import export_from_json, export_to_json
from tests.fakes import FakeUnitOfWork, Harness
from tests.usecases.conftest import expire, player, req, started_game

TURN = 4
RECLAIM = (Choice(ChoiceKind.RECLAIM_SEAT),)


async def _timed(h: Harness, takeover: int = 2) -> tuple[str, list[str]]:
    """A started 3-seat game of 3 people, the Rat at seat 0 (it leads trick 1,
    R4.5); ``TURN`` seconds an action, no bank."""
    options = GameOptions(turn_seconds=TURN, timeouts_to_takeover=takeover)
    return await started_game(h, people=3, seats=3, rat_seat=0, options=options)


def _game(h: Harness, gid: str) -> GameRecord:
    return h.store.games[gid]


def _to_act(h: Harness, gid: str) -> int:
    state = _game(h, gid).state
    assert state is not None
    seat = to_act(state)
    assert seat is not None
    return seat


async def _person_moves(h: Harness, gid: str, ids: list[str]) -> None:
    """The seat to act (a person's) makes its first move (never a message)."""
    seat = _to_act(h, gid)
    state = _game(h, gid).state
    assert state is not None
    await act(h.deps, req(ids[seat]), gid, fallback_moves(state, seat)[0])


async def _stream(h: Harness, gid: str, pid: str) -> list[LoggedEvent]:
    """The whole log as ``pid``'s seat reads it (the ``gameEvents`` pages)."""
    out: list[LoggedEvent] = []
    while True:
        page, more = await read_events(h.deps, gid, pid, out[-1].seq if out else 0, 100)
        out += page
        if not more:
            return out


def _action_required(e: LoggedEvent) -> ActionRequired:
    assert isinstance(e.event, ActionRequired), e
    return e.event


async def _play_on(h: Harness, gid: str, ids: list[str], bot_seat: int, steps: int) -> set[Phase]:
    """People move and the bot plays ``bot_seat`` for ``steps`` turns; after
    each, its player's ``game`` query offers only what a bot's seat may do.
    Returns the phases seen."""
    phases = set()
    left = bot_seat in _game(h, gid).clock.left  # type: ignore[union-attr]
    for _ in range(steps):
        snap = await get_game(h.deps, gid, ids[bot_seat])
        assert snap.choices == (() if left else RECLAIM)
        assert snap.legal_actions == ()
        assert snap.message_targets == ()
        assert snap.public is not None
        phases.add(snap.public.phase)
        if _to_act(h, gid) == bot_seat:
            assert await h.drain() > 0
        else:
            await _person_moves(h, gid, ids)
    return phases


async def test_a_seat_a_bot_took_over_is_offered_only_to_take_it_back(h: Harness) -> None:
    gid, ids = await _timed(h, takeover=1)
    assert await expire(h, gid) == 1  # the Rat misses its lead: a bot plays seat 0
    taken = next(e.seq for e in h.store.log(gid) if isinstance(e.event, SeatTakenOver))
    phases = await _play_on(h, gid, ids, 0, 12)
    assert Phase.LEAD in phases  # message windows too (SEND_MESSAGE is not offered)
    mine = [
        _action_required(e)
        for e in await _stream(h, gid, ids[0])
        if e.seq > taken and isinstance(e.event, ActionRequired) and e.event.seat == 0
    ]
    assert mine, "the bot acted for seat 0"
    for e in mine:
        assert e.choices == RECLAIM and e.hand and e.deadline is None


async def test_a_seat_whose_player_left_is_offered_nothing(h: Harness) -> None:
    gid, ids = await _timed(h)
    done = await leave_game(h.deps, req(ids[2]), gid)
    assert _game(h, gid).state.phase is Phase.LEAD  # type: ignore[union-attr]  # a message window
    phases = await _play_on(h, gid, ids, 2, 12)
    assert Phase.LEAD in phases
    mine = [
        _action_required(e)
        for e in await _stream(h, gid, ids[2])
        if e.seq > done.events[0].seq and isinstance(e.event, ActionRequired) and e.event.seat == 2
    ]
    assert mine and all(e.choices == () and e.hand for e in mine)


async def test_reclaiming_a_seat_that_must_act_logs_its_action_required_and_deadline(
    h: Harness,
) -> None:
    gid, ids = await _timed(h, takeover=1)
    assert await expire(h, gid) == 1  # seat 0 taken over
    while _to_act(h, gid) != 0:  # the bot is not driven: seat 0's turn waits for it
        await _person_moves(h, gid, ids)
    assert _game(h, gid).deadline is None  # a bot's wait
    h.clock.advance(timedelta(seconds=1))
    asked = h.clock.now()
    done = await reclaim_seat(h.deps, req(ids[0]), gid)
    game = _game(h, gid)
    assert game.clock is not None and game.clock.started is not None
    assert asked < game.clock.started < h.clock.now()  # a new wait, from the reclaim
    assert game.deadline == game.clock.started + timedelta(seconds=TURN)
    assert [type(e.event) for e in done.events] == [SeatReclaimed, ActionRequired]
    last = _action_required(done.events[-1])
    assert last.seat == 0 and last.deadline == game.deadline
    assert game.state is not None and last.choices == choices(game.state, 0)
    assert (await _stream(h, gid, ids[0]))[-1] == done.events[-1]  # its stream says so too


async def test_reclaim_and_leave_of_a_seat_not_to_act_restate_the_running_wait(
    h: Harness,
) -> None:
    gid, ids = await _timed(h, takeover=1)
    assert await expire(h, gid) == 1  # seat 0 taken over; seat 1 must play
    waiting, deadline = _to_act(h, gid), _game(h, gid).deadline
    assert waiting != 0 and deadline is not None
    h.clock.advance(timedelta(seconds=1))
    reclaimed = await reclaim_seat(h.deps, req(ids[0]), gid)
    other = next(s for s in range(3) if s not in (0, waiting))
    left = await leave_game(h.deps, req(ids[other]), gid)
    for done, kind in ((reclaimed, SeatReclaimed), (left, SeatTakenOver)):
        assert [type(e.event) for e in done.events] == [kind, ActionRequired]
        last = _action_required(done.events[-1])
        assert (last.seat, last.deadline, last.choices) == (waiting, deadline, None)
    assert _game(h, gid).deadline == deadline  # the wait goes on


async def test_leaving_when_it_is_your_turn_ends_with_the_bots_wait(h: Harness) -> None:
    gid, ids = await _timed(h)
    assert _to_act(h, gid) == 0
    done = await leave_game(h.deps, req(ids[0]), gid)
    assert [type(e.event) for e in done.events] == [SeatTakenOver, ActionRequired]
    last = _action_required(done.events[-1])
    assert (last.seat, last.deadline, last.choices) == (0, None, ())
    assert _game(h, gid).deadline is None


async def test_a_rat_who_misses_the_lead_with_a_message_pending_leads_and_the_message_expires(
    h: Harness,
) -> None:
    """R5.3: the window closes with the lead, whoever makes it; the fallback
    never delivers a message the Rat did not choose."""
    gid, ids = await _timed(h)
    await act(h.deps, req(ids[1]), gid, SendMessage(2, "psst"))
    before, before_at = _game(h, gid).last_seq, _game(h, gid).deadline
    assert before_at is not None
    assert await expire(h, gid) == 1
    new = [e for e in h.store.log(gid) if e.seq > before]
    assert new[0].event == TurnTimedOut(0)
    assert isinstance(new[0].cause, SeatCommand) and isinstance(new[0].cause.command, PlayCard)
    kinds = [type(e.event) for e in new]
    assert MessageExpired in kinds and MessageDelivered not in kinds
    played = next(e.event for e in new if isinstance(e.event, CardPlayed))
    assert played.seat == 0 and played.lead
    game = _game(h, gid)
    assert game.state is not None and game.state.messages[0].status is MessageStatus.EXPIRED
    assert game.clock is not None and game.clock.started is not None
    assert game.clock.started > before_at  # a fresh wait, from the timeout
    assert game.deadline == game.clock.started + timedelta(seconds=TURN)
    assert _action_required(new[-1]).deadline == game.deadline
    assert await sweep_deadlines(h.deps) == 0  # nothing else is due
    assert game.seats[0] is not None and not game.seats[0].is_bot


async def test_nobody_acting_times_each_wait_out_after_its_full_turn(h: Harness) -> None:
    """The black-box case: 3 seats, the Rat leads, seat 1 sends one message,
    nobody acts; every second a sweep. Each timeout comes a full turn after
    the one before, so the Rat (2 timeouts to a takeover) is not taken over
    before 2 turns have passed."""
    gid, ids = await _timed(h)
    await act(h.deps, req(ids[1]), gid, SendMessage(2, "psst"))
    fired: list[int] = []  # the seconds passed at each timeout, each takeover
    taken: list[int] = []
    for second in range(1, 41):
        h.clock.advance(timedelta(seconds=1))
        before = _game(h, gid).last_seq
        await sweep_deadlines(h.deps)
        new = [e.event for e in h.store.log(gid) if e.seq > before]
        fired += [second for e in new if isinstance(e, TurnTimedOut)]
        taken += [second for e in new if isinstance(e, SeatTakenOver)]
        await h.drain()
    assert len(fired) >= 4 and fired[0] == TURN
    assert all(b - a >= TURN for a, b in pairwise(fired))
    assert taken and taken[0] >= 2 * TURN


async def test_an_outsider_may_not_reclaim_a_seat(h: Harness) -> None:
    gid, _ = await _timed(h, takeover=1)
    assert await expire(h, gid) == 1
    outsider = await player(h, "eve")
    version = _game(h, gid).version
    with pytest.raises(DomainError) as refused:
        await reclaim_seat(h.deps, req(outsider), gid)
    assert refused.value.code is ErrorCode.FORBIDDEN
    assert _game(h, gid).version == version


async def test_a_game_with_takeovers_reclaims_and_a_leave_still_verifies(h: Harness) -> None:
    """The restated ``ActionRequired`` and a bot's seat's offer check out
    against the replay (``mmk verify``)."""
    gid, ids = await _timed(h, takeover=1)
    assert await expire(h, gid) == 1  # seat 0 taken over
    await _person_moves(h, gid, ids)
    await reclaim_seat(h.deps, req(ids[0]), gid)
    gone = (await leave_game(h.deps, req(ids[2]), gid)).events[0].seq
    while _game(h, gid).status is GameStatus.RUNNING:
        if _to_act(h, gid) == 2:
            await h.drain()
        else:
            await _person_moves(h, gid, ids)
    exported = export_to_json(gid, export_log(FakeUnitOfWork(h.store), gid))
    _, log = export_from_json(json.loads(json.dumps(exported)))  # as `mmk verify FILE` reads it
    assert verify(log).commands > 0
    assert any(isinstance(e.public, SeatReclaimed) for e in log)
    bots = [  # after the leave: the bot's waits, as seat 2 saw them
        e.seats[2]
        for e in log
        if e.seq > gone and isinstance(e.public, ActionRequired) and e.public.seat == 2
    ]
    assert bots and all(isinstance(e, ActionRequired) and e.choices == () for e in bots)
