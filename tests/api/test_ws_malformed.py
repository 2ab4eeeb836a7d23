"""Malformed WebSocket messages on both sub-protocols (issue #14, item 6;
api/graphql/ws_messages.py, docs/decisions/0043): each closes its
connection with 4400 and a reason, a second ``connection_init`` with 4429
and no second acknowledgement; never an exception out of the view nor an
error logged, and other connections carry on."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from strawberry.subscriptions import GRAPHQL_TRANSPORT_WS_PROTOCOL, GRAPHQL_WS_PROTOCOL

from api.graphql.view import GameGraphQL
from tests.api.conftest import Client
from tests.api.http_view import view_of
from tests.api.ws_view import ViewSocket

LEGACY, TRANSPORT = GRAPHQL_WS_PROTOCOL, GRAPHQL_TRANSPORT_WS_PROTOCOL
START = {LEGACY: "start", TRANSPORT: "subscribe"}
STOP = {LEGACY: "stop", TRANSPORT: "complete"}
DATA = {LEGACY: "data", TRANSPORT: "next"}
QUERY = "{ __typename }"

Frame = str | bytes | dict[str, Any]


def malformed(protocol: str) -> list[tuple[str, Frame, str]]:
    """(case, frame sent after an acknowledged connection_init, in the reason)."""
    start, stop = START[protocol], STOP[protocol]
    return [
        ("operation without payload", {"type": start, "id": "1"}, "payload must be an object"),
        ("payload a string", {"type": start, "id": "1", "payload": "x"}, "payload must be"),
        ("payload a list", {"type": start, "id": "1", "payload": [QUERY]}, "payload must be"),
        ("payload without query", {"type": start, "id": "1", "payload": {}}, "payload.query"),
        ("query not a string", {"type": start, "id": "1", "payload": {"query": 1}}, "query"),
        (
            "variables not an object",
            {"type": start, "id": "1", "payload": {"query": QUERY, "variables": [1]}},
            "payload.variables",
        ),
        (
            "operationName not a string",
            {"type": start, "id": "1", "payload": {"query": QUERY, "operationName": 1}},
            "payload.operationName",
        ),
        (
            "extensions not an object",
            {"type": start, "id": "1", "payload": {"query": QUERY, "extensions": "x"}},
            "payload.extensions",
        ),
        ("operation without id", {"type": start, "payload": {"query": QUERY}}, "id must be"),
        ("id a number", {"type": start, "id": 1, "payload": {"query": QUERY}}, "id must be"),
        ("id empty", {"type": start, "id": "", "payload": {"query": QUERY}}, "id must be"),
        ("stop without id", {"type": stop}, "id must be"),
        ("unknown type", {"type": "zzz", "id": "1"}, "Unknown message type: zzz"),
        ("no type", {"id": "1"}, "string type"),
        ("type not a string", {"type": 1}, "string type"),
        ("not JSON", "hello", "valid JSON"),
        ("JSON string", '"x"', "JSON object"),
        ("JSON number", "1", "JSON object"),
        ("JSON null", "null", "JSON object"),
        ("JSON list", '[{"type": "connection_init"}]', "JSON object"),
        ("nested too deep", "[" * 5000, "valid JSON"),
        ("binary frame", b'{"type": "connection_init"}', "must be text"),
    ]


CASES = [
    *((p, *case) for p in (LEGACY, TRANSPORT) for case in malformed(p)),
    (TRANSPORT, "ping payload a string", {"type": "ping", "payload": "x"}, "ping: payload"),
]


@pytest.fixture
def view(client: Client) -> GameGraphQL:
    return view_of(client.h)


@pytest.fixture(autouse=True)
def _no_error_logged(caplog: pytest.LogCaptureFixture) -> Any:
    caplog.set_level(logging.INFO)
    yield
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert not errors, [r.getMessage() for r in errors]


async def send_frame(ws: ViewSocket, frame: Frame) -> None:
    if isinstance(frame, bytes):
        await ws.send_bytes(frame)
    elif isinstance(frame, str):
        await ws.send_text(frame)
    else:
        await ws.send(frame)


async def answered(ws: ViewSocket, protocol: str, op_id: str = "ok") -> None:
    """A well-formed operation is run: its data, then ``complete``."""
    await ws.send({"type": START[protocol], "id": op_id, "payload": {"query": QUERY}})
    data = await ws.receive()
    assert data["type"] == DATA[protocol] and data["id"] == op_id, data
    assert data["payload"] == {"data": {"__typename": "Query"}}, data
    assert await ws.receive() == {"type": "complete", "id": op_id}


@pytest.mark.parametrize(
    ("protocol", "frame", "named"),
    [case[0:1] + case[2:] for case in CASES],
    ids=[f"{c[0]}: {c[1]}" for c in CASES],
)
async def test_a_malformed_message_closes_with_4400_and_why(
    view: GameGraphQL, protocol: str, frame: Frame, named: str
) -> None:
    async with ViewSocket(view, protocol) as ws:
        await ws.init()
        await answered(ws, protocol)  # the connection works until then
        await send_frame(ws, frame)
        code, reason, sent = await ws.closed()
    assert (code, sent) == (4400, []), (code, reason, sent)
    assert named in reason, reason


@pytest.mark.parametrize("protocol", [LEGACY, TRANSPORT])
@pytest.mark.parametrize(
    "frame",
    [
        "null",
        {"type": "connection_init", "payload": "x"},
        {"type": "connection_init", "payload": 1},
    ],
)
async def test_a_malformed_first_message_closes_with_4400(
    view: GameGraphQL, protocol: str, frame: Frame
) -> None:
    async with ViewSocket(view, protocol) as ws:
        await send_frame(ws, frame)
        code, reason, sent = await ws.closed()
    assert (code, sent) == (4400, []), (code, reason, sent)
    assert reason


@pytest.mark.parametrize("protocol", [LEGACY, TRANSPORT])
@pytest.mark.parametrize(
    "payload",
    [{}, {"authorization": "Bearer not-a-token-of-anyone"}, {"authorization": 3}],
    ids=["same", "bad token", "not a string"],
)
async def test_a_second_connection_init_closes_with_4429(
    view: GameGraphQL, protocol: str, payload: dict[str, Any]
) -> None:
    async with ViewSocket(view, protocol) as ws:
        await ws.init()
        await ws.send({"type": "connection_init", "payload": payload})
        code, reason, sent = await ws.closed()
    assert (code, reason) == (4429, "Too many initialisation requests")
    assert sent == [], "never a second connection_ack (nor connection_error)"


async def test_a_null_connection_init_payload_is_no_payload(view: GameGraphQL) -> None:
    """graphql-transport-ws: ``payload?: Record<string, unknown> | null``."""
    async with ViewSocket(view, TRANSPORT) as ws:
        await ws.send({"type": "connection_init", "payload": None})
        assert (await ws.receive())["type"] == "connection_ack"
        await answered(ws, TRANSPORT)


@pytest.mark.parametrize("protocol", [LEGACY, TRANSPORT])
async def test_other_connections_carry_on(view: GameGraphQL, protocol: str) -> None:
    async with ViewSocket(view, protocol) as good:
        await good.init()
        async with ViewSocket(view, protocol) as bad:
            await bad.init()
            await bad.send({"type": START[protocol], "id": "1"})
            assert (await bad.closed())[0] == 4400
        await answered(good, protocol, "after")
