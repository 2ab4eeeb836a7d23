"""The transport through a real server: WebSocket authentication on both
sub-protocols, bearer tokens over HTTP, health checks and the playground."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import httpx
import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed
from websockets.typing import Subprotocol

from tests.e2e.client import GAME, Api, metric
from tests.e2e.conftest import Server
from tests.e2e.play import EVENT_TIMEOUT, POLL, event_of, new_game, subscribe_events
from tests.e2e.wsclient import (
    LEGACY_WS,
    PROTOCOLS,
    TRANSPORT_WS,
    ConnectionRejected,
    GraphQLWebSocket,
    OperationEnded,
    ws_connection,
)

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(60)]

BAD_AUTHORIZATIONS = [
    "Bearer not-a-token-of-anyone",
    "Bearer ",  # an empty token (HTTP clients refuse to send the trailing space)
    "Bearer",
    "Basic dXNlcjpwYXNz",
]
BAD_HTTP_AUTHORIZATIONS = [a for a in BAD_AUTHORIZATIONS if a == a.strip()]


# ---------------------------------------------------------------- WebSocket auth
@pytest.mark.parametrize("authorization", BAD_AUTHORIZATIONS)
async def test_graphql_transport_ws_refuses_a_bad_token_with_4403(
    server: Server, authorization: str
) -> None:
    ws = GraphQLWebSocket(server.ws_url, TRANSPORT_WS)
    with pytest.raises(ConnectionRejected) as refused:
        await ws.connect({"authorization": authorization})
    assert refused.value.code == 4403
    assert refused.value.reason, "a 4403 close says why"
    assert all('"connection_ack"' not in raw for raw in ws.raw), ws.raw


@pytest.mark.parametrize("authorization", BAD_AUTHORIZATIONS)
async def test_legacy_graphql_ws_refuses_a_bad_token_with_an_error(
    server: Server, authorization: str
) -> None:
    ws = GraphQLWebSocket(server.ws_url, LEGACY_WS)
    with pytest.raises(ConnectionRejected) as refused:
        await ws.connect({"authorization": authorization})
    frame = refused.value.frame
    assert frame is not None and frame["type"] == "connection_error", refused.value
    assert frame["payload"]["message"], frame
    assert "Traceback" not in str(frame)
    assert await ws.wait_closed(EVENT_TIMEOUT) is not None  # and the server hangs up
    assert all('"connection_ack"' not in raw for raw in ws.raw), ws.raw


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_a_good_token_subscribes_as_its_seat(server: Server, api: Api, protocol: str) -> None:
    game_id, (host,) = await new_game(api, f"auth-{protocol}", 1, ["GREEDY", "RANDOM"])
    await api.start(host, game_id)
    hand = {c["id"] for c in (await api.game(game_id, host.token))["viewer"]["hand"]}
    async with ws_connection(server.ws_url, protocol, host.token) as ws:
        assert ws.frames[0]["type"] == "connection_ack"
        started = await _game_started(ws, game_id)
        # The host's own projection: its starting hand, which it still holds
        # (cards leave a hand only by its owner's moves, and it has made none;
        # a bot's Stinky may have added some).
        assert len(started["data"]["hand"]) == 10
        assert set(started["data"]["hand"]) <= hand
        if protocol == TRANSPORT_WS:
            assert (await ws.ping())["type"] == "pong"
    async with ws_connection(server.ws_url, protocol) as anonymous:
        started = await _game_started(anonymous, game_id)
        assert "hand" not in started["data"], started  # the public projection


# connection_init payloads as clients send them (Apollo Client, graphql-ws,
# GraphiQL's Headers pane); "<t>" is the token.
TOKEN_SHAPES = {
    "authorization": {"authorization": "Bearer <t>"},
    "Authorization": {"Authorization": "Bearer <t>"},
    "headers.Authorization": {"headers": {"Authorization": "Bearer <t>"}},
    "headers.authorization": {"headers": {"authorization": "Bearer <t>"}},
    "token": {"token": "<t>"},
    "authToken": {"authToken": "<t>"},
}
# The token where the server does not read it: refused, never a spectator.
MISPLACED = {
    "nested payload": {"payload": {"headers": {"Authorization": "Bearer <t>"}}},
    "access_token": {"access_token": "<t>"},
    "not a string": {"token": ["<t>"]},
}


def _with_token(shape: Any, token: str) -> Any:
    return json.loads(json.dumps(shape).replace("<t>", token))


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_the_token_is_read_where_clients_put_it(
    server: Server, api: Api, protocol: str
) -> None:
    game_id, (host,) = await new_game(api, f"shapes-{protocol}", 1, ["GREEDY", "RANDOM"])
    await api.start(host, game_id)
    for name, shape in TOKEN_SHAPES.items():
        ws = GraphQLWebSocket(server.ws_url, protocol)
        await ws.connect(_with_token(shape, host.token))
        try:
            started = await _game_started(ws, game_id)
            assert len(started["data"]["hand"]) == 10, name  # the seat's own projection
        finally:
            await ws.close()


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("shape", MISPLACED.values(), ids=MISPLACED.keys())
async def test_a_misplaced_token_is_refused_with_a_reason(
    server: Server, api: Api, protocol: str, shape: Any
) -> None:
    ann = await api.new_person(f"misplaced-{protocol}")
    ws = GraphQLWebSocket(server.ws_url, protocol)
    with pytest.raises(ConnectionRejected) as refused:
        await ws.connect(_with_token(shape, ann.token))
    if protocol == TRANSPORT_WS:
        assert refused.value.code == 4403
        reason = refused.value.reason
    else:
        frame = refused.value.frame
        assert frame is not None and frame["type"] == "connection_error", refused.value
        reason = frame["payload"]["message"]
    assert "connection_init" in reason, reason
    assert ann.token not in reason and ann.token not in "".join(ws.raw)
    assert all('"connection_ack"' not in raw for raw in ws.raw), ws.raw


async def test_an_unknown_token_closes_with_its_reason(server: Server) -> None:
    ws = GraphQLWebSocket(server.ws_url, TRANSPORT_WS)
    with pytest.raises(ConnectionRejected) as refused:
        await ws.connect({"token": "not-a-token-of-anyone"})
    assert (refused.value.code, refused.value.reason) == (4403, "unknown token")


async def _game_started(ws: GraphQLWebSocket, game_id: str) -> dict[str, Any]:
    op = await subscribe_events(ws, game_id)
    while True:
        event = event_of(await op.next(EVENT_TIMEOUT))
        if event["type"] == "GameStarted":
            await op.stop()
            return event


async def test_subscribing_before_connection_init_is_refused(server: Server) -> None:
    """graphql-transport-ws: no operation before the connection is acknowledged."""
    async with connect(server.ws_url, subprotocols=[Subprotocol(TRANSPORT_WS)], proxy=None) as ws:
        query = "subscription { lobby { gameId } }"
        await ws.send(json.dumps({"type": "subscribe", "id": "1", "payload": {"query": query}}))
        with pytest.raises(ConnectionClosed):
            await asyncio.wait_for(ws.recv(), EVENT_TIMEOUT)
        assert ws.close_code == 4401


async def test_a_bad_token_subscription_never_reaches_the_game(server: Server, api: Api) -> None:
    """Refused at connection_init: no operation can run on the socket."""
    game_id, (host,) = await new_game(api, "auth-bad-sub", 1, ["GREEDY", "RANDOM"])
    await api.start(host, game_id)
    for protocol in PROTOCOLS:
        ws = GraphQLWebSocket(server.ws_url, protocol)
        with pytest.raises(ConnectionRejected):
            await ws.connect({"authorization": "Bearer forged"})
        assert all(game_id not in raw for raw in ws.raw)


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_a_refused_subscription_gets_a_coded_error_and_ends(
    server: Server, api: Api, protocol: str
) -> None:
    game_id, (host,) = await new_game(api, f"sub-errors-{protocol}", 1, ["GREEDY", "RANDOM"])
    # Either spelling of the payload key carries the token.
    async with ws_connection(
        server.ws_url, protocol, payload={"Authorization": f"Bearer {host.token}"}
    ) as ws:
        for gid, after, code in (("no-such-game", 0, "NOT_FOUND"), (game_id, -1, "BAD_INPUT")):
            op = await subscribe_events(ws, gid, after)
            payload = await op.next(EVENT_TIMEOUT)
            assert payload["data"] is None, payload
            assert [e["extensions"]["code"] for e in payload["errors"]] == [code]
            with pytest.raises(OperationEnded):  # completed by the server
                await op.next(EVENT_TIMEOUT)
        # The connection is still good for more.
        op = await subscribe_events(ws, game_id)
        first = event_of(await op.next(EVENT_TIMEOUT))
        assert first["seq"] == 1


# ---------------------------------------------------------------- HTTP auth
@pytest.mark.parametrize("authorization", BAD_HTTP_AUTHORIZATIONS)
async def test_http_with_a_bad_bearer_token_is_unauthenticated(
    api: Api, http: httpx.AsyncClient, authorization: str
) -> None:
    game_id, _ = await new_game(api, "auth-http", 1, ["GREEDY", "RANDOM"])
    for query, variables in (("{ me { player { id } } }", {}), (GAME, {"id": game_id})):
        r = await http.post(
            "/graphql",
            json={"query": query, "variables": variables},
            headers={"Authorization": authorization},
        )
        assert r.status_code == 200, r.text
        body = r.json()
        assert not any((body["data"] or {}).values()), body  # me is nullable: {"me": null}
        codes = [e["extensions"]["code"] for e in body["errors"]]
        assert codes == ["UNAUTHENTICATED"], body
        assert "Traceback" not in r.text


async def test_http_without_a_token_is_anonymous(api: Api) -> None:
    body = await api.raw("{ me { player { id } } cardCatalog { id } }")
    assert "errors" not in body and body["data"]["me"] is None, body
    assert len(body["data"]["cardCatalog"]) > 0
    game_id, _ = await new_game(api, "auth-anonymous", 1, ["GREEDY", "RANDOM"])
    game = await api.game(game_id)  # a spectator may look
    assert game["viewer"] is None


async def test_http_with_a_good_token_is_that_player(api: Api) -> None:
    ann = await api.new_person("auth-good")
    me = await api.data("{ me { player { id name } } }", token=ann.token)
    assert me["me"]["player"] == {"id": ann.id, "name": ann.name}


# ---------------------------------------------------------------- endpoints
async def test_health_checks(http: httpx.AsyncClient) -> None:
    r = await http.get("/healthz")
    assert r.status_code == 200, r.text
    assert r.json()["status"] == "ok"
    r = await http.get("/readyz")
    assert r.status_code == 200, r.text
    assert r.json()["database"] == "up"


async def test_a_browser_gets_the_graphiql_playground(http: httpx.AsyncClient) -> None:
    r = await http.get("/graphql", headers={"Accept": "text/html"})
    assert r.status_code == 200, r.text
    assert r.headers["content-type"].startswith("text/html")
    assert "graphiql" in r.text.lower()


async def test_an_oversized_body_is_refused(http: httpx.AsyncClient) -> None:
    r = await http.post(
        "/graphql",
        content=b'{"query": "' + b" " * (70 * 1024) + b'{ cardCatalog { id } }"}',
        headers={"content-type": "application/json"},
    )
    assert r.status_code == 413, r.text
    assert r.json()["errors"][0]["extensions"]["code"] == "BAD_INPUT"


async def test_metrics_in_prometheus_text_format(http: httpx.AsyncClient) -> None:
    r = await http.get("/metrics")
    assert r.status_code == 200, r.text
    assert r.headers["content-type"].startswith("text/plain")
    assert "# TYPE mmk_bus_subscribers gauge" in r.text


async def _until_subscribers(http: httpx.AsyncClient, want: float) -> None:
    deadline = time.monotonic() + EVENT_TIMEOUT
    while (got := await metric(http, "mmk_bus_subscribers", default=None)) != want:
        assert time.monotonic() < deadline, f"{got} bus subscribers, not {want}"
        await asyncio.sleep(POLL)


async def test_a_dropped_connection_releases_its_subscriptions(
    server: Server, api: Api, http: httpx.AsyncClient
) -> None:
    """The server lets go of a subscription's bus channel when its socket is
    closed or just drops (a phone losing its network), on both protocols."""
    game_id, (host,) = await new_game(api, "release", 1, ["GREEDY", "RANDOM"])
    await api.start(host, game_id)
    await _until_subscribers(http, 0)  # tests run one at a time; all sockets closed
    for protocol in PROTOCOLS:
        for how in ("close", "abort"):
            ws = GraphQLWebSocket(server.ws_url, protocol)
            await ws.connect({"authorization": f"Bearer {host.token}"})
            await _game_started(ws, game_id)  # stops that subscription again
            await _until_subscribers(http, 0)
            await subscribe_events(ws, game_id)
            await subscribe_events(ws, game_id, after_seq=3)
            await ws.subscribe("subscription { lobby { gameId } }")
            await _until_subscribers(http, 3)
            await (ws.abort() if how == "abort" else ws.close())
            await _until_subscribers(http, 0)
