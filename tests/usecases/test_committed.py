"""The work after a commit (publishing, waking the bots) uses the game as the
change committed it, even when another change has taken the game since
(another request, another instance): that change has its own copy."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable
from typing import TypeVar

from domain import lobby
from domain.bots.strategy import Strategy
from domain.channels import LOBBY, game_channel
from domain.log import LoggedEvent
from domain.records import GameRecord, GameStatus, LobbyUpdate
from domain.services.bot_turn import bot_to_act
from domain.services.bots import choose
from domain.services.engine_change import engine_change
from domain.services.games import NewGame, add_bot, create_game, join_game, start_game
from domain.services.transaction import Change
from tests.fakes import FakeUnitOfWork, Harness
from tests.usecases.conftest import player, req

T = TypeVar("T")


def _commit_elsewhere(h: Harness, gid: str, decide: Callable[[GameRecord], Change]) -> None:
    """Another instance commits a change to the game (on the same store)."""
    with FakeUnitOfWork(h.store) as uow:
        game = uow.games.get(gid)
        assert game is not None
        version = game.version
        change = decide(game)
        uow.events.append(game.record(change.events, change.cause, h.deps.clock.now()))
        uow.games.save(game, version)
        uow.commit()


def _then(h: Harness, elsewhere: Callable[[], None]) -> Harness:
    """The harness whose next transaction is followed, after its commit and
    before its publishing, by ``elsewhere``."""
    pending = [elsewhere]

    async def run(fn: Callable[[], T]) -> T:
        result = fn()
        if pending:
            pending.pop()()
        return result

    return dataclasses.replace(h, deps=dataclasses.replace(h.deps, run=run))


async def test_the_lobby_hears_of_the_change_as_committed(h: Harness) -> None:
    host, ann, bob = [await player(h, n) for n in ("host", "ann", "bob")]
    gid = (await create_game(h.deps, req(host), NewGame(4))).game_id

    def bob_joins() -> None:
        _commit_elsewhere(h, gid, lambda g: Change(lobby.join(g, bob, "bob", None)))

    async with h.bus.subscribe(LOBBY) as notes, h.bus.subscribe(game_channel(gid, None)) as log:
        result = await join_game(_then(h, bob_joins).deps, req(ann), gid, None)
        note = await asyncio.wait_for(anext(aiter(notes)), 1)
        public = await asyncio.wait_for(anext(aiter(log)), 1)
    stored = h.store.games[gid]
    assert (stored.seats_taken, stored.version) == (3, result.version + 1), "bob came next"
    assert note == LobbyUpdate(gid, GameStatus.LOBBY, 4, 2, result.version), "ann's change"
    assert isinstance(public, LoggedEvent) and public == result.events[0]
    assert isinstance(public.event, lobby.SeatTaken) and public.event.player_id == ann


async def test_the_bots_are_woken_by_the_game_as_committed(h: Harness) -> None:
    """The start leaves a bot (the Rat) to lead; another instance drives the
    bots until the person must act before this one publishes: the bots are
    woken all the same (they find nothing to do)."""
    host = await player(h, "host")
    gid = (await create_game(h.deps, req(host), NewGame(3, rat_seat=1))).game_id
    for _ in range(2):
        await add_bot(h.deps, req(host), gid, Strategy.GREEDY, None)

    def bot_move(game: GameRecord) -> Change:
        seat = bot_to_act(game)
        assert seat is not None
        return engine_change(game, seat, choose(game, seat))

    def the_bots_move() -> None:
        while bot_to_act(h.store.games[gid]) is not None:
            _commit_elsewhere(h, gid, bot_move)

    async with h.bus.subscribe(LOBBY) as notes:
        result = await start_game(_then(h, the_bots_move).deps, req(host), gid)
        note = await asyncio.wait_for(anext(aiter(notes)), 1)
    stored = h.store.games[gid]
    assert bot_to_act(stored) is None and stored.version > result.version, "the bots moved"
    assert h.scheduled == [gid]
    assert note == LobbyUpdate(gid, GameStatus.RUNNING, 3, 3, result.version)
    assert await h.drain() == 0
