"""``Me.games`` and ``Me.stats`` over GraphQL (issue #24): the fields a
client reads, the cursor it passes back, a bad cursor or page size refused
with ``BAD_INPUT``, and nothing of another player's list."""

from __future__ import annotations

from tests.api.conftest import Client
from tests.api.support import new_game, start

GAMES = (
    "query($f: MyGamesFilter, $n: Int!, $a: String) { me { games(filter: $f, first: $n, "
    "after: $a) { edges { cursor node { seat yourTurn deadline lastChangeAt score place won "
    "game { id status } seats { seat playerName bot } } } pageInfo { hasNextPage endCursor } } "
    "stats { played won lines { format seatCount played won } } } }"
)


async def test_a_players_games_and_record_as_a_client_reads_them(client: Client) -> None:
    ann, _ = await client.new_player("ann")
    bob, _ = await client.new_player("bob")
    lobby = await new_game(client, ann)
    running = await start(client, [ann, bob], ["RANDOM"], ratSeat=0)  # ann (the Rat) leads

    page = (await client.run(GAMES, ann, n=1))["me"]["games"]
    (first,) = page["edges"]
    node = first["node"]
    assert node["game"] == {"id": running, "status": "RUNNING"} and node["yourTurn"]
    assert node["seat"] == 0 and node["deadline"] is None  # untimed
    assert [s["playerName"] for s in node["seats"]] == ["ann", "bob", None]
    assert node["seats"][2]["bot"] == "RANDOM" and node["score"] is None
    assert page["pageInfo"] == {"hasNextPage": True, "endCursor": first["cursor"]}
    rest = (await client.run(GAMES, ann, n=5, a=first["cursor"]))["me"]["games"]
    assert [e["node"]["game"]["id"] for e in rest["edges"]] == [lobby]
    assert not rest["pageInfo"]["hasNextPage"]

    waiting = (await client.run(GAMES, bob, n=5, f={"yourTurn": True}))["me"]["games"]
    assert waiting["edges"] == []  # bob's game waits for ann
    lobbies = (await client.run(GAMES, bob, n=5, f={"status": "LOBBY"}))["me"]["games"]
    assert lobbies["edges"] == []  # ann's lobby is not bob's
    stats = (await client.run(GAMES, ann, n=1))["me"]["stats"]
    assert stats == {"played": 0, "won": 0, "lines": []}


async def test_a_bad_cursor_or_page_size_is_bad_input(client: Client) -> None:
    ann, _ = await client.new_player("ann")
    for variables in ({"n": 5, "a": "not-a-cursor"}, {"n": 0}, {"n": 101}):
        errors = await client.errors(GAMES, ann, **variables)
        assert [e["extensions"]["code"] for e in errors] == ["BAD_INPUT"], errors
