"""Rematch (issue #15 part 6, docs/decisions/0048): one new lobby game per
finished game, the same options, the old players' seats kept for them,
``RematchOffered`` on the old game's every audience, idempotent, players only."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from dataclasses import replace
from datetime import timedelta

import pytest

from domain.bots.strategy import Strategy
from domain.channels import game_channel
from domain.errors import DomainError, ErrorCode
from domain.game.options import AbilityTrigger, Format, GameOptions
from domain.log import LoggedEvent
from domain.records import GameStatus
from domain.rematch import RematchOffered
from domain.services.games import add_bot, join_game, leave_game, start_game
from domain.services.rematch import rematch
from domain.services.streams import game_events
from domain.verify import verify
from infra.game_export import export_from_json
from tests.fakes import Harness
from tests.usecases.conftest import play_first_legal, player, req, started_game
from tests.usecases.test_verify import exported

OPTIONS = GameOptions(Format.SEALED, AbilityTrigger.EVERY_CARD, refill_hands=False)


async def _finished(h: Harness) -> tuple[str, list[str]]:
    """A finished 4-seat game: three people at seats 0-2, a bot at seat 3."""
    gid, ids = await started_game(h, people=3, seats=4, options=OPTIONS, rat_seat=1)
    await play_first_legal(h, gid, dict(enumerate(ids)))
    return gid, ids


async def _refused(code: ErrorCode, coro: object) -> None:
    with pytest.raises(DomainError) as e:
        await coro  # type: ignore[misc]
    assert e.value.code is code, e.value.message


async def test_a_rematch_is_one_new_game_with_the_same_options_and_seats_kept(
    h: Harness,
) -> None:
    gid, ids = await _finished(h)
    old = h.store.games[gid]
    channels = [game_channel(gid, s) for s in (None, 0, 1, 2, 3)]
    async with AsyncExitStack() as stack:
        subs = [await stack.enter_async_context(h.bus.subscribe(c)) for c in channels]
        result = await rematch(h.deps, req(ids[1], "rematch"), gid)
        heard = [await asyncio.wait_for(anext(aiter(s)), 2) for s in subs]
    new = h.store.games[result.game_id]
    assert new.id != gid and new.status is GameStatus.LOBBY
    assert (new.seat_count, new.options, new.rat_choice) == (4, OPTIONS, 1)
    assert new.host == ids[1] and new.seat_of(ids[1]) == 1  # the caller, seated at once
    assert new.seats[3] is not None and new.seats[3].bot is Strategy.RANDOM  # the bot is back
    assert new.seats[0] is None and new.seats[2] is None
    assert new.reserved == [ids[0], None, ids[2], None]
    assert new.seed != old.seed and not new.practice and new.quick_play is None
    assert [e.type for e in result.events] == ["GameCreated", "SeatTaken", "BotSeated"]
    # announced on the old game's stream, for every audience
    for e in heard:
        assert isinstance(e, LoggedEvent) and e.event == RematchOffered(new.id)
        assert e.seq == old.last_seq + 1
    assert h.store.games[gid].rematch_id == new.id


async def test_a_second_rematch_returns_the_same_game(h: Harness) -> None:
    gid, ids = await _finished(h)
    first = await rematch(h.deps, req(ids[0]), gid)
    old_version = h.store.games[gid].version
    again = await rematch(h.deps, req(ids[2]), gid)
    assert again.game_id == first.game_id and again.events == ()
    assert h.store.games[gid].version == old_version  # nothing logged twice
    offers = [e for e in h.store.log(gid) if isinstance(e.event, RematchOffered)]
    assert len(offers) == 1
    assert sum(g.id != gid for g in h.store.games.values()) == 1


async def test_racing_rematches_make_one_game() -> None:
    import time

    from tests.fakes import harness

    h = harness(run=asyncio.to_thread)
    gid, ids = await _finished(h)
    h.store.fail_before_commit = lambda: time.sleep(0.02)
    got = await asyncio.gather(*(rematch(h.deps, req(p), gid) for p in ids))
    assert len({r.game_id for r in got}) == 1
    assert len([g for g in h.store.games.values() if g.id != gid]) == 1


async def test_a_non_player_or_an_unfinished_game_is_refused(h: Harness) -> None:
    gid, ids = await _finished(h)
    stranger = await player(h, "zed")
    await _refused(ErrorCode.FORBIDDEN, rematch(h.deps, req(stranger), gid))
    running, people = await started_game(h, people=3, seats=3)
    await _refused(ErrorCode.ILLEGAL_ACTION, rematch(h.deps, req(people[0]), running))
    await _refused(ErrorCode.NOT_FOUND, rematch(h.deps, req(ids[0]), "nope"))
    assert h.store.games[gid].rematch_id is None and len(h.store.games) == 2


async def test_kept_seats_first_come_first_served(h: Harness) -> None:
    gid, ids = await _finished(h)
    new = (await rematch(h.deps, req(ids[0]), gid)).game_id
    stranger = await player(h, "zed")
    # a stranger can't take a kept seat, nor can the host's bot
    await _refused(ErrorCode.ILLEGAL_ACTION, join_game(h.deps, req(stranger), new, 2))
    await _refused(ErrorCode.ILLEGAL_ACTION, join_game(h.deps, req(stranger), new, None))
    await _refused(ErrorCode.ILLEGAL_ACTION, add_bot(h.deps, req(ids[0]), new, Strategy.GREEDY, 1))
    # the invited player gets their old seat without naming it
    await join_game(h.deps, req(ids[2]), new, None)
    assert h.store.games[new].seat_of(ids[2]) == 2
    await join_game(h.deps, req(ids[1]), new, None)
    assert h.store.games[new].seat_of(ids[1]) == 1 and h.store.games[new].reserved == [None] * 4
    await start_game(h.deps, req(ids[0]), new)
    assert h.store.games[new].status is GameStatus.RUNNING


async def test_an_invited_player_may_sit_elsewhere_and_frees_their_seat(h: Harness) -> None:
    gid, ids = await _finished(h)
    new = (await rematch(h.deps, req(ids[0]), gid)).game_id
    # seat 1 is kept for ids[1]: ids[2] may not take it; ids[1] may name it
    await _refused(ErrorCode.ILLEGAL_ACTION, join_game(h.deps, req(ids[2]), new, 1))
    await join_game(h.deps, req(ids[1]), new, 1)
    stranger = await player(h, "zed")
    await _refused(ErrorCode.ILLEGAL_ACTION, join_game(h.deps, req(stranger), new, None))
    # the host gives up seat 0; ids[2] sits there instead of its kept seat 2,
    # which is then anyone's: the stranger gets it
    await leave_game(h.deps, req(ids[0]), new)
    await join_game(h.deps, req(ids[2]), new, 0)
    game = h.store.games[new]
    assert game.seat_of(ids[2]) == 0 and game.reserved == [None] * 4
    await join_game(h.deps, req(stranger), new, None)
    assert h.store.games[new].seat_of(stranger) == 2


async def test_the_old_game_still_verifies_and_replays_its_offer(h: Harness) -> None:
    gid, ids = await _finished(h)
    ended = h.store.games[gid].last_seq
    await rematch(h.deps, req(ids[0]), gid)
    _, log = export_from_json(await exported(h, gid))
    assert verify(log).events == ended + 1
    tail = [e async for _a, e in game_events(h.deps, gid, ids[1], ended - 1)]
    assert [e.type for e in tail] == ["GameEnded", "RematchOffered"]


async def _collect(stream: AsyncIterator[tuple[str, LoggedEvent]]) -> list[str]:
    return [e.type async for _a, e in stream]


async def test_a_stream_awaiting_the_rematch_ends_with_the_offer(h: Harness) -> None:
    """The offer reaches live streams that asked for it (``awaitRematch``);
    others end with ``GameEnded`` as before."""
    gid, ids = await started_game(h, people=3, seats=4, options=OPTIONS, rat_seat=1)
    awaiting = asyncio.create_task(_collect(game_events(h.deps, gid, ids[2], 0, True)))
    plain = asyncio.create_task(_collect(game_events(h.deps, gid, None, 0)))
    await play_first_legal(h, gid, dict(enumerate(ids)))
    assert (await asyncio.wait_for(plain, 2))[-1] == "GameEnded"
    await asyncio.sleep(0.05)
    assert not awaiting.done()  # still open after the end
    await rematch(h.deps, req(ids[0]), gid)
    heard = await asyncio.wait_for(awaiting, 2)
    assert heard[-2:] == ["GameEnded", "RematchOffered"]
    assert len(heard) == h.store.games[gid].last_seq


async def test_a_stream_awaiting_the_rematch_ends_once_the_wait_is_over(h: Harness) -> None:
    h.deps = replace(h.deps, rematch_wait=timedelta(seconds=0.2))
    gid, ids = await started_game(h, people=3, seats=4, options=OPTIONS, rat_seat=1)
    awaiting = asyncio.create_task(_collect(game_events(h.deps, gid, ids[0], 0, True)))
    await play_first_legal(h, gid, dict(enumerate(ids)))
    heard = await asyncio.wait_for(awaiting, 2)  # no offer: it ends by itself
    assert heard[-1] == "GameEnded"
    await rematch(h.deps, req(ids[0]), gid)  # a later offer: Game.rematchId, a new subscription
    assert h.store.games[gid].rematch_id is not None


async def test_a_finished_games_stream_awaits_its_offer_while_the_wait_lasts(
    h: Harness,
) -> None:
    gid, ids = await _finished(h)
    ended = h.store.games[gid].last_seq
    waiting = asyncio.create_task(_collect(game_events(h.deps, gid, ids[1], ended - 1, True)))
    at_the_end = asyncio.create_task(_collect(game_events(h.deps, gid, None, ended, True)))
    await asyncio.sleep(0.05)
    assert not waiting.done() and not at_the_end.done()
    await rematch(h.deps, req(ids[2]), gid)
    assert await asyncio.wait_for(waiting, 2) == ["GameEnded", "RematchOffered"]
    assert await asyncio.wait_for(at_the_end, 2) == ["RematchOffered"]
    # offered already: the tail through the offer, then the end, as before
    assert await _collect(game_events(h.deps, gid, None, ended, True)) == ["RematchOffered"]


async def test_a_finished_game_past_its_wait_ends_at_once(h: Harness) -> None:
    gid, _ = await _finished(h)
    ended = h.store.games[gid].last_seq
    h.clock.advance(h.deps.rematch_wait)
    stream = game_events(h.deps, gid, None, ended - 1, True)
    assert await asyncio.wait_for(_collect(stream), 2) == ["GameEnded"]


async def test_seats_bots_took_over_come_back_to_their_players(h: Harness) -> None:
    """A taken-over seat (0046) is still its player's: the rematch seats the
    caller there and keeps the others' seats for them; only a lobby bot's
    seat gets a bot again."""
    gid, ids = await started_game(h, people=3, seats=4, options=OPTIONS, rat_seat=1)
    for pid in (ids[0], ids[2]):  # they leave the running game: bots play their seats
        await leave_game(h.deps, req(pid), gid)
    await play_first_legal(h, gid, {1: ids[1]})  # one person plays on to the end
    old = h.store.games[gid]
    assert old.status is GameStatus.FINISHED
    assert [o is not None and o.is_bot for o in old.seats] == [True, False, True, True]
    new = h.store.games[(await rematch(h.deps, req(ids[2]), gid)).game_id]
    assert new.seat_of(ids[2]) == 2 and new.host == ids[2]
    assert new.reserved == [ids[0], ids[1], None, None]
    assert new.seats[0] is None and new.seats[1] is None
    assert new.seats[3] is not None and new.seats[3].bot is Strategy.RANDOM
