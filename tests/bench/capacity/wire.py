"""The load process's cheap clients (issue #13): HTTP/1.1 keep-alive
requests and graphql-transport-ws WebSockets on bare asyncio, so thousands of
them cost the load process a fraction of what the server spends on them (a
general client library costs ~70 us of CPU a frame, tests/bench/lean_ws.py).
"""

from __future__ import annotations

import asyncio
import struct
import time
from collections.abc import Callable
from contextlib import suppress
from typing import Any

import orjson

from tests.bench.http_load import read_response
from tests.bench.rfc6455 import (
    CLOSE,
    PING,
    PONG,
    TEXT,
    ClientProtocol,
    client_frame,
    upgrade_request,
)

HOST = "127.0.0.1"
IDLE_S = 4.0
"""A keep-alive connection idle this long is replaced before use, like a
browser that does not race the server's idle timeout (uvicorn's default is
5 s; ``mmk serve`` keeps 75 s, ``MMK_KEEP_ALIVE_TIMEOUT``)."""


class Http:
    """One keep-alive HTTP/1.1 connection; one request at a time."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        port: int,
        idle_s: float = IDLE_S,
    ):
        self.reader, self.writer, self.port, self.idle_s = reader, writer, port, idle_s
        self.host = f"Host: {HOST}:{port}\r\n".encode()
        self.reopened = 0
        self.used = time.perf_counter()
        self.lock = asyncio.Lock()

    @classmethod
    async def open(cls, port: int, idle_s: float = IDLE_S) -> Http:
        reader, writer = await asyncio.open_connection(HOST, port)
        return cls(reader, writer, port, idle_s)

    async def graphql(
        self, query: str, operation: str, variables: dict[str, Any], token: str | None = None
    ) -> dict[str, Any]:
        """POST /graphql; the decoded JSON response (raises on a non-200)."""
        body = orjson.dumps({"query": query, "operationName": operation, "variables": variables})
        auth = b"" if token is None else f"Authorization: Bearer {token}\r\n".encode()
        raw = b"POST /graphql HTTP/1.1\r\n%sContent-Type: application/json\r\n%s" % (
            self.host,
            auth,
        ) + b"Content-Length: %d\r\n\r\n%s" % (len(body), body)
        status, answer = await self._exchange(raw)
        if status != 200:
            raise RuntimeError(f"{operation}: HTTP {status}: {answer[:300]!r}")
        result: dict[str, Any] = orjson.loads(answer)
        return result

    async def get(self, path: str) -> tuple[int, bytes]:
        return await self._exchange(b"GET %s HTTP/1.1\r\n%s\r\n" % (path.encode(), self.host))

    async def _exchange(self, raw: bytes) -> tuple[int, bytes]:
        async with self.lock:
            idle = time.perf_counter() - self.used
            if idle > self.idle_s or self.reader.at_eof() or self.writer.is_closing():
                # the server closes an idle keep-alive connection: like
                # browsers, do not race it: open another
                self.writer.close()
                self.reader, self.writer = await asyncio.open_connection(HOST, self.port)
                self.reopened += 1
            self.writer.write(raw)
            status, body = await read_response(self.reader)
            self.used = time.perf_counter()
            return status, body

    async def close(self) -> None:
        self.writer.close()
        with suppress(ConnectionError):
            await self.writer.wait_closed()


Handler = Callable[[str, dict[str, Any], float], None]
"""Called with each ``next`` message: its operation id, payload, arrival time."""


class Feed(ClientProtocol):
    """One graphql-transport-ws WebSocket (RFC 6455 framing by hand)."""

    def __init__(self, on_next: Handler, on_lost: Callable[[str], None]) -> None:
        super().__init__()
        self.on_next, self.on_lost = on_next, on_lost
        self.opened = asyncio.get_running_loop().create_future()
        self.acked = asyncio.get_running_loop().create_future()
        self.closing = False

    @classmethod
    async def open(
        cls, port: int, token: str | None, on_next: Handler, on_lost: Callable[[str], None]
    ) -> Feed:
        loop = asyncio.get_running_loop()
        _, feed = await loop.create_connection(lambda: cls(on_next, on_lost), HOST, port)
        assert feed.transport is not None
        feed.transport.write(upgrade_request(f"{HOST}:{port}", "/graphql", "graphql-transport-ws"))
        await asyncio.wait_for(feed.opened, 30)
        init: dict[str, Any] = {"type": "connection_init"}
        if token is not None:
            init["payload"] = {"authorization": f"Bearer {token}"}
        feed.send(init)
        await asyncio.wait_for(feed.acked, 30)
        return feed

    def subscribe(self, op_id: str, query: str, variables: dict[str, Any]) -> None:
        self.send(
            {"type": "subscribe", "id": op_id, "payload": {"query": query, "variables": variables}}
        )

    def send(self, message: dict[str, Any], opcode: int = TEXT) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.transport.write(client_frame(opcode, orjson.dumps(message)))

    def on_upgraded(self) -> None:
        self.opened.set_result(None)

    def on_refused(self, reason: str) -> None:
        self._fail(reason)

    def on_frame(self, opcode: int, payload: bytes, now: float) -> None:
        if opcode == TEXT:
            message = orjson.loads(payload)
            kind = message.get("type")
            if kind == "next":
                self.on_next(message["id"], message["payload"], now)
            elif kind == "connection_ack":
                if not self.acked.done():
                    self.acked.set_result(None)
            elif kind == "ping":
                self.send({"type": "pong"})
            elif kind == "error":
                self.on_lost(f"subscription error: {payload[:300]!r}")
        elif opcode == PING:
            if self.transport is not None:
                self.transport.write(client_frame(PONG, payload))
        elif opcode == CLOSE:
            code = struct.unpack_from("!H", payload)[0] if len(payload) >= 2 else 1005
            self._fail(f"closed by the server: {code} {payload[2:]!r}")

    def _fail(self, reason: str) -> None:
        for future in (self.opened, self.acked):
            if not future.done():
                future.set_exception(RuntimeError(reason))
        if not self.closing:
            self.closing = True
            self.on_lost(reason)
        if self.transport is not None:
            self.transport.close()

    def connection_lost(self, exc: Exception | None) -> None:
        self._fail(f"connection lost: {exc}")

    def close(self) -> None:
        self.closing = True
        if self.transport is not None and not self.transport.is_closing():
            self.transport.write(client_frame(CLOSE, struct.pack("!H", 1000)))
            self.transport.close()
