"""A game whose stored row is corrupted (garbage written through SQL into the
SQLite file while the server was down) is answered with a masked
``INTERNAL``, is never written to, and the server keeps serving the other
games (docs/operations.md "Fuzzing")."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.adapters.app_support import CHANGE, gql, new_game, new_player, running_app

VIEW = (
    "query($g: ID!) { game(id: $g) { ... on Game { version "
    "viewer { legalActions { mutation arguments } } } ... on Refusal { code } } }"
)
PLAY = f"mutation($g: ID!, $c: ID!) {{ playCard(gameId: $g, card: $c) {{ {CHANGE} }} }}"


def _garbage(column: str, value: str) -> Any:
    """How each case corrupts the ``state`` column of the ``games`` row."""
    state = json.loads(value)
    return {
        "not JSON": value[: len(value) // 2],
        "a list": "[1, 2, 3]",
        "a seat out of range": json.dumps(state | {"rat": 99}),
        "a card twice": json.dumps(
            state | {"discard": state["seats"][0]["hand"][:1] + state["discard"]}
        ),
        "an unknown phase": json.dumps(state | {"phase": "SIESTA"}),
        "a key missing": json.dumps({k: v for k, v in state.items() if k != "trick"}),
    }[column]


async def _started(client: httpx.AsyncClient, token: str) -> tuple[str, str]:
    """A started 3-seat game waiting for the caller's lead; a card to lead."""
    game = await new_game(client, token)
    for bot in ("GREEDY", "RANDOM"):
        q = f"mutation($g: ID!) {{ addBot(gameId: $g, strategy: {bot}) {{ {CHANGE} }} }}"
        await gql(client, q, token, g=game)
    await gql(
        client, f"mutation($g: ID!) {{ startGame(gameId: $g) {{ {CHANGE} }} }}", token, g=game
    )
    view = (await gql(client, VIEW, token, g=game))["data"]["game"]
    card: str = view["viewer"]["legalActions"][0]["arguments"]["card"]
    return game, card


def _rows(db: Path, game: str) -> tuple[Any, ...]:
    with sqlite3.connect(db) as conn:
        row = conn.execute(
            "SELECT state, version, last_seq, updated_at FROM games WHERE id = ?", (game,)
        ).fetchone()
        events = conn.execute("SELECT count(*) FROM game_events WHERE game_id = ?", (game,))
        return (*row, events.fetchone()[0])


def _internal_only(body: dict[str, Any]) -> None:
    assert body["errors"], body
    for error in body["errors"]:
        assert error["extensions"] == {"code": "INTERNAL"}, error
        assert error["message"] == "Internal error.", error
    assert "Traceback" not in json.dumps(body)


@pytest.mark.parametrize(
    "how",
    [
        "not JSON",
        "a list",
        "a seat out of range",
        "a card twice",
        "an unknown phase",
        "a key missing",
    ],
)
async def test_a_corrupt_game_is_internal_and_untouched_others_play_on(
    tmp_path: Path, how: str
) -> None:
    async with running_app(tmp_path) as (_, client):
        token = await new_player(client)
        broken, broken_card = await _started(client, token)
        healthy, healthy_card = await _started(client, token)
    db = tmp_path / "x.sqlite3"
    with sqlite3.connect(db) as conn:
        (state,) = conn.execute("SELECT state FROM games WHERE id = ?", (broken,)).fetchone()
        conn.execute("UPDATE games SET state = ? WHERE id = ?", (_garbage(how, state), broken))
    before = _rows(db, broken)

    async with running_app(tmp_path) as (_, client):
        _internal_only(await gql(client, VIEW, token, g=broken))
        _internal_only(await gql(client, PLAY, token, g=broken, c=broken_card))
        q = "query($g: ID!) { gameEvents(gameId: $g) { ... on GameEventPage { lastSeq } } }"
        _internal_only(await gql(client, q, token, g=broken))

        played = await gql(client, PLAY, token, g=healthy, c=healthy_card)
        assert "version" in played["data"]["playCard"], played
        view = await gql(client, VIEW, token, g=healthy)
        assert view["data"]["game"]["version"] >= played["data"]["playCard"]["version"]
        _internal_only(await gql(client, VIEW, token, g=broken))  # still, after the others

    assert _rows(db, broken) == before
