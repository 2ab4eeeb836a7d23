"""Development mode (``MMK_DEV``, ``make run``) through a real ``mmk serve``:
a page of a Vite dev server (http://localhost:5173, listed nowhere) gets its
preflight answered and opens the WebSocket; without dev mode (the session's
server, as in production) both are refused. The origin rule itself is tested
in tests/adapters/test_dev_origins.py; a real browser's side in
tests/browser/test_cross_origin.py."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus
from websockets.typing import Origin, Subprotocol

from tests.e2e.conftest import Server
from tests.e2e.own_server import assert_no_leak, own_server

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(60)]

VITE = "http://localhost:5173"
FOREIGN = "http://localhost.evil.com:5173"  # starts like a local origin, is not one
PREFLIGHT = {
    "access-control-request-method": "POST",
    "access-control-request-headers": "authorization, content-type",
}


async def preflight(http: httpx.AsyncClient, origin: str) -> httpx.Response:
    return await http.options("/graphql", headers={"origin": origin, **PREFLIGHT})


async def websocket_status(server: Server, origin: str) -> int:
    """101 and a ``connection_ack``, or the status the handshake was refused with."""
    try:
        async with connect(
            server.ws_url,
            origin=Origin(origin),
            subprotocols=[Subprotocol("graphql-transport-ws")],
            open_timeout=10,
        ) as ws:
            await ws.send(json.dumps({"type": "connection_init"}))
            assert json.loads(await ws.recv(decode=True))["type"] == "connection_ack"
            return 101
    except InvalidStatus as refused:
        return refused.response.status_code


async def test_dev_mode_lets_a_local_page_in(tmp_path: Path) -> None:
    database = f"sqlite:///{tmp_path}/dev.sqlite3"
    with own_server(tmp_path, database, MMK_DEV="1") as (srv, _):
        async with httpx.AsyncClient(base_url=srv.base_url, timeout=10, trust_env=False) as http:
            r = await preflight(http, VITE)
            assert r.status_code == 200, r.text
            assert r.headers["access-control-allow-origin"] == VITE
            posted = await http.post(
                "/graphql", json={"query": "{ __typename }"}, headers={"origin": VITE}
            )
            assert posted.json()["data"] == {"__typename": "Query"}
            assert posted.headers["access-control-allow-origin"] == VITE
            assert await websocket_status(srv, VITE) == 101

            refused = await preflight(http, FOREIGN)
            assert refused.status_code == 400
            assert refused.json()["errors"][0]["extensions"]["code"] == "FORBIDDEN"
            assert await websocket_status(srv, FOREIGN) == 403
        assert_no_leak(srv)


async def test_without_dev_mode_a_local_page_is_refused(
    server: Server, http: httpx.AsyncClient
) -> None:
    r = await preflight(http, VITE)
    assert r.status_code == 400
    assert r.json()["errors"][0]["extensions"]["code"] == "FORBIDDEN"
    assert "access-control-allow-origin" not in r.headers
    assert await websocket_status(server, VITE) == 403
