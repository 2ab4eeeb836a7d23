"""An abandoned game on two instances (PostgreSQL + Redis, issue #22 part 7,
docs/decisions/0051): an untimed game nobody moves in is swept by both
instances and ends once: one ``GameEnded`` (termination ``abandoned``) in a
gapless log, one "abandoned" line in the two logs, and the subscribers on
both instances get the end and see their streams complete."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.client import SUBSCRIBE_EVENTS, Api
from tests.e2e.cluster import cluster, fresh_backend
from tests.e2e.play import EVENT_TIMEOUT, new_game
from tests.e2e.wsclient import TRANSPORT_WS, Operation, OperationEnded, ws_connection

pytestmark = [pytest.mark.e2e, pytest.mark.services, pytest.mark.timeout(120)]

IDLE = 3  # seconds an untimed game may go unchanged (MMK_ABANDON_IDLE)
LOG = """query($g: ID!) { gameEvents(gameId: $g, afterSeq: 0, first: 100) {
  __typename ... on GameEventPage { events { seq type data } } } }"""
ENDED_LINE = re.compile(r"abandoned (\d+) game\(s\)")


async def _until_ended(op: Operation) -> list[dict[str, Any]]:
    """Every event the subscription gets until it completes."""
    got: list[dict[str, Any]] = []
    while True:
        try:
            payload = await op.next(IDLE + EVENT_TIMEOUT)
        except OperationEnded:
            return got
        got.append(payload["data"]["gameEvents"])


async def test_a_game_nobody_moves_in_is_abandoned_once_by_two_instances(
    database_url: str, redis_url: str, tmp_path: Path
) -> None:
    settings = {"MMK_ABANDON_IDLE": str(IDLE), "MMK_ABANDON_SWEEP_INTERVAL": "1"}
    with (
        fresh_backend(database_url, redis_url, "abandon", **settings) as backend,
        cluster(backend, tmp_path) as (a, b),
    ):
        async with (
            httpx.AsyncClient(base_url=a.base_url, timeout=15, trust_env=False) as ha,
            httpx.AsyncClient(base_url=b.base_url, timeout=15, trust_env=False) as hb,
        ):
            api_a, api_b = Api(ha), Api(hb)
            game_id, (ann,) = await new_game(api_a, "abandon", 1, ["GREEDY", "GREEDY"], ratSeat=0)
            await api_a.start(ann, game_id)  # ann, the Rat, must lead; she never does
            last = (await api_b.game(game_id))["lastSeq"]
            variables = {"gameId": game_id, "afterSeq": last - 1}
            async with (
                ws_connection(b.ws_url, TRANSPORT_WS, ann.token) as on_b,
                ws_connection(a.ws_url, TRANSPORT_WS) as on_a,
            ):
                ops = [await ws.subscribe(SUBSCRIBE_EVENTS, variables) for ws in (on_b, on_a)]
                streams = [await _until_ended(op) for op in ops]
            page = await api_b.ok("gameEvents", LOG, {"g": game_id})
            status = (await api_a.game(game_id))["status"]
    for got in streams:  # the seat's and a spectator's, on either instance
        assert [(e["seq"], e["type"]) for e in got] == [
            (last, "ActionRequired"),
            (last + 1, "GameEnded"),
        ]
    log = page["events"]
    assert [e["seq"] for e in log] == list(range(1, len(log) + 1))
    ends = [e for e in log if e["type"] == "GameEnded"]
    assert len(ends) == 1 and ends[0]["data"]["termination"] == "abandoned"
    assert log[-1] == ends[0] and status == "ABANDONED"
    lines = [int(n) for inst in (a, b) for n in ENDED_LINE.findall(inst.server.log.read_text())]
    assert lines == [1], lines  # one sweep ended it; the other found it over
