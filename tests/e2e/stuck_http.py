"""An HTTP client that stops reading its streamed subscription: it sends the
``POST /graphql`` over a plain blocking socket with a tiny receive buffer
and a small segment size, and never reads, so the server's writes pile up
(a phone in a tunnel, a wedged app).

The segment size matters on loopback: there a segment is ~64 KiB and the
sending kernel lets its buffer grow to megabytes before the server's own
writes block. With 536-byte segments (``TCP_MAXSEG`` before connecting,
which the server's side takes from the handshake), they block after ~100 KB."""

from __future__ import annotations

import json
import socket
from typing import Any
from urllib.parse import urlsplit

RCVBUF = 4096  # bytes; the kernel doubles it, and no autotuning once set
SEGMENT = 536  # bytes: the smallest MSS every TCP must accept


class StuckStream:
    """Subscribe over HTTP with ``accept``, then never read."""

    def __init__(self, base_url: str, accept: str, operation: dict[str, Any]) -> None:
        parts = urlsplit(base_url)
        assert parts.hostname is not None and parts.port is not None
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, RCVBUF)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG, SEGMENT)
        self.sock.settimeout(5)
        self.sock.connect((parts.hostname, parts.port))
        body = json.dumps(operation).encode()
        head = (
            "POST /graphql HTTP/1.1\r\n"
            f"Host: {parts.netloc}\r\n"
            "Content-Type: application/json\r\n"
            f"Accept: {accept}\r\n"
            f"Content-Length: {len(body)}\r\n\r\n"
        )
        self.sock.sendall(head.encode() + body)

    def close(self) -> None:
        self.sock.close()
