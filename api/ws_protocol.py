"""uvicorn's sans-I/O WebSocket protocol, with a bound on a client that stops
reading (``mmk serve`` uses it: ``ws="api.ws_protocol:WebSocketProtocol"``).

Without it, a client that keeps its connection open but never reads fills the
TCP buffers; then every ``send`` to it waits forever (uvicorn awaits the
transport's "writable" signal), and even uvicorn's keep-alive timeout cannot
end the connection: ``transport.close()`` waits for the unsent bytes to
drain, which never happens. The subscription's tasks and the socket would
stay until the process ends. Here, writes that stay blocked for
``MMK_WS_SEND_TIMEOUT`` seconds, or a keep-alive timeout with bytes still
unsent, abort the connection (a TCP reset): its subscriptions end (their
``finally`` releases the bus) and the client, if alive, reconnects and
resumes with ``afterSeq``. Other connections are never waited on: the bus
hands each subscriber a bounded queue and drops the ones that fall behind.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from typing import Any

from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol

from infra.settings import Settings

log = logging.getLogger("mmk.ws")


@functools.cache
def send_timeout() -> float:
    """Seconds a write may stay blocked (each worker reads the environment)."""
    return float(Settings.from_env().ws_send_timeout)


class WebSocketProtocol(WebSocketsSansIOProtocol):
    """Aborts a connection whose client has stopped reading."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._stalled: asyncio.TimerHandle | None = None

    def pause_writing(self) -> None:
        """The transport's buffer is over its high-water mark: the kernel's
        buffers are full and the client is not taking bytes."""
        super().pause_writing()
        if self._stalled is None:
            self._stalled = self.loop.call_later(send_timeout(), self._abort, "not reading")

    def resume_writing(self) -> None:
        self._cancel()
        super().resume_writing()

    def keepalive_timeout(self) -> None:
        super().keepalive_timeout()  # sends a close frame and closes, politely
        if self.transport.get_write_buffer_size():
            self._abort("no pong, bytes unsent")  # the polite close would wait forever

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel()
        super().connection_lost(exc)

    def _abort(self, why: str) -> None:
        self._stalled = None
        log.warning(
            "WebSocket dropped: client %s (%d bytes unsent)",
            why,
            self.transport.get_write_buffer_size(),
        )
        self.transport.abort()

    def _cancel(self) -> None:
        if self._stalled is not None:
            self._stalled.cancel()
            self._stalled = None
