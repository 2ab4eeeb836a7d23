"""A lean ``gameEvents`` subscriber for the fan-out benchmark: a WebSocket
client on a bare asyncio protocol (RFC 6455 framing, both GraphQL
subscription protocols) that stamps each event's arrival and does nothing
else. A general client library costs ~70 us of CPU per frame; with 58
subscribers on a 2-core machine the measuring client would take more CPU
than the servers it measures, and its work would show up as their latency.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import os
import struct
import time
from typing import Any, Protocol, cast
from urllib.parse import urlsplit

from tests.bench.rfc6455 import CLOSE, PING, PONG, TEXT, client_frame, server_frames, take_handshake

SEQ = b'"seq":'


class Listener(Protocol):
    def arrived(self, socket: LeanSocket) -> None: ...


class _Wire(asyncio.Protocol):
    def __init__(self, owner: LeanSocket) -> None:
        self.owner = owner
        self.buffer = bytearray()
        self.upgraded = False
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's is not a subclass

    def data_received(self, data: bytes) -> None:
        now = time.perf_counter()
        buf = self.buffer
        buf += data
        if not self.upgraded:
            refused = take_handshake(buf)
            if refused is None:
                return
            if refused:
                self.owner.failed(f"no upgrade: {refused!r}")
                return
            self.upgraded = True
            self.owner.opened.set()
        for opcode, payload in server_frames(buf):
            self.owner.frame(opcode, payload, now)

    def connection_lost(self, exc: Exception | None) -> None:
        self.owner.closed.set()


class LeanSocket:
    """One subscription on its own connection. ``arrivals`` maps each event's
    seq to the time its frame arrived; ``listener.arrived`` is called when a
    new highest seq arrives."""

    def __init__(self, url: str, protocol: str, listener: Listener, instance: str) -> None:
        self.url, self.protocol, self.listener, self.instance = url, protocol, listener, instance
        self.arrivals: dict[int, float] = {}
        self.last_seq = 0
        self.opened, self.acked, self.closed = asyncio.Event(), asyncio.Event(), asyncio.Event()
        self.error: str | None = None
        self._wire: _Wire | None = None

    async def open(self, token: str | None, game_id: str, subscribe_query: str) -> None:
        parts = urlsplit(self.url)
        loop = asyncio.get_running_loop()
        _, wire = await loop.create_connection(
            lambda: _Wire(self), parts.hostname or "127.0.0.1", parts.port or 80
        )
        self._wire = wire
        key = base64.b64encode(os.urandom(16)).decode()
        request = (
            f"GET {parts.path or '/'} HTTP/1.1\r\nHost: {parts.netloc}\r\n"
            "Upgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
            f"Sec-WebSocket-Protocol: {self.protocol}\r\n\r\n"
        )
        assert wire.transport is not None
        wire.transport.write(request.encode())
        await asyncio.wait_for(self.opened.wait(), 10)
        init: dict[str, Any] = {"type": "connection_init"}
        if token is not None:
            init["payload"] = {"authorization": f"Bearer {token}"}
        self._send(init)
        await asyncio.wait_for(self.acked.wait(), 10)
        kind = "subscribe" if self.protocol == "graphql-transport-ws" else "start"
        body = {"query": subscribe_query, "variables": {"gameId": game_id, "afterSeq": 0}}
        self._send({"type": kind, "id": "1", "payload": body})

    def _send(self, message: dict[str, Any], opcode: int = TEXT) -> None:
        self._write(client_frame(opcode, json.dumps(message).encode()))

    def _write(self, data: bytes) -> None:
        if self._wire is not None and self._wire.transport is not None:
            self._wire.transport.write(data)

    def failed(self, reason: str) -> None:
        self.error = reason
        self.opened.set()
        self.acked.set()

    def frame(self, opcode: int, payload: bytes, now: float) -> None:
        if opcode == TEXT:
            at = payload.find(SEQ)
            if at >= 0:
                start = at + len(SEQ)
                seq = int(payload[start : payload.index(b",", start)])
                self.arrivals[seq] = now
                if seq > self.last_seq:
                    self.last_seq = seq
                    self.listener.arrived(self)
            elif not self.acked.is_set() and b"connection_ack" in payload:
                self.acked.set()
        elif opcode == PING:
            self._write(client_frame(PONG, payload))
        elif opcode == CLOSE:
            self.closed.set()

    async def close(self) -> None:
        if self._wire is None or self._wire.transport is None:
            return
        if not self.closed.is_set():
            self._write(client_frame(CLOSE, struct.pack("!H", 1000)))
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.closed.wait(), 2)
        self._wire.transport.close()
