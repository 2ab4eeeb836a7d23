"""Private games and invitations (issue #24, docs/decisions/0062): each
game's visibility (every game stored so far is public), invite code and
pending invitations; an ``invitations`` table with a copy of the pending
invitations, for each player's list and each host's count; the listing's
indexes hold the public games only.

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-06
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0013"
down_revision: str | Sequence[str] | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# In place, on SQLite too (ADD / DROP COLUMN, SQLite 3.35+): a batch would
# copy and drop ``games``, which the foreign keys of its events' rows refuse.
# Written out here (not imported from infra.db) so this revision never changes.
JSON = sa.JSON().with_variant(postgresql.JSON(), "postgresql")
TIMESTAMP = sa.DateTime(timezone=True)
PUBLIC = sa.text("visibility = 'public'")
CODED = sa.text("invite_code IS NOT NULL")


def upgrade() -> None:
    op.add_column(
        "games", sa.Column("visibility", sa.String(16), nullable=False, server_default="public")
    )
    op.add_column("games", sa.Column("invite_code", sa.String(), nullable=True))
    op.add_column("games", sa.Column("invitations", JSON, nullable=True))
    op.drop_index("ix_games_created_at", table_name="games")
    op.drop_index("ix_games_status", table_name="games")
    op.create_index(
        "ix_games_public_created_at",
        "games",
        ["created_at", "id"],
        sqlite_where=PUBLIC,
        postgresql_where=PUBLIC,
    )
    op.create_index(
        "ix_games_public_status",
        "games",
        ["status", "created_at", "id"],
        sqlite_where=PUBLIC,
        postgresql_where=PUBLIC,
    )
    op.create_index(
        "ix_games_invite_code",
        "games",
        ["invite_code"],
        unique=True,
        sqlite_where=CODED,
        postgresql_where=CODED,
    )
    op.create_table(
        "invitations",
        sa.Column(
            "game_id",
            sa.String(),
            sa.ForeignKey("games.id", name="fk_invitations_game"),
            primary_key=True,
        ),
        sa.Column(
            "player_id",
            sa.String(),
            sa.ForeignKey("players.id", name="fk_invitations_player"),
            primary_key=True,
        ),
        sa.Column(
            "invited_by",
            sa.String(),
            sa.ForeignKey("players.id", name="fk_invitations_invited_by"),
            nullable=False,
        ),
        sa.Column("created_at", TIMESTAMP, nullable=False),
    )
    op.create_index("ix_invitations_player", "invitations", ["player_id", "created_at", "game_id"])
    op.create_index("ix_invitations_invited_by", "invitations", ["invited_by"])


def downgrade() -> None:
    """Back to every game public and joinable by anyone: the unlisted and
    private games lose their visibility, code and invitations."""
    op.drop_index("ix_invitations_invited_by", table_name="invitations")
    op.drop_index("ix_invitations_player", table_name="invitations")
    op.drop_table("invitations")
    op.drop_index("ix_games_invite_code", table_name="games")
    op.drop_index("ix_games_public_status", table_name="games")
    op.drop_index("ix_games_public_created_at", table_name="games")
    op.create_index("ix_games_created_at", "games", ["created_at", "id"])
    op.create_index("ix_games_status", "games", ["status", "created_at", "id"])
    for column in ("invitations", "invite_code", "visibility"):
        op.execute(f"ALTER TABLE games DROP COLUMN {column}")
