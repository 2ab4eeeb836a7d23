"""uvicorn's httptools HTTP protocol, with connection hygiene (issue #14;
``mmk serve`` uses it: ``http="api.http_protocol:HttpProtocol"``;
docs/decisions/0044).

- A connection that has not sent a request's complete headers within
  ``MMK_HEADER_TIMEOUT`` seconds (from the connection, or from the request's
  first byte on a kept-alive one) is closed; so is a request whose body has
  not arrived within ``MMK_BODY_TIMEOUT`` seconds of its headers. uvicorn
  has neither: a silent or trickling client held its socket forever.
- Every connection is counted (api/connections.py): over the process
  ceiling (``MMK_MAX_CONNECTIONS``) it gets a 503, over its IP's cap
  (``MMK_MAX_CONNECTIONS_PER_IP``) a 429, both coded ``RATE_LIMITED`` and
  closed at once; a WebSocket upgrade over ``MMK_MAX_WS_PER_IP`` gets a 429.

An idle kept-alive connection is closed by uvicorn's own keep-alive timer
(``MMK_KEEP_ALIVE_TIMEOUT``).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from api.connections import Refusal, registry_of, settings
from api.throttled_log import ThrottledLog

log = logging.getLogger("mmk.connections")
# What a flood of connections makes happen: one line an interval, with a count.
refused_line = ThrottledLog(log, logging.WARNING, settings().connection_log_interval)
timed_out_line = ThrottledLog(log, logging.INFO, settings().connection_log_interval)


class HttpProtocol(HttpToolsProtocol):
    """Header and body read timeouts; the connection caps."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.registry = registry_of(self.config)
        s = settings()
        self.header_timeout, self.body_timeout = s.header_timeout, s.body_timeout
        self._reading: asyncio.TimerHandle | None = None
        self._counted = False

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
        if self._counted:
            self.registry.close(id(self.transport))
        super().connection_lost(exc)

    def on_message_begin(self) -> None:
        super().on_message_begin()
        if self._reading is None:  # a kept-alive connection's next request
            self._arm(self.header_timeout, "headers")

    def on_headers_complete(self) -> None:
        self._disarm()
        super().on_headers_complete()
        if not self.parser.should_upgrade():
            self._arm(self.body_timeout, "body")  # a GET's ends at once

    def on_message_complete(self) -> None:
        self._disarm()
        super().on_message_complete()

    def handle_websocket_upgrade(self) -> None:
        refusal = self.registry.upgrade(id(self.transport))
        if refusal is not None:
            self._refuse(refusal)
            return
        self._disarm()
        self._counted = False  # the WebSocket protocol releases the transport
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
