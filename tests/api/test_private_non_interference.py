"""A private game is no information to an outsider (issue #24,
docs/decisions/0062), as non-interference through the API.

World 1: besides a public game, a host plays a private game (invitations
sent, accepted and declined, its code rotated, bots seated, the game
started and played) and an unlisted one. World 2: only the public game.
An outsider (a signed-in player neither seated nor invited) watches the
lobby feed, reads the listing, their own lists, the private game's id
through every read (``game``, ``gameEvents``), every stream transport
(``schema.subscribe`` for both WebSocket protocols, Apollo's multipart
and GraphQL over SSE) and ``seatPresence``, and tries its mutations and a
guessed invite code. Every response must be the same bytes in both
worlds: a private game, whatever happens in it, looks like no game at all.

The comparison can fail: ``test_the_comparison_sees_a_leak`` makes the
private game public in world 1, and the outsider's responses then differ.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from domain.channels import LOBBY
from domain.records import Visibility
from tests.api.conftest import Client
from tests.api.http_view import HTTP_TRANSPORTS, http_stream, next_result, view_of
from tests.api.support import EVENT, GAME, call, new_game, ok
from tests.fakes import harness

Frames = list[tuple[str, bytes]]

LOBBY_FEED = "subscription { lobby { gameId status seatCount seatsTaken version } }"
EVENTS_SUB = f"subscription($id: ID!) {{ gameEvents(gameId: $id) {{ {EVENT} }} }}"
PRESENCE_SUB = "subscription($id: ID!) { seatPresence(gameId: $id) { seat connected } }"
EVENTS_LOG = (
    "query($id: ID!) { gameEvents(gameId: $id, first: 50) { __typename "
    "... on Refusal { code message } ... on GameEventPage { hasMore events { seq type } } } }"
)
LISTING = (
    "query { games(first: 50) { __typename ... on GameConnection { edges { cursor node { id "
    "status seatCount seatsTaken version createdAt } } pageInfo { hasNextPage endCursor } } } }"
)
MINE = (
    "query { me { invitations(first: 50) { edges { node { game { id } invitedBy } } } "
    "games(first: 50) { edges { node { game { id } seat } } } } }"
)
GUESSED_CODE = "7KQ2MX9P4T"


def _bytes(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True).encode()


def _result(result: Any) -> bytes:
    """An execution result as a client gets it: data and formatted errors."""
    errors = [e.formatted for e in result.errors] if result.errors else None
    return _bytes({"data": result.data, "errors": errors})


async def _pull(stream: Any) -> Any:
    return await asyncio.wait_for(stream.__anext__(), 5)


async def _hidden_play(client: Client, host: str, guest: str, other: str) -> tuple[str, str]:
    """World 1's private game (and an unlisted one): their ids."""
    private = await new_game(client, host, seatCount=4, visibility="PRIVATE")
    unlisted = await new_game(client, host, seatCount=3, visibility="UNLISTED")
    guest_id = (await client.run("query { me { id } }", guest))["me"]["id"]
    other_id = (await client.run("query { me { id } }", other))["me"]["id"]
    await ok(client, host, "invitePlayers", gameId=private, playerIds=[guest_id, other_id])
    await ok(client, other, "declineInvitation", gameId=private)
    await ok(client, guest, "acceptInvitation", gameId=private)
    await ok(client, host, "rotateInviteCode", gameId=private)
    for _ in range(2):
        await ok(client, host, "addBot", gameId=private, strategy="RANDOM")
    await ok(client, host, "startGame", gameId=private)
    await ok(client, host, "invitePlayers", gameId=unlisted, playerIds=[guest_id])
    await client.h.drain()
    return private, unlisted


async def _outsider(client: Client, token: str, game_id: str) -> Frames:
    """Everything the outsider tries on the private game's id."""
    frames: Frames = []
    frames.append(("game", _bytes(await client.run(GAME, token, id=game_id))))
    frames.append(("log", _bytes(await client.run(EVENTS_LOG, token, id=game_id))))
    frames.append(("listing", _bytes(await client.run(LISTING, token))))
    frames.append(("mine", _bytes(await client.run(MINE, token))))
    for name, args in (
        ("joinGame", {"gameId": game_id}),
        ("leaveGame", {"gameId": game_id}),
        ("startGame", {"gameId": game_id}),
        ("addBot", {"gameId": game_id, "strategy": "GREEDY"}),
        ("rematch", {"gameId": game_id}),
        ("reclaimSeat", {"gameId": game_id}),
        ("acceptInvitation", {"gameId": game_id}),
        ("declineInvitation", {"gameId": game_id}),
        ("rotateInviteCode", {"gameId": game_id}),
        ("clearInviteCode", {"gameId": game_id}),
        ("invitePlayers", {"gameId": game_id, "playerIds": ["id1"]}),
        ("cancelInvitation", {"gameId": game_id, "playerId": "id1"}),
        ("sendMessage", {"gameId": game_id, "to": 1, "text": "hi"}),
        ("pass", {"gameId": game_id}),
        ("joinByInviteCode", {"inviteCode": GUESSED_CODE}),
    ):
        frames.append((name, _bytes(await call(client, token, name, **args))))
    for query, label in ((EVENTS_SUB, "ws events"), (PRESENCE_SUB, "ws presence")):
        stream = await client.subscribe(query, token, id=game_id)
        frames.append((label, _result(await _pull(stream))))
        await stream.aclose()
    view = view_of(client.h)
    for transport in HTTP_TRANSPORTS:
        async with http_stream(
            view, transport, EVENTS_SUB, {"id": game_id}, f"Bearer {token}"
        ) as items:
            frames.append((f"{transport} events", _bytes(await next_result(items, 5))))
    return frames


async def _world(hidden: bool, probe: str | None, leak: bool = False) -> tuple[Frames, str]:
    """One world; the outsider's frames and the private game's id (world 1's,
    or ``probe`` in world 2). ``leak``: world 1's game is public instead."""
    client = Client(harness())
    host, guest, other, eve, pat, quin = [
        (await client.new_player(n))[0] for n in ("host", "guest", "other", "eve", "pat", "quin")
    ]
    feed = await client.subscribe(LOBBY_FEED, eve)
    first = asyncio.ensure_future(_pull(feed))
    while client.h.bus.subscriber_count(LOBBY) == 0:
        await asyncio.sleep(0)
    public = await new_game(client, pat, seatCount=3)
    frames: Frames = [("lobby", _result(await first))]
    if hidden:
        private, _ = await _hidden_play(client, host, guest, other)
        if leak:  # a server that forgot the game is private
            client.h.store.games[private].visibility = Visibility.PUBLIC
    else:
        assert probe is not None
        private = probe
    await ok(client, quin, "joinGame", gameId=public)  # the feed's next: the public game's
    frames.append(("lobby", _result(await _pull(feed))))
    await feed.aclose()
    frames += await _outsider(client, eve, private)
    return frames, private


def _first_difference(one: Frames, two: Frames) -> str | None:
    for (label, a), (_, b) in zip(one, two, strict=True):
        if a != b:
            return f"{label}:\n  {a.decode()[:400]}\n  {b.decode()[:400]}"
    return None


async def test_an_outsider_cannot_tell_a_private_game_from_none() -> None:
    one, game_id = await _world(True, None)
    two, _ = await _world(False, game_id)
    assert [label for label, _ in one] == [label for label, _ in two]
    assert _first_difference(one, two) is None
    # the outsider was refused on the private game, as on a game that never was
    assert b"NOT_FOUND" in dict(one)["game"] and b"NOT_FOUND" in dict(one)["ws events"]


async def test_the_comparison_sees_a_leak() -> None:
    one, game_id = await _world(True, None, leak=True)
    two, _ = await _world(False, game_id)
    assert (_first_difference(one, two) or "").startswith("game:")


@pytest.mark.parametrize("visibility", ["UNLISTED", "PRIVATE"])
async def test_neither_kind_is_on_the_feed_or_in_the_listing(visibility: str) -> None:
    client = Client(harness())
    host, eve = [(await client.new_player(n))[0] for n in ("host", "eve")]
    hidden = await new_game(client, host, seatCount=3, visibility=visibility)
    listing = await client.run(LISTING, eve)
    assert hidden not in json.dumps(listing)
    shown = await new_game(client, host, seatCount=3)
    assert [e["node"]["id"] for e in (await client.run(LISTING, eve))["games"]["edges"]] == [shown]
