"""Throw-away databases for the integration tests and benchmarks.

PostgreSQL: a fresh ``mmk_test_<random>`` database per session, created and
dropped through an autocommit connection to the given server URL, so that
runs never collide. SQLite: a file under a temporary directory.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg
import sqlalchemy as sa
from sqlalchemy.engine import make_url

from infra.db.tables import metadata

# The server's generated secret (migration 0004) stays: it is not test data.
KEPT_TABLES = frozenset({"server_secrets"})
TABLES_CHILD_FIRST = [t.name for t in reversed(metadata.sorted_tables) if t.name not in KEPT_TABLES]


def _libpq(url: str) -> str:
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


@contextmanager
def fresh_postgres(server_url: str) -> Iterator[str]:
    """A new empty database on the server of ``server_url``; dropped on exit."""
    name = f"mmk_test_{secrets.token_hex(6)}"
    with psycopg.connect(_libpq(server_url), autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield make_url(server_url).set(database=name).render_as_string(hide_password=False)
    finally:
        with psycopg.connect(_libpq(server_url), autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def sqlite_url(directory: Path) -> str:
    return f"sqlite:///{directory / 'mmk.sqlite3'}"


def empty_tables(engine: sa.Engine) -> None:
    """Delete every row (children first), keeping the schema."""
    with engine.begin() as conn:
        for name in TABLES_CHILD_FIRST:
            conn.exec_driver_sql(f"DELETE FROM {name}")
