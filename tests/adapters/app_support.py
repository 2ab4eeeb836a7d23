"""The real Starlette app in process, its lifespan run: httpx over
ASGITransport for HTTP, a bare ASGI driver for WebSockets, a game played to
its first move, and a reader of ``/metrics``."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from prometheus_client.parser import text_string_to_metric_families
from starlette.applications import Starlette
from starlette.types import ASGIApp, Message

from api.app import create_app
from infra.settings import Settings


@asynccontextmanager
async def running_app(tmp_path: Path) -> AsyncIterator[tuple[Starlette, httpx.AsyncClient]]:
    """The app with a fresh SQLite file; its lifespan builds and closes the container."""
    app = create_app(Settings(database_url=f"sqlite:///{tmp_path / 'x.sqlite3'}"))
    transport = httpx.ASGITransport(app=app)
    async with (
        app.router.lifespan_context(app),
        httpx.AsyncClient(transport=transport, base_url="http://test") as client,
    ):
        yield app, client


async def gql(
    client: httpx.AsyncClient,
    query: str,
    token: str | None = None,
    headers: dict[str, str] | None = None,
    **variables: Any,
) -> dict[str, Any]:
    sent = dict(headers or {})
    if token is not None:
        sent["authorization"] = f"Bearer {token}"
    r = await client.post("/graphql", json={"query": query, "variables": variables}, headers=sent)
    body: dict[str, Any] = r.json()
    return body


async def new_player(client: httpx.AsyncClient, name: str = "ann") -> str:
    q = "mutation($n: String!) { createPlayer(name: $n) { ... on NewPlayer { token } } }"
    token: str = (await gql(client, q, n=name))["data"]["createPlayer"]["token"]
    return token


CHANGE = "... on GameChange { version } ... on Refusal { code message }"


async def new_game(client: httpx.AsyncClient, token: str) -> str:
    q = (
        'mutation { createGame(input: {seatCount: 3, seed: "ops", practice: true, ratSeat: 0}) '
        "{ ... on GameChange { gameId } } }"
    )
    game: str = (await gql(client, q, token))["data"]["createGame"]["gameId"]
    return game


@dataclass(frozen=True)
class Played:
    token: str
    game: str
    card: str
    result: dict[str, Any]


async def play_first_card(
    client: httpx.AsyncClient, headers: dict[str, str] | None = None
) -> Played:
    """A 3-seat game with two bots; the caller (the Rat, first to lead) plays
    the first card ``legalActions`` offers."""
    token = await new_player(client)
    game = await new_game(client, token)
    for strategy in ("GREEDY", "RANDOM"):
        q = f"mutation($g: ID!) {{ addBot(gameId: $g, strategy: {strategy}) {{ {CHANGE} }} }}"
        assert "version" in (await gql(client, q, token, g=game))["data"]["addBot"]
    q = f"mutation($g: ID!) {{ startGame(gameId: $g) {{ {CHANGE} }} }}"
    assert "version" in (await gql(client, q, token, g=game))["data"]["startGame"]
    q = (
        "query($g: ID!) { game(id: $g) { ... on Game { version "
        "viewer { legalActions { mutation arguments } } } } }"
    )
    view = (await gql(client, q, token, g=game))["data"]["game"]
    action = view["viewer"]["legalActions"][0]
    assert action["mutation"] == "playCard"
    card: str = action["arguments"]["card"]
    q = (
        "mutation($g: ID!, $c: ID!, $v: Int) { playCard(gameId: $g, card: $c, "
        f"expectedVersion: $v) {{ {CHANGE} }} }}"
    )
    result = await gql(client, q, token, headers, g=game, c=card, v=view["version"])
    assert "version" in result["data"]["playCard"], result
    return Played(token, game, card, result)


async def metric(client: httpx.AsyncClient, name: str, **labels: str) -> float:
    """The sum of the ``name`` samples whose labels include ``labels`` (0 if none)."""
    text = (await client.get("/metrics")).text
    return sum(
        s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
        if s.name == name and labels.items() <= s.labels.items()
    )


async def eventually(check: Any, timeout: float = 5.0) -> None:
    """Wait until the coroutine function ``check`` returns true."""
    deadline = asyncio.get_running_loop().time() + timeout
    while not await check():
        assert asyncio.get_running_loop().time() < deadline, "timed out"
        await asyncio.sleep(0.02)


class AsgiWebSocket:
    """A WebSocket client speaking ASGI to the app directly (no server)."""

    def __init__(
        self,
        app: ASGIApp,
        subprotocol: str = "graphql-transport-ws",
        client: tuple[str, int] = ("test", 1),
    ) -> None:
        self.app, self.subprotocol, self.client = app, subprotocol, client
        self._to_app: asyncio.Queue[Message] = asyncio.Queue()
        self._from_app: asyncio.Queue[Message] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None
        self.accept: Message = {}

    async def __aenter__(self) -> AsgiWebSocket:
        scope = {
            "type": "websocket",
            "asgi": {"version": "3.0"},
            "scheme": "ws",
            "path": "/graphql",
            "raw_path": b"/graphql",
            "root_path": "",
            "query_string": b"",
            "headers": [(b"sec-websocket-protocol", self.subprotocol.encode())],
            "subprotocols": [self.subprotocol],
            "client": self.client,
            "server": ("test", 80),
        }
        self._task = asyncio.create_task(self._serve(scope))
        await self._to_app.put({"type": "websocket.connect"})
        self.accept = await self._next()
        assert self.accept["type"] == "websocket.accept", self.accept
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._to_app.put({"type": "websocket.disconnect", "code": 1000})
        assert self._task is not None
        await asyncio.wait_for(self._task, 5)

    async def _next(self) -> Message:
        return await asyncio.wait_for(self._from_app.get(), 5)

    async def _serve(self, scope: dict[str, Any]) -> None:
        await self.app(scope, self._to_app.get, self._from_app.put)

    async def send(self, message: object) -> None:
        await self._to_app.put({"type": "websocket.receive", "text": json.dumps(message)})

    async def receive(self) -> dict[str, Any]:
        message = await self._next()
        assert message["type"] == "websocket.send", message
        received: dict[str, Any] = json.loads(message["text"])
        return received
