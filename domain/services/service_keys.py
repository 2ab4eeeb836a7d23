"""Use cases: the app's backend and its service keys (issue #24).

A service key is the app's backend's credential, made by an operator
(``mmk service-key create``), shown once and stored as a hash. It acts for
no player: with it the backend issues tokens for its users (each known by
the app's own id for them, its *external id*), looks them up, and reads
their games, as far as its scopes allow. A player's token can never do
that work, nor a service key a player's.
"""

from __future__ import annotations

import hmac
from dataclasses import dataclass

from domain.errors import BadRequest, Forbidden, IdempotencyKeyReused, NotFound, Unauthenticated
from domain.records import IdempotencyRecord, Player, SealedToken, ServiceKey, SessionRecord
from domain.services.auth import SERVICE_KEY_PREFIX, token_hash
from domain.services.deps import Deps
from domain.services.players import MIN_PLAYER_KEY, check_name
from domain.services.sealing import key_digest, seal, unseal
from domain.services.sessions import announce, check_label, open_session
from domain.services.transaction import Request, Tx, no_load, transact, unkeyed

SCOPES = {
    "players:write": "issue players' tokens (issuePlayerToken)",
    "players:read": "look players up by external id (playerByExternalId)",
    "games:read": "read a player's games (playerGames)",
    "webhooks": "manage webhook endpoints and read their delivery log (createWebhookEndpoint...)",
}
EXTERNAL = "mmk:external-id"
"""The issuer under which an external id is stored as an identity: one
player per external id, as ``iss`` + ``sub`` is for a provider's JWT."""
MAX_KEY_NAME = 60
MAX_EXTERNAL_ID = 200


@dataclass(frozen=True, slots=True)
class NewServiceKey:
    """A new key and its secret text (shown once, never stored)."""

    key: ServiceKey
    secret: str


@dataclass(frozen=True, slots=True)
class IssuedToken:
    """A token issued for an external id's player, and whether the player
    was made by this call."""

    player: Player
    session: SessionRecord
    token: str
    created: bool


def check_scopes(scopes: list[str]) -> frozenset[str]:
    unknown = sorted(set(scopes) - set(SCOPES))
    if unknown or not scopes:
        raise BadRequest(
            f"scopes are one or more of {', '.join(SCOPES)}"
            + (f" (not {', '.join(unknown)})" if unknown else "")
        )
    return frozenset(scopes)


def check_external_id(external_id: str) -> str:
    """An app's id for its user, as it is: 1 to 200 printable characters."""
    if not 1 <= len(external_id) <= MAX_EXTERNAL_ID or not external_id.isprintable():
        raise BadRequest(f"an external id has 1 to {MAX_EXTERNAL_ID} printable characters")
    if external_id != external_id.strip():
        raise BadRequest("an external id neither starts nor ends with a space")
    return external_id


async def create_service_key(deps: Deps, name: str, scopes: list[str]) -> NewServiceKey:
    """A new key with these scopes; its secret is returned once."""
    clean = name.strip()
    if not 1 <= len(clean) <= MAX_KEY_NAME or not clean.isprintable():
        raise BadRequest(f"a service key's name has 1 to {MAX_KEY_NAME} printable characters")
    allowed = check_scopes(scopes)
    secret = SERVICE_KEY_PREFIX + deps.ids.new_token()

    def add(tx: Tx, _: None) -> ServiceKey:
        key = ServiceKey(tx.new_id(), clean, allowed, tx.now())
        tx.add_service_key(key, token_hash(secret))
        return key

    key = await transact(deps, None, unkeyed(no_load, add))
    return NewServiceKey(key, secret)


async def list_service_keys(deps: Deps) -> list[ServiceKey]:
    def tx() -> list[ServiceKey]:
        with deps.uow() as uow:
            return uow.service_keys.all()

    return await deps.run(tx)


async def revoke_service_key(deps: Deps, key_id: str) -> None:
    """The key stops working at once (it is read on every call)."""

    def revoke(tx: Tx, _: None) -> None:
        if not tx.uow.service_keys.revoke(key_id, tx.now()):
            raise NotFound(f"no live service key {key_id!r}")

    await transact(deps, None, unkeyed(no_load, revoke))


async def service_for_key(deps: Deps, secret: str, scope: str) -> ServiceKey:
    """The live key of ``secret``, allowed ``scope``: ``UNAUTHENTICATED``
    for an unknown or revoked key, ``FORBIDDEN`` without the scope."""
    digest = token_hash(secret)

    def tx() -> tuple[ServiceKey, str] | None:
        with deps.uow() as uow:
            return uow.service_keys.by_hash(digest)

    found = await deps.run(tx)
    if found is None or not hmac.compare_digest(found[1], digest):
        raise Unauthenticated("unknown service key")
    key = found[0]
    if key.revoked_at is not None:
        raise Unauthenticated("this service key was revoked")
    if scope not in key.scopes:
        raise Forbidden(f"this service key lacks the scope {scope!r}")
    return key


Found = tuple[Player | None, IdempotencyRecord | None]


async def issue_player_token(
    deps: Deps,
    external_id: str,
    name: str,
    label: str | None,
    idempotency_key: str | None = None,
) -> IssuedToken:
    """A fresh token for the app's user ``external_id``: the same player
    every time (made on the first call, named ``name``; later calls keep
    the player's name), a new session each call. Two first calls at once
    make one player: the second's identity conflicts, and its retry finds
    the first's. With a key, a repeat within the replay window (a backend's
    retry) returns the same token and opens no session: the record seals
    the token under the server secret and the key, as ``createPlayer``'s
    does (docs/decisions/0041); a repeat with other input is
    ``IDEMPOTENCY_KEY_REUSED``."""
    external = check_external_id(external_id)
    clean, tag = check_name(name), check_label(label)
    if idempotency_key is not None and len(idempotency_key) < MIN_PLAYER_KEY:
        raise BadRequest(
            f"issuePlayerToken's idempotency key recovers a token, so it must be at least "
            f"{MIN_PLAYER_KEY} characters (a UUID, say)"
        )
    secret = deps.keys.secret
    if idempotency_key is not None and not secret:
        raise RuntimeError("no server secret (KeyPolicy.secret): issuePlayerToken takes no key")
    token = deps.ids.new_token()
    digest = token_hash(token)
    args = {"externalId": external, "name": clean, "label": tag}
    fingerprint = Request(EXTERNAL, "issuePlayerToken", args).fingerprint()
    keyed = None if idempotency_key is None else key_digest(secret, "issue:" + idempotency_key)

    def load(tx: Tx) -> Found:
        player = tx.uow.players.by_identity(EXTERNAL, external)
        if player is None or keyed is None:
            return player, None
        return player, tx.uow.idempotency.get(player.id, keyed)

    def issue(tx: Tx, found: Found) -> tuple[IssuedToken, list[str]]:
        player, record = found
        if record is not None and record.expires_at > tx.now():
            return _repeat(tx, player, record), []
        created = player is None
        if player is None:
            player = Player(tx.new_id(), clean, tx.now())
            tx.add_player(player, None)
            tx.uow.players.add_identity(player.id, EXTERNAL, external, tx.now())
        session, ended = open_session(tx, player.id, digest, tag)
        if keyed is not None and idempotency_key is not None:
            sealed = SealedToken(seal(secret, idempotency_key, player.id, token))
            now = player.created_at if created else tx.now()  # a repeat tells "created"
            kept = IdempotencyRecord(
                player.id, keyed, fingerprint, sealed, now, now + deps.keys.replay_window
            )
            tx.keep(kept, over_expired=record is not None)
        return IssuedToken(player, session, token, created), ended

    def _repeat(tx: Tx, player: Player | None, record: IdempotencyRecord) -> IssuedToken:
        assert player is not None and idempotency_key is not None
        if record.fingerprint != fingerprint:
            raise IdempotencyKeyReused("this idempotency key was used with other input")
        assert isinstance(record.result, SealedToken)
        again = unseal(secret, idempotency_key, player.id, record.result.sealed)
        found = None if again is None else tx.uow.players.by_token_hash(token_hash(again))
        if again is None or found is None:
            raise BadRequest("this idempotency key's token was revoked since: use a new key")
        return IssuedToken(player, found[1], again, record.created_at == player.created_at)

    issued, ended = await transact(deps, None, unkeyed(load, issue))
    await announce(deps, ended)
    return issued


async def player_by_external_id(deps: Deps, external_id: str) -> Player:
    """The app's user's player, or ``NOT_FOUND``."""
    external = check_external_id(external_id)

    def tx() -> Player | None:
        with deps.uow() as uow:
            return uow.players.by_identity(EXTERNAL, external)

    found = await deps.run(tx)
    if found is None:
        raise NotFound("no player has this external id (issuePlayerToken makes one)")
    return found
