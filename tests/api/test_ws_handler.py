"""The ``graphql-ws`` handler when its client has gone mid-stream: the
operation ends quietly instead of leaving an error for asyncio to log."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from strawberry.http.exceptions import WebSocketDisconnected
from strawberry.subscriptions.protocols.graphql_ws.handlers import BaseGraphQLWSHandler

from api.graphql.schema import schema
from api.graphql.view import LegacyWSHandler
from tests.api.conftest import Client
from tests.api.support import start
from tests.api.test_subscriptions import EVENTS


class GoneSocket:
    """A socket whose client left after ``frames`` frames, sent by the
    handler (``send_json``) or pushed (``ws.send_text``)."""

    def __init__(self, frames: int) -> None:
        self.left, self.sent = frames, 0
        self.ws = self

    async def send_json(self, message: Any) -> None:
        await self.send_text("")

    async def send_text(self, text: str) -> None:
        if self.left == 0:
            raise WebSocketDisconnected
        self.left -= 1
        self.sent += 1


async def run(h: Any, variables: dict[str, Any]) -> None:
    """One operation in its own task, as the handler's ``start`` runs it."""
    task = asyncio.ensure_future(h.handle_async_results("1", EVENTS, None, variables))
    h.tasks["1"] = task
    await task


def handler(cls: type[BaseGraphQLWSHandler[Any, None]], client: Client, socket: GoneSocket) -> Any:
    context = client.context(None, websocket=True)
    return cls(None, socket, context, None, schema, False, None)  # type: ignore[arg-type]


async def test_a_client_gone_mid_stream_ends_the_operation_quietly(client: Client) -> None:
    tokens = [(await client.new_player(f"p{i}"))[0] for i in range(3)]
    game_id = await start(client, tokens, ratSeat=0)
    variables = {"id": game_id, "after": 0}
    socket = GoneSocket(frames=2)
    await run(handler(LegacyWSHandler, client, socket), variables)
    assert socket.sent == 2
    plain = GoneSocket(frames=2)  # what Strawberry's own handler does
    with pytest.raises(WebSocketDisconnected):
        await run(handler(BaseGraphQLWSHandler, client, plain), variables)
