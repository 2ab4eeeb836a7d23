"""Engines for SQLite (a file, or in memory for quick tests) and PostgreSQL.

SQLite: WAL, ``synchronous=NORMAL``, a busy timeout, foreign keys, and every
transaction starts with ``BEGIN IMMEDIATE`` (the pysqlite recipe: the driver's
own BEGIN is disabled and the dialect's ``do_begin`` emits ours), so writers
queue on the lock instead of failing to upgrade a read lock. [decision] Reads
take the write lock too: a unit of work does not know up front whether it will
write, and the lock is held only for one short transaction.
"""

from __future__ import annotations

import select
import time
from functools import partial
from pathlib import Path
from typing import Any

import orjson
import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.engine import URL, Dialect, Engine, make_url
from sqlalchemy.exc import DisconnectionError
from sqlalchemy.pool import ConnectionPoolEntry, QueuePool, StaticPool

from infra.db.batch import note_core_statement, send_before_core

BUSY_TIMEOUT_MS = 5_000
SQLITE_POOL_SIZE = 4  # the write lock serialises anyway; more connections only spin
PG_POOL_SIZE = 10
PG_MAX_OVERFLOW = 10
# Seconds for a new PostgreSQL connection: without it a partitioned network
# (SYNs or the handshake unanswered) holds a request, and a worker thread, for
# minutes; with it the request fails soon and can be retried.
PG_CONNECT_TIMEOUT_S = 5


PG_CONNECT_ARGS: dict[str, Any] = {
    "application_name": "mmk-server",
    "connect_timeout": PG_CONNECT_TIMEOUT_S,
    # TCP keepalives: a connection a NAT or firewall dropped while idle is
    # found dead within about a minute, not at its next use
    "keepalives": 1,
    "keepalives_idle": 30,
    "keepalives_interval": 10,
    "keepalives_count": 3,
}
"""Every PostgreSQL connection's options: the pool's and the async reads'
(infra/db/async_reads.py)."""


def _dumps(value: Any) -> str:
    """orjson: the JSON columns (state, events) are written on every move."""
    return orjson.dumps(value).decode()


def make_engine(url: str | URL, *, pool_size: int | None = None, echo: bool = False) -> Engine:
    """An engine for ``sqlite:///path``, ``sqlite://`` or ``postgresql+psycopg://...``."""
    u = make_url(url)
    backend = u.get_backend_name()
    if backend == "sqlite" and u.get_driver_name() == "pysqlite":
        return _sqlite(u, pool_size, echo)
    if backend == "postgresql":
        if u.drivername == "postgresql":
            u = u.set(drivername="postgresql+psycopg")
        if u.get_driver_name() == "psycopg":
            return _postgresql(u, pool_size, echo)
    raise ValueError(f"unsupported database URL: {u.render_as_string(hide_password=True)}")


def in_memory(u: URL) -> bool:
    """An SQLite URL of a database in memory (nothing to checkpoint)."""
    return u.database in (None, "", ":memory:") or u.query.get("mode") == "memory"


def _sqlite(u: URL, pool_size: int | None, echo: bool) -> Engine:
    memory = in_memory(u)
    common: dict[str, Any] = {
        "echo": echo,
        "hide_parameters": True,  # logs and errors never show a row's values (hands)
        "json_serializer": _dumps,
        "json_deserializer": orjson.loads,
        "connect_args": {"check_same_thread": False},
    }
    if memory:
        # One shared connection: for single-threaded tests only.
        engine = sa.create_engine(u, poolclass=StaticPool, **common)
    else:
        assert u.database is not None
        Path(u.database).expanduser().parent.mkdir(parents=True, exist_ok=True)
        engine = sa.create_engine(
            u,
            poolclass=QueuePool,
            pool_size=pool_size or SQLITE_POOL_SIZE,
            max_overflow=0,
            pool_timeout=30,
            **common,
        )
    _sqlite_hooks(engine, wal=not memory)
    return engine


def _sqlite_hooks(engine: Engine, *, wal: bool) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: ConnectionPoolEntry) -> None:
        dbapi_conn.isolation_level = None  # SQLAlchemy emits BEGIN, not the driver
        cur = dbapi_conn.cursor()
        try:
            if wal:
                cur.execute("PRAGMA journal_mode=WAL")
                cur.execute("PRAGMA wal_autocheckpoint=0")  # infra.db.checkpoint does it
            cur.execute("PRAGMA synchronous=NORMAL")
            cur.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
            cur.execute("PRAGMA foreign_keys=ON")
        finally:
            cur.close()

    # The dialect's BEGIN (a no-op for pysqlite) is ours: Core calls it on
    # every transaction's start and wraps its errors as it does a statement's.
    engine.dialect.do_begin = _begin_immediate  # type: ignore[method-assign,assignment]


def _begin_immediate(dbapi_conn: Any) -> None:
    cursor = dbapi_conn.cursor()
    try:
        cursor.execute("BEGIN IMMEDIATE")
    finally:
        cursor.close()


def _postgresql(u: URL, pool_size: int | None, echo: bool) -> Engine:
    engine = sa.create_engine(
        u,
        echo=echo,
        hide_parameters=True,
        json_serializer=_dumps,
        json_deserializer=orjson.loads,
        pool_size=pool_size or PG_POOL_SIZE,
        max_overflow=PG_MAX_OVERFLOW,
        pool_recycle=1_800,
        connect_args=PG_CONNECT_ARGS,
    )
    event.listen(engine, "checkin", _idle_from)
    event.listen(engine, "checkout", partial(_still_open, engine.dialect))
    event.listen(engine, "before_execute", send_before_core)
    event.listen(engine, "before_cursor_execute", note_core_statement)
    return engine


PING_AFTER_IDLE_S = 30.0
"""A connection idle longer is pinged on checkout (a round trip): a silent
drop (a NAT's idle timeout, a primary moved behind the same address) shows
no sign on the socket. A busy pool's connections are never idle that long."""
_IDLE_SINCE = "mmk.idle_since"


def _idle_from(dbapi_conn: Any, record: ConnectionPoolEntry) -> None:
    """On check-in: when it went idle, and never back in the pool in
    autocommit (a unit of work's reads run in it: docs/decisions/0071), or
    not back at all if that cannot be set."""
    record.info[_IDLE_SINCE] = time.monotonic()
    if dbapi_conn is None or not dbapi_conn.autocommit:
        return
    try:
        dbapi_conn.autocommit = False
    except Exception as e:
        record.invalidate(e)


def _still_open(
    dialect: Dialect, dbapi_conn: Any, record: ConnectionPoolEntry, _proxy: Any
) -> None:
    """The pool's check of a connection on checkout, without a round trip
    when it was in use lately (``pool_pre_ping`` spent one per transaction:
    issue #28, docs/decisions/0069). An idle connection's socket has
    nothing to read: if it has, the server closed it or is closing it (a
    restart, ``pg_terminate_backend``) and the pool takes another
    (SQLAlchemy's documented ``DisconnectionError`` on checkout). One idle
    past :data:`PING_AFTER_IDLE_S` is pinged, as the pre-ping did."""
    if dbapi_conn.closed or dbapi_conn.broken:
        raise DisconnectionError("the connection is closed")
    poll = select.poll()  # not select(): a busy process's descriptors pass 1024
    poll.register(dbapi_conn.fileno(), select.POLLIN)
    if poll.poll(0):
        raise DisconnectionError("the server closed the connection or is closing it")
    since = record.info.get(_IDLE_SINCE)
    if since is not None and time.monotonic() - since > PING_AFTER_IDLE_S:
        try:
            alive = dialect.do_ping(dbapi_conn)
        except Exception as e:
            raise DisconnectionError(f"the connection did not answer a ping: {e}") from e
        if not alive:
            raise DisconnectionError("the connection did not answer a ping")
