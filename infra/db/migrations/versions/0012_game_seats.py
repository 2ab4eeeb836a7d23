"""A player's games (issue #24): ``game_seats``, one row per person's seat,
derived from the game each time it is stored, ordered for "my games" by
``rank`` (domain/my_games.py).

The games already stored get their rows here, from their columns alone (no
state is decoded): who sits where, the status, the dates, the format; the
seat a timed running game's clock waits for (``clock.waiting``) is the one
whose turn it is. An untimed game's turn (its clock waits for nobody) and
the outcomes of finished games are left out: run ``mmk games reindex`` once
after this revision, which writes every game's rows from the game itself.

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-06
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0012"
down_revision: str | Sequence[str] | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Written out here (not imported from infra.db or domain) so this revision
# never changes.
JSON = sa.JSON().with_variant(postgresql.JSON(), "postgresql")
TIMESTAMP = sa.DateTime(timezone=True)
SPAN = 10**19
NO_DEADLINE = "9" * 19


def _micros(at: datetime) -> int:
    aware = at if at.tzinfo is not None else at.replace(tzinfo=UTC)
    return int(aware.timestamp()) * 1_000_000 + aware.microsecond


def _rank(mine: bool, deadline: datetime | None, updated_at: datetime) -> str:
    if mine:
        return "0" + (NO_DEADLINE if deadline is None else f"{_micros(deadline):019d}")
    return "1" + f"{SPAN - _micros(updated_at):019d}"


def upgrade() -> None:
    game_seats = op.create_table(
        "game_seats",
        sa.Column(
            "player_id",
            sa.String(),
            sa.ForeignKey("players.id", name="fk_game_seats_player"),
            primary_key=True,
        ),
        sa.Column(
            "game_id",
            sa.String(),
            sa.ForeignKey("games.id", name="fk_game_seats_game"),
            primary_key=True,
        ),
        sa.Column("seat", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("your_turn", sa.Boolean(), nullable=False),
        sa.Column("deadline", TIMESTAMP, nullable=True),
        sa.Column("rank", sa.String(20), nullable=False),
        sa.Column("format", sa.String(16), nullable=False),
        sa.Column("seat_count", sa.Integer(), nullable=False),
        sa.Column("created_at", TIMESTAMP, nullable=False),
        sa.Column("updated_at", TIMESTAMP, nullable=False),
        sa.Column("score", sa.Integer(), nullable=True),
        sa.Column("place", sa.Integer(), nullable=True),
        sa.Column("won", sa.Boolean(), nullable=True),
    )
    op.create_index("ix_game_seats_rank", "game_seats", ["player_id", "rank", "game_id"])
    op.create_index(
        "ix_game_seats_status_rank", "game_seats", ["player_id", "status", "rank", "game_id"]
    )
    op.create_index("ix_game_seats_game_id", "game_seats", ["game_id"])
    games = sa.table(
        "games",
        sa.column("id", sa.String()),
        sa.column("status", sa.String()),
        sa.column("seat_count", sa.Integer()),
        sa.column("options", JSON),
        sa.column("seats", JSON),
        sa.column("clock", JSON),
        sa.column("deadline", TIMESTAMP),
        sa.column("created_at", TIMESTAMP),
        sa.column("updated_at", TIMESTAMP),
    )
    conn = op.get_bind()
    rows: list[dict[str, Any]] = []
    for g in conn.execute(sa.select(games)).mappings():
        waiting = (g["clock"] or {}).get("waiting") if g["status"] == "running" else None
        seated: set[str] = set()
        for seat, occupant in enumerate(g["seats"] or []):
            if not occupant or not occupant.get("playerId") or occupant["playerId"] in seated:
                continue  # a person's first seat only, as the server keeps it
            seated.add(occupant["playerId"])
            mine = waiting == seat and not occupant.get("bot")
            deadline = g["deadline"] if mine else None
            rows.append(
                {
                    "player_id": occupant["playerId"],
                    "game_id": g["id"],
                    "seat": seat,
                    "status": g["status"],
                    "your_turn": mine,
                    "deadline": deadline,
                    "rank": _rank(mine, deadline, g["updated_at"]),
                    "format": (g["options"] or {}).get("format", "singleton"),
                    "seat_count": g["seat_count"],
                    "created_at": g["created_at"],
                    "updated_at": g["updated_at"],
                    "score": None,
                    "place": None,
                    "won": None,
                }
            )
    for at in range(0, len(rows), 1000):
        op.bulk_insert(game_seats, rows[at : at + 1000])


def downgrade() -> None:
    op.drop_index("ix_game_seats_game_id", table_name="game_seats")
    op.drop_index("ix_game_seats_status_rank", table_name="game_seats")
    op.drop_index("ix_game_seats_rank", table_name="game_seats")
    op.drop_table("game_seats")
