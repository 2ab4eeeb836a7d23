"""uvicorn's sans-I/O WebSocket protocol, with a bound on a client that stops
reading (``mmk serve`` uses it: ``ws="api.fast.ws_protocol:WebSocketProtocol"``).

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

It also coalesces writes: the data frames sent to one connection within one
turn of the event loop go out in one ``transport.write`` at its end (a move
that ends a trick brings ~10 events to every subscriber: one system call per
subscriber instead of ten, and the client wakes once).

Connection hygiene (issue #14, docs/decisions/0044): a client may send
``MMK_WS_MESSAGE_RATE`` frames a second, in bursts of as many, pings and
pongs included (a ping flood slowed every other connection: each ping is
parsed and answered); more close the connection with 1008. The WebSocket
releases its place in the per-IP counts (api/connections.py) when it ends.

Malformed frames (issue #22, docs/decisions/0052): a text message that is
not UTF-8 closes the connection with 1007 (RFC 6455: "invalid frame payload
data"), where uvicorn logged an error with a traceback for each one; a frame
the WebSocket parser refuses (a protocol error, 1002; too large, 1009) is
closed with its code, as before. Either is logged through the throttled
log (api/throttled_log.py): one line an interval, with a count.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import weakref
from typing import Any

from uvicorn.protocols.utils import ClientDisconnected
from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from websockets.exceptions import InvalidState
from websockets.frames import Frame

from api.connections import registry_of, settings
from api.throttled_log import ThrottledLog

log = logging.getLogger("mmk.ws")
PING_INTERVAL = 20.0
"""Seconds between the server's pings (uvicorn's default, set by ``mmk
serve``): a proxy's read timeout must be longer (docker/nginx.conf)."""
FLOODED = 1008  # policy violation: every client library knows it
INVALID_DATA = 1007  # RFC 6455: a text message that is not UTF-8
flood_line = ThrottledLog(log, logging.WARNING, settings().connection_log_interval)
malformed_line = ThrottledLog(log, logging.INFO, settings().connection_log_interval)
# a client gone without a word (a phone off the network) is common: throttled
silent_line = ThrottledLog(log, logging.INFO, settings().connection_log_interval)


PROTOCOL_KEY = "mmk.send_now"
"""The scope's key of the connection's :meth:`WebSocketProtocol.send_now`
(a weak reference): pushed frames are written through it (api/fast/push.py)."""
UNSENT_FRAMES = 64
"""Frames :meth:`WebSocketProtocol.send_now` takes in one loop turn before
it says no (a replay is then paced by its reader, as before)."""


@functools.cache
def send_timeout() -> float:
    """Seconds a write may stay blocked (each worker reads the environment)."""
    return float(settings().ws_send_timeout)


class WebSocketProtocol(WebSocketsSansIOProtocol):
    """Aborts a connection whose client has stopped reading."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._stalled: asyncio.TimerHandle | None = None
        self._unsent: list[bytes] = []
        self._flush_soon: asyncio.Handle | None = None
        self.rate = float(settings().ws_message_rate)  # frames a second; 0: no limit
        self._allowance, self._counted_at = self.rate, 0.0

    async def send(self, message: Any) -> None:
        """A data frame joins the ones waiting for the end of this loop turn;
        anything else (accept, close) goes after them, as uvicorn sends it."""
        if (
            message["type"] != "websocket.send"
            or not self.handshake_complete
            or self.close_sent
            or self.initial_response is not None
        ):
            self._flush()
            await super().send(message)
            return
        await self.writable.wait()
        if self.disconnected:
            raise ClientDisconnected()
        try:
            data = message.get("bytes")
            if data is not None:
                self.conn.send_binary(data)
            else:
                self.conn.send_text(message["text"].encode())
        except InvalidState:
            raise ClientDisconnected() from None
        self._unsent.extend(self.conn.data_to_send())
        if self._flush_soon is None:
            self._flush_soon = self.loop.call_soon(self._flush)

    async def run_asgi(self) -> None:
        self.scope[PROTOCOL_KEY] = weakref.WeakMethod(self.send_now)  # type: ignore[literal-required]
        await super().run_asgi()

    def send_now(self, text: str) -> bool:
        """A text frame joins this loop turn's write at once, as :meth:`send`
        would add it, when it would not wait: the connection open and
        writable, fewer than :data:`UNSENT_FRAMES` waiting. False: it did
        not (use :meth:`send`). A fan-out then costs no task a socket."""
        if (
            not self.writable.is_set()
            or self.disconnected
            or not self.handshake_complete
            or self.close_sent
            or self.initial_response is not None
            or len(self._unsent) >= UNSENT_FRAMES
        ):
            return False
        try:
            self.conn.send_text(text.encode())
        except InvalidState:
            return False
        self._unsent.extend(self.conn.data_to_send())
        if self._flush_soon is None:
            self._flush_soon = self.loop.call_soon(self._flush)
        return True

    def _flush(self) -> None:
        if self._flush_soon is not None:
            self._flush_soon.cancel()
            self._flush_soon = None
        if self._unsent:
            data, self._unsent = b"".join(self._unsent), []
            if not self.transport.is_closing():
                self.transport.write(data)

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
        else:
            silent_line("WebSocket closed: client answered no ping for %g s", PING_INTERVAL)

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel()
        self._unsent.clear()
        registry_of(self.config).close(id(self.transport))
        super().connection_lost(exc)

    # Every frame received passes the rate limit first.
    def handle_text(self, event: Frame) -> None:
        if not self._flooded():
            super().handle_text(event)

    def handle_bytes(self, event: Frame) -> None:
        if not self._flooded():
            super().handle_bytes(event)

    def handle_cont(self, event: Frame) -> None:
        if not self._flooded():
            super().handle_cont(event)

    def handle_ping(self) -> None:
        if not self._flooded():
            super().handle_ping()

    def handle_pong(self, event: Frame) -> None:
        if not self._flooded():
            super().handle_pong(event)

    def send_receive_event_to_app(self) -> None:
        """A whole message for the app; a text one that is not UTF-8 closes
        the connection with 1007 instead (uvicorn's own check logs a
        traceback each time)."""
        if self.curr_msg_data_type == "text" and not self.close_sent:
            data = self.frames[0] if len(self.frames) == 1 else b"".join(self.frames)
            try:
                data.decode()  # client messages are small (MAX_WS_MESSAGE_BYTES)
            except UnicodeDecodeError as e:
                self.frames = []
                self._fail(INVALID_DATA, f"invalid UTF-8 in a text message at byte {e.start}")
                return
        super().send_receive_event_to_app()

    def handle_parser_exception(self) -> None:
        """A frame the parser refused: it has already chosen the close
        frame (1002, 1009, ...); said once an interval."""
        sent = self.conn.close_sent
        malformed_line(
            "WebSocket closed (%s): %s",
            sent.code if sent else "?",
            sent.reason if sent else self.conn.parser_exc,
        )
        super().handle_parser_exception()

    def _fail(self, code: int, reason: str) -> None:
        """Closes the connection with ``code`` at once, the client's
        messages unread (as a flood is closed)."""
        malformed_line("WebSocket closed (%d): %s", code, reason)
        self.conn.fail(code, reason)
        self.transport.write(b"".join(self.conn.data_to_send()))
        self.close_sent = True
        self.transport.close()

    def _flooded(self) -> bool:
        """Takes one frame from the allowance (a token bucket of ``rate``
        frames, refilled at ``rate`` a second); closes the connection with
        1008 when there is none left."""
        if self.rate <= 0 or self.close_sent:
            return False
        now = self.loop.time()
        if self._counted_at:
            self._allowance = min(self.rate, self._allowance + (now - self._counted_at) * self.rate)
        self._counted_at = now
        if self._allowance >= 1:
            self._allowance -= 1
            return False
        flood_line("WebSocket closed: over %g frames a second", self.rate)
        self.conn.fail(FLOODED, "message rate limit exceeded")
        self.transport.write(b"".join(self.conn.data_to_send()))
        self.close_sent = True
        self.transport.close()
        return True

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
