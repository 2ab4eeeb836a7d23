"""Cache keys (docs/clients.md "Cache identity"): ``id`` fields that a normalized
client cache (Apollo's ``__typename:id``) can trust to be unique across
games and the same for everyone who gets that object."""

from __future__ import annotations

import strawberry


def key(game_id: str, *parts: object) -> strawberry.ID:
    """``<gameId>:<part>...``: an object numbered within its game (a seat, a
    trick, a message, a version) made unique across games."""
    return strawberry.ID(":".join((game_id, *(str(p) for p in parts))))
