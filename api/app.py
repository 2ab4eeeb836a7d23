"""The Starlette application: GraphQL over HTTP and WebSocket, health checks.
The lifespan builds the composition root from the settings."""

from __future__ import annotations

import asyncio
import gc
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import sqlalchemy as sa
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from api import accept_errors, web_client, ws_logging
from api.cors import GraphQLCors
from api.fast.http_protocol import throttle_uvicorn_lines
from api.fast.http_transports import Refused
from api.graphql import playground
from api.graphql.view import GameGraphQL
from api.middleware import RequestContext
from domain.errors import ErrorCode
from infra import work_meter
from infra.bootstrap import Container, build
from infra.gc_pacing import GcPacer
from infra.metrics import Metrics
from infra.settings import Settings

log = logging.getLogger("mmk.api")
MAX_BODY_BYTES = 64 * 1024
MAX_WS_MESSAGE_BYTES = MAX_BODY_BYTES  # uvicorn's ws_max_size (api.cli serve)


class BodyLimit:
    """Refuses request bodies over ``limit`` bytes with 413 and a coded error;
    a request whose client left before its body ended is dropped quietly."""

    def __init__(self, app: ASGIApp, limit: int = MAX_BODY_BYTES) -> None:
        self.app, self.limit = app, limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        length = dict(scope.get("headers", [])).get(b"content-length")
        if length is not None and length.isdigit() and int(length) > self.limit:
            await self._refuse(scope, receive, send)
            return
        seen = 0

        async def limited() -> Message:
            nonlocal seen
            message = await receive()
            seen += len(message.get("body", b""))
            if seen > self.limit:
                raise _TooLarge
            return message

        try:
            await self.app(scope, limited, send)
        except _TooLarge:
            await self._refuse(scope, receive, send)
        except ClientDisconnect:
            # Nothing ran (the body never arrived): not a server error, no
            # traceback. The 400 goes nowhere; it is for the access log.
            log.info("client left before the request body ended")
            await JSONResponse(_GONE, status_code=400)(scope, receive, send)

    async def _refuse(self, scope: Scope, receive: Receive, send: Send) -> None:
        body = {
            "errors": [
                {
                    "message": f"request body over {self.limit} bytes",
                    "extensions": {"code": "BAD_INPUT"},
                }
            ]
        }
        await JSONResponse(body, status_code=413)(scope, receive, send)


class _TooLarge(Exception):
    pass


async def coded_refusal(request: Request, exc: Exception) -> Response:
    """Starlette's own refusals (a path the app does not serve, 404; a
    method its route does not take, 405, with ``Allow``) as coded JSON, as
    every other refusal (docs/decisions/0052); its are plain text."""
    assert isinstance(exc, HTTPException)
    if exc.status_code == 404:
        refused = Refused(404, "no such path: the API is at /graphql", ErrorCode.NOT_FOUND.value)
    elif exc.status_code == 405:
        refused = Refused(405, f"{request.method} is not served here", headers=exc.headers)
    else:
        refused = Refused(exc.status_code, str(exc.detail), headers=exc.headers)
    return refused.response()


GC_THRESHOLDS = (10_000, 10, 10)  # Python's default: (700, 10, 10); a backstop for bursts

_GONE = {"errors": [{"message": "request body incomplete", "extensions": {"code": "BAD_INPUT"}}]}


def create_app(settings: Settings | None = None, container: Container | None = None) -> Starlette:
    """The app; ``container`` (tests) or one built from ``settings`` at start-up."""
    ws_logging.install()
    holder: dict[str, Container] = {}
    s = container.settings if container is not None else settings or Settings.from_env()
    throttle_uvicorn_lines(s.connection_log_interval)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        c = container if container is not None else await asyncio.to_thread(build, s)
        holder["c"] = c
        graphql.build()  # now, not in its first request (whose caller would pay for it)
        # failed accepts (out of descriptors): one line an interval (docs/decisions/0044)
        accept_errors.install(asyncio.get_running_loop(), s.connection_log_interval)
        c.start()
        if c.settler is not None:  # every task's steps timed for its caller (0049)
            work_meter.install(asyncio.get_running_loop(), hold=s.hold_dear_steps)
        # What exists now lives as long as the process: keep it out of the
        # collector's full passes, which otherwise stall requests. Requests
        # make no reference cycles (their garbage goes by reference
        # counting), so the collector runs 14x less often than Python's
        # default: fewer young objects promoted, hence rare full passes
        # (docs/decisions/0036).
        gc.collect()
        gc.freeze()
        gc.set_threshold(*GC_THRESHOLDS)
        pacer = GcPacer()  # young collections by time (docs/decisions/0039)
        pacer.start()
        metrics.runtime.start()
        try:
            yield
        finally:
            metrics.runtime.stop()
            pacer.stop()
            work_meter.uninstall(asyncio.get_running_loop())
            if container is None:
                await c.aclose()

    metrics = Metrics(
        lambda: holder["c"].bus if "c" in holder else None,
        lambda: holder["c"].webhooks if "c" in holder else None,
    )
    graphql = _LazyGraphQL(holder, metrics)

    async def healthz(request: Request) -> Response:
        return JSONResponse({"status": "ok"})

    async def readyz(request: Request) -> Response:
        c = holder.get("c")
        if c is None:
            return JSONResponse({"status": "starting"}, status_code=503)
        try:
            await asyncio.wait_for(asyncio.to_thread(_ping, c.engine), 2)
            database = "up"
        except Exception as e:  # any failure means "not ready"
            log.warning("readiness: database unreachable: %s", e)
            database = "down"
        bus = "up" if await c.bus.ping() else "down"
        ready = database == bus == "up"
        return JSONResponse(
            {"status": "ready" if ready else "unavailable", "database": database, "bus": bus},
            status_code=200 if ready else 503,
        )

    async def metrics_text(request: Request) -> Response:
        body, content_type = metrics.render()
        return Response(body, headers={"content-type": content_type})

    routes: list[Route | WebSocketRoute | Mount] = [
        # Every method reaches the view: what it does not serve (PUT, ...) it
        # refuses with a coded JSON 405, as it refuses everything else.
        Route("/graphql", graphql, methods=None),
        WebSocketRoute("/graphql", graphql),
        Route("/healthz", healthz),
        Route("/readyz", readyz),
        Route("/metrics", metrics_text),
        *web_client.routes(),  # the reference client at /play; / redirects there
    ]
    if s.graphiql:  # the playground's page loads its files from here
        routes.append(Mount(playground.STATIC_PATH, app=playground.static_files()))
    app = Starlette(
        routes=routes, lifespan=lifespan, exception_handlers={HTTPException: coded_refusal}
    )
    app.state.metrics = metrics
    app.add_middleware(BodyLimit)
    # Outside BodyLimit, so that a refused body's 413 carries the CORS headers.
    app.add_middleware(GraphQLCors, origins=s.cors_origins, local=s.dev)
    app.add_middleware(
        RequestContext, metrics=metrics, routes=[r.path for r in routes], access=s.access_log
    )
    return app


def _ping(engine: sa.Engine) -> None:
    with engine.connect() as conn:
        conn.execute(sa.text("SELECT 1"))


class _LazyGraphQL:
    """The GraphQL view, built once the lifespan has the container."""

    def __init__(self, holder: dict[str, Container], metrics: Metrics) -> None:
        self._holder, self._metrics = holder, metrics
        self._view: GameGraphQL | None = None

    def build(self) -> GameGraphQL:
        if self._view is None:
            self._view = GameGraphQL(self._holder["c"], self._metrics)
        return self._view

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await (self._view or self.build())(scope, receive, send)
