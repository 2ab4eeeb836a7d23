"""Initial schema: players, games, game_events, idempotency_keys, booster_packs.

Revision ID: 0001
Revises:
Create Date: 2026-11-20
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0001"
down_revision: str | Sequence[str] | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Written out here (not imported from infra.db) so this revision never changes.
JSON = sa.JSON().with_variant(postgresql.JSON(), "postgresql")
TIMESTAMP = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "players",
        sa.Column("id", sa.String(), nullable=False),
        sa.Column("name", sa.String(), nullable=False),
        sa.Column("token_hash", sa.String(), nullable=False),
        sa.Column("created_at", TIMESTAMP, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_players"),
    )
    op.create_index("ix_players_token_hash", "players", ["token_hash"], unique=True)

    op.create_table(
        "games",
        sa.Column("id", sa.String(), nullable=False),
        sa.Column("host", sa.String(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("seat_count", sa.Integer(), nullable=False),
        sa.Column("options", JSON, nullable=False),
        sa.Column("seed", sa.String(), nullable=False),
        sa.Column("rat_choice", sa.Integer(), nullable=True),
        sa.Column("seats", JSON, nullable=False),
        sa.Column("state", JSON, nullable=True),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("last_seq", sa.Integer(), nullable=False),
        sa.Column("created_at", TIMESTAMP, nullable=False),
        sa.Column("updated_at", TIMESTAMP, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_games"),
        sa.ForeignKeyConstraint(["host"], ["players.id"], name="fk_games_host"),
        sa.CheckConstraint("status IN ('lobby', 'running', 'finished')", name="ck_games_status"),
    )
    op.create_index("ix_games_created_at", "games", ["created_at", "id"])
    op.create_index("ix_games_status", "games", ["status", "created_at", "id"])

    op.create_table(
        "game_events",
        sa.Column("game_id", sa.String(), nullable=False),
        sa.Column("seq", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("type", sa.String(), nullable=False),
        sa.Column("public", JSON, nullable=False),
        sa.Column("private", JSON, nullable=False),
        sa.Column("created_at", TIMESTAMP, nullable=False),
        sa.Column("cause", JSON, nullable=True),
        sa.PrimaryKeyConstraint("game_id", "seq", name="pk_game_events"),
        sa.ForeignKeyConstraint(["game_id"], ["games.id"], name="fk_game_events_game"),
    )

    op.create_table(
        "idempotency_keys",
        sa.Column("player_id", sa.String(), nullable=False),
        sa.Column("key", sa.String(), nullable=False),
        sa.Column("fingerprint", sa.String(), nullable=False),
        sa.Column("result", JSON, nullable=False),
        sa.Column("created_at", TIMESTAMP, nullable=False),
        sa.PrimaryKeyConstraint("player_id", "key", name="pk_idempotency_keys"),
        sa.ForeignKeyConstraint(["player_id"], ["players.id"], name="fk_idempotency_keys_player"),
    )

    op.create_table(
        "booster_packs",
        sa.Column("id", sa.String(), nullable=False),
        sa.Column("player_id", sa.String(), nullable=False),
        sa.Column("pack", JSON, nullable=False),
        sa.Column("opened_at", TIMESTAMP, nullable=False),
        sa.Column("game_id", sa.String(), nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_booster_packs"),
        sa.ForeignKeyConstraint(["player_id"], ["players.id"], name="fk_booster_packs_player"),
        sa.ForeignKeyConstraint(["game_id"], ["games.id"], name="fk_booster_packs_game"),
    )
    op.create_index("ix_booster_packs_player_id", "booster_packs", ["player_id", "opened_at"])


def downgrade() -> None:
    op.drop_table("booster_packs")
    op.drop_table("idempotency_keys")
    op.drop_table("game_events")
    op.drop_table("games")
    op.drop_table("players")
