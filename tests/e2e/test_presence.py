"""Seat presence end to end (docs/decisions/0047), real servers, WebSocket
clients, the grace lowered to 1 s: a player whose connection drops is
announced gone to the others after the grace, a quick reconnect is
announced to nobody; across two instances (PostgreSQL + Redis), the
players of an instance killed outright are announced gone on the other
once their entries expire."""

from __future__ import annotations

import asyncio
import time
from contextlib import suppress
from pathlib import Path

import httpx
import pytest

from tests.e2e.client import Api
from tests.e2e.cluster import cluster, fresh_backend
from tests.e2e.own_server import own_server
from tests.e2e.play import new_game, subscribe_events
from tests.e2e.wsclient import TRANSPORT_WS, GraphQLWebSocket, Operation, ws_connection

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(90)]

FAST = {"MMK_PRESENCE_GRACE": "1", "MMK_PRESENCE_HEARTBEAT": "1"}
PRESENCE = "subscription($id: ID!) { seatPresence(gameId: $id) { seat connected } }"
SEATS = "query($id: ID!) { game(id: $id) { ... on Game { table { seats { connected } } } } }"
WAIT = 15.0  # seconds for an announcement (grace 1 s, heartbeat 1 s, entry ttl 3 s)


async def changes(op: Operation, count: int, timeout: float = WAIT) -> list[tuple[int, bool]]:
    out: list[tuple[int, bool]] = []
    deadline = time.monotonic() + timeout
    while len(out) < count:
        item = await op.next(max(0.01, deadline - time.monotonic()))
        p = item["data"]["seatPresence"]
        out.append((p["seat"], p["connected"]))
    return out


async def silent(op: Operation, seconds: float) -> None:
    with pytest.raises(TimeoutError):
        got = await op.next(seconds)
        raise AssertionError(f"unexpected: {got}")


async def connected(api: Api, game_id: str) -> list[bool]:
    data = await api.data(SEATS, {"id": game_id})
    return [s["connected"] for s in data["game"]["table"]["seats"]]


async def _following(ws: GraphQLWebSocket, game_id: str) -> Operation:
    op = await subscribe_events(ws, game_id)
    await op.next(WAIT)  # subscribed: the log is coming
    return op


async def test_a_dropped_player_is_announced_after_the_grace_a_quick_return_not(
    tmp_path: Path,
) -> None:
    with own_server(tmp_path, f"sqlite:///{tmp_path}/mmk.sqlite3", **FAST) as (srv, _):
        async with httpx.AsyncClient(base_url=srv.base_url, timeout=10, trust_env=False) as h:
            api = Api(h)
            game_id, (ann, bob, cat) = await new_game(api, "presence", 3, [])
            await api.start(ann, game_id)
            async with (
                ws_connection(srv.ws_url, TRANSPORT_WS, ann.token) as ann_ws,
                ws_connection(srv.ws_url, TRANSPORT_WS, bob.token) as bob_ws,
            ):
                await _following(ann_ws, game_id)
                watch = await ann_ws.subscribe(PRESENCE, {"id": game_id})
                assert sorted(await changes(watch, 3)) == [(0, True), (1, False), (2, False)]
                await _following(bob_ws, game_id)
                cat_ws = GraphQLWebSocket(srv.ws_url, TRANSPORT_WS)
                await cat_ws.connect({"authorization": f"Bearer {cat.token}"})
                await _following(cat_ws, game_id)
                assert sorted(await changes(watch, 2)) == [(1, True), (2, True)]
                assert await connected(api, game_id) == [True, True, True]

                await cat_ws.abort()  # Cat's phone loses its network
                assert await changes(watch, 1) == [(2, False)]
                assert await connected(api, game_id) == [True, True, False]

                await bob_ws.close()  # Bob switches networks and is back at once
                async with ws_connection(srv.ws_url, TRANSPORT_WS, bob.token) as again:
                    await _following(again, game_id)
                    await silent(watch, 3.0)  # grace and heartbeats passed: nothing
                    assert await connected(api, game_id) == [True, True, False]
                events = await api.events(game_id)
                assert all("Presence" not in e["type"] for e in events)


@pytest.mark.services
async def test_the_players_of_a_killed_instance_are_announced_on_the_other(
    database_url: str, redis_url: str, tmp_path: Path
) -> None:
    with (
        fresh_backend(database_url, redis_url, "presence", **FAST) as backend,
        cluster(backend, tmp_path) as (a, b),
    ):
        async with httpx.AsyncClient(base_url=a.base_url, timeout=10, trust_env=False) as h:
            api = Api(h)
            game_id, (ann, bob, _cat) = await new_game(api, "presence-pair", 3, [])
            await api.start(ann, game_id)
            async with ws_connection(a.ws_url, TRANSPORT_WS, ann.token) as ann_ws:
                await _following(ann_ws, game_id)
                watch = await ann_ws.subscribe(PRESENCE, {"id": game_id})
                assert sorted(await changes(watch, 3)) == [(0, True), (1, False), (2, False)]
                bob_ws = GraphQLWebSocket(b.ws_url, TRANSPORT_WS)
                await bob_ws.connect({"authorization": f"Bearer {bob.token}"})
                await _following(bob_ws, game_id)
                assert await changes(watch, 1) == [(1, True)]  # from B, heard on A
                b.kill()  # no cleanup: Bob's entry expires (3 heartbeats), then the grace
                assert await changes(watch, 1, timeout=WAIT) == [(1, False)]
                assert await connected(api, game_id) == [True, False, False]
                await silent(watch, 1.5)  # announced once
                await _drop(bob_ws)


async def _drop(ws: GraphQLWebSocket) -> None:
    with suppress(Exception):  # its server is gone
        await asyncio.wait_for(ws.abort(), 2)
