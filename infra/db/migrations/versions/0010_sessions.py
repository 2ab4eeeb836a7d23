"""Sessions (issue #24): a player holds several live MMK tokens, each a row
of ``sessions`` with its hash, a label, when it was created and last used.
Each player's one token moves into its first session; a signed-out one
(``revoked:`` hash) has none, nor one first seen through a provider's JWT
(its identity made within a second of it: its hash was of a token nobody
holds).

Down: each player keeps the hash of its most recently used session (the
others end), or a hash no token has.

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-06
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | Sequence[str] | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Written out here (not imported from infra.db) so this revision never changes.
TIMESTAMP = sa.DateTime(timezone=True)
REVOKED = "revoked:"


def _naive(at: datetime) -> datetime:
    """In UTC without a zone (SQLite reads times back without one)."""
    return at if at.tzinfo is None else at.astimezone(UTC).replace(tzinfo=None)


def upgrade() -> None:
    sessions = op.create_table(
        "sessions",
        sa.Column("id", sa.String(), primary_key=True),
        sa.Column(
            "player_id",
            sa.String(),
            sa.ForeignKey("players.id", name="fk_sessions_player"),
            nullable=False,
        ),
        sa.Column("token_hash", sa.String(), nullable=False),
        sa.Column("label", sa.String(), nullable=True),
        sa.Column("created_at", TIMESTAMP, nullable=False),
        sa.Column("last_used_at", TIMESTAMP, nullable=False),
    )
    op.create_index("ix_sessions_token_hash", "sessions", ["token_hash"], unique=True)
    op.create_index("ix_sessions_player_id", "sessions", ["player_id", "last_used_at"])
    players = sa.table(
        "players",
        sa.column("id", sa.String()),
        sa.column("token_hash", sa.String()),
        sa.column("created_at", TIMESTAMP),
    )
    identities = sa.table(
        "identities", sa.column("player_id", sa.String()), sa.column("created_at", TIMESTAMP)
    )
    conn = op.get_bind()
    tied = {p: at for p, at in conn.execute(sa.select(identities)).all()}

    def first_seen_by_jwt(player_id: str, created_at: datetime) -> bool:
        at = tied.get(player_id)
        return at is not None and abs(_naive(at) - _naive(created_at)) < timedelta(seconds=1)

    rows = conn.execute(sa.select(players.c.id, players.c.token_hash, players.c.created_at))
    moved = [
        {
            "id": str(uuid.uuid4()),
            "player_id": player_id,
            "token_hash": digest,
            "label": None,
            "created_at": created_at,
            "last_used_at": created_at,
        }
        for player_id, digest, created_at in rows.all()
        if not digest.startswith(REVOKED) and not first_seen_by_jwt(player_id, created_at)
    ]
    if moved:
        op.bulk_insert(sessions, moved)
    op.drop_index("ix_players_token_hash", table_name="players")
    # In place (SQLite 3.35+ too): a batch would copy and drop players, which
    # the foreign keys of its children's rows refuse.
    op.execute("ALTER TABLE players DROP COLUMN token_hash")


def downgrade() -> None:
    conn = op.get_bind()
    sqlite = conn.dialect.name == "sqlite"
    # SQLite adds a NOT NULL column only with a default, and changes no
    # column's nullability in place (a copy of players is refused by its
    # children's foreign keys): there it keeps a default of ''.
    default = sa.text("''") if sqlite else None
    op.add_column(
        "players", sa.Column("token_hash", sa.String(), nullable=not sqlite, server_default=default)
    )
    sessions = sa.table(
        "sessions",
        sa.column("player_id", sa.String()),
        sa.column("token_hash", sa.String()),
        sa.column("last_used_at", TIMESTAMP),
    )
    players = sa.table(
        "players", sa.column("id", sa.String()), sa.column("token_hash", sa.String())
    )
    newest: dict[str, str] = {}
    order = sa.select(sessions.c.player_id, sessions.c.token_hash).order_by(sessions.c.last_used_at)
    for player_id, digest in conn.execute(order).all():
        newest[player_id] = digest  # the last one read is the most recently used
    for (player_id,) in conn.execute(sa.select(players.c.id)).all():
        digest = newest.get(player_id, REVOKED + player_id)
        conn.execute(sa.update(players).where(players.c.id == player_id).values(token_hash=digest))
    if not sqlite:
        op.alter_column("players", "token_hash", existing_type=sa.String(), nullable=False)
    op.create_index("ix_players_token_hash", "players", ["token_hash"], unique=True)
    op.drop_index("ix_sessions_player_id", table_name="sessions")
    op.drop_index("ix_sessions_token_hash", table_name="sessions")
    op.drop_table("sessions")
