"""The view's WebSocket endpoint (``GameGraphQL``) driven over ASGI in
process: frames sent as text or bytes, what the view sends read back, its
close code and reason; the view's task must end without an exception."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from starlette.types import Message

from api.graphql.view import GameGraphQL

TIMEOUT = 5.0


class ViewSocket:
    """One client connection to ``view`` speaking ``subprotocol``."""

    def __init__(self, view: GameGraphQL, subprotocol: str) -> None:
        self.view, self.subprotocol = view, subprotocol
        self._to_view: asyncio.Queue[Message] = asyncio.Queue()
        self._from_view: asyncio.Queue[Message] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> ViewSocket:
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
            "client": ("127.0.0.1", 1),
            "server": ("test", 80),
        }
        self._task = asyncio.create_task(self.view(scope, self._to_view.get, self._from_view.put))
        await self._to_view.put({"type": "websocket.connect"})
        accept = await self._next()
        assert accept["type"] == "websocket.accept", accept
        assert accept.get("subprotocol") == self.subprotocol, accept
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._to_view.put({"type": "websocket.disconnect", "code": 1000})
        assert self._task is not None
        await asyncio.wait_for(self._task, TIMEOUT)  # re-raises what the view raised

    async def _next(self) -> Message:
        return await asyncio.wait_for(self._from_view.get(), TIMEOUT)

    async def send(self, message: object) -> None:
        await self.send_text(json.dumps(message))

    async def send_text(self, text: str) -> None:
        await self._to_view.put({"type": "websocket.receive", "text": text})

    async def send_bytes(self, data: bytes) -> None:
        await self._to_view.put({"type": "websocket.receive", "bytes": data})

    async def receive(self) -> dict[str, Any]:
        """The next message the view sends (fails on a close)."""
        message = await self._next()
        assert message["type"] == "websocket.send", message
        received: dict[str, Any] = json.loads(message["text"])
        return received

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
