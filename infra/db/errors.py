"""Which database errors mean "another writer got there first"."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy.exc import DBAPIError, IntegrityError, OperationalError

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
