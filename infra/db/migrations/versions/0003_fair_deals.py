"""games.salt and games.practice: fair deals (docs/decisions/0040). A game's
seed is committed to with a salt; ``practice`` marks a host-chosen seed.
Existing games get an empty salt (their commitment is over the seed alone
with an empty salt) and are not practice games.

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | Sequence[str] | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


# In place, on SQLite too (ADD / DROP COLUMN, SQLite 3.35+): a batch would
# copy and drop ``games``, which the foreign keys of its events' rows refuse.
# A constant default keeps ADD COLUMN in place ('0' is false on both).


def upgrade() -> None:
    op.add_column("games", sa.Column("salt", sa.String(), nullable=False, server_default=""))
    op.add_column("games", sa.Column("practice", sa.Boolean(), nullable=False, server_default="0"))


def downgrade() -> None:
    op.execute("ALTER TABLE games DROP COLUMN practice")
    op.execute("ALTER TABLE games DROP COLUMN salt")
