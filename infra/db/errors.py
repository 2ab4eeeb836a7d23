"""Which database errors mean "another writer got there first"."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy.engine import Dialect
from sqlalchemy.exc import (
    DBAPIError,
    DisconnectionError,
    IntegrityError,
    OperationalError,
    StatementError,
)
from sqlalchemy.exc import TimeoutError as PoolTimeout

from domain.ports import WriteConflict

# PostgreSQL SQLSTATEs: unique_violation, serialization_failure, deadlock_detected.
_PG_LOST_RACE = frozenset({"23505", "40001", "40P01"})
# SQLite extended codes: CONSTRAINT_PRIMARYKEY, CONSTRAINT_UNIQUE, BUSY_SNAPSHOT.
_SQLITE_LOST_RACE = frozenset({1555, 2067, 517})


def is_lost_race(error: DBAPIError) -> bool:
    """A duplicate key or a serialization failure (not, say, a foreign key)."""
    orig = error.orig
    sqlstate = getattr(orig, "sqlstate", None)
    if sqlstate is not None:
        return sqlstate in _PG_LOST_RACE
    return getattr(orig, "sqlite_errorcode", None) in _SQLITE_LOST_RACE


@contextmanager
def conflicts_as_write_conflict(what: str) -> Iterator[None]:
    """Re-raise a lost race inside the block as :class:`WriteConflict`."""
    try:
        yield
    except (IntegrityError, OperationalError) as e:
        if is_lost_race(e):
            raise WriteConflict(f"{what}: {e.orig}") from e
        raise


_PG_FOREIGN_KEY = "23503"
_SQLITE_FOREIGN_KEY = 787  # SQLITE_CONSTRAINT_FOREIGNKEY


@contextmanager
def gone_as_write_conflict(what: str) -> Iterator[None]:
    """Re-raise a foreign key that a concurrent delete broke inside the block
    as :class:`WriteConflict`: the retry reads the world without the row."""
    try:
        yield
    except IntegrityError as e:
        orig = e.orig
        if getattr(orig, "sqlstate", None) == _PG_FOREIGN_KEY or (
            getattr(orig, "sqlite_errorcode", None) == _SQLITE_FOREIGN_KEY
        ):
            raise WriteConflict(f"{what}: {orig}") from e
        raise


# Transient failures: SQLite primary codes BUSY, LOCKED, READONLY, IOERR, FULL,
# CANTOPEN, PROTOCOL; PostgreSQL SQLSTATE classes 08 (connection exception),
# 53 (insufficient resources), 57 (operator intervention: shutdown, cancel).
_SQLITE_UNAVAILABLE = frozenset({5, 6, 8, 10, 13, 14, 15})
_PG_UNAVAILABLE = ("08", "53", "57")


def is_unavailable(error: BaseException) -> bool:
    """The database could not be reached or used for now (down, refused,
    timed out, connection lost, file unwritable or full): a retry may work.
    Not a bug such as a missing table. Lost races never get here: they became
    :class:`WriteConflict` first."""
    if isinstance(error, DisconnectionError | PoolTimeout):
        return True
    if not isinstance(error, DBAPIError):
        return False
    if error.connection_invalidated:
        return True
    if not isinstance(error, OperationalError):
        return False
    code = getattr(error.orig, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in _SQLITE_UNAVAILABLE
    sqlstate = getattr(error.orig, "sqlstate", None)  # None: failed on the client side
    return sqlstate is None or str(sqlstate)[:2] in _PG_UNAVAILABLE


def as_core_error(
    dialect: Dialect, sql: str, error: Exception, lost: bool, ismulti: bool = False
) -> StatementError:
    """The driver's ``error`` as Core raises it (``OperationalError``, ...,
    the driver's as ``orig``, parameters hidden); ``lost``: the connection
    is gone (``connection_invalidated``)."""
    return DBAPIError.instance(
        sql,
        None,
        error,
        dialect.loaded_dbapi.Error,
        hide_parameters=True,
        connection_invalidated=lost,
        dialect=dialect,
        ismulti=ismulti,
    )
