"""Pushed subscription frames over graphql-transport-ws (docs/decisions/0038).

Strawberry runs each subscription as a task that iterates the resolver's
stream: every event woke that task and the dozen generators and coroutines
between it and the bus, and each of those lived until the next event, long
enough to be promoted by the collector (most of an idle subscription's
memory and of the long collections at 2,000 connections; issue #13).

Here, the operation's task sets :data:`OUTLET` to a :class:`Pusher` for its
operation. The ``gameEvents`` resolver then hands the game's stream a
``push`` (domain/services/streams.py): a live event whose frame is already
built, or plain (api/graphql/frames.py), is written as it is published, as
the same ``next`` message Strawberry would send, and the task sleeps on. An
event the pusher does not take goes the usual way, after what was pushed
before it. Each connection has one :class:`Outbox`, written by a short task
per burst, in order; a connection more than its limit behind drops the
subscription that would overflow it (``SubscriptionClosed``, as the bus does
with a slow queue).
"""

from __future__ import annotations

import asyncio
from collections import deque
from contextvars import ContextVar
from typing import Any, cast

import orjson
from strawberry.asgi import ASGIWebSocketAdapter
from strawberry.subscriptions.protocols.graphql_transport_ws.handlers import (
    BaseGraphQLTransportWSHandler,
    Operation,
)

from domain.ports import SubscriptionClosed

OUTBOX_LIMIT = 1000
"""Frames a connection may have waiting for its socket (the bus's default
queue limit)."""
CATCH_UP_BATCH = 64
"""Frames of a replay (the log, not live) put before waiting for the socket."""


class Outbox:
    """One connection's pushed frames, written in order by one task at a time."""

    def __init__(self, handler: TransportWSHandler, limit: int = OUTBOX_LIMIT) -> None:
        self._handler = handler
        self._limit = limit
        self.batch = max(1, min(CATCH_UP_BATCH, limit // 2))
        self._frames: deque[tuple[Operation[Any, Any], str]] | None = None  # made when needed
        self._writer: asyncio.Task[None] | None = None
        self._idle: asyncio.Event | None = None
        self.broken = False

    def put(self, operation: Operation[Any, Any], text: str) -> None:
        if self.broken:
            raise SubscriptionClosed("the connection is closing")
        frames = self._frames
        if frames is None:
            frames = self._frames = deque()
        elif len(frames) >= self._limit:
            self.discard(operation)
            raise SubscriptionClosed(f"slow subscriber: more than {self._limit} messages behind")
        frames.append((operation, text))
        if self._writer is None:
            self._writer = asyncio.get_running_loop().create_task(self._write())

    def __len__(self) -> int:
        return 0 if self._frames is None else len(self._frames)

    def discard(self, operation: Operation[Any, Any]) -> None:
        """Forget the operation's frames not yet written."""
        if self._frames:
            self._frames = deque(f for f in self._frames if f[0] is not operation)

    async def flushed(self) -> None:
        """Returns once every frame put so far is written (or dropped)."""
        while self._writer is not None:
            if self._idle is None:
                self._idle = asyncio.Event()
            await self._idle.wait()

    async def _write(self) -> None:
        live = self._handler.operations
        send = cast("ASGIWebSocketAdapter", self._handler.websocket).ws.send_text
        try:
            while self._frames:
                operation, text = self._frames.popleft()
                # A frame of an operation the client completed is not sent.
                if live.get(operation.id) is operation and not operation.completed:
                    await send(text)
        except Exception:  # WebSocketDisconnect, or a send after the close
            self.broken = True  # the handler sees the disconnect and ends everything
        finally:
            self._frames = None  # an idle connection keeps no queue
            self._writer = None
            if self._idle is not None:
                self._idle.set()
                self._idle = None


class Pusher:
    """Writes one operation's frames: the ``next`` message of a payload."""

    __slots__ = ("_head", "_outbox", "operation")

    def __init__(self, outbox: Outbox, operation: Operation[Any, Any]) -> None:
        self._outbox = outbox
        self.operation = operation
        self._head = '{"id":' + orjson.dumps(operation.id).decode() + ',"type":"next","payload":'

    def send(self, payload: str) -> None:
        """``payload``: the JSON of ``{"data": ...}``."""
        self._outbox.put(self.operation, self._head + payload + "}")

    def discard(self) -> None:
        self._outbox.discard(self.operation)

    async def caught_up(self) -> None:
        """Waits for the socket when a replay has put a batch: a long log
        is paced by its reader, never dropped for the outbox's size."""
        if len(self._outbox) >= self._outbox.batch:
            await self._outbox.flushed()

    async def flushed(self) -> None:
        await self._outbox.flushed()


OUTLET: ContextVar[Pusher | None] = ContextVar("mmk_push_outlet", default=None)
"""The pusher of the operation whose task is running, if it can push."""


class TransportWSHandler(BaseGraphQLTransportWSHandler[Any, None]):
    """Strawberry's graphql-transport-ws handler; an operation's task knows
    its pusher (:data:`OUTLET`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        settings = getattr(self.context, "settings", None)
        self.outbox = Outbox(self, getattr(settings, "bus_queue_limit", OUTBOX_LIMIT))

    async def run_operation(self, operation: Operation[Any, None]) -> None:
        OUTLET.set(Pusher(self.outbox, operation))  # this task's own context
        await super().run_operation(operation)
