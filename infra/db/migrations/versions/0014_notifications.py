"""Notifications (issue #25): ``notifications``, each player's, numbered
1, 2, 3... per player (``players.notice_seq``: the last one's seq), with
their kind and fields as JSON and when they were read.

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-06
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0014"
down_revision: str | Sequence[str] | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# In place, on SQLite too (ADD / DROP COLUMN, SQLite 3.35+): a batch would
# copy and drop ``players``, which the foreign keys of other rows refuse.
# Written out here (not imported from infra.db) so this revision never changes.
JSON = sa.JSON().with_variant(postgresql.JSON(), "postgresql")
TIMESTAMP = sa.DateTime(timezone=True)
UNREAD = sa.text("read_at IS NULL")


def upgrade() -> None:
    op.add_column(
        "players", sa.Column("notice_seq", sa.Integer(), nullable=False, server_default="0")
    )
    op.create_table(
        "notifications",
        sa.Column(
            "player_id",
            sa.String(),
            sa.ForeignKey("players.id", name="fk_notifications_player"),
            primary_key=True,
        ),
        sa.Column("seq", sa.Integer(), primary_key=True, autoincrement=False),
        sa.Column("game_id", sa.String(), nullable=False),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("body", JSON, nullable=False),
        sa.Column("created_at", TIMESTAMP, nullable=False),
        sa.Column("read_at", TIMESTAMP, nullable=True),
    )
    op.create_index(
        "ix_notifications_unread",
        "notifications",
        ["player_id", "seq"],
        sqlite_where=UNREAD,
        postgresql_where=UNREAD,
    )


def downgrade() -> None:
    """The notifications are dropped with their table."""
    op.drop_index("ix_notifications_unread", table_name="notifications")
    op.drop_table("notifications")
    op.execute("ALTER TABLE players DROP COLUMN notice_seq")
