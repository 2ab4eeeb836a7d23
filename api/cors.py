"""Cross-origin browser access to ``/graphql`` (CORS), from the origins of
``MMK_CORS_ORIGINS`` and, in development mode (``MMK_DEV``), this machine's
own origins: the same rule as the WebSocket ``Origin`` check
(``api/graphql/view.py``). docs/decisions/0033."""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import Any

from starlette.datastructures import Headers
from starlette.middleware.cors import CORSMiddleware
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

from domain.errors import ErrorCode

GRAPHQL_PATH = "/graphql"
# [decision] No credentials: clients authenticate with a bearer token in
# ``Authorization``, never with cookies, so any request header may be sent
# (the preflight mirrors the ones asked for) and ``*`` is an acceptable
# allow-list. Clients may read the request id and a rate limit's Retry-After.
EXPOSED_HEADERS = ("X-Request-ID", "Retry-After")
PREFLIGHT_MAX_AGE = 600  # seconds a browser may cache a preflight's answer

# [decision] Development mode's origins: a page served from this machine, by
# name or loopback address, on any port, over http or https (a Vite dev
# server on http://localhost:5173, one with a local certificate). Matched as
# browsers send ``Origin`` (lowercase, no default port): exactly one of the
# three hosts, so ``http://localhost.evil.com`` or ``http://127.0.0.1.nip.io``
# (names anyone can point anywhere) never pass; nor other loopback
# addresses (127.0.0.2) or ``*.localhost`` names, which no dev server uses
# by default.
LOCAL_ORIGIN = re.compile(r"https?://(?:localhost|127\.0\.0\.1|\[::1\])(?::([1-9][0-9]{0,4}))?")


def is_local_origin(origin: str) -> bool:
    """Whether ``origin`` (an ``Origin`` header) is one of this machine's,
    which development mode (``MMK_DEV``) allows."""
    match = LOCAL_ORIGIN.fullmatch(origin)
    return match is not None and int(match.group(1) or 0) <= 65535


class CodedCors(CORSMiddleware):
    """Starlette's middleware; a refused preflight (plain text there) is
    coded JSON, as every other refusal (docs/decisions/0052): ``FORBIDDEN``
    for an origin not allowed, ``BAD_INPUT`` for a method or header. With
    ``local``, this machine's origins are allowed too (development mode)."""

    def __init__(self, app: ASGIApp, *, local: bool = False, **options: Any) -> None:
        super().__init__(app, **options)
        self.local = local

    def is_allowed_origin(self, origin: str) -> bool:
        return super().is_allowed_origin(origin) or (self.local and is_local_origin(origin))

    def preflight_response(self, request_headers: Headers) -> Response:
        response = super().preflight_response(request_headers)
        if response.status_code != 400:
            return response
        why = bytes(response.body).decode(errors="replace")  # "Disallowed CORS origin, method"
        code = ErrorCode.FORBIDDEN if "origin" in why else ErrorCode.BAD_INPUT
        message = f"cross-origin request refused: {why} (MMK_CORS_ORIGINS)"
        headers = {
            k: v
            for k, v in response.headers.items()
            if k.lower() not in ("content-length", "content-type")
        }
        body = {"errors": [{"message": message, "extensions": {"code": code.value}}]}
        return JSONResponse(body, 400, headers)


class GraphQLCors:
    """Starlette's :class:`CORSMiddleware` for ``/graphql`` (HTTP): a
    preflight from an allowed origin is answered, one from any other origin
    refused (400); allowed origins get ``Access-Control-Allow-Origin`` on
    every response, errors (413, 429) included. Other paths and WebSockets
    pass through untouched."""

    def __init__(self, app: ASGIApp, origins: Collection[str], local: bool = False) -> None:
        """``local``: development mode, this machine's origins allowed too
        (:func:`is_local_origin`)."""
        self.app = app
        # No other origin allowed: no answer depends on ``Origin``, and a
        # browser refuses a cross-origin one without the headers anyway; a
        # preflight still gets its refusal.
        self.cross_origin = bool(origins) or local
        self.cors = CodedCors(
            app,
            allow_origins=tuple(origins),
            local=local,
            allow_methods=("GET", "POST"),
            allow_headers=("*",),
            allow_credentials=False,
            expose_headers=EXPOSED_HEADERS,
            max_age=PREFLIGHT_MAX_AGE,
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] == "http"
            and scope["path"] == GRAPHQL_PATH
            and (self.cross_origin or scope["method"] == "OPTIONS")
        ):
            await self.cors(scope, receive, send)
        else:
            await self.app(scope, receive, send)
