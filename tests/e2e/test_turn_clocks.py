"""Turn clocks on a real ``mmk serve`` (issue #15, docs/decisions/0046): in
a 3-seat game with short turns one player stops playing; the others see
``TurnTimedOut`` then ``SeatTakenOver``; the player comes back, reads what
was missed with ``afterSeq``, reclaims the seat and plays on to the end."""

from __future__ import annotations

import asyncio
import random
import time
from typing import Any

import pytest

from tests.e2e.client import CHANGE, Api, Person
from tests.e2e.play import assert_complete, autoplay, new_game, together

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]

TURN = 2  # seconds: the players who play act within it (they poll every POLL)
RECLAIM = f"mutation($gameId: ID!) {{ reclaimSeat(gameId: $gameId) {{ {CHANGE} }} }}"


async def _events_after(api: Api, person: Person, game_id: str, after: int) -> list[dict[str, Any]]:
    page = await api.ok(
        "gameEvents",
        "query($g: ID!, $a: Int!) { gameEvents(gameId: $g, afterSeq: $a, first: 100) {"
        " __typename ... on GameEventPage { events { seq type data } } } }",
        {"g": game_id, "a": after},
        person.token,
    )
    events: list[dict[str, Any]] = page["events"]
    return events


async def _away_then_back(api: Api, cat: Person, game_id: str, seat: int) -> int:
    """Cat stops playing; once a bot took her seat she reads what she missed
    (``afterSeq``), reclaims it and plays on; returns the seq she left at."""
    left_at: int = (await api.game(game_id, cat.token))["lastSeq"]
    seen = left_at
    missed: list[dict[str, Any]] = []
    limit = time.monotonic() + 60
    while not any(e["type"] == "SeatTakenOver" for e in missed):
        assert time.monotonic() < limit, "no takeover"
        await asyncio.sleep(0.2)
        new = await _events_after(api, cat, game_id, seen)
        missed += new
        seen = new[-1]["seq"] if new else seen
    assert [e["seq"] for e in missed] == list(range(left_at + 1, seen + 1))  # nothing missed
    timeouts = [e for e in missed if e["type"] == "TurnTimedOut"]
    assert [e["data"]["seat"] for e in timeouts] == [seat, seat]  # 2 in a row, then the bot
    taken = next(e for e in missed if e["type"] == "SeatTakenOver")
    assert taken["data"]["seat"] == seat and taken["data"]["strategy"] == "greedy"
    assert taken["seq"] > timeouts[-1]["seq"]
    waits = [e for e in missed if e["type"] == "ActionRequired" and e["data"]["seat"] == seat]
    assert all("deadline" in e["data"] for e in waits[:2])  # her waits carried deadlines
    await api.ok("reclaimSeat", RECLAIM, {"gameId": game_id}, cat.token)
    return left_at


async def test_a_player_who_stops_is_timed_out_taken_over_and_comes_back(api: Api) -> None:
    game_id, (ann, bob, cat) = await new_game(
        api, "clocks", 3, [], turnSeconds=TURN, timeoutsToTakeover=2, ratSeat=0
    )
    await api.start(ann, game_id)
    rng = random.Random(15)

    async def cat_plays() -> dict[str, Any]:
        await _away_then_back(api, cat, game_id, 2)
        return await autoplay(api, cat, 2, game_id, rng)

    finished = await together(
        autoplay(api, ann, 0, game_id, rng),
        autoplay(api, bob, 1, game_id, rng),
        cat_plays(),
        timeout=100,
    )
    assert all(g["status"] == "FINISHED" for g in finished)
    log = await api.events(game_id, ann.token)
    assert_complete(log, finished[0]["lastSeq"], game_id)
    kinds = [e["type"] for e in log]
    assert kinds.index("TurnTimedOut") < kinds.index("SeatTakenOver") < kinds.index("SeatReclaimed")
    reclaimed = kinds.index("SeatReclaimed")
    assert not any(  # after coming back, Cat played herself (no more takeovers)
        e["type"] == "SeatTakenOver" for e in log[reclaimed:]
    )
    assert kinds[-1] == "GameEnded"
