"""Malformed WebSocket messages through a real server (issue #14, item 6;
docs/decisions/0043): the connection closes with a protocol close code and
its reason, the server logs no traceback, other connections carry on.
tests/api/test_ws_malformed.py covers every case in process. Malformed
frames (issue #22, docs/decisions/0052): a text message that is not UTF-8
closes with 1007, a frame the parser refuses with its code, one log line an
interval."""

from __future__ import annotations

import asyncio
import json
import socket
from pathlib import Path

import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.client import ClientProtocol
from websockets.exceptions import ConnectionClosed
from websockets.typing import Subprotocol
from websockets.uri import parse_uri

from tests.e2e.conftest import Server
from tests.e2e.own_server import log_records, own_server
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


# ------------------------------------------------------------ malformed frames

INVALID_UTF8 = b'{"type": "connection_init", "payload": {"name": "\xff\xfe"}}'
SPLIT = '{"type": "connection_init", "payload": {"name": "Ren\u00e9e"}}'.encode()
CONNECTIONS = 100  # the trial's 200 connections in 0.2 s wrote 200 tracebacks
AT_ONCE = 20  # under the per-IP WebSocket cap (MMK_MAX_WS_PER_IP, 50)


async def close_code(conn: ClientConnection) -> int | None:
    try:
        async with asyncio.timeout(EVENT_TIMEOUT):
            while True:
                await conn.recv()
    except ConnectionClosed as e:
        return e.rcvd.code if e.rcvd else None


async def invalid_text(url: str, protocol: str) -> int | None:
    """Opens a socket and sends a text message that is not UTF-8; the code
    the server closes it with."""
    async with connect(url, subprotocols=[Subprotocol(protocol)], open_timeout=10) as conn:
        await conn.send(INVALID_UTF8, text=True)  # sent as it is, unchecked
        return await close_code(conn)


def reserved_opcode(url: str) -> bytes:
    """The handshake, then a frame with a reserved opcode (0x3): what the
    server answers before it closes."""
    host, port = url.split("//")[1].split("/")[0].split(":")
    proto = ClientProtocol(parse_uri(url), subprotocols=[Subprotocol(LEGACY_WS)])
    with socket.create_connection((host, int(port)), 5) as sock:
        sock.settimeout(5)
        proto.send_request(proto.connect())
        sock.sendall(b"".join(proto.data_to_send()))
        answer = b""
        while b"\r\n\r\n" not in answer:
            answer += sock.recv(4096)
        assert answer.startswith(b"HTTP/1.1 101"), answer
        sock.sendall(b"\x83\x80" + b"\x00" * 4)  # FIN, opcode 3, masked, empty
        got = answer.partition(b"\r\n\r\n")[2]
        while chunk := sock.recv(4096):
            got += chunk
    return got


async def test_malformed_frames_close_with_a_code_and_one_log_line(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path}/frames.sqlite3"
    with own_server(tmp_path, db, MMK_CONNECTION_LOG_INTERVAL="60") as (srv, _):
        codes: list[int | None] = []
        for start in range(0, CONNECTIONS, AT_ONCE):
            protocols = [PROTOCOLS[(start + i) % 2] for i in range(AT_ONCE)]
            codes += await asyncio.gather(*(invalid_text(srv.ws_url, p) for p in protocols))
        assert codes == [1007] * CONNECTIONS, codes
        # RFC 6455: a protocol error is 1002 (a close frame, 0x88).
        close = reserved_opcode(srv.ws_url)
        assert close[:1] == b"\x88" and close[2:4] == (1002).to_bytes(2, "big"), close
        # A message split inside a character is whole again: served.
        async with connect(srv.ws_url, subprotocols=[Subprotocol(LEGACY_WS)]) as conn:
            await conn.send([SPLIT[:-5], SPLIT[-5:]], text=True)  # inside the é
            ack = json.loads(await asyncio.wait_for(conn.recv(), EVENT_TIMEOUT))
            assert ack["type"] == "connection_ack", ack
        await assert_served(srv, TRANSPORT_WS)
    records = log_records(srv)
    assert not [r for r in records if r["level"] in ("ERROR", "CRITICAL")], records[-3:]
    assert not [r for r in records if "exception" in r], "no traceback"
    closed = [r for r in records if r["message"].startswith("WebSocket closed (")]
    # The first, at once; the others are counted until the interval ends.
    assert [r["message"] for r in closed] == [
        "WebSocket closed (1007): invalid UTF-8 in a text message at byte 49"
    ], closed
