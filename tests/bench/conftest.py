"""What the benchmarks share."""

from __future__ import annotations

import pytest


@pytest.fixture
def scale_out(database_url: str, redis_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """``DATABASE_URL`` (PostgreSQL) and ``REDIS_URL`` for the instances a
    benchmark starts (issue #28); skipped where the database is SQLite."""
    if not database_url.startswith("postgresql"):
        pytest.skip("two instances share a PostgreSQL database")
    monkeypatch.setenv("DATABASE_URL", database_url)
    monkeypatch.setenv("REDIS_URL", redis_url)
