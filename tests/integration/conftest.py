"""Fixtures: every contract test runs on SQLite (a temporary file) and on
PostgreSQL (a fresh database on the server named by DATABASE_URL; skipped,
or failed under MMK_REQUIRE_SERVICES=1, when there is none)."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator

import pytest
import redis.asyncio as aioredis
import sqlalchemy as sa

from infra.db.engine import make_engine
from infra.db.migrate import upgrade
from infra.db.uow import SqlUnitOfWorkFactory
from tests.integration.databases import empty_tables, fresh_postgres, sqlite_url


@pytest.fixture(scope="session", params=["sqlite", "postgresql"])
def db_url(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """A migrated database URL, one per backend per session."""
    if request.param == "sqlite":
        url = sqlite_url(tmp_path_factory.mktemp("sqlite"))
        upgrade(url)
        yield url
        return
    server: str = request.getfixturevalue("database_url")
    with fresh_postgres(server) as url:
        upgrade(url)
        yield url


@pytest.fixture(scope="session")
def engine(db_url: str) -> Iterator[sa.Engine]:
    eng = make_engine(db_url)
    yield eng
    eng.dispose()


@pytest.fixture
def uow(engine: sa.Engine) -> SqlUnitOfWorkFactory:
    """A unit-of-work factory on empty tables."""
    empty_tables(engine)
    return SqlUnitOfWorkFactory(engine)


@pytest.fixture
def empty_db_url(
    db_url: str, request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """A new, unmigrated database on the same backend as ``db_url``."""
    if db_url.startswith("sqlite"):
        yield sqlite_url(tmp_path_factory.mktemp("empty") / "nested" / "dir")
        return
    with fresh_postgres(request.getfixturevalue("database_url")) as url:
        yield url


@pytest.fixture
def prefix() -> str:
    """A Redis key and channel prefix of this test's own."""
    return f"test-{uuid.uuid4().hex}:"


@pytest.fixture
async def admin(redis_url: str) -> AsyncIterator[aioredis.Redis]:
    """A plain Redis client, to look at what the adapters wrote."""
    client = aioredis.from_url(redis_url, decode_responses=True)
    yield client
    await client.aclose()
