"""Resuming a ``gameEvents`` subscription: close a person's WebSocket in the
middle of a game, let the game move on, resubscribe with ``afterSeq`` = the
last seq received: nothing missed, nothing twice, in order, to the end."""

from __future__ import annotations

import asyncio
import random
import time
from typing import Any

import pytest

from tests.e2e.client import Api, Person
from tests.e2e.conftest import Server
from tests.e2e.play import (
    EVENT_TIMEOUT,
    POLL,
    assert_complete,
    assert_ended,
    autoplay,
    new_game,
    read_until,
    subscribe_events,
    together,
)
from tests.e2e.wsclient import LEGACY_WS, PROTOCOLS, TRANSPORT_WS, ws_connection

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(90)]

CLOSE_AT = 40  # seq after which the first connection closes
MISSED = 15  # events the game moves on while the person is away


async def _wait_for_seq(api: Api, person: Person, game_id: str, seq: int) -> dict[str, Any]:
    """Poll until the game's log reaches ``seq``; the game, as it is then."""
    deadline = time.monotonic() + EVENT_TIMEOUT
    while True:
        game = await api.game(game_id, person.token)
        if game["lastSeq"] >= seq:
            return game
        assert game["status"] != "FINISHED", f"the game ended at seq {game['lastSeq']}"
        assert time.monotonic() < deadline, f"the game is stuck at seq {game['lastSeq']}"
        await asyncio.sleep(POLL)


@pytest.mark.parametrize("how", ["close", "abort"])
@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_resubscribe_after_a_dropped_connection(
    server: Server, api: Api, protocol: str, how: str
) -> None:
    """``close``: a normal closing handshake; ``abort``: the TCP connection
    just drops, as when a phone loses its network."""
    tag = f"reconnect-{protocol}-{how}"
    game_id, (ann, bob) = await new_game(api, tag, 2, ["GREEDY", "RANDOM"])
    other = LEGACY_WS if protocol == TRANSPORT_WS else TRANSPORT_WS
    first: list[dict[str, Any]] = []
    second: list[dict[str, Any]] = []
    bob_events: list[dict[str, Any]] = []

    async def ann_follows() -> int:
        async with ws_connection(server.ws_url, protocol, ann.token) as ws:
            op = await subscribe_events(ws, game_id)
            await read_until(op, first, lambda e: e["seq"] >= CLOSE_AT)
            if how == "abort":
                await ws.abort()
        # The socket is closed; the game goes on without Ann's stream.
        last: int = first[-1]["seq"]
        away = await _wait_for_seq(api, ann, game_id, last + MISSED)
        assert away["status"] == "RUNNING", "reconnect in the middle of the game"
        async with ws_connection(server.ws_url, protocol, ann.token) as ws:
            op = await subscribe_events(ws, game_id, after_seq=last)
            await read_until(op, second)
            await assert_ended(op)
            assert not op.errors
        return last

    async with ws_connection(server.ws_url, other, bob.token) as bob_ws:
        await api.start(ann, game_id)
        bob_op = await subscribe_events(bob_ws, game_id)
        results = await together(
            autoplay(api, ann, 0, game_id, random.Random("ann")),
            autoplay(api, bob, 1, game_id, random.Random("bob")),
            ann_follows(),
            read_until(bob_op, bob_events),
        )
        await assert_ended(bob_op)

    game, closed_after = results[0], results[2]
    last = game["lastSeq"]
    assert game["status"] == "FINISHED"
    assert closed_after >= CLOSE_AT and first[-1]["seq"] == closed_after
    assert second[0]["seq"] == closed_after + 1, "the resumed stream starts right after"
    assert len(second) >= MISSED, "the events made while away were replayed"
    assert_complete(first + second, last, game_id)
    assert first + second == await api.events(game_id, ann.token)
    # The other person, never disconnected, got the same sequence, their own way.
    assert_complete(bob_events, last, game_id)
    assert bob_events == await api.events(game_id, bob.token)


async def test_resubscribe_after_the_end_replays_only_the_tail(server: Server, api: Api) -> None:
    game_id, (ann,) = await new_game(api, "replay-tail", 1, ["GREEDY", "RANDOM"])
    await api.start(ann, game_id)
    (game,) = await together(autoplay(api, ann, 0, game_id, random.Random("ann")))
    last = game["lastSeq"]
    log = await api.events(game_id, ann.token)
    for protocol in PROTOCOLS:
        async with ws_connection(server.ws_url, protocol, ann.token) as ws:
            op = await subscribe_events(ws, game_id, after_seq=last - 3)
            tail: list[dict[str, Any]] = []
            await read_until(op, tail)
            assert tail == log[-3:]
            await assert_ended(op)
            # Resuming at the very end: nothing at all, and the end at once.
            op = await subscribe_events(ws, game_id, after_seq=last)
            await assert_ended(op)
