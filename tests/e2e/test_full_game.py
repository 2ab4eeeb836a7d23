"""A whole game between two people and two bots over real HTTP and WebSockets:
each person plays what ``legalActions`` lists and follows the game on its own
``gameEvents`` subscription (one per sub-protocol)."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import pytest

from tests.e2e.client import Api
from tests.e2e.conftest import Server
from tests.e2e.play import (
    Seen,
    assert_complete,
    assert_ended,
    autoplay,
    new_game,
    read_until,
    subscribe_events,
    together,
)
from tests.e2e.wsclient import LEGACY_WS, TRANSPORT_WS, ws_connection

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(90)]


async def test_people_and_bots_play_a_whole_game(server: Server, api: Api) -> None:
    game_id, (ann, bob) = await new_game(api, "full", 2, ["GREEDY", "RANDOM"])
    ann_events: list[dict[str, Any]] = []
    bob_events: list[dict[str, Any]] = []
    seen = {0: Seen(), 1: Seen()}
    async with (
        ws_connection(server.ws_url, TRANSPORT_WS, ann.token) as ann_ws,
        ws_connection(server.ws_url, LEGACY_WS, bob.token) as bob_ws,
    ):
        # Ann subscribes in the lobby (everything arrives live); Bob once the
        # bots may already be moving (the log first, then live).
        ann_op = await subscribe_events(ann_ws, game_id)
        await api.start(ann, game_id)
        bob_op = await subscribe_events(bob_ws, game_id)
        finished = await together(
            autoplay(api, ann, 0, game_id, random.Random("ann"), seen[0]),
            autoplay(api, bob, 1, game_id, random.Random("bob"), seen[1]),
            read_until(ann_op, ann_events),
            read_until(bob_op, bob_events),
        )
        # Both streams end after GameEnded: a complete, nothing more.
        await asyncio.gather(assert_ended(ann_op), assert_ended(bob_op))
        assert not ann_op.errors and not bob_op.errors

    game = finished[0]
    assert game["status"] == "FINISHED"
    outcome = game["table"]["outcome"]
    assert outcome is not None and outcome["winners"], outcome
    assert game["table"]["toAct"] is None
    assert seen[0].moves > 0 and seen[1].moves > 0, "both people must have played"
    last = game["lastSeq"]
    for person, events in ((ann, ann_events), (bob, bob_events)):
        assert_complete(events, last, game_id)
        assert events[-1]["type"] == "GameEnded"
        assert events[-1]["data"]["scores"] == outcome["scores"]
        # The stream is exactly the log as this player may see it.
        assert events == await api.events(game_id, person.token)
    # Each got its own seat's projection: its own starting hand, not the other's.
    ann_hand = _start_hand(ann_events)
    bob_hand = _start_hand(bob_events)
    assert len(ann_hand) == len(bob_hand) == 10
    assert not set(ann_hand) & set(bob_hand)
    # Cards leave a hand only by its owner's moves: her first look saw them all.
    assert set(ann_hand) <= seen[0].hands
    assert set(bob_hand) <= seen[1].hands
    # Every move the people made is in the log: the stream saw them play.
    plays = {
        e["data"]["seat"]
        for e in ann_events
        if e["type"] in ("CardPlayed", "Passed") and e["data"]["seat"] in (0, 1)
    }
    assert plays == {0, 1}


def _start_hand(events: list[dict[str, Any]]) -> list[str]:
    started = [e for e in events if e["type"] == "GameStarted"]
    assert len(started) == 1, started
    hand: list[str] = started[0]["data"]["hand"]
    return hand
