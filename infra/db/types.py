"""Column types that behave the same on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import JSON as PG_JSON
from sqlalchemy.engine import Dialect


def json_type(*, nullable: bool = False) -> sa.types.TypeEngine[Any]:
    """JSON on both. Plain ``json`` on PostgreSQL, not ``jsonb``: the server
    never looks inside these documents, and parsing a state into jsonb on
    every move costs more than it gives (docs/decisions/0015). A nullable
    column stores None as SQL NULL."""
    return sa.JSON(none_as_null=nullable).with_variant(PG_JSON(none_as_null=nullable), "postgresql")


class UtcDateTime(sa.TypeDecorator[datetime]):
    """An aware datetime, stored in UTC, read back aware in UTC.

    SQLite keeps no offset, so values go in as naive UTC there; a naive value
    is refused rather than guessed.
    """

    impl = sa.DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None or value.utcoffset() is None:
            raise ValueError(f"naive datetime {value!r}: only aware datetimes are stored")
        value = value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value.astimezone(UTC)
