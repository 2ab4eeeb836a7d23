"""A transaction's statements sent together on PostgreSQL (infra/db/batch.py,
issue #28): a move in a few round trips, its own writes read back, errors
as Core's; and the pool's checkout check without a round trip."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
import sqlalchemy as sa
from psycopg.pq import TransactionStatus

from domain.game.engine import to_act
from domain.game.legal import legal_actions
from domain.records import GameRecord
from domain.services.deps import Deps
from domain.services.games import NewGame, create_game, join_game, start_game
from domain.services.play import act
from domain.services.players import create_player
from domain.services.transaction import Request
from infra.bus.memory import InProcessBus
from infra.db import engine as engine_module
from infra.db.batch import reads_only
from infra.db.engine import make_engine
from infra.db.game_cache import GameCache
from infra.db.migrate import upgrade
from infra.db.uow import SqlUnitOfWork, SqlUnitOfWorkFactory
from tests.fakes import FakeClock, FakeIds
from tests.integration import records as r
from tests.integration.databases import fresh_postgres


@pytest.fixture(scope="module")
def pg_url(database_url: str) -> Iterator[str]:
    """A migrated PostgreSQL database of this module's own: round trips are
    PostgreSQL's (SQLite runs each statement at once), so these tests run
    on it alone."""
    with fresh_postgres(database_url) as url:
        upgrade(url)
        yield url


@pytest.fixture
def pg(pg_url: str) -> Iterator[SqlUnitOfWorkFactory]:
    engine = make_engine(pg_url)
    yield SqlUnitOfWorkFactory(engine)
    engine.dispose()


class _Counted(SqlUnitOfWorkFactory):
    """Units of work that note the round trips of each commit: the batches
    sent, the Core statements run one by one, and the COMMIT."""

    def __init__(self, base: SqlUnitOfWorkFactory) -> None:
        super().__init__(base.engine, GameCache())
        self.trips: list[int] = []
        self.core = 0
        sa.event.listen(base.engine, "before_cursor_execute", self._seen)

    def _seen(self, *_: Any) -> None:
        self.core += 1

    def close(self) -> None:
        sa.event.remove(self.engine, "before_cursor_execute", self._seen)

    def __call__(self) -> SqlUnitOfWork:
        factory = self

        class Counting(SqlUnitOfWork):
            def commit(self) -> None:
                before = factory.core
                super().commit()
                assert self._batch is not None
                factory.trips.append(self._batch.round_trips + factory.core - before + 1)

        return Counting(self.engine, self.cache)


def _terminate(engine: sa.Engine, pid: object) -> None:
    """End a backend from a connection of its own (not the pool's), and
    wait (up to 5 s) until it is gone."""
    admin = sa.create_engine(engine.url, poolclass=sa.pool.NullPool)
    try:
        with admin.connect() as c:
            c.exec_driver_sql("SELECT pg_terminate_backend(%s, 5000)", (pid,))
            c.commit()
    finally:
        admin.dispose()


def _game(uow: SqlUnitOfWorkFactory, game_id: str) -> GameRecord:
    with uow() as u:
        game = u.games.get(game_id)
    assert game is not None
    return game


def test_a_move_with_a_key_and_notices_is_five_round_trips(pg: SqlUnitOfWorkFactory) -> None:
    """The version read, the key's look-up, the game's writes with the
    notices' counters, the notices with the key's record, then the COMMIT:
    thirteen round trips before (a pre-ping, BEGIN and one per statement)."""
    counted = _Counted(pg)
    deps = Deps(counted, asyncio.to_thread, InProcessBus(1000), FakeClock(), FakeIds(), print)

    async def play() -> None:
        people = [(await create_player(deps, f"p{i}")).player.id for i in range(3)]
        game_id = (await create_game(deps, Request(people[0], "c", {}), NewGame(3))).game_id
        for pid in people[1:]:
            await join_game(deps, Request(pid, "j", {}), game_id, None)
        await start_game(deps, Request(people[0], "s", {}), game_id)
        for n in range(6):
            state = _game(counted, game_id).state
            assert state is not None
            seat = to_act(state)
            assert seat is not None
            counted.trips.clear()
            req = Request(people[seat], "act", {"n": n}, idempotency_key=f"k{n}")
            await act(deps, req, game_id, legal_actions(state, seat)[0])
            assert len(counted.trips) == 1  # one transaction
            assert counted.trips[0] <= 5, f"move {n}: {counted.trips[0]} round trips"

    try:
        asyncio.run(play())
    finally:
        counted.close()


def test_a_transaction_reads_what_it_wrote_before_it_is_sent(pg: SqlUnitOfWorkFactory) -> None:
    """A Core read sends what waits first (the engine's ``before_execute``)."""
    p = r.player()
    with pg() as u:
        u.players.add(p)  # waits in the batch
        u.games.add(r.lobby_game(p.id))
        assert u.players.get(p.id) == p  # Core: sent first, then read
        u.commit()
    with pg() as u:
        assert u.players.get(p.id) == p


def test_a_rolled_back_batch_leaves_nothing_and_a_clean_connection(
    pg: SqlUnitOfWorkFactory,
) -> None:
    p = r.player()
    with pg() as u:
        u.players.add(p)
        u.games.add(r.lobby_game(p.id))
    for _ in range(3):  # every pooled connection: no transaction left open
        with pg() as u:
            assert u.players.get(p.id) is None


@pytest.fixture
def one_connection(pg: SqlUnitOfWorkFactory) -> Iterator[SqlUnitOfWorkFactory]:
    """A pool of one: every checkout is the same connection until replaced."""
    engine = make_engine(pg.engine.url, pool_size=1)
    yield SqlUnitOfWorkFactory(engine)
    engine.dispose()


def _pid(engine: sa.Engine) -> int:
    with engine.connect() as c:
        pid: int = c.exec_driver_sql("SELECT pg_backend_pid()").scalar_one()
    return pid


def test_a_connection_the_server_closed_is_replaced_at_checkout(
    one_connection: SqlUnitOfWorkFactory,
) -> None:
    """No pre-ping (a round trip per transaction): an idle connection the
    server ended (a restart, ``pg_terminate_backend``) has something to
    read, and the pool takes a fresh one; the transaction never sees it."""
    uow = one_connection
    pid = _pid(uow.engine)
    assert _pid(uow.engine) == pid  # the pool of one hands out the same
    _terminate(uow.engine, pid)  # waits for the backend to be gone
    p = r.player()
    with uow() as u:
        u.players.add(p)
        u.commit()
    assert _pid(uow.engine) != pid
    with uow() as u:
        assert u.players.get(p.id) == p


def test_a_connection_idle_for_long_is_pinged_and_replaced_if_dead(
    one_connection: SqlUnitOfWorkFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A silent drop (a NAT's idle timeout) shows nothing on the socket: a
    connection idle past ``PING_AFTER_IDLE_S`` is pinged first, and one
    that does not answer is replaced."""
    uow = one_connection
    pid = _pid(uow.engine)
    monkeypatch.setattr(engine_module, "PING_AFTER_IDLE_S", 0.0)
    pings: list[object] = []
    real_ping = uow.engine.dialect.do_ping

    def first_fails(dbapi_conn: Any) -> bool:
        pings.append(dbapi_conn)
        if len(pings) == 1:
            raise OSError("no answer")
        return real_ping(dbapi_conn)

    monkeypatch.setattr(uow.engine.dialect, "do_ping", first_fails)
    p = r.player()
    with uow() as u:
        u.players.add(p)
        u.commit()
    assert len(pings) == 1  # the idle one; its replacement is new, not pinged
    assert _pid(uow.engine) != pid
    with uow() as u:
        assert u.players.get(p.id) == p


def test_a_lost_connection_mid_batch_invalidates_it(pg: SqlUnitOfWorkFactory) -> None:
    with pg() as u:
        conn = u._live()
        pid = conn.exec_driver_sql("SELECT pg_backend_pid()").scalar()
        u.players.add(r.player())  # waits in the batch
        _terminate(pg.engine, pid)
        with pytest.raises(sa.exc.DBAPIError) as caught:
            u.commit()
        assert caught.value.connection_invalidated


def _status(u: SqlUnitOfWork) -> TransactionStatus:
    """The server's view of the unit of work's connection."""
    driver = u._live().connection.driver_connection
    assert driver is not None
    return TransactionStatus(driver.info.transaction_status)


def test_a_unit_of_work_that_only_reads_opens_no_transaction(
    one_connection: SqlUnitOfWorkFactory,
) -> None:
    """Its SELECTs run in autocommit: no BEGIN, no ROLLBACK, so psycopg keeps
    the statements it prepared (a ROLLBACK makes it DEALLOCATE ALL)."""
    p = r.player()
    with one_connection() as u:
        u.players.add(p)
        u.commit()
    for _ in range(8):  # psycopg prepares a statement on its fifth run
        with one_connection() as u:
            assert u.players.get(p.id) == p  # Core
            assert u.games.get("no-such-game") is None  # direct
            assert _status(u) is TransactionStatus.IDLE
    with one_connection.engine.connect() as c:  # the same connection: a pool of one
        driver = c.connection.driver_connection
        assert driver is not None and not driver.autocommit  # back as it came
        prepared = c.exec_driver_sql("SELECT count(*) FROM pg_prepared_statements").scalar_one()
        c.rollback()
        driver.autocommit = True  # as a unit of work that failed half-way would leave it
    assert prepared >= 2
    with one_connection.engine.connect() as c:  # out of autocommit on check-in
        driver = c.connection.driver_connection
        assert driver is not None and not driver.autocommit


def test_the_first_write_or_row_lock_begins_the_transaction(
    one_connection: SqlUnitOfWorkFactory,
) -> None:
    """Reads first, then a write: one transaction from the write on, rolled
    back whole when not committed; a locking read holds its lock to the end."""
    p, q = r.player(), r.player()
    with one_connection() as u:
        u.players.add(p)
        u.commit()
    with one_connection() as u:
        assert u.players.get(p.id) == p
        assert _status(u) is TransactionStatus.IDLE
        u.players.add(q)  # waits in the batch: its BEGIN goes with it
        assert u.players.get(q.id) == q  # sent first, then read, in the transaction
        assert _status(u) is TransactionStatus.INTRANS
    with one_connection() as u:
        assert u.players.get(q.id) is None  # never committed
        u.players.claim(p.id)  # SELECT ... FOR NO KEY UPDATE
        assert _status(u) is TransactionStatus.INTRANS


@pytest.mark.parametrize(
    ("sql", "plain"),
    [
        ("SELECT games.version FROM games WHERE games.id = %(id)s", True),
        ("  select 1", True),
        ("SELECT id FROM games WHERE id = %(id)s FOR UPDATE", False),
        ("SELECT players.id FROM players FOR KEY SHARE", False),
        ("SELECT id FROM games\nFOR  NO KEY UPDATE", False),
        ("SELECT id FROM games WHERE f(x) FOR\tSHARE", False),
        ("SELECT format FROM games", True),
        ("SELECT pg_advisory_xact_lock(1)", False),
        ("WITH x AS (UPDATE games SET version = 1 RETURNING id) SELECT id FROM x", False),
        ("INSERT INTO players (id) VALUES (%(id)s)", False),
        ("UPDATE games SET version = 2", False),
    ],
)
def test_only_a_plain_select_runs_before_the_transaction(sql: str, plain: bool) -> None:
    assert reads_only(sql) is plain
