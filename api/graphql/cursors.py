"""Opaque pagination cursors: a time and an id (the lobby listing's games,
a collection's packs)."""

from __future__ import annotations

import base64
from datetime import UTC, datetime

from domain.errors import BadRequest
from domain.records import GameSummary


def encode_cursor(g: GameSummary) -> str:
    return cursor_of(g.created_at, g.id)


def cursor_of(at: datetime, item_id: str) -> str:
    raw = f"{at.isoformat()}|{item_id}"
    return base64.urlsafe_b64encode(raw.encode()).decode()


def decode_cursor(cursor: str) -> tuple[datetime, str]:
    """The cursor's time, in UTC, and game id; a time with no UTC equivalent
    (0001-01-01 at +05:00) is refused too, like any other malformed cursor."""
    try:
        raw = base64.urlsafe_b64decode(cursor.encode()).decode()
        at, _, game_id = raw.partition("|")
        when = datetime.fromisoformat(at)
        if not game_id or when.tzinfo is None:
            raise ValueError(raw)
        return when.astimezone(UTC), game_id
    except (ValueError, UnicodeError, OverflowError) as e:
        raise BadRequest("not a cursor of this list") from e


def rank_cursor(rank: str, item_id: str) -> str:
    """A cursor of a list ordered by a rank string (a player's games)."""
    return base64.urlsafe_b64encode(f"{rank}|{item_id}".encode()).decode()


def decode_rank_cursor(cursor: str) -> tuple[str, str]:
    try:
        raw = base64.urlsafe_b64decode(cursor.encode()).decode()
    except (ValueError, UnicodeError) as e:
        raise BadRequest("not a cursor of this list") from e
    rank, _, item_id = raw.partition("|")
    if not rank.isdigit() or not item_id:
        raise BadRequest("not a cursor of this list")
    return rank, item_id
