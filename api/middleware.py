"""Per-request context: a request id (a sane incoming ``X-Request-ID``, else a
new uuid4) for every log line and in the response headers, the HTTP latency
histogram and one access log line (``MMK_ACCESS_LOG``: every request, only
those that failed, or none). Never logs headers, query strings or
bodies. A streamed subscription (multipart or SSE) lasts as long as the
subscription: like a WebSocket session, it is logged but not in the
latency histogram."""

from __future__ import annotations

import logging
import re
import uuid
from collections.abc import Collection
from time import perf_counter

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from infra.logs import request_id
from infra.metrics import Metrics

log = logging.getLogger("mmk.access")
HEADER = b"x-request-id"
STREAMED = (b"multipart/mixed", b"text/event-stream")
"""Content types of streamed subscriptions (api/fast/http_transports.py)."""
_SANE = re.compile(r"[A-Za-z0-9._:/+=@-]{1,128}")
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "WS"})
QUIET_PATHS = frozenset({"/healthz", "/readyz", "/metrics"})
"""Probes and scrapes: their access lines are logged at debug level."""


def incoming_id(scope: Scope) -> str | None:
    """The client's ``X-Request-ID`` when it is short and plain, else None."""
    for name, value in scope.get("headers", ()):
        if name == HEADER:
            text = value.decode("latin-1")
            return text if _SANE.fullmatch(text) else None
    return None


class RequestContext:
    """Outermost middleware: request id, latency, access log."""

    def __init__(
        self, app: ASGIApp, metrics: Metrics, routes: Collection[str], access: str = "all"
    ) -> None:
        self.app, self.metrics, self.routes = app, metrics, frozenset(routes)
        # the lowest status logged: all, errors (>= 400), off
        self.logged_from = {"all": 0, "errors": 400}.get(access, 1000)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        rid = incoming_id(scope) or str(uuid.uuid4())
        header = (HEADER, rid.encode())
        status = 500 if kind == "http" else 403  # a WebSocket never accepted was refused
        streamed = False

        async def send_with_id(message: Message) -> None:
            nonlocal status, streamed
            if message["type"] in ("http.response.start", "websocket.accept"):
                status = message.get("status", 101)
                headers = message.get("headers", ())
                streamed = any(
                    name == b"content-type" and value.startswith(STREAMED)
                    for name, value in headers
                )
                message = {**message, "headers": [*headers, header]}
            await send(message)

        reset = request_id.set(rid)
        start = perf_counter()
        try:
            await self.app(scope, receive, send_with_id)
        finally:
            elapsed = perf_counter() - start
            self._done(scope, status, elapsed, streamed)
            request_id.reset(reset)

    def _done(self, scope: Scope, status: int, elapsed: float, streamed: bool = False) -> None:
        path: str = scope["path"]
        route = getattr(scope.get("route"), "path", None)
        if route is None:
            route = path if path in self.routes else "unmatched"
        method = scope["method"] if scope["type"] == "http" else "WS"
        method = method if method in METHODS else "OTHER"  # a label: keep it bounded
        if method != "WS" and not streamed:
            self.metrics.http_latency.labels(route, method).observe(elapsed)
        if status < self.logged_from:
            return
        level = logging.DEBUG if route in QUIET_PATHS else logging.INFO
        if not log.isEnabledFor(level):
            return
        log.log(
            level,
            "%s %s %s",
            method,
            route,
            status,
            extra={
                "method": method,
                "route": route,
                "status": status,
                "duration_ms": round(elapsed * 1000, 2),
            },
        )
