"""Webhooks (issue #25): ``webhook_endpoints`` (the app's URLs, kinds and
sealed secrets), ``webhook_messages`` (the outbox: a notification on its way
to an endpoint), ``webhook_attempts`` (the delivery log) and
``push_settings`` (the kinds a player wants pushed).

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-06
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0015"
down_revision: str | Sequence[str] | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Written out here (not imported from infra.db) so this revision never changes.
JSON = sa.JSON().with_variant(postgresql.JSON(), "postgresql")
TIMESTAMP = sa.DateTime(timezone=True)
PENDING = sa.text("status = 'PENDING'")
DONE = sa.text("status <> 'PENDING'")


def upgrade() -> None:
    op.create_table(
        "webhook_endpoints",
        sa.Column("id", sa.String(), primary_key=True),
        sa.Column("url", sa.String(), nullable=False),
        sa.Column("kinds", JSON, nullable=False),
        sa.Column("description", sa.String(), nullable=False),
        sa.Column("created_at", TIMESTAMP, nullable=False),
        sa.Column("disabled_at", TIMESTAMP, nullable=True),
        sa.Column("disabled_reason", sa.String(16), nullable=True),
        sa.Column("secret", sa.String(), nullable=False),
        sa.Column("previous_secret", sa.String(), nullable=True),
        sa.Column("previous_until", TIMESTAMP, nullable=True),
    )
    op.create_table(
        "webhook_messages",
        sa.Column("id", sa.String(), primary_key=True),
        sa.Column(
            "endpoint_id",
            sa.String(),
            sa.ForeignKey("webhook_endpoints.id", name="fk_webhook_messages_endpoint"),
            nullable=False,
        ),
        sa.Column("player_id", sa.String(), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("game_id", sa.String(), nullable=False),
        sa.Column("created_at", TIMESTAMP, nullable=False),
        sa.Column("payload", sa.Text(), nullable=False),
        sa.Column("status", sa.String(10), nullable=False),
        sa.Column("next_at", TIMESTAMP, nullable=True),
        sa.Column("tries", sa.Integer(), nullable=False),
        sa.Column("retry_from", TIMESTAMP, nullable=True),
        sa.Column("retry_tries", sa.Integer(), nullable=False),
    )
    op.create_index(
        "ix_webhook_messages_due",
        "webhook_messages",
        ["endpoint_id", "next_at"],
        sqlite_where=PENDING,
        postgresql_where=PENDING,
    )
    op.create_index(
        "ix_webhook_messages_log", "webhook_messages", ["endpoint_id", "created_at", "id"]
    )
    op.create_index(
        "ix_webhook_messages_done",
        "webhook_messages",
        ["created_at"],
        sqlite_where=DONE,
        postgresql_where=DONE,
    )
    op.create_table(
        "webhook_attempts",
        sa.Column(
            "message_id",
            sa.String(),
            sa.ForeignKey("webhook_messages.id", name="fk_webhook_attempts_message"),
            primary_key=True,
        ),
        sa.Column("n", sa.Integer(), primary_key=True, autoincrement=False),
        sa.Column("at", TIMESTAMP, nullable=False),
        sa.Column("status_code", sa.Integer(), nullable=True),
        sa.Column("latency_ms", sa.Float(), nullable=False),
        sa.Column("error", sa.String(), nullable=True),
    )
    op.create_table(
        "push_settings",
        sa.Column(
            "player_id",
            sa.String(),
            sa.ForeignKey("players.id", name="fk_push_settings_player"),
            primary_key=True,
        ),
        sa.Column("kinds", JSON, nullable=False),
    )


def downgrade() -> None:
    """The endpoints, their messages and log, and the push settings go."""
    op.drop_table("push_settings")
    op.drop_table("webhook_attempts")
    op.drop_index("ix_webhook_messages_done", table_name="webhook_messages")
    op.drop_index("ix_webhook_messages_log", table_name="webhook_messages")
    op.drop_index("ix_webhook_messages_due", table_name="webhook_messages")
    op.drop_table("webhook_messages")
    op.drop_table("webhook_endpoints")
