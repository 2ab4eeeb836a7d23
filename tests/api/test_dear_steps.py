"""Which operations' steps may wait their turn once dear (docs/decisions/0055):
a query's; never a mutation's (a move, bounded by the mutation rate, fans out
to its table at once)."""

from __future__ import annotations

from typing import Any

from infra.work_meter import METER, Meter
from tests.api.conftest import Client


async def _meter_of(client: Client, document: str, **variables: Any) -> Meter:
    """The request's meter after ``document`` ran as its one operation."""
    meter = Meter("10.0.0.1", None)
    token = METER.set(meter)
    try:
        result = await client.schema.execute(
            document, variable_values=variables, context_value=client.context()
        )
    finally:
        METER.reset(token)
    assert result.errors is None, result.errors
    return meter


async def test_a_querys_steps_may_wait_their_turn(client: Client) -> None:
    assert (await _meter_of(client, "{ __typename }")).demotable


async def test_a_mutations_steps_never_wait_their_turn(client: Client) -> None:
    document = "mutation($n: String!) { createPlayer(name: $n) { __typename } }"
    assert not (await _meter_of(client, document, n="ann")).demotable
