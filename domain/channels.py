"""Bus channel names per audience (docs/clients.md "Resuming").

A seat's channel carries only that seat's projections; the public channel
only public ones. Adapters may add a prefix.

The id in braces is a Redis Cluster hash tag (docs/decisions/0068): a
game's channels all hash to one slot, so one shard carries the game; games,
and players' channels, spread over the shards.
"""

from __future__ import annotations

LOBBY = "lobby"


def game_channel(game_id: str, seat: int | None) -> str:
    """The channel of one audience of a game: a seat, or (None) the public."""
    if seat is None:
        return f"game:{{{game_id}}}:public"
    return f"game:{{{game_id}}}:seat:{seat}"


def presence_channel(game_id: str) -> str:
    """A game's presence changes (public: docs/decisions/0047)."""
    return f"game:{{{game_id}}}:presence"


def notice_channel(player_id: str) -> str:
    """A player's notifications (issue #25): theirs alone."""
    return f"player:{{{player_id}}}:notices"
