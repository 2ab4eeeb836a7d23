"""Queries: game(id) for every role (R11), games (pagination, filter),
cardCatalog and the gameEvents log."""

from __future__ import annotations

from typing import Any

import pytest

from tests.api.conftest import Client
from tests.api.support import game, hands, new_game, play_to_end, started, strings

GAMES = """query($first: Int!, $after: String, $status: GameStatus) {
  games(first: $first, after: $after, status: $status) {
    __typename ... on Refusal { code message }
    ... on GameConnection {
      edges { cursor node { id status hostId seatCount seatsTaken version createdAt
                            options { format } } }
      pageInfo { hasNextPage endCursor } } } }"""

EVENTS = """query($id: ID!, $after: Int!, $first: Int!) {
  gameEvents(gameId: $id, afterSeq: $after, first: $first) {
    __typename ... on Refusal { code message }
    ... on GameEventPage { hasMore lastSeq events { gameId seq type at data } } } }"""


async def games_page(client: Client, first: int, **kw: Any) -> dict[str, Any]:
    data = await client.run(GAMES, None, first=first, **kw)
    page: dict[str, Any] = data["games"]
    return page


async def events_page(
    client: Client, token: str | None, game_id: str, after: int, first: int
) -> dict[str, Any]:
    data = await client.run(EVENTS, token, id=game_id, after=after, first=first)
    page: dict[str, Any] = data["gameEvents"]
    return page


async def test_each_seat_sees_its_own_hand_and_no_other(client: Client) -> None:
    game_id, tokens = await started(client, 3, ratSeat=1)
    held = hands(client, game_id)
    for seat, token in enumerate(tokens):
        g = await game(client, token, game_id)
        viewer = g["viewer"]
        assert viewer["seat"] == seat
        assert sorted(c["id"] for c in viewer["hand"]) == sorted(held[seat])
        others = {c for s, h in enumerate(held) if s != seat for c in h}
        assert not strings(g) & others, f"seat {seat} sees another seat's card"
        assert g["table"]["seats"][seat]["isRat"] is (seat == 1)
    rat_view = await game(client, tokens[1], game_id)
    assert rat_view["viewer"]["legalActions"], "the Rat leads trick 1"


async def test_spectators_and_anonymous_callers_see_the_public_table_only(
    client: Client,
) -> None:
    game_id, _ = await started(client, 3)
    spectator, _ = await client.new_player("spectator")
    seen = await game(client, spectator, game_id)
    anonymous = await game(client, None, game_id)
    assert seen == anonymous
    assert seen["viewer"] is None
    held = hands(client, game_id)
    assert [s["handSize"] for s in seen["table"]["seats"]] == [len(h) for h in held]
    assert not strings(seen) & {c for h in held for c in h}


async def test_a_wrong_token_is_not_treated_as_anonymous(client: Client) -> None:
    game_id, _ = await started(client, 3)
    errors = await client.errors(
        "query($id: ID!) { game(id: $id) { __typename } }", "not-a-token", id=game_id
    )
    assert [e["extensions"]["code"] for e in errors] == ["UNAUTHENTICATED"]


async def test_unknown_game_is_a_not_found_refusal(client: Client) -> None:
    data = await client.run('{ game(id: "nope") { __typename ... on Refusal { code message } } }')
    assert data["game"]["__typename"] == "Refusal"
    assert data["game"]["code"] == "NOT_FOUND"


async def test_card_catalog_lists_the_224_designs(client: Client) -> None:
    designs = (await client.run("{ cardCatalog { id house value rare } }"))["cardCatalog"]
    assert len(designs) == 224
    assert len({d["id"] for d in designs}) == 224
    for house in {d["house"] for d in designs}:
        values = sorted(d["value"] for d in designs if d["house"] == house)
        assert values == list(range(1, 33))
    assert len({d["house"] for d in designs}) == 7
    assert all(d["rare"] is (d["value"] >= 30) for d in designs)
    assert all(d["id"] == f"{d['house'].lower()}-{d['value']}" for d in designs)


async def test_games_pages_newest_first_with_cursors(client: Client) -> None:
    host, _ = await client.new_player()
    made = [await new_game(client, host) for _ in range(5)]
    seen: list[str] = []
    after = None
    pages = 0
    while True:
        page = await games_page(client, 2, after=after)
        assert page["__typename"] == "GameConnection"
        seen += [e["node"]["id"] for e in page["edges"]]
        pages += 1
        if not page["pageInfo"]["hasNextPage"]:
            break
        after = page["pageInfo"]["endCursor"]
        assert after == page["edges"][-1]["cursor"]
    assert pages == 3
    assert seen == made[::-1]


async def test_games_filter_by_status(client: Client) -> None:
    lobby_host, _ = await client.new_player()
    lobby_id = await new_game(client, lobby_host)
    running_id, _ = await started(client, 3)
    finished_id, tokens = await started(client, 3)
    await play_to_end(client, finished_id, list(tokens))
    for status, expected in [
        ("LOBBY", [lobby_id]),
        ("RUNNING", [running_id]),
        ("FINISHED", [finished_id]),
    ]:
        page = await games_page(client, 10, status=status)
        assert [e["node"]["id"] for e in page["edges"]] == expected
        assert all(e["node"]["status"] == status for e in page["edges"])
    everything = await games_page(client, 10)
    assert len(everything["edges"]) == 3
    assert everything["pageInfo"] == {
        "hasNextPage": False,
        "endCursor": everything["edges"][-1]["cursor"],
    }


async def test_an_empty_listing_has_no_cursor(client: Client) -> None:
    page = await games_page(client, 5)
    assert page == {
        "__typename": "GameConnection",
        "edges": [],
        "pageInfo": {"hasNextPage": False, "endCursor": None},
    }


@pytest.mark.parametrize("first", [0, -1, 101])
async def test_a_page_size_out_of_range_is_refused(client: Client, first: int) -> None:
    page = await games_page(client, first)
    assert (page["__typename"], page["code"]) == ("Refusal", "BAD_INPUT")


async def test_page_size_100_is_allowed(client: Client) -> None:
    page = await games_page(client, 100)
    assert page["__typename"] == "GameConnection"


@pytest.mark.parametrize(
    "cursor", ["garbage", "%%%", "bm9waXBl", "MjAyNi0wMS0wMVQwMDowMDowMHxpZDE="]
)
async def test_a_cursor_not_from_this_listing_is_refused(client: Client, cursor: str) -> None:
    host, _ = await client.new_player()
    await new_game(client, host)
    page = await games_page(client, 5, after=cursor)
    assert (page["__typename"], page["code"]) == ("Refusal", "BAD_INPUT")


async def test_game_events_come_in_pages_without_gaps(client: Client) -> None:
    game_id, _ = await started(client, 3)
    last_seq = (await game(client, None, game_id))["lastSeq"]
    assert last_seq >= 5
    seqs: list[int] = []
    after = 0
    while True:
        page = await events_page(client, None, game_id, after, 2)
        assert page["__typename"] == "GameEventPage"
        assert len(page["events"]) <= 2
        seqs += [e["seq"] for e in page["events"]]
        after = page["lastSeq"]
        if not page["hasMore"]:
            break
    assert seqs == list(range(1, last_seq + 1))
    assert after == last_seq
    tail = await events_page(client, None, game_id, last_seq - 1, 50)
    assert [e["seq"] for e in tail["events"]] == [last_seq]
    empty = await events_page(client, None, game_id, last_seq, 50)
    assert empty == {
        "__typename": "GameEventPage",
        "hasMore": False,
        "lastSeq": last_seq,
        "events": [],
    }


async def test_game_events_are_each_callers_projection(client: Client) -> None:
    game_id, tokens = await started(client, 3)
    held = hands(client, game_id)
    public = (await events_page(client, None, game_id, 0, 50))["events"]
    assert not strings(public) & {c for h in held for c in h}
    started_public = next(e for e in public if e["type"] == "GameStarted")
    assert "hand" not in started_public["data"]
    for seat, token in enumerate(tokens):
        own = (await events_page(client, token, game_id, 0, 50))["events"]
        assert [e["seq"] for e in own] == [e["seq"] for e in public], "every seq, every audience"
        dealt = next(e for e in own if e["type"] == "GameStarted")["data"]["hand"]
        assert sorted(dealt) == sorted(held[seat])
        others = {c for s, h in enumerate(held) if s != seat for c in h}
        assert not strings(own) & others


@pytest.mark.parametrize(("after", "first"), [(-1, 10), (0, 0), (0, 101)])
async def test_game_events_bad_arguments_are_refused(
    client: Client, after: int, first: int
) -> None:
    game_id, _ = await started(client, 3)
    page = await events_page(client, None, game_id, after, first)
    assert (page["__typename"], page["code"]) == ("Refusal", "BAD_INPUT")


async def test_game_events_of_an_unknown_game_is_not_found(client: Client) -> None:
    page = await events_page(client, None, "nope", 0, 10)
    assert (page["__typename"], page["code"]) == ("Refusal", "NOT_FOUND")
