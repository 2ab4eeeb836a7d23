"""Reads that need no transaction, on PostgreSQL without a worker thread
(issue #28, docs/decisions/0073).

A few psycopg ``AsyncConnection``s in autocommit, opened on first use by the
event loop that reads. Each read is one statement: at READ COMMITTED it sees
what was committed when it began, as a unit of work's reads before its
first write do (docs/decisions/0071).

A connection idle longer than :data:`~infra.db.engine.PING_AFTER_IDLE_S` is
closed rather than trusted (a NAT may have dropped it silently); one that
turns out lost when used after a rest (a restart, ``pg_terminate_backend``)
is dropped and the read tried once more on a new one, as the pool's check
on checkout would. Failures are raised as Core's
(:func:`~infra.db.errors.as_core_error`), so the API answers them as it does
the pool's (``INTERNAL``, ``retryable: true``, when the database is away).
A read waits at most :data:`SLOT_TIMEOUT_S` for a connection, as a unit of
work waits for the pool's. A read cancelled mid-statement closes its
connection: its state is unknown.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from typing import Any

from psycopg import AsyncConnection
from sqlalchemy.engine import Engine
from sqlalchemy.exc import DBAPIError, DisconnectionError
from sqlalchemy.exc import TimeoutError as PoolTimeout

from infra.db.direct import DirectStatement
from infra.db.engine import PG_CONNECT_ARGS, PING_AFTER_IDLE_S
from infra.db.errors import as_core_error
from infra.work_meter import detached

READERS = 4
"""Connections at most, per process: a read holds one for one round trip."""
SLOT_TIMEOUT_S = 30.0
"""Seconds a read waits for a connection (the pool's ``pool_timeout``)."""


class AsyncReads:
    """One-statement reads on the engine's PostgreSQL, in the event loop."""

    def __init__(self, engine: Engine, size: int = READERS) -> None:
        if engine.dialect.name != "postgresql":
            raise ValueError("async reads serve PostgreSQL only")
        self._dialect = engine.dialect
        _, params = engine.dialect.create_connect_args(engine.url)
        self._params: dict[str, Any] = {**params, **PG_CONNECT_ARGS, "autocommit": True}
        self._size = size
        self._slots = asyncio.Semaphore(size)
        # each idle connection, when it went idle, and its event loop
        self._idle: list[tuple[AsyncConnection[Any], float, asyncio.AbstractEventLoop]] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._closing: set[asyncio.Task[None]] = set()
        self._closed = False
        self.opened = 0  # connections opened so far

    async def first(
        self, statement: DirectStatement, values: Mapping[str, Any]
    ) -> dict[str, Any] | None:
        """The statement's first row (:meth:`DirectStatement.first`), or None."""
        slots = self._here()
        try:
            async with asyncio.timeout(SLOT_TIMEOUT_S):
                await slots.acquire()
        except TimeoutError as e:
            raise PoolTimeout(f"no connection for a read within {SLOT_TIMEOUT_S:.0f} s") from e
        try:
            conn, rested = self._take()
            if conn is None:
                conn = await self._connect()
            try:
                found = await statement.first_async(conn, self._dialect, values)
            except DBAPIError as e:
                if not e.connection_invalidated:
                    self._give_back(conn)  # a failed statement leaves autocommit as it was
                    raise
                self._discard(conn)
                if not rested:
                    raise
                conn = await self._connect()  # lost while idle: once more, on a new one
                try:
                    found = await statement.first_async(conn, self._dialect, values)
                except BaseException:
                    self._discard(conn)
                    raise
            except BaseException:
                self._discard(conn)
                raise
            self._give_back(conn)
            return found
        finally:
            slots.release()

    async def aclose(self) -> None:
        self._closed = True
        idle, self._idle = self._idle, []
        for conn, _, _ in idle:
            self._discard(conn)
        if self._closing:
            await asyncio.gather(*self._closing, return_exceptions=True)

    def _here(self) -> asyncio.Semaphore:
        """The running loop's slots: another loop's connections (a test's
        earlier loop) serve no more, nor does its semaphore."""
        loop = asyncio.get_running_loop()
        if loop is not self._loop:
            for conn, _, _ in self._idle:
                conn.pgconn.finish()  # closed at once: their loop may be gone
            self._idle, self._loop = [], loop
            self._slots = asyncio.Semaphore(self._size)
        return self._slots

    def _take(self) -> tuple[AsyncConnection[Any] | None, bool]:
        """An idle connection still worth trying (and that it was idle)."""
        now = time.monotonic()
        while self._idle:
            conn, since, _ = self._idle.pop()
            if conn.closed or conn.broken or now - since > PING_AFTER_IDLE_S:
                self._discard(conn)
                continue
            return conn, True
        return None, False

    def _give_back(self, conn: AsyncConnection[Any]) -> None:
        loop = asyncio.get_running_loop()
        if self._closed or conn.broken or loop is not self._loop:
            self._discard(conn)  # (a test's loop changed while it read)
        else:
            self._idle.append((conn, time.monotonic(), loop))

    async def _connect(self) -> AsyncConnection[Any]:
        if self._closed:  # the server is stopping: as the database away
            raise DisconnectionError("the server's async reads are closed")
        try:
            conn = await AsyncConnection.connect(**self._params)
        except self._dialect.loaded_dbapi.Error as e:
            raise as_core_error(self._dialect, "connect", e, lost=False) from e
        self.opened += 1
        return conn

    def _discard(self, conn: AsyncConnection[Any]) -> None:
        """Close it in the background (a cancelled read cannot wait for it)."""
        if conn.closed:
            return
        task = detached(_quietly_closed(conn))  # the server's work, not the caller's
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)


async def _quietly_closed(conn: AsyncConnection[Any]) -> None:
    try:
        await conn.close()
    except Exception:  # closing what is already broken: nothing to tell
        return
