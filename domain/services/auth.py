"""Guest tokens: random 256-bit secrets, stored only as a hash, compared in
constant time (docs/clients.md "Signing in")."""

from __future__ import annotations

import hashlib
import hmac

from domain.errors import Unauthenticated
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


def player_token_digest(token: str) -> str:
    """The hash a player's token is looked up by; a service key is
    :class:`Unauthenticated` here (it signs in no player)."""
    if is_service_key(token):
        raise Unauthenticated(
            "a service key acts for no player: it calls the service operations only "
            "(issuePlayerToken, playerByExternalId, playerGames)"
        )
    return token_hash(token)


def checked_session(
    found: tuple[Player, SessionRecord, str] | None, digest: str
) -> tuple[Player, SessionRecord]:
    """The player and session looked up by ``digest``, its stored hash
    compared in constant time, or :class:`Unauthenticated`."""
    if found is None or not hmac.compare_digest(found[2], digest):
        raise Unauthenticated("unknown token")
    return found[0], found[1]
