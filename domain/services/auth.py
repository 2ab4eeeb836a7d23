"""Guest tokens: random 256-bit secrets, stored only as a hash, compared in
constant time (docs/clients.md "Signing in")."""

from __future__ import annotations

import hashlib
import hmac

from domain.errors import Unauthenticated
from domain.ports import UnitOfWork
from domain.records import Player, SessionRecord

BEARER = "bearer "
SERVICE_KEY_PREFIX = "mmk_sk_"
"""How a service key starts (issue #24): told apart from a player's token
at a glance, by people and by secret scanners."""


def token_hash(token: str) -> str:
    """SHA-256 of the token: a 256-bit random token needs no slow hash."""
    return hashlib.sha256(token.encode()).hexdigest()


def session_id(digest: str) -> str:
    """A new session's id, from its first token's hash: as random as the
    token, and no way back to it (nor to the hash). [decision] Derived, not
    drawn from ``Ids``: one id less to draw per sign-up."""
    return hashlib.sha256(b"session:" + digest.encode()).hexdigest()[:32]


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


def is_service_key(token: str) -> bool:
    return token.startswith(SERVICE_KEY_PREFIX)


def session_for_token(uow: UnitOfWork, token: str) -> tuple[Player, SessionRecord]:
    """The token's player and session, or :class:`Unauthenticated`."""
    if is_service_key(token):
        raise Unauthenticated(
            "a service key acts for no player: it calls the service operations only "
            "(issuePlayerToken, playerByExternalId, playerGames)"
        )
    digest = token_hash(token)
    found = uow.players.by_token_hash(digest)
    if found is None or not hmac.compare_digest(found[2], digest):
        raise Unauthenticated("unknown token")
    return found[0], found[1]
