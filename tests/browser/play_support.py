"""Helpers of the web client's browser tests (tests/browser/test_play.py,
test_play_social.py): their server, a second watched browser context, the
page's own records (event log, resume point, reconnects), playing through
the page by pointer or by keyboard, axe-core, and screenshots for
docs/screenshots.

Waits are conditions with deadlines (``until``), never fixed sleeps."""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Page, ViewportSize

from tests.browser.conftest import served
from tests.e2e.client import Api, Person
from tests.e2e.conftest import MEASURED_NOT_REFUSED, Server

ROOT = Path(__file__).resolve().parents[2]
WEB = ROOT / "examples" / "web"
AXE = WEB / "node_modules" / "axe-core" / "axe.min.js"
# `make screenshots` sets it (docs/screenshots); the test suite never does,
# so a test run leaves the committed screenshots alone.
SCREENSHOTS_ENV = "MMK_SCREENSHOTS"
WAIT = 15.0  # seconds for any one thing the page should do
PHONE: ViewportSize = {"width": 390, "height": 844}
ME = "{ me { id player { name } } }"


@contextmanager
def play_server(tmp_path_factory: pytest.TempPathFactory, name: str) -> Iterator[Server]:
    """``mmk serve`` (SQLite, in-process bus) as tests/e2e's: work measured
    and charged but never refused, as a page against bots plays far faster
    than people, and every page of the test shares one address (loopback)."""
    tmp = tmp_path_factory.mktemp(name)
    database = f"sqlite:///{tmp}/{name}.sqlite3"
    env = {
        **os.environ,
        "DATABASE_URL": database,
        "MMK_WORKERS": "1",
        "MMK_LOG_LEVEL": "info",
        "MMK_RATE_QUERY_COST_IP": "0",
        **MEASURED_NOT_REFUSED,
    }
    with served(tmp, env, database) as srv:
        yield srv


async def until(check: Callable[[], Awaitable[bool]], what: str, timeout: float = WAIT) -> None:
    deadline = time.monotonic() + timeout
    while not await check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.05)


async def sign_in(page: Page, base_url: str, name: str) -> None:
    await page.goto(f"{base_url}/")
    await page.get_by_label("Your name").fill(name)
    await page.get_by_role("button", name="Play as a guest").click()
    await page.get_by_role("heading", name="Lobby").wait_for()


async def signed_in_as(page: Page, api: Api) -> Person:
    """The player the page signed in (its token from localStorage)."""
    token = await page.evaluate("localStorage.getItem('mmk.token')")
    assert isinstance(token, str) and token
    me = (await api.data(ME, token=token))["me"]
    return Person(me["player"]["name"], me["id"], token)


def game_id_of(page: Page) -> str:
    fragment = page.url.split("#", 1)[1]
    assert fragment.startswith("/game/"), page.url
    return fragment.removeprefix("/game/")


async def status(page: Page) -> str | None:
    return await page.locator("[data-status]").get_attribute("data-status")


async def debug(page: Page) -> dict[str, Any]:
    """The debug panel: the resume point, the link's state and reconnects."""
    panel = page.locator("details.debug")

    async def text(test_id: str) -> str:
        return await panel.get_by_test_id(test_id).text_content() or ""

    return {
        "lastSeq": int(await text("last-seq")),
        "state": await text("link-state"),
        "reconnects": int(await text("reconnects")),
    }


async def event_log(page: Page) -> list[dict[str, Any]]:
    """Every event the page folded, as its debug panel shows them."""
    panel = page.locator("details.debug")
    if not await panel.evaluate("d => d.open"):
        await panel.locator("summary").first.click()
    last: int = (await debug(page))["lastSeq"]

    async def listed() -> bool:
        return await page.locator(".event-log > li").count() >= last

    await until(listed, "the event log")
    texts: list[str] = await page.locator(".event-log pre").all_text_contents()
    return [json.loads(t) for t in texts]


async def play_one_move(page: Page) -> bool:
    """Click the first enabled control of the move on offer, if any."""
    button = page.locator(".controls button:enabled").first
    if not await button.count():
        return False
    try:
        handle = await button.element_handle(timeout=1_000)
        before = await handle.evaluate("e => e.outerHTML")
        await handle.click(timeout=1_000)
    except Exception:  # the controls went (the move was made, or the turn passed)
        return False

    async def answered() -> bool:
        """The button went, waits disabled for the move's events, or changed."""
        done: bool = await handle.evaluate(
            "(e, before) => !e.isConnected || e.matches(':disabled') || e.outerHTML !== before",
            before,
        )
        return done

    try:
        await until(answered, "the page to take the move")
    except AssertionError:
        shown = await page.locator(".error").all_inner_texts()
        raise AssertionError(f"the move {before} was not taken: {shown}") from None
    return True


async def keyboard_move(page: Page) -> bool:
    """A move by keyboard alone: Tab (from wherever the focus is: the page
    puts it on "Your move" when a move is asked for) to the first enabled
    button of the controls, press Enter, and wait for the page to take it."""
    if not await page.locator(".controls button:enabled").count():
        return False
    on_button = (
        "(() => { const a = document.activeElement; return !!a && a.tagName === 'BUTTON'"
        " && a.matches(':enabled') && !!a.closest('.controls'); })()"
    )
    for _ in range(40):
        await page.keyboard.press("Tab")
        if await page.evaluate(on_button):
            break
    else:  # the controls went meanwhile (disabled while a move is sent): later
        return False
    handle = await page.evaluate_handle("document.activeElement")
    before = await handle.evaluate("e => e.outerHTML")
    if not before.startswith("<button"):  # a new move took the focus meanwhile
        return False
    await page.keyboard.press("Enter")

    async def answered() -> bool:
        """Taken (as play_one_move's), or the focus moved before Enter
        reached the button (a new move asked for): the caller goes on."""
        done: bool = await handle.evaluate(
            "(e, before) => !e.isConnected || e.matches(':disabled') || e.outerHTML !== before"
            " || document.activeElement !== e",
            before,
        )
        return done

    try:
        await until(answered, "the page to take the move")
    except AssertionError:
        shown = await page.locator(".error").all_inner_texts()
        raise AssertionError(f"the move {before} was not taken: {shown}") from None
    return True


async def axe_violations(page: Page) -> list[dict[str, Any]]:
    """axe-core's serious and critical violations on the page as it is; the
    script comes from examples/web/node_modules (never served by the server)
    and runs through the DevTools protocol, not as a page script."""
    await page.evaluate(AXE.read_text(encoding="utf-8"))
    found: list[dict[str, Any]] = await page.evaluate(
        "axe.run(document, {resultTypes: ['violations']}).then(r => r.violations"
        ".filter(v => v.impact === 'serious' || v.impact === 'critical')"
        ".map(v => ({id: v.id, impact: v.impact, nodes: v.nodes.map(n => n.target.join(' '))})))"
    )
    return found


async def screenshot(page: Page, name: str) -> None:
    """docs/screenshots/<name>.png, under `make screenshots` only."""
    directory = os.environ.get(SCREENSHOTS_ENV)
    if directory:
        Path(directory).mkdir(parents=True, exist_ok=True)
        await page.screenshot(path=str(Path(directory) / f"{name}.png"), full_page=True)
