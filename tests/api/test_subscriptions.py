"""Subscriptions through ``schema.subscribe``: gameEvents (replay after
afterSeq, then live; in order, no gap, no duplicate; the caller's
projection) and lobby."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from typing import Any

import pytest

from domain.channels import LOBBY
from tests.api.conftest import Client
from tests.api.support import game, hands, new_game, ok, play_to_end, send_action, start, strings

EVENTS = """subscription($id: ID!, $after: Int!) {
  gameEvents(gameId: $id, afterSeq: $after) { gameId seq type at data } }"""

LOG = """query($id: ID!) { gameEvents(gameId: $id, first: 100) {
  ... on GameEventPage { events { gameId seq type at data } } } }"""

LOBBY_UPDATES = "subscription { lobby { gameId status seatCount seatsTaken version } }"

Stream = AsyncGenerator[Any, None]


async def pull(stream: Stream, timeout: float = 2.0) -> dict[str, Any]:
    result = await asyncio.wait_for(stream.__anext__(), timeout)
    assert result.errors is None, result.errors
    data: dict[str, Any] = result.data
    return data


async def pull_events(stream: Stream, upto: int) -> list[dict[str, Any]]:
    """Events until seq ``upto`` is reached."""
    out: list[dict[str, Any]] = []
    while not out or out[-1]["seq"] < upto:
        out.append((await pull(stream))["gameEvents"])
    return out


async def quiet(stream: Stream) -> None:
    """Nothing more arrives (the stream is closed afterwards, or has ended)."""
    try:
        extra = await asyncio.wait_for(stream.__anext__(), 0.05)
    except (TimeoutError, StopAsyncIteration):
        return
    raise AssertionError(f"unexpected event: {extra}")


async def ended(stream: Stream) -> None:
    """The stream has ended by itself (after ``GameEnded``)."""
    with pytest.raises(StopAsyncIteration):
        await asyncio.wait_for(stream.__anext__(), 2)


async def move(client: Client, tokens: list[str], game_id: str) -> None:
    """The seat to act sends its first listed action."""
    token = tokens[(await game(client, None, game_id))["table"]["toAct"]]
    action = (await game(client, token, game_id))["viewer"]["legalActions"][0]
    assert (await send_action(client, token, game_id, action))["__typename"] == "GameChange"


async def log_of(client: Client, token: str | None, game_id: str) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = (await client.run(LOG, token, id=game_id))["gameEvents"][
        "events"
    ]
    return events


async def test_replay_after_seq_then_live_in_order_without_duplicates(client: Client) -> None:
    tokens = [(await client.new_player(f"p{i}"))[0] for i in range(3)]
    game_id = await start(client, tokens, ratSeat=0)
    first_last = client.h.store.games[game_id].last_seq
    stream = await client.subscribe(EVENTS, None, id=game_id, after=2)
    got = [(await pull(stream))["gameEvents"]]
    assert got[0]["seq"] == 3
    await move(client, tokens, game_id)  # live events queue up behind the replay
    after_lead = client.h.store.games[game_id].last_seq
    assert after_lead > first_last
    got += await pull_events(stream, after_lead)
    await move(client, tokens, game_id)
    now = client.h.store.games[game_id].last_seq
    got += await pull_events(stream, now)
    await quiet(stream)
    assert [e["seq"] for e in got] == list(range(3, now + 1))
    assert got == (await log_of(client, None, game_id))[2:], "the same public projections"
    assert all(e["gameId"] == game_id for e in got)


async def test_resubscribing_with_the_last_seq_resumes_without_gap(client: Client) -> None:
    tokens = [(await client.new_player(f"p{i}"))[0] for i in range(3)]
    game_id = await start(client, tokens, ratSeat=0)
    stream = await client.subscribe(EVENTS, tokens[2], id=game_id, after=0)
    first = [(await pull(stream))["gameEvents"] for _ in range(3)]
    await stream.aclose()
    await move(client, tokens, game_id)
    again = await client.subscribe(EVENTS, tokens[2], id=game_id, after=first[-1]["seq"])
    rest = await pull_events(again, client.h.store.games[game_id].last_seq)
    await quiet(again)
    assert first + rest == await log_of(client, tokens[2], game_id)


async def test_a_seat_stream_carries_its_own_projection_only(client: Client) -> None:
    tokens = [(await client.new_player(f"p{i}"))[0] for i in range(3)]
    game_id = await start(client, tokens, ratSeat=0)
    held = hands(client, game_id)
    last = client.h.store.games[game_id].last_seq
    for seat, token in enumerate(tokens):
        stream = await client.subscribe(EVENTS, token, id=game_id, after=0)
        events = await pull_events(stream, last)
        await stream.aclose()
        dealt = next(e for e in events if e["type"] == "GameStarted")["data"]["hand"]
        assert sorted(dealt) == sorted(held[seat])
        assert not strings(events) & {c for s, h in enumerate(held) if s != seat for c in h}
    spectator = await client.subscribe(EVENTS, None, id=game_id, after=0)
    events = await pull_events(spectator, last)
    await spectator.aclose()
    assert not strings(events) & {c for h in held for c in h}


async def test_bot_moves_stream_live(client: Client) -> None:
    host, _ = await client.new_player("host")
    game_id = await start(client, [host], bots=["RANDOM", "GREEDY"], ratSeat=1)
    await client.h.drain()  # the Rat bot leads
    last = client.h.store.games[game_id].last_seq
    stream = await client.subscribe(EVENTS, host, id=game_id, after=last)
    live_task = asyncio.ensure_future(pull(stream))
    await asyncio.sleep(0.01)
    steps = await play_to_end(client, game_id, [host, None, None])
    assert steps > 0
    final = client.h.store.games[game_id].last_seq
    got = [(await live_task)["gameEvents"]]
    got += await pull_events(stream, final)
    await ended(stream)
    assert [e["seq"] for e in got] == list(range(last + 1, final + 1))
    assert got[-1]["type"] == "GameEnded"


async def errors_of_stream(client: Client, token: str | None, **variables: Any) -> list[str]:
    stream = await client.subscribe(EVENTS, token, **variables)
    result = await asyncio.wait_for(stream.__anext__(), 2)
    await stream.aclose()
    assert result.errors, result
    return [e.extensions["code"] for e in result.errors]


async def test_game_events_subscription_refusals(client: Client) -> None:
    host, _ = await client.new_player()
    game_id = await new_game(client, host)
    assert await errors_of_stream(client, None, id="nope", after=0) == ["NOT_FOUND"]
    assert await errors_of_stream(client, None, id=game_id, after=-1) == ["BAD_INPUT"]
    assert await errors_of_stream(client, "wrong", id=game_id, after=0) == ["UNAUTHENTICATED"]


async def test_lobby_reports_games_created_filling_started_and_finished(client: Client) -> None:
    stream = await client.subscribe(LOBBY_UPDATES)
    first = asyncio.ensure_future(pull(stream))
    while client.h.bus.subscriber_count(LOBBY) == 0:
        await asyncio.sleep(0)
    host, ann = [(await client.new_player(n))[0] for n in ("host", "ann")]
    game_id = await new_game(client, host, seatCount=3)
    await ok(client, ann, "joinGame", gameId=game_id)
    await ok(client, ann, "leaveGame", gameId=game_id)
    await ok(client, host, "addBot", gameId=game_id, strategy="RANDOM")
    await ok(client, host, "addBot", gameId=game_id, strategy="GREEDY")
    await ok(client, host, "startGame", gameId=game_id)
    await play_to_end(client, game_id, [host, None, None])
    updates = [(await first)["lobby"]] + [(await pull(stream))["lobby"] for _ in range(6)]
    await quiet(stream)
    assert all(u["gameId"] == game_id and u["seatCount"] == 3 for u in updates)
    assert [(u["status"], u["seatsTaken"]) for u in updates] == [
        ("LOBBY", 1),
        ("LOBBY", 2),
        ("LOBBY", 1),
        ("LOBBY", 2),
        ("LOBBY", 3),
        ("RUNNING", 3),
        ("FINISHED", 3),
    ]
    versions = [u["version"] for u in updates]
    assert versions == sorted(versions)


async def test_lobby_with_a_bad_token_is_unauthenticated(client: Client) -> None:
    stream = await client.subscribe(LOBBY_UPDATES, "not-a-token")
    result = await asyncio.wait_for(stream.__anext__(), 2)
    await stream.aclose()
    assert [e.extensions["code"] for e in result.errors] == ["UNAUTHENTICATED"]
