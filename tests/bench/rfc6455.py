"""WebSocket framing for the benchmarks' lean clients (RFC 6455): client
frames out, server frames in. Bare on purpose: a general client library
costs more CPU a frame than the servers it measures (tests/bench/lean_ws.py)."""

from __future__ import annotations

import os
import struct
from collections.abc import Iterator

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


def take_handshake(buffer: bytearray) -> bytes | None:
    """The server's handshake answer out of ``buffer``: None while it is
    incomplete, ``b""`` once the connection is upgraded (101), else the
    status line of the refusal."""
    end = buffer.find(b"\r\n\r\n")
    if end < 0:
        return None
    status = bytes(buffer[: buffer.find(b"\r\n")])
    del buffer[: end + 4]
    return b"" if b" 101 " in status else status
