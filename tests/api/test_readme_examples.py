"""The README's "A five-minute game" runs, in order, as written, and plays
on to ``GameEnded``: the blocks it shows are sent as they are, the middle
of the game is driven by the loop it describes (tests/stream_policy.py,
through the README's own ``Play`` and ``Decide`` blocks where they apply).
Each curl command sends the operation of its GraphQL block; no example of
the README or docs/clients.md selects a deprecated field. (The curl
commands themselves run in tests/e2e/test_readme_curl.py.)"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from typing import Any

from api.graphql.schema import schema
from tests.api.conftest import Client
from tests.api.http_view import http_stream, next_result, view_of
from tests.api.support import mutation_text
from tests.http_streams import MULTIPART_ACCEPT, SSE_ACCEPT
from tests.readme_walkthrough import (
    START_EVENTS,
    URL,
    VERSION,
    block_named,
    block_of,
    clients_curls,
    clients_graphql,
    graphql_blocks,
    operation,
    problems,
    readme_action,
    readme_curls,
    variable_names,
)
from tests.stream_policy import action_for

SEAT = 0  # the walkthrough's seat: the person, the Rat


def test_the_walkthrough_has_every_step() -> None:
    ops = [operation(b) for b in graphql_blocks()]
    assert [(op.operation.value, op.name and op.name.value) for op in ops] == [
        ("mutation", None),
        ("mutation", None),
        ("mutation", "AddBot"),
        ("mutation", "AddBot"),
        ("mutation", "Start"),
        ("subscription", "Events"),
        ("mutation", "Play"),
        ("mutation", "Decide"),
    ]


def test_each_curl_sends_the_operation_of_its_graphql_block() -> None:
    blocks = graphql_blocks()
    commands = readme_curls() + clients_curls()
    assert [blocks.index(block_of(c)) for c in commands] == [0, 4, 5, 5]
    for i, curl in enumerate(commands):
        assert curl.url == URL
        assert curl.headers["content-type"] == "application/json"
        # Everyone but the new player says who they are.
        assert curl.headers.get("authorization") == (None if i == 0 else "Bearer <token>")
        assert set(curl.body.get("variables", {})) == variable_names(block_of(curl))
    assert [c.headers.get("accept") for c in commands if c.streams] == [
        SSE_ACCEPT,
        MULTIPART_ACCEPT,
    ]


def test_no_example_selects_a_deprecated_field() -> None:
    documents = graphql_blocks() + clients_graphql()
    documents += [curl.body["query"] for curl in readme_curls() + clients_curls()]
    assert len(documents) == 13
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


async def _until_asked(stream: AsyncGenerator[Any, None], seen: list[dict[str, Any]]) -> None:
    """Read the stream into ``seen`` until it asks seat 0 to act, or ends
    the game."""
    while True:
        result = await asyncio.wait_for(anext(stream), 10)
        assert result.errors is None, result.errors
        event = result.data["gameEvents"]
        seen.append(event)
        if event["__typename"] == "GameEnded":
            return
        if event["__typename"] == "ActionRequired" and event["seat"] == SEAT:
            return


async def _answer(client: Client, token: str, game: str, choices: list[dict[str, Any]]) -> str:
    """Step 6's loop: the first choice's mutation, by the README's block when
    it shows one; the kind answered."""
    mutation, arguments = action_for(choices)
    shown = readme_action(mutation, arguments)
    if shown is not None:
        block, variables = shown
        data = await client.run(block, token, game=game, **variables)
    else:
        text = mutation_text(mutation, ["gameId", *arguments])
        data = await client.run(text, token, gameId=game, **arguments)
    (change,) = data.values()
    assert "code" not in change, change  # no Refusal
    await client.h.drain()  # the bots answer
    return str(choices[0]["kind"])


async def test_the_walkthrough_plays_on_to_game_ended(client: Client) -> None:
    token, game, started = await _start(client)
    assert started["version"] == VERSION
    assert [e["__typename"] for e in started["events"]] == START_EVENTS

    # Step 3: the stream replays the game so far and asks seat 0 to lead.
    stream = await client.subscribe(block_named("Events"), token, game=game)
    seen: list[dict[str, Any]] = []
    try:
        await _until_asked(stream, seen)
        assert seen[0]["__typename"] == "GameCreated"
        lead = seen[-1]
        assert (lead["seat"], lead["phase"]) == (SEAT, "LEAD")
        assert [c["kind"] for c in lead["choices"]] == ["PLAY_CARD", "SEND_MESSAGE"]
        # docs/clients.md's Table query shows the same choices.
        (table_query,) = clients_graphql()
        table = (await client.run(table_query, token, game=game))["game"]
        assert table["version"] == VERSION and table["table"]["toAct"] == SEAT
        assert table["viewer"]["choices"] == lead["choices"]

        # Step 4: the first card of PLAY_CARD; a Crazy card (R7.1).
        card = lead["choices"][0]["cards"][0]["id"]
        played = (await client.run(block_named("Play"), token, game=game, card=card))["playCard"]
        assert played["version"] == VERSION + 1
        await _until_asked(stream, seen)
        assert [e["card"]["id"] for e in seen if e["__typename"] == "CardPlayed"] == [card]
        decision = seen[-1]
        assert (decision["seat"], decision["phase"]) == (SEAT, "DECISION")
        (crazy,) = decision["choices"]
        assert crazy["kind"] == "CRAZY_SECOND_CARD" and crazy["mutation"] == "resolveDecision"

        # Step 5: the decision, as the README's variables show it.
        second = {"kind": "CRAZY_SECOND_CARD", "card": crazy["cards"][0]["id"]}
        decided = await client.run(block_named("Decide"), token, game=game, decision=second)
        assert decided["resolveDecision"]["version"] == VERSION + 2
        await client.h.drain()

        # Step 6: play on, from the stream alone, until GameEnded.
        kinds = ["PLAY_CARD", "CRAZY_SECOND_CARD"]
        await _until_asked(stream, seen)
        while seen[-1]["__typename"] != "GameEnded":
            kinds.append(await _answer(client, token, game, seen[-1]["choices"]))
            await _until_asked(stream, seen)
        # The stream ends after GameEnded.
        assert await anext(stream, None) is None
    finally:
        await stream.aclose()

    end = seen[-1]
    assert end["winners"] and len(end["scores"]) == 3
    assert [e["seq"] for e in seen] == list(range(1, len(seen) + 1))
    # "This game ends after 17 of your moves" (README).
    assert len(kinds) == 17, kinds
    assert {"PLAY_CARD", "CRAZY_SECOND_CARD"} < set(kinds)


async def test_a_spectator_sees_who_must_act_but_not_the_choices(client: Client) -> None:
    """Step 3's stream without a token: the public projection."""
    token, game, _ = await _start(client)
    mine = await client.subscribe(block_named("Events"), token, game=game)
    public = await client.subscribe(block_named("Events"), None, game=game)
    try:
        ours: list[dict[str, Any]] = []
        theirs: list[dict[str, Any]] = []
        await _until_asked(mine, ours)
        await _until_asked(public, theirs)
    finally:
        await mine.aclose()
        await public.aclose()
    assert ours[-1]["choices"] and theirs[-1]["choices"] is None
    assert [e["seq"] for e in ours] == [e["seq"] for e in theirs]


async def test_the_http_subscription_examples_stream_the_game(client: Client) -> None:
    """The ``curl -N`` examples' operations through the HTTP view, SSE (the
    README) then multipart (docs/clients.md), each with its ``Accept``."""
    token, game, _ = await _start(client)
    streams = [curl for curl in readme_curls() + clients_curls() if curl.streams]
    view = view_of(client.h)
    for curl, transport in zip(streams, ("sse", "multipart"), strict=True):
        assert curl.body["variables"] == {"game": "<gameId>"}
        async with http_stream(
            view, transport, curl.body["query"], {"game": game}, f"Bearer {token}"
        ) as items:
            first = await next_result(items, 2)
        assert first == {"data": {"gameEvents": {"__typename": "GameCreated", "seq": 1}}}
