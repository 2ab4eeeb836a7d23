"""Switches and limits of the running app (its lifespan, the composition
root): MMK_INTROSPECTION, MMK_GRAPHIQL, subscriptions per WebSocket
connection, and the rate limits wired from the settings (HTTP and WebSocket,
with the client IP of the ASGI scope)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TypedDict

import httpx
import pytest
from starlette.applications import Starlette

from api.app import create_app
from api.graphql.view import MAX_SUBSCRIPTIONS_PER_CONNECTION
from infra.settings import Settings
from tests.adapters.app_support import AsgiWebSocket, gql, new_player

INTROSPECT = "{ __schema { queryType { name } } }"


class RateLimits(TypedDict, total=False):
    """The rate-limit settings (their keys are known, unlike ``**settings: Any``)."""

    rate_mutations_token: int
    rate_mutations_ip: int
    rate_subscriptions_token: int
    rate_subscriptions_ip: int


NO_LIMITS: RateLimits = {
    "rate_mutations_token": 0,
    "rate_mutations_ip": 0,
    "rate_subscriptions_token": 0,
    "rate_subscriptions_ip": 0,
}


@asynccontextmanager
async def app_with(
    tmp_path: Path, client_ip: str = "127.0.0.1", **settings: Any
) -> AsyncIterator[tuple[Starlette, httpx.AsyncClient]]:
    db = f"sqlite:///{tmp_path / 'x.sqlite3'}"
    app = create_app(Settings(database_url=db, **settings))
    transport = httpx.ASGITransport(app=app, client=(client_ip, 1234))
    async with (
        app.router.lifespan_context(app),
        httpx.AsyncClient(transport=transport, base_url="http://test") as client,
    ):
        yield app, client


@pytest.mark.parametrize("on", [True, False])
async def test_introspection_switch(tmp_path: Path, on: bool) -> None:
    async with app_with(tmp_path, introspection=on) as (_, client):
        body = await gql(client, INTROSPECT)
        if on:
            assert body["data"] == {"__schema": {"queryType": {"name": "Query"}}}
        else:
            assert body.get("data") is None
            assert {e["extensions"]["code"] for e in body["errors"]} == {"BAD_INPUT"}
            assert "introspection" in body["errors"][0]["message"].lower()
        assert (await gql(client, "{ cardCatalog { id } }"))["data"]["cardCatalog"]


@pytest.mark.parametrize("on", [True, False])
async def test_graphiql_switch(tmp_path: Path, on: bool) -> None:
    async with app_with(tmp_path, graphiql=on) as (_, client):
        r = await client.get("/graphql", headers={"accept": "text/html"})
        if on:
            assert r.status_code == 200 and "graphiql" in r.text.lower()
        else:
            assert r.status_code == 404 and "graphiql" not in r.text.lower()
        assert (await gql(client, "{ cardCatalog { id } }"))["data"]["cardCatalog"]


async def test_subscriptions_per_connection_are_capped(tmp_path: Path) -> None:
    async with app_with(tmp_path, **NO_LIMITS) as (app, _), AsgiWebSocket(app) as ws:
        await ws.send({"type": "connection_init", "payload": {}})
        assert (await ws.receive())["type"] == "connection_ack"
        lobby = {"query": "subscription { lobby { gameId } }"}
        for i in range(MAX_SUBSCRIPTIONS_PER_CONNECTION + 1):
            await ws.send({"id": str(i), "type": "subscribe", "payload": lobby})
        refused = await ws.receive()  # the live ones send nothing until a game changes
        assert refused["type"] == "error" and refused["id"] == str(MAX_SUBSCRIPTIONS_PER_CONNECTION)
        assert "limit" in refused["payload"][0]["message"].lower()
        await ws.send({"id": "0", "type": "complete"})  # one ends: room for one more
        await ws.send({"id": "again", "type": "subscribe", "payload": lobby})
        await ws.send({"type": "ping"})
        assert (await ws.receive())["type"] == "pong"  # no error came before it


async def test_rate_limits_are_wired_from_the_settings(tmp_path: Path) -> None:
    limits: RateLimits = {**NO_LIMITS, "rate_mutations_ip": 2, "rate_subscriptions_ip": 1}
    async with app_with(tmp_path, "203.0.113.9", **limits) as (app, client):
        await new_player(client)
        await new_player(client)
        create = 'mutation { createPlayer(name: "x") { __typename } }'
        r = await client.post("/graphql", json={"query": create})
        body = r.json()
        assert [e["extensions"]["code"] for e in body["errors"]] == ["RATE_LIMITED"]
        assert 29 < body["errors"][0]["extensions"]["retryAfter"] <= 30.0
        assert r.headers["retry-after"] == "30"
        assert (await gql(client, "{ cardCatalog { id } }"))["data"]  # queries are not limited
        async with AsgiWebSocket(app) as ws:
            await ws.send({"type": "connection_init", "payload": {}})
            assert (await ws.receive())["type"] == "connection_ack"
            lobby = {"query": "subscription { lobby { gameId } }"}
            await ws.send({"id": "1", "type": "subscribe", "payload": lobby})
            await ws.send({"id": "2", "type": "subscribe", "payload": lobby})
            refused = await ws.receive()
            assert (refused["id"], refused["type"]) == ("2", "next"), refused
            errors = refused["payload"]["errors"]
            assert [e["extensions"]["code"] for e in errors] == ["RATE_LIMITED"]
            assert await ws.receive() == {"id": "2", "type": "complete"}


async def test_no_limits_no_limiter(tmp_path: Path) -> None:
    async with app_with(tmp_path, **NO_LIMITS) as (_, client):
        for _ in range(5):
            await new_player(client)
        assert (await gql(client, "{ cardCatalog { id } }"))["data"]
