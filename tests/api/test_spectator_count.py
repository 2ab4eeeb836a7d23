"""``Game.spectatorCount`` (issue #28): the subscriptions to a game's
public stream, through the WebSocket handlers as a server runs them; a
seated player's stream is not counted; a completed operation and a closed
connection leave the count at once."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from typing import Any

from api.fast.push import TransportWSHandler
from infra.spectators.local import LocalSpectators, bus_channels
from infra.spectators.memory import InProcessSpectators
from tests.api.conftest import Client
from tests.api.test_push import Socket, handler, subscribe, table
from tests.api.test_subscriptions import EVENTS

COUNT = "query($id: ID!) { game(id: $id) { ... on Game { spectatorCount } } }"


def counting(client: Client) -> None:
    bus = client.h.bus
    spectators = InProcessSpectators(LocalSpectators(bus, bus_channels(bus)))
    client.h.deps = dataclasses.replace(client.h.deps, spectators=spectators)


async def spectators(client: Client, game_id: str) -> int:
    data = await client.run(COUNT, id=game_id)
    n: int = data["game"]["spectatorCount"]
    return n


async def reaches(client: Client, game_id: str, expected: int, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while (n := await spectators(client, game_id)) != expected:
        assert time.monotonic() < deadline, f"spectatorCount stayed {n}, not {expected}"
        await asyncio.sleep(0.01)


async def test_spectators_are_counted_and_seats_are_not(client: Client) -> None:
    counting(client)
    game_id, tokens = await table(client)
    assert await spectators(client, game_id) == 0
    watchers: list[Any] = [handler(TransportWSHandler, client, Socket()) for _ in range(3)]
    for h in watchers:
        await subscribe(h, "s", EVENTS, id=game_id, after=0)
    seated = handler(TransportWSHandler, client, Socket(), tokens[0])
    await subscribe(seated, "p", EVENTS, id=game_id, after=0)
    await reaches(client, game_id, 3)

    await watchers[0].handle_message({"type": "complete", "id": "s"})  # unsubscribed
    await reaches(client, game_id, 2)
    await watchers[1].cleanup_operation("s")  # as when its connection closes
    await reaches(client, game_id, 1)
    await watchers[2].shutdown()
    await reaches(client, game_id, 0)
    await seated.shutdown()


async def test_without_a_counter_it_reads_zero(client: Client) -> None:
    game_id, _ = await table(client)
    h = handler(TransportWSHandler, client, Socket())
    await subscribe(h, "s", EVENTS, id=game_id, after=0)
    assert await spectators(client, game_id) == 0
    await h.shutdown()
