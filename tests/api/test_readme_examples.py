"""The README's "Play a game" walkthrough runs, in order, as written; each
curl command sends the operation of its GraphQL block; no example selects a
deprecated field. (The curl commands themselves run in
tests/e2e/test_readme_curl.py.)"""

from __future__ import annotations

from typing import Any

from api.graphql.schema import schema
from tests.api.conftest import Client
from tests.api.http_view import http_stream, next_result, view_of
from tests.http_streams import MULTIPART_ACCEPT, SSE_ACCEPT
from tests.readme_walkthrough import (
    README,
    START_EVENTS,
    URL,
    VERSION,
    curl_pairs,
    fenced,
    graphql_blocks,
    normalized,
    operation,
    problems,
    variable_names,
)


def test_the_walkthrough_has_every_step() -> None:
    ops = [operation(b) for b in graphql_blocks()]
    assert [(op.operation.value, op.name and op.name.value) for op in ops] == [
        ("mutation", None),
        ("mutation", None),
        ("mutation", "AddBot"),
        ("mutation", "AddBot"),
        ("mutation", "Start"),
        ("query", "Table"),
        ("mutation", "Play"),
        ("subscription", "Events"),
    ]


def test_each_curl_sends_the_operation_of_its_graphql_block() -> None:
    pairs = curl_pairs()
    assert [graphql_blocks().index(block) for block, _ in pairs] == [0, 1, 2, 3, 4, 5, 6, 7, 7]
    for i, (block, curl) in enumerate(pairs):
        assert curl.url == URL
        assert curl.headers["content-type"] == "application/json"
        # Everyone but the new player says who they are.
        assert curl.headers.get("authorization") == (None if i == 0 else "Bearer <token>")
        assert normalized(curl.body["query"]) == normalized(block)
        assert set(curl.body.get("variables", {})) == variable_names(block)
    assert [c.headers.get("accept") for _, c in pairs if c.streams] == [
        SSE_ACCEPT,
        MULTIPART_ACCEPT,
    ]


def test_no_example_selects_a_deprecated_field() -> None:
    documents = [code for lang, code in fenced(README.read_text()) if lang == "graphql"]
    documents += [curl.body["query"] for _, curl in curl_pairs()]
    assert len(documents) == 17
    for document in documents:
        assert problems(schema._schema, document) == [], document


def test_the_deprecation_check_sees_deprecated_fields() -> None:
    old = 'query { game(id: "g") { ... on Game { viewer { legalActions { mutation } } } } }'
    assert problems(schema._schema, old) == [
        "The field Viewer.legalActions is deprecated. Use choices: structured, messages included"
    ]
    events = 'subscription { gameEvents(gameId: "g") { seq type data } }'
    assert len(problems(schema._schema, events)) == 2


async def _start(client: Client) -> tuple[str, str, dict[str, Any]]:
    """Steps 1 and 2: the token, the game id, and what startGame answered."""
    blocks = graphql_blocks()
    first = (await client.run(blocks[0]))["createPlayer"]
    assert first["player"]["name"] == "Ann"
    token = first["token"]
    created = (await client.run(blocks[1], token))["createGame"]
    assert created["version"] == 1
    game: str = created["gameId"]
    for version, block in enumerate(blocks[2:4], start=2):
        assert (await client.run(block, token, game=game))["addBot"] == {"version": version}
    started = (await client.run(blocks[4], token, game=game))["startGame"]
    return token, game, started


async def _play(client: Client, token: str, game: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """Steps 3 and 4: the table, and what playCard answered."""
    blocks = graphql_blocks()
    table = (await client.run(blocks[5], token, game=game))["game"]
    (play,) = [c for c in table["viewer"]["choices"] if c["kind"] == "PLAY_CARD"]
    card = play["cards"][0]["id"]
    played = await client.run(blocks[6], token, game=game, card=card, version=table["version"])
    again = await client.run(blocks[6], token, game=game, card=card, version=table["version"])
    assert again == played  # the idempotency key replays the first result
    return table, played["playCard"]


async def test_the_walkthrough_runs_in_order(client: Client) -> None:
    token, game, started = await _start(client)
    assert started["version"] == VERSION
    assert [e["__typename"] for e in started["events"]] == START_EVENTS

    table, played = await _play(client, token, game)
    assert table["version"] == VERSION
    assert table["table"]["toAct"] == 0 and table["viewer"]["seat"] == 0
    kinds = [c["kind"] for c in table["viewer"]["choices"]]
    assert kinds == ["PLAY_CARD", "SEND_MESSAGE"]
    assert played["version"] == VERSION + 1
    (move,) = [e for e in played["events"] if e["__typename"] == "CardPlayed"]
    assert move["seat"] == 0
    assert move["card"]["id"] == table["viewer"]["choices"][0]["cards"][0]["id"]
    assert played["events"][-1] == {
        "__typename": "ActionRequired",
        "seq": played["events"][-1]["seq"],
        "seat": 0,
        "phase": "DECISION",
        "choices": [{"kind": "CRAZY_SECOND_CARD"}],
    }


async def _follow(client: Client, token: str | None, game: str, last: int) -> list[dict[str, Any]]:
    """Step 5's subscription as ``token`` (None: a spectator), to seq ``last``."""
    stream = await client.subscribe(graphql_blocks()[7], token, game=game)
    events: list[dict[str, Any]] = []
    try:
        while not events or events[-1]["seq"] < last:
            result = await anext(stream)
            assert result.errors is None, result.errors
            events.append(result.data["gameEvents"])
    finally:
        await stream.aclose()
    assert [e["seq"] for e in events] == list(range(1, last + 1))
    assert events[0]["__typename"] == "GameCreated"
    return events


async def test_the_subscription_gives_the_seat_to_act_its_choices(client: Client) -> None:
    """Step 5 after steps 1 to 4: the stream replays from seq 1; each
    ActionRequired carries hand and choices to seat 0 only."""
    token, game, _ = await _start(client)
    _, played = await _play(client, token, game)
    last = played["events"][-1]["seq"]
    mine, public = [await _follow(client, who, game, last) for who in (token, None)]
    asked = [e for e in mine if e["__typename"] == "ActionRequired"]
    assert [(e["seat"], e["phase"]) for e in asked] == [(0, "LEAD"), (0, "DECISION")]
    assert asked[0]["hand"] and asked[0]["choices"][0]["kind"] == "PLAY_CARD"
    assert [c["kind"] for c in asked[1]["choices"]] == ["CRAZY_SECOND_CARD"]
    (move,) = [e for e in mine if e["__typename"] == "CardPlayed"]
    assert move["seat"] == 0 and move["card"]["id"] == asked[0]["choices"][0]["cards"][0]["id"]
    seen = [e for e in public if e["__typename"] == "ActionRequired"]
    assert seen == [{**e, "hand": None, "choices": None} for e in asked]


async def test_the_http_subscription_examples_stream_the_game(client: Client) -> None:
    """The ``curl -N`` examples' operations through the HTTP view, SSE then
    multipart, each with the ``Accept`` its curl sends."""
    token, game, _ = await _start(client)
    streams = [curl for _, curl in curl_pairs() if curl.streams]
    view = view_of(client.h)
    for curl, transport in zip(streams, ("sse", "multipart"), strict=True):
        assert curl.body["variables"] == {"game": "<gameId>"}
        async with http_stream(
            view, transport, curl.body["query"], {"game": game}, f"Bearer {token}"
        ) as items:
            first = await next_result(items, 2)
        assert first == {"data": {"gameEvents": {"__typename": "GameCreated", "seq": 1}}}
