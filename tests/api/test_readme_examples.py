"""The README's "Play a game" walkthrough runs, in order, as written."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

from api.graphql.schema import schema
from tests.api.conftest import Client

README = Path(__file__).resolve().parents[2] / "README.md"


def _section() -> str:
    text = README.read_text()
    start = text.index("## Play a game")
    return text[start : text.index("\n## ", start + 1)]


def _blocks(lang: str) -> list[str]:
    return [b.strip() for b in re.findall(rf"```{lang}\n(.*?)```", _section(), re.S)]


def test_the_curl_example_sends_a_valid_operation() -> None:
    (curl,) = _blocks("sh")
    words = shlex.split(curl.replace("\\\n", " "))
    body = json.loads(words[words.index("-d") + 1])
    assert body["query"].startswith("mutation { createPlayer")


async def test_the_walkthrough_runs_in_order(client: Client) -> None:
    blocks = _blocks("graphql")
    assert len(blocks) == 8  # the last one is the subscription
    first = await client.run(blocks[0])
    token = first["createPlayer"]["token"]
    curl_query = json.loads(shlex.split(_blocks("sh")[0].replace("\\\n", " "))[-1])["query"]
    assert (await client.run(curl_query))["createPlayer"]["token"]

    created = await client.run(blocks[1], token)
    game = created["createGame"]["gameId"]
    for block in blocks[2:4]:
        assert "version" in (await client.run(block, token, game=game))["addBot"]
    started = await client.run(blocks[4], token, game=game)
    assert started["startGame"]["events"][0]["type"] == "GameStarted"

    table = (await client.run(blocks[5], token, game=game))["game"]
    assert table["table"]["toAct"] == 0 and table["viewer"]["seat"] == 0
    action: dict[str, Any] = table["viewer"]["legalActions"][0]
    assert action["mutation"] == "playCard"
    played = await client.run(
        blocks[6], token, game=game, card=action["arguments"]["card"], version=table["version"]
    )
    assert played["playCard"]["events"][0]["type"] == "CardPlayed"
    again = await client.run(
        blocks[6], token, game=game, card=action["arguments"]["card"], version=table["version"]
    )
    assert again == played  # the idempotency key replays the first result


async def test_the_subscription_example_streams_the_game(client: Client) -> None:
    blocks = _blocks("graphql")
    token = (await client.run(blocks[0]))["createPlayer"]["token"]
    game = (await client.run(blocks[1], token))["createGame"]["gameId"]
    subscription = _section().split("```graphql\n")[-1].split("```")[0].strip()
    assert subscription.startswith("subscription")
    stream = await schema.subscribe(
        subscription,
        variable_values={"game": game},
        context_value=client.context(token, websocket=True),
    )
    first = await anext(stream)
    assert first.errors is None and first.data is not None
    assert first.data["gameEvents"]["seq"] == 1
    await stream.aclose()
