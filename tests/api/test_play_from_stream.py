"""A client plays a whole game from its own subscription, without polling
(docs/clients.md "Resuming": a seat's stream carries its hand changes
and, whenever it must act, its choices): after ``startGame`` no player ever
asks for the ``game``; each answers the ``ActionRequired`` events of its own
stream (tests/stream_policy.py) until ``GameEnded``."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests.api.conftest import Client
from tests.api.support import mutation_text, new_game, ok, players
from tests.stream_policy import ACTION_REQUIRED, action_for

STREAM = f"""subscription($id: ID!) {{ gameEvents(gameId: $id, afterSeq: 0) {{
  __typename seq
  ... on GameEnded {{ winners scores }}
  {ACTION_REQUIRED}
}} }}"""


async def _play_seat(client: Client, token: str, seat: int, game_id: str) -> dict[str, Any]:
    """Seat ``seat``'s client: reads its stream, answers what is asked of it."""
    stream = await client.subscribe(STREAM, token, id=game_id)
    moves = 0
    try:
        async for result in stream:
            assert result.errors is None, result.errors
            event = result.data["gameEvents"]
            if event["__typename"] == "GameEnded":
                return {"moves": moves, **event}
            if event["__typename"] == "ActionRequired" and event["seat"] == seat:
                assert event["choices"], event
                mutation, args = action_for(event["choices"])
                text = mutation_text(mutation, ["gameId", *args])
                sent = await client.run(text, token, gameId=game_id, **args)
                assert sent["r"]["__typename"] == "GameChange", sent
                moves += 1
    finally:
        await stream.aclose()
    raise AssertionError(f"seat {seat}'s stream ended before the game did")


@pytest.mark.parametrize(("seats", "fmt"), [(3, "SINGLETON"), (4, "SEALED"), (5, "SINGLETON")])
async def test_people_play_whole_games_from_their_streams_alone(
    client: Client, seats: int, fmt: str
) -> None:
    tokens = await players(client, seats)
    game_id = await new_game(client, tokens[0], seatCount=seats, format=fmt, seed=f"fs-{seats}")
    for t in tokens[1:]:
        await ok(client, t, "joinGame", gameId=game_id)
    seat_clients = [
        asyncio.ensure_future(_play_seat(client, t, seat, game_id)) for seat, t in enumerate(tokens)
    ]
    await asyncio.sleep(0)  # every stream subscribed before the start
    await ok(client, tokens[0], "startGame", gameId=game_id)
    ends = await asyncio.wait_for(asyncio.gather(*seat_clients), 60)
    assert len({(tuple(e["winners"]), tuple(e["scores"])) for e in ends}) == 1
    assert sum(e["moves"] for e in ends) > 30
    assert all(e["moves"] > 0 for e in ends)
