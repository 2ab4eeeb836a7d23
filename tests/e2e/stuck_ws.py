"""A WebSocket client that stops reading: it does the handshake and sends
``graphql-transport-ws`` messages over a plain blocking socket with a tiny
receive buffer, and never reads again, so the server's writes pile up in the
TCP buffers (a phone in a tunnel, a wedged app)."""

from __future__ import annotations

import json
import socket
import time
from typing import Any
from urllib.parse import urlsplit

from websockets.client import ClientProtocol
from websockets.protocol import State
from websockets.typing import Subprotocol
from websockets.uri import parse_uri

from tests.e2e.client import SUBSCRIBE_EVENTS
from tests.e2e.wsclient import TRANSPORT_WS

RCVBUF = 4096  # bytes; the kernel doubles it, and no autotuning once set


class StuckSubscriber:
    """Open, subscribe, then never read."""

    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        assert parts.hostname is not None and parts.port is not None
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, RCVBUF)
        self.sock.settimeout(5)
        self.sock.connect((parts.hostname, parts.port))
        self.proto = ClientProtocol(parse_uri(url), subprotocols=[Subprotocol(TRANSPORT_WS)])
        self.proto.send_request(self.proto.connect())
        self._flush()
        while self.proto.state is State.CONNECTING:  # read the handshake only
            data = self.sock.recv(4096)
            assert data, "the server closed the connection during the handshake"
            self.proto.receive_data(data)
        assert self.proto.state is State.OPEN, self.proto.handshake_exc
        self._ids = 0
        self.send({"type": "connection_init"})

    def send(self, message: dict[str, Any]) -> None:
        self.proto.send_text(json.dumps(message).encode())
        self._flush()

    def subscribe(self, game_id: str, after_seq: int = 0) -> str:
        self._ids += 1
        op_id = str(self._ids)
        variables = {"gameId": game_id, "afterSeq": after_seq}
        self.send(
            {
                "type": "subscribe",
                "id": op_id,
                "payload": {"query": SUBSCRIBE_EVENTS, "variables": variables},
            }
        )
        return op_id

    def complete(self, op_id: str) -> None:
        self.send({"type": "complete", "id": op_id})

    def dropped(self, within: float = 5.0) -> bool:
        """Whether the server has let the connection go, seen without reading:
        the server's kernel answers bytes for a closed socket with a reset,
        which fails a later send."""
        deadline = time.monotonic() + within
        while time.monotonic() < deadline:
            try:
                self.proto.send_ping(b"?")
                self._flush()
            except OSError:
                return True
            time.sleep(0.1)
        return False

    def close(self) -> None:
        self.sock.close()

    def _flush(self) -> None:
        self.sock.sendall(b"".join(self.proto.data_to_send()))
