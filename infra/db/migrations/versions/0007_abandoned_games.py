"""Abandoned games and per-player caps (issue #22, docs/decisions/0051):
the status ``abandoned``; games.abandon_at (when a game left alone ends as
abandoned; the sweep's partial index); a partial index of each host's
lobby games (the cap on open games).

Games already stored: a lobby, and a running game with no deadline (an
untimed one, or one whose bots are to move), gets ``updated_at`` + 7 days
(the default ``MMK_ABANDON_IDLE``); its next change sets the time the rules
give (a running game whose bots then move gets none). The status check is
loosened in place: on PostgreSQL a new constraint; on SQLite the table's
stored definition is edited as SQLite documents for a CHECK constraint
(https://www.sqlite.org/lang_altertable.html, "Making Other Kinds Of Table
Schema Changes"), since a copy of ``games`` is refused by the foreign keys
of its events' rows. Every stored row meets the looser check.

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-02
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | Sequence[str] | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Written out here (not imported from infra.db) so this revision never changes.
TIMESTAMP = sa.DateTime(timezone=True)
OLD_CHECK = "status IN ('lobby', 'running', 'finished')"
NEW_CHECK = "status IN ('lobby', 'running', 'finished', 'abandoned')"
# The default MMK_ABANDON_IDLE (7 days), in each dialect's date arithmetic.
IDLE_LATER = {
    "postgresql": "updated_at + interval '7 days'",
    "sqlite": "strftime('%Y-%m-%d %H:%M:%f', updated_at, '+7 days')",
}


def _sqlite_check(old: str, new: str) -> None:
    """Replace the CHECK text in the stored ``CREATE TABLE games`` (every row
    must meet ``new``), then bump the schema version so every connection
    reads the table again."""
    conn = op.get_bind()
    sql = conn.exec_driver_sql(
        "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'games'"
    ).scalar_one()
    if old not in sql:
        raise RuntimeError(f"games has no CHECK ({old}) to replace")
    version = conn.exec_driver_sql("PRAGMA schema_version").scalar_one()
    conn.exec_driver_sql("PRAGMA writable_schema = ON")
    try:
        conn.exec_driver_sql(
            "UPDATE sqlite_master SET sql = ? WHERE type = 'table' AND name = 'games'",
            (sql.replace(old, new),),
        )
        conn.exec_driver_sql(f"PRAGMA schema_version = {int(version) + 1}")
    finally:
        conn.exec_driver_sql("PRAGMA writable_schema = OFF")


def _status_check(old: str, new: str) -> None:
    if op.get_bind().dialect.name == "sqlite":
        _sqlite_check(old, new)
        return
    op.drop_constraint("ck_games_status", "games", type_="check")
    op.create_check_constraint("ck_games_status", "games", sa.text(new))


def upgrade() -> None:
    _status_check(OLD_CHECK, NEW_CHECK)
    op.add_column("games", sa.Column("abandon_at", TIMESTAMP, nullable=True))
    later = IDLE_LATER[op.get_bind().dialect.name]
    op.execute(
        f"UPDATE games SET abandon_at = {later} "
        "WHERE status = 'lobby' OR (status = 'running' AND deadline IS NULL)"
    )
    op.create_index(
        "ix_games_abandon_at",
        "games",
        ["abandon_at"],
        sqlite_where=sa.text("abandon_at IS NOT NULL"),
        postgresql_where=sa.text("abandon_at IS NOT NULL"),
    )
    op.create_index(
        "ix_games_lobby_host",
        "games",
        ["host"],
        sqlite_where=sa.text("status = 'lobby'"),
        postgresql_where=sa.text("status = 'lobby'"),
    )


def downgrade() -> None:
    op.drop_index("ix_games_lobby_host", table_name="games")
    op.drop_index("ix_games_abandon_at", table_name="games")
    op.execute("ALTER TABLE games DROP COLUMN abandon_at")
    # An abandoned game reads as finished before 0007 (its log still says why).
    op.execute("UPDATE games SET status = 'finished' WHERE status = 'abandoned'")
    _status_check(NEW_CHECK, OLD_CHECK)
