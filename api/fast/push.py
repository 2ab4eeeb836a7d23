"""Pushed subscription frames over graphql-transport-ws and graphql-ws
(docs/decisions/0038).

Strawberry runs each subscription as a task that iterates the resolver's
stream. Every event woke that task and the dozen generators and coroutines
between it and the bus, and each of those lived until the next event: long
enough for the collector to promote them. That was most of an idle
subscription's memory and of the long collections at 2,000 connections
(issue #13).

Here, the operation's task sets :data:`OUTLET` to a :class:`Pusher` for its
operation. The ``gameEvents`` resolver then drains each live tail of the
game's stream (domain/services/streams.py). A live event whose frame is already
built, or plain (api/fast/frames.py), is written as it is published, as
the same data message Strawberry would send (``next``, or graphql-ws's
``data``), and the task sleeps on. An event the pusher does not take goes
the usual way, after what was pushed before it.

Each connection has one :class:`Outbox`. A frame is written at once, in the
publisher's task, when nothing waits before it and the socket takes it
without waiting (``send_now`` of api/fast/ws_protocol.py: a fan-out to
thousands of spectators costs no task a socket, issue #28); else it waits
in the outbox, written in order by a short task per burst. A connection
more than its limit behind drops the subscription that would overflow it
(``SubscriptionClosed``, as the bus does with a slow queue). A write that
fails ends the operations that were writing, as a failed send in the
operation's own task did.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections import deque
from collections.abc import Callable
from contextlib import suppress
from contextvars import ContextVar
from typing import Any, cast

import orjson
from strawberry.asgi import ASGIWebSocketAdapter
from strawberry.subscriptions.protocols.graphql_transport_ws.handlers import (
    BaseGraphQLTransportWSHandler,
    Operation,
)

from api.fast.ws_protocol import PROTOCOL_KEY
from api.graphql.revocation import ORIGIN_WAIT, REVOKED_CLOSE, close_reason, hang_up_soon
from api.graphql.stream_limits import tarpit
from api.graphql.unrunnable import unrunnable
from api.graphql.ws_messages import MALFORMED, transport_problem
from domain.ports import SubscriptionClosed
from infra.work_meter import METER

CATCH_UP_BATCH = 64
"""Frames of a replay (the log, not live) put before waiting for the socket."""


class Outbox:
    """One connection's pushed frames, written in order by one task at a time."""

    def __init__(self, websocket: Any, limit: int) -> None:
        """``limit``: frames it may hold for its socket (``MMK_BUS_QUEUE_LIMIT``)."""
        self._websocket = websocket
        self._limit = limit
        self.batch = max(1, min(CATCH_UP_BATCH, limit // 2))
        self._frames: deque[tuple[Pusher, str]] | None = None  # made when needed
        self._writer: asyncio.Task[None] | None = None
        self._idle: asyncio.Event | None = None
        self.broken = False
        scope = getattr(getattr(websocket, "ws", None), "scope", None)
        now = None if not isinstance(scope, dict) else scope.get(PROTOCOL_KEY)
        # the protocol's send_now (held by its weak reference in the scope)
        self._now: Callable[[str], bool] | None = None if now is None else now()
        # The connection's context (its caller's meter): a write is the
        # subscriber's work, whoever's task published the event.
        self._context = contextvars.copy_context()

    def put(self, pusher: Pusher, text: str) -> None:
        if self.broken:
            raise SubscriptionClosed("the connection is closing")
        frames = self._frames
        if frames is None:
            now = self._now
            if now is not None and pusher.alive() and now(text):
                return  # nothing waited before it, and the socket took it
            frames = self._frames = deque()
        elif len(frames) >= self._limit:
            self.discard(pusher)
            raise SubscriptionClosed(f"slow subscriber: more than {self._limit} messages behind")
        frames.append((pusher, text))
        if self._writer is None:
            self._writer = asyncio.get_running_loop().create_task(
                self._write(), context=self._context.copy()
            )

    def __len__(self) -> int:
        return 0 if self._frames is None else len(self._frames)

    def discard(self, pusher: Pusher) -> None:
        """Forget the operation's frames not yet written."""
        if self._frames:
            self._frames = deque(f for f in self._frames if f[0] is not pusher)

    async def flushed(self) -> None:
        """Returns once every frame put so far is written (or dropped)."""
        while self._writer is not None:
            if self._idle is None:
                self._idle = asyncio.Event()
            await self._idle.wait()

    async def _write(self) -> None:
        pusher: Pusher | None = None
        try:
            send = cast("ASGIWebSocketAdapter", self._websocket).ws.send_text
            while self._frames:
                pusher, text = self._frames.popleft()
                if pusher.alive():  # not for an operation the client stopped
                    await send(text)
        except Exception:  # WebSocketDisconnect, or a send after the close
            # As when Strawberry's own send fails in an operation's task: the
            # operations that were writing end (the handler ends the rest).
            self.broken = True
            waiting = {f[0] for f in self._frames or ()}
            for failed in {pusher, *waiting}:
                if failed is not None:
                    failed.task.cancel()
        finally:
            self._frames = None  # an idle connection keeps no queue
            self._writer = None
            if self._idle is not None:
                self._idle.set()
                self._idle = None


class Pusher:
    """Writes one operation's frames as its protocol's data message (``kind``:
    ``next``, or graphql-ws's ``data``); ``alive`` says whether the client
    still wants them. Made in the operation's own task."""

    __slots__ = ("_head", "_outbox", "alive", "task")

    def __init__(
        self, outbox: Outbox, operation_id: str, kind: str, alive: Callable[[], bool]
    ) -> None:
        self._outbox, self.alive = outbox, alive
        self._head = f'{{"id":{orjson.dumps(operation_id).decode()},"type":"{kind}","payload":'
        task = asyncio.current_task()
        assert task is not None, "made in its operation's task"
        self.task = task

    def send(self, payload: str) -> None:
        """``payload``: the JSON of ``{"data": ...}``."""
        self._outbox.put(self, self._head + payload + "}")

    def discard(self) -> None:
        self._outbox.discard(self)

    async def caught_up(self) -> None:
        """Waits for the socket when a replay has put a batch: a long log
        is paced by its reader, never dropped for the outbox's size."""
        if len(self._outbox) >= self._outbox.batch:
            await self._outbox.flushed()

    async def flushed(self) -> None:
        await self._outbox.flushed()


OUTLET: ContextVar[Pusher | None] = ContextVar("mmk_push_outlet", default=None)
"""The pusher of the operation whose task is running, if it can push."""


def outbox_of(websocket: Any, context: Any) -> Outbox:
    """A connection's outbox, bounded by the bus's queue limit."""
    return Outbox(websocket, context.settings.bus_queue_limit)


class TransportWSHandler(BaseGraphQLTransportWSHandler[Any, None]):
    """Strawberry's graphql-transport-ws handler; an operation's task knows
    its pusher (:data:`OUTLET`): ``next`` messages. A message it cannot read
    closes the connection with 4400 (api/graphql/ws_messages.py); its token
    rotated or revoked, with 4401 (:meth:`hang_up`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.outbox = outbox_of(self.websocket, self.context)
        self._hanging_up: set[asyncio.Task[None]] = set()
        self.context.hang_up = self.hang_up

    def hang_up(self) -> None:
        """The connection's token was rotated or revoked: its operations
        stop, then it closes with 4401 (docs/decisions/0053)."""
        tasks = [op.task for op in self.operations.values()]
        hang_up_soon(self._hang_up, tasks, self._hanging_up)

    async def _hang_up(self, origin: asyncio.Task[object] | None) -> None:
        if origin is not None:  # the operation that revoked: its result first
            await asyncio.wait({origin}, timeout=ORIGIN_WAIT)
        tasks = [op.task for op in self.operations.values() if op.task is not None]
        for operation_id in list(self.operations):
            await self.cleanup_operation(operation_id)
        for task in tasks:
            with suppress(Exception, asyncio.CancelledError):
                await task
        with suppress(Exception):  # the client may be gone already
            await self.websocket.close(REVOKED_CLOSE, close_reason(self.context.ticket))

    async def shutdown(self) -> None:
        await super().shutdown()
        self.context.release()

    async def handle_message(self, message: Any) -> None:
        """Strawberry's dispatch, once the message is known readable: it
        caught a missing key only, so a payload that is not an object or a
        query that is not a string raised out of the handler. A null
        ``connection_init`` payload is no payload, as the protocol allows."""
        problem = transport_problem(message)
        if problem is not None:
            await self.websocket.close(MALFORMED, problem)
            return
        if message["type"] == "connection_init" and message.get("payload", {}) is None:
            message = {"type": "connection_init"}
        await super().handle_message(message)

    async def run_operation(self, operation: Operation[Any, None]) -> None:
        def alive() -> bool:
            return self.operations.get(operation.id) is operation and not operation.completed

        OUTLET.set(Pusher(self.outbox, operation.id, "next", alive))  # this task's own context
        await tarpit(METER.get())  # a connection whose budgets ran dry waits its turn
        limiter = getattr(getattr(self.view, "container", None), "limiter", None)
        refusal = await unrunnable(self.context, operation.query, operation.operation_name, limiter)
        if refusal is not None:  # Strawberry would fail it as INTERNAL
            await operation.send_initial_errors([refusal])
            return
        await super().run_operation(operation)


def legacy_pusher(handler: Any, operation_id: str) -> Pusher:
    """The pusher of a ``graphql-ws`` operation running in this task (its
    ``data`` messages); alive while the handler still runs this task for it."""
    task = asyncio.current_task()

    def alive() -> bool:
        return bool(handler.tasks.get(operation_id) is task)

    return Pusher(handler.outbox, operation_id, "data", alive)
