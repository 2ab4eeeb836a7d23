"""Featured games' order (domain/featured.py, docs/decisions/0067): live
games only, most people first, then rated, then the latest change, the id
last, so the order is total."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

from domain.featured import LIVE_FOR, LiveGame, featured
from domain.game.options import GameOptions
from domain.records import GameStatus, GameSummary

NOW = datetime(2026, 12, 6, 12, tzinfo=UTC)
BASE = GameSummary("g", "host", GameStatus.RUNNING, 4, 4, GameOptions(), 9, NOW)


def live(game_id: str, people: int, ago: float, *, rated: bool = False) -> LiveGame:
    summary = replace(BASE, id=game_id, rated=rated)
    return LiveGame(summary, people, NOW - timedelta(seconds=ago))


def test_busiest_first_then_rated_then_latest_then_id() -> None:
    games = [
        live("a", 1, 1),
        live("b", 3, 200),
        live("c", 2, 5),
        live("d", 2, 5, rated=True),
        live("e", 2, 1),
        live("f", 2, 1),
    ]
    order = [g.id for g in featured(games, NOW, 10)]
    assert order == ["b", "d", "e", "f", "c", "a"]
    assert [g.id for g in featured(reversed(games), NOW, 10)] == order  # input order is moot
    assert [g.id for g in featured(games, NOW, 2)] == ["b", "d"]


def test_a_game_idle_longer_than_live_for_is_not_featured() -> None:
    edge = LIVE_FOR.total_seconds()
    games = [live("idle", 8, edge + 1), live("edge", 1, edge)]
    assert [g.id for g in featured(games, NOW, 10)] == ["edge"]
