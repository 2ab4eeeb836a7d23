"""The reference web client (``examples/web``), served at ``/play``; ``/``
redirects to it (docs/web-client.md).

The client is three files built from ``examples/web`` by ``make web-client``
and committed in ``api/static/play`` (a test rebuilds them and compares them
byte for byte). It talks to this server's public API only (``/graphql``,
HTTP and graphql-transport-ws), so its policy is tighter than the
playground's: nothing but its own script and stylesheet, no inline script or
style, no font, no image but the empty ``data:`` favicon, no frame, no form,
and connections to this origin alone.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from starlette.middleware.gzip import GZipMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from api.page_headers import page_headers

STATIC_DIR = Path(__file__).resolve().parent / "static" / "play"
PATH = "/play"
HEADERS = page_headers("img-src data:")
CONTENT_SECURITY_POLICY = HEADERS["content-security-policy"]


@cache
def _template() -> str:
    return (STATIC_DIR / "index.html").read_text(encoding="utf-8")


async def page(request: Request) -> Response:
    """The client's HTML; its files are named under the ASGI root path."""
    root = request.scope.get("root_path", "")
    return HTMLResponse(_template().replace("{{base}}", root + PATH), headers=HEADERS)


async def home(request: Request) -> Response:
    return RedirectResponse(request.scope.get("root_path", "") + PATH, status_code=307)


class _Headers:
    """Adds the client's security headers to every response of its files."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                raw = list(message.get("headers", []))
                raw += [(k.encode(), v.encode()) for k, v in HEADERS.items()]
                message = {**message, "headers": raw}
            await send(message)

        await self.app(scope, receive, with_headers)


def routes() -> list[Route | Mount]:
    """``/`` (a redirect), ``/play`` (the page) and ``/play/<file>``: its
    script and stylesheet."""
    files = StaticFiles(directory=STATIC_DIR)
    return [
        Route("/", home, methods=["GET", "HEAD"]),
        Route(PATH, page, methods=["GET", "HEAD"]),
        Route(PATH + "/", page, methods=["GET", "HEAD"]),
        Route(PATH + "/index.html", page, methods=["GET", "HEAD"]),  # not the raw template
        Mount(PATH, app=_Headers(GZipMiddleware(files, minimum_size=1024, compresslevel=6))),
    ]
