"""Tokens that cannot be derived (docs/decisions/0041): players.key_digest
(HMAC of createPlayer's key under the server secret), idempotency_keys.expires_at
(the sweep's index), server_secrets (the generated secret when no
MMK_SECRET_KEY is set).

Records sealed under the old scheme (the token recoverable from the key
alone) are deleted; the others expire 7 days after they were made.

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-01
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from datetime import timedelta

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0004"
down_revision: str | Sequence[str] | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Written out here (not imported from infra.db) so this revision never changes.
JSON = sa.JSON().with_variant(postgresql.JSON(), "postgresql")
TIMESTAMP = sa.DateTime(timezone=True)
RETENTION = timedelta(days=7)  # the default MMK_IDEMPOTENCY_RETENTION
SECRET_NAME = "idempotency"


def upgrade() -> None:
    op.add_column("players", sa.Column("key_digest", sa.String(), nullable=True))
    op.create_index("ix_players_key_digest", "players", ["key_digest"], unique=True)

    with op.batch_alter_table("idempotency_keys") as batch:
        batch.add_column(sa.Column("expires_at", TIMESTAMP, nullable=True))
    keys = sa.table(
        "idempotency_keys",
        sa.column("player_id", sa.String()),
        sa.column("key", sa.String()),
        sa.column("result", JSON),
        sa.column("created_at", TIMESTAMP),
        sa.column("expires_at", TIMESTAMP),
    )
    conn = op.get_bind()
    rows = conn.execute(sa.select(keys.c.player_id, keys.c.key, keys.c.result, keys.c.created_at))
    for player_id, key, result, created_at in rows.all():
        this = (keys.c.player_id == player_id) & (keys.c.key == key)
        if isinstance(result, dict) and "sealedToken" in result:
            conn.execute(sa.delete(keys).where(this))
        else:
            conn.execute(sa.update(keys).where(this).values(expires_at=created_at + RETENTION))
    with op.batch_alter_table("idempotency_keys") as batch:
        batch.alter_column("expires_at", existing_type=TIMESTAMP, nullable=False)
    op.create_index("ix_idempotency_keys_expires_at", "idempotency_keys", ["expires_at"])

    server_secrets = op.create_table(
        "server_secrets",
        sa.Column("name", sa.String(), nullable=False),
        sa.Column("value", sa.String(), nullable=False),
        sa.PrimaryKeyConstraint("name", name="pk_server_secrets"),
    )
    op.bulk_insert(server_secrets, [{"name": SECRET_NAME, "value": secrets.token_hex(32)}])


def downgrade() -> None:
    op.drop_table("server_secrets")
    op.drop_index("ix_idempotency_keys_expires_at", table_name="idempotency_keys")
    with op.batch_alter_table("idempotency_keys") as batch:
        batch.drop_column("expires_at")
    op.drop_index("ix_players_key_digest", table_name="players")
    # In place (SQLite 3.35+ too): a batch would copy and drop players, which
    # the foreign keys of its children's rows refuse.
    op.execute("ALTER TABLE players DROP COLUMN key_digest")
