"""A tiny GraphQL-over-WebSocket client for end-to-end tests.

It speaks both sub-protocols Strawberry serves:

- ``graphql-transport-ws``: connection_init -> connection_ack,
  subscribe / next / error / complete, ping / pong;
- legacy ``graphql-ws``: connection_init -> connection_ack (or
  connection_error), start / data / error / complete, ka, stop.

Every text frame the server sends is kept, unparsed, in ``raw`` (in arrival
order) so tests can search what actually went over the wire.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed
from websockets.typing import Subprotocol

TRANSPORT_WS = "graphql-transport-ws"
LEGACY_WS = "graphql-ws"
PROTOCOLS = (TRANSPORT_WS, LEGACY_WS)

_DONE = object()  # queued when an operation (or the connection) ends


class ConnectionRejected(Exception):
    """The server refused ``connection_init`` (close code and/or error frame)."""

    def __init__(self, code: int | None, frame: dict[str, Any] | None, reason: str = "") -> None:
        super().__init__(f"connection rejected: close code {code} {reason!r}, frame {frame}")
        self.code, self.frame, self.reason = code, frame, reason


class OperationEnded(Exception):
    """The operation completed, failed, or the connection closed."""


@dataclass
class Operation:
    """One running subscription: its ``next``/``data`` payloads, in order."""

    id: str
    client: GraphQLWebSocket
    queue: asyncio.Queue[Any] = field(default_factory=asyncio.Queue)
    errors: list[Any] = field(default_factory=list)
    done: bool = False

    async def next(self, timeout: float) -> dict[str, Any]:
        """The next result payload (``{"data": ..., "errors": ...}``); raises
        :class:`OperationEnded` once the operation is over, ``TimeoutError``
        if nothing arrives in ``timeout`` seconds."""
        item = await asyncio.wait_for(self.queue.get(), timeout)
        if item is _DONE:
            self.queue.put_nowait(_DONE)  # stay ended for later calls
            raise OperationEnded(f"operation {self.id} ended; errors {self.errors}")
        return item  # type: ignore[no-any-return]

    async def stop(self) -> None:
        await self.client._stop(self.id)


class GraphQLWebSocket:
    """One WebSocket connection speaking ``protocol``."""

    def __init__(self, url: str, protocol: str) -> None:
        assert protocol in PROTOCOLS, protocol
        self.url, self.protocol = url, protocol
        self.raw: list[str] = []  # every text frame received, verbatim
        self.frames: list[dict[str, Any]] = []  # the same, parsed
        self.close_code: int | None = None
        self._ws: ClientConnection | None = None
        self._reader: asyncio.Task[None] | None = None
        self._ops: dict[str, Operation] = {}
        self._ids = itertools.count(1)
        self._ack: asyncio.Future[dict[str, Any]] | None = None
        self._pongs: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.closed = asyncio.Event()

    # ------------------------------------------------------------ connection
    async def connect(
        self, payload: dict[str, Any] | None = None, *, timeout: float = 5
    ) -> dict[str, Any]:
        """Open the socket and send ``connection_init`` with ``payload``
        (None: no payload at all); returns the ack frame, or raises
        :class:`ConnectionRejected`."""
        self._ws = await asyncio.wait_for(
            connect(
                self.url,
                subprotocols=[Subprotocol(self.protocol)],
                open_timeout=timeout,
                proxy=None,  # loopback: never through a proxy from the environment
            ),
            timeout,
        )
        assert self._ws.subprotocol == self.protocol, self._ws.subprotocol
        self._ack = asyncio.get_running_loop().create_future()
        self._reader = asyncio.create_task(self._read())
        init: dict[str, Any] = {"type": "connection_init"}
        if payload is not None:
            init["payload"] = payload
        await self._send(init)
        try:
            return await asyncio.wait_for(asyncio.shield(self._ack), timeout)
        except ConnectionRejected:
            await self.close()
            raise

    async def close(self) -> None:
        """Close the socket (normal closure) and stop reading."""
        if self._ws is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._ws.close(), 5)
        if self._reader is not None:
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await asyncio.wait_for(self._reader, 5)

    async def abort(self) -> None:
        """Drop the TCP connection with no closing handshake (a phone that
        loses its network), and stop reading."""
        if self._ws is not None:
            self._ws.transport.abort()
        if self._reader is not None:
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await asyncio.wait_for(self._reader, 5)

    async def __aenter__(self) -> GraphQLWebSocket:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def wait_closed(self, timeout: float) -> int | None:
        """Wait for the server to close the socket; returns the close code."""
        await asyncio.wait_for(self.closed.wait(), timeout)
        return self.close_code

    # ------------------------------------------------------------ operations
    async def subscribe(self, query: str, variables: dict[str, Any] | None = None) -> Operation:
        op_id = str(next(self._ids))
        op = Operation(op_id, self)
        self._ops[op_id] = op
        body = {"query": query, "variables": variables or {}}
        kind = "subscribe" if self.protocol == TRANSPORT_WS else "start"
        await self._send({"type": kind, "id": op_id, "payload": body})
        return op

    async def ping(self, timeout: float = 5) -> dict[str, Any]:
        """``graphql-transport-ws`` only: ping, and return the pong frame."""
        assert self.protocol == TRANSPORT_WS
        await self._send({"type": "ping"})
        return await asyncio.wait_for(self._pongs.get(), timeout)

    async def _stop(self, op_id: str) -> None:
        kind = "complete" if self.protocol == TRANSPORT_WS else "stop"
        await self._send({"type": kind, "id": op_id})

    async def _send(self, message: dict[str, Any]) -> None:
        await self.send_raw(json.dumps(message))

    async def send_raw(self, frame: str | bytes) -> None:
        """One frame as it is (text, or binary for bytes), malformed or not."""
        assert self._ws is not None
        await self._ws.send(frame)

    @property
    def close_reason(self) -> str:
        """The reason of the server's close frame, once closed."""
        return "" if self._ws is None else self._ws.close_reason or ""

    # ------------------------------------------------------------ reading
    async def _read(self) -> None:
        assert self._ws is not None
        try:
            async for text in self._ws:
                if isinstance(text, bytes):
                    text = text.decode()
                self.raw.append(text)
                frame = json.loads(text)
                self.frames.append(frame)
                await self._dispatch(frame)
        except ConnectionClosed:
            pass
        finally:
            rcvd = self._ws.close_code
            self.close_code = rcvd
            if self._ack is not None and not self._ack.done():
                self._ack.set_exception(ConnectionRejected(rcvd, None, self._ws.close_reason or ""))
                self._ack.exception()  # retrieved here, so never "unretrieved"
            for op in self._ops.values():
                self._end(op)
            self.closed.set()

    async def _dispatch(self, frame: dict[str, Any]) -> None:
        kind = frame.get("type")
        if kind == "connection_ack":
            if self._ack is not None and not self._ack.done():
                self._ack.set_result(frame)
        elif kind == "connection_error":
            if self._ack is not None and not self._ack.done():
                self._ack.set_exception(ConnectionRejected(None, frame))
                self._ack.exception()
        elif kind == "ping":
            await self._send({"type": "pong"})
        elif kind == "pong":
            self._pongs.put_nowait(frame)
        elif kind == "ka":
            pass
        elif kind in ("next", "data"):
            op = self._ops.get(frame.get("id", ""))
            if op is not None:
                payload = frame.get("payload") or {}
                if payload.get("errors"):
                    op.errors.extend(payload["errors"])
                op.queue.put_nowait(payload)
        elif kind == "error":
            op = self._ops.get(frame.get("id", ""))
            if op is not None:
                payload = frame.get("payload")
                op.errors.extend(payload if isinstance(payload, list) else [payload])
                self._end(op)
        elif kind == "complete":
            op = self._ops.get(frame.get("id", ""))
            if op is not None:
                self._end(op)

    @staticmethod
    def _end(op: Operation) -> None:
        if not op.done:
            op.done = True
            op.queue.put_nowait(_DONE)


@contextlib.asynccontextmanager
async def ws_connection(
    url: str, protocol: str, token: str | None = None, *, payload: Any = None
) -> AsyncIterator[GraphQLWebSocket]:
    """A connected client; ``token`` goes into the ``connection_init`` payload
    as ``{"authorization": "Bearer <token>"}`` (no token: no payload)."""
    client = GraphQLWebSocket(url, protocol)
    if token is not None:
        payload = {"authorization": f"Bearer {token}"}
    await client.connect(payload)
    try:
        yield client
    finally:
        await client.close()
