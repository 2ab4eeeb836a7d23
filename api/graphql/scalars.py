"""Custom scalars: ``DateTime`` as the GraphQL Scalars ``date-time`` spec
(andimarek) says, announced with ``@specifiedBy`` so that clients and code
generators know the exact format."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import strawberry
from graphql import GraphQLError
from strawberry.types.scalar import ScalarDefinition

DATE_TIME_SPEC = "https://scalars.graphql.org/andimarek/date-time"

_DATE_TIME = re.compile(
    r"\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}\.\d{3}(?:[Zz]|[+-]\d{2}:\d{2})", re.ASCII
)
"""RFC 3339 ``date-time`` refined by the spec: exactly three fraction digits
(milliseconds) and an offset (``Z`` or ``+hh:mm``)."""


def serialize_date_time(value: datetime) -> str:
    """``2026-11-29T12:00:00.123Z``: UTC, milliseconds, ``Z`` (the spec's
    result format). A naive datetime has no instant: refused, never guessed."""
    if not isinstance(value, datetime) or value.utcoffset() is None:
        raise ValueError(f"DateTime needs an aware datetime, not {value!r}")
    text = value.astimezone(UTC).isoformat(timespec="milliseconds")
    return text.removesuffix("+00:00") + "Z"


def parse_date_time(value: object) -> datetime:
    """Every string the spec accepts (``t``/``z`` in either case, any offset
    but ``-00:00``); anything else is refused as a GraphQL error (a plain
    exception in a literal's parse would reach the client as INTERNAL)."""
    if not isinstance(value, str) or not _DATE_TIME.fullmatch(value):
        raise GraphQLError("DateTime is RFC 3339 with milliseconds and an offset")
    text = value.upper()
    if text.endswith("-00:00"):
        raise GraphQLError("DateTime does not take the offset -00:00")
    try:
        return datetime.fromisoformat(text)
    except ValueError:  # 2010-02-30, hour 24, offset hour 25, ...
        raise GraphQLError("DateTime names no real instant") from None


DateTime: ScalarDefinition = strawberry.scalar(
    name="DateTime",
    description="An instant: an RFC 3339 date-time in UTC with milliseconds, "
    'e.g. "2026-11-29T12:00:00.123Z".',
    specified_by_url=DATE_TIME_SPEC,
    serialize=serialize_date_time,
    parse_value=parse_date_time,
)

SCALARS: dict[object, ScalarDefinition] = {datetime: DateTime}
"""The schema's ``StrawberryConfig.scalar_map``: Python type -> scalar."""
