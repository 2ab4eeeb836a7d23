"""Notifications (issue #25): written by the change that causes them, in
its transaction, once; each player's numbered 1, 2, 3... without a gap;
nothing to the player whose request made the change; listed after a seq,
unread only, and marked read."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import AsyncGenerator
from datetime import timedelta

import pytest

from domain.bots.strategy import Strategy
from domain.channels import notice_channel
from domain.errors import DomainError, ErrorCode
from domain.game.engine import to_act
from domain.game.events import ActionRequired
from domain.game.legal import legal_actions
from domain.game.options import GameOptions
from domain.my_games import entries_of
from domain.notifications import (
    Notification,
    YourDeadlineSoon,
    YourGameEnded,
    YourInvitation,
    YourRematch,
    YourSeatTakenOver,
    YourTurn,
    YourTurnTimedOut,
)
from domain.ports import RESYNC
from domain.records import Visibility
from domain.services import invitations
from domain.services.games import NewGame, add_bot, create_game, join_game, start_game
from domain.services.notifications import (
    expire_read,
    mark_read,
    my_notifications,
    notification_events,
)
from domain.services.play import act
from domain.services.rematch import rematch
from domain.services.timeouts import sweep_deadlines
from tests.fakes import Harness
from tests.usecases.conftest import play_first_legal, player, req
from tests.usecases.refused import code_of


def _mine(h: Harness, player_id: str) -> list[Notification]:
    return h.store.notifications.get(player_id, [])


def _kinds(h: Harness, player_id: str) -> list[str]:
    return [type(n.notice).__name__ for n in _mine(h, player_id)]


async def _three(h: Harness, **spec: object) -> tuple[str, list[str]]:
    """A private game of three people, ann hosting: bob invited, cy by code."""
    ann, bob, cy = [await player(h, n) for n in ("ann", "bob", "cy")]
    new = NewGame(3, visibility=Visibility.PRIVATE, **spec)  # type: ignore[arg-type]
    game_id = (await create_game(h.deps, req(ann), new)).game_id
    await invitations.invite_players(h.deps, req(ann), game_id, [bob])
    await invitations.accept_invitation(h.deps, req(bob), game_id, None)
    code = h.store.games[game_id].invite_code
    assert code is not None
    await invitations.join_by_invite_code(h.deps, req(cy), code, None)
    await start_game(h.deps, req(ann), game_id)
    return game_id, [ann, bob, cy]


async def test_a_game_tells_each_player_what_they_missed_once_in_order(h: Harness) -> None:
    game_id, people = await _three(h)
    ann, bob, _ = people
    assert _kinds(h, bob)[:2] == ["YourInvitation", "YourGameStarted"]
    assert _mine(h, bob)[0].notice == YourInvitation(game_id, ann)
    assert "YourGameStarted" not in _kinds(h, ann)  # ann started it: she knows
    await play_first_legal(h, game_id, dict(enumerate(people)))
    game = h.store.games[game_id]
    outcome = {e.player_id: e for e in entries_of(game)}
    for p in people:
        mine = _mine(h, p)
        assert [n.seq for n in mine] == list(range(1, len(mine) + 1))  # gapless
        assert all(n.notice.game_id == game_id for n in mine)
        ended = [n.notice for n in mine if isinstance(n.notice, YourGameEnded)]
        if ended:
            e = outcome[p]
            assert ended == [YourGameEnded(game_id, e.seat, e.score, e.place, e.won)]
        turns = [n.notice for n in mine if isinstance(n.notice, YourTurn)]
        assert turns and {t.seat for t in turns} == {game.seat_of(p)}
    # the last move's maker is told nothing of the end; the others are
    assert sum("YourGameEnded" in _kinds(h, p) for p in people) == 2


async def test_your_turn_comes_once_per_turn_that_came(h: Harness) -> None:
    """Each ``YourTurn`` matches a wait that moved to the player's seat from
    another seat (the log's ``ActionRequired``s), made by someone else."""
    game_id, people = await _three(h)
    await play_first_legal(h, game_id, dict(enumerate(people)))
    waits = [e.event.seat for e in h.store.log(game_id) if isinstance(e.event, ActionRequired)]
    came = Counter(s for prev, s in zip([None, *waits], waits, strict=False) if prev != s)
    told = Counter(
        n.notice.seat for p in people for n in _mine(h, p) if isinstance(n.notice, YourTurn)
    )
    for seat in range(3):
        assert 0 < told[seat] <= came[seat], (seat, told, came)


async def test_a_player_away_catches_up_page_by_page_and_marks_them_read(h: Harness) -> None:
    game_id, people = await _three(h)
    await play_first_legal(h, game_id, dict(enumerate(people)))
    bob = people[1]
    everything = _mine(h, bob)
    pages, after = [], 0
    while True:
        page = await my_notifications(h.deps, bob, after, 3, False)
        pages += page.items
        if not page.has_more:
            break
        after = page.items[-1].seq
    assert pages == everything
    before = h.clock.now()
    assert await mark_read(h.deps, bob, 4) == 4
    assert await mark_read(h.deps, bob, 4) == 0  # read already
    unread = await my_notifications(h.deps, bob, 0, 100, True)
    assert [n.seq for n in unread.items] == [n.seq for n in everything[4:]]
    (read,) = {n.read_at for n in _mine(h, bob)[:4]}  # one transaction's time
    assert read is not None and before < read < h.clock.now()
    for bad in (my_notifications(h.deps, bob, -1, 10, False), mark_read(h.deps, bob, -1)):
        assert await code_of(bad) is ErrorCode.BAD_INPUT
    assert await code_of(my_notifications(h.deps, bob, 0, 0, False)) is ErrorCode.BAD_INPUT


async def test_a_rematch_tells_the_other_players(h: Harness) -> None:
    game_id, people = await _three(h)
    await play_first_legal(h, game_id, dict(enumerate(people)))
    again = await rematch(h.deps, req(people[2]), game_id)
    for p in people[:2]:
        assert _mine(h, p)[-1].notice == YourRematch(game_id, again.game_id)
    assert not any(isinstance(n.notice, YourRematch) for n in _mine(h, people[2]))


async def test_a_seat_taken_over_after_timeouts_is_told_to_its_player(h: Harness) -> None:
    options = GameOptions(turn_seconds=30, timeouts_to_takeover=1)
    ann, bob = [await player(h, n) for n in ("ann", "bob")]
    game_id = (await create_game(h.deps, req(ann), NewGame(3, options=options))).game_id
    await join_game(h.deps, req(bob), game_id, None)
    await add_bot(h.deps, req(ann), game_id, Strategy.GREEDY, None)
    await start_game(h.deps, req(ann), game_id)
    seat_of = {ann: 0, bob: 1}
    taken: list[tuple[str, object]] = []
    for _ in range(20):  # let whoever must act time out until a takeover
        h.clock.advance(timedelta(seconds=31))
        await sweep_deadlines(h.deps)
        await h.drain()
        taken = [
            (p, n.notice)
            for p in (ann, bob)
            for n in _mine(h, p)
            if isinstance(n.notice, YourSeatTakenOver)
        ]
        if taken:
            break
    assert taken, "no takeover within 20 deadlines"
    p, notice = taken[0]
    assert notice == YourSeatTakenOver(game_id, seat_of[p])
    assert sum(isinstance(n.notice, YourSeatTakenOver) for n in _mine(h, p)) == 1


async def test_a_game_of_bots_tells_nobody(h: Harness) -> None:
    ann = await player(h, "ann")
    spec = NewGame(3, take_seat=False)
    game_id = (await create_game(h.deps, req(ann), spec)).game_id
    for _ in range(3):
        await add_bot(h.deps, req(ann), game_id, Strategy.RANDOM, None)
    await start_game(h.deps, req(ann), game_id)
    await h.drain()
    assert h.store.games[game_id].status.over
    assert h.store.notifications == {}


@pytest.mark.parametrize("unread_only", [False, True])
async def test_nothing_yet_is_an_empty_page(h: Harness, unread_only: bool) -> None:
    ann = await player(h, "ann")
    page = await my_notifications(h.deps, ann, 0, 10, unread_only)
    assert page.items == [] and not page.has_more


async def _next(stream: AsyncGenerator[Notification, None]) -> Notification:
    return await asyncio.wait_for(anext(stream), 5)


async def test_the_stream_replays_then_follows_and_resumes_after_a_seq(h: Harness) -> None:
    game_id, people = await _three(h)
    bob = people[1]
    stored = list(_mine(h, bob))
    stream = notification_events(h.deps, bob, 0)
    assert [await _next(stream) for _ in stored] == stored  # the backlog, in order
    await play_first_legal(h, game_id, dict(enumerate(people)))
    later = _mine(h, bob)[len(stored) :]
    assert later and [await _next(stream) for _ in later] == later  # live, each once
    await stream.aclose()
    resumed = notification_events(h.deps, bob, stored[-1].seq)
    assert await _next(resumed) == later[0]
    await resumed.aclose()
    with pytest.raises(DomainError):
        await anext(notification_events(h.deps, bob, -1))


async def test_the_stream_fills_a_gap_and_a_resync_from_the_store(h: Harness) -> None:
    """Messages lost on the bus (a later seq comes first) or a reconnect
    (a resync): what the store has is sent, each once, in order; a stale
    copy is dropped."""
    _, people = await _three(h)
    bob = people[1]
    have = _mine(h, bob)[-1].seq
    stream = notification_events(h.deps, bob, have)
    first = asyncio.ensure_future(anext(stream))
    while h.bus.subscriber_count(notice_channel(bob)) == 0:
        await asyncio.sleep(0)
    mine = h.store.notifications[bob]

    def stored(seq: int) -> Notification:  # committed elsewhere, its message lost
        mine.append(Notification(bob, seq, h.clock.now(), YourRematch("g", f"r{seq}")))
        return mine[-1]

    lost, came = stored(have + 1), stored(have + 2)
    await h.bus.publish([(notice_channel(bob), came)])
    assert [await first, await _next(stream)] == [lost, came]
    after_resync = stored(have + 3)
    h.bus._offer(notice_channel(bob), RESYNC)
    assert await _next(stream) == after_resync
    fresh = stored(have + 4)
    await h.bus.publish([(notice_channel(bob), lost), (notice_channel(bob), fresh)])
    assert await _next(stream) == fresh  # the stale copy was dropped
    await stream.aclose()


async def test_read_ones_expire_after_the_retention_unread_ones_stay(h: Harness) -> None:
    _, people = await _three(h)
    bob = people[1]
    kept = len(_mine(h, bob))
    await mark_read(h.deps, bob, 1)
    h.clock.advance(h.deps.notice_retention - timedelta(seconds=1))
    assert await expire_read(h.deps) == 0  # not yet
    h.clock.advance(timedelta(seconds=2))
    assert await expire_read(h.deps, batch=1) == 1
    assert [n.seq for n in _mine(h, bob)] == list(range(2, kept + 1))
    # the seqs go on where they were: a new one is the next, not a reused one
    await invitations.invite_players(
        h.deps,
        req(people[0]),
        (await create_game(h.deps, req(people[0]), NewGame(3))).game_id,
        [bob],
    )
    assert _mine(h, bob)[-1].seq == kept + 1


DAY = timedelta(days=1)


async def test_a_correspondence_game_over_days_tells_each_player_once_in_order(
    h: Harness,
) -> None:
    """Three people, two days a turn: each plays some turns after a day and
    lets others run out (warned an hour before, then the server moves for
    them). Every turn that came to a player is a ``YourTurn`` with its
    deadline days ahead, every warning a ``YourDeadlineSoon`` and every
    timeout a ``YourTurnTimedOut``, each once, in order; a player whose app
    was closed the whole game catches up from their list."""
    options = GameOptions(turn_seconds=2 * 86_400, timeouts_to_takeover=10)
    game_id, people = await _three(h, options=options)
    seat_of = dict(zip(people, range(3), strict=True))
    assert [h.store.games[game_id].seat_of(p) for p in people] == [0, 1, 2]
    rng = iter(range(10_000))
    timeouts: Counter[str] = Counter()
    for _ in range(400):
        game = h.store.games[game_id]
        if game.status.over:
            break
        state = game.state
        assert state is not None
        seat = to_act(state)
        assert seat is not None and game.deadline is not None
        assert game.deadline - h.clock.now() > DAY  # days ahead, not seconds
        who = people[seat]
        if next(rng) % 5 == 0:  # away: warned an hour before, then the server moves
            h.clock.advance(2 * DAY - timedelta(minutes=30))
            assert await sweep_deadlines(h.deps) == 1  # the warning
            assert await sweep_deadlines(h.deps) == 0  # once
            h.clock.advance(timedelta(hours=1))
            assert await sweep_deadlines(h.deps) == 1  # the timeout
            timeouts[who] += 1
        else:
            h.clock.advance(DAY)
            await act(h.deps, req(who), game_id, legal_actions(state, seat)[0])
    assert h.store.games[game_id].status.over
    for p in people:
        mine = _mine(h, p)
        assert [n.seq for n in mine] == list(range(1, len(mine) + 1))
        assert [n.at for n in mine] == sorted(n.at for n in mine)
        told_out = [n.notice for n in mine if isinstance(n.notice, YourTurnTimedOut)]
        assert told_out == [YourTurnTimedOut(game_id, seat_of[p])] * timeouts[p]
        # each wait that ran out was warned once, before its timeout; no other
        clock = [type(n.notice).__name__ for n in mine]
        clock = [k for k in clock if k in ("YourDeadlineSoon", "YourTurnTimedOut")]
        assert clock == ["YourDeadlineSoon", "YourTurnTimedOut"] * timeouts[p]
        for n in mine:
            if isinstance(n.notice, YourTurn):
                assert n.notice.seat == seat_of[p] and n.notice.deadline is not None
                assert n.notice.deadline - n.at > DAY
    assert sum(timeouts.values()) > 0
    # the away player's list, page by page, is the whole story
    away = max(people, key=lambda p: timeouts[p])
    page = await my_notifications(h.deps, away, 0, 100, False)
    assert page.items == _mine(h, away) and not page.has_more


async def test_a_seq_past_the_last_is_refused_by_the_list_and_the_stream(h: Harness) -> None:
    """As ``gameEvents`` does: such a stream would skip seqs not yet made."""
    _, people = await _three(h)
    bob = people[1]
    last = _mine(h, bob)[-1].seq
    assert (await my_notifications(h.deps, bob, last, 10, False)).items == []
    for bad in (
        my_notifications(h.deps, bob, last + 1, 10, False),
        anext(notification_events(h.deps, bob, last + 1)),
    ):
        assert await code_of(bad) is ErrorCode.BAD_INPUT


async def test_a_long_wait_warns_its_player_once_before_the_deadline(h: Harness) -> None:
    """Two days a turn: 10% is 4.8 hours, an hour is later: the warning
    comes an hour before the deadline, once, swept as deadlines are; the
    deadline then fires as before."""
    options = GameOptions(turn_seconds=2 * 86_400)
    game_id, people = await _three(h, options=options)
    game = h.store.games[game_id]
    assert game.state is not None and game.clock is not None
    seat = to_act(game.state)
    assert seat is not None and game.deadline is not None
    assert game.clock.warn_at == game.deadline - timedelta(hours=1)
    who = people[seat]
    h.clock.advance(game.deadline - h.clock.now() - timedelta(hours=1, seconds=1))
    assert await sweep_deadlines(h.deps) == 0  # not yet
    h.clock.advance(timedelta(seconds=2))
    await sweep_deadlines(h.deps)
    warned = [n.notice for n in _mine(h, who) if isinstance(n.notice, YourDeadlineSoon)]
    assert warned == [YourDeadlineSoon(game_id, seat, game.deadline)]
    assert h.store.games[game_id].deadline == game.deadline  # the wait goes on
    await sweep_deadlines(h.deps)  # nothing more to warn of
    warned_again = [n for n in _mine(h, who) if isinstance(n.notice, YourDeadlineSoon)]
    assert len(warned_again) == 1
    h.clock.advance(timedelta(hours=1))
    assert await sweep_deadlines(h.deps) == 1  # the deadline, as before
    assert any(isinstance(n.notice, YourTurnTimedOut) for n in _mine(h, who))
    # the log has the warning, public, between the wait and the timeout
    kinds = [e.type for e in h.store.log(game_id)]
    assert kinds.index("DeadlineNear") < kinds.index("TurnTimedOut")


async def test_a_short_turn_has_no_warning(h: Harness) -> None:
    """30 s a turn: 3 s before is under a minute: no warning (the clock is
    on the player's screen)."""
    game_id, _ = await _three(h, options=GameOptions(turn_seconds=30))
    clock = h.store.games[game_id].clock
    assert clock is not None and clock.deadline is not None and clock.warn_at is None
