"""A lean ``gameEvents`` subscriber for the fan-out benchmark: a WebSocket
client on a bare asyncio protocol (RFC 6455 framing, both GraphQL
subscription protocols) that stamps each event's arrival and does nothing
else. A general client library costs ~70 us of CPU per frame; with 58
subscribers on a 2-core machine the measuring client would take more CPU
than the servers it measures, and its work would show up as their latency.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import struct
from typing import Any, Protocol
from urllib.parse import urlsplit

from tests.bench.rfc6455 import (
    CLOSE,
    PING,
    PONG,
    TEXT,
    ClientProtocol,
    client_frame,
    upgrade_request,
)

SEQ = b'"seq":'


class Listener(Protocol):
    def arrived(self, socket: LeanSocket) -> None: ...


class _Wire(ClientProtocol):
    def __init__(self, owner: LeanSocket) -> None:
        super().__init__()
        self.owner = owner

    def on_upgraded(self) -> None:
        self.owner.opened.set()

    def on_refused(self, reason: str) -> None:
        self.owner.failed(reason)

    def on_frame(self, opcode: int, payload: bytes, now: float) -> None:
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
        assert wire.transport is not None
        wire.transport.write(upgrade_request(parts.netloc, parts.path or "/", self.protocol))
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
