"""Seat presence through the schema (docs/decisions/0047):
``Table.seats[].connected`` follows live subscriptions, the same for every
caller; ``seatPresence`` gives the state, then changes; neither reveals
anything hidden, nor touches the game's log."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest

from domain.ports import PresenceUnavailable
from domain.services import streams
from domain.services.seat_presence import review
from infra.presence.memory import InProcessPresence
from tests.api.conftest import Client
from tests.api.support import hands, mark, started, strings
from tests.api.test_subscriptions import pull, quiet
from tests.fakes import harness

GRACE = timedelta(seconds=15)
SEATS = "query($id: ID!) { game(id: $id) { ... on Game { table { seats { seat connected } } } } }"
EVENTS = "subscription($id: ID!) { gameEvents(gameId: $id) { seq } }"
PRESENCE = "subscription($id: ID!) { seatPresence(gameId: $id) { gameId seat connected } }"


@pytest.fixture
def client() -> Client:
    h = harness()
    h.deps = replace(h.deps, presence=InProcessPresence(), presence_grace=GRACE)
    return Client(h)


async def connected(client: Client, token: str | None, game_id: str) -> list[bool]:
    data = await client.run(SEATS, token, id=game_id)
    return [s["connected"] for s in data["game"]["table"]["seats"]]


async def test_connected_follows_live_subscriptions_the_same_for_everyone(
    client: Client,
) -> None:
    game_id, tokens = await started(client, 2, bots=["GREEDY"])
    assert await connected(client, None, game_id) == [False, False, True]  # a bot: true
    stream = await client.subscribe(EVENTS, tokens[1], id=game_id)
    await pull(stream)
    for caller in (None, tokens[0], tokens[1]):
        assert await connected(client, caller, game_id) == [False, True, True]
    await stream.aclose()
    assert await connected(client, None, game_id) == [False, True, True]  # the grace
    client.h.clock.advance(GRACE)
    await review(client.h.deps, game_id)
    assert await connected(client, tokens[0], game_id) == [False, False, True]


async def test_seat_presence_gives_the_state_then_changes(client: Client) -> None:
    game_id, tokens = await started(client, 3)
    before = mark(client, game_id)
    watching = await client.subscribe(PRESENCE, None, id=game_id)
    states = [(await pull(watching))["seatPresence"] for _ in range(3)]
    assert states == [{"gameId": game_id, "seat": s, "connected": False} for s in range(3)]
    seated = await client.subscribe(EVENTS, tokens[2], id=game_id)
    await pull(seated)
    change = (await pull(watching))["seatPresence"]
    assert change == {"gameId": game_id, "seat": 2, "connected": True}
    await seated.aclose()
    next_one = asyncio.ensure_future(pull(watching))
    await asyncio.sleep(0.05)
    assert not next_one.done()  # within the grace: nothing
    client.h.clock.advance(GRACE)
    await review(client.h.deps, game_id)
    change = (await next_one)["seatPresence"]
    assert change == {"gameId": game_id, "seat": 2, "connected": False}
    await quiet(watching)
    assert mark(client, game_id) == before  # not in the log, no version


async def test_presence_reveals_nothing_hidden(client: Client) -> None:
    game_id, tokens = await started(client, 3)
    streams = [await client.subscribe(EVENTS, t, id=game_id) for t in tokens]
    for s in streams:
        await pull(s)
    seen: list[Any] = []
    for caller in (None, *tokens):
        watching = await client.subscribe(PRESENCE, caller, id=game_id)
        seen.append([(await pull(watching))["seatPresence"] for _ in range(3)])
        await watching.aclose()
        seen.append(await client.run(SEATS, caller, id=game_id))
    assert all(s == seen[0] for s in seen[0::2]) and all(s == seen[1] for s in seen[1::2])
    cards = {c for hand in hands(client, game_id) for c in hand}
    assert not strings(seen) & cards
    assert strings(seen) <= {game_id}  # nothing but the game's id: no player, no card
    for s in streams:
        await s.aclose()


async def test_seat_presence_of_an_unknown_game_is_refused(client: Client) -> None:
    gen = await client.subscribe(PRESENCE, None, id="nope")
    result = await asyncio.wait_for(anext(gen), 2)
    assert result.errors and result.errors[0].extensions["code"] == "NOT_FOUND"


class AwayStore(InProcessPresence):
    """A presence store whose reads fail while ``away``, as the Redis
    adapter's do while Redis is away."""

    away = True

    async def online(self, game_id: str) -> frozenset[str]:
        if self.away:
            raise PresenceUnavailable("the presence store is away")
        return await super().online(game_id)


async def test_presence_away_is_null_and_the_rest_is_served(client: Client) -> None:
    """Presence is best effort (0047): with its store away a game query
    still answers, each player's seat ``connected: null`` (unknown), a
    bot's true; a game stream still runs."""
    game_id, tokens = await started(client, 2, bots=["GREEDY"])
    client.h.deps = replace(client.h.deps, presence=AwayStore())
    query = SEATS.replace("... on Game {", "... on Game { status")
    data = await client.run(query, tokens[0], id=game_id)
    game = data["game"]
    assert game["status"] == "RUNNING"
    assert [s["connected"] for s in game["table"]["seats"]] == [None, None, True]
    stream = await client.subscribe(EVENTS, tokens[1], id=game_id)
    assert (await pull(stream))["gameEvents"]["seq"] == 1
    await stream.aclose()


async def test_seat_presence_sends_the_state_once_the_store_is_back(
    client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No resync needs to come (the bus may be fine): the state it could not
    read is read again until it is sent."""
    monkeypatch.setattr(streams, "STATE_RETRY", 0.05)
    game_id, _ = await started(client, 2, bots=["GREEDY"])
    store = AwayStore()
    client.h.deps = replace(client.h.deps, presence=store)
    watching = await client.subscribe(PRESENCE, None, id=game_id)
    first = asyncio.ensure_future(pull(watching))
    await asyncio.sleep(0.2)  # a few retries while the store is away
    assert not first.done()  # nothing it cannot tell
    store.away = False
    states = [(await first)["seatPresence"], (await pull(watching))["seatPresence"]]
    assert [(s["seat"], s["connected"]) for s in states] == [(0, False), (1, False)]
    await quiet(watching)  # sent once: no more reads
    await watching.aclose()
