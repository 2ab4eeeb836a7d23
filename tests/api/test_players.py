"""createPlayer, me and openBoosterPack through the schema (docs/clients.md
"Signing in", R1.6)."""

from __future__ import annotations

from typing import Any

import pytest

from domain.services.auth import token_hash
from tests.api.conftest import Client
from tests.api.support import CARD, call, ok, refused

ME = f"""{{ me {{ player {{ id name createdAt }}
  collection {{ totalCount pageInfo {{ hasNextPage endCursor }}
    edges {{ node {{ id gameId house commons {{ {CARD} }} rares {{ {CARD} }} }} }} }} }} }}"""
PAGE = """query($first: Int!, $after: String) { me { collection(first: $first, after: $after) {
  totalCount pageInfo { hasNextPage endCursor } edges { cursor node { id openedAt } } } } }"""


def packs(me: dict[str, Any]) -> list[dict[str, Any]]:
    return [e["node"] for e in me["collection"]["edges"]]


async def test_create_player_returns_a_token_that_authenticates_as_that_player(
    client: Client,
) -> None:
    r = await ok(client, None, "createPlayer", name="  Muffin  ")
    assert r["player"]["name"] == "Muffin"
    me = (await client.run(ME, r["token"]))["me"]
    assert me["player"]["id"] == r["player"]["id"]
    assert me["player"]["name"] == "Muffin"
    assert me["collection"] == {
        "totalCount": 0,
        "pageInfo": {"hasNextPage": False, "endCursor": None},
        "edges": [],
    }


async def test_only_a_hash_of_the_token_is_stored(client: Client) -> None:
    token, player_id = await client.new_player("ann")
    assert client.h.store.hashes_of(player_id) == [token_hash(token)]
    assert token not in repr(client.h.store)


async def test_two_players_get_different_tokens_and_ids(client: Client) -> None:
    a, b = await client.new_player("a"), await client.new_player("b")
    assert a[0] != b[0] and a[1] != b[1]


@pytest.mark.parametrize("name", ["", "   ", "x" * 41, "tab\there", "new\nline"])
async def test_a_bad_name_is_refused_with_bad_input_and_creates_nobody(
    client: Client, name: str
) -> None:
    await refused(client, None, "createPlayer", "BAD_INPUT", name=name)
    assert client.h.store.players == {}


async def test_create_player_with_a_key_returns_the_same_token_once_created(
    client: Client,
) -> None:
    first = await ok(
        client, None, "createPlayer", name="ann", idempotencyKey="k-1-0123456789abcdef"
    )
    again = await ok(
        client, None, "createPlayer", name="ann", idempotencyKey="k-1-0123456789abcdef"
    )
    assert again == first
    assert len(client.h.store.players) == 1
    me = (await client.run(ME, again["token"]))["me"]
    assert me["player"]["id"] == first["player"]["id"]


async def test_create_player_with_a_used_key_and_another_name_is_refused(
    client: Client,
) -> None:
    await ok(client, None, "createPlayer", name="ann", idempotencyKey="k-1-0123456789abcdef")
    await refused(
        client,
        None,
        "createPlayer",
        "IDEMPOTENCY_KEY_REUSED",
        name="bob",
        idempotencyKey="k-1-0123456789abcdef",
    )
    assert len(client.h.store.players) == 1


async def test_open_booster_pack_adds_a_pack_to_my_collection(client: Client) -> None:
    token, player_id = await client.new_player()
    pack = await ok(client, token, "openBoosterPack")
    assert pack["gameId"] is None
    commons, rares = pack["commons"], pack["rares"]
    assert len(commons) == 15 and len(rares) == 2
    ids = [c["id"] for c in commons + rares]
    assert len(set(ids)) == 17, "no design repeats within a pack (R1.6)"
    assert all(not c["rare"] and c["value"] <= 29 and c["kind"] == "NUMBERED" for c in commons)
    assert all(c["rare"] and c["value"] >= 30 for c in rares)
    assert pack["house"] in {"CRAZY", "STINKY", "SLEEPY", "HUNGRY", "NEEDY", "CURIOUS", "SASSY"}
    me = (await client.run(ME, token))["me"]
    assert [p["id"] for p in packs(me)] == [pack["id"]]
    assert packs(me)[0]["commons"] == commons
    assert me["collection"]["totalCount"] == 1
    assert [r.player_id for r in client.h.store.boosters] == [player_id]


async def test_open_booster_pack_with_a_key_opens_once(client: Client) -> None:
    token, _ = await client.new_player()
    first = await ok(client, token, "openBoosterPack", idempotencyKey="pack-1")
    again = await ok(client, token, "openBoosterPack", idempotencyKey="pack-1")
    other = await ok(client, token, "openBoosterPack", idempotencyKey="pack-2")
    assert again == first
    assert other["id"] != first["id"]
    assert len(client.h.store.boosters) == 2


async def test_a_key_is_per_player(client: Client) -> None:
    ann, _ = await client.new_player("ann")
    bob, _ = await client.new_player("bob")
    a = await ok(client, ann, "openBoosterPack", idempotencyKey="same")
    b = await ok(client, bob, "openBoosterPack", idempotencyKey="same")
    assert a["id"] != b["id"]
    assert len(client.h.store.boosters) == 2


async def test_open_booster_pack_with_a_bad_key_is_refused(client: Client) -> None:
    token, _ = await client.new_player()
    r = await call(client, token, "openBoosterPack", idempotencyKey="")
    assert (r["__typename"], r["code"]) == ("Refusal", "BAD_INPUT")
    assert client.h.store.boosters == []


def test_the_player_cache_is_bounded_and_keeps_known_tokens_only() -> None:
    from datetime import UTC, datetime

    from api.graphql.player_cache import PlayerCache
    from domain.records import Player

    cache = PlayerCache(size=2)
    players = [Player(f"p{i}", f"n{i}", datetime.now(UTC)) for i in range(3)]
    cache.put("t0", players[0])
    cache.put("t1", players[1])
    assert cache.get("t0") == players[0]  # t0 is now the most recent
    cache.put("t2", players[2])
    assert cache.get("t1") is None and cache.get("t0") == players[0]
    assert cache.get("unknown") is None


async def test_me_is_null_for_an_anonymous_caller_and_its_siblings_survive(
    client: Client,
) -> None:
    """``me`` is nullable: an anonymous ``{ me {...} cardCatalog {...} }``
    gets its catalogue and ``me: null``, no error (a non-null ``me`` that
    failed would null the whole ``data``)."""
    data = await client.run("{ me { player { id } } cardCatalog { id } }")
    assert data["me"] is None
    assert len(data["cardCatalog"]) > 0


@pytest.mark.parametrize("authorization", ["Bearer not-a-token", "Basic x"])
async def test_me_with_a_bad_token_is_still_unauthenticated(
    client: Client, authorization: str
) -> None:
    errors = await client.errors("{ me { player { id } } }", raw_authorization=authorization)
    assert [e["extensions"]["code"] for e in errors] == ["UNAUTHENTICATED"]


async def test_the_collection_is_paged_oldest_first_and_never_listed_whole(
    client: Client,
) -> None:
    """Issue #22: a list that grows with use is paged (at most 100 a page)."""
    token, player_id = await client.new_player()
    opened = [(await ok(client, token, "openBoosterPack"))["id"] for _ in range(5)]
    seen: list[str] = []
    after = None
    while True:
        page = (await client.run(PAGE, token, first=2, after=after))["me"]["collection"]
        assert page["totalCount"] == 5 and len(page["edges"]) <= 2
        seen += [e["node"]["id"] for e in page["edges"]]
        assert page["pageInfo"]["endCursor"] == page["edges"][-1]["cursor"]
        after = page["pageInfo"]["endCursor"]
        if not page["pageInfo"]["hasNextPage"]:
            break
    assert seen == opened and len(client.h.store.boosters) == 5
    assert [r.player_id for r in client.h.store.boosters] == [player_id] * 5


@pytest.mark.parametrize("first", [0, 101, -1])
async def test_a_collection_page_out_of_range_is_refused(client: Client, first: int) -> None:
    token, _ = await client.new_player()
    [error] = await client.errors(PAGE, token, first=first)
    assert error["extensions"]["code"] == "BAD_INPUT" and "1 to 100" in error["message"]


async def test_a_collection_cursor_that_is_not_one_is_refused(client: Client) -> None:
    token, _ = await client.new_player()
    [error] = await client.errors(PAGE, token, first=5, after="not-a-cursor")
    assert error["extensions"]["code"] == "BAD_INPUT" and "cursor" in error["message"]
