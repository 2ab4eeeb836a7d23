"""Which driver errors count as a lost race (WriteConflict)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from sqlalchemy.exc import IntegrityError, OperationalError

from domain.ports import WriteConflict
from infra.db.errors import conflicts_as_write_conflict, is_lost_race


@dataclass
class PgError(Exception):
    sqlstate: str


@dataclass
class SqliteError(Exception):
    sqlite_errorcode: int


@pytest.mark.parametrize(
    ("orig", "lost"),
    [
        (PgError("23505"), True),  # unique_violation
        (PgError("40001"), True),  # serialization_failure
        (PgError("40P01"), True),  # deadlock_detected
        (PgError("23503"), False),  # foreign_key_violation: a bug, not a race
        (SqliteError(1555), True),  # CONSTRAINT_PRIMARYKEY
        (SqliteError(2067), True),  # CONSTRAINT_UNIQUE
        (SqliteError(517), True),  # BUSY_SNAPSHOT
        (SqliteError(787), False),  # CONSTRAINT_FOREIGNKEY
        (SqliteError(5), False),  # BUSY after the timeout: overload, not a race
    ],
)
def test_lost_races(orig: Exception, lost: bool) -> None:
    cls = IntegrityError if isinstance(orig, PgError) else OperationalError
    error = cls("INSERT ...", {}, orig)
    assert is_lost_race(error) is lost
    expected = WriteConflict if lost else cls
    with pytest.raises(expected), conflicts_as_write_conflict("test"):
        raise error
