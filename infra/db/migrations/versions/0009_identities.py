"""Identities at the app's identity provider (issue #24): ``iss`` + ``sub``
of a verified JWT name exactly one player.

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-06
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | Sequence[str] | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Written out here (not imported from infra.db) so this revision never changes.
TIMESTAMP = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "identities",
        sa.Column("issuer", sa.String(), primary_key=True),
        sa.Column("subject", sa.String(), primary_key=True),
        sa.Column(
            "player_id",
            sa.String(),
            sa.ForeignKey("players.id", name="fk_identities_player"),
            nullable=False,
        ),
        sa.Column("created_at", TIMESTAMP, nullable=False),
    )
    op.create_index("ix_identities_player_id", "identities", ["player_id"])


def downgrade() -> None:
    op.drop_index("ix_identities_player_id", table_name="identities")
    op.drop_table("identities")
