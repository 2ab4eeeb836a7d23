"""A transaction's statements sent together on PostgreSQL (issue #28,
docs/decisions/0069).

Each statement on PostgreSQL is a round trip: the transaction's worker
thread waits for the answer, then for the GIL again, while it holds its
pooled connection. A :class:`Batch` holds the statements whose answers are
not needed at once (a move's UPDATE, its events' INSERT, its "my games"
rows, its notifications and idempotency record) and sends them together in
psycopg's pipeline mode (``Connection.pipeline()``, a public API), with the
next statement that needs an answer or before the COMMIT. A ``then`` runs on
each answer: the game's conditional UPDATE checks its ``rowcount`` there. A
move with notifications is four round trips where it was thirteen.

The unit of work opens one per PostgreSQL transaction and keeps it in its
``Connection.info`` under :data:`BATCH`; :class:`~infra.db.direct.DirectStatement`
and, through the engine's ``before_execute`` event, every Core statement send
what waits first, so a transaction always reads its own writes. Errors of a
batched statement are raised when it is sent, as Core's (``IntegrityError``,
...), so a lost race is still :class:`~domain.ports.WriteConflict`. SQLite
(no round trips) runs every statement at once, as before.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from contextlib import suppress
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import sqlalchemy as sa

from domain.ports import WriteConflict
from infra.db.errors import as_core_error, conflicts_as_write_conflict

BATCH = "mmk.batch"
Then = Callable[[Any], None]
"""Called with a statement's cursor once its answer has arrived."""


@dataclass(slots=True)
class _Queued:
    sql: str
    params: Sequence[Any]  # one set of parameters per row
    then: Then | None


class Batch:
    """The statements of one transaction waiting to be sent."""

    def __init__(self, conn: sa.Connection | None = None) -> None:
        self._queue: list[_Queued] = []
        self.round_trips = 0  # sent here, or run alone (DirectStatement)
        # the connection, its psycopg connection in autocommit until the
        # first statement that may write (see infra/db/uow.py)
        self._conn = conn
        self.wrote = False

    def note(self, sql: str) -> bool:
        """``sql`` is about to run or to wait here: the transaction begins
        with the first statement that is not a plain SELECT (in a batch,
        its BEGIN goes with it); the reads before it ran in autocommit.
        Whether it begins with ``sql``."""
        if self.wrote or reads_only(sql):
            return False
        self.wrote = True
        conn = self._conn
        if conn is None or conn.invalidated:
            return False
        driver = conn.connection.dbapi_connection
        if driver is None or not driver.autocommit:
            return False
        try:
            driver.autocommit = False
        except conn.dialect.loaded_dbapi.Error as e:  # a broken connection: as Core's
            raise _as_core(conn, driver, e) from e
        return True

    def __len__(self) -> int:
        return len(self._queue)

    def add(self, sql: str, params: Sequence[Any], then: Then | None = None) -> None:
        """``then`` only reads its cursor or queues (``DirectStatement.later``):
        it runs inside the pipeline, where a Core statement would read
        nothing; what it queues goes in the next turn of the same send."""
        self.note(sql)
        self._queue.append(_Queued(sql, params, then))

    def clear(self) -> None:
        self._queue.clear()

    def send(self, conn: sa.Connection) -> None:
        """Send what waits: one round trip, or one more for what a check
        (a ``then``) queued. Errors are raised as Core's, a lost race as
        ``WriteConflict``; a check's ``WriteConflict`` (the game moved on)
        wins over the errors of the statements after it (its "my games"
        rows, say)."""
        if not self._queue:
            return
        if not conn.in_transaction():
            conn.begin()  # as Core's autobegin would
        driver = conn.connection.driver_connection
        assert driver is not None
        driver_error = conn.dialect.loaded_dbapi.Error
        failure: BaseException | None = None
        try:
            manager = driver.pipeline()
            pipeline = manager.__enter__()
        except driver_error as e:
            self._queue.clear()
            raise _as_core(conn, driver, e) from e
        try:
            while self._queue:
                queued, self._queue = self._queue, []
                sent: list[tuple[_Queued, Any]] = []
                self.round_trips += 1
                try:  # psycopg may read answers while it sends: errors come here too
                    for q in queued:
                        sent.append((q, _execute(driver, q)))
                    pipeline.sync()
                except driver_error as e:
                    raise _checked(sent) or _as_core(conn, driver, e) from e
                for q, cursor in sent:
                    if q.then is not None:
                        q.then(cursor)  # may queue more: sent in the next turn
        except driver_error as e:
            failure = _as_core(conn, driver, e)
        except BaseException as e:  # a check's WriteConflict
            failure = e
        finally:
            try:
                manager.__exit__(None, None, None)
            except driver_error as e:  # the pipeline aborted: the failure says why
                failure = failure or _as_core(conn, driver, e)
            if driver.pgconn.pipeline_status and not conn.invalidated:
                conn.invalidate()  # never back to the pool in pipeline mode
        if failure is not None:
            self._queue.clear()
            with conflicts_as_write_conflict("a batch of statements"):
                raise failure


def _checked(sent: list[tuple[_Queued, Any]]) -> BaseException | None:
    """After a failed send: the first check that fails on the answers that
    came before the failure (a conflict explains what follows it)."""
    for q, cursor in sent:
        if q.then is None or cursor.rowcount < 0:
            continue
        try:
            q.then(cursor)
        except WriteConflict as conflict:
            return conflict
        except Exception:  # only a conflict explains the failure
            continue
    return None


def _execute(driver: Any, q: _Queued) -> Any:
    cursor = driver.cursor()
    if len(q.params) == 1:
        cursor.execute(q.sql, q.params[0])
    else:
        cursor.executemany(q.sql, q.params)
    return cursor


def _as_core(conn: sa.Connection, driver: Any, e: Any) -> BaseException:
    """The driver's error as Core raises it; a lost connection invalidated."""
    dialect = conn.dialect
    lost = dialect.is_disconnect(e, driver, None)
    error: BaseException = as_core_error(dialect, "a batch of statements", e, lost)
    if lost:
        with suppress(Exception):
            conn.invalidate(e)
    return error


def batch_of(conn: sa.Connection) -> Batch | None:
    """The batch of the transaction on ``conn``, if it has one (PostgreSQL)."""
    found = conn.info.get(BATCH)
    return found if isinstance(found, Batch) else None


def settle(conn: sa.Connection) -> None:
    """Send what waits on ``conn`` (nothing without a batch)."""
    batch = batch_of(conn)
    if batch is not None and len(batch):
        batch.send(conn)


def send_before_core(conn: sa.Connection, *_: object) -> None:
    """The engine's ``before_execute`` listener: a Core statement reads
    what its transaction wrote."""
    settle(conn)


def note_core_statement(conn: sa.Connection, _cursor: object, statement: str, *_: object) -> None:
    """The engine's ``before_cursor_execute`` listener: a Core statement
    that may write is noted on its transaction's batch."""
    batch = batch_of(conn)
    if batch is not None:
        batch.note(statement)


@lru_cache(maxsize=1024)
def reads_only(sql: str) -> bool:
    """A plain SELECT: no row lock (``FOR UPDATE``, ``FOR SHARE``, ...), no
    advisory lock, no write. Anything else counts as a write (the safe
    side: it runs in the transaction)."""
    upper = sql.upper()
    return upper.lstrip().startswith("SELECT") and _LOCKS.search(upper) is None


_LOCKS = re.compile(r"\bFOR\s+(UPDATE|NO\s+KEY\s+UPDATE|SHARE|KEY\s+SHARE)\b|ADVISORY")
"""What makes a SELECT take a lock, whatever the white space."""
