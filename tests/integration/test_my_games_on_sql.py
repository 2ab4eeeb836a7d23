"""A player's games on SQLite and PostgreSQL (issue #24): the ``game_seats``
index, written with each game, lists what the fakes derive from the games
themselves (tests/my_games_scenario.py), and each row is what
``entries_of`` makes of the stored game."""

from __future__ import annotations

import asyncio

from domain.my_games import entries_of
from domain.services.deps import Deps
from infra.bus.memory import InProcessBus
from infra.db.uow import SqlUnitOfWorkFactory
from tests.fakes import FakeClock, FakeIds
from tests.my_games_scenario import build, check


async def test_the_index_lists_a_players_games_as_the_games_say(
    uow: SqlUnitOfWorkFactory,
) -> None:
    deps = Deps(
        uow, asyncio.to_thread, InProcessBus(100_000), FakeClock(), FakeIds(), lambda _: None
    )
    built = await build(deps)
    await check(deps, built)
    for player in (built.ann, built.bob):
        with uow() as u:
            listed = u.games.player_games(player, None, None, None, 100)
            for entry, summary, seats in listed:
                game = u.games.get(entry.game_id)
                assert game is not None and seats == game.seats
                assert summary.id == game.id and summary.status is game.status
                (expected,) = [e for e in entries_of(game) if e.player_id == player]
                assert entry == expected
