"""A caller's replays a minute (``MMK_REPLAYS_PER_MINUTE``, issue #22 item 3,
docs/decisions/0049) hold across its connections: a client that reconnects,
or opens another socket, to replay the log again starts with what it left,
and is refused ``RATE_LIMITED`` with ``retryAfter``; another player from the
same address is not touched. Against a real ``mmk serve``."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Iterator
from contextlib import suppress
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest

from api.graphql.subscriptions import REPLAYED
from tests.e2e.client import Api
from tests.e2e.conftest import Server
from tests.e2e.own_server import assert_no_leak, own_server
from tests.e2e.play import EVENT_TIMEOUT, autoplay, new_game, together
from tests.e2e.wsclient import LEGACY_WS, TRANSPORT_WS, OperationEnded, ws_connection

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(90)]

CAP = 120  # MMK_REPLAYS_PER_MINUTE
REPLAY = 100  # events each replay asks for (afterSeq = lastSeq - REPLAY)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    tmp = tmp_path_factory.mktemp("replay-cap")
    with own_server(
        tmp,
        f"sqlite:///{tmp}/replay.sqlite3",
        MMK_REPLAYS_PER_MINUTE=str(CAP),
        MMK_RATE_QUERY_COST_IP="0",
    ) as (srv, _):
        yield srv
    assert_no_leak(srv)


async def _replay(
    server: Server, protocol: str, token: str, game_id: str, after: int
) -> tuple[list[dict[str, Any]], list[Any]]:
    """One new connection replaying from ``after``: the events it got and its
    operation's errors."""
    async with ws_connection(server.ws_url, protocol, token) as ws:
        op = await ws.subscribe(
            "subscription($g: ID!, $a: Int!) { gameEvents(gameId: $g, afterSeq: $a) { seq } }",
            {"g": game_id, "a": after},
        )
        got: list[dict[str, Any]] = []
        with suppress(OperationEnded):
            while True:
                payload = await op.next(EVENT_TIMEOUT)
                if payload.get("data"):
                    got.append(payload["data"]["gameEvents"])
        return got, op.errors


async def test_a_callers_replays_a_minute_hold_across_its_connections(server: Server) -> None:
    async with httpx.AsyncClient(base_url=server.base_url, timeout=10, trust_env=False) as http:
        api = Api(http)
        game_id, (ann, bob) = await new_game(api, "replay-cap", 2, ["GREEDY"])
        await api.start(ann, game_id)
        await together(
            autoplay(api, ann, 0, game_id, random.Random("ann")),
            autoplay(api, bob, 1, game_id, random.Random("bob")),
        )
        log = await api.events(game_id, ann.token, fields="seq at")
    last = log[-1]["seq"]
    assert last > REPLAY, "a log long enough to replay"
    # Replays, not live events: wait until the last event is older than REPLAYED.
    age = (datetime.now(UTC) - datetime.fromisoformat(log[-1]["at"])).total_seconds()
    await asyncio.sleep(max(0.0, REPLAYED + 0.5 - age))

    first, errors = await _replay(server, TRANSPORT_WS, ann.token, game_id, last - REPLAY)
    assert [e["seq"] for e in first] == list(range(last - REPLAY + 1, last + 1))
    assert not errors
    # A new connection, the other protocol: the caller's minute, not a fresh one.
    second, errors = await _replay(server, LEGACY_WS, ann.token, game_id, last - REPLAY)
    # At most what was left (events gated but not yet written when the
    # refusal came are not sent: the client resumes after its last seq).
    assert len(second) <= CAP - REPLAY, second
    assert [e["seq"] for e in second] == list(
        range(last - REPLAY + 1, last - REPLAY + 1 + len(second))
    )
    (error,) = errors
    assert error["extensions"]["code"] == "RATE_LIMITED", error
    assert 0 < error["extensions"]["retryAfter"] <= 60
    assert "afterSeq" in error["message"]
    # Once dry, the next one is refused before it reads the log.
    third, errors = await _replay(server, TRANSPORT_WS, ann.token, game_id, last - REPLAY)
    assert not third and errors[0]["extensions"]["code"] == "RATE_LIMITED"
    # Another player from the same address replays in full.
    other, errors = await _replay(server, TRANSPORT_WS, bob.token, game_id, last - REPLAY)
    assert len(other) == REPLAY and not errors
