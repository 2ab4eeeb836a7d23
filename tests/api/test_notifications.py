"""Notifications as a client reads them (issue #25): ``me.notifications``
after a seq, each kind typed (``__typename``), ``markNotificationsRead``
and ``unreadOnly``; bad input refused with its code."""

from __future__ import annotations

from typing import Any

from tests.api.conftest import Client
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
