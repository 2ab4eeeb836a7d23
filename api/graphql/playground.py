"""The GraphiQL playground: its page (GET /graphql from a browser) and the
files it loads, all served from ``api/static`` (docs/decisions/0033).

Strawberry's own page loads React, GraphiQL and its plugins from a CDN: blank
offline, and broken under a strict Content-Security-Policy. This page names
only files of this server (``STATIC_PATH``): the pinned npm builds that
``make graphiql-assets`` vendors into ``api/static/vendor`` (checked against
their ``SHA256SUMS`` by the tests) and ``playground.js``, the page's script,
which is a file rather than inline so the policy can forbid inline scripts.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from starlette.middleware.gzip import GZipMiddleware
from starlette.responses import HTMLResponse
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp

from api.page_headers import page_headers

STATIC_DIR = Path(__file__).resolve().parents[1] / "static"
STATIC_PATH = "/graphql/static"
PAGE = Path(__file__).with_name("playground.html")
# Nothing but this server's own files: no inline script or style, no eval;
# the favicon is an empty data: URL and the fonts are data: URLs in GraphiQL's
# CSS. React and CodeMirror set styles through the DOM, which style-src does
# not govern. connect-src 'self' covers the WebSocket to the same host and
# port. tests/browser checks that the playground breaks none of it.
HEADERS = page_headers("img-src 'self' data:", "font-src 'self' data:")
CONTENT_SECURITY_POLICY = HEADERS["content-security-policy"]


@cache
def _template() -> str:
    return PAGE.read_text(encoding="utf-8")


def page(root_path: str = "") -> HTMLResponse:
    """The playground's HTML; ``root_path``: the ASGI root path (a mount)."""
    html = _template().replace("{{static}}", root_path + STATIC_PATH)
    return HTMLResponse(html, headers=HEADERS)


def static_files() -> ASGIApp:
    """The playground's files (mounted at ``STATIC_PATH`` when GraphiQL is
    on), with ``ETag``/``Last-Modified`` and gzip (GraphiQL's bundle is 3.5 MB,
    ~0.7 MB gzipped)."""
    return GZipMiddleware(StaticFiles(directory=STATIC_DIR), minimum_size=1024, compresslevel=6)
