"""The reference web client (/play) with two people at one table, each in
their own browser context, against a real ``mmk serve``: one hosts, the
other joins by the invite code the host's page shows, the host adds a bot
and starts; the Rat sends a message through the page's controls, the
recipient's page shows its text and an anonymous spectator's page shows
only that it went (R5.4); after the end, "Rematch" on one page and "Join
the rematch" on the other seat both in the new game."""

from __future__ import annotations

import asyncio
import re
import time
import uuid
from collections.abc import Iterator
from functools import partial
from typing import Any

import pytest
from playwright.async_api import Browser, Page

from tests.browser.conftest import Watched, watched_context
from tests.browser.play_support import (
    WAIT,
    event_log,
    game_id_of,
    play_one_move,
    play_server,
    sign_in,
    signed_in_as,
    status,
    until,
)
from tests.e2e.client import SECRET_PREFIX, Api
from tests.e2e.conftest import Server

pytestmark = [pytest.mark.browser, pytest.mark.timeout(120)]

GAME_TIME = 60.0  # seconds for a whole 3-seat game of two people (pages) and a bot
# The message's route as the pages show it: names, then houses (the Rat's own
# message goes straight to delivery, R5.2).
ROUTE = r"web-hal \(Rat\) → web-gus \(\w+\) \(delivered\)"
MESSAGES = ("MessageSent", "MessageDelivered", "MessageDeclined", "MessageExpired")


@pytest.fixture(scope="module")
def server(chromium: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with play_server(tmp_path_factory, "social") as srv:
        yield srv


async def _on_game(page: Page, game_id: str | None = None) -> bool:
    fragment = page.url.partition("#")[2]
    if game_id is None:
        return fragment.startswith("/game/")
    return fragment == f"/game/{game_id}"


async def _status_is(page: Page, wanted: str) -> bool:
    return await status(page) == wanted


async def _seated(page: Page, seat: int) -> bool:
    """The page's heading says the viewer sits in ``seat``."""
    return await page.get_by_role("heading", name=f"you sit in seat {seat}").count() == 1


async def test_two_people_join_by_code_message_and_rematch(
    watched: Watched, browser: Browser, server: Server, api: Api
) -> None:
    hal_page = await watched.new_page()
    await sign_in(hal_page, server.base_url, "web-hal")
    hal = await signed_in_as(hal_page, api)
    # An unlisted game (anyone with the link may watch), hal at seat 0 and
    # the Rat (the Rat leads the first trick, and its own messages go
    # straight to delivery, R5.2); a practice seed makes the deal and the
    # bot's moves the same every run.
    game_id = await api.create_game(
        hal, seatCount=3, visibility="UNLISTED", ratSeat=0, practice=True, seed="web-social"
    )
    await hal_page.goto(f"{server.base_url}/play#/game/{game_id}")
    await until(lambda: _status_is(hal_page, "LOBBY"), "the host's lobby")
    code = (await hal_page.get_by_test_id("invite-code").text_content() or "").strip()
    assert code

    async with watched_context(browser) as guests, watched_context(browser) as fans:
        # (a) The guest joins by the code, through the lobby's form.
        gus_page = await guests.new_page()
        await sign_in(gus_page, server.base_url, "web-gus")
        join = gus_page.get_by_role("form", name="Join by code")
        await join.get_by_label("Invite code").fill(code)
        await join.get_by_role("button", name="Join").click()
        await until(lambda: _on_game(gus_page, game_id), "the guest on the game's page")
        await until(lambda: _seated(gus_page, 1), "the guest seated at seat 1")

        async def two_taken() -> bool:
            shown = await hal_page.locator(".lobby-panel").text_content() or ""
            return "2 of 3 seats taken" in shown

        await until(two_taken, "the host's page to count the guest")
        await hal_page.get_by_role("button", name="Add a bot").click()
        start = hal_page.get_by_role("button", name="Start the game")
        await until(start.is_enabled, "Start the game enabled")
        await start.click()
        for page in (hal_page, gus_page):
            await until(partial(_status_is, page, "RUNNING"), "the game running")

        fan = await fans.new_page()  # signed in as nobody: the public projection
        await fan.goto(f"{server.base_url}/play#/game/{game_id}")
        await until(lambda: _status_is(fan, "RUNNING"), "the spectator's page")

        # (b) hal, the Rat, leads the first trick: a message to gus first.
        text = f"{SECRET_PREFIX}{uuid.uuid4()}"
        form = hal_page.locator(".controls .message-form")
        await form.wait_for(timeout=WAIT * 1000)
        await form.get_by_label("To").select_option("1")
        await form.get_by_label("Text").fill(text)
        await form.get_by_role("button", name="Send").click()
        delivered = gus_page.locator(".messages li", has_text=text)
        await delivered.wait_for(timeout=WAIT * 1000)
        shown = (await delivered.text_content() or "").strip()
        assert re.fullmatch(f"{ROUTE}: {re.escape(text)}", shown), shown
        went = fan.locator(".messages li")
        await went.first.wait_for(timeout=WAIT * 1000)
        assert await went.count() == 1
        shown = (await went.text_content() or "").strip()
        assert re.fullmatch(ROUTE, shown), shown  # that it went, never what it says
        assert text not in await fan.content()
        assert not [f for f in fans.received if text in f], "the text reached a spectator"
        gus_messages = _messages(await event_log(gus_page))
        assert gus_messages and any(e.get("text") == text for e in gus_messages)
        fan_messages = _messages(await event_log(fan))
        assert len(fan_messages) == len(gus_messages)
        assert all(e.get("text") is None for e in fan_messages), fan_messages

        # Both play through their pages to the end.
        moves = 0
        deadline = time.monotonic() + GAME_TIME
        while await status(hal_page) != "FINISHED" or await status(gus_page) != "FINISHED":
            assert time.monotonic() < deadline, f"the game did not end ({moves} moves)"
            played = [await play_one_move(p) for p in (hal_page, gus_page)]
            moves += sum(played)
            if not any(played):
                await asyncio.sleep(0.05)
        assert moves > 2

        # (c) The rematch: hal asks for it and lands in the new game; gus's
        # page offers to join it, and gus lands there too.
        await hal_page.get_by_role("button", name="Rematch", exact=True).click()

        async def moved_on() -> bool:
            return await _on_game(hal_page) and game_id_of(hal_page) != game_id

        await until(moved_on, "the host's page on the rematch")
        rematch_id = game_id_of(hal_page)
        await gus_page.get_by_role("button", name="Join the rematch").click()
        await until(lambda: _on_game(gus_page, rematch_id), "the guest's page on the rematch")
        for page in (hal_page, gus_page):
            await until(partial(_status_is, page, "LOBBY"), "the rematch's lobby")
        seats = {s["playerId"]: s["seat"] for s in (await api.game(rematch_id))["seats"]}
        gus = await signed_in_as(gus_page, api)
        assert {hal.id, gus.id} <= set(seats), seats
        await until(lambda: _seated(hal_page, seats[hal.id]), "the host seated")
        await until(lambda: _seated(gus_page, seats[gus.id]), "the guest seated")
        assert not guests.problems, guests.problems
        assert not fans.problems, fans.problems
    assert not watched.problems, watched.problems


def _messages(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in events if e["__typename"] in MESSAGES]
