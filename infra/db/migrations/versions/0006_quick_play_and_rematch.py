"""games.quick_play, fill_bots_at, rematch_id, reserved: quick play and
rematch (issue #15, docs/decisions/0048). All nullable: an existing game is
no quick-play game, has no bot fill due, no rematch and no reserved seat.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0006"
down_revision: str | Sequence[str] | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# In place, on SQLite too (ADD / DROP COLUMN, SQLite 3.35+): a batch would
# copy and drop ``games``, which the foreign keys of its events' rows refuse.
# Types written out here (not imported from infra.db) so this revision never changes.
JSON = sa.JSON().with_variant(postgresql.JSON(), "postgresql")
TIMESTAMP = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.add_column("games", sa.Column("quick_play", sa.String(), nullable=True))
    op.add_column("games", sa.Column("fill_bots_at", TIMESTAMP, nullable=True))
    op.add_column("games", sa.Column("rematch_id", sa.String(), nullable=True))
    op.add_column("games", sa.Column("reserved", JSON, nullable=True))
    op.create_index(
        "ix_games_quick_play",
        "games",
        ["quick_play", "created_at"],
        sqlite_where=sa.text("status = 'lobby' AND quick_play IS NOT NULL"),
        postgresql_where=sa.text("status = 'lobby' AND quick_play IS NOT NULL"),
    )
    op.create_index(
        "ix_games_fill_bots_at",
        "games",
        ["fill_bots_at"],
        sqlite_where=sa.text("fill_bots_at IS NOT NULL"),
        postgresql_where=sa.text("fill_bots_at IS NOT NULL"),
    )


def downgrade() -> None:
    op.drop_index("ix_games_fill_bots_at", table_name="games")
    op.drop_index("ix_games_quick_play", table_name="games")
    for column in ("reserved", "rematch_id", "fill_bots_at", "quick_play"):
        op.execute(f"ALTER TABLE games DROP COLUMN {column}")
