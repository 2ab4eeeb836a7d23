"""The reference web client (/play, examples/web) in Chromium, against a real
``mmk serve`` with no network but this machine: a person signs in, quick-plays
against bots and plays a whole game through the page; a spectator in another
browser context watches it live and ends with the public log; the network
drops mid-game and both pages resume with no gap or duplicate; the replay
shows every hand; a phone-sized page is played by keyboard alone; axe-core
finds nothing serious on any page."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.async_api import Browser, Page

from tests.browser.conftest import Watched, served, watched_context
from tests.browser.play_support import (
    PHONE,
    WAIT,
    axe_violations,
    debug,
    event_log,
    game_id_of,
    keyboard_move,
    play_one_move,
    screenshot,
    sign_in,
    status,
    until,
)
from tests.e2e.client import Api
from tests.e2e.conftest import (
    MEASURED_NOT_REFUSED,
    Server,
)

pytestmark = [pytest.mark.browser, pytest.mark.timeout(120)]


@pytest.fixture(scope="module")
def server(chromium: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """``mmk serve`` (SQLite, in-process bus) as tests/e2e's: work measured
    and charged but never refused, as a page against bots plays far faster
    than people, and every page of the test shares one address (loopback)."""
    tmp = tmp_path_factory.mktemp("play")
    database = f"sqlite:///{tmp}/play.sqlite3"
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


GAME_TIME = 60.0  # seconds for a whole 3-seat game against GREEDY bots (~10 s)
# What the public log and the spectator's page must agree on, event by event.
PUBLIC_FIELDS = """__typename gameId seq
  ... on CardPlayed { seat faceDown card { id } }
  ... on TrickWon { winner scores }
  ... on ActionRequired { seat phase hand { id } choices { kind } }
  ... on GameEnded { winners scores }"""
OFFLINE_NOISE = ("ERR_INTERNET_DISCONNECTED", "WebSocket connection to")


def _as_selected(shown: Any, selected: Any) -> Any:
    """``shown`` (all the page's fields) cut down to the fields of ``selected``."""
    if isinstance(selected, dict) and isinstance(shown, dict):
        return {k: _as_selected(shown.get(k), v) for k, v in selected.items()}
    if isinstance(selected, list) and isinstance(shown, list):
        return [_as_selected(a, b) for a, b in zip(shown, selected, strict=False)]
    return shown


async def quick_play(page: Page) -> str:
    await page.get_by_role("button", name="Quick play").click()
    await until(lambda: _on_game(page), "the game's page")
    await page.locator("[data-status]").wait_for()
    return game_id_of(page)


async def _on_game(page: Page) -> bool:
    return "#/game/" in page.url


async def drop_the_network(contexts: list[Watched], pages: list[Page]) -> None:
    """Offline, until every page has seen its socket go; then online, until
    every page has reconnected."""
    before = [await debug(p) for p in pages]
    for w in contexts:
        await w.context.set_offline(True)

    async def all_down() -> bool:
        states = [(await debug(p))["state"] for p in pages]
        return "connected" not in states

    await until(all_down, "the pages to notice the network is gone")
    for w in contexts:
        await w.context.set_offline(False)

    async def all_back() -> bool:
        now = [await debug(p) for p in pages]
        return all(
            n["state"] == "connected" and n["reconnects"] > b["reconnects"]
            for n, b in zip(now, before, strict=True)
        )

    await until(all_back, "the pages to reconnect")


async def test_a_person_plays_a_game_a_spectator_watches_both_resume(
    watched: Watched, browser: Browser, server: Server, api: Api
) -> None:
    started = time.monotonic()
    page = await watched.new_page()
    await sign_in(page, server.base_url, "web-ann")
    await screenshot(page, "lobby")
    game_id = await quick_play(page)

    async with watched_context(browser) as fans:
        fan = await fans.new_page()  # signed in as nobody: the public projection
        await fan.goto(f"{server.base_url}/play#/game/{game_id}")
        await fan.locator("[data-status]").wait_for()
        moves, dropped = 0, False
        deadline = time.monotonic() + GAME_TIME
        while await status(page) != "FINISHED":
            assert time.monotonic() < deadline, f"the game did not end ({moves} moves)"
            if moves == 3 and not dropped:
                await screenshot(page, "table")
                await screenshot(fan, "spectator")
                await drop_the_network([watched, fans], [page, fan])
                dropped = True
            if await play_one_move(page):
                moves += 1
            else:
                await asyncio.sleep(0.05)
        assert dropped and moves > 3
        await page.get_by_role("button", name="Rematch").wait_for()
        await screenshot(page, "finished")

        # The player's page folded every event once, in order.
        game = await api.game(game_id)
        last: int = game["lastSeq"]

        async def fan_has_all() -> bool:
            seen: int = (await debug(fan))["lastSeq"]
            return seen == last

        await until(fan_has_all, "the spectator's page to reach the end")
        seen = await event_log(page)
        assert [e["seq"] for e in seen] == list(range(1, last + 1))
        # The spectator's page holds the public log, event for event.
        public = await api.events(game_id, None, PUBLIC_FIELDS)
        shown = await event_log(fan)
        assert len(shown) == len(public) == last
        assert [_as_selected(e, p) for e, p in zip(shown, public, strict=True)] == public
        assert (await debug(fan))["reconnects"] >= 1

        # The replay: every seat's hand on the table at once.
        await fan.goto(f"{server.base_url}/play#/replay/{game_id}")
        step = fan.get_by_test_id("replay-step")
        await step.wait_for(timeout=WAIT * 1000)
        for _ in range(12):  # from the start, past GameStarted and the first plays
            await fan.get_by_role("button", name="Next").click()
        await fan.locator(".hand.small").nth(2).wait_for(timeout=WAIT * 1000)
        assert await fan.locator(".hand.small").count() == 3
        await screenshot(fan, "replay")
        assert await axe_violations(fan) == []
        problems = [p for p in fans.problems if not any(n in p for n in OFFLINE_NOISE)]
        assert not problems, problems

    assert await axe_violations(page) == []
    problems = [p for p in watched.problems if not any(n in p for n in OFFLINE_NOISE)]
    assert not problems, problems
    assert time.monotonic() - started < GAME_TIME


async def test_a_phone_sized_page_played_by_keyboard_alone(
    browser: Browser, server: Server
) -> None:
    async with watched_context(browser, viewport=PHONE, is_mobile=True, has_touch=True) as phone:
        page = await phone.new_page()
        await page.goto(f"{server.base_url}/")
        await page.get_by_role("heading", name="Sign in").wait_for()
        # The page's heading has the focus; Tab goes to the first field.
        await page.keyboard.press("Tab")
        await page.keyboard.type("web-kay")
        await page.keyboard.press("Enter")
        await page.get_by_role("heading", name="Lobby").wait_for()
        assert await _fits(page)
        assert await axe_violations(page) == []
        for _ in range(6):  # seats, bots, then the Quick play button
            await page.keyboard.press("Tab")
            label = await page.evaluate("document.activeElement.textContent")
            if label == "Quick play":
                break
        await page.keyboard.press("Enter")
        await until(lambda: _on_game(page), "the game's page")
        deadline = time.monotonic() + GAME_TIME
        moves = 0
        while await status(page) != "FINISHED":
            assert time.monotonic() < deadline, f"the game did not end ({moves} moves)"
            if await keyboard_move(page):
                moves += 1
                if moves == 2:
                    assert await _fits(page)
                    await screenshot(page, "phone-table")
                    assert await axe_violations(page) == []
            else:
                await asyncio.sleep(0.05)
        assert moves > 0
        assert not phone.problems, phone.problems


async def _fits(page: Page) -> bool:
    """Nothing wider than the screen: no sideways scrolling."""
    wide: bool = await page.evaluate(
        "document.documentElement.scrollWidth <= window.innerWidth + 1"
    )
    return wide


async def test_every_page_passes_axe(watched: Watched, server: Server, api: Api) -> None:
    """Sign-in, lobby, my games, inbox, the featured games (a live game that
    waits for a person), each without serious or critical violations."""
    host = await api.new_person("web-host")
    game_id = await api.create_game(host, seatCount=3, seed="web-tv", practice=True)
    await api.add_bot(host, game_id, "GREEDY")
    await api.add_bot(host, game_id, "RANDOM")
    await api.start(host, game_id)

    page = await watched.new_page()
    await page.goto(f"{server.base_url}/play")
    await page.get_by_role("heading", name="Sign in").wait_for()
    await screenshot(page, "sign-in")
    assert await axe_violations(page) == []
    await sign_in(page, server.base_url, "web-axe")
    for path, heading, name in (
        ("#/games", "My games", "my-games"),
        ("#/inbox", "Inbox", "inbox"),
        ("#/tv", "Watch", "watch"),
    ):
        await page.goto(f"{server.base_url}/play{path}")
        await page.get_by_role("heading", name=heading).wait_for()
        if name == "watch":
            await page.locator(f"li[data-game='{game_id}']").wait_for()
            await page.locator("details.debug").wait_for()
        await screenshot(page, name)
        assert await axe_violations(page) == [], path
    assert not watched.problems, watched.problems
