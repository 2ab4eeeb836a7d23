"""Guest tokens: random 256-bit secrets, stored only as a hash, compared in
constant time (API.md "Identity and roles")."""

from __future__ import annotations

import hashlib
import hmac

from domain.errors import Unauthenticated
from domain.ports import UnitOfWork
from domain.records import Player

BEARER = "bearer "


def token_hash(token: str) -> str:
    """SHA-256 of the token: a 256-bit random token needs no slow hash."""
    return hashlib.sha256(token.encode()).hexdigest()


def bearer_token(header: str | None) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` value, if any."""
    if not header:
        return None
    if header[: len(BEARER)].lower() != BEARER:
        raise Unauthenticated("use the form 'Bearer <token>'")
    token = header[len(BEARER) :].strip()
    if not token:
        raise Unauthenticated("the bearer token is empty")
    return token


def player_for_token(uow: UnitOfWork, token: str) -> Player:
    """The token's player, or :class:`Unauthenticated`."""
    digest = token_hash(token)
    found = uow.players.by_token_hash(digest)
    if found is None or not hmac.compare_digest(found[1], digest):
        raise Unauthenticated("unknown token")
    return found[0]
