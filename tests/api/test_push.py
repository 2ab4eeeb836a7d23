"""Pushed frames over graphql-transport-ws and graphql-ws
(api/fast/push.py): the same messages, in the same order, as
Strawberry's own handlers send; the live
events written as they are published; a completed operation sends nothing
more; a connection too far behind drops the subscription that overflows it."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

import orjson
from strawberry.subscriptions.protocols.graphql_transport_ws.handlers import (
    BaseGraphQLTransportWSHandler,
)
from strawberry.subscriptions.protocols.graphql_ws.handlers import BaseGraphQLWSHandler

from api.fast.push import Outbox, TransportWSHandler
from api.graphql.view import LegacyWSHandler
from tests.api.conftest import Client
from tests.api.support import game, play_to_end, send_action, start
from tests.api.test_subscriptions import EVENTS

TYPED = """subscription($id: ID!, $after: Int!) { gameEvents(gameId: $id, afterSeq: $after) {
  __typename seq ... on CardPlayed { seat lead card { id house value } faceDown }
  ... on TrickWon { winner prize { id kind } plays { seat } scores } } }"""
NOT_PLAIN = """subscription($id: ID!, $after: Int!) {
  gameEvents(gameId: $id, afterSeq: $after) { seq type @skip(if: false) } }"""


class Socket:
    """A WebSocket adapter that keeps what it is sent: Strawberry's messages
    (``send_json``) and pushed ones (``ws.send_text``); ``gate`` holds the
    pushed ones back (a client that stopped reading)."""

    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []
        self.pushed = 0
        self.ws = self
        self.gate = asyncio.Event()
        self.gate.set()

    async def send_json(self, message: Any) -> None:
        self.messages.append(orjson.loads(orjson.dumps(message)))

    async def send_text(self, text: str) -> None:
        await self.gate.wait()
        self.messages.append(orjson.loads(text))
        self.pushed += 1

    async def close(self, code: int, reason: str) -> None:
        raise AssertionError(f"closed: {code} {reason}")

    def of(self, op: str) -> list[dict[str, Any]]:
        return [m for m in self.messages if m.get("id") == op]


def handler(
    cls: type[BaseGraphQLTransportWSHandler[Any, None]],
    client: Client,
    socket: Socket,
    token: str | None = None,
) -> Any:
    context = client.context(token, websocket=True)
    h = cls(None, socket, context, None, client.schema, timedelta(seconds=30), 20)  # type: ignore[arg-type]
    h.connection_acknowledged = True
    return h


async def subscribe(h: Any, op: str, query: str, **variables: Any) -> None:
    await h.handle_message(
        {"type": "subscribe", "id": op, "payload": {"query": query, "variables": variables}}
    )


async def ended(h: Any, op: str) -> None:
    for _ in range(200):
        if op not in h.operations:
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"operation {op} did not end")


async def table(client: Client) -> tuple[str, list[str]]:
    tokens = [(await client.new_player(f"p{i}"))[0] for i in range(3)]
    return await start(client, tokens, ratSeat=0), tokens


async def test_pushed_messages_are_strawberrys_own_in_order_for_every_audience(
    client: Client,
) -> None:
    game_id, tokens = await table(client)
    callers: list[str | None] = [None, *tokens]
    pushing = [(handler(TransportWSHandler, client, Socket(), t)) for t in callers]
    plain = [(handler(BaseGraphQLTransportWSHandler, client, Socket(), t)) for t in callers]
    for h in (*pushing, *plain):
        await subscribe(h, "a", EVENTS, id=game_id, after=0)
        await subscribe(h, "b", TYPED, id=game_id, after=2)
    await play_to_end(client, game_id, [*tokens])
    for h in (*pushing, *plain):
        await ended(h, "a")
        await ended(h, "b")
    for ours, theirs in zip(pushing, plain, strict=True):
        assert ours.websocket.messages, "nothing was sent"
        for op in ("a", "b"):
            assert ours.websocket.of(op) == theirs.websocket.of(op)
            assert ours.websocket.of(op)[-1] == {"id": op, "type": "complete"}
        nexts = sum(m["type"] == "next" for m in ours.websocket.messages)
        assert ours.websocket.pushed == nexts, "every frame of a plain selection is pushed"
        assert theirs.websocket.pushed == 0
    assert client.h.bus.subscriber_count() == 0


async def test_a_selection_that_needs_the_executor_goes_strawberrys_way(client: Client) -> None:
    game_id, tokens = await table(client)
    ours = handler(TransportWSHandler, client, Socket())
    theirs = handler(BaseGraphQLTransportWSHandler, client, Socket())
    for h in (ours, theirs):
        await subscribe(h, "x", NOT_PLAIN, id=game_id, after=0)
    await play_to_end(client, game_id, [*tokens])
    await ended(ours, "x")
    await ended(theirs, "x")
    assert ours.websocket.of("x") == theirs.websocket.of("x")
    assert len(ours.websocket.of("x")) > 10 and ours.websocket.pushed == 0


async def test_nothing_is_sent_for_an_operation_the_client_completed(client: Client) -> None:
    game_id, tokens = await table(client)
    h = handler(TransportWSHandler, client, Socket())
    await subscribe(h, "c", EVENTS, id=game_id, after=0)
    for _ in range(3):
        await move(client, game_id, tokens)
    seen = len(h.websocket.of("c"))
    assert seen > 3 and h.websocket.pushed > 0
    await h.handle_message({"type": "complete", "id": "c"})
    for _ in range(3):
        await move(client, game_id, tokens)
    await asyncio.sleep(0.05)
    assert len(h.websocket.of("c")) == seen
    assert client.h.bus.subscriber_count() == 0


async def test_a_connection_too_far_behind_drops_the_subscription_that_overflows(
    client: Client,
) -> None:
    game_id, tokens = await table(client)
    h = handler(TransportWSHandler, client, Socket())
    h.outbox = Outbox(h.websocket, limit=5)
    last = client.h.store.games[game_id].last_seq
    await subscribe(h, "s", EVENTS, id=game_id, after=last)  # live only
    await asyncio.sleep(0.01)
    h.websocket.gate.clear()  # the client stops reading
    for _ in range(6):
        await move(client, game_id, tokens)
    await asyncio.sleep(0.01)
    assert client.h.bus.subscriber_count() == 0, "dropped at once"
    h.websocket.gate.set()  # it reads again: what was being written, then the error
    await ended(h, "s")
    *written, dropped, complete = h.websocket.of("s")
    assert len(written) <= 1 and all(m["payload"]["data"] for m in written)
    [error] = dropped["payload"]["errors"]
    assert error["extensions"]["code"] == "RATE_LIMITED"
    assert "slow subscriber" in error["message"] and "afterSeq" in error["message"]
    assert complete == {"id": "s", "type": "complete"}


async def test_a_long_replay_is_paced_by_its_reader_not_dropped(client: Client) -> None:
    game_id, tokens = await table(client)
    await play_to_end(client, game_id, [*tokens])
    h = handler(TransportWSHandler, client, Socket())
    h.outbox = Outbox(h.websocket, limit=8)
    h.websocket.gate.clear()
    await subscribe(h, "r", EVENTS, id=game_id, after=0)
    await asyncio.sleep(0.05)
    assert len(h.outbox) <= 8 and "r" in h.operations  # waiting for its reader
    h.websocket.gate.set()
    await ended(h, "r")
    frames = h.websocket.of("r")
    seqs = [m["payload"]["data"]["gameEvents"]["seq"] for m in frames[:-1]]
    assert seqs == list(range(1, client.h.store.games[game_id].last_seq + 1))
    assert frames[-1] == {"id": "r", "type": "complete"}


async def move(client: Client, game_id: str, tokens: list[str]) -> None:
    await client.h.drain()
    table = (await game(client, None, game_id))["table"]
    token = tokens[table["toAct"]]
    action = (await game(client, token, game_id))["viewer"]["legalActions"][0]
    assert (await send_action(client, token, game_id, action))["__typename"] == "GameChange"
    await asyncio.sleep(0)


def legacy(cls: type[BaseGraphQLWSHandler[Any, None]], client: Client, socket: Socket) -> Any:
    h = cls(None, socket, client.context(None, websocket=True), None, client.schema, False, None)  # type: ignore[arg-type]
    h.connection_acknowledged = True
    return h


async def test_graphql_ws_pushes_too_with_the_same_messages(client: Client) -> None:
    game_id, tokens = await table(client)
    ours = legacy(LegacyWSHandler, client, Socket())
    theirs = legacy(BaseGraphQLWSHandler, client, Socket())
    for h in (ours, theirs):
        start = {"query": TYPED, "variables": {"id": game_id, "after": 0}}
        await h.handle_message({"type": "start", "id": "g", "payload": start})
    await play_to_end(client, game_id, [*tokens])
    for h in (ours, theirs):
        for _ in range(200):
            if "g" not in h.tasks:
                break
            await asyncio.sleep(0.01)
    assert ours.websocket.of("g") == theirs.websocket.of("g")
    assert ours.websocket.of("g")[-1] == {"id": "g", "type": "complete"}
    data = sum(m["type"] == "data" for m in ours.websocket.messages)
    assert data > 10 and ours.websocket.pushed == data and theirs.websocket.pushed == 0
