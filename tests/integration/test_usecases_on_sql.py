"""The real use cases on the SQL adapters: a whole game played by bots through
the same transactions as people (lobby, start, every move), then replayed."""

from __future__ import annotations

import asyncio

from domain.bots.strategy import Strategy
from domain.records import GameStatus
from domain.services.bots import drive_bots
from domain.services.deps import Deps
from domain.services.games import NewGame, add_bot, create_game, start_game
from domain.services.players import create_player
from domain.services.transaction import Request
from infra.bus.memory import InProcessBus
from infra.db.uow import SqlUnitOfWorkFactory
from tests.fakes import FakeClock, FakeIds


async def test_a_bot_game_is_played_to_the_end(uow: SqlUnitOfWorkFactory) -> None:
    deps = Deps(
        uow=uow,
        run=asyncio.to_thread,
        bus=InProcessBus(queue_limit=100_000),
        clock=FakeClock(),
        ids=FakeIds(),
        schedule_bots=lambda game_id: None,
    )
    host = (await create_player(deps, "host")).player.id
    spec = NewGame(4, take_seat=False)
    game_id = (await create_game(deps, Request(host, "create", {}), spec)).game_id
    for _ in range(4):
        await add_bot(deps, Request(host, "addBot", {}), game_id, Strategy.GREEDY, None)
    await start_game(deps, Request(host, "start", {}), game_id)
    moves = await drive_bots(deps, game_id)

    with uow() as u:
        game = u.games.get(game_id)
        events = u.events.read(game_id, 0, 100_000, None)
    assert game is not None and game.state is not None
    assert game.status is GameStatus.FINISHED and game.state.outcome is not None
    assert moves > 20
    assert [e.seq for e in events] == list(range(1, game.last_seq + 1))
    assert events[0].type == "GameCreated" and events[-1].type == "GameEnded"
