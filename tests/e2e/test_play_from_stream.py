"""Over a real server, real HTTP and real WebSockets: two people and a bot
play a whole game, each person from its own ``gameEvents`` stream alone
(one per WebSocket sub-protocol): after ``startGame`` nobody asks for the
``game``; each answers the ``ActionRequired`` events addressed to its seat
(tests/stream_policy.py) until ``GameEnded``."""

from __future__ import annotations

from typing import Any

import pytest

from tests.e2e.client import Api, Person, action_document
from tests.e2e.conftest import Server
from tests.e2e.play import new_game, together
from tests.e2e.wsclient import LEGACY_WS, TRANSPORT_WS, GraphQLWebSocket, ws_connection
from tests.stream_policy import ACTION_REQUIRED, action_for

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(90)]

STREAM = f"""subscription($gameId: ID!) {{ gameEvents(gameId: $gameId, afterSeq: 0) {{
  __typename seq
  ... on GameEnded {{ winners scores }}
  {ACTION_REQUIRED}
}} }}"""
SILENCE = 20.0  # seconds without an event before a seat gives up


async def _play_seat(
    api: Api, ws: GraphQLWebSocket, person: Person, seat: int, game_id: str
) -> dict[str, Any]:
    op = await ws.subscribe(STREAM, {"gameId": game_id})
    moves = 0
    while True:
        payload = await op.next(SILENCE)
        assert not payload.get("errors"), payload
        event = payload["data"]["gameEvents"]
        if event["__typename"] == "GameEnded":
            return {"moves": moves, **event}
        if event["__typename"] == "ActionRequired" and event["seat"] == seat:
            mutation, args = action_for(event["choices"])
            query = action_document(mutation, args)
            await api.ok(mutation, query, {"gameId": game_id, **args}, person.token)
            moves += 1


async def test_people_play_a_whole_game_from_their_streams_alone(server: Server, api: Api) -> None:
    game_id, (ann, bob) = await new_game(api, "stream-only", 2, ["GREEDY"])
    async with (
        ws_connection(server.ws_url, TRANSPORT_WS, ann.token) as ann_ws,
        ws_connection(server.ws_url, LEGACY_WS, bob.token) as bob_ws,
    ):
        ann_play = _play_seat(api, ann_ws, ann, 0, game_id)
        bob_play = _play_seat(api, bob_ws, bob, 1, game_id)

        async def start() -> None:
            await api.start(ann, game_id)

        ann_end, bob_end, _ = await together(ann_play, bob_play, start())
    assert (ann_end["winners"], ann_end["scores"]) == (bob_end["winners"], bob_end["scores"])
    assert ann_end["moves"] > 5 and bob_end["moves"] > 5
