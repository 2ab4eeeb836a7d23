"""Turn clocks (issue #15, docs/decisions/0046): games.deadline (the running
wait's deadline, derived on save; the sweep's partial index) and games.clock
(banks, timeouts in a row, the wait, seats left). Both null for every game
already stored: an untimed game gets its clock at its next change. Columns
are added and dropped in place (the rows of child tables stay).

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0005"
down_revision: str | Sequence[str] | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Written out here (not imported from infra.db) so this revision never changes.
JSON = sa.JSON(none_as_null=True).with_variant(postgresql.JSON(none_as_null=True), "postgresql")
TIMESTAMP = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.add_column("games", sa.Column("deadline", TIMESTAMP, nullable=True))
    op.add_column("games", sa.Column("clock", JSON, nullable=True))
    op.create_index(
        "ix_games_deadline",
        "games",
        ["deadline"],
        sqlite_where=sa.text("deadline IS NOT NULL"),
        postgresql_where=sa.text("deadline IS NOT NULL"),
    )


def downgrade() -> None:
    op.drop_index("ix_games_deadline", table_name="games")
    op.execute("ALTER TABLE games DROP COLUMN clock")
    op.execute("ALTER TABLE games DROP COLUMN deadline")
