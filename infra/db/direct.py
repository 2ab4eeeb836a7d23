"""Writes run straight on the DBAPI cursor, inside the ``Connection``'s transaction.

A Core statement is compiled once per dialect, its bind processors looked up
once (``TypeEngine.bind_processor``: UTC datetimes, JSON through the engine's
serializer); a call only binds values and runs one ``execute`` or
``executemany``. Used for the statements every move runs (the game's version
read, its UPDATE, the events' INSERT, the idempotency key's look-up), where
SQLAlchemy's per-statement work weighs as much as SQLite's own. It relies on
SQLAlchemy internals: the one such exception in the server, with SQLAlchemy
pinned to a minor release (docs/decisions/0016).

On a failure, what the rest of the server relies on is kept: the driver's
error is raised as SQLAlchemy's (``IntegrityError``, ``OperationalError``,
... with the driver's error as ``orig``, parameters hidden) and a lost
connection invalidates its ``Connection``. Unlike Core, the pool's other
connections are not marked stale at once: its pre-ping finds them out on
checkout (PostgreSQL). Statements run here are not echoed by ``echo=True``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar
from weakref import WeakKeyDictionary

import sqlalchemy as sa
from sqlalchemy.engine import Dialect
from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.sql.expression import ClauseElement

from infra.db.batch import batch_of
from infra.db.errors import as_core_error

if TYPE_CHECKING:
    from psycopg import AsyncConnection

Processor = Callable[[Any], Any] | None
R = TypeVar("R")


_FROM_ROW = object()


def _nothing(cursor: Any) -> None:
    return None


def _processed(
    shape: tuple[tuple[str, ...], tuple[Processor, ...]], raw: Sequence[Any]
) -> dict[str, Any]:
    """A row by column key, its values as Core reads them."""
    keys, processors = shape
    return {k: v if p is None else p(v) for k, p, v in zip(keys, processors, raw, strict=True)}


@dataclass(slots=True)
class _Compiled:
    sql: str
    # each bind in the DBAPI's order: its name, the value the statement
    # carries (or _FROM_ROW) and its bind processor
    binds: tuple[tuple[str, Any, Processor], ...]
    positional: bool
    # a SELECT's column keys and result processors, found on its first run
    result: tuple[tuple[str, ...], tuple[Processor, ...]] | None = None

    def bind(self, values: Mapping[str, Any]) -> Sequence[Any] | dict[str, Any]:
        """The DBAPI parameters for one row of ``values`` (by bind name)."""
        bound = []
        for name, fixed, process in self.binds:
            value = values[name] if fixed is _FROM_ROW else fixed
            bound.append(value if process is None else process(value))
        if self.positional:
            return bound
        return {name: value for (name, _, _), value in zip(self.binds, bound, strict=True)}


class DirectStatement:
    """``statement`` (an INSERT, UPDATE or SELECT) with the column values
    ``keys`` (every row passes each of them, and each ``bindparam`` without
    a value); values written in the statement itself are bound as they are."""

    def __init__(self, statement: ClauseElement, keys: Sequence[str] = ()) -> None:
        self._statement = statement
        self._keys = list(keys)
        self._by_dialect: WeakKeyDictionary[Dialect, _Compiled] = WeakKeyDictionary()

    def compiled(self, dialect: Dialect) -> _Compiled:
        # Two threads may compile at once: the same result, either one kept.
        found = self._by_dialect.get(dialect)
        if found is None:
            found = self._by_dialect[dialect] = self._compile(dialect)
        return found

    def _compile(self, dialect: Dialect) -> _Compiled:
        c = self._statement.compile(dialect=dialect, column_keys=self._keys)
        if not isinstance(c, SQLCompiler):
            raise TypeError(f"not a SQL statement: {self._statement!r}")
        if getattr(c, "escaped_bind_names", None) or getattr(c, "literal_execute_params", None):
            raise ValueError(f"not a plain statement for direct execution: {c}")
        names = (c.positiontup or ()) if c.positional else c.binds
        binds = tuple(
            (
                name,
                _FROM_ROW if (b := c.binds[name]).required else b.effective_value,
                b.type.dialect_impl(dialect).bind_processor(dialect),
            )
            for name in names
        )
        return _Compiled(str(c), binds, c.positional)

    def run(self, conn: sa.Connection, rows: Sequence[Mapping[str, Any]]) -> int:
        """Run for each row (one ``executemany`` for several); the rows matched."""
        if not rows:
            return 0
        count: int = self._execute(conn, rows, lambda cursor: cursor.rowcount)
        return count

    def later(
        self,
        conn: sa.Connection,
        rows: Sequence[Mapping[str, Any]],
        then: Callable[[Any], None] | None = None,
    ) -> None:
        """Run for each row when the transaction's batch is sent
        (infra/db/batch.py), then ``then(cursor)``; at once without a batch
        (SQLite). Its errors are raised when it is sent."""
        if not rows:
            return
        batch = batch_of(conn)
        if batch is None:
            self._execute(conn, rows, then or _nothing)
            return
        compiled = self.compiled(conn.dialect)
        batch.add(compiled.sql, [compiled.bind(r) for r in rows], then)

    def scalar(self, conn: sa.Connection, values: Mapping[str, Any]) -> Any:
        """The first column of the first row (an integer ``RETURNING``, as
        the driver reads it), or None."""

        def fetch(cursor: Any) -> Any:
            raw = cursor.fetchone()
            return None if raw is None else raw[0]

        return self._execute(conn, [values], fetch)

    def first(self, conn: sa.Connection, values: Mapping[str, Any]) -> dict[str, Any] | None:
        """For a SELECT: its first row by column key, values as Core reads
        them (``TypeEngine.result_processor``), or None."""

        def fetch(cursor: Any) -> dict[str, Any] | None:
            raw = cursor.fetchone()
            if raw is None:
                return None
            return _processed(self._result_shape(conn.dialect, cursor.description), raw)

        found: dict[str, Any] | None = self._execute(conn, [values], fetch)
        return found

    def all(self, conn: sa.Connection, values: Mapping[str, Any]) -> list[dict[str, Any]]:
        """For a SELECT: every row, as :meth:`first` reads one."""

        def fetch(cursor: Any) -> list[dict[str, Any]]:
            raw = cursor.fetchall()
            if not raw:
                return []
            shape = self._result_shape(conn.dialect, cursor.description)
            return [_processed(shape, r) for r in raw]

        found: list[dict[str, Any]] = self._execute(conn, [values], fetch)
        return found

    def _result_shape(
        self, dialect: Dialect, description: Sequence[Sequence[Any]]
    ) -> tuple[tuple[str, ...], tuple[Processor, ...]]:
        compiled = self.compiled(dialect)
        if compiled.result is None:  # once per dialect: the type codes never change
            columns = list(self._statement.selected_columns)  # type: ignore[attr-defined]
            processors = tuple(
                c.type.dialect_impl(dialect).result_processor(dialect, d[1])
                for c, d in zip(columns, description, strict=True)
            )
            compiled.result = (tuple(c.key for c in columns), processors)
        return compiled.result

    def _execute(
        self, conn: sa.Connection, rows: Sequence[Mapping[str, Any]], then: Callable[[Any], R]
    ) -> R:
        """Bind, run (``executemany`` for several rows), then ``then(cursor)``,
        in the Connection's transaction; driver errors raised as Core's."""
        dialect = conn.dialect
        compiled = self.compiled(dialect)
        params = [compiled.bind(r) for r in rows]
        batch = batch_of(conn)
        # sent with what waits: one round trip. Alone, it runs as below: a
        # pipeline for one statement costs more CPU than it saves (issue #28)
        if batch is not None and len(batch):
            answer: list[R] = []
            batch.add(compiled.sql, params, lambda cursor: answer.append(then(cursor)))
            batch.send(conn)
            return answer[0]
        if batch is not None:  # a BEGIN first, if it begins the transaction
            batch.round_trips += 2 if batch.note(compiled.sql) else 1
        if not conn.in_transaction():
            conn.begin()  # as Core's autobegin would (and SQLite's BEGIN IMMEDIATE)
        dbapi = conn.connection
        cursor = None
        try:
            cursor = dbapi.cursor()
            if len(params) == 1:
                cursor.execute(compiled.sql, params[0])
            else:
                cursor.executemany(compiled.sql, params)  # type: ignore[arg-type]
            return then(cursor)
        except dialect.loaded_dbapi.Error as e:
            lost = dialect.is_disconnect(e, dbapi, cursor)
            error = as_core_error(dialect, compiled.sql, e, lost, len(params) > 1)
            if lost:
                conn.invalidate(e)
            raise error from e
        finally:
            if cursor is not None:
                with suppress(dialect.loaded_dbapi.Error):
                    cursor.close()

    async def first_async(
        self, conn: AsyncConnection[Any], dialect: Dialect, values: Mapping[str, Any]
    ) -> dict[str, Any] | None:
        """:meth:`first` on an async psycopg connection in autocommit: a read
        that needs no transaction (infra/db/async_reads.py). ``dialect``:
        the engine's, for the statement's SQL and its values' processors."""
        compiled = self.compiled(dialect)
        try:
            async with conn.cursor() as cursor:
                await cursor.execute(compiled.sql, compiled.bind(values))
                raw = await cursor.fetchone()
                if raw is None:
                    return None
                shape = self._result_shape(dialect, cursor.description or ())
        except dialect.loaded_dbapi.Error as e:
            lost = conn.closed or conn.broken  # as the psycopg dialect's is_disconnect
            raise as_core_error(dialect, compiled.sql, e, lost) from e
        return _processed(shape, raw)
