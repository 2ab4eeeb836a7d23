"""Python ``gql`` (a dev dependency) as a Python client would use it, over a
real server: a person plays a whole game with two bots through gql over one
WebSocket sub-protocol (players made, the game created and started over
gql's HTTP transport; every move a mutation on the socket, answering the
``ActionRequired`` events of its own subscription), while a spectator
follows over the other sub-protocol. Both streams are gapless, end after
``GameEnded`` (gql's generator stops), agree on it, and only the seat sees
its hand. HTTP multipart through gql is tests/e2e/test_http_subscriptions.py.
"""

from __future__ import annotations

from typing import Any

import pytest
from gql import Client, GraphQLRequest
from gql.client import AsyncClientSession
from gql.transport.aiohttp import AIOHTTPTransport
from gql.transport.websockets import WebsocketsTransport

from tests.e2e.client import CHANGE, action_document
from tests.e2e.conftest import Server
from tests.e2e.play import together
from tests.stream_policy import ACTION_REQUIRED, action_for

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(90)]

APOLLO = WebsocketsTransport.APOLLO_SUBPROTOCOL  # graphql-ws (legacy)
TRANSPORT_WS = WebsocketsTransport.GRAPHQLWS_SUBPROTOCOL  # graphql-transport-ws
STREAM = f"""subscription($gameId: ID!) {{ gameEvents(gameId: $gameId, afterSeq: 0) {{
  __typename seq
  ... on GameStarted {{ hand {{ id }} }}
  ... on GameEnded {{ winners scores }}
  {ACTION_REQUIRED}
}} }}"""


def _ws(server: Server, protocol: str, token: str | None) -> WebsocketsTransport:
    payload = {} if token is None else {"authorization": f"Bearer {token}"}
    return WebsocketsTransport(url=server.ws_url, subprotocols=[protocol], init_payload=payload)


def _http(server: Server, token: str | None = None) -> AIOHTTPTransport:
    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
    return AIOHTTPTransport(url=f"{server.base_url}/graphql", headers=headers)


async def _run(session: AsyncClientSession, query: str, **variables: Any) -> dict[str, Any]:
    result: dict[str, Any] = await session.execute(GraphQLRequest(query, variable_values=variables))
    return result


async def _changed(session: AsyncClientSession, query: str, **variables: Any) -> dict[str, Any]:
    (change,) = (await _run(session, query, **variables)).values()
    assert change["__typename"] == "GameChange", change
    return dict(change)


async def _lobby(server: Server) -> tuple[str, str]:
    """A person (token) hosting a 3-seat game with two bots, over gql's HTTP."""
    async with Client(transport=_http(server)) as anonymous:
        made = await _run(
            anonymous,
            'mutation { createPlayer(name: "gql") { ... on NewPlayer { token } } }',
        )
    token = made["createPlayer"]["token"]
    async with Client(transport=_http(server, token)) as host:
        create = (
            f"mutation($input: CreateGameInput!) {{ createGame(input: $input) {{ {CHANGE} }} }}"
        )
        created = await _changed(
            host, create, input={"seatCount": 3, "seed": "gql-e2e", "practice": True}
        )
        game_id = str(created["gameId"])
        add = "mutation($g: ID!, $s: BotStrategy!) { addBot(gameId: $g, strategy: $s) { %s } }"
        for strategy in ("GREEDY", "RANDOM"):
            await _changed(host, add % CHANGE, g=game_id, s=strategy)
    return token, game_id


async def _follow(
    session: AsyncClientSession, game_id: str, seat: int | None
) -> tuple[list[dict[str, Any]], int]:
    """The whole stream, to gql's end of it; a seat answers what it is asked."""
    events: list[dict[str, Any]] = []
    moves = 0
    request = GraphQLRequest(STREAM, variable_values={"gameId": game_id})
    async for data in session.subscribe(request):
        event = data["gameEvents"]
        events.append(event)
        if event["__typename"] == "GameStarted":
            assert (event["hand"] is not None) == (seat is not None)
        if event["__typename"] == "ActionRequired":
            own = event["seat"] == seat
            assert (event["hand"] is not None) == own, (seat, event)
            if own:
                mutation, args = action_for(event["choices"])
                await _changed(session, action_document(mutation, args), gameId=game_id, **args)
                moves += 1
    return events, moves


@pytest.mark.parametrize(
    ("seat_protocol", "watcher_protocol"), [(TRANSPORT_WS, APOLLO), (APOLLO, TRANSPORT_WS)]
)
async def test_a_whole_game_through_gql_over_both_websocket_protocols(
    server: Server, seat_protocol: str, watcher_protocol: str
) -> None:
    token, game_id = await _lobby(server)
    async with (
        Client(transport=_ws(server, seat_protocol, token)) as seat,
        Client(transport=_ws(server, watcher_protocol, None)) as watcher,
    ):

        async def start() -> None:
            await _changed(
                seat, f"mutation($g: ID!) {{ startGame(gameId: $g) {{ {CHANGE} }} }}", g=game_id
            )

        (played, moves), (watched, _), _ = await together(
            _follow(seat, game_id, 0), _follow(watcher, game_id, None), start()
        )
    for events in (played, watched):
        assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
        assert events[-1]["__typename"] == "GameEnded"
    assert played[-1] == watched[-1] and moves > 5
    async with Client(transport=_http(server, token)) as reader:
        game = await _run(
            reader, "query($g: ID!) { game(id: $g) { ... on Game { status lastSeq } } }", g=game_id
        )
    assert game["game"] == {"status": "FINISHED", "lastSeq": len(played)}
