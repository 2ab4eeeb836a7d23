"""The presence heartbeat (infra/presence/keeper.py, docs/decisions/0047):
each beat refreshes the entries and reviews the games live here, and those
left lately until a grace later; then their marks are forgotten."""

from __future__ import annotations

import asyncio
import logging

import pytest
from sqlalchemy.exc import OperationalError

from domain.ports import PresenceUnavailable
from domain.presence import Mark
from infra.presence.keeper import PresenceKeeper
from infra.presence.memory import InProcessPresence


class Counted(InProcessPresence):
    def __init__(self) -> None:
        super().__init__()
        self.beats = 0

    async def heartbeat(self) -> None:
        self.beats += 1


async def test_beats_review_live_games_then_lingering_ones_then_forget_them() -> None:
    presence = Counted()
    reviewed: list[str] = []

    async def review(game_id: str) -> None:
        reviewed.append(game_id)

    keeper = PresenceKeeper(presence, review, interval=0.01, grace=0.05)
    await presence.join("g1", "ann")
    await presence.join("g2", "bob")
    await presence.swap("g1", "ann", None, Mark(True))
    await keeper.beat()
    assert sorted(reviewed) == ["g1", "g2"] and presence.beats == 1
    await presence.leave("g1", "ann")
    reviewed.clear()
    await keeper.beat()
    assert sorted(reviewed) == ["g1", "g2"]  # g1 lingers: its grace runs
    await asyncio.sleep(0.1)  # past grace + 2 intervals
    reviewed.clear()
    await keeper.beat()
    assert reviewed == ["g2"]
    assert (await presence.seen("g1"))[1] == {}  # forgotten: nobody is there


async def test_a_failing_review_does_not_stop_the_others() -> None:
    presence = Counted()
    reviewed: list[str] = []

    async def review(game_id: str) -> None:
        if game_id == "bad":
            raise RuntimeError("boom")
        reviewed.append(game_id)

    keeper = PresenceKeeper(presence, review, interval=0.01, grace=1)
    await presence.join("bad", "ann")
    await presence.join("good", "bob")
    await keeper.beat()
    assert reviewed == ["good"]


async def test_the_database_away_is_a_warning_line_and_a_bug_a_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    presence = Counted()

    async def review(game_id: str) -> None:
        if game_id == "nodb":
            raise OperationalError("SELECT", {}, Exception("connection refused"), True)
        raise RuntimeError("boom")

    keeper = PresenceKeeper(presence, review, interval=0.01, grace=1)
    for game_id in ("nodb", "bug"):
        await presence.join(game_id, "ann")
    with caplog.at_level(logging.WARNING, "infra.presence.keeper"):
        await keeper.beat()
    logged = {g: r for r in caplog.records for g in ("nodb", "bug") if f" {g}" in r.getMessage()}
    assert logged["nodb"].levelno == logging.WARNING and logged["nodb"].exc_info is None
    assert logged["bug"].levelno == logging.ERROR and logged["bug"].exc_info is not None


async def test_the_store_away_is_one_line_a_beat_and_the_reviews_wait(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Every review needs the store: the first that finds it away puts the
    others off to the next beat, with one warning line (no traceback)."""
    presence, tried = Counted(), []

    async def review(game_id: str) -> None:
        tried.append(game_id)
        raise PresenceUnavailable("Error 111 connecting to the presence store")

    keeper = PresenceKeeper(presence, review, interval=0.01, grace=1)
    for game_id in ("g1", "g2", "g3"):
        await presence.join(game_id, "ann")
    with caplog.at_level(logging.WARNING, "infra.presence.keeper"):
        await keeper.beat()
    assert len(tried) == 1
    (line,) = caplog.records
    assert line.levelno == logging.WARNING and line.exc_info is None
    assert "3 game review(s) put off" in line.getMessage()


async def test_the_keeper_beats_by_itself_until_closed() -> None:
    presence = Counted()
    keeper = PresenceKeeper(presence, lambda _g: asyncio.sleep(0), interval=0.01, grace=1)
    keeper.start()
    await asyncio.sleep(0.1)
    await keeper.aclose()
    beats = presence.beats
    assert beats >= 2
    await asyncio.sleep(0.05)
    assert presence.beats == beats
