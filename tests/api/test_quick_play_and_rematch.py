"""quickPlay and rematch through the schema (issue #15 parts 5-6,
docs/decisions/0048): refusals are coded and change nothing; a rematch's
``RematchOffered`` is a typed event on the finished game's log."""

from __future__ import annotations

from datetime import timedelta

from domain.services.quick_play import fill_due_games
from tests.api.conftest import Client
from tests.api.support import errors_of, game, mark, ok, play_to_end, players, refused, started
from tests.api.test_queries import events_page

KEPT = """query($id: ID!) { game(id: $id) { ... on Game {
  rematchId seats { playerId reservedFor } } } }"""

TYPED = """query($id: ID!, $after: Int!) {
  gameEvents(gameId: $id, afterSeq: $after, first: 10) {
    ... on GameEventPage { events { __typename gameId seq ... on RematchOffered { newGameId } } }
  } }"""


async def test_quick_play_seats_fills_and_starts(client: Client) -> None:
    a, b, c = await players(client, 3)
    first = await ok(client, a, "quickPlay", seatCount=3, format="SEALED")
    gid = first["gameId"]
    assert [e["type"] for e in first["events"]] == ["GameCreated", "SeatTaken"]
    assert (await ok(client, b, "quickPlay", seatCount=3, format="SEALED"))["gameId"] == gid
    other = await ok(client, c, "quickPlay", seatCount=3)  # SINGLETON: another game
    assert other["gameId"] != gid
    again = await ok(client, c, "quickPlay", seatCount=3)  # c waits there: it comes back
    assert again["gameId"] == other["gameId"] and again["events"] == []
    # waiting is per settings: c also takes the sealed game's last seat, which starts it
    last = await ok(client, c, "quickPlay", seatCount=3, format="SEALED")
    assert last["gameId"] == gid
    assert [e["type"] for e in last["events"]][:2] == ["SeatTaken", "GameStarted"]
    g = await game(client, a, gid)
    assert g["status"] == "RUNNING" and g["options"]["format"] == "SEALED"


async def test_quick_play_with_bots_after_a_delay(client: Client) -> None:
    (a,) = await players(client, 1)
    r = await ok(client, a, "quickPlay", seatCount=4, fillWithBotsAfter=10)
    client.h.clock.advance(timedelta(seconds=10))
    assert await fill_due_games(client.h.deps) == 1
    g = await game(client, a, r["gameId"])
    assert g["status"] == "RUNNING"
    assert [s["bot"] for s in g["seats"]] == [None, "GREEDY", "GREEDY", "GREEDY"]


async def test_bad_quick_play_is_refused_and_changes_nothing(client: Client) -> None:
    (a,) = await players(client, 1)
    before = dict(client.h.store.games)
    await refused(client, a, "quickPlay", "BAD_INPUT", seatCount=9)
    await refused(client, a, "quickPlay", "BAD_INPUT", seatCount=3, format="FORMER_SEALED")
    await refused(client, a, "quickPlay", "BAD_INPUT", seatCount=3, fillWithBotsAfter=-1)
    errors = await errors_of(client, None, "quickPlay", seatCount=3)
    assert [e["extensions"]["code"] for e in errors] == ["UNAUTHENTICATED"]
    assert client.h.store.games == before


async def test_rematch_over_graphql(client: Client) -> None:
    gid, tokens = await started(client, 3)
    await play_to_end(client, gid, list(tokens))
    ended = client.h.store.games[gid].last_seq
    stranger = (await players(client, 1))[0]
    kept = mark(client, gid)
    await refused(client, stranger, "rematch", "FORBIDDEN", gameId=gid)
    assert mark(client, gid) == kept
    r = await ok(client, tokens[2], "rematch", gameId=gid)
    new = r["gameId"]
    assert (await game(client, tokens[2], new))["status"] == "LOBBY"
    people = [o.player_id if o else None for o in client.h.store.games[gid].seats]
    g = (await client.run(KEPT, None, id=new))["game"]
    assert g["seats"] == [
        {"playerId": None, "reservedFor": people[0]},
        {"playerId": None, "reservedFor": people[1]},
        {"playerId": people[2], "reservedFor": None},
    ]
    assert (await client.run(KEPT, None, id=gid))["game"]["rematchId"] == new
    assert g["rematchId"] is None
    assert (await ok(client, tokens[0], "rematch", gameId=gid))["gameId"] == new
    # seat 0 is kept for its old player: a stranger is refused it
    await refused(client, stranger, "joinGame", "ILLEGAL_ACTION", gameId=new, seat=0)
    await ok(client, tokens[0], "joinGame", gameId=new)
    seats = (await client.run(KEPT, None, id=new))["game"]["seats"]
    assert seats[0] == {"playerId": people[0], "reservedFor": None}
    page = await events_page(client, None, gid, ended, 10)
    assert [e["type"] for e in page["events"]] == ["RematchOffered"]
    assert page["events"][0]["data"] == {"newGameId": new}
    data = await client.run(TYPED, tokens[1], id=gid, after=ended)
    (event,) = data["gameEvents"]["events"]
    assert event == {
        "__typename": "RematchOffered",
        "gameId": gid,
        "seq": ended + 1,
        "newGameId": new,
    }
