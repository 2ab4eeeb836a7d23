"""Subscription frames built once per audience (api/fast/frames.py): every
subscriber still gets exactly its own projection, shaped by its own
selection, while subscribers of one audience share the work."""

from __future__ import annotations

from typing import Any

import pytest

from tests.api.conftest import Client
from tests.api.support import TYPED_EVENTS, play_to_end, start
from tests.api.test_subscriptions import Stream, pull_events, quiet

SELECTIONS = {
    "json": "gameId seq type at data",  # the events' shape before typed events
    "typed": f"__typename gameId seq at {TYPED_EVENTS}",  # every field of every type
}

WITH_DATA = """subscription($id: ID!, $after: Int!, $full: Boolean!) {
  gameEvents(gameId: $id, afterSeq: $after) { seq type data @include(if: $full) } }"""


LOG = """query($id: ID!, $after: Int!) { gameEvents(gameId: $id, afterSeq: $after, first: 100) {
  ... on GameEventPage { events { %s } hasMore lastSeq } } }"""
EVENTS = """subscription($id: ID!, $after: Int!) {
  gameEvents(gameId: $id, afterSeq: $after) { %s } }"""


async def log_of(
    client: Client, token: str | None, game_id: str, selection: str = SELECTIONS["json"]
) -> list[dict[str, Any]]:
    """The caller's whole log, page by page (built without the frame cache)."""
    events: list[dict[str, Any]] = []
    page = {"hasMore": True, "lastSeq": 0}
    while page["hasMore"]:
        query = LOG % selection
        page = (await client.run(query, token, id=game_id, after=page["lastSeq"]))["gameEvents"]
        events += page["events"]
    return events


async def subscribed(
    client: Client, token: str | None, game_id: str, after: int, selection: str
) -> Stream:
    stream = await client.subscribe(EVENTS % selection, token, id=game_id, after=after)
    return stream


@pytest.mark.parametrize("selection", SELECTIONS.values(), ids=SELECTIONS.keys())
async def test_each_subscriber_gets_its_own_projection_while_audiences_share_frames(
    client: Client, selection: str
) -> None:
    tokens = [(await client.new_player(f"p{i}"))[0] for i in range(3)]
    game_id = await start(client, tokens, ratSeat=0)
    begun = client.h.store.games[game_id].last_seq
    callers: list[str | None] = [*tokens, tokens[1], None, None, None]
    afters = [0, 0, 0, 2, 0, 1, begun - 1]  # a second stream of seat 1; spectators apart
    streams = [
        await subscribed(client, t, game_id, a, selection)
        for t, a in zip(callers, afters, strict=True)
    ]
    firsts = [await pull_events(s, a + 1) for s, a in zip(streams, afters, strict=True)]
    hits = client.schema.frames.hits
    await play_to_end(client, game_id, [*tokens])  # live frames queue up
    final = client.h.store.games[game_id].last_seq
    for caller, after, stream, first in zip(callers, afters, streams, firsts, strict=True):
        frames = first + await pull_events(stream, final)
        await quiet(stream)
        log = await log_of(client, caller, game_id, selection)
        assert frames == [e for e in log if e["seq"] > after]
    live = final - begun
    assert client.schema.frames.hits - hits >= 3 * live, (
        "one hit per event for the second seat-1 stream, two for the spectators"
    )


async def test_a_selection_variable_shapes_each_subscriber_s_own_frames(client: Client) -> None:
    tokens = [(await client.new_player(f"p{i}"))[0] for i in range(3)]
    game_id = await start(client, tokens, ratSeat=0)
    last = client.h.store.games[game_id].last_seq
    full = await client.subscribe(WITH_DATA, None, id=game_id, after=0, full=True)
    bare = await client.subscribe(WITH_DATA, None, id=game_id, after=0, full=False)
    with_data = await pull_events(full, last)
    without = await pull_events(bare, last)
    assert all("data" in e for e in with_data)
    assert all(set(e) == {"seq", "type"} for e in without)
    assert [(e["seq"], e["type"]) for e in with_data] == [(e["seq"], e["type"]) for e in without]


async def test_frames_of_one_seat_never_reach_another_audience(client: Client) -> None:
    """Seats and spectators on one query text and afterSeq: the frames differ
    where the projections differ (the dealt hands), so a shared frame across
    audiences would fail here."""
    tokens = [(await client.new_player(f"p{i}"))[0] for i in range(3)]
    game_id = await start(client, tokens, ratSeat=0)
    last = client.h.store.games[game_id].last_seq
    seen: list[list[dict[str, Any]]] = []
    for caller in [*tokens, None]:
        stream = await subscribed(client, caller, game_id, 0, SELECTIONS["typed"])
        seen.append(await pull_events(stream, last))
        await stream.aclose()
        assert seen[-1] == await log_of(client, caller, game_id, SELECTIONS["typed"])
    started = [next(e for e in frames if e["__typename"] == "GameStarted") for frames in seen]
    assert len({repr(e["hand"]) for e in started}) == 4, "four audiences, four projections"
