"""A close the client did not wait for (api/graphql/view.py
``WebSocketAdapter``): a legacy client that sends ``connection_terminate``
and leaves at once makes the server's close find the socket gone; that is
nothing to close, not an exception (it was an "Exception in ASGI
application" with a traceback in the server's log)."""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import Any, cast

from starlette.websockets import WebSocket, WebSocketState

from api.graphql.view import WebSocketAdapter


def _gone_socket() -> tuple[WebSocket, list[MutableMapping[str, Any]]]:
    sent: list[MutableMapping[str, Any]] = []

    async def receive() -> MutableMapping[str, Any]:
        return {"type": "websocket.connect"}

    async def send(message: MutableMapping[str, Any]) -> None:
        sent.append(message)
        if message["type"] == "websocket.close":
            raise OSError("client disconnected")  # as uvicorn's ClientDisconnected

    ws = WebSocket({"type": "websocket", "path": "/graphql", "headers": []}, receive, send)
    return ws, sent


async def test_a_close_that_finds_the_client_gone_raises_nothing() -> None:
    ws, sent = _gone_socket()
    await ws.accept()
    adapter = WebSocketAdapter(cast(Any, None), ws, ws)
    await adapter.close(1000, "")
    assert [m["type"] for m in sent] == ["websocket.accept", "websocket.close"]
    assert ws.application_state == WebSocketState.DISCONNECTED
    await adapter.close(1000, "")  # a second close does nothing
    assert len(sent) == 2
