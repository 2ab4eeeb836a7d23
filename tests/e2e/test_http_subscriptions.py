"""``gameEvents`` subscriptions over HTTP through a real server: Apollo's
multipart protocol (the raw client of tests/e2e/httpsub.py, and Python
``gql``'s aiohttp transport, which speaks it) and GraphQL over SSE (the raw
client: ``gql`` 4.4 has no SSE transport). Whole games as a seat and as
spectators, gapless and in order to ``GameEnded`` and then the protocol's
end; ``afterSeq`` resume; a finished game's tail; heartbeats; a client that
leaves mid-stream; the subscription gauge."""

from __future__ import annotations

import asyncio
import random
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from gql import Client, GraphQLRequest
from gql.transport.aiohttp import AIOHTTPTransport

from tests.e2e.client import SUBSCRIBE_EVENTS, Api, Person, metric
from tests.e2e.conftest import Server
from tests.e2e.httpsub import (
    ACCEPT,
    HTTP_TRANSPORTS,
    MULTIPART,
    SSE,
    HttpSubscription,
    http_subscribe_events,
    streaming_client,
)
from tests.e2e.own_server import assert_no_leak, log_records, own_server
from tests.e2e.play import (
    EVENT_TIMEOUT,
    assert_complete,
    assert_ended,
    autoplay,
    new_game,
    read_until,
    together,
)
from tests.e2e.stuck_http import StuckStream
from tests.e2e.test_stuck_subscriber import bots_game, bots_only_env
from tests.e2e.wsclient import OperationEnded
from tests.http_streams import SSEReader

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(90)]

GAUGE = ("mmk_subscriptions_active", 'subscription="gameEvents"')
CLOSE_AT = 12  # the seq after which a follower leaves mid-game


async def gql_follow(server: Server, game_id: str, token: str | None) -> list[dict[str, Any]]:
    """A whole ``gameEvents`` stream through ``gql`` (multipart over aiohttp),
    to its end: gql's async generator stops when the server completes."""
    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
    transport = AIOHTTPTransport(url=f"{server.base_url}/graphql", headers=headers)
    request = GraphQLRequest(SUBSCRIBE_EVENTS, variable_values={"gameId": game_id, "afterSeq": 0})
    events: list[dict[str, Any]] = []
    async with Client(transport=transport) as session:
        async for data in session.subscribe(request):
            events.append(data["gameEvents"])
    return events


def start_hand(events: list[dict[str, Any]]) -> list[str] | None:
    """The hand a stream's ``GameStarted`` dealt (None: the public projection)."""
    (started,) = [e for e in events if e["type"] == "GameStarted"]
    hand: list[str] | None = started["data"].get("hand")
    return hand


async def test_a_whole_game_over_multipart_and_sse(server: Server, api: Api) -> None:
    game_id, (ann, bob) = await new_game(api, "http-full", 2, ["GREEDY", "RANDOM"])
    watcher = await api.new_person("http-full-watcher")
    ann_events: list[dict[str, Any]] = []
    bob_events: list[dict[str, Any]] = []
    anon_events: list[dict[str, Any]] = []
    async with streaming_client(server.base_url) as http:
        # Ann (multipart) and the anonymous spectator (SSE) from the lobby;
        # Bob (SSE) and the signed-in spectator (gql) once the bots may move.
        ann_sub = await http_subscribe_events(http, MULTIPART, game_id, ann.token)
        anon_sub = await http_subscribe_events(http, SSE, game_id, None)
        await api.start(ann, game_id)
        bob_sub = await http_subscribe_events(http, SSE, game_id, bob.token)
        results = await together(
            autoplay(api, ann, 0, game_id, random.Random("ann")),
            autoplay(api, bob, 1, game_id, random.Random("bob")),
            read_until(ann_sub, ann_events),
            read_until(bob_sub, bob_events),
            read_until(anon_sub, anon_events),
            gql_follow(server, game_id, watcher.token),
        )
        for sub in (ann_sub, bob_sub, anon_sub):
            await assert_ended(sub)
            assert sub.completed and not sub.errors, (sub.transport, sub.errors)
        assert ann_sub.heartbeats >= 1  # multipart opens with one

    game, watcher_events = results[0], results[5]
    last = game["lastSeq"]
    assert game["status"] == "FINISHED"
    for person, events in ((ann, ann_events), (bob, bob_events)):
        assert_complete(events, last, game_id)
        assert events[-1]["type"] == "GameEnded"
        # Exactly the log as this seat may see it: its own projections only.
        assert events == await api.events(game_id, person.token)
    for events in (anon_events, watcher_events):
        assert_complete(events, last, game_id)
        assert events == await api.events(game_id, None)
    ann_hand, bob_hand = start_hand(ann_events), start_hand(bob_events)
    assert ann_hand is not None and bob_hand is not None
    assert len(ann_hand) == len(bob_hand) == 10 and not set(ann_hand) & set(bob_hand)
    assert start_hand(anon_events) is None and start_hand(watcher_events) is None


async def _wait_for_seq(api: Api, person: Person, game_id: str, seq: int) -> dict[str, Any]:
    while True:
        game = await api.game(game_id, person.token)
        if game["lastSeq"] >= seq or game["status"] == "FINISHED":
            return game
        await asyncio.sleep(0.02)


@pytest.mark.parametrize("transport", HTTP_TRANSPORTS)
async def test_leave_mid_game_and_resume_with_after_seq(
    server: Server, api: Api, transport: str
) -> None:
    game_id, (ann,) = await new_game(api, f"http-resume-{transport}", 1, ["GREEDY", "RANDOM"])
    first: list[dict[str, Any]] = []
    second: list[dict[str, Any]] = []

    async def follow() -> None:
        async with streaming_client(server.base_url) as http:
            sub = await http_subscribe_events(http, transport, game_id, ann.token)
            await read_until(sub, first, lambda e: e["seq"] >= CLOSE_AT)
            await sub.close()  # the phone loses its connection
        await _wait_for_seq(api, ann, game_id, first[-1]["seq"] + 5)
        async with streaming_client(server.base_url) as http:
            sub = await http_subscribe_events(http, transport, game_id, ann.token, first[-1]["seq"])
            await read_until(sub, second)
            await assert_ended(sub)

    await api.start(ann, game_id)
    game, _ = await together(autoplay(api, ann, 0, game_id, random.Random("resume")), follow())
    assert second[0]["seq"] == first[-1]["seq"] + 1
    assert_complete(first + second, game["lastSeq"], game_id)
    assert first + second == await api.events(game_id, ann.token)


async def test_a_finished_game_replays_its_tail_then_completes(server: Server, api: Api) -> None:
    game_id, (ann,) = await new_game(api, "http-tail", 1, ["GREEDY", "RANDOM"])
    await api.start(ann, game_id)
    (game,) = await together(autoplay(api, ann, 0, game_id, random.Random("tail")))
    last = game["lastSeq"]
    log = await api.events(game_id, ann.token)
    async with streaming_client(server.base_url) as http:
        for transport in HTTP_TRANSPORTS:
            sub = await http_subscribe_events(http, transport, game_id, ann.token, last - 3)
            tail: list[dict[str, Any]] = []
            await read_until(sub, tail)
            assert tail == log[-3:]
            await assert_ended(sub)
            # At the very end: nothing, and the end at once.
            sub = await http_subscribe_events(http, transport, game_id, ann.token, last)
            await assert_ended(sub)
            assert sub.completed and not sub.errors


async def test_multipart_heartbeats_while_nothing_happens(server: Server, api: Api) -> None:
    game_id, (ann,) = await new_game(api, "http-beat", 1, [], seatCount=3)
    async with streaming_client(server.base_url) as http:
        sub = await http_subscribe_events(http, MULTIPART, game_id, ann.token)
        got: list[dict[str, Any]] = []
        await read_until(sub, got, lambda e: e["type"] == "SeatTaken")
        await asyncio.sleep(5.5)  # the protocol's interval is 5 s
        assert sub.heartbeats >= 2, sub.items
        assert not sub.done
        await sub.close()


async def test_errors_end_the_stream_with_a_code(server: Server, api: Api) -> None:
    """A refused start is the stream's one message: multipart's fatal
    ``{"payload": null, "errors"}``, SSE's ``next`` with the errors; then
    the end."""
    host = await api.new_person("http-errors")
    game_id = await api.create_game(host, seatCount=3)
    cases = [
        (None, {"gameId": "no-such-game", "afterSeq": 0}, "NOT_FOUND"),
        (None, {"gameId": game_id, "afterSeq": -1}, "BAD_INPUT"),
        (None, {"gameId": game_id, "afterSeq": 99}, "BAD_INPUT"),
        ("not-a-token", {"gameId": game_id, "afterSeq": 0}, "UNAUTHENTICATED"),
    ]
    async with streaming_client(server.base_url) as http:
        for transport in HTTP_TRANSPORTS:
            for token, variables, code in cases:
                sub = HttpSubscription(http, transport, SUBSCRIBE_EVENTS, variables, token)
                await sub.start()
                await sub.wait_done(EVENT_TIMEOUT)
                assert sub.completed, (transport, code, sub.items)
                assert [e["extensions"]["code"] for e in sub.errors] == [code], sub.items
                kinds = [i.kind for i in sub.items if i.kind != "heartbeat"]
                assert kinds == (["fatal", "end"] if transport == MULTIPART else ["result", "end"])
            # A document that does not validate: a coded error, the same way.
            sub = HttpSubscription(http, transport, "subscription { gameEvents(gameId: 1) { x } }")
            await sub.start()
            await sub.wait_done(EVENT_TIMEOUT)
            assert sub.completed and sub.errors, sub.items
            assert {e["extensions"]["code"] for e in sub.errors} == {"BAD_INPUT"}


async def test_a_client_that_leaves_mid_stream_leaves_nothing_behind(
    server: Server, api: Api, http: httpx.AsyncClient
) -> None:
    game_id, (ann,) = await new_game(api, "http-leave", 1, [], seatCount=3)
    before = await metric(http, *GAUGE)
    bus_before = await metric(http, "mmk_bus_subscribers")
    async with streaming_client(server.base_url) as streams:
        subs = [
            await http_subscribe_events(streams, transport, game_id, token)
            for transport in HTTP_TRANSPORTS
            for token in (ann.token, None)
        ]
        for sub in subs:
            assert (await sub.next(EVENT_TIMEOUT))["data"]["gameEvents"]["seq"] == 1
        # Counted as open subscriptions, like WebSocket ones.
        assert await metric(http, *GAUGE) == before + len(subs)
        for sub in subs:
            await sub.close()
    # The server notices each departure and lets go of the subscription.
    for _ in range(200):
        if await metric(http, *GAUGE) == before:
            break
        await asyncio.sleep(0.02)
    assert await metric(http, *GAUGE) == before
    assert await metric(http, "mmk_bus_subscribers") == bus_before
    # No traceback (the whole log is checked again at the end of the session).
    assert "Traceback" not in server.log.read_text(errors="replace")


async def test_a_query_with_the_sse_accept_is_one_result_then_complete(
    server: Server, api: Api
) -> None:
    """graphql-sse runs any operation: a query is one ``next``, then ``complete``."""
    async with streaming_client(server.base_url) as http:
        sub = await HttpSubscription(http, SSE, "{ cardCatalog { id } }").start()
        result = await sub.next(EVENT_TIMEOUT)
        assert len(result["data"]["cardCatalog"]) > 10
        with pytest.raises(OperationEnded):
            await sub.next(EVENT_TIMEOUT)
        assert sub.completed


async def test_subscription_starts_over_http_are_rate_limited(tmp_path: Path) -> None:
    """The same budget as WebSocket starts (api/graphql/rate_limits.py): the
    third start in a minute with a limit of 2 is refused, with the wait."""
    env = {"MMK_RATE_SUBSCRIPTIONS_TOKEN": "2", "MMK_RATE_SUBSCRIPTIONS_IP": "0"}
    with own_server(tmp_path, f"sqlite:///{tmp_path}/rl.sqlite3", **env) as (srv, _):
        async with streaming_client(srv.base_url) as http:
            api = Api(http)
            game_id, (ann,) = await new_game(api, "http-rl", 1, [], seatCount=3)
            subs = []
            for transport in (MULTIPART, SSE, SSE):
                sub = await http_subscribe_events(http, transport, game_id, ann.token)
                subs.append(sub)
            for sub in subs[:2]:
                assert (await sub.next(EVENT_TIMEOUT))["data"]["gameEvents"]["seq"] == 1
            await subs[2].wait_done(EVENT_TIMEOUT)
            (error,) = subs[2].errors
            assert error["extensions"]["code"] == "RATE_LIMITED"
            assert error["extensions"]["retryAfter"] > 0
            for sub in subs:
                await sub.close()
        assert_no_leak(srv)


async def test_an_event_source_may_subscribe_by_get(server: Server, api: Api) -> None:
    """A browser's ``EventSource`` can only GET (and send no token): the
    public stream, with the operation in the query string."""
    game_id, _ = await new_game(api, "http-get", 1, [], seatCount=3)
    variables = f'{{"gameId": "{game_id}", "afterSeq": 0}}'
    async with (
        streaming_client(server.base_url) as http,
        http.stream(
            "GET",
            "/graphql",
            params={"query": SUBSCRIBE_EVENTS, "variables": variables},
            headers={"accept": "text/event-stream"},
        ) as r,
    ):
        assert r.headers["content-type"].startswith("text/event-stream")
        reader = SSEReader()
        async for text in r.aiter_text():
            items = [i for i in reader.feed(text) if i.kind == "result"]
            if items:
                assert items[0].result is not None
                event = items[0].result["data"]["gameEvents"]
                assert (event["seq"], event["type"]) == (1, "GameCreated")
                break


# ------------------------------------------------------------ stalled streams

SEND_TIMEOUT = 2  # MMK_WS_SEND_TIMEOUT: HTTP responses have the WebSockets' timeout
# Each event's data seven times over: a finished 8-bot game's replay is then
# some 300 KB or more, far more than the kernel buffers for a client that does not read.
BULKY = (
    "subscription($gameId: ID!) { gameEvents(gameId: $gameId, afterSeq: 0) { seq "
    + " ".join(f"d{i}: data" for i in range(7))
    + " } }"
)


async def test_a_stream_whose_client_stops_reading_is_dropped(tmp_path: Path) -> None:
    """The trial's SSE and multipart clients that stopped reading sat 40-65 s
    with 290-430 KB queued and were never closed. Now the response is
    aborted once its writes are blocked for the send timeout, and its
    subscription and bus subscription end (docs/decisions/0052)."""
    env = {
        **bots_only_env(),
        "MMK_WS_SEND_TIMEOUT": str(SEND_TIMEOUT),
        "MMK_CONNECTION_LOG_INTERVAL": "60",
        "MMK_RATE_QUERY_COST_IP": "0",
        "MMK_RATE_QUERY_COST_TOKEN": "0",
    }
    with own_server(tmp_path, f"sqlite:///{tmp_path}/stalled.sqlite3", **env) as (srv, _):
        async with httpx.AsyncClient(base_url=srv.base_url, timeout=10, trust_env=False) as http:
            api = Api(http)
            game_id, host = await bots_game(api, "stalled")
            await api.start(host, game_id)
            deadline = time.monotonic() + 30
            while (await api.game(game_id))["status"] != "FINISHED":
                assert time.monotonic() < deadline, "the bots-only game does not end"
                await asyncio.sleep(0.1)
            operation = {"query": BULKY, "variables": {"gameId": game_id}}
            before = (await metric(http, *GAUGE), await metric(http, "mmk_bus_subscribers"))
            stuck = [StuckStream(srv.base_url, ACCEPT[t], operation) for t in HTTP_TRANSPORTS]
            try:
                # Both streaming: the drop comes SEND_TIMEOUT after their writes block.
                await until(http, (before[0] + len(stuck), before[1] + len(stuck)), 10)
                await until(http, before, SEND_TIMEOUT + 20)
                # Others are served as before.
                async with streaming_client(srv.base_url) as streams:
                    sub = await http_subscribe_events(streams, SSE, game_id, None)
                    events: list[dict[str, Any]] = []
                    await read_until(sub, events)
                    await assert_ended(sub)
            finally:
                for s in stuck:
                    s.close()
    assert_no_leak(srv)
    lines = [r for r in log_records(srv) if "client not reading" in r["message"]]
    assert len(lines) == 1, lines  # the second held back (MMK_CONNECTION_LOG_INTERVAL)


async def until(http: httpx.AsyncClient, counts: tuple[float, float], within: float) -> None:
    """Waits for the open subscriptions and bus subscribers to be ``counts``."""
    deadline = time.monotonic() + within
    while (
        now := (await metric(http, *GAUGE), await metric(http, "mmk_bus_subscribers"))
    ) != counts:
        assert time.monotonic() < deadline, f"subscriptions, bus subscribers: {now}, not {counts}"
        await asyncio.sleep(0.05)
