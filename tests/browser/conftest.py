"""Tests in a real headless browser: Debian's Chromium, driven by Playwright
(never a browser Playwright downloads), against a real ``mmk serve``.

The browser is ``MMK_CHROMIUM`` or ``chromium`` on the PATH (``.ci/run``
installs Debian's package when it is missing). Without one the tests are
skipped, saying why; under ``MMK_REQUIRE_SERVICES=1`` (CI) they fail.

The browser's network is this machine only: Chromium resolves no name but
localhost, and sends everything not for 127.0.0.1/localhost to a proxy port
where nothing listens, so any other request fails. Every request and
WebSocket a page makes is recorded, and one to another host fails the test
(not routed through Playwright: its request interception answers CORS
preflights itself, which would hide what the server does with them).
Content-Security-Policy violations, console errors and uncaught exceptions
are recorded too.
"""

from __future__ import annotations

import functools
import http.server
import os
import shutil
import signal
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from playwright.async_api import (
    Browser,
    BrowserContext,
    Page,
    ProxySettings,
    Request,
    WebSocket,
    async_playwright,
)

from tests.e2e.client import ISSUED_TOKENS, Api
from tests.e2e.conftest import SIGNS_OF_FAILURE, Server, _free_port, _stop, launch
from tests.services import unavailable

CHROMIUM_ENV = "MMK_CHROMIUM"
LOCAL_HOSTS = frozenset({"127.0.0.1", "localhost"})
# Headless, in a container as root (no sandbox), no GPU; nothing of its own on
# the network (QUIC, component updates, sync, background services). Playwright
# adds --headless and a fresh temporary --user-data-dir for every launch.
LAUNCH_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost",
]
CLIENT_PAGE = Path(__file__).with_name("client.html")
# A page's securitypolicyviolation events, kept for the test to read.
_RECORD_CSP = """
window.__cspViolations = [];
document.addEventListener("securitypolicyviolation", (e) =>
  window.__cspViolations.push(`${e.violatedDirective} ${e.blockedURI}`));
"""


def chromium_executable() -> str | None:
    return os.environ.get(CHROMIUM_ENV) or shutil.which("chromium")


@pytest.fixture(scope="session")
def chromium() -> str:
    """The Chromium to drive; skips (fails under MMK_REQUIRE_SERVICES=1) without one."""
    path = chromium_executable()
    if path is not None and os.access(path, os.X_OK):
        return path
    problem = f"no Chromium: set {CHROMIUM_ENV} or install Debian's chromium (.ci/run does)"
    unavailable(problem)


@pytest.fixture
async def browser(chromium: str) -> AsyncIterator[Browser]:
    # Everything but 127.0.0.1/localhost goes to a port where nothing listens.
    nowhere: ProxySettings = {
        "server": f"http://127.0.0.1:{_free_port()}",
        "bypass": ",".join(sorted(LOCAL_HOSTS)),
    }
    async with async_playwright() as p:
        launched = await p.chromium.launch(
            executable_path=chromium, headless=True, args=LAUNCH_ARGS, proxy=nowhere
        )
        try:
            yield launched
        finally:
            await launched.close()


@dataclass
class Watched:
    """A browser context kept to this machine, and what its pages did."""

    context: BrowserContext
    requests: list[str] = field(default_factory=list)
    foreign: list[str] = field(default_factory=list)
    websockets: list[str] = field(default_factory=list)
    sent: list[str] = field(default_factory=list)  # WebSocket frames, in order
    received: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # console errors, exceptions
    pages: list[Page] = field(default_factory=list)

    async def new_page(self) -> Page:
        page = await self.context.new_page()
        self.pages.append(page)
        page.on("console", lambda m: self.problems.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: self.problems.append(f"uncaught: {e}"))
        page.on("websocket", self._websocket)
        return page

    def _websocket(self, ws: WebSocket) -> None:
        self.websockets.append(ws.url)
        if urlsplit(ws.url).hostname not in LOCAL_HOSTS:
            self.foreign.append(ws.url)
        ws.on("framesent", lambda payload: self.sent.append(_text(payload)))
        ws.on("framereceived", lambda payload: self.received.append(_text(payload)))

    def _request(self, request: Request) -> None:
        url = request.url
        self.requests.append(url)
        if (
            urlsplit(url).scheme not in ("data", "blob")
            and urlsplit(url).hostname not in LOCAL_HOSTS
        ):
            self.foreign.append(url)

    async def csp_violations(self) -> list[str]:
        found: list[str] = []
        for page in self.pages:
            if not page.is_closed():
                found += await page.evaluate("window.__cspViolations || []")
        return found


def _text(payload: str | bytes) -> str:
    return payload if isinstance(payload, str) else payload.decode()


@asynccontextmanager
async def watched_context(browser: Browser, **options: Any) -> AsyncIterator[Watched]:
    """A fresh context (its own storage; ``options`` as ``new_context``'s);
    when it closes, no page may have tried another host or broken its
    page's Content-Security-Policy."""
    context = await browser.new_context(**options)
    w = Watched(context)
    await context.add_init_script(_RECORD_CSP)
    context.on("request", w._request)
    try:
        yield w
        assert not w.foreign, f"requests to other hosts: {w.foreign}"
        assert not await w.csp_violations(), "Content-Security-Policy violations"
    finally:
        await context.close()


@pytest.fixture
async def watched(browser: Browser) -> AsyncIterator[Watched]:
    """A :func:`watched_context` for the test."""
    async with watched_context(browser) as w:
        yield w


# ---------------------------------------------------------------- pages and server
@dataclass(frozen=True)
class ClientPages:
    """``client.html`` served from two origins of this machine (other ports
    than the server's): the server allows ``allowed`` only."""

    allowed: str
    refused: str


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def pages() -> Iterator[ClientPages]:
    handler = functools.partial(_Quiet, directory=str(CLIENT_PAGE.parent))
    servers = [http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler) for _ in range(2)]
    threads = [threading.Thread(target=s.serve_forever, daemon=True) for s in servers]
    for t in threads:
        t.start()
    try:
        a, b = (f"http://127.0.0.1:{s.server_address[1]}" for s in servers)
        yield ClientPages(a, b)
    finally:
        for s in servers:
            s.shutdown()
            s.server_close()


@pytest.fixture(scope="module")
def server(
    pages: ClientPages, chromium: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    """``mmk serve`` (SQLite, in-process bus) with the playground on and
    ``MMK_CORS_ORIGINS`` = the allowed page's origin."""
    tmp = tmp_path_factory.mktemp("browser")
    database = f"sqlite:///{tmp}/browser.sqlite3"
    env = {
        **os.environ,
        "DATABASE_URL": database,
        "MMK_WORKERS": "1",
        "MMK_LOG_LEVEL": "info",
        "MMK_GRAPHIQL": "true",
        "MMK_CORS_ORIGINS": pages.allowed,
    }
    with served(tmp, env, database) as srv:
        yield srv


@contextmanager
def served(tmp: Path, env: dict[str, str], database: str) -> Iterator[Server]:
    """``mmk serve`` with ``env`` (without Redis: the in-process bus); after
    it stops, its log shows no sign of failure and no token."""
    env = {k: v for k, v in env.items() if k != "REDIS_URL"}
    proc, srv = launch(tmp, env, database)
    try:
        yield srv
    finally:
        _stop(proc)
    assert proc.returncode in (0, -signal.SIGTERM), srv.log_tail()
    text = srv.log.read_text(errors="replace")
    for sign in (*SIGNS_OF_FAILURE, *ISSUED_TOKENS):
        assert sign not in text, f"the server log shows {sign!r}"


@pytest.fixture
async def api(server: Server) -> AsyncIterator[Api]:
    async with httpx.AsyncClient(base_url=server.base_url, timeout=10.0, trust_env=False) as c:
        yield Api(c)
