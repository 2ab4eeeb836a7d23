"""games.bot_turn: set on save when a bot must act, so that any instance can
find and resume games whose bots stalled (e.g. their instance died).

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-29
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | Sequence[str] | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("games") as batch:
        batch.add_column(
            sa.Column("bot_turn", sa.Boolean(), nullable=False, server_default=sa.false())
        )
    op.create_index(
        "ix_games_bot_turn",
        "games",
        ["updated_at"],
        sqlite_where=sa.text("bot_turn"),
        postgresql_where=sa.text("bot_turn"),
    )


def downgrade() -> None:
    op.drop_index("ix_games_bot_turn", table_name="games")
    with op.batch_alter_table("games") as batch:
        batch.drop_column("bot_turn")
