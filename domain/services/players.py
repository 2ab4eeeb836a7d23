"""Use cases: guest accounts and who is calling."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime

from domain.errors import BadRequest, Conflict, IdempotencyKeyReused, Unauthenticated
from domain.identity import VerifiedIdentity
from domain.records import (
    IdempotencyRecord,
    PackPage,
    Player,
    SealedToken,
)
from domain.services import sessions
from domain.services.auth import checked_session, player_token_digest, token_hash
from domain.services.committed_reads import committed_session
from domain.services.deps import Deps
from domain.services.queries import check_limit
from domain.services.sealing import key_digest, seal, unseal
from domain.services.transaction import Request, Tx, no_load, transact, unkeyed

MAX_NAME = 40
MIN_PLAYER_KEY = 16  # [decision] the key recovers the token: it must be hard to guess
RECHECK_BATCH = 500  # token hashes looked up in one statement


@dataclass(frozen=True, slots=True)
class NewPlayer:
    """A new guest account and its token (shown once, never stored)."""

    player: Player
    token: str


def check_name(name: str) -> str:
    name = name.strip()
    if not 1 <= len(name) <= MAX_NAME or not name.isprintable():
        raise BadRequest(f"a name has 1 to {MAX_NAME} printable characters")
    return name


async def create_player(deps: Deps, name: str, idempotency_key: str | None = None) -> NewPlayer:
    """A guest account with a random id and a random 256-bit token; only its
    hash is stored, in the player's first session. With a key, a repeat
    within the replay window returns the same player and token
    (docs/decisions/0041); after it, ``BAD_INPUT``."""
    clean = check_name(name)
    if idempotency_key is not None and len(idempotency_key) < MIN_PLAYER_KEY:
        raise BadRequest(
            f"createPlayer's idempotency key recovers the token, so it must be "
            f"at least {MIN_PLAYER_KEY} characters (a UUID, say)"
        )
    token = deps.ids.new_token()
    player = Player(deps.ids.new_id(), clean, deps.clock.now())
    if idempotency_key is None:

        def add(tx: Tx, _: None) -> NewPlayer:
            tx.add_player(player, token_hash(token))
            return NewPlayer(player, token)

        return await transact(deps, None, unkeyed(no_load, add))
    return await _create_keyed(deps, player, token, idempotency_key)


Found = tuple[Player, IdempotencyRecord | None] | None


async def _create_keyed(deps: Deps, player: Player, token: str, key: str) -> NewPlayer:
    """[decision] The record is found by HMAC(secret, key) and seals the
    token under the secret and the key: without the secret, neither the
    database nor the public id lets a guessed key be tested."""
    secret = deps.keys.secret
    if not secret:
        raise RuntimeError("no server secret (KeyPolicy.secret): createPlayer takes no key")
    digest = key_digest(secret, key)
    fingerprint = Request(player.id, "createPlayer", {"name": player.name}).fingerprint()

    def load(tx: Tx) -> Found:
        first = tx.uow.players.by_key_digest(digest)
        return None if first is None else (first, tx.uow.idempotency.get(first.id, digest))

    def decide(tx: Tx, found: Found) -> NewPlayer:
        now = tx.now()
        if found is None:
            tx.add_player(player, token_hash(token), digest)
            sealed = SealedToken(seal(secret, key, player.id, token))
            expires = now + deps.keys.replay_window
            tx.keep(IdempotencyRecord(player.id, digest, fingerprint, sealed, now, expires))
            return NewPlayer(player, token)
        first, rec = found
        if rec is None or rec.expires_at <= now:
            raise BadRequest(
                "this idempotency key created a player more than "
                f"{_hours(deps)} ago; its token is no longer returned: nothing was "
                "created (use a new key for a new player)"
            )
        if rec.fingerprint != fingerprint:
            raise IdempotencyKeyReused("this idempotency key was used with other input")
        assert isinstance(rec.result, SealedToken)  # createPlayer's records seal a token
        again = unseal(secret, key, first.id, rec.result.sealed)
        if again is None:
            raise BadRequest("this idempotency key's token cannot be returned any more")
        return NewPlayer(first, again)

    # a racing twin with the same key loses on the digest's unique index; the
    # next try finds the twin's player and replays its token
    return await transact(deps, None, unkeyed(load, decide))


def _hours(deps: Deps) -> str:
    return f"{deps.keys.replay_window.total_seconds() / 3600:g} h"


def _not_a_providers(deps: Deps, token: str) -> None:
    """Only MMK tokens are rotated or revoked here: a provider's JWT ends at
    its expiry, or at the provider (issue #24)."""
    if deps.identity is not None and deps.identity.recognises(token):
        raise BadRequest(
            "this is your identity provider's token: it is not rotated or revoked here "
            "(it ends at its expiry; sign out at your provider)"
        )


async def rotate_token(deps: Deps, player_id: str, token: str) -> str:
    """A new token for the caller; the presented one stops working at once
    (only this one: the player's other sessions go on), and every instance
    is told so. The session keeps its id and label. ``UNAUTHENTICATED`` if it was rotated or revoked
    meanwhile."""
    _not_a_providers(deps, token)
    new = deps.ids.new_token()

    def swap(tx: Tx, _: None) -> str:
        if not tx.replace_token_hash(player_id, token_hash(token), token_hash(new)):
            raise Unauthenticated("this token was rotated or revoked")
        return new

    done = await transact(deps, None, unkeyed(no_load, swap))
    await sessions.announce(deps, [token_hash(token)])
    return done


async def revoke_token(deps: Deps, player_id: str, token: str) -> None:
    """Sign out: the presented token's session ends (the player's other
    sessions go on), at once on every instance."""
    _not_a_providers(deps, token)
    await sessions.revoke_token(deps, player_id, token)


async def dead_tokens(deps: Deps, digests: Collection[str]) -> set[str]:
    """Of these token digests (:func:`token_hash`), those no player holds:
    rotated or revoked (or never issued). What an instance checks again when
    it may have missed a notice (docs/decisions/0053)."""
    wanted = list(set(digests))
    if not wanted:
        return set()

    def tx() -> set[str]:
        live: set[str] = set()
        with deps.uow() as uow:
            for at in range(0, len(wanted), RECHECK_BATCH):
                live |= uow.players.live_token_hashes(wanted[at : at + RECHECK_BATCH])
        return set(wanted) - live

    return await deps.run(tx)


@dataclass(frozen=True, slots=True)
class SignedIn:
    """Who a token is, and until when: a JWT's expiry; None for an MMK
    token (good until rotated or revoked)."""

    player: Player
    until: datetime | None


async def sign_in(deps: Deps, token: str) -> SignedIn:
    """The token's player, or ``UNAUTHENTICATED``: an MMK token, or a JWT of
    the app's identity provider when one is configured (issue #24)."""
    if deps.identity is not None and deps.identity.recognises(token):
        identity = await deps.identity.verify(token)
        return SignedIn(await player_for_identity(deps, identity), identity.expires_at)

    digest = player_token_digest(token)
    player, session = checked_session(await committed_session(deps, digest), digest)
    deps.session_use.note(session.id)  # its lastUsedAt, in the next batch
    return SignedIn(player, None)


async def authenticate(deps: Deps, token: str) -> Player:
    """The token's player (:func:`sign_in`)."""
    return (await sign_in(deps, token)).player


FIRST_NAME = "player"
"""The name of a player first seen through a token that gives none usable."""


async def player_for_identity(deps: Deps, identity: VerifiedIdentity) -> Player:
    """The player of an identity at the app's identity provider: ``iss`` +
    ``sub`` name exactly one, created on first sight with the token's name
    (or :data:`FIRST_NAME`), no session (it signs in with the provider's
    tokens) and no key. Two
    first sights at once (two instances) make one player: the second
    transaction's identity conflicts, and its retry finds the first's."""

    def known() -> Player | None:
        with deps.uow() as uow:
            return uow.players.by_identity(identity.issuer, identity.subject)

    found = await deps.run(known)
    if found is not None:
        return found

    def load(tx: Tx) -> Player | None:
        return tx.uow.players.by_identity(identity.issuer, identity.subject)

    def add(tx: Tx, found: Player | None) -> Player:
        if found is not None:
            return found
        try:
            name = check_name(identity.name or FIRST_NAME)
        except BadRequest:
            name = FIRST_NAME
        player = Player(deps.ids.new_id(), name, tx.now())
        tx.add_player(player, None)
        tx.uow.players.add_identity(player.id, identity.issuer, identity.subject, tx.now())
        return player

    return await transact(deps, None, unkeyed(load, add))


async def link_identity(deps: Deps, player_id: str, token: str) -> Player:
    """Tie the identity a provider's ``token`` names to the caller (issue
    #24): a guest keeps its id, collection and games, and signs in with the
    provider's tokens from now on (its MMK token still works). An identity
    already tied to another player is ``CONFLICT``; to the caller, nothing
    changes."""
    if deps.identity is None or not deps.identity.recognises(token):
        raise BadRequest("no identity provider is configured for this token (MMK_JWT_*)")
    identity = await deps.identity.verify(token)

    def load(tx: Tx) -> tuple[Player | None, Player | None]:
        players = tx.uow.players
        return players.by_identity(identity.issuer, identity.subject), players.get(player_id)

    def tie(tx: Tx, found: tuple[Player | None, Player | None]) -> Player:
        owner, player = found
        if player is None:
            raise Unauthenticated("unknown player")
        if owner is not None:
            if owner.id == player.id:
                return player
            raise Conflict("this identity already signs in another player")
        tx.uow.players.add_identity(player.id, identity.issuer, identity.subject, tx.now())
        return player

    return await transact(deps, None, unkeyed(load, tie))


async def update_profile(deps: Deps, player_id: str, name: str) -> Player:
    """The caller's display name (issue #24), checked as a new player's is."""
    clean = check_name(name)

    def load(tx: Tx) -> Player | None:
        return tx.uow.players.get(player_id)

    def rename(tx: Tx, player: Player | None) -> Player:
        if player is None or not tx.uow.players.rename(player_id, clean):
            raise Unauthenticated("unknown player")
        return Player(player.id, clean, player.created_at)

    return await transact(deps, None, unkeyed(load, rename))


async def collection(
    deps: Deps, player_id: str, after: tuple[datetime, str] | None, limit: int
) -> PackPage:
    """A page of the player's booster collection, oldest first (R1.6; a
    list that grows with use is paged: issue #22)."""
    check_limit(limit)

    def tx() -> PackPage:
        with deps.uow() as uow:
            return uow.boosters.page_of_player(player_id, after, limit)

    return await deps.run(tx)


async def public_player(deps: Deps, player_id: str) -> Player | None:
    """A player's public facts (API ``player``); None: no such player."""

    def read() -> Player | None:
        with deps.uow() as uow:
            return uow.players.get(player_id)

    return await deps.run(read)
