"""``DateTime`` follows the scalar spec it names with ``@specifiedBy``
(https://scalars.graphql.org/andimarek/date-time): results in UTC with
milliseconds and ``Z``; inputs as the spec's examples say."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone

import pytest
from graphql import GraphQLError, GraphQLScalarType

from api.graphql.scalars import DATE_TIME_SPEC, parse_date_time, serialize_date_time
from api.graphql.schema import schema
from tests.api.conftest import Client

RESULT = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z")


def test_date_time_is_specified_by_the_date_time_spec() -> None:
    scalar = schema._schema.get_type("DateTime")
    assert isinstance(scalar, GraphQLScalarType)
    assert scalar.specified_by_url == DATE_TIME_SPEC
    assert f'scalar DateTime @specifiedBy(url: "{DATE_TIME_SPEC}")' in schema.as_str()


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (datetime(2011, 8, 30, 13, 22, 53, 108912, UTC), "2011-08-30T13:22:53.108Z"),
        (datetime(2011, 8, 30, 13, 22, 53, tzinfo=UTC), "2011-08-30T13:22:53.000Z"),
        (
            datetime(2011, 8, 30, 16, 52, 53, 108000, timezone(timedelta(hours=3, minutes=30))),
            "2011-08-30T13:22:53.108Z",
        ),
    ],
)
def test_results_are_utc_with_milliseconds_and_z(value: datetime, text: str) -> None:
    assert serialize_date_time(value) == text


def test_a_naive_datetime_is_never_served() -> None:
    with pytest.raises(ValueError, match="aware"):
        serialize_date_time(datetime(2011, 8, 30, 13, 22, 53))


@pytest.mark.parametrize(
    "text",
    [
        "2011-08-30T13:22:53.108Z",
        "2011-08-30T13:22:53.108+00:00",
        "2011-08-30t13:22:53.108z",
        "2011-08-30T13:22:53.108-03:00",
        "2011-08-30T13:22:53.108+03:30",
    ],
)
def test_the_specs_valid_examples_are_accepted(text: str) -> None:
    parsed = parse_date_time(text)
    assert parsed.utcoffset() is not None
    assert serialize_date_time(parsed).endswith("Z")


@pytest.mark.parametrize(
    "text",
    [
        "2011-08-30T13:22:53.108-03",
        "2011-08-30T13:22:53.108912Z",
        "2011-08-30T24:22:53Z",
        "2011-08-30T13:22:53.108",
        "2011-08-30",
        "2011-08-30T13:22:53.108-00:00",
        "2011-08-30T13:22:53.108+03:30:15",
        "2011-08-30T24:22:53.108Z",
        "2010-02-30T21:22:53.108Z",
        "2010-02-11T21:22:53.108Z+25:11",
        "2010-02-11T21:22:53.108+25:11",
    ],
)
def test_the_specs_invalid_examples_are_refused(text: str) -> None:
    with pytest.raises(GraphQLError, match="DateTime"):  # the caller's mistake: BAD_INPUT
        parse_date_time(text)


async def test_served_times_have_the_specs_format(client: Client) -> None:
    token, _ = await client.new_player()
    data = await client.run("{ me { player { createdAt } } }", token)
    assert RESULT.fullmatch(data["me"]["player"]["createdAt"]), data
