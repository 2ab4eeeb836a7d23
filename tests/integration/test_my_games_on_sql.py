"""A player's games on SQLite and PostgreSQL (issue #24): the ``game_seats``
index, written with each game, lists what the fakes list
(tests/my_games_scenario.py), and each row says for its player what
``entries_of`` makes of the stored game (its time: the last change for that
player)."""

from __future__ import annotations

import asyncio
from dataclasses import replace

import sqlalchemy as sa
from alembic import command

from domain.clocks import WarnPolicy
from domain.my_games import SeatEntry, entries_of
from domain.services.deps import Deps
from infra.bus.memory import InProcessBus
from infra.db import migrate
from infra.db.engine import make_engine
from infra.db.reindex import reindex_game_seats
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
                assert entry.same_for_player(expected), (entry, expected)
                assert entry.updated_at <= expected.updated_at
                if entry.your_turn:  # ranked by its deadline, whenever written
                    assert entry.rank == expected.rank


async def test_0012_backfills_the_games_stored_before_and_reindex_completes_them(
    empty_db_url: str,
) -> None:
    """Down to 0011 and up again, the rows come from the games' columns
    alone: the same as ``entries_of`` but the outcome of a finished game,
    which ``mmk games reindex`` then adds; down again drops the table with
    the games in place."""
    engine = make_engine(empty_db_url)
    config = migrate.alembic_config(engine)
    try:
        migrate.upgrade(engine)
        uow = SqlUnitOfWorkFactory(engine)
        clock = FakeClock()
        deps = Deps(uow, asyncio.to_thread, InProcessBus(100_000), clock, FakeIds(), lambda _: None)
        # games as 0012 found them: no wait's warning (#25) in games.deadline
        deps = replace(deps, warn=WarnPolicy(fraction=0))
        built = await build(deps)
        command.downgrade(config, "0011")
        with engine.connect() as c:
            assert "game_seats" not in sa.inspect(c).get_table_names()
            assert c.execute(sa.text("SELECT count(*) FROM games")).scalar_one() == 4
        command.upgrade(config, "head")  # 0012 backfills; later revisions add columns

        def rows() -> dict[tuple[str, str], SeatEntry]:
            with uow() as u:
                return {
                    (e.player_id, e.game_id): e
                    for p in (built.ann, built.bob)
                    for e, _, _ in u.games.player_games(p, None, None, None, 100)
                }

        def expected() -> dict[tuple[str, str], SeatEntry]:
            with uow() as u:
                games = [
                    u.games.get(g) for g in (built.lobby, built.mine, built.theirs, built.done)
                ]
            return {
                (e.player_id, e.game_id): e
                for g in games
                if g is not None
                for e in entries_of(g)
                if e.player_id in (built.ann, built.bob)
            }

        backfilled, exact = rows(), expected()
        assert backfilled.keys() == exact.keys()
        for key, entry in exact.items():
            blank = replace(entry, score=None, place=None, won=None)
            assert backfilled[key] == blank, key
        assert exact[built.ann, built.done].score is not None
        assert reindex_game_seats(engine, batch=3) == 4
        assert rows() == exact
        await check(deps, built)
    finally:
        engine.dispose()
