"""The abandonment sweeper (docs/decisions/0051): a full batch that ended
games sweeps again at once; otherwise the next round is an interval later.
The settings name the caps and the abandonment policy."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from pathlib import Path

import pytest

from domain.abandonment import AbandonPolicy
from domain.caps import Caps
from domain.clocks import WarnPolicy
from domain.services.abandonment import AbandonRound
from infra.abandon_sweeper import AbandonSweeper
from infra.bootstrap import build, caps_of
from infra.settings import Settings, SettingsError


def _after(last: AbandonRound, interval: float = 60.0) -> tuple[int, float]:
    sweeper = AbandonSweeper(lambda: asyncio.sleep(0, last), interval)

    async def one_round() -> tuple[int, float]:
        ended = await sweeper._round()
        return ended, sweeper.pause()

    return asyncio.run(one_round())


def test_a_full_batch_sweeps_again_at_once_and_others_wait_the_interval() -> None:
    assert _after(AbandonRound(100, True)) == (100, 0.0)
    assert _after(AbandonRound(3, False)) == (3, 60.0)
    assert _after(AbandonRound(0, False), 5.0) == (0, 5.0)


def test_the_settings_name_the_caps_and_the_abandonment_policy(tmp_path: Path) -> None:
    assert caps_of(Settings.from_env({})) == Caps(
        open_games=5, quick_play_waits=3, packs_per_day=10, pending_invitations=50
    )
    env = {
        "MMK_MAX_OPEN_GAMES": "0",
        "MMK_MAX_QUICK_PLAY_WAITS": "7",
        "MMK_BOOSTER_PACKS_PER_DAY": "2",
        "MMK_MAX_PENDING_INVITATIONS": "4",
        "MMK_NOTIFICATION_RETENTION": "7200",
        "MMK_DEADLINE_SOON_PERCENT": "20",
        "MMK_DEADLINE_SOON_LEAD": "600",
        "MMK_ABANDON_IDLE": "60",
        "MMK_ABANDON_EMPTY": "0",
        "MMK_ABANDON_SWEEP_INTERVAL": "5",
        "DATABASE_URL": f"sqlite:///{tmp_path / 'mmk.sqlite3'}",
    }
    c = build(Settings.from_env(env))
    try:
        assert c.deps.caps == Caps(0, 7, 2, 4)
        assert c.deps.notice_retention == timedelta(hours=2)
        assert c.deps.warn == WarnPolicy(0.2, timedelta(minutes=10))
        assert c.deps.abandon == AbandonPolicy(timedelta(seconds=60), timedelta(0))
        assert c.abandoned is not None and c.abandoned.pause() == 5.0
    finally:
        asyncio.run(c.aclose())
    for name, bad in (("MMK_ABANDON_IDLE", "0"), ("MMK_BOOSTER_PACKS_PER_DAY", "-1")):
        with pytest.raises(SettingsError, match=name):
            Settings.from_env({name: bad})
