"""Turn clocks on a real ``mmk serve`` (issue #15, docs/decisions/0046): in
a 3-seat game with short turns one player closes the app (her WebSocket
drops); the others see ``TurnTimedOut`` then ``SeatTakenOver`` on their
live streams; she reconnects with ``afterSeq``, reads what she missed,
reclaims the seat and plays on to the end."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import pytest

from tests.e2e.client import CHANGE, Api, Person
from tests.e2e.conftest import Server
from tests.e2e.play import (
    assert_complete,
    assert_ended,
    autoplay,
    new_game,
    read_until,
    subscribe_events,
    together,
)
from tests.e2e.wsclient import LEGACY_WS, TRANSPORT_WS, ws_connection

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]

TURN = 2  # seconds: the players who play act within it (they poll every POLL)
RECLAIM = f"mutation($gameId: ID!) {{ reclaimSeat(gameId: $gameId) {{ {CHANGE} }} }}"


async def _away_then_back(server: Server, api: Api, cat: Person, game_id: str, seat: int) -> int:
    """Cat follows the game on her stream, then closes the app (her WebSocket
    goes away mid-game). She comes back on a new connection with ``afterSeq``
    = the last seq she had, reads what she missed until a bot took her seat,
    reclaims it and plays on; returns the seq she left at."""
    async with ws_connection(server.ws_url, TRANSPORT_WS, cat.token) as ws:
        op = await subscribe_events(ws, game_id)
        had: list[dict[str, Any]] = []
        await read_until(op, had, lambda e: e["type"] == "ActionRequired")
        await ws.abort()  # the app is gone, without a goodbye
    left_at: int = had[-1]["seq"]
    await asyncio.sleep(TURN / 2)
    missed: list[dict[str, Any]] = []
    async with ws_connection(server.ws_url, LEGACY_WS, cat.token) as ws:
        op = await subscribe_events(ws, game_id, left_at)
        await read_until(op, missed, lambda e: e["type"] == "SeatTakenOver", silence=4 * TURN)
    assert [e["seq"] for e in missed] == list(range(left_at + 1, missed[-1]["seq"] + 1))
    timeouts = [e for e in missed if e["type"] == "TurnTimedOut"]
    assert [e["data"]["seat"] for e in timeouts] == [seat, seat]  # 2 in a row, then the bot
    taken = missed[-1]  # played by MMK_TAKEOVER_BOT from now on
    assert taken["data"]["seat"] == seat and taken["data"]["strategy"] == "expert"
    assert taken["seq"] > timeouts[-1]["seq"]
    waits = [e for e in missed if e["type"] == "ActionRequired" and e["data"]["seat"] == seat]
    assert all("deadline" in e["data"] for e in waits[:2])  # her waits carried deadlines
    await api.ok("reclaimSeat", RECLAIM, {"gameId": game_id}, cat.token)
    return left_at


async def test_a_player_who_stops_is_timed_out_taken_over_and_comes_back(
    server: Server, api: Api
) -> None:
    game_id, (ann, bob, cat) = await new_game(
        api, "clocks", 3, [], turnSeconds=TURN, timeoutsToTakeover=2, ratSeat=0
    )
    rng = random.Random(15)
    watched: list[dict[str, Any]] = []  # Ann's live stream, the whole game

    async def cat_plays() -> dict[str, Any]:
        await _away_then_back(server, api, cat, game_id, 2)
        return await autoplay(api, cat, 2, game_id, rng)

    async with ws_connection(server.ws_url, TRANSPORT_WS, ann.token) as ws:
        stream = await subscribe_events(ws, game_id)
        await api.start(ann, game_id)
        finished = await together(
            autoplay(api, ann, 0, game_id, rng),
            autoplay(api, bob, 1, game_id, rng),
            cat_plays(),
            read_until(stream, watched, silence=4 * TURN),
            timeout=100,
        )
        await assert_ended(stream)
    assert all(g["status"] == "FINISHED" for g in finished[:3])
    assert_complete(watched, finished[0]["lastSeq"], game_id)  # live, gapless
    kinds = [e["type"] for e in watched]
    assert kinds.index("TurnTimedOut") < kinds.index("SeatTakenOver") < kinds.index("SeatReclaimed")
    reclaimed = kinds.index("SeatReclaimed")
    assert not any(  # after coming back, Cat played herself (no more takeovers)
        e["type"] == "SeatTakenOver" for e in watched[reclaimed:]
    )
    assert kinds[-1] == "GameEnded"
    assert watched == await api.events(game_id, ann.token)  # the stream is the log
