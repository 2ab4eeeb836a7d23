"""Ratings (issue #26): ``games.rated`` and ``ratings`` (each subject's
rating per pool).

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-06
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0016"
down_revision: str | Sequence[str] | None = "0015"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Written out here (not imported from infra.db) so this revision never changes.
TIMESTAMP = sa.DateTime(timezone=True)
RATED = sa.text("rated")


def upgrade() -> None:
    op.add_column(
        "games", sa.Column("rated", sa.Boolean(), nullable=False, server_default=sa.false())
    )
    op.create_index(
        "ix_games_rated", "games", ["status"], sqlite_where=RATED, postgresql_where=RATED
    )
    op.create_table(
        "ratings",
        sa.Column("pool", sa.String(16), primary_key=True),
        sa.Column("subject", sa.String(), primary_key=True),
        sa.Column("mu", sa.Float(), nullable=False),
        sa.Column("sigma", sa.Float(), nullable=False),
        sa.Column("games", sa.Integer(), nullable=False),
        sa.Column("last_at", TIMESTAMP, nullable=False),
    )
    op.create_index("ix_ratings_board", "ratings", ["pool", "mu", "subject", "games", "last_at"])
    op.create_index("ix_ratings_subject", "ratings", ["subject"])


def downgrade() -> None:
    """The ratings go; every game is unrated."""
    op.drop_index("ix_ratings_subject", table_name="ratings")
    op.drop_index("ix_ratings_board", table_name="ratings")
    op.drop_table("ratings")
    op.drop_index("ix_games_rated", table_name="games")
    # Not a batch: SQLite (3.35+) drops the column in place, where a batch
    # would recreate ``games``, which other tables' foreign keys refer to.
    op.drop_column("games", "rated")
