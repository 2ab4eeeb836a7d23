"""A web app on another origin (another port of this machine) in Chromium:
with its origin in MMK_CORS_ORIGINS it queries /graphql (CORS, preflight
included) and subscribes over graphql-transport-ws (the WebSocket Origin
check); from an origin not listed, the browser gets neither, and the query
never reaches the server. In development mode (``MMK_DEV``, ``make run``)
a page of a dev server on localhost (Vite's way) needs no listing."""

from __future__ import annotations

import asyncio
import time
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.async_api import Page

from tests.browser.conftest import ClientPages, Watched
from tests.e2e.client import SUBSCRIBE_EVENTS, Api
from tests.e2e.conftest import Server
from tests.e2e.own_server import assert_no_leak, log_records, own_server
from tests.e2e.play import new_game

pytestmark = [pytest.mark.browser, pytest.mark.timeout(120)]

QUERY = """query($id: ID!) {
  me { player { name } }
  game(id: $id) { ... on Game { viewer { seat } } }
}"""
WAIT_MS = 10_000
LOG_WAIT = 5.0  # seconds for the server's log line of a request to appear


async def query(page: Page, server: Server, token: str, game_id: str, rid: str) -> Any:
    """client.html's POST of ``QUERY``, with our request id."""
    args = [f"{server.base_url}/graphql", token, QUERY, {"id": game_id}, rid]
    return await page.evaluate("(args) => mmk.query(...args)", args)


async def subscribe(page: Page, server: Server, token: str, game_id: str) -> Any:
    """client.html's graphql-transport-ws subscription, until GameStarted."""
    variables = {"gameId": game_id, "afterSeq": 0}
    args = [server.ws_url, token, SUBSCRIBE_EVENTS, variables, "GameStarted", WAIT_MS]
    return await page.evaluate("(args) => mmk.subscribe(...args)", args)


async def logged(server: Server, check: Any) -> list[dict[str, Any]]:
    """The server's log records once one passes ``check`` (or all, on timeout)."""
    deadline = time.monotonic() + LOG_WAIT
    while True:
        records = log_records(server)
        if any(check(r) for r in records) or time.monotonic() > deadline:
            return records
        await asyncio.sleep(0.05)


async def test_an_allowed_origin_queries_and_subscribes(
    watched: Watched, server: Server, pages: ClientPages, api: Api
) -> None:
    game_id, (host,) = await new_game(api, "cors-ok", 1, ["GREEDY", "RANDOM"])
    await api.start(host, game_id)
    page = await watched.new_page()
    await page.goto(f"{pages.allowed}/client.html")

    rid = f"cors-ok-{uuid.uuid4()}"
    answer = await query(page, server, host.token, game_id, rid)
    assert answer.get("status") == 200, answer
    assert answer["body"]["data"] == {
        "me": {"player": {"name": host.name}},
        "game": {"viewer": {"seat": 0}},
    }
    assert answer["requestId"] == rid  # an exposed header: the page may read it
    records = await logged(server, lambda r: r.get("request_id") == rid)
    assert [r["message"] for r in records if r.get("request_id") == rid] == ["POST /graphql 200"]

    sub = await subscribe(page, server, host.token, game_id)
    assert sub["how"] == "found", sub
    assert sub["protocol"] == "graphql-transport-ws"
    assert sub["frames"][0] == {"type": "connection_ack", "payload": None}
    started = sub["frames"][-1]["payload"]["data"]["gameEvents"]
    assert len(started["data"]["hand"]) == 10, started  # the seat's own projection
    assert not watched.problems, watched.problems


async def test_another_origin_is_refused(
    watched: Watched, server: Server, pages: ClientPages, api: Api
) -> None:
    game_id, (host,) = await new_game(api, "cors-refused", 1, ["GREEDY", "RANDOM"])
    await api.start(host, game_id)
    page = await watched.new_page()
    await page.goto(f"{pages.refused}/client.html")

    rid = f"cors-refused-{uuid.uuid4()}"
    answer = await query(page, server, host.token, game_id, rid)
    assert answer == {"error": "TypeError: Failed to fetch"}, answer
    # The browser asked first (preflight), was refused, and never sent the query.
    records = await logged(server, lambda r: r.get("message") == "OPTIONS /graphql 400")
    assert any(r.get("message") == "OPTIONS /graphql 400" for r in records)
    assert not [r for r in records if r.get("request_id") == rid]

    sub = await subscribe(page, server, host.token, game_id)
    assert (sub["how"], sub["opened"], sub["frames"]) == ("closed 1006", False, []), sub
    refusal = f"WebSocket from origin '{pages.refused}' refused: not in MMK_CORS_ORIGINS"
    records = await logged(server, lambda r: r.get("message") == refusal)
    assert any(r.get("message") == refusal for r in records)
    # The browser reports both refusals on its console; nothing else went wrong.
    assert all(
        "CORS" in p or "WebSocket" in p or "Failed to load" in p for p in watched.problems
    ), watched.problems


async def test_dev_mode_lets_a_local_dev_server_in(
    watched: Watched, pages: ClientPages, tmp_path: Path
) -> None:
    """``make run`` (MMK_DEV=1, no origin listed): a page of a dev server on
    http://localhost:<port>, as Vite serves one, queries and subscribes. The
    same kind of page is refused without dev mode (the test above: another
    port of this machine, not listed)."""
    vite = pages.refused.replace("127.0.0.1", "localhost")
    database = f"sqlite:///{tmp_path}/dev.sqlite3"
    with own_server(tmp_path, database, MMK_DEV="1") as (dev, _):
        async with httpx.AsyncClient(base_url=dev.base_url, timeout=10.0, trust_env=False) as c:
            api = Api(c)
            game_id, (host,) = await new_game(api, "cors-dev", 1, ["GREEDY", "RANDOM"])
            await api.start(host, game_id)
        page = await watched.new_page()
        await page.goto(f"{vite}/client.html")
        rid = f"cors-dev-{uuid.uuid4()}"
        answer = await query(page, dev, host.token, game_id, rid)
        assert answer.get("status") == 200, answer
        assert answer["requestId"] == rid
        sub = await subscribe(page, dev, host.token, game_id)
        assert sub["how"] == "found", sub
        assert not watched.problems, watched.problems
    assert_no_leak(dev)
