"""Turn deadlines on two instances (PostgreSQL + Redis, docs/decisions/0046):
the instance that started the game is killed mid-wait; the other fires every
deadline after it, exactly once (a gapless log, one ``TurnTimedOut`` per
wait, never before its deadline)."""

from __future__ import annotations

import asyncio
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.client import Api
from tests.e2e.cluster import cluster, fresh_backend
from tests.e2e.play import new_game

pytestmark = [pytest.mark.e2e, pytest.mark.services, pytest.mark.timeout(120)]

TURN = 2  # seconds
EXPIRIES = 3  # deadlines B must fire after A died
LOG = """query($g: ID!) { gameEvents(gameId: $g, afterSeq: 0, first: 100) {
  __typename ... on GameEventPage { events { seq at type data } } } }"""


async def _log(api: Api, game_id: str) -> list[dict[str, Any]]:
    page = await api.ok("gameEvents", LOG, {"g": game_id})
    events: list[dict[str, Any]] = page["events"]
    return events


async def test_deadlines_fire_once_on_the_instance_that_survives(
    database_url: str, redis_url: str, tmp_path: Path
) -> None:
    with (
        fresh_backend(database_url, redis_url, "clocks-kill") as backend,
        cluster(backend, tmp_path) as (a, b),
    ):
        async with (
            httpx.AsyncClient(base_url=a.base_url, timeout=15, trust_env=False) as ha,
            httpx.AsyncClient(base_url=b.base_url, timeout=15, trust_env=False) as hb,
        ):
            api_a, api_b = Api(ha), Api(hb)
            game_id, people = await new_game(
                api_a, "clocks-kill", 3, [], turnSeconds=TURN, timeoutsToTakeover=10, ratSeat=0
            )
            await api_a.start(people[0], game_id)
            a.kill()  # mid-wait: nobody plays; only B is left to fire
            killed_at = len(await _log(api_b, game_id))
            limit = time.monotonic() + 60
            while True:
                log = await _log(api_b, game_id)
                fired = [e for e in log[killed_at:] if e["type"] == "TurnTimedOut"]
                if len(fired) >= EXPIRIES:
                    break
                assert time.monotonic() < limit, f"{len(fired)} timeouts after the kill"
                await asyncio.sleep(0.5)
    assert [e["seq"] for e in log] == list(range(1, len(log) + 1))
    waits: list[dict[str, Any]] = []  # the ActionRequired of each wait, in order
    for e in log:
        if e["type"] == "ActionRequired":
            waits.append(e)
        elif e["type"] == "TurnTimedOut":
            wait = waits[-1]
            assert e["data"]["seat"] == wait["data"]["seat"]
            assert datetime.fromisoformat(e["at"]) >= datetime.fromisoformat(
                wait["data"]["deadline"]
            )
            assert not wait.get("fired"), f"a second timeout of one wait: {e}"
            wait["fired"] = True
