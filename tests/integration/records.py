"""Records for the repository tests; every id is fresh."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta, timezone

from domain.bots.strategy import Strategy
from domain.game.boosters import BoosterPack
from domain.game.cards import Card, House
from domain.game.commands import PlayCard
from domain.game.events import CardGiven, MessageSent
from domain.game.options import AbilityTrigger, Format, GameOptions
from domain.game.setup import new_game
from domain.game.state import MessageStatus
from domain.log import LoggedEvent, SeatCommand
from domain.ports import UnitOfWorkFactory
from domain.records import (
    BoosterRecord,
    GameRecord,
    GameStatus,
    IdempotencyRecord,
    MutationResult,
    Occupant,
    Player,
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
        salt="secret-salt",
        practice=True,
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


def event(game_id: str, seq: int, at: datetime = T0) -> LoggedEvent:
    """A logged event with projections of their own for some seats: odd seqs
    a card given from seat 1 to seat 2, with a cause; even seqs a message from
    seat 0 to seat 3 (text beyond ASCII) that only they read, without one."""
    if seq % 2:
        gift = CardGiven(1, 2, House.STINKY, Card("sleepy-3"))
        return LoggedEvent(game_id, seq, at, gift, SeatCommand(1, PlayCard(Card("stinky-7"))))
    text = "Muffin ✨ «é» 猫"
    message = MessageSent(f"m{seq}", 1, 0, 3, MessageStatus.PENDING, text, readers=(0, 3))
    return LoggedEvent(game_id, seq, at, message)


def as_seen(e: LoggedEvent, seat: int | None) -> LoggedEvent:
    """What the log reads back of ``e`` for ``seat``: its projection, with its cause."""
    return LoggedEvent(e.game_id, e.seq, e.at, e.event.seen_by(seat), e.cause)


def idempotency(
    player_id: str, key: str = "key-1", expires: datetime = T0 + timedelta(days=7)
) -> IdempotencyRecord:
    result = MutationResult("g", 2, (event("g", 2).seen_by(3),))
    return IdempotencyRecord(player_id, key, "f" * 64, result, T0, expires)


def booster(player_id: str, game_id: str | None = None, at: datetime = T0) -> BoosterRecord:
    commons = tuple(Card(f"sleepy-{i}") for i in range(1, 16))
    pack = BoosterPack(commons, (Card("crazy-30"), Card("crazy-31")), House.HUNGRY)
    return BoosterRecord(new_id(), player_id, pack, at, game_id)


def committed_game(uow: UnitOfWorkFactory) -> GameRecord:
    """A started game of a new host, committed through ``uow``."""
    host = player()
    game = started_game(host.id)
    with uow() as u:
        u.players.add(host)
        u.games.add(game.clone())
        u.commit()
    return game
