"""Event streams: per-audience channels, backlog then live, no gap, no
duplicate, in order; gaps and bus resyncs are backfilled (docs/clients.md)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from domain.channels import game_channel
from domain.game.commands import SendMessage
from domain.game.engine import to_act
from domain.game.events import GameStarted, MessageDelivered, MessageSent
from domain.game.legal import legal_actions
from domain.log import LoggedEvent
from domain.ports import RESYNC
from domain.services.games import NewGame, create_game, join_game, leave_game, start_game
from domain.services.play import act
from domain.services.queries import read_events
from domain.services.streams import LiveTail, game_events
from tests.fakes import Harness
from tests.usecases.conftest import player, req, started_game


async def _collect(stream: Any, n: int) -> list[LoggedEvent]:
    """The next ``n`` events of a stream (without their audiences)."""
    out = []
    async for _audience, e in stream:
        out.append(e)
        if len(out) == n:
            break
    return out


async def _next(stream: Any) -> LoggedEvent:
    _audience, e = await anext(stream)
    assert isinstance(e, LoggedEvent)
    return e


def _started(events: list[LoggedEvent]) -> GameStarted:
    """The ``GameStarted`` event of a log, as its reader sees it."""
    started = next(e.event for e in events if e.type == "GameStarted")
    assert isinstance(started, GameStarted)
    return started


async def _play_some(h: Harness, gid: str, ids: list[str], moves: int) -> None:
    for _ in range(moves):
        game = h.store.games[gid]
        assert game.state is not None
        seat = to_act(game.state)
        assert seat is not None
        await act(h.deps, req(ids[seat]), gid, legal_actions(game.state, seat)[0])


async def test_a_seat_channel_carries_only_that_seats_projection(h: Harness) -> None:
    gid, ids = await started_game(h, people=4, seats=4)
    log = await read_events(h.deps, gid, None, 0, 100)
    for seat in range(4):
        mine = await read_events(h.deps, gid, ids[seat], 0, 100)
        started = _started(mine[0])
        public = _started(log[0])
        assert started.hand is not None and public.hand is None
        for other in range(4):
            if other != seat:
                theirs = _started((await read_events(h.deps, gid, ids[other], 0, 100))[0])
                assert theirs.hand is not None and not set(theirs.hand) & set(started.hand)


async def test_resume_after_seq_replays_then_streams_live_without_gap(h: Harness) -> None:
    gid, ids = await started_game(h, people=4, seats=4)
    resume_at = h.store.games[gid].last_seq - 2
    stream = game_events(h.deps, gid, ids[1], resume_at)
    first = await _next(stream)  # subscribed, backlog being replayed
    await _play_some(h, gid, ids, 5)
    total = h.store.games[gid].last_seq
    rest = await asyncio.wait_for(_collect(stream, total - resume_at - 1), 2)
    seqs = [first.seq] + [e.seq for e in rest]
    assert seqs == list(range(resume_at + 1, total + 1))
    await stream.aclose()


async def test_a_live_tail_hands_over_in_order_and_the_stream_yields_what_it_declines(
    h: Harness,
) -> None:
    gid, ids = await started_game(h, people=4, seats=4)
    last = h.store.games[gid].last_seq
    stream = game_events(h.deps, gid, ids[1], last, live_tails=True)
    tail = await anext(stream)  # at the end: live from here
    assert isinstance(tail, LiveTail) and tail.audience == game_channel(gid, 1)
    got: list[tuple[str, int]] = []

    def take(audience: str, e: LoggedEvent) -> bool:
        assert audience == game_channel(gid, 1)
        if e.seq % 3 == 0:
            return False  # declined: the stream yields it
        got.append(("taken", e.seq))
        return True

    handing = asyncio.ensure_future(tail.hand_over(take))
    await _play_some(h, gid, ids, 6)
    total = h.store.games[gid].last_seq
    await asyncio.wait_for(handing, 2)  # returned at the first declined event
    h.bus._offer(game_channel(gid, 1), RESYNC)  # ends a tail that took the last event
    while not got or got[-1][1] < total:
        sent = await asyncio.wait_for(anext(stream), 2)
        if isinstance(sent, LiveTail):
            await asyncio.wait_for(sent.hand_over(take), 2)
        else:
            got.append(("yielded", sent[1].seq))
    assert [seq for _how, seq in got] == list(range(last + 1, total + 1))
    assert {seq for how, seq in got if how == "yielded"} == {
        seq for seq in range(last + 1, total + 1) if seq % 3 == 0
    }
    await stream.aclose()


async def test_spectators_get_the_public_stream(h: Harness) -> None:
    gid, _ids = await started_game(h, people=4, seats=4)
    spectator = await player(h, "watcher")
    events = await _collect(game_events(h.deps, gid, spectator, 0), h.store.games[gid].last_seq)
    assert _started(events).hand is None
    anonymous = await _collect(game_events(h.deps, gid, None, 0), 1)
    assert anonymous[0].seq == 1


async def test_a_gap_in_live_messages_is_backfilled_from_the_log(h: Harness) -> None:
    gid, ids = await started_game(h, people=4, seats=4)
    last = h.store.games[gid].last_seq
    stream = game_events(h.deps, gid, None, last)
    pending = asyncio.ensure_future(_next(stream))
    await asyncio.sleep(0)
    # Two moves commit, but the bus loses the first move's messages.
    original = h.bus.publish
    lost = True

    async def lossy(messages: Any) -> None:
        nonlocal lost
        if lost:
            lost = False
            return
        await original(messages)

    h.bus.publish = lossy  # type: ignore[method-assign]
    await _play_some(h, gid, ids, 2)
    total = h.store.games[gid].last_seq
    first = await asyncio.wait_for(pending, 2)
    rest = await asyncio.wait_for(_collect(stream, total - last - 1), 2)
    assert [first.seq] + [e.seq for e in rest] == list(range(last + 1, total + 1))
    await stream.aclose()


async def test_a_resync_message_makes_the_stream_catch_up(h: Harness) -> None:
    gid, ids = await started_game(h, people=4, seats=4)
    last = h.store.games[gid].last_seq
    stream = game_events(h.deps, gid, None, last)
    pending = asyncio.ensure_future(_next(stream))
    await asyncio.sleep(0)
    original = h.bus.publish

    async def silent(messages: Any) -> None:
        return None

    h.bus.publish = silent  # type: ignore[method-assign]
    await _play_some(h, gid, ids, 1)
    h.bus.publish = original  # type: ignore[method-assign]
    h.bus._offer(game_channel(gid, None), RESYNC)  # the bus may have lost messages
    first = await asyncio.wait_for(pending, 2)
    assert first.seq == last + 1
    await stream.aclose()


async def test_a_stream_follows_its_subscriber_into_and_out_of_a_seat(h: Harness) -> None:
    """Seats change in the lobby: who subscribed at a seat and left it never
    gets the next occupant's hand; a spectator who sits down gets their own."""
    host, ann, bob, sam = [await player(h, n) for n in ("host", "ann", "bob", "sam")]
    gid = (await create_game(h.deps, req(host), NewGame(3))).game_id
    await join_game(h.deps, req(ann), gid, 1)
    ann_stream = game_events(h.deps, gid, ann, 0)
    sam_stream = game_events(h.deps, gid, sam, 0)
    ann_first = asyncio.ensure_future(_next(ann_stream))  # subscribed at seat 1
    sam_first = asyncio.ensure_future(_next(sam_stream))  # a spectator
    await asyncio.sleep(0)
    await leave_game(h.deps, req(ann), gid)
    await join_game(h.deps, req(bob), gid, 1)
    await join_game(h.deps, req(sam), gid, 2)
    await start_game(h.deps, req(host), gid)
    total = h.store.games[gid].last_seq
    for first, stream, who in ((ann_first, ann_stream, ann), (sam_first, sam_stream, sam)):
        got = [await asyncio.wait_for(first, 2)]
        got += await asyncio.wait_for(_collect(stream, total - 1), 2)
        await stream.aclose()
        assert got == (await read_events(h.deps, gid, who, 0, 100))[0]
        started = _started(got)
        assert (started.hand is not None) is (who == sam), started


async def test_resuming_past_the_last_seq_is_refused(h: Harness) -> None:

    from domain.errors import DomainError, ErrorCode

    gid, ids = await started_game(h, people=4, seats=4)
    last = h.store.games[gid].last_seq
    with pytest.raises(DomainError) as e:
        await anext(game_events(h.deps, gid, ids[0], last + 1))
    assert e.value.code is ErrorCode.BAD_INPUT
    at_end = game_events(h.deps, gid, ids[0], last)  # at the end: waits for what comes
    pending = asyncio.ensure_future(anext(at_end))
    await asyncio.sleep(0.01)
    assert not pending.done()
    pending.cancel()


_MessageEvents = (MessageSent, MessageDelivered)


def _texts(events: list[LoggedEvent]) -> list[str | None]:
    return [e.event.text if isinstance(e.event, _MessageEvents) else None for e in events]


async def test_a_messages_text_reaches_its_readers_live_and_from_the_log(h: Harness) -> None:
    gid, ids = await started_game(h, people=4, seats=4, rat_seat=0)
    last = h.store.games[gid].last_seq
    live = game_events(h.deps, gid, ids[1], last)
    pending = asyncio.ensure_future(_collect(live, 3))
    await asyncio.sleep(0)
    await act(h.deps, req(ids[0]), gid, SendMessage(1, "hello"))  # the Rat's: delivered at once
    heard = await asyncio.wait_for(pending, 2)
    await live.aclose()
    assert [e.type for e in heard] == ["MessageSent", "MessageDelivered", "ActionRequired"]
    assert _texts(heard) == [None, "hello", None]  # seat 1 reads it once delivered (R5.2)
    logged, _ = await read_events(h.deps, gid, ids[1], last, 100)
    backlog = game_events(h.deps, gid, ids[1], last)
    replayed = await asyncio.wait_for(_collect(backlog, 3), 2)
    await backlog.aclose()
    assert _texts(logged) == _texts(replayed) == [None, "hello", None]
    assert logged == replayed == heard
    others, _ = await read_events(h.deps, gid, ids[2], last, 100)
    assert _texts(others) == [None, None, None]


async def _play_to_end(h: Harness, gid: str, ids: list[str]) -> None:
    for _ in range(5_000):
        game = h.store.games[gid]
        assert game.state is not None
        seat = to_act(game.state)
        if seat is None:
            return
        await act(h.deps, req(ids[seat]), gid, legal_actions(game.state, seat)[0])
    raise AssertionError("the game did not end")


async def _all(stream: Any) -> list[LoggedEvent]:
    """Everything a stream yields until it ends by itself."""
    return [e async for _audience, e in stream]


async def test_a_stream_ends_after_game_ended(h: Harness) -> None:
    gid, ids = await started_game(h, people=3, seats=3)
    seat_stream = game_events(h.deps, gid, ids[1], 0)
    public_stream = game_events(h.deps, gid, None, 0)
    streams = [asyncio.ensure_future(_all(s)) for s in (seat_stream, public_stream)]
    await asyncio.sleep(0.01)  # both went live
    await _play_to_end(h, gid, ids)
    last = h.store.games[gid].last_seq
    for done in streams:
        events = await asyncio.wait_for(done, 2)
        assert [e.seq for e in events] == list(range(1, last + 1))
        assert events[-1].type == "GameEnded"
    assert h.bus.subscriber_count(game_channel(gid, 1)) == 0  # the bus was let go
    assert h.bus.subscriber_count(game_channel(gid, None)) == 0


async def test_a_finished_game_replays_its_tail_then_ends(h: Harness) -> None:
    gid, ids = await started_game(h, people=3, seats=3)
    await _play_to_end(h, gid, ids)
    last = h.store.games[gid].last_seq
    for who in (ids[0], None):
        tail = await asyncio.wait_for(_all(game_events(h.deps, gid, who, last - 3)), 2)
        assert [e.seq for e in tail] == [last - 2, last - 1, last]
        assert tail[-1].type == "GameEnded"
        assert await asyncio.wait_for(_all(game_events(h.deps, gid, who, last)), 2) == []
