"""Apply the Alembic migrations programmatically (no alembic.ini needed)."""

from __future__ import annotations

import threading
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy.engine import URL, Engine

from infra.db.engine import make_engine

MIGRATIONS_DIR = Path(__file__).resolve().parent / "migrations"
# Alembic's ``context``/``op`` are process globals: one upgrade at a time per
# process (other processes queue on the database: advisory lock / BEGIN IMMEDIATE).
_ONE_AT_A_TIME = threading.Lock()


def alembic_config(target: str | URL | Engine | None = None) -> Config:
    """An Alembic config pointing at this package's migrations."""
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    cfg.set_main_option("path_separator", "os")
    if isinstance(target, Engine):
        cfg.attributes["engine"] = target
    elif target is not None:
        cfg.attributes["url"] = target
    return cfg


def upgrade(target: str | URL | Engine, revision: str = "head") -> None:
    """Bring the database at ``target`` (a URL or an engine) up to ``revision``.
    Idempotent: at head it does nothing."""
    with _ONE_AT_A_TIME:
        command.upgrade(alembic_config(target), revision)


def head() -> str | None:
    """The newest revision shipped."""
    return ScriptDirectory.from_config(alembic_config()).get_current_head()


def current(target: str | URL | Engine) -> str | None:
    """The revision the database is at (None before the first upgrade)."""
    engine = target if isinstance(target, Engine) else make_engine(target)
    try:
        with engine.connect() as conn:
            return MigrationContext.configure(conn).get_current_revision()
    finally:
        if engine is not target:
            engine.dispose()
