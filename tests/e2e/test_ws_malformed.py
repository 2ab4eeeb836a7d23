"""Malformed WebSocket messages through a real server (issue #14, item 6;
docs/decisions/0043): the connection closes with a protocol close code and
its reason, the server logs no traceback, other connections carry on.
tests/api/test_ws_malformed.py covers every case in process."""

from __future__ import annotations

import json

import pytest

from tests.e2e.conftest import Server
from tests.e2e.play import EVENT_TIMEOUT
from tests.e2e.wsclient import LEGACY_WS, PROTOCOLS, TRANSPORT_WS, GraphQLWebSocket, ws_connection

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(60)]

QUERY = "{ __typename }"


def assert_no_traceback(server: Server) -> None:
    text = server.log.read_text(errors="replace")
    assert "Traceback" not in text and "Exception in ASGI" not in text, server.log_tail()


async def assert_served(server: Server, protocol: str) -> None:
    async with ws_connection(server.ws_url, protocol) as other:
        op = await other.subscribe(QUERY)
        assert (await op.next(EVENT_TIMEOUT))["data"] == {"__typename": "Query"}


@pytest.mark.parametrize(
    "frame",
    [
        {"type": "start", "id": "1"},  # the probe's: no payload
        {"type": "start", "id": "1", "payload": "{ __typename }"},
        {"type": "start", "payload": {"query": QUERY}},
        {"type": "stop"},
        {"type": "zzz"},
        "not JSON",
        "null",
        b"\x00binary",
    ],
    ids=[
        "no payload",
        "payload a string",
        "no id",
        "stop without id",
        "unknown",
        "text",
        "null",
        "binary",
    ],
)
async def test_a_malformed_legacy_message_closes_with_4400(
    server: Server, frame: str | bytes | dict[str, object]
) -> None:
    async with ws_connection(server.ws_url, LEGACY_WS) as ws:
        await ws.send_raw(json.dumps(frame) if isinstance(frame, dict) else frame)
        assert await ws.wait_closed(EVENT_TIMEOUT) == 4400, ws.raw
        assert ws.close_reason, "a 4400 close says why"
    await assert_served(server, LEGACY_WS)
    assert_no_traceback(server)


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_a_second_connection_init_closes_with_4429(server: Server, protocol: str) -> None:
    async with ws_connection(server.ws_url, protocol) as ws:
        bad = {"type": "connection_init", "payload": {"authorization": "Bearer not-a-token"}}
        await ws.send_raw(json.dumps(bad))
        assert await ws.wait_closed(EVENT_TIMEOUT) == 4429
        assert ws.close_reason == "Too many initialisation requests"
    assert [f["type"] for f in ws.frames] == ["connection_ack"], ws.raw
    assert_no_traceback(server)


async def test_a_malformed_subscribe_closes_with_4400(server: Server) -> None:
    async with ws_connection(server.ws_url, TRANSPORT_WS) as ws:
        await ws.send_raw(json.dumps({"type": "subscribe", "id": "1", "payload": "x"}))
        assert await ws.wait_closed(EVENT_TIMEOUT) == 4400
    await assert_served(server, TRANSPORT_WS)
    assert_no_traceback(server)


async def test_a_message_nested_too_deep_closes_with_4400(server: Server) -> None:
    ws = GraphQLWebSocket(server.ws_url, LEGACY_WS)
    await ws.connect()
    await ws.send_raw("[" * 5000)
    assert await ws.wait_closed(EVENT_TIMEOUT) == 4400
    await ws.close()
    assert_no_traceback(server)
