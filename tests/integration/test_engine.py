"""Engine settings: SQLite pragmas and BEGIN IMMEDIATE; URL handling."""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlalchemy as sa
from sqlalchemy.exc import OperationalError

from infra.db.engine import make_engine
from infra.db.migrate import upgrade
from infra.db.uow import SqlUnitOfWorkFactory
from tests.integration import records as r


def test_sqlite_file_settings(tmp_path: Path) -> None:
    engine = make_engine(f"sqlite:///{tmp_path}/a/b/mmk.db")
    try:
        with engine.connect() as conn:

            def pragma(name: str) -> object:
                return conn.exec_driver_sql(f"PRAGMA {name}").scalar()

            assert pragma("journal_mode") == "wal"
            assert pragma("synchronous") == 1  # NORMAL
            assert pragma("busy_timeout") == 5000
            assert pragma("foreign_keys") == 1
        assert (tmp_path / "a" / "b" / "mmk.db").exists()
    finally:
        engine.dispose()


def test_sqlite_transactions_take_the_write_lock_at_once(tmp_path: Path) -> None:
    """A second transaction waits at BEGIN even when the first has only read."""
    engine = make_engine(f"sqlite:///{tmp_path}/mmk.db")
    try:
        with engine.connect() as first, engine.connect() as second:
            first.exec_driver_sql("SELECT 1")  # BEGIN IMMEDIATE, then a read
            assert first.in_transaction()
            raw = second.connection.driver_connection
            assert raw is not None
            raw.execute("PRAGMA busy_timeout=50")  # the driver's own: no BEGIN
            with pytest.raises(OperationalError, match="locked"):
                second.exec_driver_sql("SELECT 1")
            second.rollback()
            first.rollback()
            assert second.exec_driver_sql("SELECT 1").scalar() == 1
    finally:
        engine.dispose()


def test_sqlite_enforces_foreign_keys(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/mmk.db"
    upgrade(url)
    engine = make_engine(url)
    try:
        with SqlUnitOfWorkFactory(engine)() as u, pytest.raises(sa.exc.IntegrityError):
            u.events.append([r.event("no-such-game", 1)])
    finally:
        engine.dispose()


def test_sqlite_in_memory_for_quick_tests() -> None:
    engine = make_engine("sqlite://")
    try:
        upgrade(engine)
        p = r.player()
        with SqlUnitOfWorkFactory(engine)() as u:
            u.players.add(p)
            u.commit()
        with SqlUnitOfWorkFactory(engine)() as u:
            assert u.players.get(p.id) == p
    finally:
        engine.dispose()


def test_postgresql_urls_use_psycopg() -> None:
    engine = make_engine("postgresql://user@localhost/db")
    assert engine.dialect.driver == "psycopg"
    assert engine.pool.size() == 10  # type: ignore[attr-defined]
    engine.dispose()


@pytest.mark.parametrize(
    "url", ["mysql://u@h/db", "sqlite+aiosqlite:///x.db", "postgresql+asyncpg://u@h/db"]
)
def test_unsupported_urls_are_refused(url: str) -> None:
    with pytest.raises(ValueError, match="unsupported"):
        make_engine(url)
