"""Lobby use cases: create, join, leave, bots, start (R2.1, R3.4, R4)."""

from __future__ import annotations

import pytest

from domain.bots.strategy import Strategy
from domain.channels import LOBBY
from domain.errors import DomainError, ErrorCode
from domain.game.events import GameStarted
from domain.game.options import Format, GameOptions
from domain.records import GameStatus, LobbyUpdate
from domain.services.games import (
    NewGame,
    add_bot,
    create_game,
    join_game,
    leave_game,
    start_game,
)
from tests.fakes import Harness
from tests.usecases.conftest import player, req


async def _refused(code: ErrorCode, coro: object) -> None:
    with pytest.raises(DomainError) as e:
        await coro  # type: ignore[misc]
    assert e.value.code is code, e.value.message


async def test_create_game_seats_the_host_and_logs_events(h: Harness) -> None:
    host = await player(h)
    async with h.bus.subscribe(LOBBY) as lobby:
        result = await create_game(h.deps, req(host), NewGame(4))
        note = await anext(aiter(lobby))
    game = h.store.games[result.game_id]
    assert game.seat_of(host) == 0 and game.status is GameStatus.LOBBY
    assert [e.type for e in result.events] == ["GameCreated", "SeatTaken"]
    assert [e.seq for e in result.events] == [1, 2]
    assert note == LobbyUpdate(game.id, GameStatus.LOBBY, seat_count=4, seats_taken=1, version=1)


@pytest.mark.parametrize(("seats", "rat"), [(2, None), (9, None), (4, 4), (4, -1)])
async def test_create_game_refuses_bad_seat_counts(h: Harness, seats: int, rat: int | None) -> None:
    host = await player(h)
    await _refused(
        ErrorCode.BAD_INPUT, create_game(h.deps, req(host), NewGame(seats, rat_seat=rat))
    )
    assert not h.store.games


async def test_join_leave_and_full_game(h: Harness) -> None:
    a, b, c, d = [await player(h, n) for n in "abcd"]
    gid = (await create_game(h.deps, req(a), NewGame(3))).game_id
    await join_game(h.deps, req(b), gid, 2)
    await _refused(ErrorCode.ILLEGAL_ACTION, join_game(h.deps, req(c), gid, 2))  # taken
    await _refused(ErrorCode.ILLEGAL_ACTION, join_game(h.deps, req(b), gid, None))  # twice
    await _refused(ErrorCode.BAD_INPUT, join_game(h.deps, req(c), gid, 3))
    await join_game(h.deps, req(c), gid, None)
    assert h.store.games[gid].seat_of(c) == 1
    await _refused(ErrorCode.ILLEGAL_ACTION, join_game(h.deps, req(d), gid, None))  # full
    await leave_game(h.deps, req(b), gid)
    assert h.store.games[gid].seats[2] is None
    await _refused(ErrorCode.ILLEGAL_ACTION, leave_game(h.deps, req(b), gid))


async def test_only_the_host_seats_bots_and_starts(h: Harness) -> None:
    a, b = await player(h, "a"), await player(h, "b")
    gid = (await create_game(h.deps, req(a), NewGame(3))).game_id
    await join_game(h.deps, req(b), gid, None)
    await _refused(ErrorCode.FORBIDDEN, add_bot(h.deps, req(b), gid, Strategy.RANDOM, None))
    await _refused(ErrorCode.ILLEGAL_ACTION, start_game(h.deps, req(a), gid))  # a seat is empty
    await add_bot(h.deps, req(a), gid, Strategy.GREEDY, None)
    await _refused(ErrorCode.FORBIDDEN, start_game(h.deps, req(b), gid))
    version = h.store.games[gid].version
    result = await start_game(h.deps, req(a), gid)
    game = h.store.games[gid]
    assert game.status is GameStatus.RUNNING and game.version == version + 1
    started = result.events[0].event
    assert isinstance(started, GameStarted)
    assert started.hand is not None and started.hands == ()  # the caller's own projection
    assert game.state is not None and sorted(started.hand) == sorted(game.state.seats[0].hand)
    await _refused(ErrorCode.ILLEGAL_ACTION, start_game(h.deps, req(a), gid))
    await _refused(ErrorCode.ILLEGAL_ACTION, join_game(h.deps, req(await player(h)), gid, None))


async def test_unknown_game_is_not_found(h: Harness) -> None:
    a = await player(h)
    await _refused(ErrorCode.NOT_FOUND, join_game(h.deps, req(a), "nope", None))


async def test_r3_4_former_sealed_without_collections_is_refused_and_nothing_changes(
    h: Harness,
) -> None:
    a = await player(h)
    gid = (await create_game(h.deps, req(a), NewGame(3, GameOptions(Format.FORMER_SEALED)))).game_id
    for _ in range(2):
        await add_bot(h.deps, req(a), gid, Strategy.RANDOM, None)
    before = h.store.games[gid]
    with pytest.raises(DomainError) as e:
        await start_game(h.deps, req(a), gid)
    assert e.value.code is ErrorCode.BAD_INPUT and "30 missing" in e.value.message
    after = h.store.games[gid]
    assert after.status is GameStatus.LOBBY and after.version == before.version


async def test_r3_2_sealed_start_adds_each_persons_pack_to_their_collection(h: Harness) -> None:
    a = await player(h)
    gid = (await create_game(h.deps, req(a), NewGame(3, GameOptions(Format.SEALED)))).game_id
    for _ in range(2):
        await add_bot(h.deps, req(a), gid, Strategy.RANDOM, None)
    await start_game(h.deps, req(a), gid)
    packs = [r for r in h.store.boosters if r.player_id == a]
    assert len(packs) == 1 and packs[0].game_id == gid
    assert len(h.store.boosters) == 1  # bots keep no collection


async def test_r3_3_former_sealed_deck_comes_from_collections(h: Harness) -> None:
    from domain.services.boosters import open_booster_pack

    a = await player(h)
    for _ in range(2):
        await open_booster_pack(h.deps, req(a, "openBoosterPack"))
    gid = (await create_game(h.deps, req(a), NewGame(3, GameOptions(Format.FORMER_SEALED)))).game_id
    for _ in range(2):
        await add_bot(h.deps, req(a), gid, Strategy.RANDOM, None)
    await start_game(h.deps, req(a), gid)
    state = h.store.games[gid].state
    assert state is not None
    dealt = sum(len(s.hand) for s in state.seats) + len(state.rat_deck)
    assert dealt == 2 * 17
