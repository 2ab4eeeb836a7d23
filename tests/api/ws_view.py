"""The view's WebSocket endpoint (``GameGraphQL``) driven over ASGI in
process: frames sent as text or bytes, what the view sends read back, its
close code and reason; the view's task must end without an exception."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from api.graphql.view import GameGraphQL
from tests.adapters.app_support import AsgiWebSocket

TIMEOUT = 5.0


class ViewSocket(AsgiWebSocket):
    """One client connection to ``view`` speaking ``subprotocol``; the view
    must accept that protocol."""

    def __init__(self, view: GameGraphQL, subprotocol: str) -> None:
        super().__init__(view, subprotocol, client=("127.0.0.1", 1))

    async def __aenter__(self) -> ViewSocket:
        await super().__aenter__()
        assert self.accept.get("subprotocol") == self.subprotocol, self.accept
        return self

    async def send_text(self, text: str) -> None:
        await self._to_app.put({"type": "websocket.receive", "text": text})

    async def send_bytes(self, data: bytes) -> None:
        await self._to_app.put({"type": "websocket.receive", "bytes": data})

    async def init(self, payload: dict[str, Any] | None = None) -> None:
        """``connection_init``, acknowledged."""
        await self.send({"type": "connection_init", "payload": payload or {}})
        assert (await self.receive())["type"] == "connection_ack"

    async def closed(self) -> tuple[int, str, list[dict[str, Any]]]:
        """Waits for the view to close: its code, reason and the messages it
        sent before; the view's task then ends, without an exception."""
        sent: list[dict[str, Any]] = []
        while True:
            message = await self._next()
            if message["type"] == "websocket.close":
                assert self._task is not None
                await asyncio.wait_for(self._task, TIMEOUT)
                return message.get("code", 1000), message.get("reason") or "", sent
            sent.append(json.loads(message["text"]))
