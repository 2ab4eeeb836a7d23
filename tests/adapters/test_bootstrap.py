"""The composition root wires real adapters; bots play in the background."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from domain.bots.strategy import Strategy
from domain.records import GameStatus
from domain.services.games import NewGame, add_bot, create_game, start_game
from domain.services.players import authenticate, create_player
from domain.services.queries import get_game
from domain.services.transaction import Request
from infra.bootstrap import build
from infra.settings import Settings, SettingsError


async def test_a_bots_only_game_runs_in_the_background_to_the_end(tmp_path: Path) -> None:
    c = build(Settings(database_url=f"sqlite:///{tmp_path / 'db' / 'mmk.sqlite3'}"))
    try:
        new = await create_player(c.deps, "host")
        assert (await authenticate(c.deps, new.token)).id == new.player.id
        host = new.player.id
        gid = (
            await create_game(c.deps, Request(host, "c", {}), NewGame(5, take_seat=False))
        ).game_id
        for i in range(5):
            await add_bot(c.deps, Request(host, "b", {}), gid, list(Strategy)[i % 2], None)
        started = await start_game(c.deps, Request(host, "s", {}), gid)
        assert started.events[0].type == "GameStarted"  # returned before the bots moved
        await asyncio.wait_for(c.bots.idle(), 30)
        snap = await get_game(c.deps, gid, None)
        assert snap.summary.status is GameStatus.FINISHED
        assert snap.public is not None and snap.public.outcome is not None
    finally:
        await c.aclose()


def test_settings_come_from_the_environment() -> None:
    s = Settings.from_env(
        {
            "DATABASE_URL": "postgresql+psycopg://db/x",
            "REDIS_URL": "redis://r",
            "MMK_PORT": "9000",
            "MMK_GRAPHIQL": "false",
            "MMK_EVENT_LOOP": "uvloop",
            "MMK_ACCESS_LOG": "Errors",
            "MMK_KEEP_ALIVE_TIMEOUT": "120",
        }
    )
    assert s.keep_alive_timeout == 120 and Settings().keep_alive_timeout == 75
    assert (s.database_url, s.redis_url, s.port, s.graphiql, s.event_loop, s.access_log) == (
        "postgresql+psycopg://db/x",
        "redis://r",
        9000,
        False,
        "uvloop",
        "errors",
    )
    assert Settings.from_env({}) == Settings()
    assert Settings().event_loop == "asyncio"


def test_connection_limits_come_from_the_environment() -> None:
    """Every limit of docs/decisions/0044 is a setting with a default."""
    defaults = Settings()
    assert (
        defaults.header_timeout,
        defaults.body_timeout,
        defaults.ws_init_timeout,
        defaults.max_connections,
        defaults.max_connections_per_ip,
        defaults.max_ws_per_ip,
        defaults.ws_message_rate,
        defaults.connection_log_interval,
    ) == (10, 30, 10, 0, 100, 50, 50, 10)
    s = Settings.from_env(
        {
            "MMK_HEADER_TIMEOUT": "5",
            "MMK_BODY_TIMEOUT": "20",
            "MMK_WS_INIT_TIMEOUT": "3",
            "MMK_MAX_CONNECTIONS": "4000",
            "MMK_MAX_CONNECTIONS_PER_IP": "0",
            "MMK_MAX_WS_PER_IP": "8",
            "MMK_WS_MESSAGE_RATE": "0",
            "MMK_CONNECTION_LOG_INTERVAL": "60",
        }
    )
    assert (
        s.header_timeout,
        s.body_timeout,
        s.ws_init_timeout,
        s.max_connections,
        s.max_connections_per_ip,
        s.max_ws_per_ip,
        s.ws_message_rate,
        s.connection_log_interval,
    ) == (5, 20, 3, 4000, 0, 8, 0, 60)


@pytest.mark.parametrize(
    "env",
    [
        {"MMK_PORT": "x"},
        {"MMK_PORT": "0"},
        {"MMK_GRAPHIQL": "maybe"},
        {"MMK_LOG_LEVEL": "loud"},
        {"MMK_EVENT_LOOP": "trio"},
        {"MMK_ACCESS_LOG": "some"},
        {"MMK_KEEP_ALIVE_TIMEOUT": "0"},
        {"MMK_HEADER_TIMEOUT": "0"},
        {"MMK_BODY_TIMEOUT": "soon"},
        {"MMK_WS_INIT_TIMEOUT": "0"},
        {"MMK_MAX_CONNECTIONS": "-1"},
        {"MMK_MAX_CONNECTIONS_PER_IP": "-1"},
        {"MMK_MAX_WS_PER_IP": "many"},
        {"MMK_WS_MESSAGE_RATE": "-5"},
        {"MMK_CONNECTION_LOG_INTERVAL": "0"},
        {"MMK_SECRET_KEY": "too-short"},
        {"MMK_PLAYER_KEY_WINDOW": "59"},
        {"MMK_IDEMPOTENCY_RETENTION": "60"},
        {"MMK_PRESENCE_GRACE": "-1"},
        {"MMK_PRESENCE_HEARTBEAT": "0"},
        {"MMK_CHANNEL_PREFIX": "mmk{a}:"},  # a hash tag of its own (0068)
        {"MMK_CHANNEL_PREFIX": "mmk}"},
    ],
)
def test_bad_settings_are_refused_clearly(env: dict[str, str]) -> None:
    with pytest.raises(SettingsError):
        Settings.from_env(env)


@pytest.mark.parametrize(
    ("url", "checkpoints"),
    [
        ("sqlite:///{dir}/mmk.sqlite3", True),
        ("sqlite://", False),
        ("sqlite:///file:mem-{dir.name}?mode=memory&cache=shared&uri=true", False),
    ],
)
async def test_only_a_database_file_gets_a_checkpointer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, url: str, checkpoints: bool
) -> None:
    """An in-memory SQLite database, however it is named, has no WAL: no
    checkpoint thread, and no stray file named after it."""
    monkeypatch.chdir(tmp_path)
    c = build(Settings(database_url=url.format(dir=tmp_path)))
    try:
        assert (c.checkpointer is not None) is checkpoints
    finally:
        await c.aclose()
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith("file:")]
