"""With introspection off, errors suggest no names ("Did you mean 'hand'?"
would tell the schema one guess at a time): validation and the coercion of
variables both hide them (graphql-core's ``hide_suggestions``), over HTTP
and WebSockets alike (issue #14, item 6)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from strawberry.subscriptions import GRAPHQL_TRANSPORT_WS_PROTOCOL, GRAPHQL_WS_PROTOCOL

from api.graphql.schema import build_schema
from infra.settings import Settings
from tests.api.conftest import Client
from tests.api.http_view import view_of
from tests.api.ws_view import ViewSocket

SUGGESTS = "Did you mean"
# (document, variables): each draws a suggestion from graphql-core by default
GUESSES: list[tuple[str, dict[str, Any] | None]] = [
    ("{ me { hnd } }", None),  # a field
    ("{ gam(id: 1) { id } }", None),  # a root field
    ('{ game(idd: "g") { id } }', None),  # an argument
    ("{ games(status: LOBB) { __typename } }", None),  # an enum value in the document
    ("query($s: GameStatu) { games(status: $s) { __typename } }", None),  # a type
    ("query($s: GameStatus) { games(status: $s) { __typename } }", {"s": "LOBB"}),  # a variable
    (
        "mutation($i: CreateGameInput!) { createGame(input: $i) { __typename } }",
        {"i": {"seatCont": 3}},  # an input field
    ),
    ('subscription { gameEvent(gameId: "g") { seq } }', None),
]


def messages(errors: Any) -> str:
    return " | ".join(e.message if hasattr(e, "message") else e["message"] for e in errors)


@pytest.mark.parametrize(("document", "variables"), GUESSES)
async def test_no_suggestion_without_introspection(
    document: str, variables: dict[str, Any] | None
) -> None:
    shown = await build_schema(introspection=True).execute(document, variable_values=variables)
    assert shown.errors and SUGGESTS in messages(shown.errors), shown.errors
    hidden = await build_schema(introspection=False).execute(document, variable_values=variables)
    assert hidden.errors, hidden
    assert SUGGESTS not in messages(hidden.errors), hidden.errors
    assert all(e.extensions and e.extensions["code"] == "BAD_INPUT" for e in hidden.errors)


async def test_no_suggestion_over_http(client: Client) -> None:
    for introspection, suggested in ((True, True), (False, False)):
        view = view_of(client.h, Settings(introspection=introspection))
        async with httpx.AsyncClient(
            transport=httpx.ASGITransport(app=view), base_url="http://test"
        ) as http:
            r = await http.post("/graphql", json={"query": "{ me { hnd } }"})
        assert r.status_code == 200, r.text
        assert (SUGGESTS in messages(r.json()["errors"])) is suggested, r.text


@pytest.mark.parametrize("protocol", [GRAPHQL_TRANSPORT_WS_PROTOCOL, GRAPHQL_WS_PROTOCOL])
async def test_no_suggestion_over_websockets(client: Client, protocol: str) -> None:
    view = view_of(client.h, Settings(introspection=False))
    start = "subscribe" if protocol == GRAPHQL_TRANSPORT_WS_PROTOCOL else "start"
    query = 'subscription { gameEvent(gameId: "g") { seq } }'
    async with ViewSocket(view, protocol) as ws:
        await ws.init()
        await ws.send({"type": start, "id": "1", "payload": {"query": query}})
        error = await ws.receive()
    assert error["type"] == "error", error
    payload = error["payload"]
    errors = payload if isinstance(payload, list) else [payload]
    assert "gameEvent" in messages(errors) and SUGGESTS not in messages(errors), errors
