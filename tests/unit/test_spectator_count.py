"""Spectators counted per game on one instance (issue #28): the
subscriptions to a game's public channel, read off the bus's local
subscribers; a seat's channel is not a spectator's (R11)."""

from __future__ import annotations

from contextlib import AsyncExitStack

from domain.channels import game_channel
from infra.bus.memory import InProcessBus
from infra.spectators.local import LocalSpectators, bus_channels, game_of_public
from infra.spectators.memory import InProcessSpectators


def counted(bus: InProcessBus) -> InProcessSpectators:
    return InProcessSpectators(LocalSpectators(bus, bus_channels(bus)))


async def test_subscribing_and_leaving_the_public_channel_counts_up_and_down() -> None:
    bus = InProcessBus()
    counts = counted(bus)
    assert await counts.count("g1") == 0
    async with AsyncExitStack() as stack:
        for _ in range(3):
            await stack.enter_async_context(bus.subscribe(game_channel("g1", None)))
        assert await counts.count("g1") == 3
        async with bus.subscribe(game_channel("g1", None)):
            assert await counts.count("g1") == 4
        assert await counts.count("g1") == 3
        assert await counts.count("g2") == 0
    assert await counts.count("g1") == 0


async def test_a_seat_subscription_is_not_a_spectator() -> None:
    bus = InProcessBus()
    counts = counted(bus)
    async with bus.subscribe(game_channel("g1", 0)), bus.subscribe(game_channel("g1", 1)):
        assert await counts.count("g1") == 0


async def test_a_subscription_the_bus_drops_is_counted_no_more() -> None:
    bus = InProcessBus(queue_limit=1)
    counts = counted(bus)
    async with bus.subscribe(game_channel("g1", None)):
        assert await counts.count("g1") == 1
        await bus.publish([(game_channel("g1", None), "x")] * 2)  # type: ignore[list-item]
        assert await counts.count("g1") == 0  # a slow subscriber, dropped


async def test_every_watched_game_is_listed_with_its_count_and_nothing_else() -> None:
    bus = InProcessBus()
    local = LocalSpectators(bus, bus_channels(bus))
    async with AsyncExitStack() as stack:
        for channel in (
            game_channel("a", None),
            game_channel("a", None),
            game_channel("b", None),
            game_channel("b", 2),
            game_channel("c", 0),
            "lobby",
        ):
            await stack.enter_async_context(bus.subscribe(channel))
        assert local.all() == {"a": 2, "b": 1}
    assert local.all() == {}


def test_a_public_channel_names_its_game_whatever_its_spelling() -> None:
    plain = game_of_public()
    assert plain(game_channel("abc", None)) == "abc"
    assert plain(game_channel("abc", 1)) is None
    assert plain("lobby") is None
    tagged = game_of_public(lambda g, s: f"game:{{{g}}}:public" if s is None else "x")
    assert tagged("game:{abc}:public") == "abc"
    assert tagged("game:abc:public") is None
