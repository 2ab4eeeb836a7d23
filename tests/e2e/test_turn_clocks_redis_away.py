"""Turn deadlines with Redis away (issue #15, docs/decisions/0046): the
deadlines live in the database, so two instances keep firing them, once
each, while their Redis (a private ``redis-server``, stopped by its pid) is
gone, and the game goes on to its end (fallback moves, takeovers; once a
bot plays every seat, nobody is left to play for: the game ends as
abandoned, which the instances' sweeps also do from the database,
docs/decisions/0051). Once Redis is back, the subscriptions held through the outage catch
up (the buses' outboxes and resync, 0010) and one that left resumes with
``afterSeq``: all gapless, the log as the database has it. No instance logs
a traceback (presence heartbeats run meanwhile, 0047)."""

from __future__ import annotations

import asyncio
import time
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.client import EVENT_FIELDS, Api, metric
from tests.e2e.cluster import Instance, cluster, fresh_backend
from tests.e2e.play import assert_complete, new_game, read_until, subscribe_events
from tests.e2e.wsclient import TRANSPORT_WS, GraphQLWebSocket, Operation
from tests.integration.redis_support import (
    RECOVERING_TEST_TIMEOUT,
    RECOVERY_TIMEOUT,
    PrivateRedis,
    eventually,
)

pytestmark = [pytest.mark.e2e, pytest.mark.services, pytest.mark.timeout(60)]

TURN = 1  # seconds per action; nobody plays, so every wait times out
AWAY_TIMEOUTS = 2  # deadlines fired with Redis away (each a takeover: timeoutsToTakeover 1)
STEP = 10.0  # seconds for any bounded wait
FAST_SWEEPS = {
    "MMK_PRESENCE_HEARTBEAT": "1",  # presence reviews run while Redis is away too
    "MMK_ABANDON_EMPTY": "0",  # a table of bots alone ends at the next sweep...
    "MMK_ABANDON_SWEEP_INTERVAL": "1",  # ...within a second
}


@pytest.mark.timeout(RECOVERING_TEST_TIMEOUT)
async def test_deadlines_fire_once_with_redis_away_and_streams_catch_up(
    database_url: str, redis_url: str, tmp_path: Path
) -> None:
    private = PrivateRedis(tmp_path)  # ``redis_url``: skipped or failed like the others
    private.start()
    try:
        with (
            fresh_backend(database_url, private.url, "clocks-redis-away", **FAST_SWEEPS) as backend,
            cluster(backend, tmp_path) as pair,  # on exit: no traceback in either log
        ):
            await _outage_mid_wait(pair, private)
    finally:
        private.stop()


async def _outage_mid_wait(pair: list[Instance], private: PrivateRedis) -> None:
    a, b = pair
    async with (
        httpx.AsyncClient(base_url=a.base_url, timeout=STEP, trust_env=False) as ha,
        httpx.AsyncClient(base_url=b.base_url, timeout=STEP, trust_env=False) as hb,
        AsyncExitStack() as sockets,
    ):
        api_a, api_b = Api(ha), Api(hb)
        game_id, people = await new_game(
            api_a, "clocks-away", 3, [], turnSeconds=TURN, timeoutsToTakeover=1, ratSeat=0
        )
        # held through the outage: seat 0's player on A, a spectator on B;
        # seat 1's player on B leaves before it and comes back after it, on A
        held = [
            Follower(await _subscribe(sockets, a.ws_url, people[0].token, game_id)),
            Follower(await _subscribe(sockets, b.ws_url, None, game_id)),
        ]
        leaving = Follower(await _subscribe(sockets, b.ws_url, people[1].token, game_id))
        await api_a.start(people[0], game_id)
        first_wait = lambda e: e["type"] == "ActionRequired"  # noqa: E731
        for f in (*held, leaving):
            await read_until(f.op, f.events, first_wait, STEP)
        await leaving.op.client.close()

        private.stop()  # mid-wait: its deadline is a second after the start
        for http in (ha, hb):
            await eventually(partial(_ready, http, False), STEP, "/readyz: bus down")
        stopped_at = len(await api_b.events(game_id))
        started = time.monotonic()
        while True:  # the log over HTTP: from the database, not the bus
            log = await api_b.events(game_id)
            if log[-1]["type"] == "GameEnded":
                break
            assert time.monotonic() - started < 2 * STEP, f"stuck at {log[-1]} with Redis away"
            await asyncio.sleep(0.2)
        assert all(f.op.queue.empty() for f in held), "a live event with Redis away"
        kept = [await metric(h, "mmk_bus_publish_failures_total") for h in (ha, hb)]

        private.start()  # the same port, empty
        for http in (ha, hb):
            await eventually(partial(_ready, http, True), RECOVERY_TIMEOUT, "the bus up")
        for f in held:  # the outboxes, or the resync's backfill from the log
            await read_until(f.op, f.events, _ended, RECOVERY_TIMEOUT + STEP)
        last = leaving.events[-1]["seq"]
        leaving.op = await _subscribe(sockets, a.ws_url, people[1].token, game_id, last)
        await read_until(leaving.op, leaving.events, _ended, STEP)
        for http in (ha, hb):
            assert (await http.get("/healthz")).status_code == 200
            reconnects = await metric(http, "mmk_bus_reconnects_total")
            assert reconnects >= 1, f"{http.base_url}: the bus did not reconnect"
        whole = await api_a.events(game_id, None, f"{EVENT_FIELDS} at")
        logs = [await api_a.events(game_id, p.token) for p in people[:2]]

    assert sum(kept) >= 1, "nothing was published with Redis away"
    assert_complete(whole, len(whole), game_id)  # gapless, and the game ended
    assert held[0].events == logs[0]  # seat 0's log, through the outage
    assert held[1].events == [_sent(e) for e in whole]  # the spectator's
    assert leaving.events == logs[1]  # seat 1's, in two parts (afterSeq)
    _fired_once_per_wait(whole)
    away = whole[stopped_at:]  # all logged with Redis away
    assert sum(e["type"] == "TurnTimedOut" for e in away) >= AWAY_TIMEOUTS
    assert sum(e["type"] == "SeatTakenOver" for e in away) >= AWAY_TIMEOUTS
    assert away[-1]["data"]["termination"] == "abandoned"  # every seat a bot's: swept


@dataclass
class Follower:
    """A ``gameEvents`` subscription and what it got."""

    op: Operation
    events: list[dict[str, Any]] = field(default_factory=list)


async def _subscribe(
    sockets: AsyncExitStack, url: str, token: str | None, game_id: str, after: int = 0
) -> Operation:
    """``gameEvents`` after ``after`` on a new WebSocket to ``url`` (as the
    token's player; None: a spectator), closed with ``sockets``."""
    ws = await sockets.enter_async_context(GraphQLWebSocket(url, TRANSPORT_WS))
    await ws.connect(None if token is None else {"authorization": f"Bearer {token}"})
    return await subscribe_events(ws, game_id, after)


async def _ready(http: httpx.AsyncClient, up: bool) -> bool:
    """Whether ``/readyz`` says the bus is ``up`` (200) or not (503)."""
    return ((await http.get("/readyz")).status_code == 200) is up


def _ended(e: dict[str, Any]) -> bool:
    return bool(e["type"] == "GameEnded")


def _sent(e: dict[str, Any]) -> dict[str, Any]:
    """A logged event as the subscription sends it (no ``at``)."""
    return {k: v for k, v in e.items() if k != "at"}


def _fired_once_per_wait(log: list[dict[str, Any]]) -> None:
    """Each ``TurnTimedOut`` ends the latest wait of its seat (a person's
    ``ActionRequired``, with a deadline), at or after that deadline; no wait
    times out twice, and none is left behind (nobody plays)."""
    waits: dict[int, dict[str, Any]] = {}
    bots: set[int] = set()
    for e in log:
        if e["type"] == "SeatTakenOver":
            bots.add(e["data"]["seat"])
        elif e["type"] == "ActionRequired" and e["data"]["seat"] not in bots:
            assert e["data"].get("deadline"), f"a person's turn with no deadline: {e}"
            waits[e["data"]["seat"]] = e
        elif e["type"] == "TurnTimedOut":
            wait = waits.pop(e["data"]["seat"], None)
            assert wait is not None, f"a timeout with no wait, or a wait's second: {e}"
            deadline = datetime.fromisoformat(wait["data"]["deadline"])
            assert datetime.fromisoformat(e["at"]) >= deadline, (e, wait)
    assert not waits, f"waits that never timed out: {waits}"
