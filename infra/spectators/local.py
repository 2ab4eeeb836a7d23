"""This instance's spectators: the subscriptions to each game's public
channel (R11: a seat's stream is on its own channel, so a seated player is
never counted). The bus's local subscribers already hold them by channel,
so counting costs nothing on the subscription's path."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Protocol

from domain.channels import game_channel
from infra.bus.memory import LocalSubscribers

_MARK = "\x00"


class LocalChannels(Protocol):
    """What the buses' local subscribers (infra.bus.memory.LocalSubscribers) give."""

    def subscriber_count(self, channel: str | None = None) -> int: ...


def game_of_public(
    channel_name: Callable[[str, int | None], str] = game_channel,
) -> Callable[[str], str | None]:
    """A function naming the game whose public channel a channel is (None:
    not a public channel), whatever the channel's spelling (hash tags)."""
    head, _, tail = channel_name(_MARK, None).partition(_MARK)

    def game_of(channel: str) -> str | None:
        fits = len(channel) > len(head) + len(tail)
        if fits and channel.startswith(head) and channel.endswith(tail):
            return channel[len(head) : len(channel) - len(tail)]
        return None

    return game_of


class LocalSpectators:
    """Reads the bus's local subscribers: one game's count, and every game
    watched here."""

    def __init__(self, bus: LocalChannels, channels: Callable[[], Iterable[str]]) -> None:
        """``channels``: the channels with a local subscriber (a snapshot)."""
        self._bus, self._channels = bus, channels
        self._game_of = game_of_public()

    def count(self, game_id: str) -> int:
        return self._bus.subscriber_count(game_channel(game_id, None))

    def all(self) -> dict[str, int]:
        """Every game with a spectator here, and how many."""
        out: dict[str, int] = {}
        for channel in list(self._channels()):
            game_id = self._game_of(channel)
            if game_id is not None and (n := self._bus.subscriber_count(channel)):
                out[game_id] = n
        return out


def bus_channels(bus: LocalSubscribers) -> Callable[[], Iterable[str]]:
    """The channels the bus has local subscribers on."""
    return bus.channels
