"""Quick play (issue #15 part 5, docs/decisions/0048): the oldest open game
of the same settings is filled first, a full game starts itself, a due bot
fill seats bots and starts (on a fake clock, swept), and racers for the last
seat never both get it."""

from __future__ import annotations

import asyncio
import time
from datetime import timedelta

import pytest

from domain.bots.strategy import Strategy
from domain.errors import DomainError, ErrorCode
from domain.game.events import GameStarted
from domain.game.options import Format
from domain.log import GameStart
from domain.records import GameStatus
from domain.replay import replay_state
from domain.services.games import NewGame, create_game, join_game, leave_game
from domain.services.quick_play import fill_due_games, quick_play
from domain.verify import verify
from infra.game_export import export_from_json
from tests.fakes import Harness, harness
from tests.usecases.conftest import play_first_legal, player, req
from tests.usecases.test_verify import exported


async def _quick(
    h: Harness,
    pid: str,
    seats: int = 3,
    fmt: Format = Format.SINGLETON,
    fill_after: int | None = None,
) -> str:
    return (await quick_play(h.deps, req(pid, "quickPlay"), seats, fmt, fill_after)).game_id


async def test_quick_play_creates_a_game_then_fills_the_oldest_first(h: Harness) -> None:
    a, b, c, d = [await player(h, n) for n in "abcd"]
    first = await _quick(h, a, 4)
    game = h.store.games[first]
    assert game.host == a and game.seat_of(a) == 0 and game.quick_play is not None
    assert game.status is GameStatus.LOBBY and game.fill_bots_at is None
    # a hand-made lobby game of the same settings is not a quick-play game
    own = (await create_game(h.deps, req(d), NewGame(4))).game_id
    h.clock.advance(timedelta(seconds=1))
    # another seat count and another format make games of their own
    assert await _quick(h, b, 3) not in (first, own)
    assert await _quick(h, c, 4, Format.SEALED) not in (first, own)
    assert await _quick(h, b, 4) == first
    assert await _quick(h, c, 4) == first
    assert h.store.games[first].seat_of(c) == 2 and h.store.games[own].seats_taken == 1


async def test_a_caller_already_waiting_gets_their_game_back_unchanged(h: Harness) -> None:
    a = await player(h)
    gid = await _quick(h, a)
    version = h.store.games[gid].version
    again = await quick_play(h.deps, req(a), 3, Format.SINGLETON, None)
    assert (again.game_id, again.version, again.events) == (gid, version, ())


async def test_a_full_quick_play_game_starts_itself(h: Harness) -> None:
    a, b, c = [await player(h, n) for n in "abc"]
    gid = await _quick(h, a)
    await _quick(h, b)
    last = await quick_play(h.deps, req(c), 3, Format.SINGLETON, None)
    game = h.store.games[gid]
    assert game.status is GameStatus.RUNNING
    types = [e.type for e in last.events]
    assert types[0] == "SeatTaken" and types[1] == "GameStarted"
    logged = h.store.log(gid)
    started = next(e for e in logged if isinstance(e.event, GameStarted))
    assert isinstance(started.cause, GameStart)  # the start's cause, on its first event
    assert replay_state(game, logged) == game.state
    # a fourth caller finds no open game: a new one
    d = await player(h, "d")
    assert await _quick(h, d) != gid


async def test_join_game_also_starts_a_full_quick_play_game(h: Harness) -> None:
    a, b, c = [await player(h, n) for n in "abc"]
    gid = await _quick(h, a)
    await join_game(h.deps, req(b), gid, None)
    assert h.store.games[gid].status is GameStatus.LOBBY
    await join_game(h.deps, req(c), gid, None)
    assert h.store.games[gid].status is GameStatus.RUNNING


async def test_bots_fill_the_empty_seats_when_due_once(h: Harness) -> None:
    a, b = [await player(h, n) for n in "ab"]
    gid = await _quick(h, a, 4, fill_after=30)
    await _quick(h, b, 4, fill_after=60)  # never later than someone asked
    due = h.store.games[gid].fill_bots_at
    assert due is not None
    h.clock.advance(timedelta(seconds=29))
    assert await fill_due_games(h.deps) == 0
    assert h.store.games[gid].status is GameStatus.LOBBY
    h.clock.advance(timedelta(seconds=1))
    assert await fill_due_games(h.deps) == 1
    game = h.store.games[gid]
    assert game.status is GameStatus.RUNNING and game.fill_bots_at is None
    assert [o.bot if o else None for o in game.seats] == [None, None, *[Strategy.GREEDY] * 2]
    assert await fill_due_games(h.deps) == 0  # once
    await h.drain()  # the bots play on
    assert replay_state(h.store.games[gid], h.store.log(gid)) == h.store.games[gid].state


async def test_when_everyone_leaves_no_bot_only_game_is_started(h: Harness) -> None:
    """The last person out ends the game as abandoned (docs/decisions/0051):
    no bot fill, and the next caller gets a game of their own."""
    a, b = [await player(h, n) for n in "ab"]
    gid = await _quick(h, a, 4, fill_after=10)
    await leave_game(h.deps, req(a), gid)
    assert h.store.games[gid].fill_bots_at is None
    assert h.store.games[gid].status is GameStatus.ABANDONED
    h.clock.advance(timedelta(seconds=11))
    assert await fill_due_games(h.deps) == 0
    other = await _quick(h, b, 4, fill_after=5)
    assert other != gid
    h.clock.advance(timedelta(seconds=5))
    assert await fill_due_games(h.deps) == 1
    assert h.store.games[other].status is GameStatus.RUNNING
    assert h.store.games[gid].status is GameStatus.ABANDONED


async def test_a_nearer_fill_time_brings_the_fill_forward(h: Harness) -> None:
    a, b = [await player(h, n) for n in "ab"]
    gid = await _quick(h, a, 4, fill_after=600)
    await _quick(h, b, 4, fill_after=5)
    h.clock.advance(timedelta(seconds=6))
    assert await fill_due_games(h.deps) == 1
    assert h.store.games[gid].status is GameStatus.RUNNING


async def test_a_filled_game_plays_out_and_verifies(h: Harness) -> None:
    a = await player(h)
    gid = await _quick(h, a, 3, fill_after=0)
    h.clock.advance(timedelta(milliseconds=1))
    assert await fill_due_games(h.deps) == 1
    game = h.store.games[gid]
    assert game.seat_of(a) == 0
    await play_first_legal(h, gid, {0: a})  # a's moves: the first legal each time
    _, log = export_from_json(await exported(h, gid))
    assert verify(log).events == h.store.games[gid].last_seq


@pytest.mark.parametrize(
    ("seats", "fmt", "fill_after"),
    [
        (2, Format.SINGLETON, None),
        (9, Format.SEALED, None),
        (3, Format.FORMER_SEALED, None),
        (3, Format.SINGLETON, -1),
        (3, Format.SINGLETON, 3601),
    ],
)
async def test_bad_quick_play_settings_are_refused_and_change_nothing(
    h: Harness, seats: int, fmt: Format, fill_after: int | None
) -> None:
    a = await player(h)
    with pytest.raises(DomainError) as e:
        await quick_play(h.deps, req(a), seats, fmt, fill_after)
    assert e.value.code is ErrorCode.BAD_INPUT
    assert not h.store.games


async def test_racers_for_the_last_seat_never_both_get_it() -> None:
    """Transactions in threads (a real interleaving): of many callers at
    once for one last seat, exactly one gets it; the others get another game
    (which they then share, oldest first)."""
    h = harness(run=asyncio.to_thread)
    a, b = [await player(h, n) for n in "ab"]
    gid = await _quick(h, a)
    await _quick(h, b)
    racers = [await player(h, f"r{i}") for i in range(8)]
    h.store.fail_before_commit = lambda: time.sleep(0.02)  # all load before any commits
    got = await asyncio.gather(*(_quick(h, r) for r in racers))
    game = h.store.games[gid]
    assert game.status is GameStatus.RUNNING and game.seats_taken == 3
    winners = [r for r, g in zip(racers, got, strict=True) if g == gid]
    assert len(winners) == 1 and game.seat_of(winners[0]) == 2
    for r, g in zip(racers, got, strict=True):
        if r not in winners:
            assert g != gid and h.store.games[g].seat_of(r) is not None
    # no one sits twice, no game is over-full
    for each in h.store.games.values():
        assert each.seats_taken <= each.seat_count
        people = [o.player_id for o in each.seats if o is not None and o.player_id]
        assert len(people) == len(set(people))
    seated = [
        each.id
        for each in h.store.games.values()
        for o in each.seats
        if o and o.player_id in racers
    ]
    assert len(seated) == len(racers)


async def test_correspondence_quick_play_is_matched_apart_with_its_own_clock(h: Harness) -> None:
    """Issue #25: a correspondence player never lands in a live game, nor a
    live one in theirs; the game plays a day a turn."""
    from domain.game.options import CORRESPONDENCE_QUICK_PLAY, Pace

    a, b, c = [await player(h, n) for n in "abc"]
    live = await _quick(h, a, 3)
    slow = (
        await quick_play(
            h.deps, req(b, "quickPlay"), 3, Format.SINGLETON, None, Pace.CORRESPONDENCE
        )
    ).game_id
    assert slow != live
    options = h.store.games[slow].options
    assert options.pace is Pace.CORRESPONDENCE and h.store.games[live].options.pace is Pace.LIVE
    assert (options.turn_seconds, options.bank_seconds) == CORRESPONDENCE_QUICK_PLAY
    again = await quick_play(
        h.deps, req(c, "quickPlay"), 3, Format.SINGLETON, None, Pace.CORRESPONDENCE
    )
    assert again.game_id == slow and h.store.games[live].seats_taken == 1
