"""Notifications as a client reads them (issue #25): ``me.notifications``
after a seq, each kind typed (``__typename``), ``markNotificationsRead``
and ``unreadOnly``; bad input refused with its code."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import pytest

from tests.api.conftest import Client
from tests.api.http_view import HTTP_TRANSPORTS, http_stream, next_result, view_of
from tests.api.support import new_game, ok, refused

NOTIFICATIONS = (
    "query($after: Int!, $first: Int!, $unread: Boolean!) { me { notifications("
    "afterSeq: $after, first: $first, unreadOnly: $unread) { hasMore lastSeq notifications {"
    " seq at readAt gameId notice { __typename ... on YourInvitation { gameId hostId }"
    " ... on YourGameStarted { seat } ... on YourTurn { seat deadline } } } } } }"
)


async def _page(
    client: Client, token: str, after: int = 0, first: int = 20, unread: bool = False
) -> dict[str, Any]:
    data = await client.run(NOTIFICATIONS, token, after=after, first=first, unread=unread)
    page: dict[str, Any] = data["me"]["notifications"]
    return page


async def test_an_invited_player_reads_what_happened_and_marks_it_read(client: Client) -> None:
    host, bob = [(await client.new_player(n))[0] for n in ("ann", "bob")]
    host_id = (await client.run("query { me { id } }", host))["me"]["id"]
    bob_id = (await client.run("query { me { id } }", bob))["me"]["id"]
    game_id = await new_game(client, host, visibility="PRIVATE")
    assert await _page(client, bob) == {"hasMore": False, "lastSeq": 0, "notifications": []}
    await ok(client, host, "invitePlayers", gameId=game_id, playerIds=[bob_id])
    await ok(client, bob, "acceptInvitation", gameId=game_id)
    await ok(client, host, "addBot", gameId=game_id, strategy="GREEDY")
    await ok(client, host, "startGame", gameId=game_id)
    page = await _page(client, bob)
    kinds = [n["notice"]["__typename"] for n in page["notifications"]]
    assert kinds[:2] == ["YourInvitation", "YourGameStarted"]
    first = page["notifications"][0]
    assert first["seq"] == 1 and first["readAt"] is None and first["gameId"] == game_id
    assert first["notice"] == {"__typename": "YourInvitation", "gameId": game_id, "hostId": host_id}
    assert page["notifications"][1]["notice"] == {"__typename": "YourGameStarted", "seat": 1}
    assert page["lastSeq"] == len(kinds)
    one = await _page(client, bob, first=1)
    assert one["hasMore"] and one["lastSeq"] == 1
    rest = await _page(client, bob, after=1)
    assert [n["seq"] for n in rest["notifications"]] == list(range(2, len(kinds) + 1))

    done = await ok(client, bob, "markNotificationsRead", upToSeq=1)
    assert done == {"__typename": "NotificationsRead", "upToSeq": 1, "marked": 1}
    unread = await _page(client, bob, unread=True)
    assert [n["seq"] for n in unread["notifications"]] == list(range(2, len(kinds) + 1))
    assert (await _page(client, bob))["notifications"][0]["readAt"] is not None
    # the host's own notifications are their own
    assert all(
        n["notice"]["__typename"] != "YourInvitation"
        for n in (await _page(client, host))["notifications"]
    )


async def test_bad_input_is_refused_with_its_code(client: Client) -> None:
    ann = (await client.new_player("ann"))[0]
    await refused(client, ann, "markNotificationsRead", "BAD_INPUT", upToSeq=-1)
    for after, first in ((-1, 5), (0, 0), (0, 101)):
        errors = await client.errors(NOTIFICATIONS, ann, after=after, first=first, unread=False)
        assert errors[0]["extensions"]["code"] == "BAD_INPUT"
    anonymous = await client.errors("mutation { markNotificationsRead(upToSeq: 1) { __typename } }")
    assert anonymous[0]["extensions"]["code"] == "UNAUTHENTICATED"


SUBSCRIPTION = (
    "subscription($after: Int!) { notifications(afterSeq: $after) { seq gameId"
    " notice { __typename ... on YourInvitation { hostId } ... on YourGameStarted { seat } } } }"
)


@pytest.mark.parametrize("transport", ["ws", *HTTP_TRANSPORTS])
async def test_the_stream_on_every_transport_carries_only_its_players(
    client: Client, transport: str
) -> None:
    host, bob, eve = [(await client.new_player(n))[0] for n in ("ann", "bob", "eve")]
    bob_id, eve_id = [(await client.run("query { me { id } }", t))["me"]["id"] for t in (bob, eve)]
    game_id = await new_game(client, host, visibility="PRIVATE")
    await ok(client, host, "invitePlayers", gameId=game_id, playerIds=[bob_id])
    async with _stream(client, transport, bob) as bobs, _stream(client, transport, eve) as eves:
        first = await bobs()
        assert first == {
            "seq": 1,
            "gameId": game_id,
            "notice": {"__typename": "YourInvitation", "hostId": await _id_of(client, host)},
        }
        await ok(client, bob, "acceptInvitation", gameId=game_id)
        await ok(client, host, "addBot", gameId=game_id, strategy="GREEDY")
        await ok(client, host, "startGame", gameId=game_id)
        started = await bobs()
        assert started["seq"] == 2 and started["notice"]["__typename"] == "YourGameStarted"
        other = await new_game(client, host, visibility="PRIVATE")
        await ok(client, host, "invitePlayers", gameId=other, playerIds=[eve_id])
        eve_first = await eves()  # her own, and nothing of bob's before it
        assert eve_first["seq"] == 1 and eve_first["gameId"] == other


async def _id_of(client: Client, token: str) -> str:
    found: str = (await client.run("query { me { id } }", token))["me"]["id"]
    return found


@asynccontextmanager
async def _stream(
    client: Client, transport: str, token: str
) -> AsyncIterator[Callable[[], Awaitable[dict[str, Any]]]]:
    """The caller's notifications stream; each call: its next notification."""
    if transport == "ws":
        stream = await client.subscribe(SUBSCRIPTION, token, after=0)

        async def next_ws() -> dict[str, Any]:
            result = await asyncio.wait_for(anext(stream), 5)
            assert result.errors is None, result.errors
            found: dict[str, Any] = result.data["notifications"]
            return found

        try:
            yield next_ws
        finally:
            await stream.aclose()
        return
    view = view_of(client.h)
    async with http_stream(view, transport, SUBSCRIPTION, {"after": 0}, f"Bearer {token}") as items:

        async def next_http() -> dict[str, Any]:
            result = await next_result(items, 5)
            assert result is not None and "errors" not in result, result
            found: dict[str, Any] = result["data"]["notifications"]
            return found

        yield next_http


async def test_the_lobby_and_my_games_tell_a_correspondence_game_from_a_live_one(
    client: Client,
) -> None:
    """Issue #25: ``options.pace`` in the listing and in "my games";
    ``quickPlay(pace: CORRESPONDENCE)`` makes a game of a day a turn."""
    ann = (await client.new_player("ann"))[0]
    live = await new_game(client, ann)
    slow = await new_game(client, ann, turnSeconds=3600)
    quick = (await ok(client, ann, "quickPlay", seatCount=4, pace="CORRESPONDENCE"))["gameId"]
    listing = await client.run(
        "{ games(first: 50) { ... on GameConnection { edges { node { id options {"
        " pace turnSeconds } } } } } }",
        ann,
    )
    paces = {e["node"]["id"]: e["node"]["options"] for e in listing["games"]["edges"]}
    assert paces[live] == {"pace": "LIVE", "turnSeconds": 0}
    assert paces[slow] == {"pace": "CORRESPONDENCE", "turnSeconds": 3600}
    assert paces[quick] == {"pace": "CORRESPONDENCE", "turnSeconds": 86400}
    mine = await client.run(
        "{ me { games(first: 10) { edges { node { game { id options { pace } } } } } } }", ann
    )
    seen = {
        e["node"]["game"]["id"]: e["node"]["game"]["options"]["pace"]
        for e in mine["me"]["games"]["edges"]
    }
    assert seen == {live: "LIVE", slow: "CORRESPONDENCE", quick: "CORRESPONDENCE"}
