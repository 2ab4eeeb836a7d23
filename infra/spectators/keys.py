"""Redis keys of spectator counts (issue #28). Cluster-safe: the game's id
is the hash tag, as for the game's channels, so a game's keys share a slot."""

from __future__ import annotations


def spectators_key(prefix: str, game_id: str) -> str:
    """The hash of a game's spectators per instance."""
    return f"{prefix}game:{{{game_id}}}:spectators"
