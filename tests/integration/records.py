"""Records for the repository tests; every id is fresh."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta, timezone

from domain.bots.strategy import Strategy
from domain.game.boosters import BoosterPack
from domain.game.cards import House
from domain.game.options import AbilityTrigger, Format, GameOptions
from domain.game.setup import new_game
from domain.records import (
    BoosterRecord,
    GameRecord,
    GameStatus,
    IdempotencyRecord,
    Occupant,
    Player,
    StoredEvent,
)

T0 = datetime(2026, 11, 20, 12, 0, 0, 123456, tzinfo=UTC)
PLUS_TWO = timezone(timedelta(hours=2))


def new_id() -> str:
    return uuid.uuid4().hex


def player(at: datetime = T0) -> Player:
    return Player(new_id(), "Muffin ✨", at)


def lobby_game(
    host: str, at: datetime = T0, *, status: GameStatus = GameStatus.LOBBY
) -> GameRecord:
    return GameRecord(
        id=new_id(),
        host=host,
        seat_count=4,
        options=GameOptions(Format.SEALED, AbilityTrigger.EVERY_CARD, refill_hands=False),
        seed="secret-seed",
        rat_choice=2,
        seats=[Occupant(host), None, Occupant(bot=Strategy.GREEDY), None],
        created_at=at,
        updated_at=at + timedelta(seconds=1),
        status=status,
        version=3,
        last_seq=5,
    )


def started_game(host: str, at: datetime = T0) -> GameRecord:
    """A running game with a real dealt state (``new_game(4, 'seed')``)."""
    return GameRecord(
        id=new_id(),
        host=host,
        seat_count=4,
        options=GameOptions(),
        seed="seed",
        rat_choice=None,
        seats=[Occupant(host), Occupant(bot=Strategy.RANDOM), Occupant(bot=Strategy.GREEDY), None],
        created_at=at.astimezone(PLUS_TWO),  # stored in UTC, equal when read back
        updated_at=at,
        status=GameStatus.RUNNING,
        state=new_game(4, "seed").state,
        version=7,
        last_seq=2,
    )


def event(game_id: str, seq: int, at: datetime = T0) -> StoredEvent:
    return StoredEvent(
        game_id,
        seq,
        "CardPlayed",
        {"seat": 1, "card": "sleepy-3", "nested": {"list": [1, 2.5, None, True]}, "txt": "é"},
        {0: {"hand": ["a", "b"]}, 3: {"hand": []}},
        at,
        {"seat": 1, "command": {"kind": "PlayCard", "card": "sleepy-3"}} if seq % 2 else None,
    )


def idempotency(player_id: str, key: str = "key-1") -> IdempotencyRecord:
    return IdempotencyRecord(player_id, key, "f" * 64, {"gameId": "g", "version": 2}, T0)


def booster(player_id: str, game_id: str | None = None, at: datetime = T0) -> BoosterRecord:
    pack = BoosterPack(
        tuple(f"sleepy-{i}" for i in range(15)), ("crazy-1", "crazy-2"), House.HUNGRY
    )
    return BoosterRecord(new_id(), player_id, pack, at, game_id)
