"""The rematch offer on live streams, on a real ``mmk serve`` and a real
WebSocket (issue #15 part 6, docs/decisions/0048): a ``gameEvents``
subscription with ``awaitRematch`` stays open after ``GameEnded`` and ends
with ``RematchOffered``; one without it ends with ``GameEnded`` as before."""

from __future__ import annotations

import random
from typing import Any

import pytest

from tests.e2e.client import Api
from tests.e2e.conftest import Server
from tests.e2e.play import (
    assert_complete,
    assert_ended,
    assert_quiet,
    autoplay,
    event_of,
    new_game,
    read_until,
    subscribe_events,
)
from tests.e2e.wsclient import LEGACY_WS, TRANSPORT_WS, ws_connection

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(90)]

AWAITING = """subscription($gameId: ID!, $afterSeq: Int!) {
  gameEvents(gameId: $gameId, afterSeq: $afterSeq, awaitRematch: true) {
    gameId seq type data ... on RematchOffered { newGameId } } }"""
REMATCH = """mutation($gameId: ID!) { rematch(gameId: $gameId) {
  __typename ... on Refusal { code message } ... on GameChange { gameId } } }"""


@pytest.mark.parametrize("protocol", [TRANSPORT_WS, LEGACY_WS])
async def test_a_stream_awaiting_the_rematch_carries_the_offer(
    api: Api, server: Server, protocol: str
) -> None:
    game_id, (ann,) = await new_game(api, f"offer-{protocol}", 1, ["GREEDY", "GREEDY"])
    async with (
        ws_connection(server.ws_url, protocol, ann.token) as ws,
        ws_connection(server.ws_url, protocol) as watcher,
    ):
        awaiting = await ws.subscribe(AWAITING, {"gameId": game_id, "afterSeq": 0})
        plain = await subscribe_events(watcher, game_id)
        await api.start(ann, game_id)
        finished = await autoplay(api, ann, 0, game_id, random.Random(6))
        heard: list[dict[str, Any]] = []
        await read_until(awaiting, heard)  # through GameEnded
        await read_until(plain, [])
        await assert_ended(plain)  # as before: the end of the game ends it
        await assert_quiet(awaiting)  # still open, nothing more
        assert not awaiting.done
        change = await api.ok("rematch", REMATCH, {"gameId": game_id}, ann.token)
        offer = event_of(await awaiting.next(10))
        assert offer["type"] == "RematchOffered" and offer["newGameId"] == change["gameId"]
        await assert_ended(awaiting)
    assert_complete([*heard, offer], finished["lastSeq"] + 1, game_id)
