"""Migrations: to head, idempotent, safe to run concurrently, and the same
schema as ``infra.db.tables``."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext

from infra.db import migrate
from infra.db.engine import make_engine
from infra.db.tables import games, idempotency_keys, metadata, players, server_secrets
from infra.db.uow import SqlUnitOfWorkFactory
from tests.integration.test_fair_deals_on_sql import bots_game

REPO_ROOT = Path(__file__).resolve().parents[2]


def _tables(url: str) -> set[str]:
    engine = make_engine(url)
    try:
        return set(sa.inspect(engine).get_table_names())
    finally:
        engine.dispose()


def test_upgrade_reaches_head_and_twice_is_a_no_op(empty_db_url: str) -> None:
    assert migrate.current(empty_db_url) is None
    migrate.upgrade(empty_db_url)
    assert migrate.current(empty_db_url) == migrate.head() == "0016"
    tables = _tables(empty_db_url)
    assert tables == {*metadata.tables, "alembic_version"}
    migrate.upgrade(empty_db_url)
    assert migrate.current(empty_db_url) == "0016"
    assert _tables(empty_db_url) == tables


def test_concurrent_upgrades_do_not_collide(empty_db_url: str) -> None:
    """Server instances starting together: processes, and threads in one."""
    code = "import sys; from infra.db.migrate import upgrade; upgrade(sys.argv[1])"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", code, empty_db_url], cwd=REPO_ROOT, stderr=subprocess.PIPE
        )
        for _ in range(3)
    ]
    with ThreadPoolExecutor(2) as pool:
        for f in [pool.submit(migrate.upgrade, empty_db_url) for _ in range(2)]:
            f.result(timeout=60)
    for p in procs:
        _, err = p.communicate(timeout=60)
        assert p.returncode == 0, err.decode()
    assert migrate.current(empty_db_url) == migrate.head()


def test_upgrade_accepts_an_engine(empty_db_url: str) -> None:
    engine = make_engine(empty_db_url)
    try:
        migrate.upgrade(engine)
        assert migrate.current(engine) == migrate.head()
    finally:
        engine.dispose()


def test_migrated_schema_matches_the_table_classes(db_url: str) -> None:
    engine = make_engine(db_url)
    try:
        with engine.connect() as conn:
            diff = compare_metadata(MigrationContext.configure(conn), metadata)
    finally:
        engine.dispose()
    assert diff == []


def test_0004_drops_the_old_sealed_tokens_and_dates_the_other_records(empty_db_url: str) -> None:
    """A token sealed under the key alone (before 0004) could be recovered
    offline from a guessed key: gone. Other records expire 7 days after they
    were made. The generated secret is there once, and 0004 goes back down."""
    migrate.upgrade(empty_db_url, "0002")
    made = datetime(2026, 11, 30, 12, tzinfo=UTC)
    stamp = made.replace(tzinfo=None) if empty_db_url.startswith("sqlite") else made
    engine = make_engine(empty_db_url)
    try:
        with engine.begin() as conn:
            conn.execute(
                sa.text("INSERT INTO players VALUES ('p1', 'ann', 'h1', :at)"), {"at": stamp}
            )
            for key, result in (("sealed", {"sealedToken": "abc"}), ("move", {"id": "pack"})):
                conn.execute(
                    sa.text("INSERT INTO idempotency_keys VALUES ('p1', :k, 'f', :r, :at)"),
                    {"k": key, "r": json.dumps(result), "at": stamp},
                )
        migrate.upgrade(engine)
        with engine.connect() as conn:
            rows = conn.execute(sa.select(idempotency_keys.c.key, idempotency_keys.c.expires_at))
            assert [(k, e.astimezone(UTC)) for k, e in rows] == [("move", made + timedelta(7))]
            assert len(conn.execute(sa.select(server_secrets)).all()) == 1
            assert conn.execute(sa.select(players.c.key_digest)).scalars().all() == [None]
        migrate.upgrade(engine)  # at head: the secret is not made twice
        with engine.connect() as conn:
            assert len(conn.execute(sa.select(server_secrets)).all()) == 1
        command.downgrade(migrate.alembic_config(engine), "0002")
        assert migrate.current(engine) == "0002"
        assert "server_secrets" not in _tables(empty_db_url)
    finally:
        engine.dispose()


def test_up_and_down_with_games_their_events_and_players_in_place(empty_db_url: str) -> None:
    """Migrations alter tables in place: a copy-and-drop of ``games`` or
    ``players`` is refused by the foreign keys of their rows' children (a
    game's events, a player's records), on SQLite as on PostgreSQL."""
    migrate.upgrade(empty_db_url)
    engine = make_engine(empty_db_url)
    try:
        game_id = asyncio.run(bots_game(SqlUnitOfWorkFactory(engine), 3))
        with engine.connect() as conn:
            events = conn.execute(sa.text("SELECT count(*) FROM game_events")).scalar_one()
        assert events > 10
        with engine.connect() as conn:  # 0005: the clock is written on save
            clock = conn.execute(
                sa.text("SELECT clock FROM games WHERE id = :id"), {"id": game_id}
            ).scalar_one()
            assert clock is not None
        command.downgrade(migrate.alembic_config(engine), "0004")
        assert migrate.current(engine) == "0004"
        command.downgrade(migrate.alembic_config(engine), "0002")
        assert migrate.current(engine) == "0002"
        migrate.upgrade(engine)
        assert migrate.current(engine) == migrate.head()
        with engine.connect() as conn:
            row = conn.execute(
                sa.text("SELECT salt, practice FROM games WHERE id = :id"), {"id": game_id}
            ).one()
            assert (row.salt, bool(row.practice)) == ("", False)  # back at 0003's defaults
            row = conn.execute(
                sa.text("SELECT deadline, clock FROM games WHERE id = :id"), {"id": game_id}
            ).one()
            assert (row.deadline, row.clock) == (None, None)  # 0005's: no clock yet
            assert conn.execute(sa.text("SELECT count(*) FROM game_events")).scalar_one() == events
    finally:
        engine.dispose()


def test_0007_dates_the_games_left_alone_and_admits_the_abandoned_status(
    empty_db_url: str,
) -> None:
    """A lobby and a running game without a deadline get updated_at + 7 days
    (the default MMK_ABANDON_IDLE); a timed wait and a finished game none.
    The status check takes ``abandoned`` (and still refuses what is no
    status); down again, an abandoned game reads as finished."""
    migrate.upgrade(empty_db_url, "0006")
    at = datetime(2026, 11, 30, 12, 30, 15, 250_000, tzinfo=UTC)
    stamp = at.replace(tzinfo=None) if empty_db_url.startswith("sqlite") else at
    rows = {
        "lobby": ("lobby", None),
        "untimed": ("running", None),
        "timed": ("running", stamp),
        "over": ("finished", None),
    }
    engine = make_engine(empty_db_url)
    try:
        with engine.begin() as conn:
            conn.execute(
                sa.text("INSERT INTO players VALUES ('p1', 'ann', 'h1', :at, NULL)"), {"at": stamp}
            )
            for game_id, (status, deadline) in rows.items():
                conn.execute(
                    sa.text(
                        "INSERT INTO games (id, host, status, seat_count, options, seed, seats, "
                        "version, last_seq, created_at, updated_at, deadline) VALUES (:id, 'p1', "
                        ":status, 3, '{}', 's', '[]', 1, 0, :at, :at, :deadline)"
                    ),
                    {"id": game_id, "status": status, "at": stamp, "deadline": deadline},
                )
        migrate.upgrade(engine)
        with engine.connect() as conn:
            found = dict(conn.execute(sa.select(games.c.id, games.c.abandon_at)).all())
        week = at + timedelta(days=7)
        assert found == {"lobby": week, "untimed": week, "timed": None, "over": None}
        status = "UPDATE games SET status = :s WHERE id = 'over'"
        with engine.begin() as conn:
            conn.execute(sa.text(status), {"s": "abandoned"})
        with pytest.raises(sa.exc.IntegrityError), engine.begin() as conn:
            conn.execute(sa.text(status), {"s": "gone"})
        command.downgrade(migrate.alembic_config(engine), "0006")
        with engine.connect() as conn:
            over = conn.execute(sa.text("SELECT status FROM games WHERE id = 'over'")).scalar()
            assert over == "finished"
        with pytest.raises(sa.exc.IntegrityError), engine.begin() as conn:
            conn.execute(sa.text(status), {"s": "abandoned"})
        migrate.upgrade(engine)
        assert migrate.current(engine) == migrate.head()
    finally:
        engine.dispose()


def test_0008_writes_event_keys_as_the_fields_are_named_and_back(empty_db_url: str) -> None:
    """Stored events (each audience's) and the events of kept results get the
    keys of now (a message's ``from`` is ``fromSeat``, a won play's
    ``second`` ``secondCard``); the server reads them as it read the old
    ones; down again, the old keys come back."""
    from tests.integration.test_repositories import OLD_ROWS

    migrate.upgrade(empty_db_url, "0007")
    at = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
    stamp = at.replace(tzinfo=None) if empty_db_url.startswith("sqlite") else at
    engine = make_engine(empty_db_url)
    kept = {
        "gameId": "g1",
        "version": 3,
        "events": [
            {
                "gameId": "g1",
                "seq": 3,
                "type": "MessageSent",
                "at": at.isoformat(),
                "data": OLD_ROWS[2]["public"],
            },
        ],
    }
    try:
        with engine.begin() as conn:
            conn.execute(
                sa.text("INSERT INTO players VALUES ('p1', 'ann', 'h1', :at, NULL)"), {"at": stamp}
            )
            conn.execute(
                sa.text(
                    "INSERT INTO games (id, host, status, seat_count, options, seed, seats, "
                    "version, last_seq, created_at, updated_at) VALUES ('g1', 'p1', "
                    "'running', 3, '{}', 's', '[]', 1, 0, :at, :at)"
                ),
                {"at": stamp},
            )
            for seq, row in enumerate(OLD_ROWS, start=1):
                conn.execute(
                    sa.text(
                        "INSERT INTO game_events (game_id, seq, type, public, private, "
                        "created_at, cause) VALUES ('g1', :seq, :type, :public, :private, :at, "
                        "NULL)"
                    ),
                    {
                        "seq": seq,
                        "type": row["type"],
                        "public": json.dumps(row["public"]),
                        "private": json.dumps(row["private"]),
                        "at": stamp,
                    },
                )
            conn.execute(
                sa.text("INSERT INTO idempotency_keys VALUES ('p1', 'k1', 'f', :result, :at, :at)"),
                {"result": json.dumps(kept), "at": stamp},
            )

        def stored() -> tuple[dict[int, tuple[Any, Any]], Any]:
            with engine.connect() as conn:
                events = {
                    r.seq: (_loaded(r.public), _loaded(r.private))
                    for r in conn.execute(sa.text("SELECT seq, public, private FROM game_events"))
                }
                result = _loaded(
                    conn.execute(sa.text("SELECT result FROM idempotency_keys")).scalar_one()
                )
            return events, result

        before = stored()
        migrate.upgrade(engine)
        events, result = stored()
        message = events[3][0]
        assert message == {
            "fromSeat": 0,
            "messageId": "m1",
            "status": "pending",
            "toSeat": 2,
            "trick": 1,
        }
        assert events[3][1]["0"]["fromSeat"] == 0 and "from" not in events[3][1]["0"]
        assert events[1][0]["ratSeat"] == 0 and "rat" not in events[1][0]
        assert events[4][1]["1"] == {
            "card": "stinky-5",
            "fromSeat": 0,
            "reason": "stinky",
            "toSeat": 1,
        }
        assert [p["secondCard"] for p in events[5][0]["plays"]] == [None, None, None]
        assert events[2] == before[0][2]  # a kind whose keys did not change
        assert result["events"][0]["data"] == message
        command.downgrade(migrate.alembic_config(engine), "0007")
        assert stored() == before
    finally:
        engine.dispose()


def _loaded(value: Any) -> Any:
    """A JSON column as read: SQLite hands back text through ``sa.text``."""
    return json.loads(value) if isinstance(value, str) else value


def test_0009_adds_identities_and_down_again_drops_them_with_players_in_place(
    empty_db_url: str,
) -> None:
    """An identity ties to a player (a foreign key); down to 0008 drops the
    table and keeps the players; up again, it is back, empty."""
    at = datetime(2026, 12, 6, 9, 0, tzinfo=UTC)
    stamp = at.replace(tzinfo=None) if empty_db_url.startswith("sqlite") else at
    engine = make_engine(empty_db_url)
    try:
        command.upgrade(migrate.alembic_config(engine), "0009")
        with engine.begin() as conn:
            conn.execute(
                sa.text("INSERT INTO players VALUES ('p1', 'ann', 'h1', :at, NULL)"), {"at": stamp}
            )
            conn.execute(
                sa.text("INSERT INTO identities VALUES ('https://id/', 'u1', 'p1', :at)"),
                {"at": stamp},
            )
        with pytest.raises(sa.exc.IntegrityError), engine.begin() as conn:  # one per iss + sub
            conn.execute(
                sa.text("INSERT INTO identities VALUES ('https://id/', 'u1', 'p1', :at)"),
                {"at": stamp},
            )
        command.downgrade(migrate.alembic_config(engine), "0008")
        assert "identities" not in _tables(empty_db_url)
        with engine.connect() as conn:
            assert conn.execute(sa.text("SELECT count(*) FROM players")).scalar_one() == 1
        command.upgrade(migrate.alembic_config(engine), "0009")
        with engine.connect() as conn:
            assert conn.execute(sa.text("SELECT count(*) FROM identities")).scalar_one() == 0
    finally:
        engine.dispose()


def test_0010_moves_each_players_token_into_a_session_and_back(empty_db_url: str) -> None:
    """Issue #24: a live token becomes its player's first session, a
    signed-out player (``revoked:`` hash) has none; a second session added
    since, down to 0009 each player keeps its most recently used token."""
    at = datetime(2026, 12, 6, 9, 0, tzinfo=UTC)
    sqlite = empty_db_url.startswith("sqlite")
    stamp = at.replace(tzinfo=None) if sqlite else at
    engine = make_engine(empty_db_url)
    config = migrate.alembic_config(engine)
    try:
        command.upgrade(config, "0009")
        with engine.begin() as conn:
            rows = [("p1", "ann", "h1"), ("p2", "bob", "revoked:p2")]
            rows += [("p3", "cat", "h3"), ("p4", "dan", "h4")]
            for row in rows:
                conn.execute(
                    sa.text("INSERT INTO players VALUES (:id, :name, :h, :at, NULL)"),
                    {"id": row[0], "name": row[1], "h": row[2], "at": stamp},
                )
            # p3 first seen through a JWT (its hash held by nobody); p4 a guest
            # who linked an identity a day later (its token is real)
            for player, linked in (("p3", stamp), ("p4", stamp + timedelta(days=1))):
                conn.execute(
                    sa.text("INSERT INTO identities VALUES ('https://id/', :p, :p, :at)"),
                    {"p": player, "at": linked},
                )
        command.upgrade(config, "0010")
        with SqlUnitOfWorkFactory(engine)() as u:
            found = u.players.by_token_hash("h1")
            assert found is not None and found[0].name == "ann"
            assert found[1].created_at == found[1].last_used_at == at
            assert u.players.sessions_of("p2") == u.players.sessions_of("p3") == []
            assert len(u.players.sessions_of("p4")) == 1
        with engine.begin() as conn:
            conn.execute(
                sa.text("INSERT INTO sessions VALUES ('s2', 'p1', 'h2', 'tv', :at, :later)"),
                {"at": stamp, "later": stamp + timedelta(hours=1)},
            )
        command.downgrade(config, "0009")
        assert "sessions" not in _tables(empty_db_url)
        with engine.connect() as conn:
            got = conn.execute(sa.text("SELECT id, token_hash FROM players ORDER BY id")).all()
            assert got == [("p1", "h2"), ("p2", "revoked:p2"), ("p3", "revoked:p3"), ("p4", "h4")]
        command.upgrade(config, "0010")
        with SqlUnitOfWorkFactory(engine)() as u:
            assert [s.player_id for s in u.players.sessions_of("p1")] == ["p1"]
            assert u.players.by_token_hash("h1") is None  # ended by the way down
            assert u.players.sessions_of("p2") == []
    finally:
        engine.dispose()
