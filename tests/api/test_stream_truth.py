"""A seat a bot took over, as the schema shows it to its player (issue #22,
docs/decisions/0050): ``Viewer.choices`` and the ``ActionRequired`` of its
stream offer only ``RECLAIM_SEAT`` (nothing once its player left), the same
in the ``gameEvents`` pages and the live subscription; coming back when the
seat must act, the ``reclaimSeat`` result and the stream end with its
``ActionRequired``, its own choices and the new deadline."""

from __future__ import annotations

import asyncio
from typing import Any

from domain.game.engine import to_act
from tests.api.conftest import Client
from tests.api.support import mutation_text, ok, refused, started
from tests.stream_policy import action_for
from tests.usecases.conftest import expire

WAIT = """... on ActionRequired {
  seat hand { id } deadline choices { kind mutation cards { id } discards { id } seats giftCount
  gifts { to cards { id } } }
}"""
STREAM = (
    f"subscription($id: ID!) {{ gameEvents(gameId: $id, afterSeq: 0) {{ __typename seq {WAIT} }} }}"
)
PAGE = (
    "query($id: ID!, $after: Int!) { gameEvents(gameId: $id, afterSeq: $after, first: 100) "
    f"{{ ... on GameEventPage {{ hasMore events {{ __typename seq {WAIT} }} }} }} }}"
)
VIEWER = (
    "query($id: ID!) { game(id: $id) { ... on Game { deadline viewer { seat "
    "choices { kind mutation } legalActions { kind } messageTargets } } } }"
)
RECLAIM = [{"kind": "RECLAIM_SEAT", "mutation": "reclaimSeat"}]


def _state_to_act(client: Client, game_id: str) -> int:
    state = client.h.store.games[game_id].state
    assert state is not None
    seat = to_act(state)
    assert seat is not None
    return seat


async def _viewer(client: Client, token: str, game_id: str) -> dict[str, Any]:
    data = await client.run(VIEWER, token, id=game_id)
    game: dict[str, Any] = data["game"]
    return game


async def _person_moves(client: Client, tokens: list[str], game_id: str) -> None:
    """The seat to act answers its ``Viewer.choices`` with their first move."""
    seat = _state_to_act(client, game_id)
    choices = (
        await client.run(
            "query($id: ID!) { game(id: $id) { ... on Game { viewer { choices { kind mutation "
            "cards { id } discards { id } seats giftCount gifts { to cards { id } } } } } } }",
            tokens[seat],
            id=game_id,
        )
    )["game"]["viewer"]["choices"]
    mutation, args = action_for(choices)
    await ok(client, tokens[seat], mutation, gameId=game_id, **args)


async def _pages(client: Client, token: str, game_id: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    while True:
        page = (await client.run(PAGE, token, id=game_id, after=out[-1]["seq"] if out else 0))[
            "gameEvents"
        ]
        out += page["events"]
        if not page["hasMore"]:
            return out


async def _live(stream: Any, until_seq: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    while not out or out[-1]["seq"] < until_seq:
        result = await asyncio.wait_for(anext(stream), 5)
        assert result.errors is None, result.errors
        out.append(result.data["gameEvents"])
    return out


async def test_a_taken_over_seat_is_offered_only_reclaim_seat_live_and_in_replay(
    client: Client,
) -> None:
    game_id, tokens = await started(client, 3, ratSeat=0, turnSeconds=4, timeoutsToTakeover=1)
    stream = await client.subscribe(STREAM, tokens[0], id=game_id)
    try:
        assert await expire(client.h, game_id) == 1  # the Rat misses its lead: taken over
        looked = []
        for _ in range(8):  # people move, the bot plays seat 0
            looked.append(await _viewer(client, tokens[0], game_id))
            if _state_to_act(client, game_id) == 0:
                assert await client.h.drain() > 0
            else:
                await _person_moves(client, tokens, game_id)
        for game in looked:
            assert game["viewer"]["choices"] == RECLAIM
            assert game["viewer"]["legalActions"] == []
            assert game["viewer"]["messageTargets"] == []
        live = await _live(stream, client.h.store.games[game_id].last_seq)
    finally:
        await stream.aclose()
    replay = await _pages(client, tokens[0], game_id)
    assert live == replay  # the subscription and the pages: the same frames
    taken = next(e["seq"] for e in replay if e["__typename"] == "SeatTakenOver")
    bots = [
        e
        for e in replay
        if e["__typename"] == "ActionRequired" and e["seat"] == 0 and e["seq"] > taken
    ]
    assert bots
    for e in bots:
        assert [c["kind"] for c in e["choices"]] == ["RECLAIM_SEAT"]
        assert e["choices"][0]["mutation"] == "reclaimSeat"
        assert e["hand"] and e["deadline"] is None


async def test_reclaiming_a_seat_that_must_act_tells_its_stream_the_deadline(
    client: Client,
) -> None:
    game_id, tokens = await started(client, 3, ratSeat=0, turnSeconds=4, timeoutsToTakeover=1)
    assert await expire(client.h, game_id) == 1
    while _state_to_act(client, game_id) != 0:  # the bot is not driven: seat 0's turn waits
        await _person_moves(client, tokens, game_id)
    stream = await client.subscribe(STREAM, tokens[0], id=game_id)
    try:
        before = await _live(stream, client.h.store.games[game_id].last_seq)
        assert before[-1]["__typename"] == "ActionRequired" and before[-1]["deadline"] is None
        text = mutation_text("reclaimSeat", ["gameId"])
        done = (await client.run(text, tokens[0], gameId=game_id))["r"]
        assert [e["__typename"] for e in done["events"]] == ["SeatReclaimed", "ActionRequired"]
        wait = done["events"][-1]
        game = await _viewer(client, tokens[0], game_id)
        assert wait["seat"] == 0 and wait["deadline"] == game["deadline"] is not None
        kinds = [c["kind"] for c in wait["choices"]]
        assert kinds and "RECLAIM_SEAT" not in kinds
        assert kinds == [c["kind"] for c in game["viewer"]["choices"]]
        live = await _live(stream, wait["seq"])
    finally:
        await stream.aclose()
    last = live[-1]
    assert (last["seq"], last["seat"], last["deadline"]) == (wait["seq"], 0, wait["deadline"])
    assert [c["kind"] for c in last["choices"]] == kinds


async def test_an_outsiders_reclaim_is_forbidden(client: Client) -> None:
    game_id, _ = await started(client, 3, ratSeat=0, turnSeconds=4, timeoutsToTakeover=1)
    assert await expire(client.h, game_id) == 1
    outsider = (await client.new_player("eve"))[0]
    await refused(client, outsider, "reclaimSeat", "FORBIDDEN", gameId=game_id)
