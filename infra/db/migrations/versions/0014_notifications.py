"""Notifications (issue #25): ``notifications``, each player's, numbered
1, 2, 3... per player (``notice_counters``: the last one's seq), with
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

# Written out here (not imported from infra.db) so this revision never changes.
JSON = sa.JSON().with_variant(postgresql.JSON(), "postgresql")
TIMESTAMP = sa.DateTime(timezone=True)
UNREAD = sa.text("read_at IS NULL")
READ = sa.text("read_at IS NOT NULL")


def upgrade() -> None:
    op.create_table(
        "notice_counters",
        sa.Column(
            "player_id",
            sa.String(),
            sa.ForeignKey("players.id", name="fk_notice_counters_player"),
            primary_key=True,
        ),
        sa.Column("last_seq", sa.Integer(), nullable=False),
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
    op.create_index(
        "ix_notifications_read_at",
        "notifications",
        ["read_at"],
        sqlite_where=READ,
        postgresql_where=READ,
    )


def downgrade() -> None:
    """The notifications are dropped with their table."""
    op.drop_index("ix_notifications_read_at", table_name="notifications")
    op.drop_index("ix_notifications_unread", table_name="notifications")
    op.drop_table("notifications")
    op.drop_table("notice_counters")
