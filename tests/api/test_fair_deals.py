"""Fair deals through the schema (docs/decisions/0040): nothing served while
a game runs (the game, the listing, every audience's log) holds its seed or
salt; ``GameStarted`` and ``Game`` show the commitment, ``GameEnded`` the
seed and salt that match it; practice games are marked everywhere."""

from __future__ import annotations

import json
from typing import Any

from domain.fairness import commitment
from tests.api.conftest import Client
from tests.api.support import EVENT, game, ok, players, send_action

LISTING = """query { games(first: 100) { __typename
  ... on GameConnection { edges { node { id practice status } } } } }"""

LOG = f"""query($id: ID!, $after: Int!) {{ gameEvents(gameId: $id, afterSeq: $after, first: 100) {{
  __typename ... on GameEventPage {{ hasMore lastSeq events {{ {EVENT} }} }} }} }}"""


async def whole_log(client: Client, token: str | None, game_id: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    while True:
        page = (await client.run(LOG, token, id=game_id, after=len(out)))["gameEvents"]
        out += page["events"]
        if not page["hasMore"]:
            return out


async def served(client: Client, tokens: list[str | None], game_id: str) -> str:
    """Everything a caller may read of the game now, for every caller."""
    out: list[Any] = [await client.run(LISTING)]
    for token in tokens:
        out += [await game(client, token, game_id), await whole_log(client, token, game_id)]
    return json.dumps(out)


async def test_nothing_served_while_a_game_runs_holds_its_seed_or_salt(client: Client) -> None:
    host, guest = await players(client, 2)
    game_id = (await ok(client, host, "createGame", input={"seatCount": 3}))["gameId"]
    await ok(client, guest, "joinGame", gameId=game_id)
    await ok(client, host, "addBot", gameId=game_id, strategy="GREEDY")
    await ok(client, host, "startGame", gameId=game_id)
    record = client.h.store.games[game_id]
    secret = (record.seed, record.salt)
    audiences: list[str | None] = [host, guest, None]
    tokens = [host, guest]
    for step in range(2_000):
        await client.h.drain()
        public = await game(client, None, game_id)
        if public["status"] == "FINISHED":
            break
        if step % 4 == 0:  # what a client can read before GameEnded
            text = await served(client, audiences, game_id)
            assert secret[0] not in text and secret[1] not in text
        token = tokens[public["table"]["toAct"]]
        action = (await game(client, token, game_id))["viewer"]["legalActions"][0]
        assert (await send_action(client, token, game_id, action))["__typename"] == "GameChange"
    else:
        raise AssertionError("the game did not end")

    expected = commitment(*secret)
    for token in audiences:
        log = await whole_log(client, token, game_id)
        *before, ended = log
        assert ended["type"] == "GameEnded"
        assert (ended["seed"], ended["salt"]) == secret
        assert (ended["data"]["seed"], ended["data"]["salt"]) == secret
        text = json.dumps(before)
        assert secret[0] not in text and secret[1] not in text
        (started,) = [e for e in log if e["type"] == "GameStarted"]
        assert (started["seedCommitment"], started["practice"]) == (expected, False)
        g = await game(client, token, game_id)
        assert (g["seedCommitment"], g["practice"]) == (expected, False)


async def test_a_practice_game_is_marked_on_the_game_the_listing_and_game_started(
    client: Client,
) -> None:
    (host,) = await players(client, 1)
    practice = (
        await ok(
            client, host, "createGame", input={"seatCount": 3, "seed": "mine", "practice": True}
        )
    )["gameId"]
    other = (await ok(client, host, "createGame", input={"seatCount": 3, "takeSeat": False}))[
        "gameId"
    ]
    listing = (await client.run(LISTING))["games"]["edges"]
    assert {e["node"]["id"]: e["node"]["practice"] for e in listing} == {
        practice: True,
        other: False,
    }
    for strategy in ("GREEDY", "RANDOM"):
        await ok(client, host, "addBot", gameId=practice, strategy=strategy)
    r = await ok(client, host, "startGame", gameId=practice)
    started = r["events"][0]
    assert started["type"] == "GameStarted" and started["practice"] is True
    assert started["data"]["practice"] is True
    assert (await game(client, None, practice))["practice"] is True
    record = client.h.store.games[practice]
    assert started["seedCommitment"] == commitment("mine", record.salt)
