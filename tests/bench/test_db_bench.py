"""Storage speed, run by ``make bench``: a move's storage work (get the game,
append 3 events, conditional save, commit) on SQLite and PostgreSQL, and
whole bot games through the real use cases on SQLite.

Target (issue: persistence): >= 1,500 moves/s on SQLite through the use
cases. The storage loop is asserted; the use-case figure, most of which is
domain work (state encode/decode), is printed.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from domain.bots.strategy import Strategy
from domain.game.options import GameOptions
from domain.game.setup import new_game
from domain.records import GameRecord, GameStatus, Occupant, Player, StoredEvent
from domain.services.bots import drive_bots
from domain.services.deps import Deps
from infra.bus.memory import InProcessBus
from infra.db.engine import make_engine
from infra.db.migrate import upgrade
from infra.db.uow import SqlUnitOfWorkFactory
from tests.fakes import FakeClock, FakeIds, run_inline
from tests.integration.databases import fresh_postgres, sqlite_url

MOVES = 3_000
NOW = datetime.now(UTC)
PUBLIC = {"seat": 1, "card": "sleepy-3", "faceDown": False, "trick": 3}


@pytest.fixture(params=["sqlite", "postgresql"])
def factory(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[SqlUnitOfWorkFactory]:
    if request.param == "sqlite":
        url = sqlite_url(tmp_path)
        upgrade(url)
        engine = make_engine(url)
        yield SqlUnitOfWorkFactory(engine)
        engine.dispose()
        return
    with fresh_postgres(request.getfixturevalue("database_url")) as url:
        upgrade(url)
        engine = make_engine(url)
        yield SqlUnitOfWorkFactory(engine)
        engine.dispose()


def _new_game(uow: SqlUnitOfWorkFactory, seats: list[Occupant | None]) -> tuple[str, str]:
    host, game_id = uuid.uuid4().hex, uuid.uuid4().hex
    game = GameRecord(
        game_id, host, 4, GameOptions(), "seed", None, seats, NOW, NOW, GameStatus.RUNNING,
        new_game(4, "seed").state,
    )  # fmt: skip
    with uow() as u:
        u.players.add(Player(host, "bench", NOW), host)
        u.games.add(game)
        u.commit()
    return host, game_id


def _move(uow: SqlUnitOfWorkFactory, game_id: str) -> None:
    with uow() as u:
        game = u.games.get(game_id)
        assert game is not None
        read_version = game.version
        events = [
            StoredEvent(game_id, game.last_seq + k, "CardPlayed", PUBLIC, {0: PUBLIC}, NOW)
            for k in (1, 2, 3)
        ]
        game.last_seq += 3
        game.version += 1
        u.events.append(events)
        u.games.save(game, read_version)
        u.commit()


def test_storage_loop(factory: SqlUnitOfWorkFactory) -> None:
    _, game_id = _new_game(factory, [None] * 4)
    backend = factory.engine.dialect.name
    moves = MOVES if backend == "sqlite" else MOVES // 5  # PostgreSQL waits on fsync
    start = time.perf_counter()
    for _ in range(moves):
        _move(factory, game_id)
    rate = moves / (time.perf_counter() - start)
    print(f"\n{backend}: get + append 3 events + save + commit: {rate:,.0f} moves/s")
    if backend == "sqlite":
        assert rate >= 1_500, f"{rate:.0f} moves/s of storage work on SQLite, target 1,500"


def test_bot_games_through_the_use_cases(tmp_path: Path) -> None:
    url = sqlite_url(tmp_path)
    upgrade(url)
    engine = make_engine(url)
    uow = SqlUnitOfWorkFactory(engine)
    deps = Deps(uow, run_inline, InProcessBus(), FakeClock(), FakeIds(), lambda _: None)
    moves, elapsed = 0, 0.0
    for _ in range(20):
        _, game_id = _new_game(uow, [Occupant(bot=Strategy.RANDOM)] * 4)
        start = time.perf_counter()
        moves += asyncio.run(drive_bots(deps, game_id))
        elapsed += time.perf_counter() - start
    engine.dispose()
    print(f"\nSQLite, RANDOM bot games through the use cases: {moves / elapsed:,.0f} moves/s")
