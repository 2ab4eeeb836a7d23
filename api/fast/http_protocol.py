"""uvicorn's httptools HTTP protocol, with connection hygiene (issues #14
and #22; ``mmk serve`` uses it: ``http="api.fast.http_protocol:HttpProtocol"``;
docs/decisions/0044, docs/decisions/0052).

- A connection that has not sent a request's complete headers within
  ``MMK_HEADER_TIMEOUT`` seconds (from the connection, or from the request's
  first byte on a kept-alive one) is closed; so is a request whose body has
  not arrived within ``MMK_BODY_TIMEOUT`` seconds of its headers. uvicorn
  has neither: a silent or trickling client held its socket forever.
- Every connection is counted (api/connections.py): over the process
  ceiling (``MMK_MAX_CONNECTIONS``) it gets a 503, over its IP's cap
  (``MMK_MAX_CONNECTIONS_PER_IP``) a 429, both coded ``RATE_LIMITED`` and
  closed at once; a WebSocket upgrade over ``MMK_MAX_WS_PER_IP`` gets a 429.
- A request's line and headers are counted as they arrive, before the
  parser buffers them: past ``MMK_MAX_HEADER_BYTES`` the request gets a 431,
  coded ``BAD_INPUT``, and the connection is closed (httptools has no such
  bound: a 16 MB header was read whole and answered). The next request of a
  kept-alive connection, and a WebSocket upgrade, are counted the same way.
- A request that does not parse gets a coded 400 (uvicorn's is plain text).
- A response whose client has stopped reading (writes blocked for
  ``MMK_WS_SEND_TIMEOUT`` seconds, as WebSockets: api/fast/ws_protocol.py) is
  aborted: a streamed subscription (SSE, multipart) then ends and releases
  its bus subscription. Without it, its events queued forever.

An idle kept-alive connection is closed by uvicorn's own keep-alive timer
(``MMK_KEEP_ALIVE_TIMEOUT``).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from api.coded_response import whole_response
from api.connections import Refusal, registry_of, settings
from api.throttled_log import ThrottledLog, ThrottledRecords, add_filter
from domain.errors import ErrorCode

log = logging.getLogger("mmk.connections")
# What a flood of connections makes happen: one line an interval, with a count.
refused_line = ThrottledLog(log, logging.WARNING, settings().connection_log_interval)
timed_out_line = ThrottledLog(log, logging.INFO, settings().connection_log_interval)
too_large_line = ThrottledLog(log, logging.INFO, settings().connection_log_interval)
stalled_line = ThrottledLog(log, logging.WARNING, settings().connection_log_interval)
UVICORN_LINES = frozenset({"Invalid HTTP request received."})
"""uvicorn's warning for each request that does not parse."""


def throttle_uvicorn_lines(interval: float) -> None:
    """uvicorn's lines a client can cause, once an interval (the app's
    start-up installs it, as api/ws_logging.py)."""
    line = ThrottledLog(log, logging.WARNING, interval)
    add_filter(logging.getLogger("uvicorn.error"), ThrottledRecords(UVICORN_LINES, line))


class HttpProtocol(HttpToolsProtocol):
    """Header and body read timeouts; the connection caps; a bound on a
    request's head; a send timeout."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.registry = registry_of(self.config)
        s = settings()
        self.header_timeout, self.body_timeout = s.header_timeout, s.body_timeout
        self.max_head, self.send_timeout = s.max_header_bytes, float(s.ws_send_timeout)
        self._reading: asyncio.TimerHandle | None = None
        self._stalled: asyncio.TimerHandle | None = None
        self._counted = False
        # The bytes of the request line and headers being received, if any.
        self._in_head, self._head_bytes = True, 0
        self._upgraded = False

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        refusal = self.registry.open(id(transport), self.client[0] if self.client else None)
        if refusal is not None:
            self._refuse(refusal)
            return
        self._counted = True
        self._arm(self.header_timeout, "headers")

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        self._unstall()
        if self._counted:
            self.registry.close(id(self.transport))
        super().connection_lost(exc)

    def on_message_begin(self) -> None:
        super().on_message_begin()
        if self._reading is None:  # a kept-alive connection's next request
            self._arm(self.header_timeout, "headers")

    def on_headers_complete(self) -> None:
        self._in_head = False
        self._disarm()
        super().on_headers_complete()
        if not self.parser.should_upgrade():
            self._arm(self.body_timeout, "body")  # a GET's ends at once

    def on_message_complete(self) -> None:
        self._disarm()
        super().on_message_complete()
        self._in_head, self._head_bytes = True, 0  # a kept-alive connection's next

    def data_received(self, data: bytes) -> None:
        """The parser gets a request's head ``MMK_MAX_HEADER_BYTES`` at a
        time at most; one that has not ended by then is refused (431) before
        more is read. The body is not counted here (api/app.py's BodyLimit).
        A head that begins in the same read as the end of a pipelined request
        before it is counted from the next read: at most one read more."""
        while self._in_head:
            if self.transport.is_closing() or self._upgraded:
                return
            room = self.max_head - self._head_bytes
            chunk, data = data[:room], data[room:]
            self._head_bytes += len(chunk)
            super().data_received(chunk)
            if self.transport.is_closing() or self._upgraded:
                return  # refused, or a WebSocket now (uvicorn drops what follows)
            if self._in_head and self._head_bytes >= self.max_head:
                self._too_large()
                return
            if not data:
                return
        if data and not self.transport.is_closing():
            super().data_received(data)

    def _too_large(self) -> None:
        message = f"the request line and headers are over {self.max_head:,} bytes"
        too_large_line("request refused (431): %s", message)
        self._disarm()
        self.transport.write(whole_response(431, message, ErrorCode.BAD_INPUT.value))
        self.transport.close()

    def send_400_response(self, msg: str) -> None:
        """uvicorn's answer to a request that does not parse (it has logged
        it), as coded JSON."""
        self._disarm()
        self.transport.write(
            whole_response(400, "the request is not valid HTTP/1.1", ErrorCode.BAD_INPUT.value)
        )
        self.transport.close()

    def pause_writing(self) -> None:
        """The kernel's buffers are full and the client takes no bytes: it
        has that long to take some again."""
        super().pause_writing()
        if self._stalled is None:
            self._stalled = self.loop.call_later(self.send_timeout, self._abort)

    def resume_writing(self) -> None:
        self._unstall()
        super().resume_writing()

    def _abort(self) -> None:
        self._stalled = None
        if self.transport.is_closing() and not self.transport.get_write_buffer_size():
            return
        stalled_line(
            "HTTP response dropped: client not reading for %g s (%d bytes unsent)",
            self.send_timeout,
            self.transport.get_write_buffer_size(),
        )
        # connection_lost follows: the app's next receive() is http.disconnect
        # (a streamed subscription ends and releases the bus)
        self.transport.abort()

    def _unstall(self) -> None:
        if self._stalled is not None:
            self._stalled.cancel()
            self._stalled = None

    def handle_websocket_upgrade(self) -> None:
        refusal = self.registry.upgrade(id(self.transport))
        if refusal is not None:
            self._refuse(refusal)
            return
        self._disarm()
        self._unstall()
        self._counted = False  # the WebSocket protocol releases the transport
        self._upgraded = True
        super().handle_websocket_upgrade()

    def _refuse(self, refusal: Refusal) -> None:
        refused_line("connection refused (%d): %s", refusal.status, refusal.message)
        self.transport.write(refusal.response())
        self.transport.close()

    def _arm(self, seconds: float, what: str) -> None:
        self._disarm()
        self._reading = self.loop.call_later(seconds, self._timed_out, what)

    def _disarm(self) -> None:
        if self._reading is not None:
            self._reading.cancel()
            self._reading = None

    def _timed_out(self, what: str) -> None:
        self._reading = None
        if self.transport.is_closing():
            return
        timed_out_line("connection closed: request %s not received in time", what)
        self.transport.close()  # connection_lost tells a waiting app: http.disconnect
