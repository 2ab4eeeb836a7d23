"""A document of several operations runs only the one it names
(``operationName``); without a name it is refused ``BAD_INPUT`` and nothing
runs, over HTTP (POST and GET) and both WebSocket protocols (issue #22,
api/graphql/operation_choice.py, docs/decisions/0052). The trial's document
of 32 operations without a name ran its first."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from strawberry.subscriptions import GRAPHQL_TRANSPORT_WS_PROTOCOL, GRAPHQL_WS_PROTOCOL

from api.graphql.view import GameGraphQL
from tests.api.conftest import Client
from tests.api.http_view import view_of
from tests.api.ws_view import ViewSocket

# The first operation a mutation: run, it would create a player.
TWO = 'mutation Make { createPlayer(name: "first") { __typename } } query Ask { __typename }'
MANY = " ".join(f"query Q{i} {{ __typename }}" for i in range(32))
LEGACY, TRANSPORT = GRAPHQL_WS_PROTOCOL, GRAPHQL_TRANSPORT_WS_PROTOCOL
START = {LEGACY: "start", TRANSPORT: "subscribe"}


def assert_refused(errors: list[dict[str, Any]] | None) -> None:
    assert errors is not None and len(errors) == 1, errors
    assert errors[0]["extensions"]["code"] == "BAD_INPUT", errors
    assert "operationName" in errors[0]["message"], errors


@pytest.fixture
def view(client: Client) -> GameGraphQL:
    return view_of(client.h)


@pytest.mark.parametrize("document", [TWO, MANY], ids=["two", "thirty-two"])
async def test_several_operations_without_a_name_are_refused(client: Client, document: str) -> None:
    result = await client.schema.execute(document, context_value=client.context())
    assert result.data is None
    assert_refused([dict(e.formatted) for e in result.errors or []])


async def test_the_operation_named_runs_and_one_alone_needs_no_name(client: Client) -> None:
    result = await client.schema.execute(TWO, context_value=client.context(), operation_name="Ask")
    assert result.errors is None and result.data == {"__typename": "Query"}
    assert await client.run("query Only { ...F } fragment F on Query { __typename }")


@pytest.mark.parametrize("method", ["POST", "GET"])
async def test_over_http(view: GameGraphQL, method: str) -> None:
    document = TWO if method == "POST" else MANY  # GET runs no mutation anyway
    transport = httpx.ASGITransport(app=view)
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as http:
        if method == "POST":
            r = await http.post("/graphql", json={"query": document})
        else:
            r = await http.get(
                "/graphql", params={"query": document}, headers={"accept": "application/json"}
            )
        assert r.headers["content-type"] == "application/json"
        body = r.json()
        assert body.get("data") is None, body
        assert_refused(body["errors"])
        named = {"query": TWO, "operationName": "Ask"}
        r = await http.post("/graphql", json=named)
        assert r.json() == {"data": {"__typename": "Query"}}


@pytest.mark.parametrize("protocol", [LEGACY, TRANSPORT])
async def test_over_websockets(view: GameGraphQL, protocol: str) -> None:
    """The protocol's ``error`` message for the operation (graphql-ws: one
    error, graphql-transport-ws: a list); the connection stays open."""
    async with ViewSocket(view, protocol) as ws:
        await ws.init()
        for document in (TWO, MANY):
            await ws.send({"type": START[protocol], "id": "1", "payload": {"query": document}})
            answer = await ws.receive()
            assert (answer["type"], answer["id"]) == ("error", "1"), answer
            payload = answer["payload"]
            assert_refused(payload if isinstance(payload, list) else [payload])
        named = {"query": TWO, "operationName": "Ask"}
        await ws.send({"type": START[protocol], "id": "2", "payload": named})
        assert (await ws.receive())["payload"] == {"data": {"__typename": "Query"}}


@pytest.mark.parametrize("protocol", [LEGACY, TRANSPORT])
async def test_an_unknown_operation_name_is_refused_over_websockets(
    view: GameGraphQL, protocol: str
) -> None:
    """graphql-ws failed it as INTERNAL, with a traceback logged."""
    async with ViewSocket(view, protocol) as ws:
        await ws.init()
        payload = {"query": TWO, "operationName": "Nope"}
        await ws.send({"type": START[protocol], "id": "1", "payload": payload})
        answer = await ws.receive()
        assert answer["type"] == "error", answer
        errors = answer["payload"] if isinstance(answer["payload"], list) else [answer["payload"]]
        assert [e["extensions"]["code"] for e in errors] == ["BAD_INPUT"], errors
