"""createGame (every option), joinGame, leaveGame, addBot and startGame
through the schema (R2-R4)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.api.conftest import Client
from tests.api.support import game, mark, new_game, ok, players, refused, start


async def test_create_game_with_every_option(client: Client) -> None:
    host, host_id = await client.new_player("host")
    options = {
        "seatCount": 5,
        "format": "SEALED",
        "abilityTrigger": "EVERY_CARD",
        "refillHands": False,
        "seed": "my-seed",
        "practice": True,
        "ratSeat": 2,
        "takeSeat": False,
        "turnSeconds": 45,
        "bankSeconds": 300,
        "timeoutsToTakeover": 3,
    }
    r = await ok(client, host, "createGame", input=options)
    assert r["version"] == 1
    assert [e["type"] for e in r["events"]] == ["GameCreated"]
    created = r["events"][0]["data"]
    assert created["seatCount"] == 5 and created["chosenRatSeat"] == 2
    g = await game(client, host, r["gameId"])
    assert g["hostId"] == host_id
    assert (g["status"], g["seatCount"], g["ratSeat"]) == ("LOBBY", 5, 2)
    assert g["options"] == {
        "format": "SEALED",
        "abilityTrigger": "EVERY_CARD",
        "refillHands": False,
        "turnSeconds": 45,
        "bankSeconds": 300,
        "timeoutsToTakeover": 3,
    }
    assert [s["playerId"] for s in g["seats"]] == [None] * 5
    assert g["table"] is None and g["viewer"] is None
    assert client.h.store.games[r["gameId"]].seed == "my-seed"
    assert g["practice"] is True


async def test_create_game_defaults_seat_the_host_at_seat_zero(client: Client) -> None:
    host, host_id = await client.new_player("host")
    r = await ok(client, host, "createGame", input={"seatCount": 3})
    assert [e["type"] for e in r["events"]] == ["GameCreated", "SeatTaken"]
    g = await game(client, host, r["gameId"])
    assert g["options"] == {
        "format": "SINGLETON",
        "abilityTrigger": "LEAD_AND_RARE",
        "refillHands": True,
        "turnSeconds": 0,
        "bankSeconds": 0,
        "timeoutsToTakeover": 2,
    }
    assert g["seats"][0] == {
        "seat": 0,
        "playerId": host_id,
        "playerName": "host",
        "bot": None,
        "bankSeconds": None,
        "left": False,
    }
    assert g["deadline"] is None
    assert g["ratSeat"] is None
    stored = client.h.store.games[r["gameId"]]
    assert stored.seed and stored.salt, "a random seed and salt when absent"
    assert g["practice"] is False


@pytest.mark.parametrize(
    "bad",
    [
        {"seatCount": 2},
        {"seatCount": 9},
        {"seatCount": 3, "ratSeat": 3},
        {"seatCount": 3, "ratSeat": -1},
        {"seatCount": 3, "seed": "", "practice": True},
        {"seatCount": 3, "seed": "s" * 101, "practice": True},
        {"seatCount": 3, "seed": "chosen"},  # a chosen seed needs practice (0040)
        {"seatCount": 3, "seed": "chosen", "practice": False},
    ],
)
async def test_bad_game_settings_are_refused_with_bad_input(
    client: Client, bad: dict[str, Any]
) -> None:
    host, _ = await client.new_player()
    await refused(client, host, "createGame", "BAD_INPUT", input=bad)
    assert client.h.store.games == {}


async def test_join_takes_the_lowest_free_seat_or_the_named_one(client: Client) -> None:
    host, ann, bob = await players(client, 3)
    game_id = await new_game(client, host, seatCount=4)
    r = await ok(client, ann, "joinGame", gameId=game_id, seat=3)
    assert r["events"][0]["type"] == "SeatTaken"
    await ok(client, bob, "joinGame", gameId=game_id)
    g = await game(client, None, game_id)
    names = [s["playerName"] for s in g["seats"]]
    assert names == ["p0", "p2", None, "p1"]


async def test_join_refusals(client: Client) -> None:
    host, ann, bob = await players(client, 3)
    game_id = await new_game(client, host, seatCount=3)
    before = mark(client, game_id)
    await refused(client, host, "joinGame", "ILLEGAL_ACTION", gameId=game_id)
    await refused(client, ann, "joinGame", "ILLEGAL_ACTION", gameId=game_id, seat=0)
    await refused(client, ann, "joinGame", "BAD_INPUT", gameId=game_id, seat=3)
    await refused(client, ann, "joinGame", "NOT_FOUND", gameId="no-such-game")
    assert mark(client, game_id) == before
    await ok(client, ann, "joinGame", gameId=game_id)
    await ok(client, bob, "joinGame", gameId=game_id)
    c, _ = await client.new_player("late")
    await refused(client, c, "joinGame", "ILLEGAL_ACTION", gameId=game_id)


async def test_leave_gives_the_seat_back(client: Client) -> None:
    host, ann = await players(client, 2)
    game_id = await new_game(client, host, seatCount=3)
    await ok(client, ann, "joinGame", gameId=game_id)
    r = await ok(client, ann, "leaveGame", gameId=game_id)
    assert [e["type"] for e in r["events"]] == ["SeatLeft"]
    g = await game(client, None, game_id)
    assert [s["playerId"] for s in g["seats"]][1:] == [None, None]
    await refused(client, ann, "leaveGame", "ILLEGAL_ACTION", gameId=game_id)


async def test_the_host_adds_random_and_greedy_bots_and_starts(client: Client) -> None:
    host, _ = await client.new_player("host")
    game_id = await new_game(client, host, seatCount=3, ratSeat=0)
    random_bot = await ok(client, host, "addBot", gameId=game_id, strategy="RANDOM")
    greedy_bot = await ok(client, host, "addBot", gameId=game_id, strategy="GREEDY", seat=2)
    assert random_bot["events"][0]["data"] == {"seat": 1, "strategy": "random"}
    assert greedy_bot["events"][0]["data"] == {"seat": 2, "strategy": "greedy"}
    r = await ok(client, host, "startGame", gameId=game_id)
    assert [e["type"] for e in r["events"]] == ["GameStarted", "TrickStarted", "ActionRequired"]
    g = await game(client, host, game_id)
    assert [s["bot"] for s in g["seats"]] == [None, "RANDOM", "GREEDY"]
    assert g["status"] == "RUNNING"
    table = g["table"]
    assert table["ratSeat"] == 0 and table["phase"] == "LEAD" and table["toAct"] == 0
    assert [s["handSize"] for s in table["seats"]] == [10, 10, 10]
    assert table["ratDeckSize"] == 224 - 30
    assert table["trick"]["number"] == 1 and table["trick"]["prize"]["kind"] == "PRIZE"
    assert len(g["viewer"]["hand"]) == 10


async def test_only_the_host_seats_bots_and_starts(client: Client) -> None:
    host, ann = await players(client, 2)
    game_id = await new_game(client, host, seatCount=3)
    await ok(client, ann, "joinGame", gameId=game_id)
    before = mark(client, game_id)
    await refused(client, ann, "addBot", "FORBIDDEN", gameId=game_id, strategy="RANDOM")
    await ok(client, host, "addBot", gameId=game_id, strategy="GREEDY")
    before = mark(client, game_id)
    await refused(client, ann, "startGame", "FORBIDDEN", gameId=game_id)
    assert mark(client, game_id) == before


async def test_a_host_without_a_seat_runs_the_lobby(client: Client) -> None:
    host, ann = await players(client, 2)
    game_id = await new_game(client, host, seatCount=3, takeSeat=False)
    await ok(client, ann, "joinGame", gameId=game_id)
    await ok(client, host, "addBot", gameId=game_id, strategy="RANDOM")
    await ok(client, host, "addBot", gameId=game_id, strategy="GREEDY")
    await ok(client, host, "startGame", gameId=game_id)
    g = await game(client, host, game_id)
    assert g["status"] == "RUNNING" and g["viewer"] is None


async def test_start_needs_every_seat_filled_and_happens_once(client: Client) -> None:
    host, ann = await players(client, 2)
    game_id = await new_game(client, host, seatCount=3)
    await ok(client, ann, "joinGame", gameId=game_id)
    before = mark(client, game_id)
    message = await refused(client, host, "startGame", "ILLEGAL_ACTION", gameId=game_id)
    assert "1 seat" in message
    assert mark(client, game_id) == before
    await ok(client, host, "addBot", gameId=game_id, strategy="RANDOM")
    await ok(client, host, "startGame", gameId=game_id)
    before = mark(client, game_id)
    await refused(client, host, "startGame", "ILLEGAL_ACTION", gameId=game_id)
    await refused(client, host, "addBot", "ILLEGAL_ACTION", gameId=game_id, strategy="RANDOM")
    assert mark(client, game_id) == before


async def test_sealed_start_adds_each_persons_pack_to_their_collection(client: Client) -> None:
    tokens = await players(client, 2)
    game_id = await start(client, tokens, bots=["RANDOM"], format="SEALED")
    query = "{ me { collection { edges { node { gameId commons { id } rares { id } } } } } }"
    for token in tokens:
        packs = (await client.run(query, token))["me"]["collection"]["edges"]
        assert [p["node"]["gameId"] for p in packs] == [game_id]
    state = client.h.store.games[game_id].state
    assert state is not None and state.deck_size == 3 * 17


async def test_former_sealed_without_enough_cards_is_refused_and_changes_nothing(
    client: Client,
) -> None:
    tokens = await players(client, 3)
    game_id = await new_game(client, tokens[0], seatCount=3, format="FORMER_SEALED")
    for t in tokens[1:]:
        await ok(client, t, "joinGame", gameId=game_id)
    await ok(client, tokens[0], "openBoosterPack")
    before = mark(client, game_id)
    message = await refused(client, tokens[0], "startGame", "BAD_INPUT", gameId=game_id)
    assert "13" in message, "says how many cards are missing (R3.4)"
    assert mark(client, game_id) == before
    assert (await game(client, None, game_id))["status"] == "LOBBY"


async def test_former_sealed_starts_with_the_collections(client: Client) -> None:
    tokens = await players(client, 3)
    for t in tokens:
        await ok(client, t, "openBoosterPack")
        await ok(client, t, "openBoosterPack")
    game_id = await start(client, tokens, format="FORMER_SEALED", abilityTrigger="LEAD_ONLY")
    g = await game(client, tokens[0], game_id)
    assert g["options"]["format"] == "FORMER_SEALED"
    assert g["options"]["abilityTrigger"] == "LEAD_ONLY"
    assert g["table"]["ratDeckSize"] == 6 * 17 - 30


async def test_leaving_a_running_game_hands_the_seat_to_a_bot(client: Client) -> None:
    """docs/decisions/0046: the seat stays the player's, a bot plays it for
    good; reclaiming it is refused."""
    tokens = await players(client, 3)
    game_id = await start(client, tokens, turnSeconds=30)
    clock = await client.run(
        "query($id: ID!) { serverTime game(id: $id) { ... on Game { deadline } } }",
        tokens[0],
        id=game_id,
    )
    assert clock["game"]["deadline"] > clock["serverTime"]  # ISO 8601, both UTC
    r = await ok(client, tokens[2], "leaveGame", gameId=game_id)
    assert [e["__typename"] for e in r["events"]] == ["SeatTakenOver", "ActionRequired"]
    await refused(client, tokens[2], "reclaimSeat", "ILLEGAL_ACTION", gameId=game_id)
    await refused(client, tokens[2], "leaveGame", "ILLEGAL_ACTION", gameId=game_id)
    query = (
        "query($id: ID!) { game(id: $id) { ... on Game { options { turnSeconds"
        " timeoutsToTakeover } seats { seat playerId bot left bankSeconds } } } }"
    )
    data = await client.run(query, tokens[0], id=game_id)
    seat = data["game"]["seats"][2]
    assert seat["bankSeconds"] == 0
    assert (seat["bot"], seat["left"], seat["playerId"] is not None) == ("EXPERT", True, True)
    assert data["game"]["options"] == {"turnSeconds": 30, "timeoutsToTakeover": 2}
