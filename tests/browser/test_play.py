"""The reference web client (/play, examples/web) in Chromium, against a real
``mmk serve`` with no network but this machine: a person signs in, quick-plays
against bots and plays a whole game through the page; a spectator in another
browser context watches it live and ends with the public log; the network
drops mid-game and both pages resume with no gap or duplicate; the replay
shows every hand; a phone-sized page is played by keyboard alone; axe-core
finds nothing serious on any page."""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.async_api import Browser, Page, Route, WebSocketRoute

from tests.browser.conftest import Watched, watched_context
from tests.browser.play_support import (
    PHONE,
    WAIT,
    axe_violations,
    debug,
    event_log,
    game_id_of,
    keyboard_move,
    play_one_move,
    play_server,
    screenshot,
    sign_in,
    signed_in_as,
    status,
    until,
)
from tests.e2e.client import CHANGE, Api
from tests.e2e.conftest import Server

pytestmark = [pytest.mark.browser, pytest.mark.timeout(120)]


@pytest.fixture(scope="module")
def server(chromium: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with play_server(tmp_path_factory, "play") as srv:
        yield srv


GAME_TIME = 60.0  # seconds for a whole 3-seat game against GREEDY bots (~10 s)
# What the public log and the spectator's page must agree on, event by event.
PUBLIC_FIELDS = """__typename gameId seq
  ... on CardPlayed { seat faceDown card { id } }
  ... on TrickWon { winner scores }
  ... on ActionRequired { seat phase hand { id } choices { kind } }
  ... on GameEnded { winners scores }"""
OFFLINE_NOISE = ("ERR_INTERNET_DISCONNECTED", "WebSocket connection to")
INVITE = f"""mutation($gameId: ID!, $playerIds: [ID!]!) {{
  invitePlayers(gameId: $gameId, playerIds: $playerIds) {{ {CHANGE} }}
}}"""
DECLINE = f"""mutation($gameId: ID!) {{ declineInvitation(gameId: $gameId) {{ {CHANGE} }} }}"""


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


async def test_a_server_out_of_reach_keeps_the_token_a_bad_one_is_forgotten(
    watched: Watched, server: Server
) -> None:
    """At load, a 502 (a proxy, a server restarting) says nothing about the
    token: the page says it cannot reach the server, keeps the token and
    asks again; UNAUTHENTICATED forgets it."""
    page = await watched.new_page()
    await sign_in(page, server.base_url, "web-lee")
    token = await page.evaluate("localStorage.getItem('mmk.token')")
    assert token

    async def bad_gateway(route: Route) -> None:
        await route.fulfill(status=502, content_type="text/html", body="<h1>Bad gateway</h1>")

    await page.route("**/graphql", bad_gateway)
    await page.reload()
    await page.get_by_role("heading", name="Cannot reach the server").wait_for()
    assert await page.evaluate("localStorage.getItem('mmk.token')") == token
    assert await axe_violations(page) == []
    await page.get_by_role("button", name="Try now").click()  # the backoff starts again
    await page.get_by_role("heading", name="Cannot reach the server").wait_for()
    await page.unroute("**/graphql", bad_gateway)
    await page.get_by_role("heading", name="Lobby").wait_for(timeout=WAIT * 1000)
    assert await page.evaluate("localStorage.getItem('mmk.token')") == token

    await page.evaluate("localStorage.setItem('mmk.token', 'not-a-token')")
    await page.reload()
    await page.get_by_role("heading", name="Sign in").wait_for()
    assert await page.evaluate("localStorage.getItem('mmk.token')") is None


async def test_the_inbox_reads_every_page_and_counts_on_from_the_last(
    watched: Watched, server: Server, api: Api
) -> None:
    """More notifications than a page (100): the inbox lists them all, the
    badge counts them all, "Mark all as read" marks them all, and a new one
    is counted live."""
    page = await watched.new_page()
    await sign_in(page, server.base_url, "web-ivy")
    ivy = await signed_in_as(page, api)
    host = await api.new_person("web-inviter")
    game_id = await api.create_game(host, seatCount=3)
    invited = {"gameId": game_id, "playerIds": [ivy.id]}
    count = 120
    for _ in range(count):  # each invitation a YourInvitation for ivy
        await api.ok("invitePlayers", INVITE, invited, host.token)
        await api.ok("declineInvitation", DECLINE, {"gameId": game_id}, ivy.token)

    await page.goto(f"{server.base_url}/play#/inbox")
    await page.reload()  # the count from the inbox as read at load, not live
    await page.get_by_role("heading", name="Inbox").wait_for()
    badge = page.locator("nav .badge")

    async def counted(n: int) -> bool:
        return (await badge.text_content() or "").strip() == f"({n} new)"

    async def listed() -> bool:
        return await page.locator("ul.inbox > li.unread").count() == count

    await until(listed, f"the inbox to list {count}")
    await until(lambda: counted(count), f"the badge to count {count}")
    await page.get_by_role("button", name="Mark all as read").click()

    async def all_read() -> bool:
        return await page.locator("ul.inbox > li.read").count() == count

    await until(all_read, "every notification marked read")
    assert await badge.count() == 0
    await api.ok("invitePlayers", INVITE, invited, host.token)
    await until(lambda: counted(1), "the new one counted live")
    assert not watched.problems, watched.problems


async def test_an_abandoned_game_offers_no_replay(
    watched: Watched, server: Server, api: Api
) -> None:
    """A game that ended ABANDONED (its last person left) has no replay and
    no rematch: the page offers neither."""
    page = await watched.new_page()
    await sign_in(page, server.base_url, "web-abe")
    abe = await signed_in_as(page, api)
    game_id = await api.create_game(abe, seatCount=3)
    await page.goto(f"{server.base_url}/play#/game/{game_id}")
    await until(lambda: _status_is(page, "LOBBY"), "the game's lobby")
    await api.leave(abe, game_id)  # the last person: the lobby ends abandoned
    await until(lambda: _status_is(page, "ABANDONED"), "the game to end abandoned")
    assert await page.get_by_role("link", name="Watch the replay").count() == 0
    assert await page.get_by_role("button", name="Rematch").count() == 0
    assert not watched.problems, watched.problems


async def _status_is(page: Page, wanted: str) -> bool:
    return await status(page) == wanted


async def test_a_stream_error_stops_the_operation_keeps_its_event_and_resumes(
    watched: Watched, server: Server, api: Api
) -> None:
    """A ``next`` of the game's stream that carries errors (here added to one
    event on its way to the page): the event is still folded, the page
    stops that operation (``complete``) before it subscribes again, from
    right after that event, and ends with every event once."""
    host = await api.new_person("web-err-host")
    game_id = await api.create_game(host, seatCount=3, seed="web-err", practice=True)
    await api.add_bot(host, game_id, "GREEDY")
    await api.add_bot(host, game_id, "RANDOM")
    await api.start(host, game_id)  # it waits for its host: the stream stays open
    sent: list[dict[str, Any]] = []
    spoiled: list[tuple[str, int]] = []  # (operation id, seq) of the next given errors

    def route(page_side: WebSocketRoute) -> None:
        server_side = page_side.connect_to_server()

        def from_page(message: str | bytes) -> None:
            if isinstance(message, str):
                sent.append(json.loads(message))
            server_side.send(message)

        def from_server(message: str | bytes) -> None:
            if isinstance(message, str) and not spoiled:
                m = json.loads(message)
                event = ((m.get("payload") or {}).get("data") or {}).get("gameEvents")
                if m.get("type") == "next" and event and event["seq"] >= 3:
                    spoiled.append((m["id"], event["seq"]))
                    extensions = {"code": "RATE_LIMITED", "retryAfter": 0.5}
                    m["payload"]["errors"] = [{"message": "spoiled", "extensions": extensions}]
                    page_side.send(json.dumps(m))
                    return
            page_side.send(message)

        page_side.on_message(from_page)
        server_side.on_message(from_server)

    page = await watched.new_page()
    await page.route_web_socket(re.compile(r".*/graphql$"), route)
    await page.goto(f"{server.base_url}/play#/game/{game_id}")
    await page.locator("[data-status]").wait_for()
    last: int = (await api.game(game_id))["lastSeq"]

    async def caught_up() -> bool:
        return bool(spoiled) and (await debug(page))["lastSeq"] == last

    await until(caught_up, "the page to fold every event")
    (old, seq), *_ = spoiled

    async def resubscribed() -> bool:
        return any(m["type"] == "subscribe" and m["id"] != old for m in _events_subscribes(sent))

    await until(resubscribed, "a new subscription")
    stopped = [i for i, m in enumerate(sent) if m == {"type": "complete", "id": old}]
    again = [i for i, m in enumerate(sent) if m in _events_subscribes(sent) and m["id"] != old]
    assert stopped and stopped[0] < again[0], sent
    assert sent[again[0]]["payload"]["variables"]["afterSeq"] == seq
    assert [e["seq"] for e in await event_log(page)] == list(range(1, last + 1))
    problems = [p for p in watched.problems if "spoiled" not in p]
    assert not problems, problems


def _events_subscribes(sent: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        m
        for m in sent
        if m.get("type") == "subscribe" and m["payload"].get("operationName") == "Events"
    ]
