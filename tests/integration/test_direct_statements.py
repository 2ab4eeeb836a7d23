"""Writes run on the DBAPI cursor (infra.db.direct) store what Core would,
inside the unit of work's transaction, and fail as Core would: SQLAlchemy's
error types, parameters hidden, a lost connection invalidated."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
import sqlalchemy as sa

from infra.db.direct import DirectStatement
from infra.db.engine import make_engine
from infra.db.migrate import upgrade
from infra.db.tables import game_events, games, metadata, players
from tests.integration.databases import TABLES_CHILD_FIRST, fresh_postgres

AT = datetime(2026, 11, 29, 18, 0, 0, 123456, tzinfo=timezone(timedelta(hours=2)))
PLAYER = {
    "id": "p1",
    "name": "Ann",
    "token_hash": "secret-hash",
    "created_at": AT,
    "key_digest": None,
}
INSERT_PLAYER = DirectStatement(sa.insert(players), [c.key for c in players.columns])
INSERT_EVENT = DirectStatement(sa.insert(game_events), [c.key for c in game_events.columns])


def _event(seq: int, game_id: str = "g1", cause: Any = None) -> dict[str, Any]:
    return {
        "game_id": game_id,
        "seq": seq,
        "type": "CardPlayed",
        "public": {"card": "needy-4", "n": seq},
        "private": {"0": {"hand": ["a"]}},
        "created_at": AT,
        "cause": cause,
    }


def _game() -> dict[str, Any]:
    return {
        "id": "g1",
        "host": "p1",
        "status": "running",
        "seat_count": 3,
        "options": {"format": "singleton"},
        "seed": "s",
        "rat_choice": None,
        "seats": [{"playerId": "p1"}, None, None],
        "state": None,
        "version": 1,
        "last_seq": 0,
        "created_at": AT,
        "updated_at": AT,
        "bot_turn": False,
        "salt": "",
        "practice": False,
        "deadline": None,
        "clock": None,
        "quick_play": None,
        "fill_bots_at": None,
        "rematch_id": None,
        "reserved": None,
        "abandon_at": None,
        "visibility": "public",
        "invite_code": None,
        "invitations": None,
        "rated": False,
    }


@pytest.fixture
def conn(engine: sa.Engine) -> Any:
    with engine.connect() as c:
        for name in TABLES_CHILD_FIRST:
            c.execute(sa.delete(metadata.tables[name]))
        c.commit()
        yield c


def test_rows_read_back_through_core_as_written(conn: sa.Connection) -> None:
    assert INSERT_PLAYER.run(conn, [PLAYER]) == 1
    DirectStatement(sa.insert(games), [c.key for c in games.columns]).run(conn, [_game()])
    rows = [_event(1), _event(2, cause={"seat": 0, "command": {"playCard": "x"}})]
    assert INSERT_EVENT.run(conn, rows) == 2
    conn.commit()
    player = conn.execute(sa.select(players)).one()._mapping
    assert player["created_at"] == AT and player["created_at"].tzinfo is not None
    stored = conn.execute(sa.select(game_events).order_by(game_events.c.seq)).all()
    assert [(r.seq, r.public, r.private, r.cause) for r in stored] == [
        (1, {"card": "needy-4", "n": 1}, {"0": {"hand": ["a"]}}, None),
        (2, {"card": "needy-4", "n": 2}, {"0": {"hand": ["a"]}}, rows[1]["cause"]),
    ]
    assert stored[0].created_at == AT.astimezone(UTC)
    game = conn.execute(sa.select(games)).one()
    assert game.seats == [{"playerId": "p1"}, None, None] and game.state is None


def test_an_update_counts_the_rows_its_where_matched(conn: sa.Connection) -> None:
    INSERT_PLAYER.run(conn, [PLAYER])
    DirectStatement(sa.insert(games), [c.key for c in games.columns]).run(conn, [_game()])
    bump = DirectStatement(
        sa.update(games).where(games.c.id == sa.bindparam("w_id"), games.c.version == 1),
        ["version", "state"],
    )
    assert bump.run(conn, [{"w_id": "g1", "version": 2, "state": {"v": 1}}]) == 1
    assert bump.run(conn, [{"w_id": "g1", "version": 3, "state": {"v": 2}}]) == 0
    conn.commit()
    assert conn.execute(sa.select(games.c.version, games.c.state)).one() == (2, {"v": 1})


def test_writes_belong_to_the_connections_transaction(conn: sa.Connection) -> None:
    INSERT_PLAYER.run(conn, [PLAYER])
    assert conn.in_transaction()
    conn.rollback()
    assert conn.execute(sa.select(sa.func.count()).select_from(players)).scalar() == 0


def test_a_duplicate_key_is_sqlalchemys_integrity_error_with_parameters_hidden(
    conn: sa.Connection,
) -> None:
    INSERT_PLAYER.run(conn, [PLAYER])
    with pytest.raises(sa.exc.IntegrityError) as caught:
        INSERT_PLAYER.run(conn, [PLAYER])
    assert isinstance(caught.value.orig, conn.dialect.loaded_dbapi.Error)
    assert "secret-hash" not in str(caught.value)
    assert not caught.value.connection_invalidated


def test_no_rows_runs_nothing(conn: sa.Connection) -> None:
    assert INSERT_EVENT.run(conn, []) == 0
    assert not conn.in_transaction()


def test_a_row_without_a_column_value_is_refused_before_any_write(conn: sa.Connection) -> None:
    with pytest.raises(KeyError):
        INSERT_PLAYER.run(conn, [{k: v for k, v in PLAYER.items() if k != "name"}])
    assert conn.execute(sa.select(sa.func.count()).select_from(players)).scalar() == 0


def test_a_lost_connection_invalidates_it(database_url: str) -> None:
    """As Core does on PostgreSQL: the pool drops the connection, the next works."""
    with fresh_postgres(database_url) as url:
        upgrade(url)
        engine = make_engine(url)
        try:
            with engine.connect() as victim, engine.connect() as admin:
                pid = victim.execute(sa.text("SELECT pg_backend_pid()")).scalar()
                victim.rollback()
                admin.execute(sa.text("SELECT pg_terminate_backend(:p)"), {"p": pid})
                admin.commit()
                with pytest.raises(sa.exc.DBAPIError) as caught:
                    INSERT_PLAYER.run(victim, [PLAYER])
                assert caught.value.connection_invalidated
                assert victim.invalidated
            with engine.connect() as fresh:
                assert fresh.execute(sa.text("SELECT 1")).scalar() == 1
        finally:
            engine.dispose()


def test_a_select_reads_its_first_row_as_core_does(conn: sa.Connection) -> None:
    INSERT_PLAYER.run(conn, [PLAYER])
    DirectStatement(sa.insert(games), [c.key for c in games.columns]).run(conn, [_game()])
    INSERT_EVENT.run(conn, [_event(1, cause={"seat": 0, "command": {"pass": {}}})])
    conn.commit()
    by_seq = sa.select(game_events).where(
        game_events.c.game_id == sa.bindparam("g"), game_events.c.seq == sa.bindparam("s")
    )
    direct = DirectStatement(by_seq)
    for _ in range(2):  # the second read reuses what the first found of the result's shape
        row = direct.first(conn, {"g": "g1", "s": 1})
        core = conn.execute(by_seq, {"g": "g1", "s": 1}).one()._asdict()
        assert row == core
        assert row is not None and row["created_at"].tzinfo is not None
        assert isinstance(row["public"], dict) and row["cause"] == {
            "seat": 0,
            "command": {"pass": {}},
        }
    assert direct.first(conn, {"g": "g1", "s": 2}) is None


def test_a_select_reads_all_its_rows_as_core_does(conn: sa.Connection) -> None:
    INSERT_PLAYER.run(conn, [PLAYER])
    DirectStatement(sa.insert(games), [c.key for c in games.columns]).run(conn, [_game()])
    INSERT_EVENT.run(conn, [_event(s) for s in (1, 2, 3)])
    conn.commit()
    of_game = (
        sa.select(game_events)
        .where(game_events.c.game_id == sa.bindparam("g"))
        .order_by(game_events.c.seq)
    )
    direct = DirectStatement(of_game)
    for _ in range(2):
        rows = direct.all(conn, {"g": "g1"})
        assert rows == [r._asdict() for r in conn.execute(of_game, {"g": "g1"})]
        assert [r["seq"] for r in rows] == [1, 2, 3] and rows[0]["created_at"].tzinfo is not None
    assert direct.all(conn, {"g": "nope"}) == []
