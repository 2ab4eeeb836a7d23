"""WebSocket message size through a real server (``mmk serve``, uvicorn's
``ws_max_size``): a client message over 64 KiB closes that connection with
1009 (message too big), and the server keeps serving everyone else."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed
from websockets.typing import Subprotocol

from api.app import MAX_WS_MESSAGE_BYTES
from tests.e2e.conftest import Server
from tests.e2e.wsclient import TRANSPORT_WS

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(60)]
WAIT = 10.0


async def _acked(server: Server) -> ClientConnection:
    ws = await connect(server.ws_url, subprotocols=[Subprotocol(TRANSPORT_WS)], proxy=None)
    await ws.send(json.dumps({"type": "connection_init", "payload": {}}))
    assert json.loads(await asyncio.wait_for(ws.recv(), WAIT))["type"] == "connection_ack"
    return ws


async def test_an_oversized_websocket_message_closes_only_its_connection(
    server: Server, http: httpx.AsyncClient
) -> None:
    bystander = await _acked(server)
    big = await _acked(server)
    try:
        query = "subscription { lobby { gameId } }" + " " * MAX_WS_MESSAGE_BYTES
        frame = json.dumps({"id": "1", "type": "subscribe", "payload": {"query": query}})
        assert len(frame) > MAX_WS_MESSAGE_BYTES
        await big.send(frame)
        with pytest.raises(ConnectionClosed):
            await asyncio.wait_for(big.recv(), WAIT)
        assert big.close_code == 1009
        # Just under the limit is a message, on a connection that was there
        # all along: its operation is refused (the document is over its own
        # length limit, api/graphql/limits.py), and the connection goes on.
        fits = "subscription { lobby { gameId } }" + " " * (MAX_WS_MESSAGE_BYTES - 200)
        await bystander.send(
            json.dumps({"id": "1", "type": "subscribe", "payload": {"query": fits}})
        )
        refused = json.loads(await asyncio.wait_for(bystander.recv(), WAIT))
        assert refused["type"] == "error" and refused["id"] == "1", refused
        assert refused["payload"][0]["extensions"]["code"] == "BAD_INPUT", refused
        await bystander.send(json.dumps({"type": "ping"}))
        pong = json.loads(await asyncio.wait_for(bystander.recv(), WAIT))
        assert pong["type"] == "pong", pong
        assert (await http.get("/healthz")).status_code == 200
        fresh = await _acked(server)
        await fresh.close()
    finally:
        await bystander.close()
        await big.close()
