"""Alembic environment: the URL (or engine) comes from ``infra.db.migrate``,
else from ``sqlalchemy.url`` or ``DATABASE_URL``. One transaction for the whole
upgrade; on PostgreSQL an advisory lock makes concurrent upgrades queue."""

from __future__ import annotations

import os

from alembic import context
from sqlalchemy import Connection
from sqlalchemy.engine import URL, Engine

from infra.db.engine import make_engine
from infra.db.tables import metadata

MIGRATION_LOCK_ID = 0x4D4D4B_0001  # any constant shared by every instance

config = context.config


def _url() -> str | URL:
    url: str | URL | None = config.attributes.get("url")
    url = url or config.get_main_option("sqlalchemy.url") or os.environ.get("DATABASE_URL")
    if not url:
        raise RuntimeError("no database URL: pass one to infra.db.migrate or set DATABASE_URL")
    return url


def _run(connection: Connection) -> None:
    # target_metadata only serves `alembic revision --autogenerate` (a developer
    # tool); upgrades run the revisions as written.
    context.configure(connection=connection, target_metadata=metadata, transactional_ddl=True)
    with context.begin_transaction():
        if connection.dialect.name == "postgresql":
            connection.exec_driver_sql(f"SELECT pg_advisory_xact_lock({MIGRATION_LOCK_ID})")
        context.run_migrations()


def run_online() -> None:
    engine: Engine | None = config.attributes.get("engine")
    owned = engine is None
    engine = engine or make_engine(_url())
    try:
        with engine.connect() as connection:
            _run(connection)
    finally:
        if owned:
            engine.dispose()


def run_offline() -> None:
    context.configure(
        url=_url(), target_metadata=metadata, literal_binds=True, transactional_ddl=True
    )
    with context.begin_transaction():
        context.run_migrations()


if context.is_offline_mode():
    run_offline()
else:
    run_online()
