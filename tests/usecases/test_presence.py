"""Seat presence (issue #15 part 4, docs/decisions/0047) on fakes and a fake
clock: connect, disconnect after the grace only, a reconnect within the
grace announces nothing, several subscriptions of one player, spectators
and bots, one announcement when several instances review at once."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import replace
from datetime import timedelta

import pytest

from domain.channels import presence_channel
from domain.clocks import SeatTakenOver
from domain.errors import NotFound
from domain.game.options import GameOptions
from domain.presence import PresenceChange
from domain.records import GameRecord
from domain.services.games import leave_game
from domain.services.seat_presence import attending, connected_seats, review, seated_players
from domain.services.streams import game_events, presence_events
from infra.presence.memory import InProcessPresence
from tests.fakes import Harness
from tests.usecases.conftest import expire, player, req, started_game

GRACE = timedelta(seconds=15)


@pytest.fixture
def hp(h: Harness) -> Harness:
    """The harness with in-process presence (the embedded default)."""
    h.deps = replace(h.deps, presence=InProcessPresence(), presence_grace=GRACE)
    return h


class Heard:
    """What the game's presence channel carried."""

    def __init__(self) -> None:
        self.changes: list[PresenceChange] = []

    def take(self) -> list[tuple[int, bool]]:
        out = [(c.seat, c.connected) for c in self.changes]
        self.changes.clear()
        return out


@asynccontextmanager
async def listening(h: Harness, gid: str) -> AsyncIterator[Heard]:
    heard = Heard()
    async with h.bus.subscribe(presence_channel(gid)) as sub:
        task = asyncio.create_task(_gather(sub, heard))
        try:
            yield heard
        finally:
            task.cancel()


async def _gather(sub: AsyncIterator[object], heard: Heard) -> None:
    async for msg in sub:
        if isinstance(msg, PresenceChange):
            heard.changes.append(msg)


async def settle() -> None:
    """Let the listener take what was published (the bus is in-process)."""
    for _ in range(3):
        await asyncio.sleep(0)


async def connected(h: Harness, gid: str) -> list[bool | None]:
    game = h.store.games[gid]
    players = [o.player_id if o else None for o in game.seats]
    bots = [o.bot if o else None for o in game.seats]
    return await connected_seats(h.deps, gid, players, bots)


def present(h: Harness, gid: str, pid: str | None) -> AbstractAsyncContextManager[None]:
    return attending(h.deps, gid, pid)


async def test_connect_is_announced_at_once(hp: Harness) -> None:
    gid, ids = await started_game(hp, people=2, seats=3)
    async with listening(hp, gid) as heard:
        assert await connected(hp, gid) == [False, False, True]  # seat 2: a bot
        async with present(hp, gid, ids[1]):
            await settle()
            assert heard.take() == [(1, True)]
            assert await connected(hp, gid) == [False, True, True]


async def test_disconnect_is_announced_once_after_the_grace(hp: Harness) -> None:
    gid, ids = await started_game(hp, people=2, seats=3)
    async with listening(hp, gid) as heard:
        async with present(hp, gid, ids[0]):
            pass
        await settle()
        assert heard.take() == [(0, True)]
        hp.clock.advance(GRACE - timedelta(seconds=1))
        assert await review(hp.deps, gid) == []
        assert await connected(hp, gid) == [True, False, True]  # still within the grace
        hp.clock.advance(timedelta(seconds=1))
        assert await review(hp.deps, gid) == [PresenceChange(gid, 0, False)]
        assert await review(hp.deps, gid) == []
        hp.clock.advance(GRACE * 10)
        assert await review(hp.deps, gid) == []
        await settle()
        assert heard.take() == [(0, False)]
        assert await connected(hp, gid) == [False, False, True]


class CountingReads:
    """``CommittedReads`` over the fakes, counting the games read."""

    def __init__(self, h: Harness) -> None:
        self.h, self.games = h, 0

    async def game(self, game_id: str) -> GameRecord | None:
        self.games += 1
        found = self.h.store.games.get(game_id)
        return None if found is None else found.clone()

    async def session(self, token_hash: str) -> None:
        raise AssertionError("no sign-in here")


async def test_a_review_that_moves_no_mark_reads_no_game(hp: Harness) -> None:
    """The keeper reviews every live game on every beat: one whose marks
    agree with who is online costs no read of its seats (issue #28)."""
    gid, ids = await started_game(hp, people=2, seats=3)
    reads = CountingReads(hp)
    hp.deps = replace(hp.deps, committed=reads)
    async with present(hp, gid, ids[0]):
        assert reads.games == 1  # the join moved a mark: the seats were read
        assert await review(hp.deps, gid) == []
        assert reads.games == 1
    assert reads.games == 2  # the leave starts the grace: a mark moves
    assert await review(hp.deps, gid) == []  # within the grace: nothing moves
    assert reads.games == 2
    hp.clock.advance(GRACE)
    assert await review(hp.deps, gid) == [PresenceChange(gid, 0, False)]
    assert reads.games == 3


async def test_a_reconnect_within_the_grace_announces_nothing(hp: Harness) -> None:
    gid, ids = await started_game(hp, people=2, seats=3)
    async with present(hp, gid, ids[1]):
        pass
    async with listening(hp, gid) as heard:
        hp.clock.advance(GRACE / 2)
        async with present(hp, gid, ids[1]):  # the phone is back on another network
            hp.clock.advance(GRACE * 2)
            assert await review(hp.deps, gid) == []
        hp.clock.advance(GRACE / 2)
        assert await review(hp.deps, gid) == []
        await settle()
        assert heard.take() == []
        assert await connected(hp, gid) == [False, True, True]


async def test_a_return_after_the_grace_is_announced(hp: Harness) -> None:
    gid, ids = await started_game(hp, people=2, seats=3)
    async with present(hp, gid, ids[1]):
        pass
    hp.clock.advance(GRACE)
    await review(hp.deps, gid)
    async with listening(hp, gid) as heard, present(hp, gid, ids[1]):
        await settle()
        assert heard.take() == [(1, True)]


async def test_several_subscriptions_of_one_player(hp: Harness) -> None:
    gid, ids = await started_game(hp, people=2, seats=3)
    async with listening(hp, gid) as heard:
        async with present(hp, gid, ids[0]):
            async with present(hp, gid, ids[0]):
                pass
            hp.clock.advance(GRACE * 2)  # one of two left: still connected
            assert await review(hp.deps, gid) == []
            assert await connected(hp, gid) == [True, False, True]
        hp.clock.advance(GRACE)
        assert await review(hp.deps, gid) == [PresenceChange(gid, 0, False)]
        await settle()
        assert heard.take() == [(0, True), (0, False)]


async def test_spectators_do_not_count(hp: Harness) -> None:
    gid, _ = await started_game(hp, people=2, seats=3)
    outsider = await player(hp, "eve")
    async with listening(hp, gid) as heard:
        async with present(hp, gid, outsider), present(hp, gid, None):
            assert await connected(hp, gid) == [False, False, True]
        hp.clock.advance(GRACE * 2)
        assert await review(hp.deps, gid) == []
        await settle()
        assert heard.take() == []


async def test_instances_reviewing_at_once_announce_once(hp: Harness) -> None:
    """The mark is swapped by one reviewer only (the shared store's CAS)."""
    gid, ids = await started_game(hp, people=3, seats=3)
    for pid in ids:
        async with present(hp, gid, pid):
            pass
    hp.clock.advance(GRACE)
    done = await asyncio.gather(*(review(hp.deps, gid) for _ in range(5)))
    announced = sorted((c.seat, c.connected) for changes in done for c in changes)
    assert announced == [(0, False), (1, False), (2, False)]


async def test_a_game_event_stream_of_a_seated_player_is_presence(hp: Harness) -> None:
    gid, ids = await started_game(hp, people=2, seats=3)
    stream = game_events(hp.deps, gid, ids[1], 0)
    await anext(stream)  # subscribed
    assert await connected(hp, gid) == [False, True, True]
    await stream.aclose()
    hp.clock.advance(GRACE)
    assert await review(hp.deps, gid) == [PresenceChange(gid, 1, False)]


async def test_the_presence_stream_gives_the_state_then_changes(hp: Harness) -> None:
    gid, ids = await started_game(hp, people=2, seats=3)
    async with present(hp, gid, ids[0]):
        watcher = await player(hp, "watcher")
        stream = presence_events(hp.deps, gid, watcher)
        assert await anext(stream) == PresenceChange(gid, 0, True)
        assert await anext(stream) == PresenceChange(gid, 1, False)  # bots are not listed
        async with present(hp, gid, ids[1]):
            assert await asyncio.wait_for(anext(stream), 1) == PresenceChange(gid, 1, True)
    hp.clock.advance(GRACE)
    await review(hp.deps, gid)
    changes = {await asyncio.wait_for(anext(stream), 1) for _ in range(2)}
    assert changes == {PresenceChange(gid, 0, False), PresenceChange(gid, 1, False)}
    await stream.aclose()


async def test_the_presence_stream_of_an_unknown_game_is_refused(hp: Harness) -> None:
    with pytest.raises(NotFound):
        await anext(presence_events(hp.deps, "nope", None))


async def test_presence_is_not_in_the_log(hp: Harness) -> None:
    gid, ids = await started_game(hp, people=2, seats=3)
    before = hp.store.games[gid].last_seq, len(hp.store.log(gid))
    async with present(hp, gid, ids[0]):
        pass
    hp.clock.advance(GRACE)
    await review(hp.deps, gid)
    assert (hp.store.games[gid].last_seq, len(hp.store.log(gid))) == before


async def test_without_presence_nothing_is_tracked(h: Harness) -> None:
    gid, ids = await started_game(h, people=2, seats=3)
    async with attending(h.deps, gid, ids[0]):
        assert await review(h.deps, gid) == []
    assert await seated_players(h.deps, gid) == (ids[0], ids[1], None)


async def test_a_seat_a_bot_took_over_shows_its_players_presence(hp: Harness) -> None:
    """[decision] 0047: presence is the player's, also while a bot plays
    their seat (taken over, or left): the others see whether the player is
    there to reclaim it, not the bot's constant presence."""
    gid, ids = await started_game(
        hp, people=3, seats=3, rat_seat=0, options=GameOptions(turn_seconds=10)
    )
    async with present(hp, gid, ids[2]):
        await leave_game(hp.deps, req(ids[1]), gid)  # seat 1: a bot for good
        while not any(
            isinstance(e.event, SeatTakenOver) and not e.event.left for e in hp.store.log(gid)
        ):
            await hp.drain()  # the bots' turns
            await expire(hp, gid)
        taken = [e.event.seat for e in hp.store.log(gid) if isinstance(e.event, SeatTakenOver)]
        assert taken == [1, 0] or taken == [1, 2], taken
        seats = hp.store.games[gid].seats
        assert all(o is not None and o.is_bot and o.player_id for o in (seats[s] for s in taken))
        assert await connected(hp, gid) == [False, False, True]  # seat 2's player watches
        async with present(hp, gid, ids[taken[1]]), present(hp, gid, ids[1]):
            expected = [True, True, True]
            assert await connected(hp, gid) == expected
            stream = presence_events(hp.deps, gid, ids[2])
            assert [(await anext(stream)).connected for _ in range(3)] == expected
            await stream.aclose()
