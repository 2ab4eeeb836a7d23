"""WebSocket framing for the benchmarks' lean clients (RFC 6455): client
frames out, server frames in. Bare on purpose: a general client library
costs more CPU a frame than the servers it measures (tests/bench/lean_ws.py)."""

from __future__ import annotations

import asyncio
import base64
import os
import struct
import time
from collections.abc import Iterator
from typing import cast

TEXT, CLOSE, PING, PONG = 0x1, 0x8, 0x9, 0xA


def client_frame(opcode: int, payload: bytes) -> bytes:
    """A client frame: final, masked (RFC 6455 5.3)."""
    n = len(payload)
    if n < 126:
        head = struct.pack("!BB", 0x80 | opcode, 0x80 | n)
    elif n < 1 << 16:
        head = struct.pack("!BBH", 0x80 | opcode, 0x80 | 126, n)
    else:
        head = struct.pack("!BBQ", 0x80 | opcode, 0x80 | 127, n)
    mask = os.urandom(4)
    key = int.from_bytes(mask * ((n + 3) // 4), "big") if n else 0
    body = (int.from_bytes(payload, "big") ^ (key >> (8 * (-n % 4)))).to_bytes(n, "big")
    return head + mask + body


def server_frames(buffer: bytearray) -> Iterator[tuple[int, bytes]]:
    """The whole (unmasked, unfragmented) frames at the head of ``buffer``,
    as (opcode, payload), each taken out of it; a partial frame stays."""
    while len(buffer) >= 2:
        opcode, size = buffer[0] & 0x0F, buffer[1] & 0x7F
        start = 2
        if size == 126:
            if len(buffer) < 4:
                return
            size, start = struct.unpack_from("!H", buffer, 2)[0], 4
        elif size == 127:
            if len(buffer) < 10:
                return
            size, start = struct.unpack_from("!Q", buffer, 2)[0], 10
        if len(buffer) < start + size:
            return
        payload = bytes(buffer[start : start + size])
        del buffer[: start + size]
        yield opcode, payload


def upgrade_request(netloc: str, path: str, protocol: str) -> bytes:
    """The client's opening handshake (RFC 6455 4.1) for one subprotocol."""
    key = base64.b64encode(os.urandom(16)).decode()
    return (
        f"GET {path} HTTP/1.1\r\nHost: {netloc}\r\n"
        "Upgrade: websocket\r\nConnection: Upgrade\r\n"
        f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
        f"Sec-WebSocket-Protocol: {protocol}\r\n\r\n"
    ).encode()


class ClientProtocol(asyncio.Protocol):
    """A client connection after its handshake request: the server's answer,
    then its frames, each stamped with its arrival time; subclasses say what
    to do with them."""

    def __init__(self) -> None:
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
            end = buf.find(b"\r\n\r\n")
            if end < 0:
                return
            status = bytes(buf[: buf.find(b"\r\n")])
            del buf[: end + 4]
            if b" 101 " not in status:
                self.on_refused(f"no upgrade: {status!r}")
                return
            self.upgraded = True
            self.on_upgraded()
        for opcode, payload in server_frames(buf):
            self.on_frame(opcode, payload, now)

    def on_upgraded(self) -> None:
        raise NotImplementedError

    def on_refused(self, reason: str) -> None:
        raise NotImplementedError

    def on_frame(self, opcode: int, payload: bytes, now: float) -> None:
        raise NotImplementedError
