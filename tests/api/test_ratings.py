"""Ratings over GraphQL (issue #26): a rated game as a client plays it,
``GameEnded.ratings`` in the log, ``player { rating ratings }``,
``leaderboard`` and ``me { rank }``; bad input refused with ``BAD_INPUT``."""

from __future__ import annotations

from dataclasses import replace

from domain.ratings import RatingPolicy
from tests.api.conftest import Client
from tests.api.support import call, ok, play_to_end, refused

ENDED = (
    "query($g: ID!, $s: Int!) { gameEvents(gameId: $g, afterSeq: $s, first: 100) { ... on "
    "GameEventPage { hasMore lastSeq events { __typename ... on GameEnded { ratings { seat "
    "pool before after change deviation games provisional } } } } } }"
)
RATINGS = (
    "query($p: ID!) { player(id: $p) { name rating(pool: SINGLETON_3_4) { pool rating "
    "deviation mu sigma games provisional lastPlayedAt } ratings { pool games } } }"
)
BOARD = (
    "query($n: Int!, $a: String) { leaderboard(pool: SINGLETON_3_4, first: $n, after: $a) "
    "{ pool standings { rank playerId bot name cursor rating { rating games } } "
    "pageInfo { hasNextPage endCursor } } }"
)
RANK = "{ me { rank(pool: SINGLETON_3_4) } }"


async def _rated_game(client: Client, tokens: list[str]) -> str:
    game_id: str = (
        await ok(client, tokens[0], "createGame", input={"seatCount": 3, "rated": True})
    )["gameId"]
    await ok(client, tokens[1], "joinGame", gameId=game_id)
    await ok(client, tokens[0], "addBot", gameId=game_id, strategy="GREEDY")
    await ok(client, tokens[0], "startGame", gameId=game_id)
    return game_id


async def test_a_rated_game_as_a_client_sees_it(client: Client) -> None:
    ann, ann_id = await client.new_player("ann")
    bob, _ = await client.new_player("bob")
    game_id = await _rated_game(client, [ann, bob])
    g = await client.run(
        "query($g: ID!) { game(id: $g) { ... on Game { rated } } }", ann, g=game_id
    )
    assert g["game"]["rated"] is True
    await play_to_end(client, game_id, [ann, bob, None])
    events, seq, more = [], 0, True
    while more:
        page = (await client.run(ENDED, ann, g=game_id, s=seq))["gameEvents"]
        events += page["events"]
        seq, more = page["lastSeq"], page["hasMore"]
    (ended,) = [e for e in events if e["__typename"] == "GameEnded"]
    seats = ended["ratings"]
    assert [s["seat"] for s in seats] == [0, 1, 2]
    assert all(s["pool"] == "SINGLETON_3_4" and s["before"] == 1500 for s in seats)
    assert all(s["change"] == s["after"] - 1500 and s["games"] == 1 for s in seats)
    assert all(s["provisional"] for s in seats)

    mine = (await client.run(RATINGS, bob, p=ann_id))["player"]
    assert mine["rating"]["rating"] == seats[0]["after"] and mine["rating"]["games"] == 1
    assert mine["ratings"] == [{"pool": "SINGLETON_3_4", "games": 1}]
    none = (await client.run(RATINGS, ann, p="no-such-player"))["player"]
    assert none is None
    # provisional (one game of ten): on no board, no rank
    assert (await client.run(BOARD, ann, n=5))["leaderboard"]["standings"] == []
    assert (await client.run(RANK, ann))["me"]["rank"] is None


async def test_settled_ratings_are_on_the_board_and_ranked(client: Client) -> None:
    client.h.deps = replace(client.h.deps, ratings=RatingPolicy(provisional_games=1))
    ann, ann_id = await client.new_player("ann")
    bob, bob_id = await client.new_player("bob")
    await play_to_end(client, await _rated_game(client, [ann, bob]), [ann, bob, None])
    board = (await client.run(BOARD, ann, n=2))["leaderboard"]
    lines = board["standings"]
    assert [line["rank"] for line in lines] == [1, 2] and board["pageInfo"]["hasNextPage"]
    rest = (await client.run(BOARD, ann, n=5, a=board["pageInfo"]["endCursor"]))["leaderboard"]
    lines += rest["standings"]
    assert [line["rank"] for line in lines] == [1, 2, 3]
    assert {line["playerId"] for line in lines} == {ann_id, bob_id, None}
    (bot,) = [line for line in lines if line["playerId"] is None]
    assert bot["bot"] == "GREEDY" and bot["name"] == "GREEDY bot"
    ranks = {line["playerId"]: line["rank"] for line in lines}
    assert (await client.run(RANK, ann))["me"]["rank"] == ranks[ann_id]
    assert (await client.run(RANK, bob))["me"]["rank"] == ranks[bob_id]


async def test_bad_input_is_refused_and_changes_nothing(client: Client) -> None:
    ann, _ = await client.new_player("ann")
    games = len(client.h.store.games)
    await refused(
        client,
        ann,
        "createGame",
        "BAD_INPUT",
        input={"seatCount": 3, "rated": True, "seed": "x", "practice": True},
    )
    assert len(client.h.store.games) == games
    for variables in ({"n": 5, "a": "not-a-cursor"}, {"n": 0}, {"n": 101}):
        errors = await client.errors(BOARD, ann, **variables)
        assert [e["extensions"]["code"] for e in errors] == ["BAD_INPUT"], errors
    lone = (await ok(client, ann, "createGame", input={"seatCount": 3, "rated": True}))["gameId"]
    for _ in range(2):
        await ok(client, ann, "addBot", gameId=lone, strategy="GREEDY")
    await refused(client, ann, "startGame", "ILLEGAL_ACTION", gameId=lone)
    quick = await call(client, ann, "quickPlay", seatCount=3, rated=True)
    assert quick["__typename"] == "GameChange"
