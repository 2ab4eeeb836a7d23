"""Turn clocks under any schedule (issue #15, docs/decisions/0046): people's
moves and messages, timeouts, reclaims, a leave and bots' moves, in any
order the schedule draws, on a fake clock. After every step the clock
agrees with the game (a deadline exactly when a person must act, banks
never negative, a gapless log) and the log ends with the wait as it is
(the seat to act, its deadline, what that seat is offered: docs/decisions/0050);
every game ends (finished; or abandoned once every person left, or a bot
plays every person's seat and nobody reclaims one in time,
docs/decisions/0051), and its log replays to its state."""

from __future__ import annotations

import asyncio
import contextlib
from datetime import timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from domain.abandonment import room_empty
from domain.clocks import MESSAGE_COMMANDS, TurnTimedOut
from domain.errors import DomainError
from domain.game.choice import OFFERS
from domain.game.commands import SendMessage
from domain.game.engine import awaiting, to_act
from domain.game.events import ActionRequired
from domain.game.invariants import check
from domain.game.legal import legal_actions
from domain.game.messaging import message_targets
from domain.game.options import GameOptions
from domain.records import GameRecord, GameStatus
from domain.replay import replay_state
from domain.services.abandonment import sweep_abandoned
from domain.services.clocked import person_to_act, takeover_of
from domain.services.games import leave_game
from domain.services.play import act
from domain.services.timeouts import reclaim_seat, sweep_deadlines
from infra.db.state_codec import encode
from tests.fakes import Harness, harness
from tests.property.budget import count_game, examples
from tests.usecases.conftest import req, started_game

MAX_STEPS = 3_000  # a game is ~150 moves; a guard against a stuck game
STEPS = ("move", "move", "move", "message", "timeout", "reclaim", "wait", "leave")


def _consistent(game: GameRecord, bank: int) -> None:
    clock = game.clock
    assert clock is not None
    assert clock.waiting == person_to_act(game)
    assert (clock.deadline is None) == (clock.waiting is None) == (clock.started is None)
    if clock.deadline is not None and clock.started is not None:
        assert clock.started < clock.deadline
        assert clock.deadline - clock.started <= timedelta(seconds=game.options.turn_seconds + bank)
    assert all(0 <= b <= bank for b in clock.banks)
    assert all(t >= 0 for t in clock.timeouts)
    if game.state is not None:
        check(game.state)


def _told(h: Harness, game: GameRecord) -> None:
    """The stream tells the truth: a running game's log ends with its wait,
    the deadline as stored, and the seat offered its choices, or only what
    a seat a bot took over offers (0050)."""
    if game.status is not GameStatus.RUNNING or game.state is None:
        return
    last = h.store.log(game.id)[-1].event
    wait = awaiting(game.state)
    assert isinstance(last, ActionRequired) and wait is not None, last
    assert (last.seat, last.phase, last.deadline) == (wait.seat, wait.phase, game.deadline)
    takeover = takeover_of(game, wait.seat)
    offered = wait.choices if takeover is None else OFFERS[takeover]
    assert last.seen_by(wait.seat).choices == offered


async def _play(
    h: Harness, draw: st.DataObject, takeover: int, bank: int, fired: list[int]
) -> GameRecord:
    options = GameOptions(turn_seconds=5, bank_seconds=bank, timeouts_to_takeover=takeover)
    gid, ids = await started_game(h, people=3, seats=4, rat_seat=0, options=options)
    for _ in range(MAX_STEPS):
        game = h.store.games[gid]
        _consistent(game, bank)
        _told(h, game)
        if game.status.over:
            return game
        if room_empty(game):  # the bots wait: a reclaim, or the game is abandoned
            if draw.draw(st.booleans()):
                h.clock.advance(h.deps.abandon.empty)
                assert await sweep_abandoned(h.deps) == 1
            else:
                with contextlib.suppress(DomainError):  # a seat its player left
                    await reclaim_seat(h.deps, req(ids[draw.draw(st.integers(0, 2))]), gid)
            continue
        assert game.state is not None
        seat = to_act(game.state)
        assert seat is not None
        occupant = game.seats[seat]
        assert occupant is not None
        if occupant.is_bot or h.scheduled:
            await h.drain()
            continue
        step = draw.draw(st.sampled_from(STEPS))
        if step == "move":
            cmd = next(
                c for c in legal_actions(game.state, seat) if not isinstance(c, MESSAGE_COMMANDS)
            )
            await act(h.deps, req(ids[seat]), gid, cmd)
        elif step == "message":  # a person in the message window (R5.1), to act or not
            senders = [
                s
                for s in range(3)
                if message_targets(game.state, s) and not game.seats[s].is_bot  # type: ignore[union-attr]
            ]
            if senders:
                sender = draw.draw(st.sampled_from(senders))
                to = draw.draw(st.sampled_from(message_targets(game.state, sender)))
                await act(h.deps, req(ids[sender]), gid, SendMessage(to, "psst"))
        elif step == "timeout":
            assert game.deadline is not None
            h.clock.advance(game.deadline - h.clock.now() + timedelta(milliseconds=1))
            assert await sweep_deadlines(h.deps) == 1
            fired.append(seat)
        elif step == "wait":  # time passes, short of the deadline: nothing fires
            assert game.deadline is not None
            left = game.deadline - h.clock.now() - timedelta(milliseconds=5)
            h.clock.advance(left * draw.draw(st.integers(0, 9)) / 10)
            assert await sweep_deadlines(h.deps) == 0
        else:
            who = draw.draw(st.integers(0, 2))
            try:
                if step == "reclaim":
                    await reclaim_seat(h.deps, req(ids[who]), gid)
                else:
                    await leave_game(h.deps, req(ids[who]), gid)
            except DomainError:
                pass  # not taken over / left already: refused, nothing changed
    raise AssertionError(f"game {gid} did not end in {MAX_STEPS} steps")


@settings(max_examples=examples(12))
@given(
    draw=st.data(),
    takeover=st.integers(1, 3),
    bank=st.sampled_from([0, 10]),
)
def test_any_schedule_keeps_the_clock_consistent_and_finishes(
    draw: st.DataObject, takeover: int, bank: int
) -> None:
    h, fired = harness(), list[int]()
    game = asyncio.run(_play(h, draw, takeover, bank, fired))
    log = h.store.log(game.id)
    assert [e.seq for e in log] == list(range(1, game.last_seq + 1))
    replayed = replay_state(game, log)
    assert replayed is not None and game.state is not None
    assert encode(replayed) == encode(game.state)
    timeouts = [e.event.seat for e in log if isinstance(e.event, TurnTimedOut)]
    assert timeouts == fired  # one timeout per expiry, of the seat that waited
    count_game()
