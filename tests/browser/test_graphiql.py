"""The GraphiQL playground in Chromium with no network but this machine: the
page renders its editor, runs a query, and shows a subscription's frames
over graphql-transport-ws, with the token of its Headers pane."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlencode, urlsplit

import pytest
from playwright.async_api import Page, expect

from api.graphql.playground import STATIC_PATH
from tests.browser.conftest import Watched
from tests.e2e.client import Api, Person
from tests.e2e.conftest import Server
from tests.e2e.play import new_game

pytestmark = [pytest.mark.browser, pytest.mark.timeout(120)]

WAIT_MS = 15_000  # for the page (GraphiQL's bundle is 3.5 MB) and for frames
ME = "query Me { me { player { id name } } }"
EVENTS = (
    "subscription Events($game: ID!) { gameEvents(gameId: $game, afterSeq: 0) { seq type data } }"
)


async def open_playground(
    watched: Watched, server: Server, query: str, person: Person, **variables: Any
) -> Page:
    """The playground with ``query``, ``variables`` and the person's token
    in its Headers pane (as a URL shares them), the editor on screen."""
    headers = json.dumps({"Authorization": f"Bearer {person.token}"})
    shared = {"q": query, "variables": json.dumps(variables), "headers": headers}
    page = await watched.new_page()
    await page.goto(f"{server.base_url}/graphql?{urlencode(shared)}")
    editor = page.locator(".graphiql-query-editor .CodeMirror")
    await expect(editor).to_be_visible(timeout=WAIT_MS)
    await expect(editor).to_contain_text(query.split("{")[0].strip())
    return page


async def run(page: Page) -> None:
    await page.locator(".graphiql-execute-button").click()


def frames(texts: list[str], kind: str) -> list[dict[str, Any]]:
    parsed = [json.loads(t) for t in texts]
    return [f for f in parsed if f.get("type") == kind]


async def test_the_playground_works_offline(watched: Watched, server: Server, api: Api) -> None:
    ann = await api.new_person("graphiql-ann")
    page = await open_playground(watched, server, ME, ann)
    response = page.locator(".graphiql-response")
    # The page's schema introspection is charged to the person's token by
    # the work it measures (#22): on a loaded machine the first run may be
    # refused RATE_LIMITED, as it would be for a person, who runs it again.
    # (It was answered "Unknown operation named Me", a 400, until a refusal
    # at the parse kept the operation's name: issue #28's second round.)
    # Only that refusal is clicked through, until a deadline.
    deadline, retried = time.monotonic() + WAIT_MS / 1000, False
    await run(page)
    while True:
        try:
            await expect(response).to_contain_text(ann.id, timeout=3_000)
            break
        except AssertionError:
            assert time.monotonic() < deadline, "the playground never ran the query"
            assert "RATE_LIMITED" in await response.inner_text()
            retried = True
            await run(page)
    await expect(response).to_contain_text('"name": "graphiql-ann"')

    # Every file came from the server itself; nothing else was even asked for.
    hosts = {urlsplit(u).netloc for u in watched.requests if not u.startswith("data:")}
    assert hosts == {urlsplit(server.base_url).netloc}, watched.requests
    loaded = {urlsplit(u).path for u in watched.requests}
    assert f"{STATIC_PATH}/vendor/graphiql.min.js" in loaded
    assert f"{STATIC_PATH}/playground.js" in loaded
    problems = [p for p in watched.problems if not (retried and "status of 400" in p)]
    assert not problems, watched.problems


async def test_the_playground_shows_a_subscriptions_frames(
    watched: Watched, server: Server, api: Api
) -> None:
    game_id, (host,) = await new_game(api, "graphiql-sub", 1, ["GREEDY", "RANDOM"])
    await api.start(host, game_id)
    page = await open_playground(watched, server, EVENTS, host, game=game_id)
    await run(page)
    response = page.locator(".graphiql-response")
    await expect(response).to_contain_text('"gameEvents"', timeout=WAIT_MS)

    # graphql-transport-ws to /graphql of the same server; the Headers pane's
    # token went into connection_init, so the stream is the seat's own.
    assert watched.websockets == [server.ws_url], watched.websockets
    sent = [json.loads(t) for t in watched.sent]
    assert sent[0]["type"] == "connection_init", sent
    assert sent[0]["payload"] == {"Authorization": f"Bearer {host.token}"}
    assert sent[1]["type"] == "subscribe" and sent[1]["payload"]["variables"] == {"game": game_id}
    assert frames(watched.received, "connection_ack")
    before = await api.game(game_id, host.token)
    last = before["lastSeq"]
    await _until(lambda: _seqs(watched)[-1:] == [last])
    started = next(e for e in _events(watched) if e["type"] == "GameStarted")
    assert len(started["data"]["hand"]) == 10, started  # the seat's projection
    await expect(response).to_contain_text(f'"seq": {last}')  # the newest frame

    # A move made elsewhere reaches the page live, and is shown.
    action = before["viewer"]["legalActions"][0]
    change = await api.act(host, game_id, action)
    moved = change["events"][0]["seq"]
    await _until(lambda: moved in _seqs(watched))
    await expect(response).to_contain_text('"seq": ')
    seqs = _seqs(watched)
    assert seqs == list(range(1, seqs[-1] + 1)), seqs  # in order, no gap, no duplicate
    assert not watched.problems, watched.problems


def _events(watched: Watched) -> list[dict[str, Any]]:
    return [f["payload"]["data"]["gameEvents"] for f in frames(watched.received, "next")]


def _seqs(watched: Watched) -> list[int]:
    return [e["seq"] for e in _events(watched)]


async def _until(check: Callable[[], bool], timeout: float = WAIT_MS / 1000) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.05)
