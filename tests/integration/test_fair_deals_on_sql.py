"""Fair deals on the SQL adapters (docs/decisions/0040): a bots-only game
with the real CSPRNG seed and salt, exported by ``mmk export`` from the
database and checked by ``mmk verify``; games stored before migration 0003
keep working (empty salt, not practice)."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
import sqlalchemy as sa

from api.cli import main
from domain.bots.strategy import Strategy
from domain.fairness import commitment
from domain.game.options import GameOptions
from domain.records import GameStatus
from domain.services.bots import drive_bots
from domain.services.deps import Deps
from domain.services.games import NewGame, add_bot, create_game, start_game
from domain.services.players import create_player
from domain.services.transaction import Request
from infra.bus.memory import InProcessBus
from infra.db import migrate
from infra.db.engine import make_engine
from infra.db.mappers import options_to_json
from infra.db.uow import SqlUnitOfWorkFactory
from infra.ids import RandomIds
from tests.fakes import FakeClock


async def bots_game(uow: SqlUnitOfWorkFactory, seats: int, *, play: bool = True) -> str:
    deps = Deps(
        uow=uow,
        run=asyncio.to_thread,
        bus=InProcessBus(queue_limit=100_000),
        clock=FakeClock(),
        ids=RandomIds(),
        schedule_bots=lambda game_id: None,
    )
    host = (await create_player(deps, "host")).player.id
    game_id = (
        await create_game(deps, Request(host, "c", {}), NewGame(seats, take_seat=False))
    ).game_id
    for i in range(seats):
        strategy = Strategy.RANDOM if i % 2 else Strategy.GREEDY
        await add_bot(deps, Request(host, "b", {}), game_id, strategy, None)
    await start_game(deps, Request(host, "s", {}), game_id)
    if play:
        await drive_bots(deps, game_id)
    return game_id


async def test_mmk_export_then_mmk_verify_a_game_from_the_database(
    uow: SqlUnitOfWorkFactory,
    db_url: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    game_id = await bots_game(uow, 5)
    with uow() as u:
        game = u.games.get(game_id)
    assert game is not None and game.status is GameStatus.FINISHED
    assert len(game.seed) == 32 and len(game.salt) == 64  # 128 and 256 bits, hex
    path = tmp_path / "export.json"
    assert main(["export", game_id, "--database", db_url, "-o", str(path)]) == 0
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert doc["events"][-1]["public"]["seed"] == game.seed
    assert main(["verify", str(path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"ok: game {game_id}") and commitment(game.seed, game.salt) in out


async def test_mmk_export_refuses_a_running_game(
    uow: SqlUnitOfWorkFactory, db_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    game_id = await bots_game(uow, 3, play=False)
    assert main(["export", game_id, "--database", db_url]) == 1
    captured = capsys.readouterr()
    assert "has not ended" in captured.err and captured.out == ""


def test_games_stored_before_0003_get_an_empty_salt_and_are_not_practice(
    empty_db_url: str,
) -> None:
    migrate.upgrade(empty_db_url, "0002")
    engine = make_engine(empty_db_url)
    at = datetime(2026, 11, 30, tzinfo=UTC)
    try:
        with engine.begin() as conn:
            conn.execute(
                sa.text(
                    "INSERT INTO players (id, name, token_hash, created_at) "
                    "VALUES ('p1', 'old', 'h', :at)"
                ),
                {"at": at},
            )
            conn.execute(
                sa.text(
                    "INSERT INTO games (id, host, status, seat_count, options, seed, rat_choice, "
                    "seats, state, version, last_seq, created_at, updated_at) VALUES ('g1', 'p1', "
                    "'lobby', 3, :options, 'old-seed', NULL, :seats, NULL, 1, 1, :at, :at)"
                ),
                {
                    "options": json.dumps(options_to_json(GameOptions())),
                    "seats": "[null, null, null]",
                    "at": at,
                },
            )
        migrate.upgrade(empty_db_url)
        with SqlUnitOfWorkFactory(engine)() as u:
            game = u.games.get("g1")
            page = u.games.page(None, None, 10)
    finally:
        engine.dispose()
    assert game is not None
    assert (game.seed, game.salt, game.practice) == ("old-seed", "", False)
    assert [s.practice for s in page.items] == [False]
