"""The server secret and the idempotency records' lifetimes, as the
composition root wires them (docs/decisions/0041)."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from pathlib import Path

import sqlalchemy as sa

from domain.services.players import create_player
from infra.bootstrap import build
from infra.db.tables import server_secrets
from infra.record_sweeper import RecordSweeper
from infra.settings import Settings

SECRET = "s" * 40
KEY = "device-0123456789abcdef"


def test_settings_name_the_secret_and_the_lifetimes_and_hide_the_secret() -> None:
    s = Settings.from_env(
        {
            "MMK_SECRET_KEY": SECRET,
            "MMK_PLAYER_KEY_WINDOW": "3600",
            "MMK_IDEMPOTENCY_RETENTION": "7200",
        }
    )
    assert (s.secret_key, s.player_key_window, s.idempotency_retention) == (SECRET, 3600, 7200)
    assert SECRET not in repr(s)
    d = Settings()
    assert (d.secret_key, d.player_key_window, d.idempotency_retention) == (
        None,
        86_400,
        7 * 86_400,
    )


async def test_without_a_setting_the_secret_is_the_databases_and_survives_restarts(
    tmp_path: Path,
) -> None:
    """The embedded default: the secret migration 0004 generated, so a
    restarted server still replays createPlayer."""
    url = f"sqlite:///{tmp_path}/mmk.sqlite3"
    first = build(Settings(database_url=url))
    try:
        new = await create_player(first.deps, "ann", KEY)
        secret = first.deps.keys.secret
        with first.engine.connect() as conn:
            stored = conn.execute(sa.select(server_secrets.c.value)).scalars().all()
        assert len(stored) == 1 and len(stored[0]) == 64 and secret == stored[0].encode()
    finally:
        await first.aclose()
    again = build(Settings(database_url=url))
    try:
        assert again.deps.keys.secret == secret
        assert await create_player(again.deps, "ann", KEY) == new
    finally:
        await again.aclose()


async def test_mmk_secret_key_and_the_lifetimes_reach_the_use_cases(tmp_path: Path) -> None:
    settings = Settings(
        database_url=f"sqlite:///{tmp_path}/mmk.sqlite3",
        secret_key=SECRET,
        player_key_window=600,
        idempotency_retention=3600,
    )
    c = build(settings)
    try:
        keys = c.deps.keys
        assert keys.secret == SECRET.encode()
        assert (keys.replay_window, keys.retention) == (timedelta(minutes=10), timedelta(hours=1))
    finally:
        await c.aclose()


async def test_the_record_sweeper_runs_at_start_then_periodically_and_survives_errors() -> None:
    calls: list[int] = []

    async def sweep() -> int:
        calls.append(1)
        if len(calls) == 2:
            raise RuntimeError("boom")
        return 1

    sweeper = RecordSweeper(sweep, interval=0.01)
    sweeper.start()
    for _ in range(200):
        if len(calls) >= 3:
            break
        await asyncio.sleep(0.01)
    await sweeper.aclose()
    assert len(calls) >= 3
