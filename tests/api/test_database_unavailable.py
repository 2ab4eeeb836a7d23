"""A database that cannot be reached is a coded, retryable ``INTERNAL`` error
with a human message, logged as one warning line (no traceback); any other
unexpected failure stays a plain masked ``INTERNAL`` (docs/clients.md "Errors"). The
same against a real server and PostgreSQL: ``tests/e2e/test_faults.py``."""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path
from typing import Any

import psycopg
import pytest
import sqlalchemy.exc as sa_exc

from api.graphql.errors import UNAVAILABLE_MESSAGE
from domain.services import play
from infra.db.errors import is_unavailable
from tests.api.conftest import Client
from tests.api.support import errors_of, mark, started

LOST = sa_exc.OperationalError(
    "SELECT 1", {}, psycopg.OperationalError("connection to server at 10.0.0.9 failed")
)


def sqlite_failure(tmp: Path, *, read_only: bool) -> sa_exc.OperationalError:
    """A real SQLite error: a write to a read-only database, or a missing table."""
    path = tmp / "db.sqlite3"
    sqlite3.connect(path).execute("CREATE TABLE IF NOT EXISTS t (x)").connection.commit()
    uri = f"file:{path}?mode=ro" if read_only else f"file:{path}"
    conn = sqlite3.connect(uri, uri=True)
    try:
        conn.execute("INSERT INTO t VALUES (1)" if read_only else "SELECT * FROM missing")
    except sqlite3.OperationalError as e:
        return sa_exc.OperationalError("...", {}, e)
    finally:
        conn.close()
    raise AssertionError("no error")


def test_sqlite_errors_are_told_apart(tmp_path: Path) -> None:
    assert is_unavailable(sqlite_failure(tmp_path, read_only=True))
    assert not is_unavailable(sqlite_failure(tmp_path, read_only=False)), "a bug, not an outage"


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (LOST, True),
        (sa_exc.TimeoutError("QueuePool limit of size 10 overflow 10 reached"), True),
        (sa_exc.DisconnectionError("gone"), True),
        (sa_exc.DBAPIError("x", {}, Exception("y"), connection_invalidated=True), True),
        (sa_exc.IntegrityError("INSERT", {}, Exception("duplicate key")), False),
        (RuntimeError("a bug"), False),
    ],
)
def test_which_errors_mean_the_database_is_unavailable(
    error: BaseException, expected: bool
) -> None:
    assert is_unavailable(error) is expected


async def test_a_lost_database_is_a_retryable_internal_error(
    client: Client, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    game_id, tokens = await started(client, 3, ratSeat=0)
    card = client.h.store.games[game_id].state.seats[0].hand[0]  # type: ignore[union-attr]
    before = mark(client, game_id)

    async def unreachable(*_: Any) -> Any:
        raise LOST

    monkeypatch.setattr(play, "act", unreachable)
    with caplog.at_level(logging.WARNING, logger="mmk.api"):
        errors = await errors_of(client, tokens[0], "playCard", gameId=game_id, card=card)
    assert [e["extensions"] for e in errors] == [{"code": "INTERNAL", "retryable": True}]
    assert errors[0]["message"] == UNAVAILABLE_MESSAGE
    assert "10.0.0.9" not in repr(errors), "the detail stays on the server"
    records = [r for r in caplog.records if r.name == "mmk.api"]
    assert [r.levelno for r in records] == [logging.WARNING], records
    assert "database unavailable" in records[0].getMessage()
    assert records[0].exc_info is None, "an outage is not logged with a traceback"
    assert mark(client, game_id) == before
