"""Private games and invitations as a client reads and sends them (issue
#24, docs/decisions/0062): the game's visibility, code and invitations,
``me.invitations`` page by page, the typed events, the coded refusals."""

from __future__ import annotations

from typing import Any

from tests.api.conftest import Client
from tests.api.support import errors_of, new_game, ok, refused

LOOK = (
    "query($id: ID!) { game(id: $id) { __typename ... on Refusal { code } ... on Game { "
    "visibility inviteCode invitations { playerId playerName invitedAt } } } }"
)
INVITATIONS = (
    "query($after: String) { me { invitations(first: 2, after: $after) { edges { cursor node "
    "{ game { id seatCount visibility } invitedBy invitedByName invitedAt } } "
    "pageInfo { hasNextPage endCursor } } } }"
)


async def _id(client: Client, token: str) -> str:
    found: str = (await client.run("query { me { id } }", token))["me"]["id"]
    return found


async def _look(client: Client, token: str, game_id: str) -> dict[str, Any]:
    found: dict[str, Any] = (await client.run(LOOK, token, id=game_id))["game"]
    return found


async def test_a_private_table_for_friends_from_creation_to_seats(client: Client) -> None:
    host, bob, cy, eve = [(await client.new_player(n))[0] for n in ("ann", "bob", "cy", "eve")]
    game_id = await new_game(client, host, seatCount=4, visibility="PRIVATE")
    mine = await _look(client, host, game_id)
    assert mine["visibility"] == "PRIVATE" and len(mine["inviteCode"]) == 10
    assert mine["invitations"] == []
    assert (await _look(client, eve, game_id)) == {"__typename": "Refusal", "code": "NOT_FOUND"}

    bob_id = await _id(client, bob)
    done = await ok(client, host, "invitePlayers", gameId=game_id, playerIds=[bob_id])
    assert [(e["type"], e["playerIds"]) for e in done["events"]] == [("PlayersInvited", [bob_id])]
    listed = (await _look(client, host, game_id))["invitations"]
    assert [(i["playerId"], i["playerName"]) for i in listed] == [(bob_id, "bob")]
    # bob, invited, sees the game but neither its code nor who else is invited
    assert (await _look(client, bob, game_id))["inviteCode"] is None
    page = (await client.run(INVITATIONS, bob))["me"]["invitations"]
    node = page["edges"][0]["node"]
    assert node["game"] == {"id": game_id, "seatCount": 4, "visibility": "PRIVATE"}
    assert node["invitedByName"] == "ann"
    taken = await ok(client, bob, "acceptInvitation", gameId=game_id)
    assert [e["type"] for e in taken["events"]] == ["SeatTaken"]
    assert (await _look(client, bob, game_id))["inviteCode"] == mine["inviteCode"]

    # cy comes in with the code, as typed from a message
    code = mine["inviteCode"].lower()
    joined = await ok(client, cy, "joinByInviteCode", inviteCode=f"{code[:5]}-{code[5:]}")
    assert joined["gameId"] == game_id
    rotated = await ok(client, host, "rotateInviteCode", gameId=game_id)
    assert [(e["type"], e["cleared"]) for e in rotated["events"]] == [("InviteCodeChanged", False)]
    assert mine["inviteCode"] not in str(rotated)
    assert (await _look(client, host, game_id))["inviteCode"] != mine["inviteCode"]
    message = await refused(client, eve, "joinByInviteCode", "NOT_FOUND", inviteCode=code)
    assert "invite code" in message


async def test_invitations_page_newest_first(client: Client) -> None:
    bob = (await client.new_player("bob"))[0]
    bob_id = await _id(client, bob)
    games = []
    for name in ("h1", "h2", "h3"):
        host = (await client.new_player(name))[0]
        games.append(await new_game(client, host, visibility="UNLISTED"))
        await ok(client, host, "invitePlayers", gameId=games[-1], playerIds=[bob_id])
    first = (await client.run(INVITATIONS, bob))["me"]["invitations"]
    rest = (await client.run(INVITATIONS, bob, after=first["pageInfo"]["endCursor"]))["me"][
        "invitations"
    ]
    seen = [e["node"]["game"]["id"] for e in first["edges"] + rest["edges"]]
    assert sorted(seen) == sorted(games) and len(set(seen)) == 3
    assert first["pageInfo"]["hasNextPage"] and not rest["pageInfo"]["hasNextPage"]
    bad = await client.errors(INVITATIONS, bob, after="not-a-cursor")
    assert bad[0]["extensions"]["code"] == "BAD_INPUT"


async def test_bad_input_is_refused_with_its_code(client: Client) -> None:
    host, bob = [(await client.new_player(n))[0] for n in ("ann", "bob")]
    public = await new_game(client, host)
    assert (await _look(client, bob, public))["inviteCode"] is None
    for code in ("", "short", "O" * 10, "x" * 500):
        await refused(client, bob, "joinByInviteCode", "BAD_INPUT", inviteCode=code)
    await refused(client, host, "rotateInviteCode", "BAD_INPUT", gameId=public)
    await refused(client, host, "invitePlayers", "BAD_INPUT", gameId=public, playerIds=[])
    await refused(client, host, "invitePlayers", "BAD_INPUT", gameId=public, playerIds=["nobody"])
    bad = await errors_of(client, host, "createGame", input={"seatCount": 3, "visibility": "X"})
    assert bad[0]["extensions"]["code"] == "BAD_INPUT" and "Visibility" in bad[0]["message"]


async def test_a_change_that_ends_your_sight_still_shows_you_its_result(client: Client) -> None:
    """Leaving a private lobby, or declining, ends your sight of the game,
    but not the result of that very change (its ``game``)."""
    host, bob, cy = [(await client.new_player(n))[0] for n in ("ann", "bob", "cy")]
    game_id = await new_game(client, host, visibility="PRIVATE")
    ids = [await _id(client, t) for t in (bob, cy)]
    await ok(client, host, "invitePlayers", gameId=game_id, playerIds=ids)
    await ok(client, bob, "acceptInvitation", gameId=game_id)
    for token, name in ((bob, "leaveGame"), (cy, "declineInvitation")):
        text = (
            f"mutation($g: ID!) {{ {name}(gameId: $g) {{ ... on GameChange {{ events {{ type }} "
            "game { id visibility seats { playerId } } } } }"
        )
        done = (await client.run(text, token, g=game_id))[name]
        assert done["game"]["id"] == game_id and done["game"]["visibility"] == "PRIVATE"
        assert (await _look(client, token, game_id))["code"] == "NOT_FOUND"
